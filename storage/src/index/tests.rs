use super::*;
use crate::doc::Doc;
use crate::item::ItemMeta;

fn item(seq: u64, json: &str) -> StoredItem {
    StoredItem { doc: Doc::from_json_str(json).unwrap(), meta: ItemMeta { seq, lsn: seq, ts: 7, ttl: None } }
}

fn key(path: &str) -> Vec<IndexStep> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| if s == "[]" { IndexStep::Element } else { IndexStep::Key(s.into()) })
        .collect()
}

#[test]
fn keys_sort_in_the_engine_order_of_values() {
    let keys = [
        IndexKey::Null,
        IndexKey::Bool(false),
        IndexKey::Bool(true),
        IndexKey::number(-1.5).unwrap(),
        IndexKey::number(-0.0).unwrap(),
        IndexKey::number(2.0).unwrap(),
        IndexKey::string(""),
        IndexKey::string("a"),
        IndexKey::string("ab"),
        IndexKey::string(&"b".repeat(38)),
        IndexKey::string(&"b".repeat(39)),
        IndexKey::string(&format!("{}c", "b".repeat(37))),
        IndexKey::string("é"),
    ];
    for w in keys.windows(2) {
        assert!(w[0] < w[1], "{:?} < {:?}", w[0], w[1]);
        assert!(w[0].to_value() < w[1].to_value());
    }
    assert_eq!(IndexKey::number(-0.0), IndexKey::number(0.0));
    assert!(IndexKey::number(f64::NAN).is_none() && IndexKey::number(f64::INFINITY).is_none());
}

#[test]
fn entries_cover_scalars_array_elements_ts_and_composites_and_leave_with_the_item() {
    let policy = IndexingPolicy {
        composite: vec![vec![
            cosmoql_catalog::indexing::CompositePath { text: "/a".into(), segments: key("/a"), descending: false },
            cosmoql_catalog::indexing::CompositePath { text: "/b".into(), segments: key("/b"), descending: true },
        ]],
        ..IndexingPolicy::default()
    };
    let mut index = PartitionIndex::new(Arc::new(policy));
    let epk = Epk::min();
    let one = item(1, r#"{"id":"x","a":1,"b":"s","tags":["t","t",{"n":2}],"o":{"p":null}}"#);
    let two = item(2, r#"{"id":"y","a":1,"b":true}"#);
    index.insert(&epk, &one);
    index.insert(&epk, &two);
    let mut work = IndexWork::default();
    let eq = |p: &str, k: IndexKey| IndexProbe::equals(key(p), k);
    assert_eq!(index.probe(&eq("/a", IndexKey::number(1.0).unwrap()), &mut work), Some(vec![1, 2]));
    assert_eq!(index.probe(&eq("/tags/[]", IndexKey::string("t")), &mut work), Some(vec![1]));
    assert_eq!(index.probe(&eq("/tags/[]/n", IndexKey::number(2.0).unwrap()), &mut work), Some(vec![1]));
    assert_eq!(index.probe(&eq("/o/p", IndexKey::Null), &mut work), Some(vec![1]));
    assert_eq!(index.probe(&eq("/_ts", IndexKey::number(7.0).unwrap()), &mut work), Some(vec![1, 2]));
    assert_eq!(index.probe(&eq("/id", IndexKey::string("y")), &mut work), Some(vec![2]));
    assert_eq!(index.items_with_scalar(&key("/b")), 2);
    let composite: Vec<_> = index.dump().into_iter().filter(|(p, _, _)| p == "/a,/b").collect();
    assert_eq!(composite.len(), 2);
    index.remove(&one);
    index.remove(&two);
    assert!(index.dump().is_empty(), "{:?}", index.dump());
    assert_eq!(index.stats().entries, 0);
}

#[test]
fn an_excluded_path_is_not_served_and_ordered_walks_resume_after_a_cursor() {
    let policy = IndexingPolicy::from_json(
        &cosmoql_value::parse_json(r#"{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/secret/?"}]}"#)
            .unwrap(),
    )
    .unwrap();
    let mut index = PartitionIndex::new(Arc::new(policy));
    for (seq, v) in [(1, 3.0), (2, 1.0), (3, 3.0), (4, 2.0)] {
        index.insert(&Epk::min(), &item(seq, &format!(r#"{{"id":"{seq}","v":{v},"secret":1}}"#)));
    }
    let mut work = IndexWork::default();
    assert!(index.probe(&IndexProbe::equals(key("/secret"), IndexKey::Null), &mut work).is_none());
    let all = |_: &Epk| true;
    let walk = index.ordered(&key("/v"), true, None, 10, &all, &mut work).unwrap();
    let seqs: Vec<u64> = walk.iter().map(|(_, s, _)| *s).collect();
    // Descending: equal keys in descending sequence order too (`tie_order`).
    assert_eq!(seqs, [3, 1, 4, 2]);
    let after = (walk[0].0.clone(), walk[0].1);
    let rest = index.ordered(&key("/v"), true, Some(&after), 2, &all, &mut work).unwrap();
    assert_eq!(rest.iter().map(|(_, s, _)| *s).collect::<Vec<_>>(), [1, 4]);
    let asc = index.ordered(&key("/v"), false, Some(&(IndexKey::number(1.0).unwrap(), 2)), 9, &all, &mut work);
    assert_eq!(asc.unwrap().iter().map(|(_, s, _)| *s).collect::<Vec<_>>(), [4, 1, 3]);
}

mod bulk {
    use super::*;
    use proptest::prelude::*;

    /// Strings that tie on the sort prefix: shared first 14 bytes, NULs, lengths about 15.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            "[ab]{0,3}",
            "(abcdefghijklm|abcdefghijklmn)[\\x00a-c]{0,3}",
            "[\\x00z]{0,2}",
            "x{38,40}[ab]?",
        ]
    }

    fn scalar() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("null".to_string()),
            any::<bool>().prop_map(|b| b.to_string()),
            prop_oneof![Just(-0.0f64), Just(0.0), Just(-1.5), Just(2.0), Just(1e300), Just(-5e-324)]
                .prop_map(|n| format!("{n:e}")),
            text().prop_map(|s| serde_json::to_string(&s).unwrap()),
        ]
    }

    fn doc(id: usize) -> impl Strategy<Value = String> {
        (scalar(), scalar(), proptest::collection::vec(scalar(), 0..4))
            .prop_map(move |(a, b, tags)| format!(r#"{{"id":"{id}","a":{a},"b":{b},"tags":[{}]}}"#, tags.join(",")))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The bulk build (entries collected, sorted by prefix and key, grouped) gives the index
        /// that entering the items one at a time gives, whatever order the items come in.
        #[test]
        fn a_bulk_build_equals_entering_items_one_by_one(
            docs in (1usize..60).prop_flat_map(|n| (0..n).map(doc).collect::<Vec<_>>()),
            rotate in 0usize..60,
        ) {
            let policy = Arc::new(IndexingPolicy {
                composite: vec![vec![
                    cosmoql_catalog::indexing::CompositePath { text: "/b".into(), segments: key("/b"), descending: true },
                    cosmoql_catalog::indexing::CompositePath { text: "/a".into(), segments: key("/a"), descending: false },
                ]],
                ..IndexingPolicy::default()
            });
            let epks = [Epk::min(), Epk::max()];
            let items: Vec<(Epk, StoredItem)> = docs
                .iter()
                .enumerate()
                .map(|(i, d)| (epks[i % 2].clone(), item(i as u64 + 1, d)))
                .collect();
            let mut one_by_one = PartitionIndex::new(Arc::clone(&policy));
            for (epk, it) in &items {
                one_by_one.insert(epk, it);
            }
            let mut shuffled: Vec<&(Epk, StoredItem)> = items.iter().collect();
            let by = rotate % shuffled.len();
            shuffled.rotate_left(by);
            shuffled.reverse();
            let bulk = PartitionIndex::build(policy, shuffled.into_iter().map(|(e, i)| (e, i)));
            prop_assert_eq!(bulk.dump(), one_by_one.dump());
            prop_assert_eq!(bulk.stats().entries, one_by_one.stats().entries);
            prop_assert_eq!(bulk.stats().keys, one_by_one.stats().keys);
        }
    }
}
