//! The mirror against the store: any writes, deletes and splits followed by a sync leave the
//! mirror holding exactly the container's items (a property test); the analytical time to live
//! apart from the transactional one; the schema shown.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use cosmoql::value::{parse_json, to_json_string, Value};
use cosmoql::{ContainerClient, ContainerProperties, ManualClock, PartitionKey, QueryOptions};
use cosmoql_analytics::{values, Analytics, Mirror, SchemaMode, SyncPolicy};
use proptest::prelude::*;

/// `v` with every object's properties sorted and null properties left out (the mirror holds a
/// missing property as null), as JSON text.
fn canonical(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(map) => {
                let m: BTreeMap<String, Value> =
                    map.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.to_string(), sorted(v))).collect();
                let mut out = cosmoql::value::Map::default();
                for (k, v) in m {
                    out.insert(k, v);
                }
                Value::from(out)
            }
            Value::Array(items) => Value::from(items.iter().map(sorted).collect::<Vec<_>>()),
            other => other.clone(),
        }
    }
    to_json_string(&sorted(v)).unwrap()
}

/// The mirror's rows, canonical and sorted.
fn mirror_rows(mirror: &Mirror) -> Vec<String> {
    let snapshot = mirror.snapshot();
    let batches: Vec<_> = snapshot.partitions.iter().flat_map(|p| p.batches.clone()).collect();
    let mut rows: Vec<String> = values::rows(&batches).unwrap().iter().map(canonical).collect();
    rows.sort();
    rows
}

/// The container's items with the mirror's system columns, canonical and sorted.
fn store_rows(client: &ContainerClient) -> Vec<String> {
    let items: Vec<Value> = client.query_items_blocking("SELECT * FROM c", QueryOptions::default()).unwrap();
    let mut rows: Vec<String> = items
        .into_iter()
        .map(|mut item| {
            let map = item.as_object_mut().unwrap();
            map.shift_remove("_self");
            map.shift_remove("_attachments");
            canonical(&item)
        })
        .collect();
    rows.sort();
    rows
}

fn container(partitions: usize, mut properties: ContainerProperties) -> ContainerClient {
    properties.settings.initial_partitions = partitions;
    ContainerClient::standalone(properties).unwrap()
}

#[derive(Debug, Clone)]
enum Op {
    Upsert { id: u8, key: u8, n: i32, text: bool },
    Delete { id: u8, key: u8 },
    Split,
    Sync,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..40, 0u8..6, -5i32..5, any::<bool>()).prop_map(|(id, key, n, text)| Op::Upsert { id, key, n, text }),
        3 => (0u8..40, 0u8..6).prop_map(|(id, key)| Op::Delete { id, key }),
        1 => Just(Op::Split),
        2 => Just(Op::Sync),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn writes_deletes_and_splits_then_a_sync_leave_the_mirror_equal_to_the_store(ops in proptest::collection::vec(op(), 1..60)) {
        let client = container(1, ContainerProperties::new("c", "/k").unwrap());
        let analytics = Analytics::new(SchemaMode::WellDefined).unwrap().with_container("db", &client).unwrap();
        let mirror = analytics.mirror("db", "c").unwrap();
        for op in ops {
            match op {
                Op::Upsert { id, key, n, text } => {
                    // A property that changes type (`v`) and one in a nested object.
                    let v = if text { format!("\"t{n}\"") } else { n.to_string() };
                    let item = parse_json(&format!(r#"{{"id":"i{id}","k":"k{key}","v":{v},"o":{{"n":{n}}}}}"#)).unwrap();
                    client.upsert_item(&item).unwrap();
                }
                Op::Delete { id, key } => {
                    let _ = client.delete_item(PartitionKey::from(format!("k{key}").as_str()), &format!("i{id}"));
                }
                Op::Split => {
                    let c = client.container();
                    let n = c.partition_count();
                    c.split_to(n + 1);
                }
                Op::Sync => {
                    mirror.sync().unwrap();
                }
            }
        }
        mirror.sync().unwrap();
        // `v` is well-defined: its first type holds, values of the other are null in the
        // mirror; compare the rest whole and `v` where it is of the column's type.
        let v_type = mirror.schema().columns().get("v").map(|f| f.ty.name());
        let strip = |rows: Vec<String>| -> Vec<String> {
            rows.into_iter()
                .map(|r| {
                    let mut v = parse_json(&r).unwrap();
                    let map = v.as_object_mut().unwrap();
                    let keep = matches!(
                        (map.get("v"), v_type),
                        (Some(Value::String(_)), Some("string")) | (Some(Value::Number(_)), Some("int64" | "float64"))
                    );
                    if !keep {
                        map.shift_remove("v");
                    }
                    canonical(&v)
                })
                .collect()
        };
        let mut store = strip(store_rows(&client));
        let mut mirrored = strip(mirror_rows(&mirror));
        store.sort();
        mirrored.sort();
        prop_assert_eq!(mirrored, store);
        prop_assert_eq!(mirror.snapshot().partitions.len(), client.container().partition_count());
    }
}

#[test]
fn items_expired_from_the_container_stay_while_the_analytical_ttl_keeps_them() {
    let clock = Arc::new(ManualClock::default());
    let props = ContainerProperties::new("c", "/k").unwrap().default_ttl(Some(100)).analytical_storage_ttl(Some(-1));
    let client = container(2, props);
    client.container().set_clock(clock.clone());
    for i in 0..6 {
        client.create_item(&parse_json(&format!(r#"{{"id":"i{i}","k":"k{}"}}"#, i % 3)).unwrap()).unwrap();
    }
    let analytics = Analytics::new(SchemaMode::WellDefined).unwrap().with_container("db", &client).unwrap();
    let count = |a: &Analytics| a.sql("SELECT COUNT(*) AS n FROM c").unwrap()[0].get("n").clone();
    assert_eq!(count(&analytics), Value::from(6.0));
    // A user's delete leaves the analytical store too.
    client.delete_item(PartitionKey::from("k0"), "i0").unwrap();
    assert_eq!(count(&analytics), Value::from(5.0));
    // Past the transactional time to live: gone from the container, kept in the analytical store.
    clock.advance(Duration::from_secs(150));
    let live: Vec<Value> =
        client.query_items_blocking("SELECT VALUE COUNT(1) FROM c", QueryOptions::default()).unwrap();
    assert_eq!(live, vec![Value::from(0.0)]);
    assert_eq!(count(&analytics), Value::from(5.0));
    // A positive analytical time to live lets them go after their time.
    client.replace_analytical_storage_ttl(Some(200)).unwrap();
    assert_eq!(count(&analytics), Value::from(5.0));
    clock.advance(Duration::from_secs(60));
    assert_eq!(count(&analytics), Value::from(0.0));
    // Back to -1: "all the data will show up again" (the service deletes nothing either).
    client.replace_analytical_storage_ttl(Some(-1)).unwrap();
    assert_eq!(count(&analytics), Value::from(5.0));
}

#[test]
fn a_container_without_an_analytical_store_is_not_a_table() {
    let account = cosmoql::CosmosClient::new();
    let db = account.create_database("shop").unwrap();
    db.create_container(ContainerProperties::new("plain", "/k").unwrap()).unwrap();
    let orders = db
        .create_container(ContainerProperties::new("orders", "/k").unwrap().analytical_storage_ttl(Some(-1)))
        .unwrap();
    orders.create_item(&parse_json(r#"{"id":"1","k":"a","total":12.5}"#).unwrap()).unwrap();
    let analytics = Analytics::new(SchemaMode::WellDefined).unwrap().with_account(&account);
    assert_eq!(analytics.tables(), vec![("shop".to_string(), "orders".to_string())]);
    let rows = analytics.sql("SELECT total FROM shop.orders").unwrap();
    assert_eq!(rows, vec![parse_json(r#"{"total":12.5}"#).unwrap()]);
    let err = analytics.sql("SELECT * FROM shop.plain").unwrap_err();
    assert!(
        err.message.ends_with(
            "not found (container `plain` of database `shop` has no analytical store: set its \
             analyticalStorageTtl; -1 keeps every item)"
        ),
        "{err}"
    );
    // A name no container has gets DataFusion's message alone.
    let err = analytics.sql("SELECT * FROM shop.nowhere").unwrap_err();
    assert!(err.message.ends_with("not found"), "{err}");
    let err = analytics.mirror("shop", "plain").unwrap_err();
    assert!(err.message.contains("analyticalStorageTtl"), "{err}");
    // Made later, found at the next statement; and joined with another container.
    let later =
        db.create_container(ContainerProperties::new("later", "/k").unwrap().analytical_storage_ttl(Some(-1))).unwrap();
    assert_eq!(analytics.sql("SELECT COUNT(*) AS n FROM shop.later").unwrap()[0].get("n"), &Value::from(0.0));
    later.create_item(&parse_json(r#"{"id":"x","k":"a","label":"first"}"#).unwrap()).unwrap();
    let joined = analytics.sql("SELECT o.total, l.label FROM shop.orders o JOIN shop.later l ON o.k = l.k").unwrap();
    assert_eq!(joined, vec![parse_json(r#"{"total":12.5,"label":"first"}"#).unwrap()]);
}

#[test]
fn a_parse_error_points_at_the_query() {
    let client = container(1, ContainerProperties::new("c", "/k").unwrap());
    client.create_item(&parse_json(r#"{"id":"1","k":"a"}"#).unwrap()).unwrap();
    let analytics = Analytics::new(SchemaMode::WellDefined).unwrap().with_container("db", &client).unwrap();
    // The parser's position, the end of the text, an unknown column's first mention.
    for (sql, caret_at) in [
        ("SELECT COUNT(*) FROM c WHERE x = = 1", 33),
        ("SELECT COUNT(*) FROM c WHERE", 23),
        ("SELECT k, nosuch FROM c", 10),
    ] {
        let err = analytics.sql(sql).unwrap_err();
        let rendered = err.render(sql);
        let caret_line = rendered.lines().last().unwrap();
        assert_eq!(caret_line.find('^'), Some(caret_at), "{sql}\n{rendered}");
    }
}

#[test]
fn the_mirrors_sync_on_query_by_hand_or_on_an_interval() {
    let client = container(2, ContainerProperties::new("c", "/k").unwrap());
    let write = |from: usize, to: usize| {
        for i in from..to {
            let item = parse_json(&format!(r#"{{"id":"{i}","k":"k{}","n":{i}}}"#, i % 3)).unwrap();
            client.create_item(&item).unwrap();
        }
    };
    write(0, 10);
    let analytics = Analytics::new(SchemaMode::WellDefined)
        .unwrap()
        .with_container("db", &client)
        .unwrap()
        .with_sync_policy(SyncPolicy::Manual);
    let count = |a: &Analytics| to_json_string(&a.sql("SELECT COUNT(*) AS n FROM c").unwrap()[0]).unwrap();
    // By hand: nothing until a sync.
    assert_eq!(count(&analytics), r#"{"n":0}"#);
    analytics.sync().unwrap();
    assert_eq!(count(&analytics), r#"{"n":10}"#);
    write(10, 15);
    assert_eq!(count(&analytics), r#"{"n":10}"#);
    // On an interval: the thread catches up (waited for, up to a minute, on a busy machine).
    let analytics = Arc::new(analytics);
    let interval = analytics.sync_every(Duration::from_millis(10)).unwrap();
    let started = std::time::Instant::now();
    while count(&analytics) != r#"{"n":15}"# {
        assert!(started.elapsed() < Duration::from_secs(60), "the interval sync never caught up");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(interval.last_error(), None);
    // Stopped with its handle: later writes wait for a sync by hand.
    drop(interval);
    write(15, 20);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(count(&analytics), r#"{"n":15}"#);
    analytics.sync().unwrap();
    assert_eq!(count(&analytics), r#"{"n":20}"#);
    // The store dropped first: the thread ends by itself (its handle's drop does not hang).
    let interval = analytics.sync_every(Duration::from_millis(10)).unwrap();
    drop(analytics);
    drop(interval);
}

#[test]
fn a_partition_of_many_changes_is_observed_apart_and_filed_in_one_pass() {
    // Past the changes at which the schema observes on a thread of its own (8,192), in one
    // partition, then more into the rows already filed; one item of each kind the schema judges.
    let client = container(1, ContainerProperties::new("c", "/k").unwrap());
    let write = |from: usize, to: usize| {
        for i in from..to {
            let extra = match i % 1000 {
                7 => r#","mixed":[1,"x"]"#,
                8 => r#","n":"a string where numbers were""#,
                _ => "",
            };
            let text = format!(r#"{{"id":"{i}","k":"k{}","n":{i},"s":"v{}"{extra}}}"#, i % 97, i % 13);
            client.create_item(&parse_json(&text).unwrap()).unwrap();
        }
    };
    write(0, 10_000);
    let mirror = Mirror::new(Arc::clone(client.container()), SchemaMode::WellDefined);
    mirror.sync().unwrap();
    // The items with a mixed-type array are left out; the others are there, each once.
    let kept = |rows: Vec<String>| rows.into_iter().filter(|r| !r.contains("\"mixed\"")).collect::<Vec<_>>();
    let (m, s) = (mirror_rows(&mirror), kept(store_rows(&client)));
    assert_eq!(m.len(), 9_990);
    // The strings where numbers were are not represented (nulls are left out of the rows).
    assert_eq!(m.iter().filter(|r| !r.contains(r#""n":"#)).count(), 10);
    assert_eq!(m.len(), s.len());
    assert_eq!(mirror.schema().dropped().type_mismatches, 10);
    write(10_000, 19_000);
    mirror.sync().unwrap();
    assert_eq!(mirror_rows(&mirror).len(), 18_981);
    assert_eq!(mirror.schema().dropped().items, 19);
}

#[test]
fn a_partition_observed_in_two_halves_has_the_schema_of_its_items_in_order() {
    // 20,000 changes in one partition: its halves are observed at once. In the first case the
    // second half brings new properties (nested ones, and a name repeated but for case) and widens a
    // column, which the first half's schema takes in; in the second, a property's first type in
    // the second half is not the one the first half fixed, so the second half is observed again
    // in order.
    for conflict in [false, true] {
        let client = container(1, ContainerProperties::new("c", "/k").unwrap());
        let mut serial = cosmoql_analytics::Schema::new(SchemaMode::WellDefined);
        for i in 0..20_000 {
            let late = if i < 10_000 { String::new() } else { format!(r#","late":{{"x":[{i}]}},"S":"u{i}""#) };
            let n = if i >= 15_000 && i % 2 == 1 { format!("{i}.5") } else { format!("{i}") };
            let code = match (conflict, i) {
                (true, 9_000) => r#","code":1"#,
                (true, 12_000) => r#","code":"one""#,
                _ => "",
            };
            let text = format!(r#"{{"id":"{i}","k":"k{}","n":{n},"s":"v{}"{late}{code}}}"#, i % 97, i % 13);
            let item = parse_json(&text).unwrap();
            serial.observe(&item);
            client.create_item(&item).unwrap();
        }
        let mirror = Mirror::new(Arc::clone(client.container()), SchemaMode::WellDefined);
        mirror.sync().unwrap();
        assert_eq!(mirror.schema(), serial, "conflict: {conflict}");
        assert_eq!(mirror.schema().dropped().type_mismatches, u64::from(conflict));
        // "S" beside "s" in one object: a name repeated but for case, in the second half.
        assert!(!mirror.schema().columns().get("s").unwrap().exact);
        assert_eq!(mirror.schema().dropped().case_duplicates, 10_000);
        assert_eq!(mirror_rows(&mirror).len(), 20_000);
    }
}

/// A first build of many items reads, observes and files partitions on both cores: the mirror
/// holds every item but those a mixed-type array leaves out, each in its own row (a row given
/// another's flag would show), and a later write is synced on top.
#[test]
fn a_first_build_on_both_cores_holds_every_represented_item() {
    let client = container(4, ContainerProperties::new("c", "/k").unwrap());
    let mut lines = String::new();
    for i in 0..20_000 {
        let a = if i % 97 == 0 { r#"[1,"x"]"#.to_string() } else { format!("[{i}]") };
        lines.push_str(&format!(r#"{{"id":"i{i}","k":"k{}","n":{i},"a":{a}}}"#, i % 101));
        lines.push('\n');
    }
    client.import(lines.as_bytes(), cosmoql::ImportOptions::default()).unwrap();
    let analytics = Analytics::new(SchemaMode::WellDefined).unwrap().with_container("db", &client).unwrap();
    let mirror = analytics.mirror("db", "c").unwrap();
    let report = mirror.sync().unwrap();
    assert_eq!(report.changed, 20_000);
    assert!(client.container().partition_count() >= 4);
    let represented =
        |rows: Vec<String>| -> Vec<String> { rows.into_iter().filter(|r| !r.contains(r#""x""#)).collect() };
    let store = represented(store_rows(&client));
    assert_eq!(store.len(), 20_000 - 207);
    assert_eq!(mirror_rows(&mirror), store);
    client.upsert_item(&parse_json(r#"{"id":"late","k":"k1","n":1,"a":[2]}"#).unwrap()).unwrap();
    assert_eq!(mirror.sync().unwrap().changed, 1);
    assert_eq!(mirror_rows(&mirror), represented(store_rows(&client)));
}
