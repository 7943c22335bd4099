//! The REPL without a terminal: `-c`, a FILE.sql, piped statements, exit codes, `--empty`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The files and HOME of these tests: a folder of this run under the target directory's folder
/// for test files (all tests share it, so it outlives them; `cargo clean` removes it).
fn dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cosmoql-script-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let path = dir().join(name);
    std::fs::write(&path, text).expect("write temp file");
    path
}

fn command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cosmoql"));
    // Never touch the user's history file.
    c.env("COSMOQL_HISTORY", "").env("HOME", dir()).env("NO_COLOR", "1");
    c
}

fn run(args: &[&str]) -> Output {
    command().args(args).output().expect("the binary runs")
}

fn run_stdin(args: &[&str], input: &str) -> Output {
    let mut child = command()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write");
    child.wait_with_output().expect("exit")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const PEOPLE: &str = r#"{"id": "1", "name": "Ada", "city": "Oslo", "kids": [{"name": "Bo"}]}
{"id": "2", "name": "Cy", "city": "Rome"}
{"id": "3", "name": "Al", "city": "Oslo", "date": "2024-06-01", "vin": "X1"}
"#;

#[test]
fn dash_c_runs_on_the_demo_database() {
    let out = run(&[
        "-c",
        "SELECT VALUE COUNT(1) FROM c",
        "-c",
        ".use families\nSELECT VALUE f.id FROM f WHERE f.lastName = 'Smith' ORDER BY f.id",
        "-c",
        "EXPLAIN SELECT * FROM c WHERE c.lastName = 'Garcia'",
        "-c",
        ".stats",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some("[100000]"));
    assert_eq!(lines.next(), Some(r#"["SmithFamily","SmithFamily2"]"#));
    assert!(stdout.contains("pins 1 key"), "{stdout}");
    assert!(stdout.contains("largest logical partitions"), "{stdout}");
    // The demo data is indexed: .stats reports data and index memory per item.
    assert!(stdout.contains("memory: data ") && stdout.contains(" B per item, "), "{stdout}");
    // Both sizes of the items: as charged (names spelled out) and in memory (names shared).
    let data = stdout.lines().find(|l| l.starts_with("memory: data ")).unwrap_or_default();
    let per_item: Vec<u64> = data
        .split(" B per item")
        .filter_map(|part| part.rsplit([' ', '(']).next().and_then(|n| n.parse().ok()))
        .collect();
    assert!(per_item.len() >= 2 && per_item[1] < per_item[0], "{data}");
    assert!(!stdout.contains("indexes 0 B"), "{stdout}");
    assert!(stdout.contains("[\"Smith\"]") || stdout.contains("Smith"), "{stdout}");
    assert!(stdout.contains('█'), "{stdout}");
}

#[test]
fn a_file_with_two_statements() {
    let file = temp_file("two.sql", "-- two statements\nSELECT VALUE 1 + 1;\nSELECT {a: 'x;y'}\n  AS o\n");
    let out = run(&["--empty", file.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[2]\n[{\"o\":{\"a\":\"x;y\"}}]\n");
}

#[test]
fn piped_statements_create_import_and_query() {
    let data = temp_file("people.ndjson", PEOPLE);
    let export = dir().join("people-out.ndjson");
    let input = format!(
        ".create people /city\n.import {}\n.param @c \"Oslo\"\n.params\nSELECT VALUE p.name FROM p WHERE p.city = @c\nORDER BY p.name;\n.export {}\n",
        data.display(),
        export.display()
    );
    let out = run_stdin(&["--empty"], &input);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("@c = \"Oslo\""), "{stdout}");
    assert!(stdout.ends_with("[\"Ada\",\"Al\"]\n"), "{stdout}");
    // Messages go to stderr, results to stdout.
    assert!(text(&out.stderr).contains("imported 3 items"), "{}", text(&out.stderr));
    let exported = std::fs::read_to_string(&export).expect("exported");
    assert_eq!(exported.lines().count(), 3);
}

#[test]
fn a_failed_statement_exits_1_with_the_caret_on_stderr() {
    let out = run(&["--empty", "-c", "SELECT c.value FROM c", "-c", "SELECT VALUE 3"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("line 1, column 10: Syntax error, incorrect syntax near 'value'."), "{stderr}");
    assert!(stderr.contains("hint: expected a property name"), "{stderr}");
    assert!(stderr.contains("         ^^^^^"), "{stderr}");
    // The other statement still ran.
    assert_eq!(text(&out.stdout), "[3]\n");
}

#[test]
fn empty_starts_without_containers() {
    let out = run(&["--empty", "-c", ".containers", "-c", "SELECT * FROM c"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("no container in use"), "{}", text(&out.stderr));
}

#[test]
fn synthetic_keys_settings_and_table_mode() {
    let data = temp_file("synthetic.ndjson", PEOPLE);
    let input = format!(
        ".create s --concat /city,/name _\n.import {}\n.mode table\n.set pk \"Oslo_Ada\"\n.set crosspartition off\n\
         SELECT c.name, c.kids FROM c;\n.set pk off\nSELECT VALUE c.partitionKey FROM c\n\n.bogus\n",
        data.display()
    );
    let out = run_stdin(&["--empty"], &input);
    assert_eq!(out.status.code(), Some(1), "the unknown command fails the run");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("│ name │ kids"), "{stdout}");
    assert!(stdout.contains(r#"[{"name":"Bo"}]"#), "{stdout}");
    assert!(stdout.contains("(1 row)"), "{stdout}");
    // A new container has one physical partition, so the query runs without the key too.
    assert!(stdout.contains("Rome_Cy"), "{stdout}");
    assert!(text(&out.stderr).contains("unknown command .bogus"), "{}", text(&out.stderr));
}

#[test]
fn hash_suffix_keys_and_explain_analyze() {
    let data = temp_file("hash.ndjson", "{\"id\":\"1\",\"date\":\"2024-06-01\",\"vin\":\"A\"}\n");
    let input = format!(
        ".create h --hash /date /vin 10\n.import {}\nSELECT VALUE c.partitionKey FROM c;\nEXPLAIN ANALYZE SELECT * FROM c;\n",
        data.display()
    );
    let out = run_stdin(&["--empty"], &input);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("[\"2024-06-01."), "{stdout}");
    assert!(stdout.contains("analyze\n"), "{stdout}");
    assert!(stdout.contains("retrieved 1 items"), "{stdout}");
}

#[test]
fn changes_shows_the_change_feed_since_the_last_call() {
    let data = temp_file(
        "changes.ndjson",
        "{\"id\":\"a\",\"pk\":\"p\"}\n{\"id\":\"b\",\"pk\":\"q\"}\n{\"id\":\"c\",\"pk\":\"p\"}\n",
    );
    let script = format!(".create t /pk\n.changes now\n.import {}\n.changes 2\n.changes\n.changes\n", data.display());
    let out = run_stdin(&[], &script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let ids: Vec<&str> = stdout.lines().filter_map(|l| l.split("\"id\":\"").nth(1)).map(|r| &r[..1]).collect();
    assert_eq!(ids, ["a", "b", "c"], "{stdout}");
    assert!(stdout.lines().all(|l| l.contains("\"_lsn\":")), "{stdout}");
    assert!(stderr.contains("2 changes (more may follow"), "{stderr}");
    assert!(stderr.contains("no changes since the last `.changes`"), "{stderr}");
}

#[test]
fn errors_in_a_file_name_the_file_and_its_line() {
    let script = temp_file(
        "lines.sql",
        "SELECT VALUE 1;\n\n-- a comment\nSELECT VALUE\n  nope(;\nSELECT VALUE 2; SELECT VALUE ];\n",
    );
    let out = run(&["--empty", script.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let name = script.display().to_string();
    // The statement's second line is the file's fifth.
    assert!(stderr.contains(&format!("{name}: line 5, column 8: Syntax error")), "{stderr}");
    assert!(stderr.contains("hint: expected an expression"), "{stderr}");
    assert!(stderr.contains("  nope(\n       ^"), "{stderr}");
    // A statement after another on the same line: the file's column.
    assert!(stderr.contains(&format!("{name}: line 6, column 30:")), "{stderr}");
    assert_eq!(text(&out.stdout), "[1]\n[2]\n");
}

#[test]
fn output_once_and_read() {
    let out_file = dir().join("all.json");
    let once_file = dir().join("once.json");
    let reads = temp_file("reads.sql", "SELECT VALUE 'read';\n");
    let out = run(&[
        "--empty",
        "-c",
        &format!(".output {}", out_file.display()),
        "-c",
        "SELECT VALUE 1",
        "-c",
        "SELECT VALUE 2",
        "-c",
        ".output",
        "-c",
        &format!(".once {}", once_file.display()),
        "-c",
        "SELECT VALUE 3",
        "-c",
        "SELECT VALUE 4",
        "-c",
        &format!(".read {}", reads.display()),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "[1]\n[2]\n");
    assert_eq!(std::fs::read_to_string(&once_file).unwrap(), "[3]\n");
    assert_eq!(text(&out.stdout), "[4]\n[\"read\"]\n");
    // A file that reads itself stops at a depth, with an error.
    let selfish = dir().join("selfish.sql");
    std::fs::write(&selfish, format!(".read {}\n", selfish.display())).unwrap();
    let out = run(&["--empty", "-c", &format!(".read {}", selfish.display())]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("nested deeper than 16 files"), "{}", text(&out.stderr));
}

#[test]
fn init_file_bail_timer_and_help_for_one_command() {
    let home = dir().join("home-with-rc");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join(".cosmoqlrc"), ".mode csv\n").unwrap();
    let run_home = |args: &[&str]| command().env("HOME", &home).args(args).output().unwrap();
    // ~/.cosmoqlrc runs first.
    let out = run_home(&["--empty", "-c", "SELECT 1 AS a"]);
    assert_eq!(text(&out.stdout), "a\n1\n", "{}", text(&out.stderr));
    // --init FILE instead of it.
    let init = temp_file("init.sql", ".mode ndjson\n");
    let out = run_home(&["--empty", "--init", init.to_str().unwrap(), "-c", "SELECT 1 AS a"]);
    assert_eq!(text(&out.stdout), "{\"a\":1}\n");
    let out = run_home(&["--empty", "--init", "/nonexistent/init.sql", "-c", "SELECT 1"]);
    assert!(text(&out.stderr).contains("cannot read the init file /nonexistent/init.sql"), "{}", text(&out.stderr));
    // --bail stops at the first failure.
    let out = run(&["--empty", "--bail", "-c", "SELECT nope(", "-c", "SELECT VALUE 5"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    // .timer is .timing; .help COMMAND shows that command.
    let out = run(&["--empty", "-c", ".timer on", "-c", ".help once", "-c", ".help nope"]);
    assert!(text(&out.stdout).contains(".once FILE") && !text(&out.stdout).contains(".read"), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("no command .nope"), "{}", text(&out.stderr));
}

#[test]
fn metrics_show_the_query_stats_of_the_data_explorer() {
    let out = run(&[
        "-c",
        ".metrics on",
        "-c",
        "SELECT TOP 3 c.deviceId, c.metricValue FROM c WHERE c.deviceId = 'dev-00001' ORDER BY c.metricValue DESC",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    for line in [
        "request charge      ",
        "partitions          1 of 10 physical partitions read",
        "retrieved           ",
        "output              3 results (",
        "index               ",
        "time                compile ",
        "indexes used        /deviceId/?",
        "indexes that help   (/deviceId ASC, /metricValue DESC) (High impact)",
    ] {
        assert!(stderr.contains(line), "{line:?} in {stderr}");
    }
    assert!(stderr.contains(" bytes)"), "{stderr}");
}

#[test]
fn timing_off_prints_no_time_even_with_metrics() {
    let wall_time = |stderr: &str| stderr.lines().any(|l| l.ends_with(" ms") && !l.starts_with("time "));
    let out = run(&["-c", ".metrics on", "-c", ".timing off", "-c", "SELECT VALUE COUNT(1) FROM c"]);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("request charge"), "{stderr}");
    assert!(!wall_time(&stderr), "{stderr}");
    let out = run(&["-c", ".timing on", "-c", "SELECT VALUE COUNT(1) FROM c"]);
    assert!(wall_time(&text(&out.stderr)), "{}", text(&out.stderr));
}

#[test]
fn analytics_mode_runs_standard_sql_on_the_analytical_store() {
    let data = temp_file("people-analytics.ndjson", PEOPLE);
    let input = format!(
        ".create people /city\n.import {}\nANALYZE SELECT city, COUNT(*) AS n FROM people GROUP BY city;\n\
         .analytics enable\nANALYZE SELECT city, COUNT(*) AS n FROM people GROUP BY city ORDER BY city;\n\
         .analytics on\nSELECT name FROM demo.people WHERE city = 'Oslo' ORDER BY name;\n\
         .analytics schema\n.analytics off\nSELECT VALUE COUNT(1) FROM p\n",
        data.display()
    );
    let out = run_stdin(&["--empty"], &input);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    // Before `.analytics enable` the container has no analytical store: the statement fails.
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("(container `people` of database `demo` has no analytical store"), "{stderr}");
    assert!(stdout.contains(r#"[{"city":"Oslo","n":2},{"city":"Rome","n":1}]"#), "{stdout}");
    assert!(stdout.contains(r#"[{"name":"Ada"},{"name":"Al"}]"#), "{stdout}");
    // The schema, and the row engine again after `.analytics off`.
    assert!(stderr.contains("kids: array of object"), "{stderr}");
    assert!(stdout.ends_with("[3]\n"), "{stdout}");
}

#[test]
fn cosmos_sql_aggregates_route_to_the_analytical_store_until_routing_is_off() {
    let data = temp_file("people-route.ndjson", PEOPLE);
    let sql = "SELECT c.city, COUNT(1) AS n FROM c GROUP BY c.city";
    let input = format!(
        ".create people /city\n.import {}\nEXPLAIN {sql};\n.analytics enable\nEXPLAIN {sql};\n\
         SELECT VALUE COUNT(1) FROM c WHERE c.city = 'Oslo';\nEXPLAIN SELECT COUNT(c.date) AS n FROM c;\n\
         .analytics route off\nEXPLAIN {sql};\n.analytics\n",
        data.display()
    );
    let out = run_stdin(&["--empty"], &input);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let explains: Vec<&str> = stdout.split("query       ").skip(1).collect();
    assert_eq!(explains.len(), 4, "{stdout}");
    // No analytical store yet: EXPLAIN says nothing of engines.
    assert!(!explains[0].contains("engine"), "{}", explains[0]);
    assert!(
        explains[1].contains(
            "engine      analytical store: an aggregate over columns of one type, in every item (c.city string)"
        ),
        "{}",
        explains[1]
    );
    assert!(stdout.contains("[2]"), "{stdout}");
    assert!(explains[2].contains("engine      row engine: c.date is null or missing in 2 item(s)"), "{}", explains[2]);
    assert!(!explains[3].contains("engine"), "{}", explains[3]);
    assert!(stderr.contains("routing off"), "{stderr}");
}

#[test]
fn udfs_are_registered_listed_called_and_dropped_and_a_database_directory_keeps_them() {
    let data = temp_file("people-udf.ndjson", PEOPLE);
    let script = temp_file("greet.js", "function greet(name) {\n    return 'hello ' + name;\n}\n");
    let db = dir().join("udf-db");
    let _ = std::fs::remove_dir_all(&db);
    let input = format!(
        ".create people /city\n.import {}\n.udf create greet {}\n.udf list\n\
         SELECT VALUE udf.greet(c.name) FROM c WHERE c.city = 'Rome';\n\
         SELECT VALUE udf.nope(c.name) FROM c;\n.udf show greet\n",
        data.display(),
        script.display()
    );
    let out = run_stdin(&[db.to_str().unwrap()], &input);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(stderr.contains("created udf.greet"), "{stderr}");
    assert!(stderr.contains("udf.greet  function greet(name) {"), "{stderr}");
    assert!(stdout.contains(r#"["hello Cy"]"#), "{stdout}");
    assert!(stderr.contains("'udf.nope' is not a recognized user-defined function name."), "{stderr}");
    assert!(stderr.contains("return 'hello ' + name;"), "{stderr}");
    // The next process finds it in the directory; then it is dropped.
    let out = run_stdin(
        &[db.to_str().unwrap(), "--use", "people"],
        "SELECT VALUE udf.greet(c.name) FROM c WHERE c.city = 'Rome';\n.udf drop greet\n.udf list\n",
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(stdout.contains(r#"["hello Cy"]"#), "{stdout}\n{stderr}");
    assert!(stderr.contains("dropped udf.greet") && stderr.contains("no user-defined functions"), "{stderr}");
}

#[test]
fn procedures_and_triggers_from_the_repl_and_the_command_line_on_a_database_directory() {
    let proc_file = temp_file(
        "bulk.js",
        "function bulk(docs) {\n  var c = getContext().getCollection();\n  docs.forEach(function (d) { c.createDocument(c.getSelfLink(), d); });\n  console.log('made %s', docs.length);\n  getContext().getResponse().setBody(docs.length);\n}\n",
    );
    let trigger_file = temp_file(
        "stamp.js",
        "function stamp() {\n  var r = getContext().getRequest(), item = r.getBody();\n  item.stamped = true;\n  r.setBody(item);\n}\n",
    );
    let db = dir().join("proc-db");
    let _ = std::fs::remove_dir_all(&db);
    let input = format!(
        ".create people /city\n.proc create bulk {}\n.proc list\n\
         .proc exec bulk \"Oslo\" [[{{\"id\":\"1\",\"city\":\"Oslo\"}},{{\"id\":\"2\",\"city\":\"Oslo\"}}]]\n\
         .trigger create stamp pre create {}\n.trigger list\n\
         .insert --pre-trigger stamp {{\"id\":\"3\",\"city\":\"Rome\"}}\n\
         .proc exec bulk \"Oslo\" [[{{\"id\":\"9\",\"city\":\"Rome\"}}]]\n",
        proc_file.display(),
        trigger_file.display()
    );
    let out = run_stdin(&[db.to_str().unwrap()], &input);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(stderr.contains("created stored procedure bulk"), "{stderr}");
    assert!(stderr.contains("bulk  function bulk(docs) {"), "{stderr}");
    assert!(stderr.contains("log: made 2"), "{stderr}");
    assert!(stdout.contains("2\n"), "{stdout}");
    assert!(stderr.contains("stamp (Pre Create)  function stamp() {"), "{stderr}");
    // The last call writes to another logical partition: refused, as the service refuses it.
    assert!(stderr.contains("cannot reference partition keys other than the one"), "{stderr}");
    // The command line on the same directory: the items, the stamp, and a procedure run by -c.
    let out = run(&[db.to_str().unwrap(), "--use", "people", "-c", "SELECT c.id, c.stamped FROM c ORDER BY c.id"]);
    assert_eq!(
        text(&out.stdout).trim(),
        r#"[{"id":"1"},{"id":"2"},{"id":"3","stamped":true}]"#,
        "{}",
        text(&out.stderr)
    );
    let out = run(&[db.to_str().unwrap(), "--use", "people", "-c", ".proc exec bulk \"Rome\" [[]]"]);
    assert_eq!(text(&out.stdout).trim(), "0", "{}", text(&out.stderr));
}
