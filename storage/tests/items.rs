//! Item operations, their error codes (each failure leaves the store exactly as it was), batches,
//! synthetic keys, splits and import/export.

use std::collections::BTreeMap;

use cosmoql_catalog::partition_key::hash_bucket;
use cosmoql_storage::*;
use cosmoql_value::{parse_json, Value};

fn json(text: &str) -> Value {
    parse_json(text).expect("test JSON")
}

fn container(pk: &str) -> Container {
    Container::new("c", PartitionKeyDefinition::hash(pk).unwrap(), ContainerSettings::default())
}

/// Everything observable about a container's items: (EPK, id) -> (document JSON, etag).
fn snapshot(c: &Container) -> BTreeMap<(String, String), (String, String)> {
    let mut out = BTreeMap::new();
    for item in c.scan().items() {
        let id = item.doc.root().get("id").and_then(|v| v.as_str()).unwrap().to_string();
        let key = c.partition_key().key_of(item.doc.root()).unwrap();
        let epk = c.partition_key().epk(&key).unwrap().to_hex();
        let previous = out.insert((epk, id), (item.doc.to_json_string().unwrap(), item.meta.etag()));
        assert!(previous.is_none(), "an item appeared twice in a scan");
    }
    assert_eq!(out.len(), c.item_count());
    out
}

/// Asserts that `op` fails with `status` and changes nothing.
fn fails_unchanged<T: std::fmt::Debug>(
    c: &Container,
    status: u16,
    op: impl FnOnce() -> Result<T, StorageError>,
) -> StorageError {
    let before = snapshot(c);
    let err = op().expect_err("the operation must fail");
    assert_eq!(err.status_code(), status, "{err}");
    assert_eq!(snapshot(c), before, "a failed write changed the store: {err}");
    err
}

fn seeded() -> Container {
    let c = container("/pk");
    for (pk, id) in [("a", "1"), ("a", "2"), ("b", "1")] {
        c.create(&json(&format!(r#"{{"id":"{id}","pk":"{pk}","n":1}}"#))).unwrap();
    }
    c
}

#[test]
fn create_read_replace_upsert_delete() {
    let c = container("/pk");
    let created = c.create(&json(r#"{"id":"1","pk":"a","n":1}"#)).unwrap();
    assert_eq!(created.status, 201);
    assert_eq!((created.operation, created.bytes > 0), (OperationKind::Create, true));
    for prop in ["_rid", "_self", "_etag", "_attachments", "_ts"] {
        assert!(created.item.get(prop).is_defined(), "missing {prop}: {}", created.item);
    }
    assert_eq!(created.item.get("_etag").as_str(), Some(created.etag.as_str()));
    let key = PartitionKey::from("a");
    let read = c.read(&key, "1").unwrap();
    assert_eq!(read.status, 200);
    assert_eq!(read.item, created.item);

    let replaced = c.replace(&key, "1", &json(r#"{"id":"1","pk":"a","n":2}"#), &WriteOptions::default()).unwrap();
    assert_ne!(replaced.etag, created.etag);
    assert_eq!(replaced.item.get("_rid"), created.item.get("_rid"), "a replace keeps the item's identity");
    assert_eq!(c.read(&key, "1").unwrap().item.get("n"), &Value::from(2.0));

    assert_eq!(c.upsert(&json(r#"{"id":"1","pk":"a","n":3}"#), &WriteOptions::default()).unwrap().status, 200);
    assert_eq!(c.upsert(&json(r#"{"id":"2","pk":"a","n":1}"#), &WriteOptions::default()).unwrap().status, 201);
    assert_eq!(c.item_count(), 2);

    // The same id in another logical partition is another item.
    c.create(&json(r#"{"id":"1","pk":"b"}"#)).unwrap();
    assert_eq!(c.item_count(), 3);

    assert_eq!(c.delete(&key, "1", &WriteOptions::default()).unwrap().status, 204);
    assert_eq!(c.read(&key, "1").unwrap_err().status_code(), 404);
    assert_eq!(c.read(&PartitionKey::from("b"), "1").unwrap().item.get("pk").as_str(), Some("b"));
}

#[test]
fn optimistic_concurrency_with_etags() {
    let c = seeded();
    let key = PartitionKey::from("a");
    let etag = c.read(&key, "1").unwrap().etag;
    let ok =
        c.replace(&key, "1", &json(r#"{"id":"1","pk":"a","n":5}"#), &WriteOptions::if_match(etag.clone())).unwrap();
    // The old etag no longer matches: replace, delete, patch and upsert all answer 412.
    fails_unchanged(&c, 412, || {
        c.replace(&key, "1", &json(r#"{"id":"1","pk":"a"}"#), &WriteOptions::if_match(etag.clone()))
    });
    fails_unchanged(&c, 412, || c.delete(&key, "1", &WriteOptions::if_match(etag.clone())));
    fails_unchanged(&c, 412, || {
        c.patch(
            &key,
            "1",
            &[PatchOperation::Increment { path: "/n".into(), by: 1.0 }],
            &WriteOptions::if_match(etag.clone()),
        )
    });
    fails_unchanged(&c, 412, || c.upsert(&json(r#"{"id":"1","pk":"a"}"#), &WriteOptions::if_match(etag.clone())));
    fails_unchanged(&c, 412, || c.upsert(&json(r#"{"id":"new","pk":"a"}"#), &WriteOptions::if_match(etag.clone())));
    c.delete(&key, "1", &WriteOptions::if_match(ok.etag)).unwrap();
}

#[test]
fn bad_requests_are_400_and_change_nothing() {
    let c = seeded();
    let long_id = "x".repeat(1024);
    for (what, doc) in [
        ("empty id", r#"{"id":"","pk":"a"}"#.to_string()),
        ("id over 1,023 bytes", format!(r#"{{"id":"{long_id}","pk":"a"}}"#)),
        ("id with /", r#"{"id":"a/b","pk":"a"}"#.to_string()),
        ("id with \\", r#"{"id":"a\\b","pk":"a"}"#.to_string()),
        ("id with ?", r#"{"id":"a?","pk":"a"}"#.to_string()),
        ("id with #", r##"{"id":"#1","pk":"a"}"##.to_string()),
        ("no id", r#"{"pk":"a"}"#.to_string()),
        ("numeric id", r#"{"id":1,"pk":"a"}"#.to_string()),
        ("object key value", r#"{"id":"9","pk":{"x":1}}"#.to_string()),
        ("array key value", r#"{"id":"9","pk":[1]}"#.to_string()),
        ("key value over 2 KB", format!(r#"{{"id":"9","pk":"{}"}}"#, "k".repeat(2049))),
    ] {
        let err = fails_unchanged(&c, 400, || c.create(&json(&doc)));
        assert!(!err.message.is_empty(), "{what}");
    }
    assert_eq!(c.create(&Value::from(5.0)).unwrap_err().status_code(), 400);
    // An id of exactly 1,023 bytes and a key of exactly 2,048 bytes are fine.
    c.create(&json(&format!(r#"{{"id":"{}","pk":"{}"}}"#, "y".repeat(1023), "k".repeat(2048)))).unwrap();

    let key = PartitionKey::from("a");
    // Replace cannot move an item to another key, nor rename it.
    fails_unchanged(&c, 400, || c.replace(&key, "1", &json(r#"{"id":"1","pk":"b"}"#), &WriteOptions::default()));
    fails_unchanged(&c, 400, || c.replace(&key, "1", &json(r#"{"id":"2","pk":"a"}"#), &WriteOptions::default()));
    // A key with the wrong number of components.
    fails_unchanged(&c, 400, || c.read(&PartitionKey::parse_json(r#"["a","b"]"#).unwrap(), "1"));
    fails_unchanged(&c, 400, || c.delete(&PartitionKey::none(), "1", &WriteOptions::default()));
    // Bad patches.
    for ops in [
        vec![PatchOperation::Replace { path: "/missing".into(), value: Value::Null }],
        vec![PatchOperation::Set { path: "/pk".into(), value: Value::from("b") }],
        vec![PatchOperation::Set { path: "/id".into(), value: Value::from("z") }],
        vec![PatchOperation::Increment { path: "/n".into(), by: 1.0 }, PatchOperation::Remove { path: "/nope".into() }],
        vec![],
    ] {
        fails_unchanged(&c, 400, || c.patch(&key, "1", &ops, &WriteOptions::default()));
    }
}

#[test]
fn not_found_and_conflict() {
    let c = seeded();
    let key = PartitionKey::from("a");
    fails_unchanged(&c, 404, || c.read(&key, "nope"));
    fails_unchanged(&c, 404, || c.read(&PartitionKey::from("zzz"), "1"));
    fails_unchanged(&c, 404, || c.replace(&key, "nope", &json(r#"{"id":"nope","pk":"a"}"#), &WriteOptions::default()));
    fails_unchanged(&c, 404, || c.delete(&key, "nope", &WriteOptions::default()));
    fails_unchanged(&c, 404, || {
        c.patch(&key, "nope", &[PatchOperation::Remove { path: "/n".into() }], &WriteOptions::default())
    });
    let err = fails_unchanged(&c, 409, || c.create(&json(r#"{"id":"1","pk":"a","other":true}"#)));
    assert!(err.to_string().starts_with("409 Conflict: "), "{err}");
}

#[test]
fn too_large_items_are_413() {
    let c = seeded();
    let big = format!(r#"{{"id":"big","pk":"a","blob":"{}"}}"#, "z".repeat(2 * 1024 * 1024));
    fails_unchanged(&c, 413, || c.create(&json(&big)));
    fails_unchanged(&c, 413, || c.upsert(&json(&big.replace("\"big\"", "\"1\"")), &WriteOptions::default()));
    // Escapes count as the JSON bytes they take.
    let escaped = format!(r#"{{"id":"esc","pk":"a","blob":"{}"}}"#, "\\u0001".repeat(400_000));
    fails_unchanged(&c, 413, || c.create(&json(&escaped)));
    c.create(&json(&format!(r#"{{"id":"fits","pk":"a","blob":"{}"}}"#, "z".repeat(1024 * 1024)))).unwrap();
}

#[test]
fn full_logical_partitions_are_403() {
    let settings = ContainerSettings { logical_partition_max_bytes: 200, ..ContainerSettings::default() };
    let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings);
    let mut n = 0;
    let err = loop {
        match c.create(&json(&format!(r#"{{"id":"{n}","pk":"full","pad":"0123456789"}}"#))) {
            Ok(_) => n += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(err.status_code(), 403);
    assert!(err.to_string().contains("substatus 1014"), "{err}");
    assert!(n > 0);
    fails_unchanged(&c, 403, || c.create(&json(r#"{"id":"more","pk":"full","pad":"0123456789"}"#)));
    let key = PartitionKey::from("full");
    let grow = json(&format!(r#"{{"id":"0","pk":"full","pad":"{}"}}"#, "9".repeat(200)));
    fails_unchanged(&c, 403, || c.replace(&key, "0", &grow, &WriteOptions::default()));
    // Other logical partitions are not affected.
    c.create(&json(r#"{"id":"0","pk":"other","pad":"0123456789"}"#)).unwrap();
}

#[test]
fn patch_operations_and_condition() {
    let c = seeded();
    let key = PartitionKey::from("a");
    let before = c.read(&key, "1").unwrap();
    let after = c
        .patch(
            &key,
            "1",
            &[
                PatchOperation::Increment { path: "/n".into(), by: 41.0 },
                PatchOperation::Add { path: "/tags".into(), value: json(r#"["x"]"#) },
                PatchOperation::Add { path: "/tags/-".into(), value: Value::from("y") },
                PatchOperation::Set { path: "/nested".into(), value: json(r#"{"a":1}"#) },
                PatchOperation::Replace { path: "/nested/a".into(), value: Value::from(2.0) },
                PatchOperation::Remove { path: "/tags/0".into() },
            ],
            &WriteOptions::default(),
        )
        .unwrap();
    assert_eq!(after.item.get("n"), &Value::from(42.0));
    assert_eq!(after.item.get("tags"), &json(r#"["y"]"#));
    assert_eq!(after.item.get("nested"), &json(r#"{"a":2}"#));
    assert_ne!(after.etag, before.etag);
    // A condition that does not hold: 412 and nothing changes.
    let never = |item: &Value| item.get("n") == &Value::from(0.0);
    let options = WriteOptions { if_match: None, condition: Some(&never) };
    fails_unchanged(&c, 412, || c.patch(&key, "1", &[PatchOperation::Remove { path: "/n".into() }], &options));
    let holds = |item: &Value| item.get("n") == &Value::from(42.0);
    let options = WriteOptions { if_match: None, condition: Some(&holds) };
    c.patch(&key, "1", &[PatchOperation::Remove { path: "/n".into() }], &options).unwrap();
    assert!(c.read(&key, "1").unwrap().item.get("n").is_undefined());
}

#[test]
fn batches_are_all_or_nothing() {
    let c = seeded();
    let key = PartitionKey::from("a");
    let ok = c
        .execute_batch(
            &key,
            &[
                BatchOperation::Create { item: json(r#"{"id":"3","pk":"a"}"#) },
                BatchOperation::Upsert { item: json(r#"{"id":"1","pk":"a","n":10}"#), if_match: None },
                BatchOperation::Read { id: "2".into() },
                BatchOperation::Patch {
                    id: "2".into(),
                    operations: vec![PatchOperation::Set { path: "/p".into(), value: Value::Bool(true) }],
                    if_match: None,
                },
                BatchOperation::Delete { id: "3".into(), if_match: None },
            ],
        )
        .unwrap();
    assert_eq!(ok.iter().map(|r| r.status).collect::<Vec<_>>(), vec![201, 200, 200, 200, 204]);
    assert_eq!(c.read(&key, "1").unwrap().item.get("n"), &Value::from(10.0));

    // A failure in the middle rolls back every earlier operation, creates, replaces and deletes.
    let before = snapshot(&c);
    let err = c
        .execute_batch(
            &key,
            &[
                BatchOperation::Create { item: json(r#"{"id":"4","pk":"a"}"#) },
                BatchOperation::Replace { id: "1".into(), item: json(r#"{"id":"1","pk":"a","n":99}"#), if_match: None },
                BatchOperation::Delete { id: "2".into(), if_match: None },
                BatchOperation::Patch {
                    id: "1".into(),
                    operations: vec![PatchOperation::Increment { path: "/n".into(), by: 1.0 }],
                    if_match: None,
                },
                BatchOperation::Create { item: json(r#"{"id":"4","pk":"a"}"#) },
                BatchOperation::Create { item: json(r#"{"id":"5","pk":"a"}"#) },
            ],
        )
        .unwrap_err();
    assert_eq!(err.index, 4);
    assert_eq!(err.error.status_code(), 409);
    assert_eq!(snapshot(&c), before);

    // A batch that creates a new logical partition and fails leaves no trace of it.
    let fresh = PartitionKey::from("fresh");
    let err = c
        .execute_batch(
            &fresh,
            &[
                BatchOperation::Create { item: json(r#"{"id":"1","pk":"fresh"}"#) },
                BatchOperation::Read { id: "nope".into() },
            ],
        )
        .unwrap_err();
    assert_eq!((err.index, err.error.status_code()), (1, 404));
    assert_eq!(snapshot(&c), before);
    assert_eq!(c.partitions().iter().map(|p| p.logical_partitions).sum::<usize>(), 2);

    // Every item of a batch must be in the batch's logical partition; at most 100 operations.
    let err = c.execute_batch(&key, &[BatchOperation::Create { item: json(r#"{"id":"9","pk":"b"}"#) }]).unwrap_err();
    assert_eq!((err.index, err.error.status_code()), (0, 400));
    let many: Vec<_> =
        (0..101).map(|i| BatchOperation::Create { item: json(&format!(r#"{{"id":"m{i}","pk":"a"}}"#)) }).collect();
    assert_eq!(c.execute_batch(&key, &many).unwrap_err().error.status_code(), 400);
    assert_eq!(c.execute_batch(&key, &many[..100]).unwrap().len(), 100);
    assert_eq!(snapshot(&c).len(), before.len() + 100);
}

#[test]
fn partition_key_paths_nested_quoted_id_and_none() {
    let c = container("/properties/name");
    c.create(&json(r#"{"id":"1","properties":{"name":"n1"}}"#)).unwrap();
    c.read(&PartitionKey::from("n1"), "1").unwrap();
    let c = container(r#"/"department name""#);
    c.create(&json(r#"{"id":"1","department name":"sales"}"#)).unwrap();
    c.read(&PartitionKey::from("sales"), "1").unwrap();
    let c = container("/id");
    c.create(&json(r#"{"id":"self"}"#)).unwrap();
    c.read(&PartitionKey::from("self"), "self").unwrap();
    // A missing key property is the undefined key, distinct from null.
    let c = container("/pk");
    c.create(&json(r#"{"id":"1"}"#)).unwrap();
    c.create(&json(r#"{"id":"1","pk":null}"#)).unwrap();
    c.read(&PartitionKey::undefined(), "1").unwrap();
    assert!(c.read(&PartitionKey::from_values(&[Value::Null]).unwrap(), "1").unwrap().item.get("pk").is_null());
    // No partition key: one logical partition, addressed by the empty key.
    let c = Container::new("c", PartitionKeyDefinition::none(), ContainerSettings::for_expected_items(100_000));
    assert_eq!(c.partitions().len(), 1);
    c.create(&json(r#"{"id":"1","x":1}"#)).unwrap();
    c.read(&PartitionKey::none(), "1").unwrap();
    // Bad paths.
    for bad in ["deviceId", "/", "/a//b", "/\"open", "/a[0]"] {
        assert_eq!(PartitionKeyDefinition::hash(bad).unwrap_err().status_code(), 400, "{bad}");
    }
    assert!(PartitionKeyDefinition::hierarchical(&["/a", "/b", "/c", "/d"]).is_err());
}

#[test]
fn hierarchical_keys_and_prefix_ranges() {
    let def = PartitionKeyDefinition::hierarchical(&["/tenant", "/user"]).unwrap();
    let c = Container::new("c", def, ContainerSettings { initial_partitions: 8, ..ContainerSettings::default() });
    for t in 0..5 {
        for u in 0..5 {
            c.create(&json(&format!(r#"{{"id":"1","tenant":"t{t}","user":"u{u}"}}"#))).unwrap();
        }
    }
    let full = PartitionKey::parse_json(r#"["t3","u2"]"#).unwrap();
    assert_eq!(c.read(&full, "1").unwrap().item.get("user").as_str(), Some("u2"));
    // A prefix covers exactly its tenant's items.
    let (min, max) = c.partition_key().epk_range(&PartitionKey::from("t3")).unwrap();
    let items: Vec<_> = c.scan_range(min, max).items().collect();
    assert_eq!(items.len(), 5);
    assert!(items.iter().all(|i| i.doc.root().get("tenant").unwrap().as_str() == Some("t3")));
    // A prefix is not a key for point operations.
    assert_eq!(c.read(&PartitionKey::from("t3"), "1").unwrap_err().status_code(), 400);
}

#[test]
fn synthetic_keys_are_filled_on_write_and_computable_for_reads() {
    // (a) concatenation
    let key = SyntheticKey::new(SyntheticKind::Concat {
        paths: vec![
            PartitionKeyPath::parse("/a").unwrap(),
            PartitionKeyPath::parse("/b").unwrap(),
            PartitionKeyPath::parse("/y").unwrap(),
        ],
        separator: "-".into(),
    });
    let c = Container::new("c", PartitionKeyDefinition::synthetic(key).unwrap(), ContainerSettings::default());
    let item = c.create(&json(r#"{"id":"1","a":"abc","b":123,"y":2018}"#)).unwrap().item;
    assert_eq!(item.get("partitionKey").as_str(), Some("abc-123-2018"));
    let keys = c
        .partition_key()
        .synthetic_key()
        .unwrap()
        .keys_from_parts(&[Value::from("abc"), Value::from(123.0), Value::from(2018.0)])
        .unwrap();
    assert_eq!(keys, vec!["abc-123-2018".to_string()]);
    c.read(&PartitionKey::from(keys[0].as_str()), "1").unwrap();
    assert_eq!(c.create(&json(r#"{"id":"2","a":"abc","y":2018}"#)).unwrap_err().status_code(), 400);

    // (b) random suffix, reproducible from the seed
    let random = || {
        let key = SyntheticKey::new(SyntheticKind::RandomSuffix {
            base: PartitionKeyPath::parse("/date").unwrap(),
            buckets: 20,
            seed: 7,
        });
        Container::new("c", PartitionKeyDefinition::synthetic(key).unwrap(), ContainerSettings::default())
    };
    let (c1, c2) = (random(), random());
    let mut suffixes = std::collections::BTreeSet::new();
    for i in 0..200 {
        let doc = json(&format!(r#"{{"id":"{i}","date":"2018-08-09"}}"#));
        let k1 = c1.create(&doc).unwrap().item.get("partitionKey").as_str().unwrap().to_string();
        let k2 = c2.create(&doc).unwrap().item.get("partitionKey").as_str().unwrap().to_string();
        assert_eq!(k1, k2, "the same seed and writes give the same keys");
        let suffix: u32 = k1.strip_prefix("2018-08-09.").unwrap().parse().unwrap();
        assert!((1..=20).contains(&suffix));
        suffixes.insert(suffix);
    }
    assert_eq!(suffixes.len(), 20, "200 writes reach every bucket");
    let candidates = c1.partition_key().synthetic_key().unwrap().keys_from_parts(&[Value::from("2018-08-09")]).unwrap();
    assert_eq!(candidates.len(), 20);
    let found: usize =
        candidates.iter().map(|k| c1.scan_partition_key(&PartitionKey::from(k.as_str())).unwrap().len()).sum();
    assert_eq!(found, 200);
    // A replace keeps the key the item already carries.
    let zero = c1.scan().items().find(|i| i.doc.root().get("id").and_then(|v| v.as_str()) == Some("0")).unwrap();
    let first =
        c1.read(&PartitionKey::from(zero.doc.root().get("partitionKey").unwrap().as_str().unwrap()), "0").unwrap().item;
    let k = PartitionKey::from(first.get("partitionKey").as_str().unwrap());
    c1.replace(&k, "0", &first, &WriteOptions::default()).unwrap();

    // (c) hash suffix from another property: stable across runs and machines
    let key = SyntheticKey::new(SyntheticKind::HashSuffix {
        base: PartitionKeyPath::parse("/date").unwrap(),
        source: PartitionKeyPath::parse("/vin").unwrap(),
        buckets: 100,
    });
    let c = Container::new("c", PartitionKeyDefinition::synthetic(key).unwrap(), ContainerSettings::default());
    let item = c.create(&json(r#"{"id":"1","date":"2018-08-09","vin":"1HGCM82633A004352"}"#)).unwrap().item;
    let bucket = hash_bucket("1HGCM82633A004352", 100);
    assert_eq!(bucket, 1 + cosmoql_storage_murmur("1HGCM82633A004352") % 100);
    assert_eq!(item.get("partitionKey").as_str(), Some(format!("2018-08-09.{bucket}").as_str()));
    let keys = c
        .partition_key()
        .synthetic_key()
        .unwrap()
        .keys_from_parts(&[Value::from("2018-08-09"), Value::from("1HGCM82633A004352")])
        .unwrap();
    c.read(&PartitionKey::from(keys[0].as_str()), "1").unwrap();
}

/// MurmurHash3 x86-32 (seed 0), written out here so the test pins the bucket function.
fn cosmoql_storage_murmur(text: &str) -> u32 {
    let data = text.as_bytes();
    let (c1, c2) = (0xcc9e_2d51u32, 0x1b87_3593u32);
    let mut h = 0u32;
    let chunks = data.chunks_exact(4);
    let tail = chunks.remainder();
    for chunk in chunks {
        let mut k = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        k = k.wrapping_mul(c1).rotate_left(15).wrapping_mul(c2);
        h ^= k;
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let mut k = 0u32;
    for (i, b) in tail.iter().enumerate() {
        k |= u32::from(*b) << (8 * i);
    }
    if !tail.is_empty() {
        h ^= k.wrapping_mul(c1).rotate_left(15).wrapping_mul(c2);
    }
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

#[test]
fn splits_move_logical_partitions_whole() {
    let settings = ContainerSettings { split_max_items: 50, ..ContainerSettings::default() };
    let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings);
    for i in 0..1000 {
        c.create(&json(&format!(r#"{{"id":"{i}","pk":"k{}"}}"#, i % 40))).unwrap();
    }
    let parts = c.partitions();
    assert!(parts.len() > 4, "{} partitions", parts.len());
    assert!(c.split_count() > 0);
    // Contiguous ranges covering ["", "FF").
    assert_eq!(parts[0].min, Epk::min());
    assert_eq!(parts.last().unwrap().max, Epk::max());
    for w in parts.windows(2) {
        assert_eq!(w[0].max, w[1].min);
    }
    assert_eq!(parts.iter().map(|p| p.items).sum::<usize>(), 1000);
    // Each logical partition is in exactly one physical partition.
    assert_eq!(parts.iter().map(|p| p.logical_partitions).sum::<usize>(), 40);
    for k in 0..40 {
        assert_eq!(c.scan_partition_key(&PartitionKey::from(format!("k{k}"))).unwrap().len(), 25);
    }
    assert_eq!(snapshot(&c).len(), 1000);
    // The partitions overlapping some EPK ranges: exactly those a brute-force check finds, once
    // each, in EPK order (whatever the order and overlap of the ranges asked for).
    let all = |ranges: &[(Epk, Epk)]| -> Vec<u32> {
        parts.iter().filter(|p| ranges.iter().any(|(lo, hi)| p.min < *hi && *lo < p.max)).map(|p| p.id).collect()
    };
    let ids = |ranges: &[(Epk, Epk)]| c.partitions_overlapping(ranges).into_iter().map(|p| p.0).collect::<Vec<_>>();
    let whole = [(Epk::min(), Epk::max())];
    assert_eq!(ids(&whole), parts.iter().map(|p| p.id).collect::<Vec<_>>());
    let inside = [(parts[1].min.clone(), parts[1].max.clone())];
    assert_eq!(ids(&inside), vec![parts[1].id]);
    let k7 = PartitionKey::from("k7".to_string());
    let point = c.partition_key().epk(&k7).unwrap();
    let spread = [
        (parts[0].min.clone(), parts[2].min.clone()),
        (point.clone(), Epk::from_bytes(&[point.as_bytes(), &[0]].concat())),
        (parts[1].min.clone(), parts[3].max.clone()),
    ];
    assert_eq!(ids(&spread), all(&spread));
    assert!(ids(&[(parts[2].min.clone(), parts[2].min.clone())]).is_empty());
    // A partition with one logical partition never splits, however large.
    let single = Container::new(
        "c",
        PartitionKeyDefinition::hash("/pk").unwrap(),
        ContainerSettings { split_max_items: 5, ..ContainerSettings::default() },
    );
    for i in 0..100 {
        single.create(&json(&format!(r#"{{"id":"{i}","pk":"one"}}"#))).unwrap();
    }
    assert_eq!(single.partitions().len(), 1);
    assert!(!single.force_split(&Epk::min()));
}

#[test]
fn scan_order_does_not_depend_on_physical_partitioning() {
    let fill = |c: &Container| {
        for i in 0..500 {
            c.create(&json(&format!(r#"{{"id":"{i}","pk":"k{}"}}"#, i % 37))).unwrap();
        }
    };
    let one = Container::new(
        "c",
        PartitionKeyDefinition::hash("/pk").unwrap(),
        ContainerSettings { split_max_items: usize::MAX, ..ContainerSettings::default() },
    );
    let many = Container::new(
        "c",
        PartitionKeyDefinition::hash("/pk").unwrap(),
        ContainerSettings { initial_partitions: 7, split_max_items: 30, ..ContainerSettings::default() },
    );
    fill(&one);
    fill(&many);
    assert_eq!(one.partitions().len(), 1);
    assert!(many.partitions().len() > 7);
    let ids = |c: &Container| c.scan().items().map(|i| i.doc.to_json_string().unwrap()).collect::<Vec<_>>();
    assert_eq!(ids(&one), ids(&many));
}

#[test]
fn import_export_and_copy_with_another_key() {
    let c = container("/pk");
    let input = "{\"id\":\"1\",\"pk\":\"a\",\"other\":\"x\"}\n{not json}\n\n{\"id\":\"2\",\"pk\":\"b\",\"other\":\"y\"}\n{\"id\":\"1\",\"pk\":\"a\"}\n[1,2]\n{\"id\":\"3\",\"pk\":\"a\",\"other\":\"x\"}\n";
    let summary = c.import(input.as_bytes(), ImportOptions::default(), |_| {}).unwrap();
    assert_eq!((summary.imported, summary.skipped, summary.failed), (3, 2, 1));
    assert_eq!(
        summary.problems.iter().map(|p| (p.line, p.skipped)).collect::<Vec<_>>(),
        vec![(2, true), (5, false), (6, true)]
    );
    assert!(summary.problems[1].message.contains("409"), "{}", summary.problems[1]);
    assert_eq!(summary.bytes, input.len() as u64);

    // Fail-fast stops at the first problem.
    let d = container("/pk");
    let err =
        d.import(input.as_bytes(), ImportOptions { fail_fast: true, ..ImportOptions::default() }, |_| {}).unwrap_err();
    assert_eq!(err.summary.imported, 1);
    assert!(err.message.starts_with("line 2: not valid JSON at column 2"), "{}", err.message);

    // A JSON array imports the same way.
    let e = container("/pk");
    let array = "[\n{\"id\":\"1\",\"pk\":\"a\"},\n{\"id\":\"2\",\"pk\":\"b\"}\n]";
    assert_eq!(e.import(array.as_bytes(), ImportOptions::default(), |_| {}).unwrap().imported, 2);

    // Export, then import the export: the same items.
    let mut out = Vec::new();
    assert_eq!(c.export_ndjson(&mut out).unwrap(), 3);
    let again = container("/pk");
    assert_eq!(again.import(out.as_slice(), ImportOptions::default(), |_| {}).unwrap().imported, 3);
    let docs = |c: &Container| snapshot(c).into_iter().map(|(k, (doc, _))| (k, doc)).collect::<Vec<_>>();
    assert_eq!(docs(&again), docs(&c));

    // Copy into a container keyed on another property.
    let rekeyed = container("/other");
    assert_eq!(c.copy_into(&rekeyed).unwrap(), 3);
    assert_eq!(rekeyed.scan_partition_key(&PartitionKey::from("x")).unwrap().len(), 2);
}

#[test]
fn databases_and_containers() {
    let store = Store::new();
    let db = store.create_database("db").unwrap();
    assert_eq!(store.create_database("db").unwrap_err().status_code(), 409);
    let props = json(r#"{"id":"telemetry","partitionKey":{"paths":["/deviceId"],"kind":"Hash","version":1}}"#);
    let c = db.create_container_from_properties(&props, ContainerSettings::default()).unwrap();
    assert_eq!(c.partition_key().version(), HashVersion::V1);
    assert_eq!(
        db.create_container_from_properties(&props, ContainerSettings::default()).unwrap_err().status_code(),
        409
    );
    c.create(&json(r#"{"id":"1","deviceId":"d"}"#)).unwrap();
    assert_eq!(store.database("db").unwrap().container("telemetry").unwrap().item_count(), 1);
    assert_eq!(store.database("nope").unwrap_err().status_code(), 404);
    assert_eq!(db.container("nope").unwrap_err().status_code(), 404);
    assert_eq!(db.container_ids(), vec!["telemetry".to_string()]);
    // The Cosmos form round-trips, synthetic keys included.
    let synthetic = json(
        r#"{"paths":["/partitionKey"],"kind":"Hash","version":2,"syntheticKey":{"property":"partitionKey","kind":"hashSuffix","base":"/date","source":"/vin","buckets":10}}"#,
    );
    let def = PartitionKeyDefinition::from_json(&synthetic).unwrap();
    assert_eq!(def.to_json(), synthetic);
    let hier = json(r#"{"paths":["/a","/b"],"kind":"MultiHash","version":2}"#);
    assert_eq!(PartitionKeyDefinition::from_json(&hier).unwrap().to_json(), hier);
    db.delete_container("telemetry").unwrap();
    store.delete_database("db").unwrap();
    assert!(store.database_ids().is_empty());
}

#[test]
fn deletes_compact_and_rollbacks_keep_creation_order() {
    let c = container("/pk");
    let key = PartitionKey::from("a");
    for i in 0..200 {
        c.create(&json(&format!(r#"{{"id":"{i}","pk":"a"}}"#))).unwrap();
    }
    // Delete most items (the slot list compacts along the way); the rest keep their order.
    for i in (0..200).filter(|i| i % 5 != 0) {
        c.delete(&key, &i.to_string(), &WriteOptions::default()).unwrap();
    }
    let order = |c: &Container| -> Vec<String> {
        c.scan().items().map(|i| i.doc.root().get("id").unwrap().as_str().unwrap().to_string()).collect()
    };
    let expected: Vec<String> = (0..200).filter(|i| i % 5 == 0).map(|i| i.to_string()).collect();
    assert_eq!(order(&c), expected);
    for id in &expected {
        c.read(&key, id).unwrap();
    }
    // A batch that deletes items in the middle and then fails puts them back in place.
    let ops: Vec<_> = ["5", "50", "195"]
        .iter()
        .map(|id| BatchOperation::Delete { id: id.to_string(), if_match: None })
        .chain([BatchOperation::Read { id: "missing".into() }])
        .collect();
    assert_eq!(c.execute_batch(&key, &ops).unwrap_err().index, 3);
    assert_eq!(order(&c), expected);
    // New items go after the old ones; a resumed scan continues where it stopped.
    c.create(&json(r#"{"id":"new","pk":"a"}"#)).unwrap();
    let all = order(&c);
    assert_eq!(all.last().map(String::as_str), Some("new"));
    assert_eq!(all.len(), expected.len() + 1);
}

#[test]
fn system_properties_sent_back_are_not_stored() {
    let c = seeded();
    let key = PartitionKey::from("a");
    let read = c.read(&key, "1").unwrap().item;
    c.replace(&key, "1", &read, &WriteOptions::default()).unwrap();
    let stored = c.read_stored(&key, "1").unwrap();
    assert_eq!(stored.doc.to_json_string().unwrap(), r#"{"id":"1","pk":"a","n":1}"#);
    let again = c.read(&key, "1").unwrap().item;
    assert_eq!(again.get("_rid"), read.get("_rid"));
    assert_ne!(again.get("_etag"), read.get("_etag"));
}

#[test]
fn the_store_is_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<Store>();
    shared::<Database>();
    shared::<Container>();
    shared::<StoredItem>();
}

/// NaN and infinities have no JSON form: a write that would store one is a 400 and changes
/// nothing (it used to succeed, and the property then read as absent).
#[test]
fn non_finite_numbers_are_rejected_and_change_nothing() {
    let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), ContainerSettings::default());
    let key = PartitionKey::from("a");
    let with = |v: f64| Value::object([("id", Value::from("1")), ("pk", Value::from("a")), ("n", Value::from(v))]);
    let err = c.create(&with(f64::INFINITY)).unwrap_err();
    assert_eq!(err.status_code(), 400, "{err}");
    assert_eq!(c.item_count(), 0);
    c.create(&with(1e308)).unwrap();
    let err = c.upsert(&with(f64::NAN), &WriteOptions::default()).unwrap_err();
    assert_eq!(err.status_code(), 400, "{err}");
    let set = PatchOperation::Set { path: "/m".into(), value: Value::from(f64::NEG_INFINITY) };
    assert_eq!(c.patch(&key, "1", &[set], &WriteOptions::default()).unwrap_err().status_code(), 400);
    let incr = PatchOperation::Increment { path: "/n".into(), by: 1e308 };
    let err = c.patch(&key, "1", &[incr], &WriteOptions::default()).unwrap_err();
    assert_eq!(err.status_code(), 400, "{err}");
    assert!(err.to_string().contains("overflows"), "{err}");
    assert_eq!(c.read(&key, "1").unwrap().item.get("n"), &Value::from(1e308));
    assert!(c.read(&key, "1").unwrap().item.get("m").is_undefined());
}

/// A UTF-8 byte-order mark before a JSON array or NDJSON is not data (it used to make a JSON
/// array import nothing and NDJSON lose its first line).
#[test]
fn a_byte_order_mark_is_skipped() {
    for text in [
        "\u{feff}[{\"id\":\"1\",\"pk\":\"a\"},{\"id\":\"2\",\"pk\":\"a\"}]",
        "\u{feff}{\"id\":\"1\",\"pk\":\"a\"}\n{\"id\":\"2\",\"pk\":\"a\"}\n",
    ] {
        let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), ContainerSettings::default());
        let summary =
            c.import(text.as_bytes(), ImportOptions { fail_fast: true, ..ImportOptions::default() }, |_| {}).unwrap();
        assert_eq!((summary.imported, summary.skipped, summary.failed), (2, 0, 0), "{text:?}");
    }
    assert_eq!(parse_json("\u{feff}{\"a\":1}").unwrap(), parse_json("{\"a\":1}").unwrap());
}

/// A line that is not UTF-8 is skipped with serde_json's error and its position; the lines
/// around it (UTF-8, checked once per line before parsing) are imported.
#[test]
fn a_line_that_is_not_utf8_is_skipped_with_its_position() {
    let mut text = b"{\"id\":\"1\",\"pk\":\"\xc3\xa9\"}\n{\"id\":\"2\",\"pk\":\"a\xff\"}\n".to_vec();
    text.extend_from_slice("{\"id\":\"3\",\"pk\":\"a\",\"s\":\"\\u00e9\\n\u{1F600}\"}\n".as_bytes());
    let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), ContainerSettings::default());
    let summary = c.import(&text[..], ImportOptions::default(), |_| {}).unwrap();
    assert_eq!((summary.imported, summary.skipped, summary.failed), (2, 1, 0));
    assert_eq!(summary.problems[0].line, 2);
    assert!(summary.problems[0].message.contains("column 18"), "{}", summary.problems[0].message);
    let read = c.read(&PartitionKey::from("a"), "3").unwrap();
    assert_eq!(read.item.get("s"), &Value::from("é\n\u{1F600}"));
    assert!(c.read(&PartitionKey::from("é"), "1").is_ok());
}

/// A logical partition finds its items by id through a table of positions hashed by the ids the
/// items hold: after deletes that compact its slots, rolled-back deletes put back in the middle,
/// replaces and ids created again, every id reads what a model says, and no other does.
#[test]
fn ids_are_found_after_compactions_restores_and_recreation() {
    let c = container("/pk");
    let key = PartitionKey::from("a");
    let none = WriteOptions::default();
    let doc = |id: &str, v: usize| parse_json(&format!(r#"{{"pk":"a","v":{v},"id":"{id}"}}"#)).unwrap();
    let mut model: BTreeMap<String, usize> = BTreeMap::new();
    for i in 0..200 {
        let id = format!("item-{i}-{}", "x".repeat(i % 40));
        c.create(&doc(&id, i)).unwrap();
        model.insert(id, i);
    }
    let ids: Vec<String> = model.keys().cloned().collect();
    let check = |model: &BTreeMap<String, usize>, when: &str| {
        for id in &ids {
            let read = c.read(&key, id).ok().map(|r| r.item.get("v").as_f64().unwrap() as usize);
            assert_eq!(read, model.get(id).copied(), "{id} {when}");
        }
        assert_eq!(c.scan().items().count(), model.len(), "{when}");
    };
    // 150 deletes: the dead slots pass 32 and the live ones, so the slots are compacted.
    for id in ids.iter().step_by(4).chain(ids.iter().skip(1).step_by(2)).take(150) {
        c.delete(&key, id, &none).unwrap();
        model.remove(id);
    }
    check(&model, "after the deletes");
    // A batch that deletes and fails puts the items back at their places in creation order.
    let live: Vec<String> = model.keys().take(3).cloned().collect();
    let batch: Vec<BatchOperation> = live
        .iter()
        .map(|id| BatchOperation::Delete { id: id.clone(), if_match: None })
        .chain([BatchOperation::Replace { id: "missing".into(), item: doc("missing", 0), if_match: None }])
        .collect();
    assert!(c.execute_batch(&key, &batch).is_err());
    check(&model, "after the rolled-back batch");
    for (n, id) in ids.iter().enumerate().filter(|(n, _)| n % 5 == 0) {
        if model.contains_key(id) {
            c.replace(&key, id, &doc(id, 1000 + n), &none).unwrap();
        } else {
            c.create(&doc(id, 1000 + n)).unwrap();
        }
        model.insert(id.clone(), 1000 + n);
    }
    check(&model, "after replaces and creates");
    for id in model.keys() {
        assert_eq!(c.create(&doc(id, 0)).unwrap_err().status_code(), 409, "{id}");
    }
}
