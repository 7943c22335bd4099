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
fn no_arguments_prints_help_and_fails() {
    let out = cosmoql(&[]);
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
        "line 3, column 12: expected an expression after the operator, found end of input\nWHERE c.a = \n           ^\n"
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
        assert!(text(&out.stderr).starts_with("line 1, column "), "{}", text(&out.stderr));
    }
}
