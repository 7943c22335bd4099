//! The store against a simple model: random operation sequences with splits (property test), and
//! writers racing scanners while partitions split (concurrency test).

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use cosmoql_storage::*;
use cosmoql_value::Value;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Create(u8, u8, i32),
    Upsert(u8, u8, i32),
    Replace(u8, u8, i32),
    Delete(u8, u8),
    Split(u8),
}

fn op() -> impl Strategy<Value = Op> {
    let (pk, id) = (0u8..8, 0u8..16);
    prop_oneof![
        4 => (pk.clone(), id.clone(), any::<i32>()).prop_map(|(p, i, v)| Op::Create(p, i, v)),
        2 => (pk.clone(), id.clone(), any::<i32>()).prop_map(|(p, i, v)| Op::Upsert(p, i, v)),
        2 => (pk.clone(), id.clone(), any::<i32>()).prop_map(|(p, i, v)| Op::Replace(p, i, v)),
        2 => (pk.clone(), id).prop_map(|(p, i)| Op::Delete(p, i)),
        1 => pk.prop_map(Op::Split),
    ]
}

fn doc(pk: u8, id: u8, v: i32) -> Value {
    cosmoql_value::parse_json(&format!(r#"{{"id":"i{id}","pk":"p{pk}","v":{v}}}"#)).unwrap()
}

fn key(pk: u8) -> PartitionKey {
    PartitionKey::from(format!("p{pk}"))
}

fn check_partitions(c: &Container) {
    let parts = c.partitions();
    assert_eq!(parts[0].min, Epk::min());
    assert_eq!(parts.last().unwrap().max, Epk::max());
    for w in parts.windows(2) {
        assert_eq!(w[0].max, w[1].min, "partition ranges must be contiguous");
        assert!(w[0].min < w[0].max);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_operations_match_the_model(
        ops in prop::collection::vec(op(), 1..120),
        initial in 1usize..5,
        split_at in 2usize..20,
    ) {
        let settings = ContainerSettings { initial_partitions: initial, split_max_items: split_at, ..ContainerSettings::default() };
        let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings);
        let mut model: BTreeMap<(u8, u8), i32> = BTreeMap::new();
        let none = WriteOptions::default();
        for op in &ops {
            match *op {
                Op::Create(p, i, v) => {
                    let r = c.create(&doc(p, i, v));
                    if let std::collections::btree_map::Entry::Vacant(e) = model.entry((p, i)) {
                        prop_assert!(r.is_ok(), "{:?}", r);
                        e.insert(v);
                    } else {
                        prop_assert_eq!(r.unwrap_err().status_code(), 409);
                    }
                }
                Op::Upsert(p, i, v) => {
                    let status = c.upsert(&doc(p, i, v), &none).unwrap().status;
                    prop_assert_eq!(status, if model.insert((p, i), v).is_some() { 200 } else { 201 });
                }
                Op::Replace(p, i, v) => {
                    let r = c.replace(&key(p), &format!("i{i}"), &doc(p, i, v), &none);
                    match model.get_mut(&(p, i)) {
                        Some(slot) => {
                            prop_assert!(r.is_ok());
                            *slot = v;
                        }
                        None => prop_assert_eq!(r.unwrap_err().status_code(), 404),
                    }
                }
                Op::Delete(p, i) => {
                    let r = c.delete(&key(p), &format!("i{i}"), &none);
                    match model.remove(&(p, i)) {
                        Some(_) => prop_assert!(r.is_ok()),
                        None => prop_assert_eq!(r.unwrap_err().status_code(), 404),
                    }
                }
                Op::Split(p) => {
                    let epk = c.partition_key().epk(&key(p)).unwrap();
                    c.force_split(&epk);
                }
            }
        }
        check_partitions(&c);
        // Every item is found by point read, with its latest value.
        for (&(p, i), &v) in &model {
            let item = c.read(&key(p), &format!("i{i}")).unwrap().item;
            prop_assert_eq!(item.get("v"), &Value::from(f64::from(v)));
        }
        // A scan of all physical partitions yields each item exactly once.
        let mut seen = BTreeMap::new();
        for item in c.scan().items() {
            let root = item.doc.root();
            let p = root.get("pk").unwrap().as_str().unwrap().to_string();
            let i = root.get("id").unwrap().as_str().unwrap().to_string();
            let v = root.get("v").unwrap().as_f64().unwrap() as i32;
            prop_assert!(seen.insert((p, i), v).is_none(), "an item appeared twice");
        }
        let expected: BTreeMap<_, _> = model.iter().map(|(&(p, i), &v)| ((format!("p{p}"), format!("i{i}")), v)).collect();
        prop_assert_eq!(seen, expected);
        prop_assert_eq!(c.item_count(), model.len());
        let per_partition: usize = c.partitions().iter().map(|p| p.items).sum();
        prop_assert_eq!(per_partition, model.len());
    }
}

#[test]
fn writers_and_scanners_race_with_splits_and_nothing_is_lost_or_doubled() {
    const PRELOADED: usize = 2_000;
    const WRITERS: usize = 2;
    const PER_WRITER: usize = 3_000;
    let settings = ContainerSettings { split_max_items: 150, ..ContainerSettings::default() };
    let c = Arc::new(Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings));
    let item = |pk: usize, id: &str, v: usize| {
        cosmoql_value::parse_json(&format!(r#"{{"id":"{id}","pk":"p{pk}","v":{v}}}"#)).unwrap()
    };
    for i in 0..PRELOADED {
        c.create(&item(i % 60, &format!("pre{i}"), 0)).unwrap();
    }
    let splits_before = c.split_count();
    let done = Arc::new(AtomicBool::new(false));
    let scans = std::thread::scope(|s| {
        let mut writers = Vec::new();
        for w in 0..WRITERS {
            let c = Arc::clone(&c);
            writers.push(s.spawn(move || {
                for i in 0..PER_WRITER {
                    c.create(&item(i % 97, &format!("w{w}-{i}"), 1)).unwrap();
                    // Rewrite a preloaded item now and then: it must never vanish from a scan.
                    if i % 10 == 0 {
                        let j = (i * 7 + w) % PRELOADED;
                        c.upsert(&item(j % 60, &format!("pre{j}"), i), &WriteOptions::default()).unwrap();
                    }
                }
            }));
        }
        let mut scanners = Vec::new();
        for _ in 0..2 {
            let (c, done) = (Arc::clone(&c), Arc::clone(&done));
            scanners.push(s.spawn(move || {
                let mut scans = 0;
                loop {
                    let finished = done.load(Ordering::SeqCst);
                    let mut seen = HashSet::new();
                    let mut preloaded = 0;
                    for it in c.scan().items() {
                        let root = it.doc.root();
                        let id = root.get("id").unwrap().as_str().unwrap().to_string();
                        let pk = root.get("pk").unwrap().as_str().unwrap().to_string();
                        if id.starts_with("pre") {
                            preloaded += 1;
                        }
                        assert!(seen.insert((pk, id)), "an item appeared twice in one scan");
                    }
                    assert_eq!(preloaded, PRELOADED, "a scan lost items that existed before it started");
                    scans += 1;
                    if finished {
                        return (scans, seen.len());
                    }
                }
            }));
        }
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::SeqCst);
        scanners.into_iter().map(|s| s.join().unwrap()).collect::<Vec<_>>()
    });
    let total = PRELOADED + WRITERS * PER_WRITER;
    for (count, last_len) in &scans {
        assert!(*count >= 1);
        assert_eq!(*last_len, total, "the scan after the writers finished sees every item");
    }
    assert!(c.split_count() > splits_before, "the test must split partitions while it runs");
    check_partitions(&c);
    assert_eq!(c.item_count(), total);
    for w in 0..WRITERS {
        for i in 0..PER_WRITER {
            c.read(&PartitionKey::from(format!("p{}", i % 97)), &format!("w{w}-{i}")).unwrap();
        }
    }
}
