//! Every query of the shared conformance corpus parses, prints, and parses back to the same tree.
//!
//! The corpus is the repository's `tests/conformance` (copied from `../shared/conformance`;
//! `$COSMOQL_CONFORMANCE_DIR` names another copy); the test fails when it is missing.

use std::path::{Path, PathBuf};

fn conformance_dir() -> PathBuf {
    let dir = match std::env::var_os("COSMOQL_CONFORMANCE_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance"),
    };
    assert!(dir.join("docs").is_dir(), "the conformance corpus is missing at {}", dir.display());
    dir
}

fn case_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("readable dir").flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            case_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

#[test]
fn every_conformance_query_parses_and_round_trips() {
    let dir = conformance_dir();
    let mut files = Vec::new();
    case_files(&dir.join("docs"), &mut files);
    case_files(&dir.join("engine/cases"), &mut files);
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable case");
        let case: serde_json::Value = serde_json::from_str(&text).expect("case is JSON");
        let Some(sql) = case.get("query").and_then(|q| q.as_str()) else {
            continue;
        };
        checked += 1;
        match cosmoql_parser::parse(sql) {
            Err(e) => failures.push(format!("{}: does not parse:\n{e}", file.display())),
            Ok(ast) => {
                let printed = ast.to_string();
                match cosmoql_parser::parse(&printed) {
                    Err(e) => failures.push(format!("{}: printed form does not parse: {printed}\n{e}", file.display())),
                    Ok(again) if again != ast => {
                        failures.push(format!("{}: round trip changed the tree: {printed}", file.display()))
                    }
                    Ok(again) => assert_eq!(again.to_string(), printed, "printing is not stable"),
                }
            }
        }
    }
    // Written past the test harness's capture, so `cargo test` shows it (CI reads it there).
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr().lock(),
        format_args!("checked {checked} conformance queries from {}\n", dir.display()),
    );
    assert!(failures.is_empty(), "{} of {checked} failed:\n{}", failures.len(), failures.join("\n\n"));
    assert!(checked >= 300, "expected the full corpus, found {checked} queries");
}
