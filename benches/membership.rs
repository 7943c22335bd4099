//! Membership tests against long constant lists (issue 21, point 11): `ABS(c.x) IN (16,000
//! literals)` and `ARRAY_CONTAINS(@a, ABS(c.x))` with a 100,000-element parameter, over 100,000
//! items, against the baseline of one comparison per item (`ABS(c.x) = 7`) measured in the
//! same run. The constants are gathered into a set once per query, so each item costs one
//! lookup: the ratios stay near 1 whatever the list's length (comparing with each constant in
//! turn, they were about 1,000 for the IN list and 150 for a 15,000-element array).
//!
//! `cargo bench --bench membership`.

use std::hint::black_box;
use std::time::Instant;

use cosmoql::storage::{Container, ContainerSettings, PartitionKeyDefinition};
use cosmoql::value::{parse_json, Value};
use cosmoql::{execute, QueryOptions};

/// Median seconds of `runs` runs after one warm-up.
fn median(runs: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing else: run only for bench.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let n = 100_000;
    let c = Container::new("c", PartitionKeyDefinition::hash("/pk").expect("key"), ContainerSettings::default());
    for i in 0..n {
        c.create(&parse_json(&format!(r#"{{"id":"{i}","pk":"k{}","x":{}}}"#, i % 50, -i)).expect("json"))
            .expect("create");
    }
    let literals: Vec<String> = (0..16_000).map(|i| (i * 7).to_string()).collect();
    let array = Value::array((0..100_000).map(|i| Value::from((i * 7) as f64)));
    let with_array = QueryOptions::default().parameter("a", array);
    let count = |sql: &str, options: &QueryOptions| {
        let out = execute(&c, sql, options).expect("query");
        black_box(out.items[0].as_f64().unwrap_or(0.0))
    };
    let cases = [
        ("ABS(c.x) = 7 (baseline)", "SELECT VALUE COUNT(1) FROM c WHERE ABS(c.x) = 7".to_string(), false),
        (
            "ABS(c.x) IN (7 literals)",
            "SELECT VALUE COUNT(1) FROM c WHERE ABS(c.x) IN (0, 7, 14, 21, 28, 35, 42)".to_string(),
            false,
        ),
        (
            "ABS(c.x) IN (16,000 literals)",
            format!("SELECT VALUE COUNT(1) FROM c WHERE ABS(c.x) IN ({})", literals.join(", ")),
            false,
        ),
        (
            "ARRAY_CONTAINS(@a of 100,000, ABS(c.x))",
            "SELECT VALUE COUNT(1) FROM c WHERE ARRAY_CONTAINS(@a, ABS(c.x))".into(),
            true,
        ),
    ];
    let mut baseline = None;
    for (name, sql, array) in cases {
        let options = if array { with_array.clone() } else { QueryOptions::default() };
        let seconds = median(5, || {
            count(&sql, &options);
        });
        let base = *baseline.get_or_insert(seconds);
        println!("{name:<45} {:>8.1} ms  {:>6.2}x baseline", seconds * 1e3, seconds / base);
    }
}
