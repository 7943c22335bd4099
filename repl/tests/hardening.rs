//! The binary's side of the hardening issue: failed writes, hostile input files, terminal escape
//! sequences in data, and options given wrong. Each test failed before its fix.

use std::fs::File;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("hardening-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn temp_file(name: &str, bytes: &[u8]) -> String {
    let p = dir().join(name);
    std::fs::write(&p, bytes).expect("write");
    p.to_string_lossy().into_owned()
}

fn cosmoql() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cosmoql"));
    c.env("COSMOQL_HISTORY", "").env("NO_COLOR", "1");
    c
}

fn run(args: &[&str]) -> Output {
    cosmoql().args(args).output().expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `cosmoql query ... > /dev/full` exited 0; so did the REPL, `parse` and `epk`. A write that
/// fails is an error now; a closed pipe still ends quietly.
#[test]
fn failed_writes_to_standard_output_fail_the_run() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    let data = temp_file("full.ndjson", b"{\"id\":\"1\"}\n{\"id\":\"2\"}\n");
    for args in [
        vec!["query", "--data", &data, "SELECT * FROM c"],
        vec!["parse", "SELECT 1"],
        vec!["epk", "[\"a\"]"],
        vec!["--empty", "-c", "SELECT VALUE 1"],
        vec!["explain", "--data", &data, "SELECT * FROM c"],
        vec!["test", concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/suite")],
    ] {
        let out = cosmoql()
            .args(&args)
            .stdout(File::create("/dev/full").expect("/dev/full"))
            .output()
            .expect("the binary runs");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(text(&out.stderr).contains("cannot write to standard output"), "{args:?}: {}", text(&out.stderr));
    }
    // A reader that goes away is not an error.
    let mut child = cosmoql()
        .args(["query", "--data", &data, "SELECT * FROM c"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// A UTF-8 byte-order mark made a JSON array import nothing ("skipped 1", exit 0) and NDJSON
/// lose its first line.
#[test]
fn a_byte_order_mark_is_not_data() {
    let array = temp_file("bom.json", b"\xEF\xBB\xBF[{\"id\":\"1\"},{\"id\":\"2\"}]");
    let lines = temp_file("bom.ndjson", b"\xEF\xBB\xBF{\"id\":\"1\"}\n{\"id\":\"2\"}\n");
    for file in [&array, &lines] {
        let out = run(&["query", "--data", file, "SELECT VALUE COUNT(1) FROM c"]);
        assert_eq!(text(&out.stdout), "[2]\n", "{file}: {}", text(&out.stderr));
        let out = run(&["import", file]);
        let all = text(&out.stdout) + &text(&out.stderr);
        assert!(all.contains("imported 2 items, skipped 0, failed 0"), "{all}");
    }
}

/// Data carrying ESC and BEL (`ESC ] 0; ... BEL` sets the terminal's title) reached the terminal
/// as they were, in tables and in import errors. Control characters are escaped now.
#[test]
fn control_characters_in_data_never_reach_the_terminal() {
    let hostile = b"{\"id\":\"a\\u001b]0;pwned\\u0007\",\"pk\":1,\"t\":\"x\\u001b[2Jy\"}\n{\"id\":\"a\\u001b]0;pwned\\u0007\",\"pk\":1}\n";
    let file = temp_file("escape.ndjson", hostile);
    let out = run(&["import", &file, "--partition-key", "/pk"]);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("409"), "{stderr}");
    assert!(!stderr.contains('\u{1b}') && !stderr.contains('\u{7}'), "{stderr:?}");
    let import = format!(".import {file}");
    let out =
        run(&["--empty", "-c", ".create t /pk", "-c", &import, "-c", ".mode table", "-c", "SELECT c.id, c.t FROM c"]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("a\\u{1b}]0;pwned\\u{7}"), "{stdout}");
    assert!(!stdout.contains('\u{1b}') && !stdout.contains('\u{7}'), "{stdout:?}");
    assert!(!text(&out.stderr).contains('\u{1b}'), "{:?}", text(&out.stderr));
}

/// `--param @x` given twice silently kept the last; `--container '[]'`, a vector policy with
/// `dimensions: -1` or an unknown `distanceFunction` were accepted; `--partitions 2^61` aborted.
#[test]
fn options_given_wrong_are_errors() {
    let data = temp_file("opts.ndjson", b"{\"id\":\"1\",\"v\":[1,0]}\n");
    let array = temp_file("array.json", b"[]");
    let dims = temp_file(
        "dims.json",
        br#"{"id": "c", "vectorEmbeddingPolicy": {"vectorEmbeddings": [{"path": "/v", "dimensions": -1}]}}"#,
    );
    let function = temp_file(
        "function.json",
        br#"{"id": "c", "vectorEmbeddingPolicy": {"vectorEmbeddings": [{"path": "/v", "distanceFunction": "manhattan"}]}}"#,
    );
    for (args, fragment) in [
        (vec!["query", "--data", &data, "--param", "@x=1", "--param", "x=2", "SELECT @x"], "--param @x is given twice"),
        (vec!["query", "--data", &data, "--container", &array, "SELECT 1"], "container properties are a JSON object"),
        (vec!["query", "--data", &data, "--container", &dims, "SELECT 1"], "`dimensions` must be a positive integer"),
        (vec!["query", "--data", &data, "--container", &function, "SELECT 1"], "`distanceFunction` must be one of"),
        (
            vec!["query", "--data", &data, "--partitions", "2305843009213693952", "SELECT 1"],
            "1 to 10000 physical partitions",
        ),
        (vec!["query", "--data", &data, "--partitions", "0", "SELECT 1"], "1 to 10000 physical partitions"),
        (vec!["import", &data, "--partitions", "100000000"], "1 to 10000 physical partitions"),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(fragment), "{args:?}: {}", text(&out.stderr));
    }
    // The same through a suite's fixtures.
    let suite = dir().join("suite");
    std::fs::create_dir_all(&suite).expect("suite dir");
    std::fs::write(suite.join("fixtures.json"), br#"[{"id": "c", "partitions": 2305843009213693952}]"#).expect("write");
    std::fs::write(suite.join("a.sql"), b"-- @name one\nSELECT VALUE 1\n-- @expect\n[1]\n").expect("write");
    let out = run(&["test", &suite.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("\"partitions\" must be an integer from 1 to 10000"), "{}", text(&out.stderr));
}

/// `.create t /"a b"` was a usage error although the parser's hint says to quote the segment;
/// `.set maxrows` built the whole result before showing its first rows.
#[test]
fn repl_commands_take_quoted_paths_and_tables_keep_only_what_they_show() {
    let items = temp_file(
        "five.ndjson",
        &(0..5).map(|i| format!("{{\"id\":\"{i}\",\"a b\":\"k\"}}\n")).collect::<String>().into_bytes(),
    );
    let import = format!(".import {items}");
    let out = run(&[
        "--empty",
        "-c",
        r#".create t /"a b""#,
        "-c",
        &import,
        "-c",
        r#".mode table"#,
        "-c",
        ".set maxrows 2",
        "-c",
        "SELECT VALUE c.id FROM c",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(r#"created t (key /"a b")"#), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("(5 rows), the first 2 shown"), "{}", text(&out.stdout));
}

/// `--help` states the default memory budget, and a query past it fails with the budget named.
#[test]
fn the_memory_budget_is_documented_and_enforced() {
    let help = text(&run(&["query", "--help"]).stdout);
    assert!(help.contains("--memory-budget") && help.contains("1073741824"), "{help}");
    let data = temp_file(
        "budget.ndjson",
        &(0..2000).map(|i| format!("{{\"id\":\"{i}\"}}\n")).collect::<String>().into_bytes(),
    );
    let out = run(&["query", "--data", &data, "--memory-budget", "10000", "SELECT c.id FROM c ORDER BY c.id"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("memory budget of 10000 bytes for ORDER BY"), "{}", text(&out.stderr));
}

/// A result that is NaN or an infinity made `cosmoql query` print `[,,]`: it is the service's
/// 400 (substatus 4001) now, and standard output stays JSON (empty, or a closed array of what came
/// before the error).
#[test]
fn non_finite_results_never_make_invalid_json() {
    let data = temp_file("nonfinite.ndjson", b"{\"id\":\"1\",\"n\":1}\n{\"id\":\"2\",\"n\":0}\n");
    let out = run(&["query", "--data", &data, "SELECT VALUE c.n / 0 FROM c"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("cannot be represented in JSON"), "{}", text(&out.stderr));
    let out = run(&["query", "--data", &data, "--max-dop", "1", "SELECT VALUE 1 / c.n FROM c"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(stdout.is_empty() || cosmoql::value::parse_json(stdout.trim()).is_ok(), "{stdout}");
}

/// Scripts were split quadratically: each statement padded to its column (20,000 statements on
/// one line: 55 s and 3.9 GB, then an error), each comment line trimming all the blank lines
/// before it (270,000 comment lines: over 10 minutes). Positions are kept as numbers now, and an
/// error still names the script's line and column.
#[test]
fn long_scripts_are_split_in_linear_time() {
    let one_line = "SELECT VALUE 1; ".repeat(20_000);
    let comments = format!("{}SELECT VALUE 2;\n", "-- a comment\n".repeat(300_000));
    let script = temp_file(
        "long-script.sql",
        format!("{one_line}\n{comments}SELECT VALUE 3;  SELECT VALUE [1,2 ;\n").as_bytes(),
    );
    let out = run(&["--json", &script]);
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().filter(|l| *l == "[1]").count(), 20_000);
    assert_eq!(stdout.lines().filter(|l| *l == "[2]" || *l == "[3]").count(), 2, "{}", &stdout[stdout.len() - 100..]);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("line 300003, column 35: Syntax error, unexpected end-of-file."), "{stderr}");
    assert!(stderr.contains("hint: expected `,` or `]`"), "{stderr}");
}
