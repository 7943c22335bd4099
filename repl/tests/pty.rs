//! The interactive REPL on a pseudo-terminal, driven like a user would: banner, a query and its
//! table, a caret error, Ctrl-C on a long query, Ctrl-C on the line, `.quit` and Ctrl-D.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use rexpect::session::{spawn_command, PtySession};

/// Generous: the test binary is unoptimized and CI has two cores.
const TIMEOUT_MS: u64 = 20_000;

/// A folder under the system's temp folder (the REPL's HOME), removed with its contents when dropped.
struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("cosmoql-pty-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    TempDir(dir)
}

/// Waits for the prompt, then a moment: the line editor may drop keys that arrive while it sets
/// up the terminal.
fn prompt(p: &mut PtySession, text: &str, why: &str) {
    p.exp_string(text).expect(why);
    std::thread::sleep(Duration::from_millis(200));
}

fn spawn(args: &[&str], home: &PathBuf) -> PtySession {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cosmoql"));
    cmd.args(args)
        .env("HOME", home)
        .env("COSMOQL_HISTORY", home.join("history"))
        .env("TERM", "xterm")
        .env_remove("NO_COLOR");
    spawn_command(cmd, Some(TIMEOUT_MS)).expect("spawn on a pty")
}

#[test]
fn query_table_caret_error_cancel_and_quit() {
    let home = temp_dir("demo");
    let mut p = spawn(&[], &home);
    p.exp_string("telemetry (100000 items, key /deviceId").expect("the banner names the demo data");
    p.exp_string("Type .help").expect("the banner says how to get help");
    prompt(&mut p, "telemetry> ", "a prompt");

    p.send_line("SELECT c.metricType, COUNT(1) AS readings FROM c GROUP BY c.metricType;").expect("send");
    p.exp_string("metricType").expect("a table header");
    p.exp_string("Temperature").expect("a row");
    p.exp_string("(6 rows)").expect("the row count");
    prompt(&mut p, "telemetry> ", "a prompt");

    // A statement over two lines: the first line has no `;`, an empty line ends it.
    p.send_line("SELECT VALUE CONCAT('multi', ").expect("send");
    p.send_line("'-line-ok')").expect("send");
    p.send_line("").expect("send");
    p.exp_string("multi-line-ok").expect("the multi-line result");
    prompt(&mut p, "telemetry> ", "a prompt");

    p.send_line("SELECT c.value FROM c;").expect("send");
    p.exp_string("line 1, column 10").expect("the error position");
    p.exp_string("^^^^^").expect("the caret");
    prompt(&mut p, "telemetry> ", "a prompt");

    // Billions of rows: only Ctrl-C ends it.
    let joins: String =
        ["a", "b", "d", "e", "f", "g", "h", "i"].iter().map(|a| format!(" JOIN {a} IN c.tags")).collect();
    p.send_line(&format!("SELECT VALUE COUNT(1) FROM c{joins};")).expect("send");
    std::thread::sleep(Duration::from_millis(1500));
    p.send_control('c').expect("Ctrl-C");
    p.exp_string("query cancelled").expect("the query is cancelled");
    prompt(&mut p, "telemetry> ", "the REPL is still there");

    p.send_line("SELECT VALUE CONCAT('al', 'ive-', ToString(6 * 7));").expect("send");
    p.exp_string("alive-42").expect("a query after the cancel");
    prompt(&mut p, "telemetry> ", "a prompt");

    p.send_line(".quit").expect("send");
    p.exp_eof().expect("the REPL exits");
}

#[test]
fn ctrl_c_clears_the_line_and_ctrl_d_leaves_and_history_is_kept() {
    let home = temp_dir("empty");
    let mut p = spawn(&["--empty"], &home);
    p.exp_string("empty database").expect("the banner");
    prompt(&mut p, "cosmoql> ", "a prompt");

    p.send("SELECT VALUE 'never-run'").expect("send");
    p.send_control('c').expect("Ctrl-C");
    prompt(&mut p, "cosmoql> ", "a fresh prompt");
    p.send_line("SELECT VALUE 40 + 2;").expect("send");
    p.exp_string("42").expect("the result");
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line(".metrics on").expect("send");
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line("SELECT VALUE 'x';").expect("send");
    p.exp_string("request charge").expect("metrics after the query");
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line(".create things /kind").expect("send");
    p.exp_string("created things").expect("created");
    prompt(&mut p, "things> ", "the prompt names the container");
    p.send(".conta\t").expect("Tab");
    p.send("\r").expect("Enter");
    p.flush().expect("flush");
    p.exp_string("key /kind").expect("the completed .containers ran");
    prompt(&mut p, "things> ", "a prompt");
    p.send_control('d').expect("Ctrl-D");
    p.exp_eof().expect("the REPL exits");

    let history = std::fs::read_to_string(home.join("history")).expect("the history file");
    assert!(history.contains("SELECT VALUE 40 + 2;"), "{history}");
    assert!(!history.contains("never-run"), "{history}");
}

#[test]
fn lines_typed_ahead_all_run() {
    let home = temp_dir("typeahead");
    let mut p = spawn(&[], &home);
    prompt(&mut p, "telemetry> ", "a prompt");
    // Two statements arriving in one read (a terminal multiplexer, an unbracketed paste).
    p.send("SELECT VALUE 40 + 2;\rSELECT VALUE 50 + 8;\r").expect("send");
    p.flush().expect("flush");
    p.exp_string("42").expect("the first runs");
    p.exp_string("58").expect("the second runs too");
    prompt(&mut p, "telemetry> ", "a prompt");
    // A line typed while a query is still running.
    p.send("SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags WHERE c.metricValue > 1;\r").expect("send");
    p.send("SELECT VALUE 50 + 9;\r").expect("send");
    p.flush().expect("flush");
    p.exp_string("59").expect("the line typed ahead runs after it");
    prompt(&mut p, "telemetry> ", "a prompt");
    p.send_line(".quit").expect("send");
    p.exp_eof().expect("the REPL exits");
}

/// The exit status of a REPL session that ended.
fn exit_status(p: &mut PtySession) -> String {
    p.exp_eof().expect("the REPL exits");
    format!("{:?}", p.process().wait().expect("wait"))
}

#[test]
fn the_interactive_exit_status_is_zero_or_what_exit_asks() {
    let home = temp_dir("status");
    // A failed statement earlier does not make the session fail (as in sqlite3 and psql).
    let mut p = spawn(&["--empty"], &home);
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line("SELECT nope(;").expect("send");
    p.exp_string("error").expect("the error");
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_control('d').expect("Ctrl-D");
    let status = exit_status(&mut p);
    assert!(status.ends_with(", 0)"), "{status}");
    // `.exit N` exits with N.
    let mut p = spawn(&["--empty"], &home);
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line(".exit 4").expect("send");
    let status = exit_status(&mut p);
    assert!(status.ends_with(", 4)"), "{status}");
}

#[test]
fn tables_show_undefined_and_non_finite_numbers_as_the_json_does() {
    let home = temp_dir("visible");
    let mut p = spawn(&["--empty"], &home);
    prompt(&mut p, "cosmoql> ", "a prompt");
    // A non-finite result has no JSON form: the service refuses the query; so does every mode.
    p.send_line("SELECT 1/0 AS x, 2 AS y;").expect("send");
    p.exp_string("cannot be represented in JSON").expect("the table mode refuses it as the JSON mode does");
    prompt(&mut p, "cosmoql> ", "a prompt");
    // An undefined property is left out, as in the JSON (`[{"b":1}]`): no `a` column.
    p.send_line("SELECT VALUE {\"a\": undefined, \"b\": 1};").expect("send");
    let before = p.exp_string("(1 row)").expect("one row");
    // The table: what follows the echoed line (the editor ends it by leaving bracketed paste).
    let table = before.rsplit("\u{1b}[?2004l").next().unwrap_or(&before);
    assert!(table.contains('b') && table.contains('1'), "{table:?}");
    assert!(!table.contains('a'), "no column for the undefined property: {table:?}");
    prompt(&mut p, "cosmoql> ", "a prompt");
    // An undefined result is dropped, as in the JSON (`[]`).
    p.send_line("SELECT VALUE undefined;").expect("send");
    p.exp_string("(0 rows)").expect("no row");
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line(".quit").expect("send");
    p.exp_eof().expect("the REPL exits");
}

/// What the REPL wrote, as text (rexpect hands bytes over one char each), without colours.
fn terminal_text(raw: &str) -> String {
    let bytes: Vec<u8> = raw.chars().map(|c| c as u32 as u8).collect();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters final-byte.
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() || c == '~' {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[test]
fn tables_fit_the_terminal_and_wide_characters_keep_borders_straight() {
    let home = temp_dir("wide");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cosmoql"));
    cmd.args(["--empty"])
        .env("HOME", &*home)
        .env("COSMOQL_HISTORY", home.join("history"))
        .env("TERM", "xterm")
        .env("COLUMNS", "50")
        .env("NO_COLOR", "1");
    let mut p = spawn_command(cmd, Some(TIMEOUT_MS)).expect("spawn on a pty");
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line(
        "SELECT VALUE {\"city\": \"東京\", \"tower\": \"東京タワー東京タワー東京タワー東京タワー\", \"emoji\": \"🗼🗼\", \
         \"a\": 1, \"b\": 2, \"c\": 3, \"d\": 4, \"e\": 5, \"f\": 6, \"g\": 7, \"h\": 8};",
    )
    .expect("send");
    let raw = p.exp_string("(.mode json shows them)").expect("the table and its note");
    let text = terminal_text(&raw);
    let table: Vec<&str> = text.lines().filter(|l| l.starts_with(['┌', '│', '├', '└'])).collect();
    assert_eq!(table.len(), 5, "{text}");
    let width = |l: &str| -> usize {
        l.chars()
            .map(|c| if ('\u{1100}'..).contains(&c) && !('─'..='╿').contains(&c) && c != '…' { 2 } else { 1 })
            .sum()
    };
    for line in &table {
        assert!(width(line) <= 50, "fits 50 columns: {line} ({})", width(line));
        assert_eq!(width(line), width(table[0]), "borders line up: {text}");
    }
    assert!(text.contains("left out to fit the terminal"), "{text}");
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line(".quit").expect("send");
    p.exp_eof().expect("the REPL exits");
}

#[test]
fn ctrl_c_stops_an_import() {
    let home = temp_dir("import-cancel");
    // Enough lines that the import is still running when Ctrl-C comes.
    let data = home.join("big.ndjson");
    let lines: String = (0..1_500_000).map(|i| format!("{{\"id\":\"{i}\",\"k\":\"k{}\"}}\n", i % 1000)).collect();
    std::fs::write(&data, lines).expect("write the data");
    let mut p = spawn(&["--empty"], &home);
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line(".create big /k").expect("send");
    prompt(&mut p, "big> ", "a prompt");
    p.send_line(&format!(".import {}", data.display())).expect("send");
    p.exp_string("eta").expect("the progress bar");
    p.send_control('c').expect("Ctrl-C");
    p.exp_string("import cancelled (Ctrl-C) after").expect("the import stops");
    prompt(&mut p, "big> ", "the prompt comes back");
    p.send_line("SELECT VALUE COUNT(1) FROM c;").expect("send");
    p.exp_string("(1 row)").expect("the count");
    p.send_line(".quit").expect("send");
    p.exp_eof().expect("the REPL exits");
}

#[test]
fn tab_lists_the_candidates_when_they_differ() {
    let home = temp_dir("complete");
    let mut p = spawn(&["--empty"], &home);
    prompt(&mut p, "cosmoql> ", "a prompt");
    // `.p` could be .pager, .param, .params, .patch or .policy: the second Tab lists them.
    p.send(".p\t\t").expect("Tab Tab");
    p.flush().expect("flush");
    p.exp_string(".params").expect("the candidates are listed");
    p.exp_string(".policy").expect("all of them");
    p.exp_string("cosmoql> ").expect("the prompt comes back, with the line as typed");
    std::thread::sleep(Duration::from_millis(200));
    // Completing on: `.pol` is only .policy.
    p.send("ol\t\r").expect("Tab and Enter");
    p.flush().expect("flush");
    p.exp_string("no container in use").expect(".policy ran");
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line(".quit").expect("send");
    p.exp_eof().expect("the REPL exits");
}

#[test]
fn long_tables_go_through_the_pager() {
    let home = temp_dir("pager");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cosmoql"));
    cmd.args(["--empty"])
        .env("HOME", &*home)
        .env("COSMOQL_HISTORY", home.join("history"))
        .env("TERM", "xterm")
        .env("LINES", "8")
        .env("PAGER", "sed 's/^/PAGED: /'");
    let data = home.join("ten.ndjson");
    std::fs::write(&data, (0..10).map(|i| format!("{{\"id\":\"{i}\",\"k\":\"a\"}}\n")).collect::<String>())
        .expect("data");
    let mut p = spawn_command(cmd, Some(TIMEOUT_MS)).expect("spawn on a pty");
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line(".create t /k").expect("send");
    prompt(&mut p, "t> ", "a prompt");
    p.send_line(&format!(".import {}", data.display())).expect("send");
    prompt(&mut p, "t> ", "a prompt");
    // Taller than 8 rows: through the pager.
    p.send_line("SELECT VALUE c.id FROM c;").expect("send");
    p.exp_string("PAGED: ").expect("the table went through $PAGER");
    p.exp_string("PAGED: (10 rows)").expect("all of it");
    prompt(&mut p, "t> ", "a prompt");
    // Short: printed directly.
    p.send_line("SELECT VALUE c.id FROM c WHERE c.id = '3';").expect("send");
    let shown = p.exp_string("(1 row)").expect("the table");
    assert!(!shown.contains("PAGED"), "short results are not paged");
    prompt(&mut p, "t> ", "a prompt");
    // The line mode too.
    p.send_line(".mode line").expect("send");
    prompt(&mut p, "t> ", "a prompt");
    p.send_line("SELECT c.id FROM c;").expect("send");
    p.exp_string("PAGED: id = 9").expect("lines through $PAGER");
    prompt(&mut p, "t> ", "a prompt");
    p.send_line(".mode table").expect("send");
    prompt(&mut p, "t> ", "a prompt");
    // Off: printed directly, however long.
    p.send_line(".pager off").expect("send");
    prompt(&mut p, "t> ", "a prompt");
    p.send_line("SELECT VALUE c.id FROM c;").expect("send");
    let shown = p.exp_string("(10 rows)").expect("the table");
    assert!(!shown.contains("PAGED"), ".pager off prints directly");
    prompt(&mut p, "t> ", "a prompt");
    p.send_line(".quit").expect("send");
    p.exp_eof().expect("the REPL exits");
}

#[test]
fn messages_speak_json_and_files_name_their_lines() {
    let home = temp_dir("messages");
    let script = home.join("bad.sql");
    std::fs::write(&script, "SELECT VALUE 1;\n\nSELECT VALUE\n  nope(;\n").expect("script");
    let mut p = spawn(&["--empty"], &home);
    prompt(&mut p, "cosmoql> ", "a prompt");
    // A bare word as a parameter value: the JSON error in our words, and the quoting hint.
    p.send_line(".param @d dev-1").expect("send");
    p.exp_string("is not valid JSON at column 1: expected a JSON value; a string is quoted: .param @d \"dev-1\"")
        .expect("the hint");
    prompt(&mut p, "cosmoql> ", "a prompt");
    // A script's error names the file and the file's line.
    p.send_line(&format!(".read {}", script.display())).expect("send");
    p.exp_string(&format!("{}: line 4, column 8: Syntax error", script.display())).expect("the file line");
    p.exp_string("hint: expected an expression").expect("what was expected");
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line(".quit").expect("send");
    p.exp_eof().expect("the REPL exits");
}

/// Everything the session printed until `text`, appended to `seen`.
fn expect_into(p: &mut PtySession, seen: &mut String, text: &str, why: &str) {
    let before = p.exp_string(text).expect(why);
    seen.push_str(&before);
    seen.push_str(text);
}

#[test]
fn interactive_output_never_shows_an_escaped_control_sequence() {
    // Colours on (a terminal, no NO_COLOR): timing, metrics, errors, tables, JSON and item
    // statuses are styled; none may reach the screen as `\u{1b}[2m` text.
    let home = temp_dir("escapes");
    let mut p = spawn(&[], &home);
    let mut seen = String::new();
    expect_into(&mut p, &mut seen, "telemetry> ", "a prompt");
    std::thread::sleep(Duration::from_millis(200));
    // Each statement, and what it prints last (the line editor redraws the prompt as it echoes,
    // so the prompt alone does not say the statement ran).
    for (line, last) in [
        ("SELECT TOP 2 c.deviceId, c.metricValue FROM c;", " ms"),
        (".metrics on", "telemetry> "),
        ("SELECT VALUE COUNT(1) FROM c WHERE c.deviceId = 'dev-00001';", "indexes used"),
        ("SELECT nope(;", "^"),
        ("SELECT * FROM c LIMIT 1;", "SELECT TOP 1 ..."),
        (".mode json", "telemetry> "),
        ("SELECT TOP 1 c.id FROM c;", "indexes used"),
        (".create things /k", "using it"),
        (".insert {\"id\": \"1\", \"k\": \"a\", \"ctl\": \"bell\\u0007\"}", "201 Created, 5 RU"),
        (".get 1 \"a\"", "200 OK, 1 RU"),
        (".delete 1 \"a\"", "204 No Content"),
        (".delete 1 \"a\"", "404 Not Found"),
        (".use nope", "still using things"),
    ] {
        p.send_line(line).expect("send");
        expect_into(&mut p, &mut seen, last, line);
        std::thread::sleep(Duration::from_millis(150));
    }
    p.send_line(".quit").expect("send");
    p.exp_eof().expect("the REPL exits");
    let text = terminal_text(&seen);
    assert!(text.contains("ms"), "the timing is shown: {text}");
    assert!(text.contains("request charge"), "the metrics are shown: {text}");
    assert!(text.contains("201 Created"), "{text}");
    assert!(!seen.contains("\\u{1b}") && !seen.contains("\\u{9b}"), "an escaped control sequence: {seen:?}");
    // Data's control characters stay escaped (never sent to the terminal raw).
    assert!(text.contains("bell\\u0007") || text.contains("bell\\u{7}"), "{text}");
}

#[test]
fn a_database_with_several_containers_says_which_one_is_in_use() {
    let home = temp_dir("several");
    let dir = home.join("db");
    let out = Command::new(env!("CARGO_BIN_EXE_cosmoql"))
        .args([dir.to_str().unwrap(), "-c", ".create orders /k", "-c", ".create customers /k"])
        .env("COSMOQL_HISTORY", "")
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut p = spawn(&[dir.to_str().unwrap()], &home);
    p.exp_string("using customers (.use NAME switches)").expect("the banner says which container is in use");
    prompt(&mut p, "customers> ", "the prompt names it");
    p.send_line(".use nope").expect("send");
    p.exp_string("no container `nope` (the database has customers, orders); still using customers")
        .expect("a failed .use lists the containers and what is still in use");
    prompt(&mut p, "customers> ", "a prompt");
    p.send_line(".use orders").expect("send");
    prompt(&mut p, "orders> ", "switched");
    p.send_line(".quit").expect("send");
    p.exp_eof().expect("the REPL exits");
}

fn spawn_in(args: &[&str], home: &PathBuf, cwd: &PathBuf) -> PtySession {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cosmoql"));
    cmd.args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env("COSMOQL_HISTORY", home.join("history"))
        .env("TERM", "xterm")
        .env_remove("NO_COLOR");
    spawn_command(cmd, Some(TIMEOUT_MS)).expect("spawn on a pty")
}

#[test]
fn a_mistyped_name_creates_nothing_and_a_new_database_comes_with_its_first_container() {
    let home = temp_dir("newdb");
    std::fs::write(home.join("readings.ndjson"), "{\"id\":\"1\",\"deviceId\":\"d\"}\n").expect("data");
    let mut p = spawn_in(&["improt", "readings.ndjson"], &home, &home);
    p.exp_string("did you mean `import`?").expect("a mistyped command is named");
    p.exp_eof().expect("and nothing else happens");
    assert!(!home.join("improt").exists());
    // A missing directory: said so, and not created by a session that writes nothing.
    let mut p = spawn_in(&["mydbb"], &home, &home);
    p.exp_string("mydbb does not exist yet and is created at the first write").expect("the banner says so");
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line("SELECT VALUE 6 * 7;").expect("send");
    p.exp_string("42").expect("queries without a container run");
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line("SELECT * FROM c;").expect("send");
    p.exp_string("mydbb is a new database, not created yet").expect("a query on no container says why");
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line(".quit").expect("send");
    p.exp_eof().expect("the REPL exits");
    assert!(!home.join("mydbb").exists(), "nothing was written: no directory");
    let mut p = spawn_in(&["mydbb"], &home, &home);
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line(".create t /k").expect("send");
    p.exp_string("created the database directory mydbb").expect("the first write creates it and says so");
    prompt(&mut p, "t> ", "a prompt");
    p.send_line(".quit").expect("send");
    p.exp_eof().expect("the REPL exits");
    assert!(home.join("mydbb").join("CURRENT").exists());
}

#[test]
fn items_are_written_and_read_interactively() {
    let home = temp_dir("items");
    let mut p = spawn(&["--empty"], &home);
    prompt(&mut p, "cosmoql> ", "a prompt");
    p.send_line(".create orders /customerId").expect("send");
    prompt(&mut p, "orders> ", "a prompt");
    p.send_line(".insert {\"id\": \"o1\", \"customerId\": \"c1\", \"total\": 10}").expect("send");
    p.exp_string("201 Created, ").expect("the status and charge");
    p.exp_string(" RU").expect("the charge");
    prompt(&mut p, "orders> ", "a prompt");
    p.send_line(".patch o1 \"c1\" [{\"op\": \"incr\", \"path\": \"/total\", \"value\": 32}]").expect("send");
    p.exp_string("200 OK").expect("patched");
    prompt(&mut p, "orders> ", "a prompt");
    p.send_line(".get o1 \"c1\"").expect("send");
    let shown = p.exp_string("200 OK, 1 RU").expect("a point read of 1 RU");
    assert!(shown.contains("42") && shown.contains("(1 row)"), "the item as a table: {shown}");
    prompt(&mut p, "orders> ", "a prompt");
    p.send_line(".insert {\"id\": \"o1\", \"customerId\": \"c1\"}").expect("send");
    p.exp_string("409 Conflict").expect("the service's status");
    prompt(&mut p, "orders> ", "a prompt");
    p.send_line(".delete o1 \"c1\"").expect("send");
    p.exp_string("204 No Content").expect("deleted");
    prompt(&mut p, "orders> ", "a prompt");
    p.send_line("SELECT VALUE COUNT(1) FROM c;").expect("send");
    p.exp_string("(1 row)").expect("the count");
    p.send_line(".quit").expect("send");
    p.exp_eof().expect("the REPL exits");
}

#[test]
fn a_long_advise_shows_its_progress_on_a_terminal() {
    let home = temp_dir("advise-progress");
    let lines: String = (0..60_000)
        .map(|i| {
            format!(
                "{{\"id\":\"{i}\",\"deviceId\":\"d{}\",\"kind\":\"k{}\",\"zone\":\"z{}\",\"at\":\"2026-11-0{}T{:02}:{:02}:{:02}Z\"}}\n",
                i % 997,
                i % 7,
                i % 61,
                1 + i % 3,
                i % 24,
                i % 60,
                i % 59
            )
        })
        .collect();
    std::fs::write(home.join("many.ndjson"), lines).expect("data");
    let mut p = spawn_in(&["advise", "--data", "many.ndjson", "--top", "1"], &home, &home);
    p.exp_string("measuring candidate keys").expect("a progress bar while the candidates are measured");
    p.exp_string("candidate keys for its 60000 items").expect("then the ranking");
    p.exp_eof().expect("the command ends");
}

#[test]
fn files_get_results_only_and_colours_follow_each_stream() {
    let home = temp_dir("streams");
    let out = home.join("out.txt");
    let once = home.join("once.txt");
    let mut p = spawn(&[], &home);
    prompt(&mut p, "telemetry> ", "a prompt");
    p.send_line(&format!(".output {}", out.display())).expect("send");
    prompt(&mut p, "telemetry> ", "a prompt");
    p.send_line(".metrics on").expect("send");
    prompt(&mut p, "telemetry> ", "a prompt");
    // The results go to the file; the charge and the time (messages) stay on the screen.
    p.send_line("SELECT VALUE 'in-the-file';").expect("send");
    p.exp_string("request charge").expect("the metrics on the screen");
    p.exp_string(" ms").expect("the time on the screen");
    prompt(&mut p, "telemetry> ", "a prompt");
    p.send_line(".output").expect("send");
    prompt(&mut p, "telemetry> ", "a prompt");
    // `.once` is for the next statement that prints results, not the next command.
    p.send_line(&format!(".once {}", once.display())).expect("send");
    prompt(&mut p, "telemetry> ", "a prompt");
    p.send_line(".mode json").expect("send");
    prompt(&mut p, "telemetry> ", "a prompt");
    p.send_line("SELECT VALUE 'once-only';").expect("send");
    p.exp_string("request charge").expect("ran");
    prompt(&mut p, "telemetry> ", "a prompt");
    p.send_line("SELECT VALUE 'back-on-screen';").expect("send");
    p.exp_string("back-on-screen").expect("after .once, the screen");
    prompt(&mut p, "telemetry> ", "a prompt");
    p.send_line(".quit").expect("send");
    p.exp_eof().expect("the REPL exits");
    let file = std::fs::read_to_string(&out).expect("the .output file");
    assert!(file.contains("in-the-file") && !file.contains("request charge") && !file.contains('\u{1b}'), "{file:?}");
    let file = std::fs::read_to_string(&once).expect("the .once file");
    assert!(file.contains("once-only") && !file.contains('\u{1b}'), "{file:?}");

    // TERM=dumb: no colours at all.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cosmoql"));
    cmd.args(["--empty"]).env("HOME", &*home).env("COSMOQL_HISTORY", "").env("TERM", "dumb").env_remove("NO_COLOR");
    let mut p = spawn_command(cmd, Some(TIMEOUT_MS)).expect("spawn on a pty");
    p.exp_string("cosmoql> ").expect("a prompt");
    std::thread::sleep(Duration::from_millis(200));
    p.send_line("SELECT nope(;").expect("send");
    let shown = p.exp_string("cosmoql> ").expect("the error, then a prompt");
    p.send_line(".quit").expect("send");
    p.exp_eof().expect("the REPL exits");
    assert!(shown.contains("error:") && !shown.contains('\u{1b}'), "{shown:?}");

    // A script on a terminal with its standard error in a file: no colour codes in the file.
    let errors = home.join("errors.txt");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cosmoql"));
    cmd.args(["--empty", "-c", ".metrics on", "-c", "SELECT VALUE 1", "-c", "SELECT nope("])
        .env("HOME", &*home)
        .env("COSMOQL_HISTORY", "")
        .env("TERM", "xterm")
        .env_remove("NO_COLOR")
        .stderr(std::fs::File::create(&errors).expect("a file"));
    let mut p = spawn_command(cmd, Some(TIMEOUT_MS)).expect("spawn on a pty");
    p.exp_eof().expect("the script ends");
    let file = std::fs::read_to_string(&errors).expect("standard error");
    assert!(file.contains("request charge") && file.contains("error:") && !file.contains('\u{1b}'), "{file:?}");
}

/// Issue 21, point 15: a container name with a window-title sequence (`ESC ] 0 ; ... BEL`), a
/// property path with one, and data with a right-to-left override and a screen-clearing
/// sequence, in a directory someone else made: the prompt, `.containers`, tables, CSV and TSV
/// on the terminal, JSON and `.advise` show them escaped, never raw. Everything written to the
/// terminal goes through one sanitizer, which keeps only the program's own colours.
#[test]
fn hostile_names_and_data_never_reach_the_terminal_raw() {
    let home = temp_dir("hostile");
    let dir = home.join("db");
    let name = "evil\u{1b}]0;pwned\u{7}\u{202e}";
    let out = Command::new(env!("CARGO_BIN_EXE_cosmoql"))
        .arg(dir.to_str().unwrap())
        .args(["-c", &format!(".create {name} /k")])
        .args(["-c", r#".insert {"id":"1","k":"a","v":"x\u202eyz\u001b[2J","p\u001b]0;t\u0007":1}"#])
        .args(["-c", r#".insert {"id":"2","k":"b","v":"ok","p\u001b]0;t\u0007":2}"#])
        .env("COSMOQL_HISTORY", "")
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut p = spawn(&[dir.to_str().unwrap()], &home);
    let mut seen = String::new();
    let shown = "evil\\u{1b}]0;pwned\\u{7}\\u{202e}";
    expect_into(&mut p, &mut seen, &format!("{shown}> "), "the prompt names the container, escaped");
    std::thread::sleep(Duration::from_millis(200));
    for (line, last) in [
        (".containers", "key /k"),
        ("SELECT c.id, c.v FROM c;", "(2 rows)"),
        (".mode csv", "> "),
        ("SELECT c.id, c.v FROM c;", "ok"),
        (".mode tsv", "> "),
        ("SELECT c.id, c.v FROM c;", "ok"),
        (".mode json", "> "),
        ("SELECT * FROM c WHERE c.id = '1';", "_ts"),
        (".mode table", "> "),
        ("SELECT VALUE c FROM c WHERE c.id = '1';", "(1 row)"),
        (".advise", "> "),
    ] {
        p.send_line(line).expect("send");
        expect_into(&mut p, &mut seen, last, line);
        std::thread::sleep(Duration::from_millis(150));
    }
    p.send_line(".quit").expect("send");
    p.exp_eof().expect("the REPL exits");
    let bytes: Vec<u8> = seen.chars().map(|c| c as u32 as u8).collect();
    let raw = String::from_utf8_lossy(&bytes);
    for hostile in ["\u{1b}]0;", "\u{7}", "\u{202e}", "\u{1b}[2J"] {
        assert!(!raw.contains(hostile), "{hostile:?} reached the terminal raw: {raw:?}");
    }
    let text = terminal_text(&seen);
    assert!(text.contains(shown), "{text}");
    assert!(text.contains("x\\u{202e}yz\\u{1b}[2J"), "the data, escaped: {text}");
}
