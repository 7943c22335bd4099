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

/// A bulk build packs the long lists of close numbers (`Postings::Packed`): probes, ordered
/// walks both ways from a cursor, keys, and the writes after it (which unpack a list) see what an
/// index entered item by item sees.
#[test]
fn packed_postings_serve_and_take_writes_as_plain_ones() {
    let policy = Arc::new(IndexingPolicy::default());
    let items: Vec<StoredItem> = (1..=300u64)
        .map(|seq| {
            item(seq * 3, &format!(r#"{{"id":"{seq}","g":"g{}","n":{},"t":["x","y{}"]}}"#, seq % 3, seq % 7, seq % 2))
        })
        .collect();
    let epk = Epk::min();
    let mut bulk = PartitionIndex::build(Arc::clone(&policy), items.iter().map(|it| (&epk, it)));
    let mut plain = PartitionIndex::new(policy);
    for it in &items {
        plain.insert(&epk, it);
    }
    let packed = |index: &PartitionIndex| {
        index
            .root
            .find(&key("/g"))
            .map_or(0, |n| n.values.values().filter(|p| matches!(p, Postings::Packed(_))).count())
    };
    assert_eq!(packed(&bulk), 3, "the three values of /g hold 100 items each");
    assert_eq!(packed(&plain), 0);
    let all = |_: &Epk| true;
    let compare = |bulk: &PartitionIndex, plain: &PartitionIndex| {
        let mut work = IndexWork::default();
        assert_eq!(bulk.dump(), plain.dump());
        for probe in [
            IndexProbe::equals(key("/g"), IndexKey::string("g1")),
            IndexProbe::equals(key("/t/[]"), IndexKey::string("x")),
            IndexProbe::Range {
                path: key("/n"),
                lower: Bound::Included(IndexKey::number(2.0).unwrap()),
                upper: Bound::Excluded(IndexKey::number(5.0).unwrap()),
            },
        ] {
            assert_eq!(bulk.probe(&probe, &mut work), plain.probe(&probe, &mut work));
        }
        for descending in [false, true] {
            let walk = |index: &PartitionIndex, after: Option<&(IndexKey, u64)>| {
                let mut work = IndexWork::default();
                index
                    .ordered(&key("/g"), descending, after, 1000, &all, &mut work)
                    .map(|w| w.into_iter().map(|(k, s, _)| (k, s)).collect::<Vec<_>>())
            };
            let whole = walk(bulk, None).unwrap();
            assert_eq!(Some(&whole), walk(plain, None).as_ref());
            for at in [0, 1, 50, 99, 100, 150, whole.len() - 1] {
                let cursor = whole[at].clone();
                assert_eq!(walk(bulk, Some(&cursor)), walk(plain, Some(&cursor)), "after {cursor:?}");
                assert_eq!(walk(bulk, Some(&cursor)).unwrap(), whole[at + 1..].to_vec());
            }
        }
        let mut work = IndexWork::default();
        assert_eq!(bulk.keys(&key("/g"), &all, &mut work), plain.keys(&key("/g"), &all, &mut work));
        let odd = |seq: u64, _: &Epk| seq % 2 == 1;
        for descending in [false, true] {
            assert_eq!(
                bulk.first_key(&key("/n"), descending, &odd, &mut work),
                plain.first_key(&key("/n"), descending, &odd, &mut work)
            );
        }
    };
    compare(&bulk, &plain);
    // Writes: remove items from the middle and the ends, add new ones (far above: a step that
    // would not pack), put one back.
    for index in [&mut bulk, &mut plain] {
        for it in items.iter().filter(|it| it.meta.seq % 15 == 0 || it.meta.seq == 3 || it.meta.seq == 900) {
            index.remove(it);
        }
        index.insert(&epk, &item(100_000, r#"{"id":"new","g":"g1","n":3,"t":["x"]}"#));
        index.insert(&epk, &items[4]);
    }
    compare(&bulk, &plain);
    assert!(packed(&bulk) < 3, "a write unpacks the lists it changes");
}

/// A count from the postings' lengths is the probe's list's length: on a path no item holds
/// twice, on one key of an array path, and (listing and deduplicating) on several keys of one.
#[test]
fn probe_counts_agree_with_probes() {
    let policy = Arc::new(IndexingPolicy::default());
    let items: Vec<StoredItem> = (1..=200u64)
        .map(|seq| item(seq, &format!(r#"{{"id":"{seq}","g":{},"t":["a{}","a{}","b"]}}"#, seq % 9, seq % 4, seq % 5)))
        .collect();
    let epk = Epk::min();
    let index = PartitionIndex::build(policy, items.iter().map(|it| (&epk, it)));
    let range = |path: &str, lo: IndexKey, hi: IndexKey| IndexProbe::Range {
        path: key(path),
        lower: Bound::Included(lo),
        upper: Bound::Included(hi),
    };
    let n = |x: f64| IndexKey::number(x).unwrap();
    for probe in [
        range("/g", n(2.0), n(5.0)),
        range("/g", n(5.0), n(2.0)),
        range("/g", n(100.0), n(200.0)),
        range("/t/[]", IndexKey::string("a1"), IndexKey::string("a1")),
        range("/t/[]", IndexKey::string("a0"), IndexKey::string("a3")),
        range("/t/[]", IndexKey::string("a"), IndexKey::string("c")),
        range("/missing", n(0.0), n(1.0)),
    ] {
        let (mut counted, mut listed) = (IndexWork::default(), IndexWork::default());
        let count = index.probe_count(&probe, &mut counted);
        assert_eq!(count, index.probe(&probe, &mut listed).map(|s| s.len()), "{probe:?}");
        assert_eq!(counted.entries, listed.entries, "{probe:?}");
    }
}
