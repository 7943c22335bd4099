//! Time to live and unique keys, with the service's rules: `defaultTtl` absent, -1 or N seconds
//! and an item's own `ttl`; an expired item disappears from reads and queries at once; a unique
//! key policy, set at creation, refuses a second item with the same values in a logical
//! partition (409, the service's wording), in every kind of write and in batches. Time is a
//! manual clock.

use std::sync::Arc;
use std::time::Duration;

use cosmoql::storage::{ManualClock, PartitionKey};
use cosmoql::value::{parse_json, Value};
use cosmoql::{ContainerClient, ContainerProperties, CosmosClient, QueryOptions, TransactionalBatch};

fn account() -> (CosmosClient, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::default());
    (CosmosClient::new().with_clock(clock.clone()), clock)
}

fn item(json: &str) -> Value {
    parse_json(json).unwrap()
}

fn ids(c: &ContainerClient) -> Vec<String> {
    let mut ids: Vec<String> = c
        .query_items_blocking::<Value>("SELECT VALUE c.id FROM c", QueryOptions::default())
        .unwrap()
        .into_iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

fn container(ttl: Option<i64>) -> (ContainerClient, Arc<ManualClock>) {
    let (account, clock) = account();
    let db = account.create_database("db").unwrap();
    let c = db.create_container(ContainerProperties::new("c", "/pk").unwrap().default_ttl(ttl)).unwrap();
    for (id, ttl) in [("plain", None), ("never", Some(-1)), ("short", Some(10)), ("long", Some(100))] {
        let ttl = ttl.map_or(String::new(), |t| format!(r#","ttl":{t}"#));
        c.create_item::<Value>(&item(&format!(r#"{{"id":"{id}","pk":"p"{ttl}}}"#))).unwrap();
    }
    (c, clock)
}

#[test]
fn without_a_default_ttl_nothing_expires() {
    // "If missing (or set to null), items are not expired automatically" (an item's ttl does nothing).
    let (c, clock) = container(None);
    clock.advance(Duration::from_secs(1_000_000));
    assert_eq!(ids(&c), ["long", "never", "plain", "short"]);
}

#[test]
fn a_default_of_minus_one_expires_only_items_with_their_own_ttl() {
    let (c, clock) = container(Some(-1));
    clock.advance(Duration::from_secs(9));
    assert_eq!(ids(&c), ["long", "never", "plain", "short"]);
    clock.advance(Duration::from_secs(1));
    // Gone from queries and point reads at once.
    assert_eq!(ids(&c), ["long", "never", "plain"]);
    assert_eq!(c.read_item::<Value>(PartitionKey::from("p"), "short").unwrap_err().status(), Some(404));
    clock.advance(Duration::from_secs(1_000_000));
    // Purged without any read, as the service's background purge does.
    assert_eq!(c.container().purge_expired(), 1);
    assert_eq!(c.container().item_count(), 2);
    assert_eq!(ids(&c), ["never", "plain"]);
    assert_eq!(c.container().expired_count(), 2);
}

#[test]
fn a_default_of_n_seconds_counts_from_the_last_write() {
    let (c, clock) = container(Some(50));
    clock.advance(Duration::from_secs(40));
    // A write restarts the item's time.
    c.upsert_item::<Value>(&item(r#"{"id":"plain","pk":"p","v":2}"#)).unwrap();
    clock.advance(Duration::from_secs(10));
    assert_eq!(ids(&c), ["long", "never", "plain"]);
    clock.advance(Duration::from_secs(40));
    assert_eq!(ids(&c), ["long", "never"]);
    // An expired item's id is free again.
    c.create_item::<Value>(&item(r#"{"id":"short","pk":"p"}"#)).unwrap();
    // Changing the default re-times every item at once: off, nothing expires.
    c.replace_default_ttl(None).unwrap();
    clock.advance(Duration::from_secs(1000));
    assert_eq!(ids(&c), ["long", "never", "short"]);
}

#[test]
fn counts_and_index_answers_do_not_see_expired_items() {
    let (c, clock) = container(Some(-1));
    clock.advance(Duration::from_secs(100));
    let count: Vec<Value> = c.query_items_blocking("SELECT VALUE COUNT(1) FROM c", QueryOptions::default()).unwrap();
    assert_eq!(count, vec![Value::from(2.0)]);
}

#[test]
fn ttl_values_follow_the_service_rules() {
    let (account, _) = account();
    let db = account.create_database("db").unwrap();
    for bad in [Some(0), Some(-2), Some(2_147_483_648)] {
        let e = db.create_container(ContainerProperties::new("bad", "/pk").unwrap().default_ttl(bad)).unwrap_err();
        assert_eq!(e.status(), Some(400));
        assert!(e.to_string().contains("nonzero positive integer less than or equal to '2147483647'"), "{e}");
    }
    let (c, _) = container(Some(-1));
    for bad in [r#"0"#, r#"null"#, r#""10""#, r#"1.5"#, r#"2147483648"#] {
        let e = c.create_item::<Value>(&item(&format!(r#"{{"id":"x","pk":"p","ttl":{bad}}}"#))).unwrap_err();
        assert_eq!(e.status(), Some(400), "{bad}");
        assert!(e.to_string().contains("The input ttl"), "{e}");
    }
    // With time to live off, `ttl` is an ordinary property.
    let (off, _) = container(None);
    off.create_item::<Value>(&item(r#"{"id":"x","pk":"p","ttl":"soon"}"#)).unwrap();
    assert_eq!(c.container().properties().get("defaultTtl"), &Value::from(-1.0));
}

#[test]
fn unique_keys_refuse_a_second_item_with_the_same_values_in_a_logical_partition() {
    let (account, _) = account();
    let db = account.create_database("db").unwrap();
    let props = ContainerProperties::new("users", "/tenant")
        .unwrap()
        .unique_key(&["/email"])
        .unwrap()
        .unique_key(&["/first", "/last"])
        .unwrap();
    let c = db.create_container(props).unwrap();
    let conflict = |r: Result<cosmoql::ItemResponse<Value>, cosmoql::Error>| {
        let e = r.unwrap_err();
        assert_eq!(e.status(), Some(409), "{e}");
        assert!(e.to_string().contains("Unique index constraint violation."), "{e}");
    };
    c.create_item::<Value>(&item(r#"{"id":"1","tenant":"a","email":"x@a","first":"Ann","last":"Lee"}"#)).unwrap();
    conflict(c.create_item::<Value>(&item(r#"{"id":"2","tenant":"a","email":"x@a"}"#)));
    conflict(c.create_item::<Value>(&item(r#"{"id":"2","tenant":"a","email":"y@a","first":"Ann","last":"Lee"}"#)));
    // Per logical partition: another tenant may have the same values.
    c.create_item::<Value>(&item(r#"{"id":"2","tenant":"b","email":"x@a","first":"Ann","last":"Lee"}"#)).unwrap();
    // A missing value counts as null: one item may miss it, a second may not.
    c.create_item::<Value>(&item(r#"{"id":"3","tenant":"a","first":"Bo","last":"Ng"}"#)).unwrap();
    conflict(c.create_item::<Value>(&item(r#"{"id":"4","tenant":"a","email":null,"first":"Cy","last":"Ng"}"#)));
    // Replaces and upserts are checked against the other items, not the item itself.
    c.replace_item::<Value>(
        PartitionKey::from("a"),
        "1",
        &item(r#"{"id":"1","tenant":"a","email":"x@a","first":"Ann","last":"Lee","v":2}"#),
        None,
    )
    .unwrap();
    conflict(c.upsert_item::<Value>(&item(r#"{"id":"3","tenant":"a","email":"x@a","first":"Bo","last":"Ng"}"#)));
    // A patch too.
    let patch = vec![cosmoql::storage::PatchOperation::Set { path: "/email".into(), value: Value::from("x@a") }];
    let e = c.patch_item::<Value>(PartitionKey::from("a"), "3", &patch).unwrap_err();
    assert_eq!(e.status(), Some(409));
    // Freed values can be taken again: delete the holder.
    c.delete_item(PartitionKey::from("a"), "1").unwrap();
    c.create_item::<Value>(&item(r#"{"id":"5","tenant":"a","email":"x@a","first":"Ann","last":"Lee"}"#)).unwrap();
    // In a batch: the conflicting operation fails it whole, and nothing of it stays.
    let batch = TransactionalBatch::new()
        .create_item(&item(r#"{"id":"6","tenant":"a","email":"z@a","first":"Di","last":"Ko"}"#))
        .unwrap()
        .create_item(&item(r#"{"id":"7","tenant":"a","email":"z@a","first":"Ed","last":"Ko"}"#))
        .unwrap();
    let e = c.execute_transactional_batch(PartitionKey::from("a"), batch).unwrap_err();
    assert_eq!(e.status(), Some(409));
    c.create_item::<Value>(&item(r#"{"id":"6","tenant":"a","email":"z@a","first":"Di","last":"Ko"}"#)).unwrap();
    // The policy is in the container's properties, as the service returns it.
    let props = c.container().properties();
    assert_eq!(
        cosmoql::value::to_json_string(props.get("uniqueKeyPolicy")).unwrap(),
        r#"{"uniqueKeys":[{"paths":["/email"]},{"paths":["/first","/last"]}]}"#
    );
}

#[test]
fn unique_key_policies_are_validated_and_read_from_container_properties() {
    let store = cosmoql::storage::Store::new();
    let db = store.create_database("db").unwrap();
    let props = parse_json(
        r#"{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"},"defaultTtl":3600,
            "uniqueKeyPolicy":{"uniqueKeys":[{"paths":["/sku"]}]}}"#,
    )
    .unwrap();
    let c = db.create_container_from_properties(&props, Default::default()).unwrap();
    assert_eq!(c.default_ttl(), Some(3600));
    c.create(&item(r#"{"id":"1","pk":"p","sku":"A"}"#)).unwrap();
    assert_eq!(c.create(&item(r#"{"id":"2","pk":"p","sku":"A"}"#)).unwrap_err().status_code(), 409);
    for bad in [r#"{"uniqueKeys":[{"paths":[]}]}"#, r#"{"uniqueKeys":[{"paths":["sku"]}]}"#, r#"{"uniqueKeys":7}"#] {
        let props = parse_json(&format!(
            r#"{{"id":"d","partitionKey":{{"paths":["/pk"],"kind":"Hash"}},"uniqueKeyPolicy":{bad}}}"#
        ))
        .unwrap();
        assert_eq!(
            db.create_container_from_properties(&props, Default::default()).unwrap_err().status_code(),
            400,
            "{bad}"
        );
    }
    let eleven: Vec<String> = (0..11).map(|i| format!(r#"{{"paths":["/p{i}"]}}"#)).collect();
    let props = parse_json(&format!(
        r#"{{"id":"e","partitionKey":{{"paths":["/pk"],"kind":"Hash"}},"uniqueKeyPolicy":{{"uniqueKeys":[{}]}}}}"#,
        eleven.join(",")
    ))
    .unwrap();
    assert_eq!(db.create_container_from_properties(&props, Default::default()).unwrap_err().status_code(), 400);
}
