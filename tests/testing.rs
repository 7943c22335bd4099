//! `cosmoql::testing`: the suite runner (pass, fail with a diff, bless, error expectations,
//! options, the summary line), the sample suite in `examples/suite`, and the insta helper.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use cosmoql::testing::{diff, run_suite, Error, Fixture, Report, RunOptions, Status};
use serde_json::json;

fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/suite")
}

/// A fresh empty folder under the target directory's folder for test files (`cargo clean`
/// removes them; the suites are kept after a run for a look at what failed).
fn temp_dir(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "cosmoql-testing-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A suite folder with the sample fixtures and the given `.sql` files.
fn suite(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = temp_dir(name);
    for f in ["fixtures.json", "people.ndjson"] {
        std::fs::copy(example_dir().join(f), dir.join(f)).unwrap();
    }
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

fn run(dir: &Path) -> Report {
    run_suite(dir, &RunOptions::default()).unwrap()
}

fn details(report: &Report, name: &str) -> String {
    report.cases.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no case {name}")).details.clone()
}

fn status(report: &Report, name: &str) -> Status {
    report.cases.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no case {name}")).status
}

#[test]
fn the_sample_suite_passes() {
    let report = run(&example_dir());
    print!("{}", report.render());
    assert!(report.is_ok(), "{}", report.render());
    assert_eq!(report.cases.len(), 9);
    assert_eq!(report.summary(), "9 passed, 0 failed");
    assert!(report.render().ends_with("\n9 passed, 0 failed\n") || report.render() == "9 passed, 0 failed\n");
}

#[test]
fn a_mismatch_fails_with_a_line_diff() {
    let dir = suite(
        "mismatch",
        &[(
            "a.sql",
            "-- @name right\nSELECT VALUE p.name FROM p WHERE p.city = 'Lisbon' ORDER BY p.name\n-- @expect\n[\"Ana\", \"Rui\"]\n\n\
             -- @name wrong\nSELECT p.name, p.age FROM p WHERE p.city = 'Lisbon' ORDER BY p.name\n-- @expect\n\
             [{\"name\": \"Ana\", \"age\": 34}, {\"name\": \"Rui\", \"age\": 18}]\n",
        )],
    );
    let report = run(&dir);
    assert_eq!((report.passed(), report.failed()), (1, 1));
    assert!(!report.is_ok());
    let d = details(&report, "wrong");
    let expected_diff =
        "expected (-) vs actual (+):\n    },\n    {\n      \"name\": \"Rui\",\n-     \"age\": 18\n+     \"age\": 17\n    }\n  ]\n";
    assert!(d.contains(expected_diff), "{d}");
    assert!(d.contains("query:\n  SELECT p.name, p.age FROM p WHERE p.city = 'Lisbon' ORDER BY p.name\n"), "{d}");
    assert!(d.contains("expected (-) vs actual (+):"), "{d}");
    let rendered = report.render();
    assert!(rendered.contains(&format!("FAIL {}:6: wrong\n", dir.join("a.sql").display())), "{rendered}");
    assert_eq!(rendered.lines().last(), Some("1 passed, 1 failed"));
    // The file is untouched without --bless.
    assert!(std::fs::read_to_string(dir.join("a.sql")).unwrap().contains("\"age\": 18"));
}

#[test]
fn diff_marks_removed_and_added_lines() {
    assert_eq!(diff("a\nb\nc\n", "a\nB\nc\n"), "  a\n- b\n+ B\n  c\n");
    assert_eq!(diff("same", "same\n"), "");
    // Far-apart changes are separate hunks with three lines of context.
    let e: String = (1..=20).map(|i| format!("{i}\n")).collect();
    let a: String = (1..=20)
        .map(|i| match i {
            2 => "two\n".to_string(),
            19 => "nineteen\n".to_string(),
            i => format!("{i}\n"),
        })
        .collect();
    let d = diff(&e, &a);
    assert!(d.contains("  ...\n"), "{d}");
    assert!(d.starts_with("  1\n- 2\n+ two\n  3\n"), "{d}");
    assert!(!d.contains("  10\n"), "{d}");
}

#[test]
fn bless_rewrites_failing_expectations_in_place() {
    let dir = temp_dir("bless");
    for entry in std::fs::read_dir(example_dir()).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
    let original = std::fs::read_to_string(dir.join("people.sql")).unwrap();
    let broken = original
        .replace("[\"Leo\", \"Ana\", \"Mia\"]", "[\"Leo\",\n \"nobody\"]\n-- a comment in the old expectation")
        .replace("-- @error syntax line 1, column 33", "-- @error bind something else")
        + "\n-- @name new case, no expectation yet\n-- @param @c = \"Porto\"\nSELECT * FROM p WHERE p.city = @c\n\n\n\
           -- @name now an error\nSELECT VALUE p.name FROM p WHERE p.nope(1)\n-- @expect\n[]\n\n\
           -- @name a long result\nSELECT p.id, p.name, p.city FROM p ORDER BY p.id\n-- @expect\n[]\n";
    std::fs::write(dir.join("people.sql"), &broken).unwrap();

    let before = run(&dir);
    assert_eq!(before.failed(), 5, "{}", before.render());

    let blessed = run_suite(&dir, &RunOptions { bless: true }).unwrap();
    assert_eq!(blessed.failed(), 0, "{}", blessed.render());
    assert_eq!(blessed.blessed(), 5);
    assert_eq!(blessed.passed(), 12);
    assert_eq!(blessed.blessed_files, vec![dir.join("people.sql")]);
    let rendered = blessed.render();
    assert!(rendered.contains("5 case(s) blessed in 1 file(s)\n"), "{rendered}");
    assert!(rendered.ends_with("12 passed, 0 failed\n"), "{rendered}");

    let text = std::fs::read_to_string(dir.join("people.sql")).unwrap();
    let expected = original
        .replace("[\"Leo\", \"Ana\", \"Mia\"]\n", "[\"Leo\", \"Ana\", \"Mia\"]\n-- a comment in the old expectation\n")
        .replace(
            "-- @error syntax line 1, column 33",
            "-- @error syntax line 1, column 33: Syntax error, incorrect syntax near 'p'.",
        )
        + "\n-- @name new case, no expectation yet\n-- @param @c = \"Porto\"\nSELECT * FROM p WHERE p.city = @c\n\
           -- @expect\n[\n  {\"id\": \"3\", \"name\": \"Mia\", \"city\": \"Porto\", \"age\": 25},\n  {\"id\": \"5\", \"name\": \"Eva\", \"city\": \"Porto\"}\n]\n\n\n\
           -- @name now an error\nSELECT VALUE p.name FROM p WHERE p.nope(1)\n\
           -- @error syntax line 1, column 40: Syntax error, incorrect syntax near '('.\n\n\
           -- @name a long result\nSELECT p.id, p.name, p.city FROM p ORDER BY p.id\n-- @expect\n[\n\
           \x20 {\"id\": \"1\", \"name\": \"Ana\", \"city\": \"Lisbon\"},\n\
           \x20 {\"id\": \"2\", \"name\": \"Rui\", \"city\": \"Lisbon\"},\n\
           \x20 {\"id\": \"3\", \"name\": \"Mia\", \"city\": \"Porto\"},\n\
           \x20 {\"id\": \"4\", \"name\": \"Leo\", \"city\": \"Braga\"},\n\
           \x20 {\"id\": \"5\", \"name\": \"Eva\", \"city\": \"Porto\"}\n]\n";
    assert_eq!(text, expected);

    // Blessed files pass, and blessing again changes nothing.
    let again = run(&dir);
    assert!(again.is_ok(), "{}", again.render());
    let twice = run_suite(&dir, &RunOptions { bless: true }).unwrap();
    assert_eq!((twice.blessed(), twice.blessed_files.len()), (0, 0));
    assert_eq!(std::fs::read_to_string(dir.join("people.sql")).unwrap(), expected);
    // The other file was not touched.
    assert_eq!(
        std::fs::read_to_string(dir.join("orders.sql")).unwrap(),
        std::fs::read_to_string(example_dir().join("orders.sql")).unwrap()
    );
}

#[test]
fn error_expectations_check_the_kind_and_the_text() {
    let dir = suite(
        "errors",
        &[(
            "e.sql",
            "-- @name kind and text match\nSELECT VALUE NOPE(1) FROM p\n-- @error bind 'NOPE' is not a recognized built-in function name.\n\n\
             -- @name kind only\nSELECT VALUE NOPE(1) FROM p\n-- @error bind\n\n\
             -- @name the rendered form has the caret line\nSELECT VALUE NOPE(1) FROM p\n-- @error bind \
             SELECT VALUE NOPE(1) FROM p\n\n\
             -- @name wrong kind\nSELECT VALUE NOPE(1) FROM p\n-- @error eval unknown function\n\n\
             -- @name wrong text\nSELECT VALUE NOPE(1) FROM p\n-- @error bind unknown alias\n\n\
             -- @name an error was expected\nSELECT VALUE 1 FROM p WHERE p.id = '1'\n-- @error syntax\n\n\
             -- @name results were expected\nSELECT VALUE p.name FROM p WHER p.age > 1\n-- @expect\n[]\n\n\
             -- @name an unknown kind\nSELECT VALUE 1\n-- @error oops\n",
        )],
    );
    let report = run(&dir);
    for name in ["kind and text match", "kind only", "the rendered form has the caret line"] {
        assert_eq!(status(&report, name), Status::Passed, "{name}: {}", details(&report, name));
    }
    let d = details(&report, "wrong kind");
    assert!(d.contains("expected a eval error containing \"unknown function\"\ngot a bind error:\n  line 1, column 14: 'NOPE' is not a recognized built-in function name.\n  SELECT VALUE NOPE(1) FROM p\n               ^^^^"), "{d}");
    let d = details(&report, "wrong text");
    assert!(d.contains("expected a bind error containing \"unknown alias\"\ngot a bind error:"), "{d}");
    let d = details(&report, "an error was expected");
    assert!(d.contains("expected a syntax error\ngot results:\n  [\n    1\n  ]"), "{d}");
    let d = details(&report, "results were expected");
    assert!(d.contains("expected results:\n  []\ngot a syntax error:\n  line 1, column 33:"), "{d}");
    let d = details(&report, "an unknown kind");
    assert!(d.contains("`-- @error` needs a kind"), "{d}");
    assert_eq!(report.summary(), "3 passed, 5 failed");
}

#[test]
fn options_partitions_params_order_paging() {
    let dir = suite(
        "options",
        &[(
            "o.sql",
            "-- @name exact order is the default\nSELECT VALUE p.name FROM p WHERE p.city = 'Lisbon' ORDER BY p.name\n\
             -- @expect\n[\"Rui\", \"Ana\"]\n\n\
             -- @name order any compares a multiset\n-- @order any\nSELECT VALUE p.name FROM p WHERE p.city = 'Lisbon' ORDER BY p.name\n\
             -- @expect\n[\"Rui\", \"Ana\"]\n\n\
             -- @name order any still sees a missing row\n-- @order any\nSELECT VALUE p.name FROM p WHERE p.city = 'Lisbon'\n\
             -- @expect\n[\"Rui\"]\n\n\
             -- @name params of several types\n-- @param @names = [\"Ana\", \"Leo\"]\n-- @param @min = 30\n-- @param @min = 40\n\
             SELECT VALUE p.name FROM p WHERE ARRAY_CONTAINS(@names, p.name) AND p.age > @min\n-- @expect\n[\"Leo\"]\n\n\
             -- @name a missing param is a bind error\nSELECT VALUE @x\n-- @error bind the parameter @x is not defined\n\n\
             -- @name eight partitions, pages of one, serial\n-- @partitions 8\n-- @pagesize 1\n-- @maxdop 1\n\
             SELECT TOP 3 VALUE p.id FROM p ORDER BY p.age DESC\n-- @expect\n[\"4\", \"1\", \"3\"]\n\n\
             -- @name pages of two without ORDER BY\n-- @pagesize 2\n-- @order any\nSELECT VALUE p.id FROM p\n\
             -- @expect\n[\"1\", \"2\", \"3\", \"4\", \"5\"]\n\n\
             -- @name one logical partition\n-- @pk \"Porto\"\n-- @order any\nSELECT VALUE p.id FROM p\n-- @expect\n[\"3\", \"5\"]\n\n\
             -- @name another container\n-- @container orders\nSELECT VALUE COUNT(1) FROM o\n-- @expect\n[4]\n\n\
             -- @name an unknown container\n-- @container nope\nSELECT VALUE 1\n-- @expect\n[1]\n\n\
             -- @name an unknown option\n-- @partition 2\nSELECT VALUE 1\n-- @expect\n[1]\n\n\
             -- @name a bad param\n-- @param x = 1\nSELECT VALUE 1\n-- @expect\n[1]\n",
        )],
    );
    let report = run(&dir);
    let expect = [
        ("exact order is the default", Status::Failed),
        ("order any compares a multiset", Status::Passed),
        ("order any still sees a missing row", Status::Failed),
        ("params of several types", Status::Passed),
        ("a missing param is a bind error", Status::Passed),
        ("eight partitions, pages of one, serial", Status::Passed),
        ("pages of two without ORDER BY", Status::Passed),
        ("one logical partition", Status::Passed),
        ("another container", Status::Passed),
        ("an unknown container", Status::Failed),
        ("an unknown option", Status::Failed),
        ("a bad param", Status::Failed),
    ];
    for (name, want) in expect {
        assert_eq!(status(&report, name), want, "{name}: {}", details(&report, name));
    }
    let d = details(&report, "exact order is the default");
    assert!(d.contains("the same results in another order; `-- @order any` compares as a multiset"), "{d}");
    assert!(d.contains("- \"Rui\",\n  \"Ana\"") || d.contains("+   \"Rui\""), "{d}");
    let d = details(&report, "order any still sees a missing row");
    assert!(d.contains("compared as a multiset (both sorted):\n  [\n+   \"Ana\",\n    \"Rui\"\n  ]"), "{d}");
    let d = details(&report, "eight partitions, pages of one, serial");
    assert_eq!(d, "");
    assert!(details(&report, "an unknown container").contains("no container \"nope\" (the fixture has people, orders)"));
    assert!(details(&report, "an unknown option").contains("unknown option `-- @partition`"));
    assert!(details(&report, "a bad param").contains("`x` is not a parameter name like @x"));
    assert_eq!(report.summary(), "7 passed, 5 failed");
}

#[test]
fn file_level_problems_and_defaults() {
    let dir = suite(
        "file",
        &[
            ("a.sql", "SELECT 1\n-- @name one\nSELECT VALUE 1\n-- @expect\n[1]\n"),
            (
                "b.sql",
                "-- defaults for the file\n-- @container orders\n-- @order any\n\n-- @name uses the defaults\n\
                 SELECT VALUE o.id FROM o WHERE o.total < 30\n-- @expect\n[\"o3\", \"o1\"]\n\n\
                 -- @name overrides them\n-- @container people\n-- @order exact\nSELECT VALUE p.id FROM p WHERE p.id = '2'\n-- @expect\n[\"2\"]\n",
            ),
            ("ignored.txt", "not a suite file"),
        ],
    );
    let report = run(&dir);
    let file_problem = report.cases.iter().find(|c| c.name == "(file)").expect("a file problem");
    assert_eq!((file_problem.line, file_problem.status), (1, Status::Failed));
    assert!(file_problem.details.contains("text before the first `-- @name`"));
    assert_eq!(report.summary(), "3 passed, 1 failed");
}

#[test]
fn a_suite_without_fixtures_has_one_empty_container() {
    let dir = temp_dir("nofixture");
    std::fs::write(dir.join("x.sql"), "-- @name constants\nSELECT VALUE 1 + 1\n-- @expect\n[2]\n").unwrap();
    let report = run(&dir);
    assert!(report.is_ok(), "{}", report.render());
    let bad = temp_dir("badfixture");
    std::fs::write(bad.join("fixtures.json"), "[{\"id\": \"a\", \"data\": \"missing.json\"}]").unwrap();
    let err = run_suite(&bad, &RunOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
    assert!(err.to_string().contains("missing.json"), "{err}");
}

#[test]
fn fixture_queries_return_json() -> Result<(), Error> {
    let fixture = Fixture::load(example_dir())?;
    assert_eq!(fixture.containers().len(), 2);
    assert_eq!(fixture.query("SELECT VALUE COUNT(1) FROM p")?, json!([5]));
    // System properties are left out.
    assert_eq!(
        fixture.query("SELECT * FROM p WHERE p.id = '5'")?,
        json!([{"id": "5", "name": "Eva", "city": "Porto"}])
    );
    assert_eq!(
        fixture
            .sql("SELECT VALUE o.total FROM o WHERE o.total > @t ORDER BY o.total")
            .container("orders")
            .param("t", 20)
            .run()?,
        json!([25, 40, 99.99])
    );
    assert_eq!(fixture.container(None, Some(8))?.partition_count(), 8);
    assert_eq!(fixture.container(Some("people"), None)?.partition_count(), 2);
    let paged = fixture.sql("SELECT VALUE p.id FROM p ORDER BY p.id").partitions(8).page_size(2).max_dop(1).run()?;
    assert_eq!(paged, json!(["1", "2", "3", "4", "5"]));
    let err = fixture.query("SELECT VALUE NOPE(1) FROM p").unwrap_err();
    assert_eq!(
        err.to_string(),
        "bind error: line 1, column 14: 'NOPE' is not a recognized built-in function name.\nSELECT VALUE NOPE(1) FROM p\n             ^^^^"
    );
    Ok(())
}

#[test]
fn insta_snapshot_of_a_fixture_query() -> Result<(), Error> {
    let fixture = Fixture::load(example_dir())?;
    insta::assert_json_snapshot!(
        "people_by_city",
        fixture.query("SELECT p.city, COUNT(1) AS n FROM p GROUP BY p.city")?
    );
    insta::assert_json_snapshot!(
        "orders_over_20",
        fixture
            .sql("SELECT o.id, o.total, o.lines FROM o WHERE o.total > 20 ORDER BY o.id")
            .container("orders")
            .run()?
    );
    Ok(())
}
