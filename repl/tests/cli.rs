//! The `cosmoql` binary's contract: output streams and exit codes.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn cosmoql(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cosmoql")).args(args).output().expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn help_lists_the_commands() {
    let out = cosmoql(&["--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    assert!(help.contains("parse"), "{help}");
    assert!(help.contains("Cosmos DB"), "{help}");
}

#[test]
fn no_arguments_and_no_terminal_runs_standard_input() {
    // Without a command the REPL starts; with standard input closed (not a terminal) it runs the
    // (empty) input and exits 0, printing nothing.
    let out = Command::new(env!("CARGO_BIN_EXE_cosmoql"))
        .arg("--empty")
        .env("COSMOQL_HISTORY", "")
        .output()
        .expect("the binary runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
}

#[test]
fn unknown_options_print_usage_and_fail() {
    let out = cosmoql(&["--no-such-option"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("Usage"));
}

#[test]
fn parse_prints_normalized_sql() {
    let out =
        cosmoql(&["parse", "select  c.id,c.name as n from c where c.a=1 and not c.b in (1,2) order by c.id desc"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "SELECT c.id, c.name AS n FROM c WHERE c.a = 1 AND NOT c.b IN (1, 2) ORDER BY c.id DESC\n"
    );
    assert!(out.stderr.is_empty());
}

#[test]
fn parse_error_is_rendered_on_stderr_with_exit_1() {
    let out = cosmoql(&["parse", "SELECT *\nFROM c\nWHERE c.a = "]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        text(&out.stderr),
        "error: line 3, column 12: expected an expression after the operator, found end of input\nWHERE c.a = \n           ^\n"
    );
}

#[test]
fn parse_reads_standard_input_and_prints_the_ast() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cosmoql"))
        .args(["parse", "--ast", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child.stdin.take().expect("stdin").write_all(b"SELECT VALUE 1").expect("write");
    let out = child.wait_with_output().expect("exit");
    assert!(out.status.success());
    let ast = text(&out.stdout);
    assert!(ast.contains("Projection") || ast.contains("Value("), "{ast}");
    assert!(ast.contains("Number(\n"), "{ast}");
}

#[test]
fn hostile_input_fails_cleanly() {
    let deep = format!("SELECT VALUE {}1{}", "(".repeat(50_000), ")".repeat(50_000));
    for sql in ["\u{1}", "SELECT '", "SELECT @", deep.as_str()] {
        let out = cosmoql(&["parse", sql]);
        assert_eq!(out.status.code(), Some(1), "{sql:.40}");
        assert!(text(&out.stderr).starts_with("error: line 1, column "), "{}", text(&out.stderr));
    }
}

#[test]
fn epk_of_a_v2_string() {
    let out = cosmoql(&["epk", r#"["redmond"]"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "22E342F38A486A088463DFF7838A5963\n");
    assert!(out.stderr.is_empty());
    let explicit = cosmoql(&["epk", "--version", "2", "--kind", "hash", r#"["redmond"]"#]);
    assert_eq!(explicit.stdout, out.stdout);
}

#[test]
fn epk_of_a_v1_number() {
    let out = cosmoql(&["epk", "--version", "1", "[-128]"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "05C1D73349F54C053FA0\n");
}

#[test]
fn epk_of_a_two_component_key_defaults_to_multihash() {
    let want = "22E342F38A486A088463DFF7838A596319C08621B135968252FB34B4CF66F811\n";
    let out = cosmoql(&["epk", r#"["redmond", 5]"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), want);
    let out = cosmoql(&["epk", "--kind", "multihash", r#"[ "redmond" , 5.0 ]"#]);
    assert_eq!(text(&out.stdout), want);
    // Hashed together instead (a single 16-byte hash).
    let out = cosmoql(&["epk", "--kind", "hash", r#"[5, "redmond", true, null]"#]);
    assert_eq!(text(&out.stdout), "3032DECBE2AB1768D8E0AEDEA35881DF\n");
    // The bare word `undefined` stands for a missing path.
    let out = cosmoql(&["epk", r#"["tenant1", undefined]"#]);
    assert_eq!(text(&out.stdout), "0DAE0B8467B011E957BC0B8B0DEB5ACA11622DAA78F835834610ABE56EFF5CB5\n");
    let out = cosmoql(&["epk", r#"["a,]\"b", "[{"]"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).len(), 65);
}

#[test]
fn epk_bad_input_exits_1() {
    for key in [
        r#"["redmond""#,
        "redmond",
        r#"{"a": 1}"#,
        r#"[{"a": 1}]"#,
        r#"[[1]]"#,
        "[1,]",
        "[1e400]",
        r#"[{"$undefined": true}]"#,
        "[1, 2, 3, 4]",
        "[\"unterminated]",
        "]][[",
    ] {
        let out = cosmoql(&["epk", key]);
        assert_eq!(out.status.code(), Some(1), "{key}");
        assert!(out.stdout.is_empty(), "{key}");
        assert!(text(&out.stderr).starts_with("error: "), "{key}: {}", text(&out.stderr));
    }
    let out = cosmoql(&["epk", "--version", "1", "--kind", "multihash", "[1]"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("version 2"), "{}", text(&out.stderr));
    let out = cosmoql(&["epk", "--version", "3", "[1]"]);
    assert_eq!(out.status.code(), Some(2), "clap rejects the value");
}

#[test]
fn epk_help_documents_the_options() {
    let out = cosmoql(&["epk", "--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for needle in ["--version", "--kind", "multihash", "undefined", "[default: 2]"] {
        assert!(help.contains(needle), "{needle}: {help}");
    }
    assert!(text(&cosmoql(&["--help"]).stdout).contains("epk"));
}

/// A file under the system's temp folder, removed (with its folder, once empty) when dropped.
struct TempFile(std::path::PathBuf);

impl std::ops::Deref for TempFile {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        // The folder is the file's own (and may hold what a command wrote beside it).
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Each file gets its own folder (tests run in parallel and remove theirs when done).
fn temp_file(name: &str, text: &str) -> TempFile {
    let dir = std::env::temp_dir().join(format!("cosmoql-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write temp file");
    TempFile(path)
}

#[test]
fn import_reports_bad_lines_and_exports() {
    let input = "{\"id\":\"1\",\"pk\":\"a\",\"city\":\"x\"}\n{oops\n{\"id\":\"1\",\"pk\":\"a\"}\n{\"id\":\"2\",\"pk\":\"b\",\"city\":\"x\"}\n";
    let path = temp_file("import.ndjson", input);
    let path = path.to_str().expect("utf-8 path");
    let out = cosmoql(&["import", path, "--partition-key", "/pk", "--export", "-"]);
    // Lines were left out: a script sees it in the status (the export still happened).
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("imported 2 items, skipped 1, failed 1 "), "{stdout}");
    assert!(stdout.contains("{\"id\":\"1\",\"pk\":\"a\",\"city\":\"x\"}\n"), "{stdout}");
    let stderr = text(&out.stderr);
    // JSON errors in our words, with the column in the line (no serde_json wording).
    assert!(
        stderr.contains(
            "line 2: not valid JSON at column 2: an object's keys must be strings in double quotes (skipped)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("line 3: 409 Conflict"), "{stderr}");
    assert!(stderr.contains("error: 2 of 4 lines not imported (1 skipped, 1 failed)"), "{stderr}");
    // No progress bar when stderr is not a terminal.
    assert!(!stderr.contains("eta "), "{stderr}");

    let out = cosmoql(&["import", path, "--partition-key", "/pk", "--fail-fast"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("line 2: not valid JSON at column 2"), "{stderr}");
    assert!(!stderr.contains("skipped"), "the import stopped: nothing was skipped: {stderr}");
    // Everything imported: status 0.
    let good = temp_file("good.ndjson", "{\"id\":\"1\",\"pk\":\"a\"}\n");
    let out = cosmoql(&["import", good.to_str().unwrap(), "--partition-key", "/pk"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("imported 1 item, skipped 0, failed 0 (1 file, "), "{}", text(&out.stdout));

    // Rekeyed export: the same items, now grouped by city.
    let out = cosmoql(&["import", path, "--partition-key", "/pk", "--rekey", "/city", "--export", "-"]);
    assert_eq!(out.status.code(), Some(1), "two lines were not imported");
    assert_eq!(text(&out.stdout).lines().filter(|l| l.starts_with('{')).count(), 2);

    let out = cosmoql(&["import", "/nonexistent/file.ndjson"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("error: cannot open"), "{}", text(&out.stderr));
}

#[test]
fn query_prints_results_as_one_json_array() {
    let data = temp_file(
        "query.ndjson",
        "{\"id\":\"1\",\"pk\":\"a\",\"n\":5}\n{\"id\":\"2\",\"pk\":\"b\",\"n\":7,\"tags\":[\"x\",\"y\"]}\n",
    );
    let data = data.to_str().expect("utf-8 path");
    let out = cosmoql(&[
        "query",
        "--data",
        data,
        "--partition-key",
        "/pk",
        "--param",
        "@min=1",
        "--metrics",
        "SELECT c.id, c.n * 2 AS twice FROM c WHERE c.n > @min ORDER BY c.n DESC",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[{\"id\":\"2\",\"twice\":14},{\"id\":\"1\",\"twice\":10}]\n");
    let metrics = text(&out.stderr);
    let last = metrics.lines().last().expect("a metrics line");
    for key in [
        "partitionsTouched",
        "physicalPartitions",
        "retrievedDocumentCount",
        "outputDocumentCount",
        "requestCharge",
        "peakBufferedItems",
    ] {
        assert!(last.contains(&format!("\"{key}\":")), "{last}");
    }
    assert!(last.contains("\"retrievedDocumentCount\":2"), "{last}");

    // A partition key scopes the query to one logical partition.
    let out = cosmoql(&[
        "query",
        "--data",
        data,
        "--partition-key",
        "/pk",
        "--pk",
        "\"b\"",
        "SELECT VALUE t FROM c JOIN t IN c.tags",
    ]);
    assert_eq!(text(&out.stdout), "[\"x\",\"y\"]\n");
    // No results: an empty array.
    let out = cosmoql(&["query", "--data", data, "SELECT * FROM c WHERE c.n > 100"]);
    assert_eq!(text(&out.stdout), "[]\n");

    // Bad input: rendered errors on stderr, exit 1, nothing on stdout.
    for (args, fragment) in [
        (
            vec!["query", "--data", data, "SELECT nope(c) FROM c"],
            "line 1, column 8: 'nope' is not a recognized built-in function name.",
        ),
        (vec!["query", "--data", data, "SELECT * FROM"], "line 1, column 14"),
        (vec!["query", "--data", data, "SELECT @x"], "the parameter @x is not defined"),
        (
            vec!["query", "--data", data, "--param", "x=not json", "SELECT @x"],
            "--param @x: `not json` is not valid JSON at column 2: expected a JSON value",
        ),
        (
            vec!["query", "--data", data, "--param", "@d=dev-1", "SELECT @d"],
            "--param @d: `dev-1` is not valid JSON at column 1: expected a JSON value; a string is quoted: --param @d='\"dev-1\"'",
        ),
        (vec!["query", "--data", "/nonexistent.ndjson", "SELECT 1"], "cannot open"),
        (vec!["query", "--partition-key", "nope", "SELECT 1"], "invalid partition key path"),
    ] {
        let out = cosmoql(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(text(&out.stderr).contains(fragment), "{args:?}: {}", text(&out.stderr));
    }
}

#[test]
fn bench_prints_one_json_line() {
    let data = temp_file("bench.ndjson", "{\"id\":\"1\"}\n{\"id\":\"2\"}\n");
    let out =
        cosmoql(&["bench", "--data", data.to_str().expect("path"), "--repeat", "3", "SELECT VALUE COUNT(1) FROM c"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line = text(&out.stdout);
    assert_eq!(line.lines().count(), 1);
    for key in ["loadSeconds", "items", "results", "minSeconds", "medianSeconds", "maxSeconds", "peakRssBytes"] {
        assert!(line.contains(&format!("\"{key}\":")), "{line}");
    }
    assert!(line.contains("\"items\":2,\"results\":1"), "{line}");
}

#[test]
fn test_runs_a_suite_reports_diffs_and_blesses() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let sample = root.join("examples/suite");
    let out = cosmoql(&["test", sample.to_str().expect("path")]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).lines().any(|l| l == "9 passed, 0 failed"), "{}", text(&out.stdout));

    // A suite with a wrong expectation: a diff, the summary, exit 1; --bless fixes it.
    let dir = std::env::temp_dir().join(format!("cosmoql-suite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(
        dir.join("fixtures.json"),
        r#"[{"id": "c", "partitionKey": {"paths": ["/k"]}, "items": [{"id": "1", "k": "a", "n": 2}]}]"#,
    )
    .expect("fixtures");
    std::fs::write(dir.join("q.sql"), "-- @name doubled\nSELECT VALUE c.n * 2 FROM c\n-- @expect\n[5]\n").expect("sql");
    let dir_s = dir.to_str().expect("path");
    let out = cosmoql(&["test", dir_s]);
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stdout);
    assert!(report.lines().any(|l| l.starts_with('-') && l.trim_end().ends_with('5')), "{report}");
    assert!(report.lines().any(|l| l.starts_with('+') && l.trim_end().ends_with('4')), "{report}");
    assert!(report.lines().any(|l| l == "0 passed, 1 failed"), "{report}");
    let out = cosmoql(&["test", dir_s, "--bless"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(std::fs::read_to_string(dir.join("q.sql")).expect("sql").contains("[4]"));
    assert_eq!(cosmoql(&["test", dir_s]).status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn skew_reports_a_hot_key_as_a_table_and_as_json() {
    let dir = std::env::temp_dir().join(format!("cosmoql-skew-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("items.ndjson");
    let mut lines = String::new();
    for i in 0..300 {
        // One tenant holds most of the items.
        let tenant = if i % 10 < 8 { "big".to_string() } else { format!("t{i}") };
        lines.push_str(&format!("{{\"id\":\"{i}\",\"tenant\":\"{tenant}\"}}\n"));
    }
    std::fs::write(&data, lines).unwrap();
    let path = data.to_str().unwrap();
    let table = cosmoql(&["skew", "--data", path, "--partition-key", "/tenant", "--partitions", "3"]);
    assert!(table.status.success(), "{}", text(&table.stderr));
    let table = text(&table.stdout);
    assert!(table.contains("top keys by size: [\"big\"] 240 items"), "{table}");
    let json = cosmoql(&["skew", "--data", path, "--partition-key", "/tenant", "--partitions", "3", "--json"]);
    let json = text(&json.stdout);
    assert!(json.starts_with("{\"partitions\":["), "{json}");
    assert!(json.contains("\"topKeysBySize\":[{\"key\":\"[\\\"big\\\"]\""), "{json}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn advise_ranks_keys_and_says_why() {
    let dir = std::env::temp_dir().join(format!("cosmoql-advise-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("readings.ndjson");
    let mut lines = String::new();
    for hour in 0..24 {
        for device in 0..30 {
            lines.push_str(&format!(
                "{{\"id\":\"{hour}-{device}\",\"deviceId\":\"d{device}\",\"date\":\"2026-11-01\",\"at\":\"2026-11-01T{hour:02}:00:00Z\"}}\n"
            ));
        }
    }
    std::fs::write(&data, lines).unwrap();
    let out = cosmoql(&[
        "advise",
        "--data",
        data.to_str().unwrap(),
        "--partition-key",
        "/deviceId",
        "--for-partitions",
        "4",
        "--top",
        "100",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let ranking = text(&out.stdout);
    let device = ranking.find(" /deviceId  (").expect("deviceId is a candidate");
    let date = ranking.find(" /date  (").expect("date is a candidate");
    assert!(device < date, "{ranking}");
    assert!(ranking.contains("only 1 distinct values for 4 partitions: some partitions stay empty"), "{ranking}");
    // With a workload and a what-if replay.
    let workload = dir.join("workload.json");
    std::fs::write(&workload, r#"[{"query": "SELECT * FROM c WHERE c.deviceId = 'd3'", "rate": 10}]"#).unwrap();
    let out = cosmoql(&[
        "advise",
        "--data",
        data.to_str().unwrap(),
        "--for-partitions",
        "4",
        "--top",
        "3",
        "--workload",
        workload.to_str().unwrap(),
        "--what-if",
        "100",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(report.contains("100% of the workload's queries read one logical partition"), "{report}");
    assert!(report.contains("what-if at 100 RU/s over 4 partitions"), "{report}");
    assert!(report.contains("writes throttled, ") && report.contains(" queries, busiest partition at"), "{report}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn changes_prints_the_change_feed_a_page_at_a_time() {
    let data = temp_file(
        "changes.ndjson",
        "{\"id\":\"a\",\"pk\":\"p\"}\n{\"id\":\"b\",\"pk\":\"q\"}\n{\"id\":\"c\",\"pk\":\"p\"}\n",
    );
    let path = data.to_str().unwrap();
    let first = cosmoql(&["changes", "--data", path, "--partition-key", "/pk", "--max-items", "2"]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert_eq!(text(&first.stdout).lines().count(), 2);
    let stderr = text(&first.stderr);
    let token = stderr.split("continuation: ").nth(1).unwrap().trim().to_string();
    assert!(stderr.starts_with("2 changes; continuation: cf1."), "{stderr}");
    // The same data loads with the same LSNs: the continuation gives the rest.
    let rest = cosmoql(&["changes", "--data", path, "--partition-key", "/pk", "--continuation", &token]);
    assert_eq!(text(&rest.stdout).lines().count(), 1, "{}", text(&rest.stdout));
    // One logical partition's feed; every page with --all.
    let p =
        cosmoql(&["changes", "--data", path, "--partition-key", "/pk", "--pk", "\"p\"", "--all", "--max-items", "1"]);
    assert_eq!(text(&p.stdout).lines().count(), 2);
    // All versions and deletes needs a retention.
    let refused = cosmoql(&["changes", "--data", path, "--partition-key", "/pk", "--all-versions"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("changeFeedPolicy.retentionDuration"), "{}", text(&refused.stderr));
}

#[test]
fn a_failing_suite_case_names_its_options_in_json_not_rust() {
    let fixtures = temp_file(
        "fixtures.json",
        r#"[{"id": "people", "partitionKey": "/city", "items": [{"id": "1", "city": "Lisbon", "name": "Ana"}]}]"#,
    );
    let dir = fixtures.parent().unwrap().to_path_buf();
    std::fs::write(
        dir.join("scoped.sql"),
        "-- @name a failing scoped case\n-- @pk \"Lisbon\"\nSELECT VALUE p.name FROM p\n-- @expect\n[\"nobody\"]\n",
    )
    .unwrap();
    let out = cosmoql(&["test", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("options: pk [\"Lisbon\"]"), "{stdout}");
    assert!(!stdout.contains("PartitionKey("), "{stdout}");
}

#[test]
fn request_charges_print_without_float_noise() {
    let lines: String = (0..200).map(|i| format!("{{\"id\":\"{i}\",\"pk\":\"p{}\",\"v\":{i}.37}}\n", i % 7)).collect();
    let data = temp_file("charges.ndjson", &lines);
    let data = data.to_str().unwrap();
    for page in ["1", "3", "7", "50"] {
        let out = cosmoql(&[
            "query",
            "--data",
            data,
            "--partition-key",
            "/pk",
            "--page-size",
            page,
            "--metrics",
            "SELECT * FROM c WHERE c.v > 10 ORDER BY c.v",
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let stderr = text(&out.stderr);
        let charge = stderr.split("\"requestCharge\":").nth(1).and_then(|r| r.split(',').next()).unwrap();
        let decimals = charge.split('.').nth(1).map_or(0, str::len);
        assert!(decimals <= 2, "page size {page}: requestCharge {charge}");
    }
}

#[test]
fn epk_key_errors_speak_json() {
    let out = cosmoql(&["epk", "[dev-1]"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "component 1 (dev-1) is not valid JSON at column 1: expected a JSON value (a string needs double quotes)"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("expected value at line"), "{stderr}");
}
