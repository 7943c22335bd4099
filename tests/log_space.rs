//! The log where space is short or strange: a disk with less free space than the log allocates
//! ahead, and a log file extended to a gigabyte of holes (a sparse copy, a restore, a tool that
//! grew it). Issue 21, point 5.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use cosmoql::storage::{ContainerSettings, DurableOptions, Faults, PartitionKeyDefinition, Store, PREALLOCATE};
use cosmoql_value::parse_json;

fn temp_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("log-space-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn count(store: &Store) -> usize {
    store.database("db").unwrap().container("c").unwrap().item_count()
}

/// The log allocates 4 MiB ahead of its frames; with less room than that, a new database could
/// not take one item. Where a whole chunk does not fit, it allocates what the frame needs.
#[test]
fn a_disk_with_less_room_than_a_chunk_still_takes_what_fits() {
    let dir = temp_dir("small");
    let faults = Faults::none();
    // Room for 1 MiB of log, allocated 4 MiB at a time as always.
    faults.disk_full_at.store(1 << 20, Ordering::Relaxed);
    const { assert!(PREALLOCATE > 1 << 20) };
    let options = DurableOptions { faults: Arc::clone(&faults), ..DurableOptions::default() };
    {
        let store = Store::open(&dir, options.clone()).unwrap();
        let db = store.create_database("db").unwrap();
        let c = db
            .create_container("c", PartitionKeyDefinition::hash("/pk").unwrap(), ContainerSettings::default())
            .unwrap();
        for i in 0..20 {
            c.create(&parse_json(&format!(r#"{{"id":"{i}","pk":"k{}","text":"{:0200}"}}"#, i % 3, i)).unwrap())
                .unwrap();
        }
        // Past the room: refused cleanly, nothing half written.
        let big = format!(r#"{{"id":"big","pk":"k","text":"{}"}}"#, "x".repeat(1_500_000));
        let err = c.create(&parse_json(&big).unwrap()).unwrap_err();
        assert!(err.message.contains("disk is full"), "{}", err.message);
        assert_eq!(count(&store), 20);
    }
    let store = Store::open(&dir, options).unwrap();
    assert_eq!(count(&store), 20);
}

/// A log extended to 1 GiB of holes took seconds to open (every byte read, then written with
/// zeros, so the holes became a gigabyte on disk). Holes are skipped and zeros left alone: the
/// file's allocated size does not grow by opening it.
#[test]
fn a_log_with_a_gigabyte_of_holes_opens_without_filling_them() {
    let dir = temp_dir("sparse");
    {
        let store = Store::open(&dir, DurableOptions::default()).unwrap();
        let db = store.create_database("db").unwrap();
        let c = db
            .create_container("c", PartitionKeyDefinition::hash("/pk").unwrap(), ContainerSettings::default())
            .unwrap();
        for i in 0..10 {
            c.create(&parse_json(&format!(r#"{{"id":"{i}","pk":"k{i}"}}"#)).unwrap()).unwrap();
        }
    }
    let log = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("wal-"))
        .unwrap();
    std::fs::OpenOptions::new().write(true).open(&log).unwrap().set_len(1 << 30).unwrap();
    let allocated = |p: &PathBuf| std::fs::metadata(p).unwrap().blocks() * 512;
    let before = allocated(&log);
    for round in 0..2 {
        let store = Store::open(&dir, DurableOptions::default()).unwrap();
        assert_eq!(count(&store), 10 + round);
        let c = store.database("db").unwrap().container("c").unwrap();
        c.create(&parse_json(&format!(r#"{{"id":"new{round}","pk":"k"}}"#)).unwrap()).unwrap();
    }
    assert_eq!(count(&Store::open(&dir, DurableOptions::default()).unwrap()), 12);
    let after = allocated(&log);
    assert!(after < before + 2 * PREALLOCATE + (1 << 20), "{before} bytes allocated before, {after} after");
    assert!(!std::fs::read_dir(&dir).unwrap().flatten().any(|e| e.file_name().to_string_lossy().contains("torn")));
}
