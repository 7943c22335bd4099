//! `cosmoql DIR`: a database directory in the REPL and the one-shot commands (the sqlite3 and
//! duckdb convention: without a path, in memory; with one, persistent).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cosmoql(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cosmoql")).args(args).output().expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn temp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-db-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn what_the_repl_writes_to_a_directory_is_there_next_time() {
    let dir = temp("repl");
    let data = dir.with_extension("ndjson");
    std::fs::write(&data, "{\"id\":\"1\",\"kind\":\"a\",\"n\":5}\n{\"id\":\"2\",\"kind\":\"b\",\"n\":7}\n").unwrap();
    let out = cosmoql(&[arg(&dir), "-c", ".create things /kind", "-c", &format!(".import {}", arg(&data))]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = cosmoql(&[arg(&dir), "-c", "SELECT VALUE SUM(c.n) FROM c"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "[12]");
    // Importing again: the items are there (409s, exit 1, and how to finish); --upsert replaces them.
    let out = cosmoql(&[arg(&dir), "-c", &format!(".import {}", arg(&data))]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains(".import --upsert FILE replaces them"), "{}", text(&out.stderr));
    let out = cosmoql(&[
        arg(&dir),
        "-c",
        &format!(".import --upsert \"{}\"", arg(&data)),
        "-c",
        "SELECT VALUE SUM(c.n) FROM c",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("imported 2 items (2 replaced)"), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "[12]");
    // A file of statements after the directory.
    let script = dir.with_extension("sql");
    std::fs::write(&script, "SELECT VALUE c.id FROM c WHERE c.kind = 'b';\n").unwrap();
    let out = cosmoql(&[arg(&dir), arg(&script)]);
    assert_eq!(text(&out.stdout).trim(), "[\"2\"]", "{}", text(&out.stderr));
    // Without the directory: the in-memory demo, untouched by any of it.
    let out = cosmoql(&["-c", ".containers"]);
    assert!(text(&out.stderr).contains("telemetry") || text(&out.stdout).contains("telemetry"));
}

#[test]
fn import_into_a_directory_then_query_it() {
    let dir = temp("import");
    let data = dir.with_extension("ndjson");
    std::fs::write(&data, "{\"id\":\"1\",\"deviceId\":\"d1\",\"t\":20}\n{\"id\":\"2\",\"deviceId\":\"d2\",\"t\":30}\n")
        .unwrap();
    let out = cosmoql(&["import", arg(&data), "--db", arg(&dir), "--into", "readings", "--partition-key", "/deviceId"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = cosmoql(&[arg(&dir), "-c", ".use readings", "-c", "SELECT VALUE AVG(c.t) FROM c"]);
    assert_eq!(text(&out.stdout).trim(), "[25]", "{}", text(&out.stderr));
    // Another key for an existing container is refused.
    let out = cosmoql(&["import", arg(&data), "--db", arg(&dir), "--into", "readings", "--partition-key", "/id"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("exists with another partition key (/deviceId)"), "{}", text(&out.stderr));
}

#[test]
fn a_damaged_log_is_refused_then_recovered() {
    let dir = temp("recover");
    let out = cosmoql(&[arg(&dir), "-c", ".create a /k", "-c", ".create b /k"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = cosmoql(&["recover", arg(&dir)]);
    assert!(text(&out.stdout).contains("the log is sound"), "{}", text(&out.stdout));
    let log = dir.join("wal-000001.log");
    let mut bytes = std::fs::read(&log).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55;
    std::fs::write(&log, &bytes).unwrap();
    let out = cosmoql(&[arg(&dir), "-c", ".containers"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("wal-000001.log: damaged log record at byte offset"), "{err}");
    assert!(err.contains(&format!("cosmoql recover {}", dir.display())), "{err}");
    let out = cosmoql(&["recover", arg(&dir)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("set aside in"), "{}", text(&out.stdout));
    let out = cosmoql(&[arg(&dir), "-c", ".containers"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn a_directory_open_elsewhere_is_refused() {
    let dir = temp("locked");
    let _held = cosmoql::Store::open(&dir, cosmoql::DurableOptions::default()).unwrap();
    let out = cosmoql(&[arg(&dir), "-c", "SELECT VALUE 1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("is open in another process"), "{}", text(&out.stderr));
}

#[test]
fn a_mistyped_command_is_not_taken_for_a_new_database() {
    let cwd = temp("typo");
    std::fs::create_dir_all(&cwd).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cosmoql")).arg("querry").current_dir(&cwd).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown command `querry`: did you mean `query`?"), "{}", text(&out.stderr));
    assert!(!cwd.join("querry").exists(), "no directory was created");
    // A path is taken as one (created by its first write).
    let out = Command::new(env!("CARGO_BIN_EXE_cosmoql"))
        .args(["./querry", "-c", ".create t /k"])
        .current_dir(&cwd)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(cwd.join("querry").join("CURRENT").exists());
}

#[test]
fn the_one_shot_commands_run_on_a_database_directory() {
    let dir = temp("oneshot");
    let data = dir.with_extension("ndjson");
    std::fs::write(&data, "{\"id\":\"1\",\"k\":\"a\",\"n\":1}\n{\"id\":\"2\",\"k\":\"b\",\"n\":2}\n").unwrap();
    let out = cosmoql(&["import", arg(&data), "--db", arg(&dir), "--into", "things", "--partition-key", "/k"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = cosmoql(&["query", "--db", arg(&dir), "SELECT VALUE SUM(c.n) FROM c"]);
    assert_eq!(text(&out.stdout).trim(), "[3]", "{}", text(&out.stderr));
    let out = cosmoql(&["explain", "--db", arg(&dir), "--use", "things", "SELECT * FROM c WHERE c.k = 'a'"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = cosmoql(&["changes", "--db", arg(&dir)]);
    assert_eq!(text(&out.stdout).lines().count(), 2, "{}", text(&out.stderr));
    let out = cosmoql(&["query", "--db", arg(&dir), "--use", "nope", "SELECT 1"]);
    assert!(text(&out.stderr).contains("no container `nope`"), "{}", text(&out.stderr));
    let out = cosmoql(&["query", "--db", arg(&dir), "--data", arg(&data), "SELECT 1"]);
    assert!(!out.status.success(), "--db and --data do not go together");
}

#[test]
fn a_directory_that_lost_its_current_file_is_refused_then_recovered() {
    let dir = temp("no-current");
    let out = cosmoql(&[arg(&dir), "-c", ".create a /k", "-c", ".insert {\"id\": \"1\", \"k\": \"x\"}"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::remove_file(dir.join("CURRENT")).unwrap();
    let out = cosmoql(&[arg(&dir), "-c", "SELECT VALUE COUNT(1) FROM c"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("but no CURRENT file"), "{}", text(&out.stderr));
    assert!(dir.join("wal-000001.log").exists(), "the log is still there");
    let out = cosmoql(&["recover", arg(&dir)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("CURRENT was missing: it now names wal-000001.log"), "{}", text(&out.stdout));
    let out = cosmoql(&[arg(&dir), "-c", "SELECT VALUE COUNT(1) FROM c"]);
    assert_eq!(text(&out.stdout).trim(), "[1]", "{}", text(&out.stderr));
}

/// `cosmoql import --db` killed part-way left some of the file (not always a prefix) and running
/// it again failed with 409s. It keeps what it wrote, says how to finish, and `--upsert` does:
/// every item of the file once, as the file has it.
#[test]
fn an_import_killed_part_way_is_finished_with_upsert() {
    let dir = temp("killed-import");
    let data = dir.with_extension("ndjson");
    let n = 100_000u64;
    let mut lines = String::new();
    for i in 0..n {
        lines.push_str(&format!("{{\"id\":\"{i}\",\"pk\":\"k{}\",\"n\":{i},\"pad\":\"{:040}\"}}\n", i % 97, i));
    }
    std::fs::write(&data, lines).unwrap();
    let count = |dir: &Path| -> Option<u64> {
        let out = cosmoql(&["query", "--db", arg(dir), "SELECT VALUE COUNT(1) FROM c"]);
        out.status.success().then(|| text(&out.stdout).trim().trim_matches(|c| c == '[' || c == ']').parse().unwrap())
    };
    // Killed after a while; longer each time until the kill lands part-way (a kill before the
    // container was created leaves an empty database, one after the end the whole file).
    let mut before = 0;
    for delay in [50, 100, 200, 400, 800, 1600, 3200, 6400] {
        let _ = std::fs::remove_dir_all(&dir);
        let mut child = Command::new(env!("CARGO_BIN_EXE_cosmoql"))
            .args(["import", arg(&data), "--db", arg(&dir), "--into", "c", "--partition-key", "/pk"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay));
        let _ = child.kill();
        let _ = child.wait();
        match count(&dir) {
            Some(c) if c > 0 => {
                eprintln!("killed after {delay} ms: {c} of {n} items in");
                before = c;
                if c < n {
                    break;
                }
            }
            _ => {}
        }
    }
    assert!(before > 0 && before <= n, "{before}");
    let count = |dir: &Path| count(dir).expect("the container is there");
    let again = cosmoql(&["import", arg(&data), "--db", arg(&dir), "--into", "c"]);
    {
        assert_eq!(again.status.code(), Some(1));
        let stderr = text(&again.stderr);
        assert!(stderr.contains(&format!("{before} of them exist already")), "{stderr}");
        assert!(stderr.contains("--upsert replaces them"), "{stderr}");
    }
    let after_again = count(&dir);
    assert_eq!(after_again, n, "the second import adds what the first did not");
    let out = cosmoql(&["import", arg(&data), "--db", arg(&dir), "--into", "c", "--upsert"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with(&format!("imported {n} items ({n} replaced)")), "{}", text(&out.stdout));
    assert_eq!(count(&dir), n);
    let out = cosmoql(&["query", "--db", arg(&dir), "SELECT VALUE SUM(c.n) FROM c WHERE c.pad = c.pad"]);
    assert_eq!(text(&out.stdout).trim(), format!("[{}]", n * (n - 1) / 2), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&data);
}

/// Two processes creating the same database at once: one has it, the other is told it is open
/// in another process (never "not a cosmoql database directory", a race of the check for
/// foreign files with the first one's files appearing).
#[test]
fn racing_openers_are_told_the_database_is_open_elsewhere() {
    let data = temp("race").with_extension("ndjson");
    std::fs::write(&data, (0..200).map(|i| format!("{{\"id\":\"{i}\",\"pk\":\"k{}\"}}\n", i % 7)).collect::<String>())
        .unwrap();
    for round in 0..12 {
        let dir = temp(&format!("race-{round}"));
        let spawn = || {
            Command::new(env!("CARGO_BIN_EXE_cosmoql"))
                .args(["import", arg(&data), "--db", arg(&dir), "--into", "c", "--partition-key", "/pk"])
                .output()
        };
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(spawn);
            let b = s.spawn(spawn);
            (a.join().unwrap().unwrap(), b.join().unwrap().unwrap())
        });
        for out in [&a, &b] {
            if !out.status.success() {
                let stderr = text(&out.stderr);
                assert!(stderr.contains("is open in another process"), "round {round}: {stderr}");
            }
        }
        assert!(a.status.success() || b.status.success(), "round {round}: neither opened it");
        let _ = std::fs::remove_dir_all(&dir);
    }
    let _ = std::fs::remove_file(&data);
}

/// Past the file size limit (`ulimit -f`), SIGXFSZ ended the process with no message. The write
/// fails instead and says why; what fits is taken (the log allocates only what fits, so a limit
/// under its 4 MiB chunk still takes a small import).
#[test]
fn a_file_size_limit_is_an_error_not_a_signal() {
    let dir = temp("fsize");
    let data = dir.with_extension("ndjson");
    std::fs::write(&data, (0..20).map(|i| format!("{{\"id\":\"{i}\",\"pk\":\"k{i}\"}}\n")).collect::<String>())
        .unwrap();
    // `ulimit -f` counts blocks of 512 or 1024 bytes depending on the shell: either way, 1000
    // is under a 4 MiB chunk and over 20 small items, and 100 under 200 items of 1 KB.
    let limited = |blocks: u32, data: &Path, dir: &Path| {
        Command::new("sh")
            .args(["-c", &format!("ulimit -f {blocks} && exec \"$0\" \"$@\""), env!("CARGO_BIN_EXE_cosmoql")])
            .args(["import", arg(data), "--db", arg(dir), "--into", "c", "--partition-key", "/pk"])
            .output()
            .unwrap()
    };
    let out = limited(1000, &data, &dir);
    assert!(out.status.success(), "{:?} {}", out.status, text(&out.stderr));
    assert!(text(&out.stdout).starts_with("imported 20 items"), "{}", text(&out.stdout));
    let small = temp("fsize-small");
    let big = small.with_extension("ndjson");
    std::fs::write(
        &big,
        (0..200).map(|i| format!("{{\"id\":\"{i}\",\"pk\":\"k{i}\",\"pad\":\"{:01000}\"}}\n", i)).collect::<String>(),
    )
    .unwrap();
    let out = limited(100, &big, &small);
    assert_eq!(out.status.code(), Some(1), "killed by a signal? {:?}", out.status);
    assert!(text(&out.stderr).contains("File too large"), "{}", text(&out.stderr));
    for d in [&dir, &small] {
        let _ = std::fs::remove_dir_all(d);
    }
    let _ = std::fs::remove_file(&data);
    let _ = std::fs::remove_file(&big);
}
