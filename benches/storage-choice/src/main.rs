//! cosmoql's log against redb for what cosmoql needs from durable storage:
//! 1. durable single-item writes per second, 1 and 8 writers (redb: one write transaction per
//!    item with `Durability::Immediate`; cosmoql: one create, synced, concurrent writers sharing
//!    syncs);
//! 2. reopening N items into memory (redb: open and read every value; cosmoql: open the
//!    directory, which replays the log and rebuilds every index, ready to query).
//!
//! Arguments: `WRITES ITEMS` (defaults 20000 200000).

use std::path::Path;
use std::time::Instant;

use cosmoql::{ContainerSettings, DurableOptions, PartitionKeyDefinition, Store};
use redb::{Database, Durability, ReadableTable, TableDefinition};

const TABLE: TableDefinition<&str, &[u8]> = TableDefinition::new("items");

fn item(w: usize, i: usize) -> String {
    format!(
        r#"{{"id":"{w}-{i}","deviceId":"dev-{:05}","readingTime":"2024-06-03T17:21:09.412Z","date":"2024-06-03","metricType":"Temperature","unit":"celsius","metricValue":{}.5,"tags":["critical","outdoor"],"location":{{"city":"Seattle","zip":"98101"}}}}"#,
        (i * 7 + w) % 2000,
        i % 100
    )
}

fn fresh(p: &Path) {
    let _ = std::fs::remove_dir_all(p);
    let _ = std::fs::remove_file(p);
}

fn cosmoql_writes(dir: &Path, writers: usize, count: usize) -> f64 {
    fresh(dir);
    let store = Store::open(dir, DurableOptions::default()).unwrap();
    let c = store
        .create_database("b")
        .unwrap()
        .create_container("t", PartitionKeyDefinition::hash("/deviceId").unwrap(), ContainerSettings::default())
        .unwrap();
    let started = Instant::now();
    std::thread::scope(|s| {
        for w in 0..writers {
            let c = &c;
            s.spawn(move || {
                for i in 0..count / writers {
                    c.create_json(&item(w, i)).unwrap();
                }
            });
        }
    });
    count as f64 / started.elapsed().as_secs_f64()
}

fn redb_writes(file: &Path, writers: usize, count: usize) -> f64 {
    fresh(file);
    let db = Database::create(file).unwrap();
    let started = Instant::now();
    std::thread::scope(|s| {
        for w in 0..writers {
            let db = &db;
            s.spawn(move || {
                for i in 0..count / writers {
                    let mut tx = db.begin_write().unwrap();
                    tx.set_durability(Durability::Immediate);
                    {
                        let mut t = tx.open_table(TABLE).unwrap();
                        let key = format!("dev-{:05}/{w}-{i}", (i * 7 + w) % 2000);
                        t.insert(key.as_str(), item(w, i).as_bytes()).unwrap();
                    }
                    tx.commit().unwrap();
                }
            });
        }
    });
    count as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let writes = args.first().copied().unwrap_or(20_000);
    let items = args.get(1).copied().unwrap_or(200_000);
    let base = std::env::temp_dir().join(format!("storage-choice-{}", std::process::id()));
    std::fs::create_dir_all(&base).unwrap();
    let (cdir, rfile) = (base.join("cosmoql"), base.join("redb.db"));
    for writers in [1, 8] {
        let c = cosmoql_writes(&cdir, writers, writes);
        let r = redb_writes(&rfile, writers, writes);
        println!("durable writes/s, {writers} writer(s): cosmoql log {c:.0}, redb {r:.0} (cosmoql/redb {:.2})", c / r);
    }
    // Reopen: both hold `items` items, loaded in bulk.
    fresh(&cdir);
    {
        let store = Store::open(&cdir, DurableOptions::default()).unwrap();
        let c = store
            .create_database("b")
            .unwrap()
            .create_container("t", PartitionKeyDefinition::hash("/deviceId").unwrap(), ContainerSettings::for_expected_items(items))
            .unwrap();
        let text: String = (0..items).map(|i| item(0, i) + "\n").collect();
        c.import(std::io::Cursor::new(text), Default::default(), |_| {}).unwrap();
    }
    fresh(&rfile);
    {
        let db = Database::create(&rfile).unwrap();
        let tx = db.begin_write().unwrap();
        {
            let mut t = tx.open_table(TABLE).unwrap();
            for i in 0..items {
                let key = format!("dev-{:05}/0-{i}", (i * 7) % 2000);
                t.insert(key.as_str(), item(0, i).as_bytes()).unwrap();
            }
        }
        tx.commit().unwrap();
    }
    let started = Instant::now();
    let store = Store::open(&cdir, DurableOptions::default()).unwrap();
    assert_eq!(store.database("b").unwrap().container("t").unwrap().item_count(), items);
    let c = started.elapsed().as_secs_f64();
    drop(store);
    let started = Instant::now();
    let db = Database::open(&rfile).unwrap();
    let tx = db.begin_read().unwrap();
    let t = tx.open_table(TABLE).unwrap();
    let mut n = 0;
    let mut bytes = 0;
    for entry in t.iter().unwrap() {
        let (_, v) = entry.unwrap();
        bytes += v.value().len();
        n += 1;
    }
    assert_eq!(n, items);
    let r = started.elapsed().as_secs_f64();
    // What cosmoql would still have to do with redb underneath: the items into memory, indexed
    // (an in-memory container's bulk load of the stored values).
    let started = Instant::now();
    let mut text = Vec::with_capacity(bytes + items);
    for entry in t.iter().unwrap() {
        let (_, v) = entry.unwrap();
        text.extend_from_slice(v.value());
        text.push(b'\n');
    }
    let memory = cosmoql::Container::new(
        "t",
        PartitionKeyDefinition::hash("/deviceId").unwrap(),
        ContainerSettings::for_expected_items(items),
    );
    memory.import(std::io::Cursor::new(text), Default::default(), |_| {}).unwrap();
    let loaded = r + started.elapsed().as_secs_f64();
    println!(
        "reopen {items} items: cosmoql {c:.3} s (replay + every index rebuilt); redb {r:.3} s to read every value \
         ({bytes} bytes), {loaded:.3} s with them loaded and indexed in memory (cosmoql/redb {:.2})",
        c / loaded
    );
    let size = |p: &Path| -> u64 {
        if p.is_dir() {
            std::fs::read_dir(p).unwrap().flatten().map(|e| e.metadata().unwrap().len()).sum()
        } else {
            std::fs::metadata(p).unwrap().len()
        }
    };
    println!("bytes on disk: cosmoql {}, redb {}", size(&cdir), size(&rfile));
    let _ = std::fs::remove_dir_all(&base);
}
