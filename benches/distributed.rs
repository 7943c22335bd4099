//! Cross-partition executor benchmarks on the shared telemetry workload (1,000,000 items by
//! default; `COSMOQL_BENCH_ITEMS=100000` for a quick run). `cargo bench --bench distributed`.
//!
//! Each line is a ratio of two medians measured in the same run, so it holds on a noisy machine:
//! - a key-equality query on 64 physical partitions against 1 (target: within 10%);
//! - a cross-partition filter at MaxDegreeOfParallelism 2 against 1 (target: >= 1.7x on 2 cores);
//! - cross-partition ORDER BY ... TOP 10 against the same filter without ORDER BY (target: <= 1.2x);
//! - ORDER BY without TOP read one page at a time: peak buffered results against the bound, and
//!   the rows the producers hold (one page each, references to stored items, not copies);
//! - page 50 of a cross-partition ORDER BY against page 1 (target: <= 1.5x).

use std::hint::black_box;
use std::time::Instant;

mod support;
use support::{data, items};

use cosmoql::storage::{Container, ContainerSettings, ImportOptions, PartitionKeyDefinition};
use cosmoql::value::Value;
use cosmoql::{execute, QueryOptions};

fn load(bytes: &[u8], partitions: usize) -> Container {
    let c = Container::new(
        "telemetry",
        PartitionKeyDefinition::hash("/deviceId").expect("key"),
        ContainerSettings {
            initial_partitions: partitions,
            split_max_items: usize::MAX,
            split_max_bytes: u64::MAX,
            ..ContainerSettings::default()
        },
    );
    c.import(bytes, ImportOptions { fail_fast: true, ..ImportOptions::default() }, |_| {}).expect("import");
    c
}

fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()))
        .map_or(0, |pages| pages * 4096)
}

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

fn run(c: &Container, sql: &str, options: &QueryOptions) -> usize {
    black_box(execute(c, sql, options).expect("query").items.len())
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing else: run only for bench.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let n = items();
    let bytes = data(n);
    let one = load(&bytes, 1);
    let many = load(&bytes, 64);
    println!("{n} items; {} and {} physical partitions", one.partitions().len(), many.partitions().len());

    let dop = |d: i32| QueryOptions { max_degree_of_parallelism: d, ..QueryOptions::default() };
    let key = QueryOptions::default().parameter("d", Value::from("dev-00042"));
    let point_sql = "SELECT * FROM c WHERE c.deviceId = @d AND c.metricType = 'Temperature'";
    let t1 = median(31, || {
        run(&one, point_sql, &key);
    });
    let t64 = median(31, || {
        run(&many, point_sql, &key);
    });
    println!(
        "key equality: 64 partitions {:.3} ms vs 1 partition {:.3} ms = {:.2}x (target within 10%)",
        t64 * 1e3,
        t1 * 1e3,
        t64 / t1
    );

    let filter = "SELECT * FROM c WHERE c.metricValue > 99.5";
    let f1 = median(5, || {
        run(&many, filter, &dop(1));
    });
    let f2 = median(5, || {
        run(&many, filter, &dop(2));
    });
    println!(
        "cross-partition filter: MaxDOP 1 {:.1} ms, MaxDOP 2 {:.1} ms = {:.2}x faster (target >= 1.7x on 2 cores)",
        f1 * 1e3,
        f2 * 1e3,
        f1 / f2
    );

    let top = "SELECT TOP 10 * FROM c WHERE c.metricValue > 99.5 ORDER BY c.metricValue DESC";
    let o2 = median(5, || {
        run(&many, top, &dop(2));
    });
    println!(
        "ORDER BY ... TOP 10 {:.1} ms vs the same filter without ORDER BY {:.1} ms = {:.2}x (target <= 1.2x)",
        o2 * 1e3,
        f2 * 1e3,
        o2 / f2
    );

    // ORDER BY without TOP, one page of 100 at a time, buffer bound 1,000.
    let ordered = "SELECT c.id, c.metricValue FROM c WHERE c.metricValue > 90 ORDER BY c.metricValue";
    let mut options = QueryOptions { max_item_count: Some(100), max_buffered_item_count: Some(1000), ..dop(2) };
    let before = rss();
    let first = execute(&many, ordered, &options).expect("page");
    let after = rss();
    // Each producer keeps one page of rows (plus one) after the cursor, as references.
    let held = (100 + 1) * first.metrics.partitions_touched as u64;
    let mut pages = 1;
    let mut peak = first.metrics.peak_buffered_items;
    let mut token = first.continuation;
    while let Some(t) = token.take() {
        if pages >= 5 {
            break;
        }
        options.continuation = Some(t);
        let page = execute(&many, ordered, &options).expect("page");
        peak = peak.max(page.metrics.peak_buffered_items);
        token = page.continuation;
        pages += 1;
    }
    println!(
        "ORDER BY read by pages of 100 (bound 1,000): peak buffered {peak} results over {pages} pages; the producers held at most {held} sorted rows \
         (one page each, as references to stored items), resident memory grew {:.1} MB during the first page",
        after.saturating_sub(before) as f64 / 1e6,
    );

    // A late page of a cross-partition ORDER BY resumes after the last page's sort keys and scan
    // position: it costs what the first page costs (each partition keeps one page of rows after
    // the cursor), not a sort of everything before it.
    let paged = "SELECT c.id, c.metricValue FROM c ORDER BY c.metricValue DESC";
    let mut options = QueryOptions { max_item_count: Some(100), ..dop(2) };
    let mut token = None;
    for _ in 1..50 {
        options.continuation = token.take();
        token = execute(&many, paged, &options).expect("page").continuation;
    }
    let page50 = QueryOptions { continuation: token, ..options.clone() };
    let page1 = QueryOptions { continuation: None, ..options };
    let p1 = median(5, || {
        run(&many, paged, &page1);
    });
    let p50 = median(5, || {
        run(&many, paged, &page50);
    });
    println!(
        "cross-partition ORDER BY in pages of 100: page 50 {:.1} ms vs page 1 {:.1} ms = {:.2}x (target <= 1.5x)",
        p50 * 1e3,
        p1 * 1e3,
        p50 / p1
    );
}
