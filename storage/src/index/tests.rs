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
