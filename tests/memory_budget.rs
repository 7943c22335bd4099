//! The memory budget counts what operators really hold: a query that passes its budget fails
//! before the process's resident memory grows past 1.25 times the budget (plus the data loaded
//! and the results). Measured on the peak resident set (`VmHWM`, reset through
//! `/proc/self/clear_refs` once the data is loaded) of a process per query.

use cosmoql::storage::{Container, ContainerSettings, PartitionKeyDefinition};
use cosmoql::value::parse_json;
use cosmoql::{execute, QueryErrorKind, QueryOptions};

/// The peak resident set since the last reset, in bytes (`None` where Linux's `/proc` is not).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

fn current_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

const BUDGET: u64 = 64 << 20;

/// Queries that hold more than [`BUDGET`]: 1,000 items of 100 numbers, each joined with itself
/// twice (10 million rows).
const QUERIES: &[&str] = &[
    "SELECT DISTINCT c.id, a, b FROM c JOIN a IN c.arr JOIN b IN c.arr",
    "SELECT c.id, a, b FROM c JOIN a IN c.arr JOIN b IN c.arr ORDER BY c.n",
    "SELECT c.id, a, b, COUNT(1) AS k FROM c JOIN a IN c.arr JOIN b IN c.arr GROUP BY c.id, a, b",
    "SELECT VALUE MAKESET(CONCAT(c.id, '-', ToString(a), '-', ToString(b))) FROM c JOIN a IN c.arr JOIN b IN c.arr",
];

/// Runs in a process of its own (see [`peak_memory_stays_within_the_budget`]): loads the data,
/// runs query `COSMOQL_MEMORY_QUERY` (`N` in one page, `N/100` in pages of 100) under [`BUDGET`]
/// and prints how much the resident set grew, and whether the budget stopped it.
#[test]
#[ignore = "run by peak_memory_stays_within_the_budget, one process per query"]
fn one_query_in_its_own_process() {
    let Ok(which) = std::env::var("COSMOQL_MEMORY_QUERY") else { return };
    let (i, page) = match which.split_once('/') {
        Some((i, page)) => (i.parse::<usize>().unwrap(), page.parse::<usize>().ok()),
        None => (which.parse::<usize>().unwrap(), None),
    };
    let c = Container::new(
        "c",
        PartitionKeyDefinition::hash("/pk").unwrap(),
        ContainerSettings { initial_partitions: 4, ..ContainerSettings::default() },
    );
    let arr: Vec<String> = (0..100).map(|i| i.to_string()).collect();
    for i in 0..1000 {
        let doc = format!(r#"{{"id":"item-{i:05}","pk":"k{}","n":{i},"arr":[{}]}}"#, i % 10, arr.join(","));
        c.create(&parse_json(&doc).unwrap()).unwrap();
    }
    if !reset_peak() {
        println!("\n@@ none");
        return;
    }
    let before = current_rss().unwrap();
    let options = QueryOptions {
        memory_budget: Some(BUDGET),
        max_degree_of_parallelism: 1,
        max_item_count: page,
        ..QueryOptions::default()
    };
    let result = execute(&c, QUERIES[i], &options);
    let grew = peak_rss().unwrap().saturating_sub(before);
    match result {
        Err(e) if e.kind == QueryErrorKind::Resource => println!("\n@@ {grew} stopped"),
        Err(e) => println!("\n@@ failed: {e}"),
        Ok(out) => println!("\n@@ {grew} ran ({} results)", out.items.len()),
    }
}

/// The issue's measures: DISTINCT grew 4.9 times its budget before its error, ORDER BY 2.7,
/// GROUP BY 2.5, MAKESET 1.7 (the operators counted a value's JSON-like size, not its heap, nor
/// the hash tables and buffers that hold it).
#[test]
fn peak_memory_stays_within_the_budget() {
    for (i, sql) in QUERIES.iter().enumerate() {
        for which in [format!("{i}"), format!("{i}/100")] {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "one_query_in_its_own_process",
                    "--include-ignored",
                    "--nocapture",
                    "--test-threads",
                    "1",
                ])
                .env("COSMOQL_MEMORY_QUERY", &which)
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let line = stdout.lines().find_map(|l| l.strip_prefix("@@ "));
            let Some(line) = line else {
                panic!("{sql}: no measure: {stdout} {}", String::from_utf8_lossy(&out.stderr))
            };
            assert!(!line.starts_with("failed"), "{sql}: {line}");
            // Without /proc/self/clear_refs (not Linux): nothing measured.
            let Some((grew, outcome)) = line.split_once(' ') else { continue };
            let grew: u64 = grew.parse().unwrap();
            let paged = which.contains('/');
            // In one page every query holds more than the budget; in pages, those that hold
            // their results for the next pages stop holding them at the budget.
            if !paged {
                assert_eq!(outcome, "stopped", "{sql}: {line}");
            }
            let ratio = grew as f64 / BUDGET as f64;
            eprintln!("{sql} ({which}): {outcome}, the resident set grew {ratio:.2}x the budget");
            assert!(ratio <= 1.25, "{sql} ({which}): the resident set grew {ratio:.2}x the budget");
        }
    }
}
