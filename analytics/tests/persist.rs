//! A durable database's mirrors between processes: the next process reads them back from the
//! database directory when its containers are as the files say, and builds them again, with the
//! same results, whenever they are not (writes since, a split, a damaged or torn file).

use std::path::{Path, PathBuf};

use cosmoql::value::{parse_json, to_json_string, Value};
use cosmoql::{ContainerProperties, CosmosClient};
use cosmoql_analytics::{Analytics, SchemaMode, SyncReport};

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn item(i: usize) -> Value {
    let tags = if i == 7 { r#"[1,"mixed"]"# } else { r#"["a","b"]"# };
    parse_json(&format!(
        r#"{{"id":"{i}","k":"k{}","n":{},"x":{},"site":"s{}","tags":{tags},"at":{{"city":"c{}"}}}}"#,
        i % 37,
        i % 11,
        i as f64 / 8.0,
        i % 5,
        i % 3
    ))
    .unwrap()
}

/// A durable database at `dir` with container `db.c` (3 partitions, an analytical store) holding
/// items `0..n`.
fn create(dir: &Path, n: usize) {
    let client = CosmosClient::open(dir).unwrap();
    let db = client.create_database("db").unwrap();
    let mut properties = ContainerProperties::new("c", "/k").unwrap().analytical_storage_ttl(Some(-1));
    properties.settings.initial_partitions = 3;
    let c = db.create_container(properties).unwrap();
    for i in 0..n {
        c.create_item(&item(i)).unwrap();
    }
}

const QUERIES: &[&str] = &[
    "SELECT COUNT(*) AS n, SUM(n) AS s, AVG(x) AS a FROM c",
    "SELECT site, COUNT(*) AS n, MAX(x) AS m FROM db.c GROUP BY site ORDER BY site",
    "SELECT at.city AS city, COUNT(*) AS n FROM c WHERE array_has(tags, 'a') GROUP BY at.city ORDER BY city",
    "SELECT id, _rid, _etag, _ts FROM c WHERE n = 3 ORDER BY id LIMIT 5",
];

/// Opens the database at `dir` as a new process would: the first sync's report, the queries'
/// results, and the schema's description.
fn open(dir: &Path, write: impl FnOnce(&CosmosClient)) -> (SyncReport, Vec<String>, String, usize) {
    let client = CosmosClient::open(dir).unwrap();
    write(&client);
    let analytics = Analytics::new(SchemaMode::WellDefined).unwrap().with_account(&client);
    let synced = analytics.sync().unwrap();
    assert_eq!(synced.len(), 1);
    let results = QUERIES
        .iter()
        .map(|q| analytics.sql(q).unwrap().iter().map(|r| to_json_string(r).unwrap()).collect::<Vec<_>>().join("\n"))
        .collect();
    let mirror = analytics.mirror("db", "c").unwrap();
    assert_eq!(mirror.persist_error(), None);
    (synced[0].report, results, mirror.schema().describe(), mirror.memory_bytes())
}

fn manifest(dir: &Path) -> PathBuf {
    dir.join("analytics").join("db").join("c").join("manifest")
}

#[test]
fn the_next_process_reads_the_mirror_back_and_gets_the_same_results() {
    let dir = scratch("persist-round-trip");
    create(&dir, 3000);
    let (first, built, schema, built_bytes) = open(&dir, |_| {});
    assert!(!first.restored);
    assert_eq!(first.rebuilt, 3);
    assert!(manifest(&dir).exists());
    assert!(schema.contains("items with a mixed-type array 1"), "{schema}");

    let (second, restored, schema_again, restored_bytes) = open(&dir, |_| {});
    assert!(second.restored, "{second:?}");
    // Its columns read back share each batch's buffer, counted once: about the bytes built.
    assert!(restored_bytes < built_bytes * 3 / 2 && restored_bytes > built_bytes / 2, "{restored_bytes} {built_bytes}");
    assert_eq!((second.rebuilt, second.changed), (0, 0));
    assert_eq!(restored, built);
    assert_eq!(schema_again, schema);

    // A write after the mirror was read back: its partition is built again, and written.
    let (third, with_write, _, _) = open(&dir, |_| {});
    assert!(third.restored);
    let client = CosmosClient::open(&dir).unwrap();
    let analytics = Analytics::new(SchemaMode::WellDefined).unwrap().with_account(&client);
    assert!(analytics.sync().unwrap()[0].report.restored);
    client.database_client("db").container_client("c").unwrap().create_item(&item(5000)).unwrap();
    let report = analytics.sync().unwrap()[0].report;
    assert_eq!((report.changed, report.rebuilt, report.restored), (1, 1, false));
    let n = analytics.sql("SELECT COUNT(*) AS n FROM c").unwrap();
    assert_eq!(n[0].get("n"), &Value::from(3000.0));
    drop((analytics, client));
    let (fourth, after_write, _, _) = open(&dir, |_| {});
    assert!(fourth.restored, "the files written after the write are read back");
    assert_ne!(after_write, with_write);
    assert!(after_write[0].starts_with(r#"{"n":3000,"#), "{}", after_write[0]);
}

#[test]
fn files_the_container_no_longer_matches_or_that_do_not_check_out_are_built_again() {
    let dir = scratch("persist-rebuilt");
    create(&dir, 2000);
    let (_, built, _, _) = open(&dir, |_| {});
    let expected_after_write = {
        let scratch_dir = scratch("persist-rebuilt-reference");
        create(&scratch_dir, 2000);
        open(&scratch_dir, |c| {
            c.database_client("db").container_client("c").unwrap().create_item(&item(9000)).unwrap();
        })
        .1
    };

    // A byte of a partition's file changed: its checksum fails, the mirror is built again.
    let file = manifest(&dir).with_file_name("p1.arrow");
    let mut bytes = std::fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&file, &bytes).unwrap();
    let (report, results, _, _) = open(&dir, |_| {});
    assert!(!report.restored);
    assert_eq!(results, built);
    // ... and written again, so the next process reads it back.
    assert!(open(&dir, |_| {}).0.restored);

    // A torn manifest.
    let text = std::fs::read(manifest(&dir)).unwrap();
    std::fs::write(manifest(&dir), &text[..text.len() - 10]).unwrap();
    let (report, results, _, _) = open(&dir, |_| {});
    assert!(!report.restored);
    assert_eq!(results, built);

    // A file shorter than the manifest says.
    std::fs::write(&file, &std::fs::read(&file).unwrap()[..100]).unwrap();
    let (report, results, _, _) = open(&dir, |_| {});
    assert!(!report.restored);
    assert_eq!(results, built);

    // An item written by a process that did not sync the mirror: the files are older than it.
    let (report, results, _, _) = open(&dir, |client| {
        client.database_client("db").container_client("c").unwrap().create_item(&item(9000)).unwrap();
    });
    assert!(!report.restored);
    // (Not the system properties: the reference database's items were written at other times.)
    assert_eq!(results[..3], expected_after_write[..3]);

    // An item deleted the same way.
    let (report, _, _, _) = open(&dir, |client| {
        let c = client.database_client("db").container_client("c").unwrap();
        c.delete_item(cosmoql::PartitionKey::from("k9"), "9000").unwrap();
        c.delete_item(cosmoql::PartitionKey::from("k9"), "9").unwrap();
    });
    assert!(!report.restored);

    // A split: other partitions than the files'.
    let (report, _, _, _) = open(&dir, |client| {
        client.database_client("db").container_client("c").unwrap().container().split_to(5);
    });
    assert!(!report.restored);
    let (report, results, _, _) = open(&dir, |_| {});
    assert!(report.restored);
    assert!(results[0].starts_with(r#"{"n":1998,"#), "{}", results[0]);
}

#[test]
fn a_container_made_again_under_its_name_does_not_read_the_old_ones_files() {
    let dir = scratch("persist-made-again");
    create(&dir, 500);
    assert!(!open(&dir, |_| {}).0.restored);
    let (report, results, _, _) = open(&dir, |client| {
        let db = client.database_client("db");
        db.delete_container("c").unwrap();
        let mut properties = ContainerProperties::new("c", "/k").unwrap().analytical_storage_ttl(Some(-1));
        properties.settings.initial_partitions = 3;
        let c = db.create_container(properties).unwrap();
        for i in 0..500 {
            c.create_item(&item(i + 1)).unwrap();
        }
    });
    assert!(!report.restored, "another container, with the same partitions and LSNs");
    assert!(results[0].starts_with(r#"{"n":499,"#), "{}", results[0]);
}
