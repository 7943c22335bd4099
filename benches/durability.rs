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
//! process of its own. Each prints one JSON line.

use std::path::PathBuf;
use std::time::Instant;

use cosmoql::storage::{ContainerSettings, DurableOptions, ImportOptions, PartitionKeyDefinition, Store, SyncMode};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
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
    let _ = std::fs::remove_dir_all(&dir);
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
                            let json = format!(
                                r#"{{"id":"{w}-{i}","deviceId":"dev-{:05}","readingTime":"2024-06-03T17:21:09.412Z","date":"2024-06-03","metricType":"Temperature","unit":"celsius","metricValue":{}.5,"tags":["critical","outdoor"],"location":{{"city":"Seattle","zip":"98101"}}}}"#,
                                (i * 7 + w) % 2000,
                                i % 100
                            );
                            c.create_json(&json).unwrap();
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
                let db = store.create_database("bench").unwrap();
                let settings = ContainerSettings::for_expected_items((ndjson_bytes / 300) as usize);
                let c = db
                    .create_container("telemetry", PartitionKeyDefinition::hash("/deviceId").unwrap(), settings)
                    .unwrap();
                let file = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(&ndjson).unwrap());
                c.import(file, ImportOptions { fail_fast: true }, |_| {}).unwrap();
                c.item_count()
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
            memory.import(file, ImportOptions { fail_fast: true }, |_| {}).unwrap();
            let seconds = started.elapsed().as_secs_f64();
            println!(
                r#"{{"peer":"cosmoql","mode":"import-memory","items":{},"memory_import_seconds":{seconds:.3}}}"#,
                memory.item_count()
            );
        }
        other => eprintln!("unknown mode {other}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
