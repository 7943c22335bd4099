//! Every `console` block of the README is a transcript: each `$ cosmoql ...` line is run (from the
//! repository root) and its standard output must be the lines that follow, exactly.

use std::path::Path;
use std::process::Command;

/// Splits a shell command line: words, '...' and "..." quoting.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut has = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                has = true;
            }
            (None, c) if c.is_whitespace() => {
                if has || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if has || !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn readme_transcripts_are_true() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
    let mut commands = 0;
    let mut in_console = false;
    let mut current: Option<(String, Vec<String>)> = None;
    let mut transcripts = Vec::new();
    for line in readme.lines() {
        if line.starts_with("```") {
            if in_console {
                transcripts.extend(current.take());
            }
            in_console = line.trim() == "```console";
            continue;
        }
        if !in_console {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ") {
            transcripts.extend(current.take());
            current = Some((cmd.to_string(), Vec::new()));
        } else if let Some((_, out)) = current.as_mut() {
            out.push(line.to_string());
        }
    }
    for (cmd, expected) in transcripts {
        let args = words(&cmd);
        assert_eq!(args[0], "cosmoql", "README console commands run cosmoql: {cmd}");
        let out = Command::new(env!("CARGO_BIN_EXE_cosmoql"))
            .args(&args[1..])
            .current_dir(&root)
            .env("COSMOQL_HISTORY", "")
            .output()
            .expect("cosmoql runs");
        assert!(out.status.success(), "{cmd}: {}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let actual: Vec<&str> = stdout.lines().collect();
        assert_eq!(actual, expected.iter().map(String::as_str).collect::<Vec<_>>(), "README transcript of `{cmd}`");
        commands += 1;
    }
    assert!(commands >= 3, "the README tour has {commands} transcripts");
}
