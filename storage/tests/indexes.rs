//! Indexes against a rebuild: after any random sequence of writes, patches, deletes, batches
//! (committed and rolled back), splits, policy changes and suspensions (with the transformation
//! part done), every maintained index equals one rebuilt from its items, item by item and in bulk;
//! and index probes find exactly the items a scan finds.

use std::ops::Bound;

use cosmoql_storage::*;
use cosmoql_value::{parse_json, Value};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Create(u8, u8, Body),
    Upsert(u8, u8, Body),
    Replace(u8, u8, Body),
    Delete(u8, u8),
    Patch(u8, u8, i8),
    Batch(u8, Vec<(u8, Body)>, bool),
    Split(u8),
    Policy(u8),
    Transform(u8),
    Suspend,
}

/// The varying part of an item: a number or a string or nothing at `v`, tags, a nested value.
#[derive(Debug, Clone)]
struct Body {
    v: Option<Result<i8, String>>,
    tags: Vec<u8>,
    nested: Option<bool>,
    /// At `g`: a GeoJSON point, a polygon, or a string.
    geo: Option<u8>,
}

fn body() -> impl Strategy<Value = Body> {
    (
        prop::option::of(prop_oneof![any::<i8>().prop_map(Ok), "[ab]{0,2}".prop_map(Err)]),
        prop::collection::vec(0u8..4, 0..4),
        prop::option::of(any::<bool>()),
        prop::option::of(0u8..9),
    )
        .prop_map(|(v, tags, nested, geo)| Body { v, tags, nested, geo })
}

fn op() -> impl Strategy<Value = Op> {
    let (pk, id) = (0u8..6, 0u8..10);
    prop_oneof![
        4 => (pk.clone(), id.clone(), body()).prop_map(|(p, i, b)| Op::Create(p, i, b)),
        2 => (pk.clone(), id.clone(), body()).prop_map(|(p, i, b)| Op::Upsert(p, i, b)),
        2 => (pk.clone(), id.clone(), body()).prop_map(|(p, i, b)| Op::Replace(p, i, b)),
        2 => (pk.clone(), id.clone()).prop_map(|(p, i)| Op::Delete(p, i)),
        2 => (pk.clone(), id.clone(), any::<i8>()).prop_map(|(p, i, by)| Op::Patch(p, i, by)),
        2 => (pk.clone(), prop::collection::vec((id, body()), 1..4), any::<bool>())
            .prop_map(|(p, ops, fail)| Op::Batch(p, ops, fail)),
        1 => pk.prop_map(Op::Split),
        1 => (0u8..4).prop_map(Op::Policy),
        1 => (1u8..3).prop_map(Op::Transform),
        1 => Just(Op::Suspend),
    ]
}

fn doc(pk: u8, id: u8, b: &Body) -> Value {
    let mut text = format!(r#"{{"id":"i{id}","pk":"p{pk}""#);
    match &b.v {
        Some(Ok(n)) => text.push_str(&format!(r#","v":{n}"#)),
        Some(Err(s)) => text.push_str(&format!(r#","v":"{s}""#)),
        None => {}
    }
    let tags: Vec<String> = b.tags.iter().map(|t| format!(r#""t{t}""#)).collect();
    text.push_str(&format!(r#","tags":[{}]"#, tags.join(",")));
    if let Some(flag) = b.nested {
        text.push_str(&format!(r#","o":{{"flag":{flag},"list":[{{"n":{}}},null]}}"#, b.tags.len()));
    }
    match b.geo {
        Some(k) if k % 3 == 0 => text.push_str(&format!(r#","g":{{"type":"Point","coordinates":[{k},-{k}]}}"#)),
        Some(k) if k % 3 == 1 => {
            text.push_str(&format!(r#","g":{{"type":"Polygon","coordinates":[[[0,0],[{k},0],[{k},{k}],[0,0]]]}}"#))
        }
        Some(k) => text.push_str(&format!(r#","g":"p{k}""#)),
        None => {}
    }
    text.push('}');
    parse_json(&text).unwrap()
}

fn policies() -> [IndexingPolicy; 4] {
    let p = |json: &str| IndexingPolicy::from_json(&parse_json(json).unwrap()).unwrap();
    [
        IndexingPolicy::default(),
        p(r#"{"indexingMode":"none","automatic":false}"#),
        p(r#"{"includedPaths":[{"path":"/v/?"},{"path":"/o/*"}],"excludedPaths":[{"path":"/*"}],
             "spatialIndexes":[{"path":"/g/*","types":["Point","Polygon"]}]}"#),
        p(r#"{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/tags/*"}],
             "compositeIndexes":[[{"path":"/v"},{"path":"/pk","order":"descending"}]]}"#),
    ]
}

fn key(pk: u8) -> PartitionKey {
    PartitionKey::from(format!("p{pk}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn every_index_equals_a_rebuild_from_the_items(
        ops in prop::collection::vec(op(), 1..80),
        initial in 1usize..4,
        split_at in 3usize..20,
    ) {
        let settings =
            ContainerSettings { initial_partitions: initial, split_max_items: split_at, ..ContainerSettings::default() };
        let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings);
        let none = WriteOptions::default();
        for op in &ops {
            // Errors (conflicts, missing items, failed batches) are part of the sequence.
            match op {
                Op::Create(p, i, b) => drop(c.create(&doc(*p, *i, b))),
                Op::Upsert(p, i, b) => drop(c.upsert(&doc(*p, *i, b), &none)),
                Op::Replace(p, i, b) => drop(c.replace(&key(*p), &format!("i{i}"), &doc(*p, *i, b), &none)),
                Op::Delete(p, i) => drop(c.delete(&key(*p), &format!("i{i}"), &none)),
                Op::Patch(p, i, by) => {
                    let ops = [
                        PatchOperation::Increment { path: "/v".into(), by: f64::from(*by) },
                        PatchOperation::Add { path: "/tags/0".into(), value: Value::from("t9") },
                    ];
                    drop(c.patch(&key(*p), &format!("i{i}"), &ops, &none));
                }
                Op::Batch(p, items, fail) => {
                    let mut batch: Vec<BatchOperation> = items
                        .iter()
                        .map(|(i, b)| BatchOperation::Upsert { item: doc(*p, *i, b), if_match: None })
                        .collect();
                    batch.push(BatchOperation::Delete { id: format!("i{}", items[0].0), if_match: None });
                    if *fail {
                        batch.push(BatchOperation::Read { id: "missing".into() });
                    }
                    let r = c.execute_batch(&key(*p), &batch);
                    prop_assert_eq!(r.is_err(), *fail);
                }
                Op::Split(p) => drop(c.force_split(&PartitionKeyDefinition::hash("/pk").unwrap().epk(&key(*p)).unwrap())),
                Op::Policy(n) => c.replace_indexing_policy(policies()[usize::from(*n)].clone()),
                Op::Transform(n) => drop(c.transform_indexes(usize::from(*n))),
                Op::Suspend => c.suspend_indexes(),
            }
            if let Err(e) = c.check_indexes() {
                prop_assert!(false, "after {:?}: {}", op, e);
            }
        }
        prop_assert_eq!(c.transform_indexes(usize::MAX), 100);
        if let Err(e) = c.check_indexes() {
            prop_assert!(false, "after the transformation: {}", e);
        }
        // Probes find what a scan finds.
        let items: Vec<Value> = c.scan().items().map(|i| i.doc.to_value()).collect();
        let policy = c.indexing_policy();
        let v = vec![IndexStep::Key("v".into())];
        let tags = vec![IndexStep::Key("tags".into()), IndexStep::Element];
        let probes = [
            (IndexProbe::Range { path: v.clone(), lower: Bound::Excluded(IndexKey::number(0.0).unwrap()), upper: Bound::Excluded(IndexKey::string("")) }, &v),
            (IndexProbe::equals(tags.clone(), IndexKey::string("t1")), &tags),
            (IndexProbe::Prefix { path: v.clone(), prefix: "a".into() }, &v),
        ];
        for (probe, path) in probes {
            let found = c.index_probe(&all(), &probe, None);
            if !policy.is_indexed(path) {
                prop_assert!(found.is_none());
                continue;
            }
            let found = found.expect("an indexed path is served after the transformation").0.len();
            let expected = items.iter().filter(|item| matches_probe(item, &probe)).count();
            prop_assert_eq!(found, expected, "{:?}", probe);
        }
    }
}

fn matches_probe(item: &Value, probe: &IndexProbe) -> bool {
    match probe {
        IndexProbe::Range { lower: Bound::Excluded(k), .. } => item
            .as_object()
            .and_then(|o| o.get("v"))
            .and_then(Value::as_f64)
            .is_some_and(|n| n > k.to_value().as_f64().unwrap()),
        IndexProbe::Range { lower: Bound::Included(k), .. } => item
            .as_object()
            .and_then(|o| o.get("tags"))
            .and_then(Value::as_array)
            .is_some_and(|tags| tags.contains(&k.to_value())),
        IndexProbe::Prefix { prefix, .. } => item
            .as_object()
            .and_then(|o| o.get("v"))
            .and_then(Value::as_str)
            .is_some_and(|s| s.starts_with(prefix.as_str())),
        _ => unreachable!(),
    }
}

#[test]
fn a_transformation_reports_progress_partition_by_partition_and_keeps_results_exact() {
    let settings = ContainerSettings { initial_partitions: 4, ..ContainerSettings::default() };
    let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings);
    for i in 0..200 {
        c.create(&parse_json(&format!(r#"{{"id":"{i}","pk":"{}","v":{i}}}"#, i % 17)).unwrap()).unwrap();
    }
    let v = vec![IndexStep::Key("v".into())];
    let probe = IndexProbe::Range {
        path: v,
        lower: Bound::Included(IndexKey::number(100.0).unwrap()),
        upper: Bound::Unbounded,
    };
    assert_eq!(c.index_probe(&all(), &probe, None).unwrap().0.len(), 100);
    // Excluding /v stops serving at once.
    let excluded = r#"{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/v/?"}]}"#;
    c.replace_indexing_policy(IndexingPolicy::from_json(&parse_json(excluded).unwrap()).unwrap());
    assert_eq!(c.index_transformation_progress(), 0);
    assert!(c.index_probe(&all(), &probe, None).is_none());
    assert_eq!(c.transform_indexes(usize::MAX), 100);
    // Including it again serves only once every partition is rebuilt.
    c.replace_indexing_policy(IndexingPolicy::default());
    assert!(c.index_probe(&all(), &probe, None).is_none());
    assert_eq!(c.transform_indexes(1), 25);
    assert!(c.index_probe(&all(), &probe, None).is_none());
    assert_eq!(c.transform_indexes(2), 75);
    assert_eq!(c.transform_indexes(1), 100);
    assert_eq!(c.index_probe(&all(), &probe, None).unwrap().0.len(), 100);
    c.check_indexes().unwrap();
    let stats = c.index_stats();
    assert!(stats.entries >= 200 * 4, "id, pk, v and _ts of each item: {stats:?}");
}

fn all() -> Vec<(Epk, Epk)> {
    vec![(Epk::min(), Epk::max())]
}

#[test]
fn keys_only_walks_find_what_full_walks_find_and_locate_places_them() {
    let settings = ContainerSettings { initial_partitions: 4, ..ContainerSettings::default() };
    let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings);
    for i in 0..300 {
        // Ties on `v` (30 values), so sequence numbers order entries within a key.
        c.create(&parse_json(&format!(r#"{{"id":"{i}","pk":"k{}","v":{}}}"#, i % 17, i % 30)).unwrap()).unwrap();
    }
    let path = vec![IndexStep::Key("v".into())];
    let first = OrderedWalk { path: &path, descending: false, after: None, limit: 2 };
    let firsts = c.index_ordered(&all(), &first, &mut IndexWork::default()).unwrap();
    // Items "0" and "30" (the first two with v = 0): the first is deleted below.
    let (deleted, kept) = (firsts[0].1.clone(), firsts[1].1.clone());
    for i in (0..300).step_by(7) {
        c.delete(&PartitionKey::from(format!("k{}", i % 17)), &i.to_string(), &WriteOptions::default()).unwrap();
    }
    let parts = c.partitions();
    let point = c.partition_key().epk(&PartitionKey::from("k3".to_string())).unwrap();
    let after_point = Epk::from_bytes(&[point.as_bytes(), &[0]].concat());
    // All of partition 1 but its last logical partition: more than half its items.
    let in_1: Vec<Epk> = (0..17)
        .map(|k| c.partition_key().epk(&PartitionKey::from(format!("k{k}"))).unwrap())
        .filter(|e| *e >= parts[1].min && *e < parts[1].max)
        .collect();
    assert!(in_1.len() >= 3, "{} logical partitions in partition 1", in_1.len());
    let last_of_1 = in_1.iter().max().unwrap().clone();
    let range_sets = [
        // Whole partitions (no entry's item is looked up), one partition, half of one
        // (entries kept by where their items are), one logical partition (its own order).
        all(),
        vec![(parts[1].min.clone(), parts[1].max.clone())],
        vec![(parts[1].min.clone(), last_of_1)],
        vec![(point, after_point)],
    ];
    for ranges in &range_sets {
        for descending in [false, true] {
            let mut after = None;
            let mut seen = 0;
            loop {
                let walk = OrderedWalk { path: &path, descending, after: after.as_ref(), limit: 9 };
                let (mut full_work, mut keys_work) = (IndexWork::default(), IndexWork::default());
                let full = c.index_ordered(ranges, &walk, &mut full_work).unwrap();
                let keys = c.index_ordered_keys(&[ranges], &walk, &mut keys_work).unwrap().remove(0);
                let expected: Vec<(IndexKey, u64)> = full.iter().map(|(k, pos, _)| (k.clone(), pos.seq)).collect();
                assert_eq!(keys, expected, "{ranges:?} descending {descending}");
                assert_eq!(keys_work.entries, full_work.entries);
                for (_, pos, _) in &full {
                    assert_eq!(c.locate(ranges, pos.seq).as_ref(), Some(pos));
                }
                seen += keys.len();
                match keys.last() {
                    Some(last) if keys.len() == 9 => after = Some(last.clone()),
                    _ => break,
                }
            }
            let inside: usize = ranges.iter().map(|(min, max)| c.scan_range(min.clone(), max.clone()).count()).sum();
            assert_eq!(seen, inside, "{ranges:?}");
        }
    }
    // Several units at once (each physical partition, and one of them in two pieces): what each
    // alone finds.
    let mid = Epk::from_bytes(&[parts[2].min.as_bytes(), &[0x80]].concat());
    let mut units: Vec<Vec<(Epk, Epk)>> = parts.iter().map(|p| vec![(p.min.clone(), p.max.clone())]).collect();
    units[2] = vec![(parts[2].min.clone(), mid.clone())];
    units.insert(3, vec![(mid, parts[2].max.clone())]);
    let unit_refs: Vec<&[(Epk, Epk)]> = units.iter().map(Vec::as_slice).collect();
    for descending in [false, true] {
        let walk = OrderedWalk { path: &path, descending, after: None, limit: 7 };
        let (mut together, mut alone) = (IndexWork::default(), IndexWork::default());
        let all_at_once = c.index_ordered_keys(&unit_refs, &walk, &mut together).unwrap();
        let one_by_one: Vec<_> =
            unit_refs.iter().map(|u| c.index_ordered_keys(&[u], &walk, &mut alone).unwrap().remove(0)).collect();
        assert_eq!(all_at_once, one_by_one);
        assert_eq!(together.entries, alone.entries);
        for (unit, found) in units.iter().zip(&all_at_once) {
            let inside: usize = unit.iter().map(|(min, max)| c.scan_range(min.clone(), max.clone()).count()).sum();
            assert_eq!(found.len(), inside.min(7));
        }
    }
    // A deleted item, or one outside the ranges, is not located.
    assert_eq!(c.locate(&all(), deleted.seq), None);
    assert_eq!(c.locate(&all(), kept.seq), Some(kept.clone()));
    let elsewhere = parts.iter().find(|p| kept.epk < p.min || kept.epk >= p.max).unwrap();
    assert_eq!(c.locate(&[(elsewhere.min.clone(), elsewhere.max.clone())], kept.seq), None);
}
