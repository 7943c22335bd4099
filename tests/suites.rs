//! Query suites: `tests/suites/*.cql` files of queries with their expected results, run against
//! the fixtures in `tests/data`, for the semantics the shared conformance corpus does not cover.
//!
//! Format (one file per area):
//! ```text
//! data: people.json              -- fixture in tests/data (JSON array or NDJSON)
//! partition-key: /city           -- optional; repeat for a hierarchical key
//!
//! -- case: a short name
//! SELECT ... (any number of lines)
//! => [expected JSON, any number of lines, up to a blank line]
//! ```
//! `=> error: <text>` expects an error whose rendered form contains `<text>`. `params: {"x": 1}`
//! before the query binds parameters. Results compare in order when the query has ORDER BY and as
//! a multiset otherwise; system properties are left out of the comparison.

use std::path::{Path, PathBuf};

use cosmoql::storage::{Container, ContainerSettings, ImportOptions, PartitionKeyDefinition};
use cosmoql::value::{parse_json, to_json_string, Value};
use cosmoql::{execute, QueryOptions};

struct Case {
    name: String,
    line: usize,
    sql: String,
    params: Option<String>,
    expected: String,
}

struct Suite {
    data: Option<String>,
    keys: Vec<String>,
    cases: Vec<Case>,
}

fn parse_suite(text: &str) -> Suite {
    let mut suite = Suite { data: None, keys: vec![], cases: vec![] };
    let mut current: Option<Case> = None;
    let mut in_expected = false;
    for (i, line) in text.lines().enumerate() {
        if let Some(name) = line.strip_prefix("-- case:") {
            if let Some(c) = current.take() {
                suite.cases.push(c);
            }
            current = Some(Case {
                name: name.trim().to_string(),
                line: i + 1,
                sql: String::new(),
                params: None,
                expected: String::new(),
            });
            in_expected = false;
            continue;
        }
        match current.as_mut() {
            None => {
                if let Some(d) = line.strip_prefix("data:") {
                    suite.data = Some(d.split("--").next().unwrap_or("").trim().to_string());
                } else if let Some(k) = line.strip_prefix("partition-key:") {
                    suite.keys.push(k.split("--").next().unwrap_or("").trim().to_string());
                }
            }
            Some(case) => {
                if in_expected {
                    if line.trim().is_empty() {
                        in_expected = false;
                    } else {
                        case.expected.push('\n');
                        case.expected.push_str(line);
                    }
                } else if let Some(rest) = line.strip_prefix("=>") {
                    case.expected = rest.trim().to_string();
                    in_expected = true;
                } else if let Some(p) = line.strip_prefix("params:") {
                    case.params = Some(p.trim().to_string());
                } else {
                    case.sql.push_str(line);
                    case.sql.push('\n');
                }
            }
        }
    }
    if let Some(c) = current {
        suite.cases.push(c);
    }
    suite
}

fn strip_system(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::object(
            m.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "_rid" | "_self" | "_etag" | "_attachments" | "_ts"))
                .map(|(k, v)| (k.clone(), strip_system(v))),
        ),
        Value::Array(a) => Value::array(a.iter().map(strip_system)),
        other => other.clone(),
    }
}

fn run_suite(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("readable suite");
    let suite = parse_suite(&text);
    let keys: Vec<&str> = suite.keys.iter().map(String::as_str).collect();
    let container = Container::new(
        "suite",
        PartitionKeyDefinition::from_paths(&keys).expect("suite partition key"),
        ContainerSettings { initial_partitions: 2, ..ContainerSettings::default() },
    );
    if let Some(data) = &suite.data {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(data);
        let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        container.import(bytes.as_slice(), ImportOptions { fail_fast: true }, |_| {}).expect("fixture loads");
    }
    let mut failures = Vec::new();
    for case in &suite.cases {
        let mut options = QueryOptions::default();
        if let Some(p) = &case.params {
            let params = parse_json(p).expect("params JSON");
            for (k, v) in params.as_object().expect("params object") {
                options = options.parameter(k, v.clone());
            }
        }
        let sql = case.sql.trim();
        let at = format!("{}:{} ({})", path.display(), case.line, case.name);
        let result = execute(&container, sql, &options);
        if let Some(fragment) = case.expected.strip_prefix("error:") {
            match result {
                Ok(out) => failures.push(format!("{at}: expected an error, got {:?}", out.items)),
                Err(e) if e.render(sql).contains(fragment.trim()) => {}
                Err(e) => failures.push(format!("{at}: wrong error:\n{}", e.render(sql))),
            }
            continue;
        }
        let expected = match parse_json(&case.expected) {
            Ok(Value::Array(items)) => items.to_vec(),
            _ => {
                failures.push(format!("{at}: the expected result is not a JSON array"));
                continue;
            }
        };
        let actual: Vec<Value> = match result {
            Ok(out) => out.items.iter().map(strip_system).collect(),
            Err(e) => {
                failures.push(format!("{at}: {}", e.render(sql)));
                continue;
            }
        };
        let ordered = sql.to_ascii_uppercase().contains("ORDER BY");
        let same = if ordered {
            actual == expected
        } else {
            let mut a = actual.clone();
            let mut b = expected.clone();
            a.sort();
            b.sort();
            a == b
        };
        if !same {
            let show = |v: &[Value]| to_json_string(&Value::array(v.iter().cloned())).unwrap_or_default();
            failures.push(format!("{at}:\n  expected {}\n       got {}", show(&expected), show(&actual)));
        }
    }
    failures
}

#[test]
fn query_suites() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suites");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).expect("suites dir").flatten().map(|e| e.path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "cql"));
    files.sort();
    let mut failures = Vec::new();
    let mut cases = 0;
    for f in &files {
        cases += parse_suite(&std::fs::read_to_string(f).expect("suite")).cases.len();
        failures.extend(run_suite(f));
    }
    println!("{} passed, {} failed ({} suites)", cases - failures.len(), failures.len(), files.len());
    assert!(cases >= 50, "only {cases} suite cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
