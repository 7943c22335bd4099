//! Storage benchmarks on the shared telemetry workload (1,000,000 items by default):
//! import throughput from NDJSON, point-read latency, and resident memory per item.
//!
//! Each figure has a baseline measured in the same run, so the ratios hold on a noisy machine:
//! - import: `serde_json` parsing every line into a `serde_json::Value` (parse only, nothing kept);
//! - point read: a `HashMap<(String, String), Arc<serde_json::Value>>` lookup by (key, id);
//! - memory: the NDJSON file's size.
//!
//! `cargo bench --bench storage`; `COSMOQL_BENCH_ITEMS=100000` for a quicker run. The data comes
//! from `benches/data/gen_telemetry.py` (seed 42) and is cached under the target directory.

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod support;
use support::{data, items};

use cosmoql::storage::{Container, ContainerSettings, ImportOptions, PartitionKey, PartitionKeyDefinition};
use criterion::{Criterion, Throughput};

fn load(bytes: &[u8]) -> Container {
    let c = Container::new(
        "telemetry",
        PartitionKeyDefinition::hash("/deviceId").expect("key"),
        ContainerSettings::for_expected_items(items()),
    );
    let summary =
        c.import(bytes, ImportOptions { fail_fast: true, ..ImportOptions::default() }, |_| {}).expect("import");
    assert_eq!(summary.imported as usize, items());
    c
}

/// Resident set size of this process, in bytes (Linux).
fn rss() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

fn keys(bytes: &[u8], every: usize) -> Vec<(String, String)> {
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .step_by(every)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_slice(l).expect("json");
            (v["deviceId"].as_str().expect("key").to_string(), v["id"].as_str().expect("id").to_string())
        })
        .collect()
}

fn main() {
    let n = items();
    let bytes = data(n);
    let mut criterion = Criterion::default().configure_from_args().warm_up_time(Duration::from_secs(1));

    // Memory: load once and compare resident memory to the NDJSON size.
    let before = rss();
    let started = Instant::now();
    let container = load(&bytes);
    let load_seconds = started.elapsed().as_secs_f64();
    let after = rss();
    if let (Some(before), Some(after)) = (before, after) {
        let per_item = (after.saturating_sub(before)) as f64 / n as f64;
        let ndjson_per_item = bytes.len() as f64 / n as f64;
        println!(
            "memory: {per_item:.0} resident bytes/item vs {ndjson_per_item:.0} NDJSON bytes/item = {:.2}x (target <= 2x); \
             one load took {load_seconds:.2} s = {:.0} items/s",
            per_item / ndjson_per_item,
            n as f64 / load_seconds
        );
    }

    let mut group = criterion.benchmark_group("import");
    group.throughput(Throughput::Elements(n as u64)).sample_size(10).measurement_time(Duration::from_secs(20));
    group.bench_function("serde_json parse only (baseline)", |b| {
        b.iter(|| {
            for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                black_box(serde_json::from_slice::<serde_json::Value>(line).expect("json"));
            }
        })
    });
    group.bench_function("cosmoql import", |b| b.iter_with_large_drop(|| load(&bytes)));
    group.finish();

    // Point reads over a sample of existing keys, cycling.
    let sample = keys(&bytes, (n / 10_000).max(1));
    let baseline: HashMap<(String, String), Arc<serde_json::Value>> = bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_slice(l).expect("json");
            ((v["deviceId"].as_str().expect("key").to_string(), v["id"].as_str().expect("id").to_string()), Arc::new(v))
        })
        .collect();
    let pks: Vec<(PartitionKey, String)> =
        sample.iter().map(|(k, id)| (PartitionKey::from(k.as_str()), id.clone())).collect();
    let mut group = criterion.benchmark_group("point read");
    let mut i = 0;
    group.bench_function("HashMap<(key, id), Arc<Value>> get (baseline)", |b| {
        b.iter(|| {
            i = (i + 1) % sample.len();
            black_box(baseline.get(&sample[i]).cloned().expect("present"))
        })
    });
    group.bench_function("cosmoql read_stored (key + id -> stored item)", |b| {
        b.iter(|| {
            i = (i + 1) % pks.len();
            black_box(container.read_stored(&pks[i].0, &pks[i].1).expect("present"))
        })
    });
    group.bench_function("cosmoql read (-> JSON value with system properties)", |b| {
        b.iter(|| {
            i = (i + 1) % pks.len();
            black_box(container.read(&pks[i].0, &pks[i].1).expect("present"))
        })
    });
    group.finish();
    criterion.final_summary();
}
