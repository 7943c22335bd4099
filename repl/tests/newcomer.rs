//! What a newcomer trips over, without a terminal (the pty tests drive the same interactively):
//! which container a statement runs on, mistyped commands and misplaced options, the exit status
//! of `.import`, writing items from the shell, and hints for habits from other SQL dialects.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cosmoql"))
        .args(args)
        .current_dir(cwd)
        .env("COSMOQL_HISTORY", "")
        .env("HOME", cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh folder for one test, under the target directory's folder for test files.
fn folder(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("newcomer-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("test folder");
    dir
}

#[test]
fn a_database_with_several_containers_makes_a_script_choose_one() {
    let cwd = folder("several");
    let out =
        run_in(&cwd, &["db", "-c", ".create a /k", "-c", ".create b /k", "-c", ".insert {\"id\":\"1\",\"k\":\"x\"}"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Reopened, nothing says which: the statement is refused with the names, never run on `a`.
    let out = run_in(&cwd, &["db", "-c", "SELECT VALUE COUNT(1) FROM c"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("this database has 2 (a, b): choose one with .use NAME (or --use NAME)"), "{err}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    // `--use` or `.use` chooses.
    let out = run_in(&cwd, &["db", "--use", "b", "-c", "SELECT VALUE COUNT(1) FROM c"]);
    assert_eq!(text(&out.stdout).trim(), "[1]", "{}", text(&out.stderr));
    let out = run_in(&cwd, &["db", "-c", ".use a", "-c", "SELECT VALUE COUNT(1) FROM c"]);
    assert_eq!(text(&out.stdout).trim(), "[0]", "{}", text(&out.stderr));
    // A failed `.use` lists what there is and says which container is still current.
    let out = run_in(&cwd, &["db", "--use", "a", "-c", ".use nope"]);
    let err = text(&out.stderr);
    assert!(err.contains("no container `nope` (the database has a, b); still using a"), "{err}");
    let out = run_in(&cwd, &["db", "--use", "nope", "-c", "SELECT 1"]);
    assert!(text(&out.stderr).contains("no container `nope` (the database has a, b)"), "{}", text(&out.stderr));
}

#[test]
fn a_mistyped_command_or_a_missing_directory_creates_nothing() {
    let cwd = folder("typo");
    std::fs::write(cwd.join("readings.ndjson"), "{\"id\":\"1\",\"deviceId\":\"d\"}\n").unwrap();
    let out = run_in(&cwd, &["improt", "readings.ndjson"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown command `improt`: did you mean `import`?"), "{}", text(&out.stderr));
    assert!(!cwd.join("improt").exists(), "no database directory `improt`");
    // A new directory is only created by a write; a run that writes nothing leaves nothing.
    let out = run_in(&cwd, &["mydbb", "-c", "SELECT * FROM c"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("mydbb is a new database, not created yet"), "{err}");
    assert!(!cwd.join("mydbb").exists(), "nothing written, no directory");
    let out = run_in(&cwd, &["mydbb", "-c", "SELECT VALUE 1 + 1"]);
    assert_eq!(text(&out.stdout).trim(), "[2]", "{}", text(&out.stderr));
    assert!(!cwd.join("mydbb").exists(), "a query without a container writes nothing");
    // The first write creates it, and says so.
    let out = run_in(&cwd, &["mydbb", "-c", ".create t /k"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("created the database directory mydbb"), "{}", text(&out.stderr));
    assert!(cwd.join("mydbb").join("CURRENT").exists());
    let out = run_in(&cwd, &["mydbb", "-c", ".containers"]);
    assert!(text(&out.stdout).contains("* t"), "{}", text(&out.stdout));
}

#[test]
fn a_misplaced_option_says_which_commands_take_it() {
    let cwd = folder("options");
    std::fs::write(cwd.join("readings.ndjson"), "{\"id\":\"1\",\"deviceId\":\"d\"}\n").unwrap();
    let out = run_in(&cwd, &["readings.ndjson", "--partition-key", "/deviceId"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(!err.contains("-- --partition-key"), "clap's tip is replaced: {err}");
    assert!(err.contains("--partition-key is not an option of the REPL"), "{err}");
    assert!(err.contains("cosmoql import readings.ndjson --partition-key /deviceId"), "{err}");
    let out = run_in(&cwd, &["advise", "--data", "readings.ndjson", "--pk", "\"d\""]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("--pk is not an option of `cosmoql advise`; it is an option of `cosmoql` query"), "{err}");
    assert!(err.contains("Usage: cosmoql advise"), "{err}");
}

#[test]
fn an_import_that_leaves_lines_out_fails_in_the_repl_as_on_the_command_line() {
    let cwd = folder("import");
    std::fs::write(cwd.join("mixed.ndjson"), "{\"id\":\"1\",\"k\":\"a\"}\nnot json\n{\"id\":\"1\",\"k\":\"a\"}\n")
        .unwrap();
    let out = run_in(&cwd, &["import", "mixed.ndjson", "--partition-key", "/k"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("2 of 3 lines not imported (1 skipped, 1 failed)"), "{}", text(&out.stderr));
    let out = run_in(&cwd, &["--empty", "-c", ".create t /k", "-c", ".import mixed.ndjson"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("mixed.ndjson: 2 of 3 lines not imported (1 skipped, 1 failed)"), "{err}");
    assert!(err.contains("imported 1 item into t"), "what was imported is still said: {err}");
    // All lines in: success.
    std::fs::write(cwd.join("good.ndjson"), "{\"id\":\"1\",\"k\":\"a\"}\n").unwrap();
    let out = run_in(&cwd, &["--empty", "-c", ".create t /k", "-c", ".import good.ndjson"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn items_are_written_and_read_from_the_shell_with_status_and_charge() {
    let cwd = folder("items");
    let script = [
        ".create orders /customerId",
        r#".insert {"id": "o1", "customerId": "c1", "total": 10}"#,
        r#".insert {"id": "o1", "customerId": "c1", "total": 99}"#,
        r#".get o1 "c1""#,
        r#".patch o1 "c1" [{"op": "incr", "path": "/total", "value": 5}, {"op": "set", "path": "/state", "value": "paid"}]"#,
        r#".upsert {"id": "o2", "customerId": "c2", "total": 1}"#,
        r#".replace {"id": "o2", "customerId": "c2", "total": 2}"#,
        ".get o2",
        r#".delete o2 "c2""#,
        r#".get o2 "c2""#,
    ];
    let mut args = vec!["db"];
    for line in &script {
        args.extend(["-c", line]);
    }
    let out = run_in(&cwd, &args);
    assert_eq!(out.status.code(), Some(1), "the 409 and the 404 fail the run");
    let err = text(&out.stderr);
    let statuses: Vec<&str> = err.lines().filter(|l| l.contains(" RU")).collect();
    assert_eq!(statuses.len(), 9, "{err}");
    assert!(statuses[0].starts_with("201 Created, "), "{err}");
    assert!(statuses[1].starts_with("error: 409 Conflict: ") && statuses[1].ends_with("(1 RU)"), "{err}");
    assert_eq!(statuses[2], "200 OK, 1 RU", "a point read of a small item costs 1 RU: {err}");
    assert!(statuses[3].starts_with("200 OK, "), "{err}");
    assert!(statuses[4].starts_with("201 Created, "), "{err}");
    assert!(statuses[5].starts_with("200 OK, "), "{err}");
    assert!(statuses[6].starts_with("200 OK, "), "a lookup by query: {err}");
    assert!(err.contains("found by a query over every partition"), "{err}");
    assert!(statuses[7].starts_with("204 No Content, "), "{err}");
    assert!(statuses[8].starts_with("error: 404 Not Found: "), "{err}");
    let stdout = text(&out.stdout);
    let results: Vec<&str> = stdout.lines().collect();
    assert_eq!(results.len(), 6, "one JSON array per item returned: {stdout}");
    assert!(results[2].contains(r#""total":15,"state":"paid""#), "{stdout}");
    assert!(results[4].contains(r#""total":2"#), "{stdout}");
    // The same as one-shot commands on the directory.
    let out = run_in(&cwd, &["item", "get", "o1", "\"c1\"", "--db", "db"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with(r#"{"id":"o1","customerId":"c1","total":15,"#), "{}", text(&out.stdout));
    assert_eq!(text(&out.stderr).trim(), "200 OK, 1 RU");
    let out = run_in(&cwd, &["item", "--db", "db", "insert", r#"{"id": "o3", "customerId": "c3"}"#]);
    assert!(text(&out.stderr).starts_with("201 Created"), "{}", text(&out.stderr));
    let out = run_in(&cwd, &["item", "--db", "db", "delete", "o3", "\"c3\""]);
    assert!(text(&out.stderr).starts_with("204 No Content"), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let out = run_in(&cwd, &["item", "--db", "db", "delete", "o3", "\"c3\""]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("404 Not Found"), "{}", text(&out.stderr));
    let out = run_in(&cwd, &["item", "--db", "db", "delete", "o3", "c3"]);
    assert!(text(&out.stderr).contains("a string is quoted: \"c3\""), "{}", text(&out.stderr));
    let out = run_in(&cwd, &["--db", "db"]);
    assert_eq!(out.status.code(), Some(2), "--db is not the REPL's");
}

#[test]
fn habits_from_other_dialects_get_the_cosmos_form() {
    let cwd = folder("hints");
    let hint = |sql: &str| text(&run_in(&cwd, &["-c", sql]).stderr);
    let err = hint("SELECT * FROM c LIMIT 3");
    assert!(err.contains("Cosmos DB takes LIMIT only after OFFSET: write OFFSET 0 LIMIT 3, or SELECT TOP 3"), "{err}");
    let err = hint("SELECT COUNT(*) FROM c");
    assert!(err.contains("Cosmos DB counts with COUNT(1)"), "{err}");
    let err = hint("INSERT INTO c VALUES (1)");
    assert!(err.contains("there is no INSERT"), "{err}");
    assert!(err.contains("in this shell, .insert JSON"), "{err}");
    let err = hint("UPDATE c SET c.x = 1");
    assert!(err.contains(".patch ID PK OPERATIONS"), "{err}");
    let err = hint("DELETE FROM c WHERE c.id = '1'");
    assert!(err.contains(".delete ID PK"), "{err}");
    // Cosmos's alias rule: FROM names an alias; the query runs on the current container.
    let out = run_in(&cwd, &["-c", "SELECT VALUE COUNT(1) FROM families"]);
    assert_eq!(text(&out.stdout).trim(), "[100000]", "it ran, on telemetry");
    let err = text(&out.stderr);
    assert!(err.contains("note: this ran on telemetry: the name after FROM is an alias"), "{err}");
    assert!(err.contains(".use families"), "{err}");
    let out = run_in(&cwd, &["-c", "SELECT VALUE COUNT(1) FROM c"]);
    assert!(out.stderr.is_empty(), "no note for an ordinary alias: {}", text(&out.stderr));
}

#[test]
fn advise_plans_for_ten_partitions_and_lists_only_its_own_flags() {
    let cwd = folder("advise");
    let help = text(&run_in(&cwd, &["advise", "--help"]).stdout);
    for own in ["--for-partitions", "--workload", "--what-if", "--top", "--data", "--db"] {
        assert!(help.contains(own), "advise --help lists {own}: {help}");
    }
    for query_only in ["--param", "--pk", "--max-dop", "--max-buffered", "--page-size", "--memory-budget"] {
        assert!(!help.contains(query_only), "advise --help lists the query flag {query_only}: {help}");
    }
    let skew = text(&run_in(&cwd, &["skew", "--help"]).stdout);
    assert!(!skew.contains("--max-dop") && !skew.contains("--param"), "{skew}");
    // A small file lands on one partition, where every key would spread perfectly: the ranking
    // plans for 10 and says how to plan for another count.
    let lines: String = (0..300)
        .map(|i| format!("{{\"id\":\"{i}\",\"deviceId\":\"d{}\",\"kind\":\"k{}\"}}\n", i % 50, i % 3))
        .collect();
    std::fs::write(cwd.join("small.ndjson"), lines).unwrap();
    let out = run_in(&cwd, &["advise", "--data", "small.ndjson", "--top", "2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(
        report.starts_with(
            "candidate keys for its 300 items over 10 physical partitions (it has 1; --for-partitions P plans for another count)"
        ),
        "{report}"
    );
    assert!(out.stderr.is_empty(), "no progress bar without a terminal: {}", text(&out.stderr));
}

#[test]
fn a_reopened_demo_database_says_what_it_uses_and_names_what_it_has() {
    let cwd = folder("demo-again");
    let out = run_in(&cwd, &["d", "--demo", "-c", ".containers"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // `--demo` on a database that has its containers loads nothing, says so, and starts in the
    // demo's container as the first run did; without it a script must choose.
    let out = run_in(&cwd, &["d", "--demo", "-c", "SELECT VALUE COUNT(1) FROM c"]);
    assert_eq!(text(&out.stdout).trim(), "[100000]", "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("d already holds containers: --demo loaded nothing"), "{}", text(&out.stderr));
    let out = run_in(&cwd, &["d", "-c", "SELECT VALUE COUNT(1) FROM c"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("choose one with .use NAME"), "{}", text(&out.stderr));
    let out = run_in(&cwd, &["query", "--db", "d", "--use", "tele", "SELECT 1"]);
    assert!(
        text(&out.stderr).contains("no container `tele` in d (it has families, telemetry)"),
        "{}",
        text(&out.stderr)
    );
    // FROM names an alias: the one-shot query says which container it ran on, too.
    let out = run_in(&cwd, &["query", "--db", "d", "--use", "families", "SELECT VALUE COUNT(1) FROM telemetry"]);
    assert_eq!(text(&out.stdout).trim(), "[6]");
    assert!(text(&out.stderr).contains("note: this ran on families"), "{}", text(&out.stderr));
    let out = run_in(&cwd, &["query", "--db", "nosuchdir", "SELECT 1"]);
    assert!(text(&out.stderr).contains("nosuchdir does not exist"), "{}", text(&out.stderr));
}

#[test]
fn command_typos_are_caught_and_ordinary_names_are_not() {
    let cwd = folder("typos");
    for name in ["temp", "ask", "exp"] {
        let out = run_in(&cwd, &[name, "-c", "SELECT VALUE 1"]);
        assert!(out.status.success(), "`{name}` is a fine database name: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(&format!("{name} does not exist yet")), "{}", text(&out.stderr));
        assert!(!cwd.join(name).exists());
    }
    let out = run_in(&cwd, &["skwe", "--db", "d"]);
    assert!(text(&out.stderr).contains("unknown command `skwe`: did you mean `skew`?"), "{}", text(&out.stderr));
    let out = run_in(&cwd, &["--db", "dd"]);
    assert!(text(&out.stderr).contains("to open the database in the REPL: cosmoql dd"), "{}", text(&out.stderr));
    // A container name the store refuses leaves no new directory behind.
    let out = run_in(&cwd, &["fresh", "-c", ".create bad/name /k"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("invalid container id"), "{}", text(&out.stderr));
    assert!(!cwd.join("fresh").exists());
}

#[test]
fn any_item_can_be_reached_and_a_stale_etag_is_refused() {
    let cwd = folder("item-keys");
    let script = [
        ".create n /n",
        r#".insert {"id": "no-key"}"#,
        r#".get no-key undefined"#,
        r#".patch no-key undefined [{"op": "set", "path": "/seen", "value": true}]"#,
        r#".delete no-key undefined"#,
        ".create flat",
        r#".insert {"id": "1"}"#,
        r#".patch 1 [{"op": "incr", "path": "/n", "value": 2}]"#,
        ".delete 1",
        ".create neg /n",
        r#".insert {"id": "-a", "n": -5}"#,
    ];
    let mut args = vec!["db"];
    for line in &script {
        args.extend(["-c", line]);
    }
    let out = run_in(&cwd, &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert_eq!(err.matches("204 No Content").count(), 2, "{err}");
    // One-shot: a negative key and an id starting with `-` are values, not options.
    let out = run_in(&cwd, &["item", "get", "-a", "-5", "--db", "db", "--use", "neg"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let etag =
        text(&out.stdout).split("\"_etag\":\"").nth(1).unwrap().split("\",").next().unwrap().replace("\\\"", "\"");
    let replace = |etag: &str| {
        run_in(
            &cwd,
            &["item", "replace", "--db", "db", "--use", "neg", r#"{"id": "-a", "n": -5, "v": 2}"#, "--if-match", etag],
        )
    };
    let out = replace("\"not-it\"");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("412 Precondition Failed"), "{}", text(&out.stderr));
    let out = replace(&etag);
    assert!(text(&out.stderr).starts_with("200 OK"), "{etag}: {}", text(&out.stderr));
    let out = run_in(&cwd, &["item", "delete", "x", "--db", "db", "--use", "n"]);
    assert!(
        text(&out.stderr).contains("the container is keyed on /n: give the item's partition key"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn more_habits_get_their_cosmos_form() {
    let cwd = folder("more-hints");
    let hint = |sql: &str| text(&run_in(&cwd, &["-c", sql]).stderr);
    let err = hint("SELECT TOP 1 c.id FROM families");
    assert!(err.contains("Identifier 'c' could not be resolved."), "the service's message stays: {err}");
    assert!(err.contains("hint: the name after FROM is what the query calls each item, here `families`"), "{err}");
    let err = hint("SELECT * FROM c ORDER BY c.id LIMIT 1 OFFSET 2");
    assert!(err.contains("Cosmos DB takes OFFSET before LIMIT: write OFFSET 2 LIMIT 1"), "{err}");
    let err = hint("SELECT * FROM c WHERE c.a IS NULL");
    assert!(err.contains("write IS_NULL(c.a)"), "{err}");
    let err = hint("SELECT * FROM c WHERE c.a == 1");
    assert!(err.contains("compares with a single ="), "{err}");
}

#[test]
fn advise_refuses_what_it_cannot_plan_for() {
    let cwd = folder("advise-args");
    std::fs::write(cwd.join("few.ndjson"), "{\"id\":\"1\",\"k\":\"a\",\"at\":\"2026-11-01T00:00:00Z\"}\n").unwrap();
    for (args, says) in [
        (vec!["--what-if", "0"], "--what-if takes the provisioned throughput in RU/s, a number more than 0, not 0"),
        (vec!["--what-if", "-5"], "more than 0, not -5"),
        (vec!["--what-if", "NaN"], "more than 0, not NaN"),
        (vec!["--for-partitions", "0"], "--for-partitions must be from 1 to 10000, not 0"),
        (vec!["--for-partitions", "99999999999"], "--for-partitions must be from 1 to 10000"),
        (vec!["--top", "0"], "--top"),
    ] {
        let mut all = vec!["advise", "--data", "few.ndjson"];
        all.extend(args.iter().copied());
        let out = run_in(&cwd, &all);
        assert!(!out.status.success(), "{args:?}");
        assert!(text(&out.stderr).contains(says), "{args:?}: {}", text(&out.stderr));
    }
    std::fs::write(cwd.join("w.json"), r#"[{"query": "SELECT * FROM c WHERE c.k = @k", "rate": 1}]"#).unwrap();
    let out = run_in(&cwd, &["advise", "--data", "few.ndjson", "--workload", "w.json"]);
    let err = text(&out.stderr);
    assert!(err.contains("w.json: the query `SELECT * FROM c WHERE c.k = @k`"), "the workload is named: {err}");
    std::fs::write(cwd.join("w.json"), r#"[{"query": "SELECT 1", "rate": 1e300}]"#).unwrap();
    let out = run_in(&cwd, &["advise", "--data", "few.ndjson", "--workload", "w.json"]);
    assert!(
        text(&out.stderr).contains("\"rate\" must be a number of operations per second from 0 to"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn keys_with_missing_levels_and_keyless_patches_and_options_after_the_double_dash() {
    let cwd = folder("partial-keys");
    let out = run_in(&cwd, &["db", "-c", ".create h /t /u", "-c", r#".insert {"id": "x", "t": "T"}"#]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run_in(&cwd, &["item", "delete", "x", r#"["T", undefined]"#, "--db", "db"]);
    assert!(text(&out.stderr).starts_with("204 No Content"), "{}", text(&out.stderr));
    let out = run_in(&cwd, &["db", "-c", ".create flat", "-c", r#".insert {"id": "c"}"#]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run_in(
        &cwd,
        &["item", "patch", "c", r#"[{"op": "set", "path": "/z", "value": 1}]"#, "--db", "db", "--use", "flat"],
    );
    assert!(text(&out.stderr).starts_with("200 OK"), "{}", text(&out.stderr));
    let out = run_in(&cwd, &["item", "get", "--", "-x", "-5", "--db", "db"]);
    assert!(text(&out.stderr).contains("--db comes after `--`"), "{}", text(&out.stderr));
    let out = run_in(&cwd, &["item", "upsert", "--if-match", "x", "{}"]);
    assert!(
        text(&out.stderr).contains(
            "--if-match is not an option of `cosmoql item upsert`; it is an option of `cosmoql item replace`"
        ),
        "{}",
        text(&out.stderr)
    );
    let out = run_in(&cwd, &["--empty", "-c", ".mode tabel", "-c", ".set pk dev-1"]);
    let err = text(&out.stderr);
    assert!(err.contains("unknown mode `tabel` (did you mean table?)"), "{err}");
    assert!(err.contains("a string is quoted: .set pk \"dev-1\""), "{err}");
    let err = text(&run_in(&cwd, &["-c", "SELECT * FROM c WHERE c.a IS NOT NULL"]).stderr);
    assert!(err.contains("write c.a != null"), "{err}");
}
