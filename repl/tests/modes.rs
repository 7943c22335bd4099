//! Every output mode, as a snapshot of what it prints for the same results (`--mode`, the
//! `--csv`-style flags, `.mode`, `.headers`, `.nullvalue`, `.undefinedvalue`).

use std::process::{Command, Output};

fn cosmoql(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cosmoql")).args(args).output().expect("the binary runs")
}

/// Three results: a comma and quotes, a null, a missing property, a nested array, wide
/// characters, a number.
fn run(mode_args: &[&str], extra: &[&str]) -> String {
    // Tests run in parallel threads of one process: each run has a file of its own.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let data = std::env::temp_dir().join(format!("cosmoql-modes-{}-{run}.ndjson", std::process::id()));
    std::fs::write(
        &data,
        "{\"id\":\"1\",\"name\":\"Ada, \\\"the first\\\"\",\"n\":1.5,\"tags\":[\"a\",\"b\"],\"note\":null}\n\
         {\"id\":\"2\",\"name\":\"東京\",\"n\":20}\n\
         {\"id\":\"3\",\"name\":\"tab\\there\",\"n\":-3,\"note\":\"x|y\"}\n",
    )
    .unwrap();
    let import = format!(".import {}", data.display());
    let mut args: Vec<&str> = mode_args.to_vec();
    args.extend(["--empty", "-c", ".create t /id", "-c", &import]);
    for e in extra {
        args.extend(["-c", e]);
    }
    args.extend(["-c", "SELECT c.id, c.name, c.n, c.tags, c.note FROM c ORDER BY c.id"]);
    let out = cosmoql(&args);
    let _ = std::fs::remove_file(&data);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn table() {
    assert_eq!(
        run(&["--mode", "table"], &[]),
        "\
┌────┬──────────────────┬─────┬───────────┬──────┐
│ id │ name             │ n   │ tags      │ note │
├────┼──────────────────┼─────┼───────────┼──────┤
│ 1  │ Ada, \"the first\" │ 1.5 │ [\"a\",\"b\"] │ null │
│ 2  │ 東京             │  20 │           │      │
│ 3  │ tab here         │  -3 │           │ x|y  │
└────┴──────────────────┴─────┴───────────┴──────┘
(3 rows)
"
    );
}

#[test]
fn ascii_without_headers_and_with_a_null_display() {
    assert_eq!(
        run(&["--mode", "ascii", "--no-header"], &[".nullvalue NULL", ".undefinedvalue -"]),
        "\
+---+------------------+-----+-----------+------+
| 1 | Ada, \"the first\" | 1.5 | [\"a\",\"b\"] | NULL |
| 2 | 東京             |  20 | -         | -    |
| 3 | tab here         |  -3 | -         | x|y  |
+---+------------------+-----+-----------+------+
(3 rows)
"
    );
}

#[test]
fn line() {
    assert_eq!(
        run(&["--line"], &[]),
        "  id = 1
name = Ada, \"the first\"
   n = 1.5
tags = [\"a\",\"b\"]
note = null

  id = 2
name = 東京
   n = 20

  id = 3
name = tab here
   n = -3
note = x|y
"
    );
}

#[test]
fn markdown() {
    assert_eq!(
        run(&["--markdown"], &[]),
        "\
| id | name | n | tags | note |
| --- | --- | --- | --- | --- |
| 1 | Ada, \"the first\" | 1.5 | [\"a\",\"b\"] | null |
| 2 | 東京 | 20 |  |  |
| 3 | tab here | -3 |  | x\\|y |
"
    );
}

#[test]
fn csv() {
    assert_eq!(
        run(&["--csv"], &[]),
        "\
id,name,n,tags,note
1,\"Ada, \"\"the first\"\"\",1.5,\"[\"\"a\"\",\"\"b\"\"]\",null
2,東京,20,,
3,tab\there,-3,,x|y
"
    );
}

#[test]
fn tsv() {
    assert_eq!(
        run(&["--tsv"], &[".headers off"]),
        "\
1\tAda, \"the first\"\t1.5\t[\"a\",\"b\"]\tnull
2\t東京\t20\t\t
3\ttab\\there\t-3\t\tx|y
"
    );
}

#[test]
fn json_and_ndjson() {
    assert_eq!(
        run(&["--json"], &[]),
        "[{\"id\":\"1\",\"name\":\"Ada, \\\"the first\\\"\",\"n\":1.5,\"tags\":[\"a\",\"b\"],\"note\":null},\
         {\"id\":\"2\",\"name\":\"東京\",\"n\":20},{\"id\":\"3\",\"name\":\"tab\\there\",\"n\":-3,\"note\":\"x|y\"}]\n"
    );
    assert_eq!(
        run(&["--ndjson"], &[]),
        "{\"id\":\"1\",\"name\":\"Ada, \\\"the first\\\"\",\"n\":1.5,\"tags\":[\"a\",\"b\"],\"note\":null}\n\
         {\"id\":\"2\",\"name\":\"東京\",\"n\":20}\n{\"id\":\"3\",\"name\":\"tab\\there\",\"n\":-3,\"note\":\"x|y\"}\n"
    );
}

#[test]
fn mode_names_and_errors() {
    let out = cosmoql(&["--empty", "-c", ".mode", "-c", ".mode csv", "-c", ".mode", "-c", ".mode nope"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("json\ncsv\n"), "without a terminal the mode is json: {stderr}");
    assert!(
        stderr.contains("unknown mode `nope`: one of table|box|ascii|line|markdown|csv|tsv|json|ndjson"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn sqlite3_spellings_of_the_flags() {
    // `-csv` is not `-c sv`; `-noheader`, `-box`, `-json` and `-bail` as sqlite3 spells them.
    assert_eq!(
        run(&["-csv", "-noheader"], &[]).lines().next(),
        Some("1,\"Ada, \"\"the first\"\"\",1.5,\"[\"\"a\"\",\"\"b\"\"]\",null")
    );
    assert!(run(&["-box"], &[]).starts_with("┌"));
    assert!(run(&["-json"], &[]).starts_with("[{"));
    assert!(run(&["-markdown"], &[]).starts_with("| id |"));
    let out = cosmoql(&["-bail", "--empty", "-c", "SELECT nope(", "-c", "SELECT VALUE 2"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    // A `-c` statement is never read as a flag.
    let out = cosmoql(&["--empty", "-c", "-csv"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("error"), "`-csv` ran as SQL");
}
