//! Durable writes and reopening, for the comparison with SQLite in WAL mode
//! (`benches/durability/compare.py` runs both in one go and prints the table).
//!
//! ```text
//! cargo bench --bench durability -- writes --writers 8 --count 20000 --sync full --dir /tmp/x
//! cargo bench --bench durability -- import --ndjson telemetry.ndjson --dir /tmp/y
//! ```
//!
//! `writes`: W threads each create count/W telemetry-shaped items one by one, every create a
//! durable write (it returns after the log is synced, or, with `--sync normal`, written).
//! `import`: imports an NDJSON file into a new database directory (timed, synced at the end),
//! closes it, and times opening it again (replaying the log and rebuilding the indexes); also
//! the bytes on disk against the NDJSON's. `import-memory`: the same import into memory, in a
//! process of its own. `stall`: imports the NDJSON, then W writers make durable writes while a
//! checkpoint of it all is written; how long writes took during the checkpoint against its
//! length. Each prints one JSON line.
//!
//! ```text
//! cargo bench --bench durability -- stall --ndjson telemetry.ndjson --writers 4 --dir /tmp/z
//! ```
//!
//! `--keep` leaves the directory; `reopen --dir D` then times opening it alone (for profiling).

use std::path::PathBuf;
use std::time::Instant;

use cosmoql::storage::{ContainerSettings, DurableOptions, ImportOptions, PartitionKeyDefinition, Store, SyncMode};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

/// A telemetry-shaped item, `id` `prefix-w-i`.
fn telemetry(prefix: &str, w: usize, i: usize) -> String {
    format!(
        r#"{{"id":"{prefix}{w}-{i}","deviceId":"dev-{:05}","readingTime":"2024-06-03T17:21:09.412Z","date":"2024-06-03","metricType":"Temperature","unit":"celsius","metricValue":{}.5,"tags":["critical","outdoor"],"location":{{"city":"Seattle","zip":"98101"}}}}"#,
        (i * 7 + w) % 2000,
        i % 100
    )
}

/// Imports an NDJSON file into container `telemetry` of a new database `bench` (keyed on
/// `/deviceId`, sized for the file).
fn import_into(store: &Store, ndjson: &std::path::Path) -> std::sync::Arc<cosmoql::storage::Container> {
    let ndjson_bytes = std::fs::metadata(ndjson).unwrap().len();
    let db = store.create_database("bench").unwrap();
    let settings = ContainerSettings::for_expected_items((ndjson_bytes / 300) as usize);
    let c = db.create_container("telemetry", PartitionKeyDefinition::hash("/deviceId").unwrap(), settings).unwrap();
    let file = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(ndjson).unwrap());
    c.import(file, ImportOptions { fail_fast: true, ..ImportOptions::default() }, |_| {}).unwrap();
    c
}

fn dir_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir).map(|e| e.flatten().filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum()).unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let Some(mode) = args.first().cloned() else {
        eprintln!(
            "usage: durability writes --writers W --count N --sync full|normal --dir D | import --ndjson F --dir D"
        );
        return;
    };
    let dir = PathBuf::from(arg(&args, "--dir").unwrap_or_else(|| "/tmp/cosmoql-durability-bench".into()));
    if mode != "reopen" {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let sync = match arg(&args, "--sync").as_deref() {
        Some("normal") | Some("NORMAL") => SyncMode::Normal,
        _ => SyncMode::Full,
    };
    let options = DurableOptions { sync, ..DurableOptions::default() };
    match mode.as_str() {
        "writes" => {
            let writers: usize = arg(&args, "--writers").and_then(|w| w.parse().ok()).unwrap_or(1);
            let count: usize = arg(&args, "--count").and_then(|w| w.parse().ok()).unwrap_or(10_000);
            let store = Store::open(&dir, options).unwrap();
            let db = store.create_database("bench").unwrap();
            let c = db
                .create_container(
                    "telemetry",
                    PartitionKeyDefinition::hash("/deviceId").unwrap(),
                    ContainerSettings::default(),
                )
                .unwrap();
            let started = Instant::now();
            std::thread::scope(|s| {
                for w in 0..writers {
                    let c = &c;
                    s.spawn(move || {
                        for i in 0..count / writers {
                            c.create_json(&telemetry("", w, i)).unwrap();
                        }
                    });
                }
            });
            let seconds = started.elapsed().as_secs_f64();
            let done = count / writers * writers;
            println!(
                r#"{{"peer":"cosmoql","mode":"writes","sync":"{}","writers":{writers},"count":{done},"seconds":{seconds:.4},"writes_per_sec":{:.1}}}"#,
                if sync == SyncMode::Full { "FULL" } else { "NORMAL" },
                done as f64 / seconds
            );
        }
        "import" => {
            let ndjson = PathBuf::from(arg(&args, "--ndjson").expect("--ndjson FILE"));
            let ndjson_bytes = std::fs::metadata(&ndjson).unwrap().len();
            let started = Instant::now();
            let items = {
                let store = Store::open(&dir, options.clone()).unwrap();
                import_into(&store, &ndjson).item_count()
            };
            let import_seconds = started.elapsed().as_secs_f64();
            let started = Instant::now();
            let store = Store::open(&dir, options).unwrap();
            let c = store.database("bench").unwrap().container("telemetry").unwrap();
            assert_eq!(c.item_count(), items);
            let reopen_seconds = started.elapsed().as_secs_f64();
            let log_bytes = dir_bytes(&dir);
            store.checkpoint().unwrap();
            let checkpoint_bytes = dir_bytes(&dir);
            println!(
                r#"{{"peer":"cosmoql","mode":"import","items":{items},"import_seconds":{import_seconds:.3},"reopen_seconds":{reopen_seconds:.3},"db_bytes":{log_bytes},"checkpoint_bytes":{checkpoint_bytes},"ndjson_bytes":{ndjson_bytes}}}"#
            );
        }
        "import-memory" => {
            // The same import into memory, in a process of its own (a process that has freed a
            // store allocates faster): what the log costs an import.
            let ndjson = PathBuf::from(arg(&args, "--ndjson").expect("--ndjson FILE"));
            let ndjson_bytes = std::fs::metadata(&ndjson).unwrap().len();
            let started = Instant::now();
            let memory = cosmoql::storage::Container::new(
                "telemetry",
                PartitionKeyDefinition::hash("/deviceId").unwrap(),
                ContainerSettings::for_expected_items((ndjson_bytes / 300) as usize),
            );
            let file = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(&ndjson).unwrap());
            memory.import(file, ImportOptions { fail_fast: true, ..ImportOptions::default() }, |_| {}).unwrap();
            let seconds = started.elapsed().as_secs_f64();
            println!(
                r#"{{"peer":"cosmoql","mode":"import-memory","items":{},"memory_import_seconds":{seconds:.3}}}"#,
                memory.item_count()
            );
        }
        "stall" => {
            let ndjson = PathBuf::from(arg(&args, "--ndjson").expect("--ndjson FILE"));
            let writers: usize = arg(&args, "--writers").and_then(|w| w.parse().ok()).unwrap_or(4);
            let store = Store::open(&dir, options).unwrap();
            let c = import_into(&store, &ndjson);
            let items = c.item_count();
            // The import's log is folded first (so no checkpoint starts on its own meanwhile).
            store.checkpoint().unwrap();
            // Writers run for a second, then a checkpoint is written (timed), then a second more.
            let stop = std::sync::atomic::AtomicBool::new(false);
            let origin = Instant::now();
            let (checkpoint_from, checkpoint_to, latencies) = std::thread::scope(|s| {
                let handles: Vec<_> = (0..writers)
                    .map(|w| {
                        let (c, stop) = (&c, &stop);
                        s.spawn(move || {
                            // (start, duration) of each write, in seconds since `origin`.
                            let mut out = Vec::new();
                            let mut i = 0;
                            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                                let began = origin.elapsed().as_secs_f64();
                                c.create_json(&telemetry("stall-", w, i)).unwrap();
                                out.push((began, origin.elapsed().as_secs_f64() - began));
                                i += 1;
                            }
                            out
                        })
                    })
                    .collect();
                std::thread::sleep(std::time::Duration::from_secs(1));
                let from = origin.elapsed().as_secs_f64();
                store.checkpoint().unwrap();
                let to = origin.elapsed().as_secs_f64();
                std::thread::sleep(std::time::Duration::from_secs(1));
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                let all: Vec<(f64, f64)> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
                (from, to, all)
            });
            let checkpoint_seconds = checkpoint_to - checkpoint_from;
            // A write overlaps the checkpoint when it was under way at any moment of it.
            let (during, outside): (Vec<_>, Vec<_>) =
                latencies.iter().partition(|(b, d)| *b < checkpoint_to && b + d > checkpoint_from);
            let max = |v: &[&(f64, f64)]| v.iter().map(|(_, d)| *d).fold(0.0, f64::max);
            let median = |v: &[&(f64, f64)]| {
                let mut d: Vec<f64> = v.iter().map(|(_, d)| *d).collect();
                d.sort_by(f64::total_cmp);
                d.get(d.len() / 2).copied().unwrap_or(0.0)
            };
            let completed_during =
                latencies.iter().filter(|(b, d)| b + d > checkpoint_from && b + d < checkpoint_to).count();
            println!(
                r#"{{"peer":"cosmoql","mode":"stall","items":{items},"writers":{writers},"checkpoint_seconds":{checkpoint_seconds:.3},"writes_completed_during":{completed_during},"max_write_seconds_during":{:.4},"median_write_seconds_during":{:.5},"median_write_seconds_outside":{:.5},"max_write_seconds_outside":{:.4}}}"#,
                max(&during),
                median(&during),
                median(&outside),
                max(&outside)
            );
        }
        "reopen" => {
            // Opens a database directory left by `import --keep` (timed), and leaves it.
            let started = Instant::now();
            let store = Store::open(&dir, options).unwrap();
            let reopen_seconds = started.elapsed().as_secs_f64();
            let (mut items, mut index) = (0, cosmoql::storage::IndexStats::default());
            for d in store.database_ids() {
                let db = store.database(&d).unwrap();
                for c in db.container_ids() {
                    let c = db.container(&c).unwrap();
                    items += c.item_count();
                    index += c.index_stats();
                }
            }
            let log_bytes = dir_bytes(&dir);
            println!(
                r#"{{"peer":"cosmoql","mode":"reopen","items":{items},"reopen_seconds":{reopen_seconds:.3},"log_bytes":{log_bytes},"index_entries":{},"index_keys":{},"index_bytes_in_memory":{}}}"#,
                index.entries, index.keys, index.bytes
            );
            return;
        }
        other => eprintln!("unknown mode {other}"),
    }
    if !args.iter().any(|a| a == "--keep") {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
