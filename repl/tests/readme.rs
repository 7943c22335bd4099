//! Every example the README shows runs here, in order, in one scratch folder that holds the
//! repository's `examples`, `benches` and `tests` (what the examples read), with this build's
//! `cosmoql` first on the PATH:
//!
//! - a `console` block is a transcript: each `$ ` line (continued by a trailing `\`) runs in a
//!   shell, and the lines after it are what it prints, standard output and standard error as a
//!   terminal shows them. It must exit 0 unless its transcript shows an `error:`.
//! - in a `console figures` block the figures may differ (times, sizes, counts): every number
//!   compares equal to every number. In any block a line `...` stands for any lines, and `...`
//!   inside a line for any text.
//! - a REPL session (`$ cosmoql` followed by `name> ` lines) is typed on a pseudo-terminal, one
//!   statement after the prompt of the one before, as a user would.
//! - `rust` blocks are doctests (`cosmoql::ReadmeDoctests`); `sh` blocks hold what cannot run
//!   here (building, installing) and may not run `cosmoql`; `toml` and `text` blocks are not
//!   commands.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// One example block.
#[derive(Debug)]
struct Block {
    kind: String,
    /// Its first line in the README (1-based).
    line: usize,
    lines: Vec<String>,
}

fn blocks(readme: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut current: Option<Block> = None;
    for (i, line) in readme.lines().enumerate() {
        if let Some(info) = line.strip_prefix("```") {
            match current.take() {
                Some(block) => out.push(block),
                None => current = Some(Block { kind: info.trim().to_string(), line: i + 2, lines: Vec::new() }),
            }
        } else if let Some(block) = current.as_mut() {
            block.lines.push(line.to_string());
        }
    }
    out
}

/// A transcript's commands: the command (its continuation lines joined) and what it prints.
fn transcripts(block: &Block) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut continued = false;
    for line in &block.lines {
        if continued {
            let (cmd, _) = out.last_mut().expect("a command before its continuation");
            cmd.push('\n');
            cmd.push_str(line);
            continued = line.ends_with('\\');
        } else if let Some(cmd) = line.strip_prefix("$ ") {
            out.push((cmd.to_string(), Vec::new()));
            continued = cmd.ends_with('\\');
        } else if let Some((_, expected)) = out.last_mut() {
            expected.push(line.to_string());
        } else {
            panic!("README line {}: a console block starts with a `$ ` command, not {line:?}", block.line);
        }
    }
    out
}

/// `text` with every number (and every run of hex digits with a digit) as `#`.
fn shape(text: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i].is_ascii_digit()
            || (chars[i] == '-'
                && chars.get(i + 1).is_some_and(char::is_ascii_digit)
                && (i == 0 || !chars[i - 1].is_alphanumeric()));
        if starts && (i == 0 || !chars[i - 1].is_ascii_alphabetic()) {
            i += 1;
            while i < chars.len() && (chars[i].is_ascii_hexdigit() || chars[i] == '.') {
                i += 1;
            }
            out.push('#');
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// Whether `actual` is `expected` where a `...` in it stands for any text.
fn line_matches(expected: &str, actual: &str) -> bool {
    let parts: Vec<&str> = expected.split("...").collect();
    if parts.len() == 1 {
        return expected == actual;
    }
    let Some(mut rest) = actual.strip_prefix(parts[0]) else { return false };
    for (k, part) in parts[1..].iter().enumerate() {
        if k == parts.len() - 2 {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Whether the lines match, `...` lines standing for any lines.
fn lines_match(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first.trim() == "..." => {
            (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..]))
        }
        Some((first, rest)) => {
            actual.split_first().is_some_and(|(a, more)| line_matches(first, a) && lines_match(rest, more))
        }
    }
}

/// `None` when `output` is what the README says, else what differs.
fn compare(block: &Block, cmd: &str, expected: &[String], output: &str) -> Option<String> {
    let figures = block.kind.split_whitespace().any(|w| w == "figures");
    let norm = |s: &str| {
        let s = s.trim_end().to_string();
        if figures {
            shape(&s)
        } else {
            s
        }
    };
    let actual: Vec<String> = output.replace('\r', "").lines().map(norm).collect();
    let mut wanted: Vec<String> = expected.iter().map(|l| norm(l)).collect();
    while wanted.last().is_some_and(|l| l.is_empty()) {
        wanted.pop();
    }
    (!lines_match(&wanted, &actual)).then(|| {
        format!(
            "README line {}: `{cmd}` printed\n{}\n--- where the README says ---\n{}",
            block.line,
            output.replace('\r', ""),
            expected.join("\n")
        )
    })
}

/// The scratch folder: the repository's example inputs, and what the examples write.
fn scratch(root: &Path) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("readme");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    for name in ["examples", "benches", "tests"] {
        std::os::unix::fs::symlink(root.join(name), dir.join(name)).expect("link an input folder");
    }
    dir
}

fn path_with_cosmoql() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_cosmoql")).parent().expect("the binary's folder").to_path_buf();
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

/// Whether a transcript line is typed at the REPL's prompt (`telemetry> SELECT ...`).
fn is_prompt(line: &str) -> bool {
    line.split_once("> ")
        .is_some_and(|(name, _)| !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-'))
}

/// Runs a REPL session on a pseudo-terminal: each statement typed after the prompt that precedes
/// it in the transcript; returns what the terminal showed.
fn repl_session(cmd: &str, expected: &[String], dir: &Path) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cosmoql"));
    command
        .args(cmd.split_whitespace().skip(1))
        .current_dir(dir)
        .env("TERM", "dumb")
        .env("NO_COLOR", "1")
        .env("COSMOQL_HISTORY", "")
        .env("HOME", dir)
        .env("COLUMNS", "120");
    let mut p = rexpect::session::spawn_command(command, Some(60_000)).expect("spawn on a pty");
    let mut seen = String::new();
    let mut lines = expected.iter().peekable();
    while let Some(line) = lines.next() {
        if !is_prompt(line) {
            continue;
        }
        let (prompt, typed) = line.split_once("> ").expect("a prompt");
        let prompt = format!("{prompt}> ");
        seen.push_str(&p.exp_string(&prompt).expect("the prompt"));
        seen.push_str(&prompt);
        std::thread::sleep(Duration::from_millis(100));
        // The terminal echoes what is typed (the session's pty does not).
        p.send_line(typed).expect("type");
        seen.push_str(typed);
        seen.push('\n');
        // A statement continued on lines without a prompt.
        let mut statement = typed.to_string();
        while !statement.trim_end().ends_with(';') && !statement.trim_start().starts_with('.') {
            match lines.peek() {
                Some(next) if !is_prompt(next) && !next.is_empty() => {
                    statement = next.to_string();
                    std::thread::sleep(Duration::from_millis(50));
                    p.send_line(next).expect("type");
                    seen.push_str(next);
                    seen.push('\n');
                    lines.next();
                }
                _ => break,
            }
        }
    }
    seen.push_str(&p.exp_eof().expect("the session ends"));
    // rexpect hands the bytes over one char each.
    let bytes: Vec<u8> = seen.chars().map(|c| c as u32 as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn every_readme_example_does_what_the_readme_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
    let dir = scratch(&root);
    let path = path_with_cosmoql();
    let mut ran = 0;
    let mut failures = Vec::new();
    for block in blocks(&readme) {
        let kind = block.kind.split_whitespace().next().unwrap_or("");
        match kind {
            "console" => {}
            "rust" | "toml" | "text" => continue,
            "sh" => {
                for line in &block.lines {
                    assert!(
                        !line.trim_start().starts_with("cosmoql") && !line.contains("$ cosmoql"),
                        "README line {}: cosmoql examples go in console blocks, where they run: {line}",
                        block.line
                    );
                }
                continue;
            }
            other => panic!("README line {}: a block of kind {other:?} (console, rust, sh, toml, text)", block.line),
        }
        for (cmd, expected) in transcripts(&block) {
            let interactive = cmd.split_whitespace().next() == Some("cosmoql") && expected.iter().any(|l| is_prompt(l));
            let output = if interactive {
                repl_session(&cmd, &expected, &dir)
            } else {
                // Standard error into standard output, in the order they were written.
                let out = Command::new("sh")
                    .arg("-c")
                    .arg(format!("exec 2>&1\n{cmd}\n"))
                    .current_dir(&dir)
                    .env("PATH", &path)
                    .env("COSMOQL_HISTORY", "")
                    .env("HOME", &dir)
                    .env("NO_COLOR", "1")
                    .output()
                    .expect("sh runs");
                let text = String::from_utf8_lossy(&out.stdout).into_owned();
                let fails = expected.iter().any(|l| l.starts_with("error:"));
                assert!(
                    out.status.success() || fails,
                    "README line {}: `{cmd}` failed ({}): {text}",
                    block.line,
                    out.status
                );
                text
            };
            failures.extend(compare(&block, &cmd, &expected, &output));
            ran += 1;
        }
    }
    assert!(failures.is_empty(), "{} of {ran} README examples differ:\n\n{}", failures.len(), failures.join("\n\n"));
    assert!(ran >= 20, "the README runs {ran} examples");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shapes_and_wildcards() {
    assert_eq!(shape("imported 100000 items (0.16 s, 611081 items/s)"), "imported # items (# s, # items/s)");
    assert_eq!(shape("dev-00042 at -1.5e3"), "dev-# at #");
    assert!(line_matches("[{\"n\":10,...},...]", "[{\"n\":10,\"x\":1},{\"n\":2}]"));
    assert!(!line_matches("a...c", "abd"));
    let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(lines_match(&l(&["a", "...", "d"]), &l(&["a", "b", "c", "d"])));
    assert!(lines_match(&l(&["a", "..."]), &l(&["a"])));
    assert!(!lines_match(&l(&["a", "...", "e"]), &l(&["a", "b"])));
}
