//! The repo's query suites: `tests/suites/*.sql` over the containers of `tests/suites/fixtures.json`
//! (data in `tests/data`), run by `cosmoql::testing` (the runner of `cosmoql test`), for the
//! semantics the shared conformance corpus does not cover. The format is documented in
//! `cosmoql::testing` and `examples/suite/README.md`.
//!
//! To update expectations after an intended change: `cargo run --bin cosmoql -- test tests/suites
//! --bless` (or `COSMOQL_BLESS=1 cargo test --test suites`), then review the diff.

use std::path::Path;

use cosmoql::testing::{run_suite, RunOptions};

#[test]
fn query_suites() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suites");
    let bless = std::env::var_os("COSMOQL_BLESS").is_some_and(|v| !v.is_empty() && v != "0");
    let report = run_suite(&dir, &RunOptions { bless }).unwrap_or_else(|e| panic!("{e}"));
    let files = report.cases.iter().map(|c| &c.file).collect::<std::collections::BTreeSet<_>>().len();
    print!("{}", report.render());
    // Written past the test harness's capture, so `cargo test` shows it (CI reads it there).
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr().lock(),
        format_args!("tests/suites: {} cases in {files} files (query suites)\n", report.cases.len()),
    );
    assert!(report.cases.len() >= 79, "only {} suite cases", report.cases.len());
    assert!(report.is_ok(), "{}", report.summary());
}
