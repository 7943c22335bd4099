//! A database directory: what is written survives closing and reopening (with and without a
//! checkpoint), and the failure paths: a torn last record, a damaged record, a full disk, a
//! second process, a directory that cannot be written.
//!
//! The crash harness (SIGKILL at random points) is `tests/crash.rs`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cosmoql::storage::{
    BatchOperation, ChangeFeedStart, Clock, Container, ContainerSettings, DurableOptions, ErrorKind, Faults, FeedRange,
    IndexingPolicy, PartitionKey, PartitionKeyDefinition, PatchOperation, Provisioned, Script, ScriptKind, Store,
    SyncMode, SystemClock, Throttle, TriggerOperation, TriggerType, UniqueKey, WriteOptions,
};
use cosmoql::{CosmosClient, Value};
use cosmoql_value::parse_json;

fn temp_dir(name: &str) -> PathBuf {
    // Under the target directory (`cargo clean` removes them): a failed test's directory stays
    // there for a look.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("durability-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn json(text: &str) -> Value {
    parse_json(text).unwrap()
}

/// Everything a user can observe of a store, as text: databases, containers with their
/// properties, partition layout, throughput, items, both change feeds; and the indexes checked
/// against a rebuild.
fn dump(store: &Store) -> String {
    let mut out = String::new();
    for db_id in store.database_ids() {
        let db = store.database(&db_id).unwrap();
        out += &format!(
            "database {} throughput {:?}\n",
            cosmoql_value::to_json_string(&db.properties()).unwrap(),
            db.throughput().map(|t| t.provisioning())
        );
        for c_id in db.container_ids() {
            let c = db.container(&c_id).unwrap();
            c.check_indexes().unwrap_or_else(|e| panic!("{c_id}: indexes differ from a rebuild: {e}"));
            out += &format!("container {c_id} {}\n", cosmoql_value::to_json_string(&c.properties()).unwrap());
            out += &format!(
                "  throughput {:?} distribution {:?} burst {:?}\n",
                c.throughput().filter(|_| c.has_own_throughput()).map(|t| t.provisioning()),
                c.throughput().map(|t| t.distribution()),
                c.throughput().map(|t| t.burst())
            );
            for p in c.partitions() {
                out += &format!("  partition {} [{}, {}) {} items\n", p.id, p.min, p.max, p.items);
            }
            for kind in [ScriptKind::UserDefinedFunction, ScriptKind::StoredProcedure, ScriptKind::Trigger] {
                for s in c.scripts(kind) {
                    out += &format!("  script {s:?} {}\n", s.etag_text());
                }
            }
            let mut items: Vec<String> =
                c.scan().map(|(_, item)| cosmoql_value::to_json_string(&c.materialize(&item)).unwrap()).collect();
            items.sort();
            for item in items {
                out += &format!("  item {item}\n");
            }
            let page = c.read_changes(&FeedRange::All, ChangeFeedStart::Beginning, None, usize::MAX).unwrap();
            let feed: Vec<String> = page.items.iter().map(|(item, _)| format!("{}", item.meta.lsn)).collect();
            out += &format!("  feed {}\n", feed.join(" "));
            if c.settings().change_feed_retention.is_some() {
                let page = c.read_all_versions(&FeedRange::All, ChangeFeedStart::Beginning, None, usize::MAX).unwrap();
                for (lsn, ch) in page.changes {
                    out += &format!(
                        "  history {lsn} {:?} {} prev {:?} ttl {}\n",
                        ch.operation, ch.id, ch.previous_lsn, ch.ttl_expired
                    );
                }
            }
        }
    }
    out
}

fn open(dir: &Path) -> Arc<Store> {
    Store::open(dir, DurableOptions::default()).unwrap()
}

/// Every kind of change, in two containers of two databases.
fn write_everything(store: &Store) {
    let db = store.create_database("iot").unwrap();
    let settings = ContainerSettings {
        split_max_items: 40,
        unique_keys: vec![UniqueKey::new(&["/serial"]).unwrap()],
        change_feed_retention: Some(3600),
        ..ContainerSettings::default()
    };
    let readings =
        db.create_container("readings", PartitionKeyDefinition::hash("/deviceId").unwrap(), settings).unwrap();
    for i in 0..200 {
        readings
            .create(&json(&format!(r#"{{"id":"r{i}","deviceId":"dev-{}","v":{i},"serial":"s{i}"}}"#, i % 17)))
            .unwrap();
    }
    assert!(readings.partitions().len() > 1, "splits happened");
    let none = WriteOptions::default();
    readings.upsert(&json(r#"{"id":"r1","deviceId":"dev-1","v":-1,"serial":"s1"}"#), &none).unwrap();
    readings
        .replace(
            &PartitionKey::from_values(&[Value::from("dev-2")]).unwrap(),
            "r2",
            &json(r#"{"id":"r2","deviceId":"dev-2","v":-2,"serial":"s2"}"#),
            &none,
        )
        .unwrap();
    let key3 = PartitionKey::from_values(&[Value::from("dev-3")]).unwrap();
    readings
        .patch(&key3, "r3", &[PatchOperation::Set { path: "/patched".into(), value: Value::Bool(true) }], &none)
        .unwrap();
    readings.delete(&PartitionKey::from_values(&[Value::from("dev-4")]).unwrap(), "r4", &none).unwrap();
    let key5 = PartitionKey::from_values(&[Value::from("dev-5")]).unwrap();
    readings
        .execute_batch(
            &key5,
            &[
                BatchOperation::Create { item: json(r#"{"id":"b1","deviceId":"dev-5","serial":"b1"}"#) },
                BatchOperation::Upsert {
                    item: json(r#"{"id":"b2","deviceId":"dev-5","serial":"b2"}"#),
                    if_match: None,
                },
                BatchOperation::Delete { id: "r5".into(), if_match: None },
            ],
        )
        .unwrap();
    // A failed batch leaves nothing, in memory or in the log.
    readings
        .execute_batch(
            &key5,
            &[
                BatchOperation::Create { item: json(r#"{"id":"b3","deviceId":"dev-5","serial":"b3"}"#) },
                BatchOperation::Create { item: json(r#"{"id":"b1","deviceId":"dev-5","serial":"b9"}"#) },
            ],
        )
        .unwrap_err();
    readings.replace_indexing_policy(
        IndexingPolicy::from_json(&json(r#"{"excludedPaths":[{"path":"/serial/?"}],"includedPaths":[{"path":"/*"}]}"#))
            .unwrap(),
    );
    readings.persist_properties().unwrap();
    // Scripts: created, replaced, deleted.
    readings.create_script(Script::new(ScriptKind::UserDefinedFunction, "tax", "function (x) { return x; }")).unwrap();
    readings.create_script(Script::new(ScriptKind::UserDefinedFunction, "gone", "function () {}")).unwrap();
    readings.create_script(Script::new(ScriptKind::StoredProcedure, "tax", "function () { }")).unwrap();
    let trigger = Script {
        trigger: Some((TriggerType::Pre, TriggerOperation::Create)),
        ..Script::new(ScriptKind::Trigger, "stamp", "function () { }")
    };
    readings.create_script(trigger).unwrap();
    readings
        .replace_script(Script::new(ScriptKind::UserDefinedFunction, "tax", "function (x) { return 2 * x; }"))
        .unwrap();
    readings.delete_script(ScriptKind::UserDefinedFunction, "gone").unwrap();
    readings.set_default_ttl(Some(-1)).unwrap();
    readings.set_analytical_ttl(Some(3600)).unwrap();
    readings.set_throughput(Some(Arc::new(Throttle::provisioned(
        Provisioned::Manual(12_000.0),
        Arc::new(SystemClock::default()),
    ))));
    readings.persist_properties().unwrap();
    let ids = readings.partition_ids();
    readings.throughput().unwrap().redistribute(&[(ids[0], 5_000.0)], &ids).unwrap();
    readings.persist_properties().unwrap();

    let other = store.create_database("other").unwrap();
    other.set_throughput(Some(Arc::new(Throttle::provisioned(
        Provisioned::Autoscale { max: 4000.0 },
        Arc::new(SystemClock::default()),
    ))));
    other.persist_throughput().unwrap();
    let plain = other.create_container("plain", PartitionKeyDefinition::none(), ContainerSettings::default()).unwrap();
    plain.create(&json(r#"{"id":"only","x":[1,2,{"y":null}]}"#)).unwrap();
    plain.set_analytical_ttl(Some(-1)).unwrap();
    let gone = other
        .create_container("gone", PartitionKeyDefinition::hash("/k").unwrap(), ContainerSettings::default())
        .unwrap();
    gone.create(&json(r#"{"id":"1","k":"a"}"#)).unwrap();
    other.delete_container("gone").unwrap();
    store.create_database("deleted").unwrap();
    store.delete_database("deleted").unwrap();
}

#[test]
fn everything_written_is_there_after_reopening_with_and_without_a_checkpoint() {
    let dir = temp_dir("reopen");
    let before = {
        let store = open(&dir);
        write_everything(&store);
        dump(&store)
    };
    // The analytical time to live, from the properties record and the container record.
    assert!(before.contains(r#""analyticalStorageTtl":3600"#) && before.contains(r#""analyticalStorageTtl":-1"#));
    // The scripts, from their records and the container record: three kept, one deleted.
    assert_eq!(before.matches("  script Script").count(), 3, "{before}");
    assert!(before.contains("return 2 * x;") && !before.contains("\"gone\""), "{before}");
    let store = open(&dir);
    assert_eq!(dump(&store), before, "reopened from the log");
    store.checkpoint().unwrap();
    drop(store);
    let store = open(&dir);
    assert_eq!(dump(&store), before, "reopened from a checkpoint");
    // It goes on: new writes after a checkpoint and a reopen are kept too; sequence numbers
    // continue.
    let readings = store.database("iot").unwrap().container("readings").unwrap();
    let last = readings.last_lsn();
    let r = readings.create(&json(r#"{"id":"new","deviceId":"dev-1","serial":"new"}"#)).unwrap();
    assert!(r.etag > String::new());
    assert!(readings.last_lsn() > last);
    let after = dump(&store);
    drop((store, readings));
    assert_eq!(dump(&open(&dir)), after);
    let files: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    assert_eq!(files.iter().filter(|f| f.starts_with("wal-")).count(), 1, "old generations are removed: {files:?}");
}

#[test]
fn the_embedded_client_opens_a_directory() {
    let dir = temp_dir("client");
    {
        let client = CosmosClient::open(&dir).unwrap();
        let db = client.create_database("app").unwrap();
        let c = db.create_container(cosmoql::ContainerProperties::new("things", "/kind").unwrap()).unwrap();
        c.create_item(&serde_json::json!({"id": "1", "kind": "a", "n": 1})).unwrap();
    }
    let client = CosmosClient::open(&dir).unwrap();
    let c = client.database_client("app").container_client("things").unwrap();
    let rows: Vec<serde_json::Value> =
        c.query_items_blocking("SELECT VALUE c.n FROM c", cosmoql::QueryOptions::default()).unwrap();
    assert_eq!(rows, vec![serde_json::json!(1)]);
}

#[test]
fn databases_and_containers_keep_their_creation_time() {
    let dir = temp_dir("created");
    let ts = |store: &Store| {
        let db = store.database("app").unwrap();
        let c = db.container("things").unwrap();
        (db.properties().get("_ts").clone(), c.properties().get("_ts").clone())
    };
    let before = {
        let store = open(&dir);
        let db = store.create_database("app").unwrap();
        db.create_container("things", PartitionKeyDefinition::hash("/kind").unwrap(), ContainerSettings::default())
            .unwrap();
        ts(&store)
    };
    let created = before.0.as_f64().unwrap() as u64;
    assert!(created > 1_700_000_000 && before.1.as_f64().unwrap() as u64 >= created, "{before:?}");
    // The next second, so a creation time taken at opening would differ.
    while SystemClock::default().unix_seconds() == created {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let store = open(&dir);
    assert_eq!(ts(&store), before, "reopened from the log");
    store.checkpoint().unwrap();
    drop(store);
    assert_eq!(ts(&open(&dir)), before, "reopened from a checkpoint");
}

#[test]
fn a_torn_last_record_is_cut_off() {
    let dir = temp_dir("torn");
    let (before, len) = {
        let store = open(&dir);
        write_everything(&store);
        (dump(&store), store.durable().unwrap().log_file().1)
    };
    let log = dir.join("wal-000001.log");
    // A write that was being appended when the process died: half a frame after the last one
    // (in the space allocated ahead).
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[len as usize..len as usize + 10].copy_from_slice(&[200, 0, 0, 0, 1, 2, 3, 4, b'{', b'"']);
    std::fs::write(&log, &bytes).unwrap();
    let store = open(&dir);
    assert_eq!(dump(&store), before);
    assert_eq!(store.durable().unwrap().recovery().torn_bytes, 10);
    let after = std::fs::read(&log).unwrap();
    assert!(after[len as usize..].iter().all(|b| *b == 0), "the torn part is zeroed");
    // What it held is kept, never just deleted.
    let aside = store.durable().unwrap().recovery().torn_aside.expect("the torn bytes are kept aside");
    assert_eq!(std::fs::read(&aside).unwrap(), &bytes[len as usize..len as usize + 10]);
}

#[test]
fn a_flipped_bit_in_a_record_length_is_refused_never_read_as_the_end() {
    // The issue's case: two imports into a new directory, one bit of the first record's length
    // flipped. It used to open with no containers and zero the rest of the log.
    let dir = temp_dir("length-bit");
    {
        let store = open(&dir);
        let db = store.create_database("iot").unwrap();
        let c = db
            .create_container("r", PartitionKeyDefinition::hash("/k").unwrap(), ContainerSettings::default())
            .unwrap();
        for round in 0..2 {
            let lines: String = (0..20).map(|i| format!("{{\"id\":\"{round}-{i}\",\"k\":\"k{i}\"}}\n")).collect();
            c.import(lines.as_bytes(), cosmoql::storage::ImportOptions::default(), |_| {}).unwrap();
        }
    }
    let log = dir.join("wal-000001.log");
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[10] ^= 0x10;
    std::fs::write(&log, &bytes).unwrap();
    let err = Store::open(&dir, DurableOptions::default()).unwrap_err();
    assert!(err.message.contains("wal-000001.log: damaged log record at byte offset 8"), "{}", err.message);
    assert_eq!(std::fs::read(&log).unwrap(), bytes, "the refusal changed nothing");
}

#[test]
fn a_flipped_bit_in_any_field_of_any_record_kind_is_found() {
    // A log holding every kind of record (databases, containers, properties, throughput, items,
    // batches, deletes, splits), each frame's length, checksums and payload flipped in turn:
    // opening refuses with the frame's offset, or, for the last frame (which a crash could have
    // torn), keeps everything before it and copies it aside. Never a silent loss.
    let dir = temp_dir("every-record");
    let before = {
        let store = open(&dir);
        write_everything(&store);
        dump(&store)
    };
    let log = dir.join("wal-000001.log");
    let bytes = std::fs::read(&log).unwrap();
    let mut frames = Vec::new();
    cosmoql::storage::wal::read_frames::<()>(&log, |at, payload| {
        frames.push((at as usize, payload.len()));
        Ok(())
    })
    .unwrap()
    .unwrap();
    assert!(frames.len() > 20, "{} frames", frames.len());
    for (k, (at, len)) in frames.iter().enumerate() {
        let header = cosmoql::storage::wal::FRAME_HEADER;
        for (field, byte) in
            [("length", at + 1), ("checksum", at + 5), ("header checksum", at + 9), ("record", at + header + len / 2)]
        {
            let mut damaged = bytes.clone();
            damaged[byte] ^= 0x08;
            std::fs::write(&log, &damaged).unwrap();
            let what = format!("frame {k} at {at}, its {field}");
            match Store::open(&dir, DurableOptions::default()) {
                Err(e) => assert!(
                    e.message.contains(&format!("damaged log record at byte offset {at}")),
                    "{what}: {}",
                    e.message
                ),
                Ok(store) => {
                    assert_eq!(k, frames.len() - 1, "{what}: opened");
                    let recovery = store.durable().unwrap().recovery();
                    assert!(recovery.torn_aside.is_some(), "{what}: not kept aside");
                    drop(store);
                    let _ = std::fs::remove_file(recovery.torn_aside.unwrap());
                }
            }
        }
    }
    std::fs::write(&log, &bytes).unwrap();
    assert_eq!(dump(&open(&dir)), before);
}

#[test]
fn a_directory_with_logs_and_no_current_is_refused_then_recovered() {
    let dir = temp_dir("no-current");
    let before = {
        let store = open(&dir);
        write_everything(&store);
        dump(&store)
    };
    std::fs::remove_file(dir.join("CURRENT")).unwrap();
    let logs_before = logs(&dir);
    let err = Store::open(&dir, DurableOptions::default()).unwrap_err();
    assert!(err.message.contains("holds log files (wal-000001.log) but no CURRENT file"), "{}", err.message);
    assert!(err.message.contains("cosmoql recover"), "{}", err.message);
    assert_eq!(logs(&dir), logs_before, "the logs are all there");
    assert_eq!(cosmoql::storage::durable::restore_current(&dir).unwrap().as_deref(), Some("wal-000001.log"));
    let store = open(&dir);
    assert_eq!(dump(&store), before);
}

#[test]
fn a_lock_file_that_is_a_link_is_refused_and_its_target_untouched() {
    let dir = temp_dir("lock-link");
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.with_extension("precious");
    std::fs::write(&target, "do not overwrite").unwrap();
    std::os::unix::fs::symlink(&target, dir.join("LOCK")).unwrap();
    let err = Store::open(&dir, DurableOptions::default()).unwrap_err();
    assert!(err.message.contains("LOCK is a symbolic link"), "{}", err.message);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "do not overwrite");
    let _ = std::fs::remove_file(target);
}

#[test]
fn a_damaged_record_is_refused_with_its_file_and_offset_and_can_be_set_aside() {
    let dir = temp_dir("damaged");
    {
        let store = open(&dir);
        write_everything(&store);
    }
    let log = dir.join("wal-000001.log");
    let mut bytes = std::fs::read(&log).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55;
    std::fs::write(&log, &bytes).unwrap();
    let err = Store::open(&dir, DurableOptions::default()).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Unavailable);
    assert!(err.message.contains("wal-000001.log: damaged log record at byte offset"), "{}", err.message);
    assert!(err.message.contains("cosmoql recover"), "{}", err.message);
    // Nothing was changed by the refusal.
    assert_eq!(std::fs::read(&log).unwrap(), bytes);
    let store = Store::open(&dir, DurableOptions { recover: true, ..DurableOptions::default() }).unwrap();
    let recovery = store.durable().unwrap().recovery();
    let aside = recovery.set_aside.expect("the damaged part is set aside");
    assert!(aside.to_string_lossy().contains("damaged-at-"));
    assert!(recovery.records > 0);
    // The database works from there.
    let readings = store.database("iot").unwrap().container("readings").unwrap();
    readings.upsert(&json(r#"{"id":"after","deviceId":"d"}"#), &WriteOptions::default()).unwrap();
    dump(&store);
}

#[test]
fn a_full_disk_fails_writes_cleanly_and_loses_nothing() {
    let dir = temp_dir("full");
    let faults = Faults::none();
    let options = DurableOptions { faults: Arc::clone(&faults), ..DurableOptions::default() };
    let store = Store::open(&dir, options.clone()).unwrap();
    write_everything(&store);
    let before = dump(&store);
    let (_, len) = store.durable().unwrap().log_file();
    faults.set_disk_full_at(len + 10);
    let readings = store.database("iot").unwrap().container("readings").unwrap();
    let err = readings.create(&json(r#"{"id":"x","deviceId":"dev-1","serial":"x"}"#)).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Unavailable);
    assert!(err.message.contains("disk is full"), "{}", err.message);
    let key5 = PartitionKey::from_values(&[Value::from("dev-5")]).unwrap();
    let batch = [
        BatchOperation::Create { item: json(r#"{"id":"c1","deviceId":"dev-5","serial":"c1"}"#) },
        BatchOperation::Delete { id: "b1".into(), if_match: None },
    ];
    assert!(readings.execute_batch(&key5, &batch).is_err());
    assert!(store.create_database("more").is_err());
    assert!(readings.force_split(&readings.partitions()[0].min) || readings.partitions().len() > 1);
    // Memory holds what the log holds: nothing of the refused writes.
    assert_eq!(dump(&store), before);
    assert!(store.checkpoint().is_err(), "a checkpoint does not fit either");
    // Space again: the database goes on.
    faults.set_disk_full_at(u64::MAX);
    readings.create(&json(r#"{"id":"x","deviceId":"dev-1","serial":"x"}"#)).unwrap();
    readings.execute_batch(&key5, &batch).unwrap();
    let after = dump(&store);
    drop((store, readings));
    assert_eq!(dump(&open(&dir)), after);
}

#[test]
fn a_second_opener_is_refused_while_the_first_has_it() {
    let dir = temp_dir("locked");
    let first = open(&dir);
    let err = Store::open(&dir, DurableOptions::default()).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Unavailable);
    assert!(err.message.contains("is open in another process"), "{}", err.message);
    assert!(err.message.contains(&format!("pid {}", std::process::id())), "{}", err.message);
    drop(first);
    open(&dir);
}

#[test]
fn a_directory_that_cannot_be_written_is_refused_clearly() {
    // A path under a regular file can be neither created nor written, whoever runs the test.
    let dir = temp_dir("readonly");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("file"), b"").unwrap();
    let err = Store::open(&dir.join("file").join("db"), DurableOptions::default()).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Unavailable);
    assert!(err.message.contains("cannot create the database directory"), "{}", err.message);
    // A read-only directory (where permissions apply: not for root).
    let ro = dir.join("ro");
    {
        let store = open(&ro);
        write_everything(&store);
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    std::fs::set_permissions(ro.join("LOCK"), std::fs::Permissions::from_mode(0o444)).unwrap();
    let writable = std::fs::OpenOptions::new().write(true).open(ro.join("LOCK")).is_ok();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(ro.join("LOCK"), std::fs::Permissions::from_mode(0o644)).unwrap();
    if !writable {
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        let err = Store::open(&ro, DurableOptions::default()).unwrap_err();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(err.message.contains("must be writable"), "{}", err.message);
        return;
    }
    // Root ignores permissions: a read-only file system then (a read-only bind mount of the
    // database), where the machine lets this process mount.
    let mounted = dir.join("ro-mount");
    std::fs::create_dir_all(&mounted).unwrap();
    let mount =
        |args: &[&str]| std::process::Command::new("mount").args(args).output().is_ok_and(|o| o.status.success());
    let (src, dst) = (ro.to_str().unwrap(), mounted.to_str().unwrap());
    if mount(&["--bind", src, dst]) {
        let read_only = mount(&["-o", "remount,bind,ro", dst]);
        // Nothing may panic while mounted: the mount would outlive the test.
        let result = read_only.then(|| Store::open(&mounted, DurableOptions::default()).err());
        let _ = std::process::Command::new("umount").arg(dst).output();
        if let Some(err) = result {
            let err = err.expect("opening a read-only directory is refused");
            assert_eq!(err.kind, ErrorKind::Unavailable);
            assert!(err.message.contains("Read-only file system"), "{}", err.message);
            assert!(err.message.contains("must be writable"), "{}", err.message);
            return;
        }
    }
    eprintln!("root without mount rights: the read-only directory case is not checked here");
}

#[test]
fn the_relaxed_mode_keeps_what_was_written_when_the_process_ends() {
    let dir = temp_dir("normal");
    let options = DurableOptions { sync: SyncMode::Normal, ..DurableOptions::default() };
    let before = {
        let store = Store::open(&dir, options.clone()).unwrap();
        write_everything(&store);
        dump(&store)
    };
    assert_eq!(dump(&Store::open(&dir, options).unwrap()), before);
}

#[test]
#[ignore]
fn print_dump() {
    let dir = temp_dir("print");
    let store = open(&dir);
    write_everything(&store);
    drop(store);
    println!("{}", dump(&open(&dir)));
}

/// An import into a directory goes in a frame per partition and batch: the same items and the
/// same problems (in line order) as one by one, all there after reopening; with the disk full
/// part way, what memory holds is what the log holds.
#[test]
fn imports_into_a_directory_match_imports_into_memory_and_survive_a_full_disk() {
    use cosmoql::storage::{Container, ImportOptions};
    let mut lines = String::new();
    for i in 0..3000 {
        lines += &format!("{{\"id\":\"{}\",\"k\":\"k{}\",\"serial\":\"s{}\"}}\n", i % 2900, i % 37, i % 2950);
        if i % 500 == 7 {
            lines += "not json\n";
        }
    }
    let settings = || ContainerSettings {
        split_max_items: 300,
        unique_keys: vec![UniqueKey::new(&["/serial"]).unwrap()],
        ..ContainerSettings::default()
    };
    let memory = Container::new("c", PartitionKeyDefinition::hash("/k").unwrap(), settings());
    let expected = memory.import(lines.as_bytes(), ImportOptions::default(), |_| {}).unwrap();
    let items = |c: &Container| {
        let mut v: Vec<String> =
            c.scan().map(|(_, s)| cosmoql_value::to_json_string(&s.doc.root().to_value()).unwrap()).collect();
        v.sort();
        v
    };
    let dir = temp_dir("import");
    {
        let store = open(&dir);
        let c = store
            .create_database("d")
            .unwrap()
            .create_container("c", PartitionKeyDefinition::hash("/k").unwrap(), settings())
            .unwrap();
        let got = c.import(lines.as_bytes(), ImportOptions::default(), |_| {}).unwrap();
        assert_eq!((got.imported, got.skipped, got.failed), (expected.imported, expected.skipped, expected.failed));
        let lines_of = |s: &cosmoql::storage::ImportSummary| s.problems.iter().map(|p| p.line).collect::<Vec<_>>();
        assert_eq!(lines_of(&got), lines_of(&expected), "problems in line order");
        assert_eq!(items(&c), items(&memory));
        assert!(c.partitions().len() > 1, "splits happened during the import");
        assert!(
            c.partitions().iter().all(|p| p.items <= 300 || p.logical_partitions == 1),
            "every partition split down"
        );
        c.check_indexes().unwrap();
    }
    let store = open(&dir);
    let c = store.database("d").unwrap().container("c").unwrap();
    assert_eq!(items(&c), items(&memory), "all there after reopening");
    drop((store, c));

    // A full disk part way: the import fails, and memory holds what the log holds.
    let full = temp_dir("import-full");
    let faults = Faults::none();
    let store =
        Store::open(&full, DurableOptions { faults: Arc::clone(&faults), ..DurableOptions::default() }).unwrap();
    let c = store
        .create_database("d")
        .unwrap()
        .create_container("c", PartitionKeyDefinition::hash("/k").unwrap(), settings())
        .unwrap();
    let (_, len) = store.durable().unwrap().log_file();
    faults.set_disk_full_at(len + 60_000);
    let summary = c.import(lines.as_bytes(), ImportOptions::default(), |_| {}).unwrap();
    assert!(summary.failed > 0 && summary.problems.iter().any(|p| p.message.contains("disk is full")), "{summary:?}");
    let before = dump(&store);
    drop((store, c));
    faults.set_disk_full_at(u64::MAX);
    assert_eq!(dump(&Store::open(&full, DurableOptions::default()).unwrap()), before);
}

#[test]
fn a_directory_of_other_files_is_not_taken_for_a_database() {
    let dir = temp_dir("foreign");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let err = Store::open(&dir, DurableOptions::default()).unwrap_err();
    assert!(err.message.contains("is not a cosmoql database directory (it holds `notes.txt`"), "{}", err.message);
    let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec![std::ffi::OsString::from("notes.txt")], "nothing was written there");
}

/// Two dumps are equal; if not, the lines that differ (a dump is long).
fn assert_same(actual: &str, expected: &str, what: &str) {
    if actual != expected {
        let (a, e): (Vec<&str>, Vec<&str>) = (actual.lines().collect(), expected.lines().collect());
        let at = a.iter().zip(&e).position(|(x, y)| x != y).unwrap_or(a.len().min(e.len()));
        let show = |v: &[&str]| {
            v.iter()
                .skip(at.saturating_sub(2))
                .take(5)
                .map(|l| l.chars().take(60).collect::<String>())
                .collect::<Vec<_>>()
        };
        panic!("{what}: from line {at}, found {:#?}\nexpected {:#?}", show(&a), show(&e));
    }
}

/// The log files of a database directory, sorted.
fn logs(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|f| f.starts_with("wal-"))
        .collect();
    files.sort();
    files
}

/// Waits (at most a minute) until a checkpoint is being held.
fn until_held(faults: &Faults) {
    let start = std::time::Instant::now();
    while faults.checkpoints_held() == 0 {
        assert!(start.elapsed() < std::time::Duration::from_secs(60), "the checkpoint never began");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// Writes of every kind to `readings` and a new container, made while a checkpoint is held.
fn write_more(store: &Store, round: usize) {
    let readings = store.database("iot").unwrap().container("readings").unwrap();
    let none = WriteOptions::default();
    for i in 0..60 {
        readings
            .create(&json(&format!(
                r#"{{"id":"m{round}-{i}","deviceId":"dev-{}","v":{i},"serial":"m{round}-{i}"}}"#,
                i % 23
            )))
            .unwrap();
    }
    readings.upsert(&json(r#"{"id":"r6","deviceId":"dev-6","v":600,"serial":"s6"}"#), &none).unwrap();
    let key = |d: &str| PartitionKey::from_values(&[Value::from(d)]).unwrap();
    readings.delete(&key("dev-7"), &format!("r{}", 7 + 17 * round), &none).unwrap();
    readings
        .patch(
            &key("dev-8"),
            "r8",
            &[PatchOperation::Set { path: "/round".into(), value: Value::from(round as f64) }],
            &none,
        )
        .unwrap();
    readings
        .execute_batch(
            &key("dev-9"),
            &[
                BatchOperation::Delete { id: format!("r{}", 9 + 17 * round), if_match: None },
                BatchOperation::Create {
                    item: json(&format!(r#"{{"id":"nb{round}","deviceId":"dev-9","serial":"nb{round}"}}"#)),
                },
            ],
        )
        .unwrap();
    let db = store.database("other").unwrap();
    let c = db
        .create_container(
            &format!("new{round}"),
            PartitionKeyDefinition::hash("/k").unwrap(),
            ContainerSettings::default(),
        )
        .unwrap();
    c.create(&json(r#"{"id":"1","k":"a"}"#)).unwrap();
}

#[test]
fn writes_go_on_while_a_checkpoint_copies_and_one_cut_short_loses_nothing() {
    let dir = temp_dir("fuzzy");
    let faults = Faults::none();
    let options = DurableOptions { faults: Arc::clone(&faults), ..DurableOptions::default() };
    let store = Store::open(&dir, options.clone()).unwrap();
    write_everything(&store);
    assert_eq!(logs(&dir).len(), 1);

    // A checkpoint held after it began (its log is live) and before it copies a partition:
    // writes of every kind, and a new container, are made and acknowledged meanwhile.
    faults.hold_checkpoints(true);
    let checkpoint = {
        let store = Arc::clone(&store);
        std::thread::spawn(move || store.checkpoint())
    };
    until_held(&faults);
    write_more(&store, 1);
    assert_eq!(logs(&dir).len(), 2, "the new generation is live while the old one is still CURRENT");
    let expected = dump(&store);
    faults.hold_checkpoints(false);
    checkpoint.join().unwrap().unwrap();
    assert_eq!(dump(&store), expected);
    assert_eq!(logs(&dir).len(), 1, "a finished checkpoint removes the old generation: {:?}", logs(&dir));
    drop(store);
    let store = Store::open(&dir, options.clone()).unwrap();
    assert_eq!(dump(&store), expected, "reopened from a checkpoint written while writes went on");

    // A checkpoint cut short (the store is let go while it is held): both generations stay
    // and are replayed in order at the next opening.
    faults.hold_checkpoints(true);
    let durable = Arc::clone(store.durable().unwrap());
    let checkpoint = std::thread::spawn(move || durable.checkpoint());
    until_held(&faults);
    write_more(&store, 2);
    let expected = dump(&store);
    drop(store);
    faults.hold_checkpoints(false);
    checkpoint.join().unwrap().unwrap();
    assert_eq!(logs(&dir).len(), 2, "{:?}", logs(&dir));
    let store = Store::open(&dir, options.clone()).unwrap();
    assert_eq!(store.durable().unwrap().recovery().logs, 2);
    assert_eq!(dump(&store), expected, "reopened from a log and an unfinished checkpoint's");
    assert_eq!(logs(&dir).len(), 1, "opening finishes a checkpoint cut short: {:?}", logs(&dir));
    write_more(&store, 3);
    let expected = dump(&store);
    drop(store);
    let store = Store::open(&dir, options).unwrap();
    assert_eq!(store.durable().unwrap().recovery().logs, 1);
    assert_eq!(dump(&store), expected);
}

/// Lets a held checkpoint take one step; waits until it took it and is held again (or ended).
fn one_step(faults: &Faults, checkpoint: &std::thread::JoinHandle<Result<(), cosmoql::StorageError>>) {
    let before = faults.checkpoint_steps_taken();
    faults.release_checkpoint_steps(1);
    let start = std::time::Instant::now();
    let done =
        || checkpoint.is_finished() || (faults.checkpoint_steps_taken() > before && faults.checkpoints_held() == 1);
    while !done() {
        assert!(start.elapsed() < std::time::Duration::from_secs(60), "the checkpoint did not go on");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[test]
fn a_checkpoint_copies_big_logical_partitions_and_long_histories_a_stretch_at_a_time() {
    let dir = temp_dir("stretches");
    let faults = Faults::none();
    let options = DurableOptions { faults: Arc::clone(&faults), ..DurableOptions::default() };
    let store = Store::open(&dir, options.clone()).unwrap();
    let db = store.create_database("d").unwrap();
    // One logical partition of 5,000 items (no key) with 5,000 kept changes: more than a stretch
    // of either.
    let settings = ContainerSettings { change_feed_retention: Some(3600), ..ContainerSettings::default() };
    let c = db.create_container("keyless", PartitionKeyDefinition::none(), settings).unwrap();
    let item = |id: String, v: i64| json(&format!(r#"{{"id":"{id}","v":{v}}}"#));
    for i in 0..5000 {
        c.create(&item(format!("i{i}"), i)).unwrap();
    }
    let none = WriteOptions::default();
    let key = PartitionKey::none();
    faults.hold_checkpoints(true);
    let checkpoint = {
        let store = Arc::clone(&store);
        std::thread::spawn(move || store.checkpoint())
    };
    until_held(&faults);
    // Between every two stretches: items created, replaced (early and late ones, so before and
    // after the copy reaches them), patched and deleted.
    let mut steps = 0;
    while !checkpoint.is_finished() {
        let n = steps as i64;
        c.create(&item(format!("new{n}"), n)).unwrap();
        c.replace(&key, &format!("i{n}"), &item(format!("i{n}"), -n), &none).unwrap();
        c.replace(&key, &format!("i{}", 4999 - n), &item(format!("i{}", 4999 - n), -n), &none).unwrap();
        c.patch(
            &key,
            &format!("i{}", 2500 + n),
            &[PatchOperation::Set { path: "/p".into(), value: Value::from(1.0) }],
            &none,
        )
        .unwrap();
        c.delete(&key, &format!("i{}", 100 + n), &none).unwrap();
        c.delete(&key, &format!("i{}", 4000 + n), &none).unwrap();
        one_step(&faults, &checkpoint);
        steps += 1;
    }
    checkpoint.join().unwrap().unwrap();
    assert!(steps >= 6, "three stretches of items and three of kept changes, at least: {steps}");
    let expected = dump(&store);
    assert_eq!(logs(&dir).len(), 1);
    drop((store, c, db));
    assert_same(&dump(&Store::open(&dir, options).unwrap()), &expected, "reopened from the checkpoint alone");
}

#[test]
fn checkpoint_frames_stay_small_whatever_the_history_holds() {
    let dir = temp_dir("frames");
    let store = open(&dir);
    let db = store.create_database("d").unwrap();
    let settings = ContainerSettings { change_feed_retention: Some(3600), ..ContainerSettings::default() };
    let c = db.create_container("c", PartitionKeyDefinition::hash("/k").unwrap(), settings).unwrap();
    // 60 versions of one 200 KB item: 12 MB of kept changes in one partition.
    let pad = "x".repeat(200_000);
    for v in 0..60 {
        c.upsert(&json(&format!(r#"{{"id":"a","k":"a","v":{v},"pad":"{pad}"}}"#)), &WriteOptions::default()).unwrap();
    }
    store.checkpoint().unwrap();
    let (path, _) = store.durable().unwrap().log_file();
    let mut largest = 0;
    cosmoql::storage::wal::read_frames(&path, |_, payload| {
        largest = largest.max(payload.len());
        Ok::<(), ()>(())
    })
    .unwrap()
    .unwrap();
    assert!(largest < 5 << 20, "a checkpoint frame of {largest} bytes");
    let expected = dump(&store);
    drop((store, c, db));
    assert_eq!(dump(&open(&dir)), expected);
}

#[test]
fn no_container_is_created_in_a_deleted_database() {
    let dir = temp_dir("deleted-db");
    let store = open(&dir);
    let db = store.create_database("gone").unwrap();
    store.delete_database("gone").unwrap();
    let err = db
        .create_container("c", PartitionKeyDefinition::hash("/k").unwrap(), ContainerSettings::default())
        .unwrap_err();
    assert_eq!(err.status_code(), 404, "{err}");
    let expected = dump(&store);
    drop((store, db));
    assert_eq!(dump(&open(&dir)), expected);
}

/// A database in `dir` whose checkpoints start on their own after every few kilobytes, with a
/// container `c` keyed on `/k`.
fn with_small_checkpoints(dir: &Path, faults: &Arc<Faults>) -> (DurableOptions, Arc<Store>, Arc<Container>) {
    let options = DurableOptions { faults: Arc::clone(faults), checkpoint_bytes: 4 << 10, ..DurableOptions::default() };
    let store = Store::open(dir, options.clone()).unwrap();
    let c = store
        .create_database("d")
        .unwrap()
        .create_container("c", PartitionKeyDefinition::hash("/k").unwrap(), ContainerSettings::default())
        .unwrap();
    (options, store, c)
}

/// The `i`th item written to grow the log.
fn padded(i: usize) -> Value {
    json(&format!(r#"{{"id":"{i}","k":"k{}","pad":"{}"}}"#, i % 7, "x".repeat(100)))
}

#[test]
fn a_store_let_go_during_a_background_checkpoint_can_be_opened_again_at_once() {
    let dir = temp_dir("background");
    let faults = Faults::none();
    let (options, store, c) = with_small_checkpoints(&dir, &faults);
    faults.hold_checkpoints(true);
    let mut i = 0;
    while faults.checkpoints_held() == 0 {
        assert!(i < 10_000, "no checkpoint started on its own");
        c.create(&padded(i)).unwrap();
        i += 1;
    }
    // Writes go on while it is held; then the store is let go with the checkpoint still held.
    for j in 0..50 {
        c.create(&json(&format!(r#"{{"id":"late{j}","k":"k{}"}}"#, j % 7))).unwrap();
    }
    let expected = dump(&store);
    drop((store, c));
    let release = {
        let faults = Arc::clone(&faults);
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            faults.hold_checkpoints(false);
        })
    };
    // The checkpoint stops at its next step and lets the directory go: opening waits for that.
    let store = Store::open(&dir, options).unwrap();
    release.join().unwrap();
    assert_eq!(store.durable().unwrap().recovery().logs, 2, "the checkpoint was cut short");
    assert_same(&dump(&store), &expected, "reopened at once");
    assert_eq!(logs(&dir).len(), 1);
}

#[test]
fn a_failed_background_checkpoint_is_reported_and_not_retried_until_the_log_doubles() {
    let dir = temp_dir("failing");
    let faults = Faults::none();
    let (_, store, c) = with_small_checkpoints(&dir, &faults);
    faults.fail_checkpoints.store(true, std::sync::atomic::Ordering::Relaxed);
    let durable = Arc::clone(store.durable().unwrap());
    let begun = || faults.checkpoints_begun.load(std::sync::atomic::Ordering::Relaxed);
    let mut i = 0;
    let mut write = |n: usize| {
        for _ in 0..n {
            c.create(&padded(i)).unwrap();
            i += 1;
        }
    };
    let start = std::time::Instant::now();
    while durable.checkpoint_failure().is_none() {
        assert!(start.elapsed() < std::time::Duration::from_secs(60), "no checkpoint started on its own");
        write(1);
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let failure = durable.checkpoint_failure().unwrap();
    assert!(failure.contains("injected failure"), "{failure}");
    // Writes go on, and no checkpoint is tried at each of them: only once the log has doubled.
    let (_, len) = durable.log_file();
    let tried = begun();
    write(5);
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!(begun(), tried, "retried at once");
    while durable.log_file().1 < 2 * len + 2048 {
        write(5);
    }
    let start = std::time::Instant::now();
    while begun() == tried {
        assert!(start.elapsed() < std::time::Duration::from_secs(60), "never retried");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // Once checkpoints work again, one clears the report.
    faults.fail_checkpoints.store(false, std::sync::atomic::Ordering::Relaxed);
    store.checkpoint().unwrap();
    assert_eq!(durable.checkpoint_failure(), None);
}

#[test]
fn a_containers_vector_embedding_policy_is_kept_and_queries_default_to_it() {
    let dir = temp_dir("kept-properties");
    let body = json(
        r#"{"id": "vectors", "vectorEmbeddingPolicy": {"vectorEmbeddings": [
            {"path": "/v", "dataType": "float32", "distanceFunction": "euclidean", "dimensions": 3}]}}"#,
    );
    let distance = |c: &cosmoql::ContainerClient| {
        c.query_items_blocking::<Value>(
            "SELECT VALUE VectorDistance(c.v, [0, 1, 0]) FROM c",
            cosmoql::QueryOptions::default(),
        )
        .unwrap()
    };
    {
        let client = CosmosClient::open(&dir).unwrap();
        let db = client.create_database("db").unwrap();
        let properties = cosmoql::ContainerProperties::new("vectors", "/k").unwrap().kept_properties(&body).unwrap();
        let c = db.create_container(properties).unwrap();
        c.create_item(&json(r#"{"id": "a", "k": "x", "v": [1, 0, 0]}"#)).unwrap();
        // Euclidean, as the policy says (cosine would give 0).
        assert_eq!(distance(&c), vec![Value::from(2f64.sqrt())]);
    }
    let client = CosmosClient::open(&dir).unwrap();
    let c = client.database_client("db").container_client("vectors").unwrap();
    assert_eq!(c.read_properties().get("vectorEmbeddingPolicy"), body.get("vectorEmbeddingPolicy"));
    assert_eq!(distance(&c), vec![Value::from(2f64.sqrt())]);
    // EXPLAIN (and the REST query plan) plans it as it runs: euclidean orders nearest first.
    let sql = "SELECT TOP 1 c.id FROM c ORDER BY VectorDistance(c.v, [0, 1, 0])";
    let explain = c.explain(sql, cosmoql::QueryOptions::default(), false).unwrap();
    assert!(!explain.plan.query.order_by[0].descending);
    // A policy the service refuses is refused at creation.
    let bad =
        json(r#"{"vectorEmbeddingPolicy": {"vectorEmbeddings": [{"path": "/v", "distanceFunction": "manhattan"}]}}"#);
    assert!(cosmoql::ContainerProperties::new("v2", "/k").unwrap().kept_properties(&bad).is_err());
}
