//! One plan: EXPLAIN prints the plan that runs, every page of a paged query runs the same plan,
//! and the executor runs over any `QuerySource`, not only the store's containers.

use std::collections::BTreeMap;

use cosmoql::executor::{execute_plan, explain, plan_query, PartitionRange, QuerySource};
use cosmoql::planner::{Paging, Strategy};
use cosmoql::storage::{
    Container, ContainerSettings, Doc, Epk, HashVersion, IndexingPolicy, ItemMeta, ItemPosition, PartitionKey,
    PartitionKeyDefinition, StoredItem,
};
use cosmoql::value::{parse_json, Value};
use cosmoql::{execute, QueryOptions};

fn doc(i: usize) -> Value {
    parse_json(&format!(
        r#"{{"id":"{i}","pk":"k{}","n":{},"g":"g{}","tags":["t{}","u"]}}"#,
        i % 7,
        (i * 37) % 23,
        i % 3,
        i % 4
    ))
    .unwrap()
}

/// The composite index `ORDER BY c.n DESC, c.id` needs.
fn policy() -> IndexingPolicy {
    let json = r#"{"compositeIndexes": [[{"path": "/n", "order": "descending"}, {"path": "/id"}]]}"#;
    IndexingPolicy::from_json(&parse_json(json).unwrap()).unwrap()
}

fn container(n: usize, partitions: usize) -> Container {
    let c = Container::new(
        "c",
        PartitionKeyDefinition::hash("/pk").unwrap(),
        ContainerSettings { initial_partitions: partitions, ..ContainerSettings::default() },
    );
    c.replace_indexing_policy(policy());
    for i in 0..n {
        c.create(&doc(i)).unwrap();
    }
    c
}

const QUERIES: &[&str] = &[
    "SELECT VALUE c.id FROM c",
    "SELECT VALUE c.id FROM c WHERE c.pk = 'k3'",
    "SELECT * FROM c WHERE c.pk = 'k2' AND c.id = '9'",
    "SELECT c.id, c.n FROM c ORDER BY c.n DESC, c.id",
    "SELECT TOP 5 VALUE c.n FROM c ORDER BY c.n",
    "SELECT VALUE c.n FROM c ORDER BY c.n OFFSET 3 LIMIT 7",
    "SELECT c.g, COUNT(1) AS n, MAKESET(c.pk) AS keys FROM c GROUP BY c.g",
    "SELECT DISTINCT VALUE c.g FROM c",
    "SELECT VALUE t FROM c JOIN t IN c.tags WHERE t != 'u'",
    "SELECT VALUE x.id FROM (SELECT c.id, c.n FROM c WHERE c.n > 5) x",
    "SELECT VALUE 1 + 1",
];

#[test]
fn explain_prints_the_plan_that_runs() {
    let c = container(200, 5);
    let options = QueryOptions::default();
    for sql in QUERIES {
        let explained = explain(&c, sql, &options).unwrap();
        let printed = explained.to_string();
        // EXPLAIN is the plan's Display, followed by where it runs now.
        assert!(printed.starts_with(&explained.plan.to_string()), "{sql}:\n{printed}");
        if explained.plan.reads_items() {
            let placement = printed.lines().last().unwrap_or_default();
            assert!(placement.starts_with("partitions  "), "{sql}: {placement}");
        }
        // Running the explained plan gives what running the text gives.
        let ran = execute_plan(&c, &explained.plan, &options).unwrap();
        let direct = execute(&c, sql, &options).unwrap();
        assert_eq!(ran.items, direct.items, "{sql}");
        assert_eq!(ran.metrics.partitions_touched, explained.partitions.len(), "{sql}");
    }
    // What EXPLAIN says is what the plan holds.
    let plan = plan_query(&c, "SELECT c.id FROM c ORDER BY c.n DESC", &options).unwrap();
    assert_eq!((plan.strategy, plan.paging), (Strategy::MergeSorted, Paging::BySortKeys));
    let text = plan.to_string();
    assert!(text.contains("  order     c.n DESC from the index on /n/? (stop after all rows"), "{text}");
    assert!(text.contains("k-way merge on c.n DESC"), "{text}");
    assert!(text.contains("pages       resume after the sort keys and scan position"), "{text}");
    let plan = plan_query(&c, "SELECT * FROM c WHERE c.pk = 'k2' AND c.id = '9'", &options).unwrap();
    assert!(plan.targets.point.is_some());
    assert!(plan.to_string().contains("point read of id \"9\""), "{plan}");
}

#[test]
fn every_page_runs_the_one_plan() {
    let c = container(300, 4);
    for sql in QUERIES {
        let whole = execute(&c, sql, &QueryOptions::default()).unwrap().items;
        for page in [1, 7, 100] {
            let mut options = QueryOptions { max_item_count: Some(page), ..QueryOptions::default() };
            let plan = plan_query(&c, sql, &options).unwrap();
            let mut items = Vec::new();
            loop {
                let out = execute_plan(&c, &plan, &options).unwrap();
                assert!(out.items.len() <= page);
                items.extend(out.items);
                match out.continuation {
                    Some(token) => options.continuation = Some(token),
                    None => break,
                }
            }
            assert_eq!(items, whole, "{sql} in pages of {page}");
        }
    }
}

/// A query source that is not a container: items in a sorted map by position, cut into
/// physical partitions at fixed EPKs.
struct Memory {
    definition: PartitionKeyDefinition,
    bounds: Vec<Epk>,
    items: BTreeMap<ItemPosition, StoredItem>,
    ids: BTreeMap<(Epk, String), ItemPosition>,
}

impl Memory {
    fn new(docs: impl IntoIterator<Item = Value>, cuts: &[&str]) -> Memory {
        let definition = PartitionKeyDefinition::hash("/pk").unwrap();
        let mut bounds = vec![Epk::min()];
        bounds.extend(cuts.iter().map(|c| Epk::from_hex(c).unwrap()));
        bounds.push(Epk::max());
        let mut m = Memory { definition, bounds, items: BTreeMap::new(), ids: BTreeMap::new() };
        for (seq, v) in docs.into_iter().enumerate() {
            let doc = Doc::from_value(&v).unwrap();
            let key = m.definition.key_of(doc.root()).unwrap();
            let epk = m.definition.epk(&key).unwrap();
            let pos = ItemPosition { epk: epk.clone(), seq: seq as u64 + 1 };
            let id = v.get("id").as_str().unwrap().to_string();
            m.ids.insert((epk, id), pos.clone());
            m.items.insert(pos, StoredItem { doc, meta: ItemMeta { seq: seq as u64 + 1, lsn: 1, ts: 0, ttl: None } });
        }
        m
    }
}

impl QuerySource for Memory {
    fn partition_key(&self) -> &PartitionKeyDefinition {
        &self.definition
    }

    fn indexing_policy(&self) -> std::sync::Arc<IndexingPolicy> {
        std::sync::Arc::new(policy())
    }

    fn partition_count(&self) -> usize {
        self.bounds.len() - 1
    }

    fn partitions_overlapping(&self, ranges: &[(Epk, Epk)]) -> Vec<PartitionRange> {
        self.bounds
            .windows(2)
            .enumerate()
            .filter(|(_, w)| ranges.iter().any(|(min, max)| *min < w[1] && w[0] < *max))
            .map(|(i, w)| PartitionRange { id: i as u32, min: w[0].clone(), max: w[1].clone() })
            .collect()
    }

    fn read_item(&self, key: &PartitionKey, id: &str) -> Option<StoredItem> {
        let epk = self.definition.epk(key).ok()?;
        self.ids.get(&(epk, id.to_string())).and_then(|pos| self.items.get(pos)).cloned()
    }

    fn scan(&self, from: ItemPosition, end: Epk) -> Box<dyn Iterator<Item = (ItemPosition, StoredItem)> + '_> {
        Box::new(self.items.range(from..).take_while(move |(p, _)| p.epk < end).map(|(p, i)| (p.clone(), i.clone())))
    }

    fn materialize(&self, item: &StoredItem) -> Value {
        item.doc.root().to_value()
    }

    fn system_property(&self, _item: &StoredItem, _name: &str) -> Value {
        Value::Undefined
    }
}

#[test]
fn the_executor_runs_over_any_query_source() {
    let memory = Memory::new((0..150).map(doc), &["40", "80", "C0"]);
    let store = container(150, 1);
    for sql in QUERIES.iter().chain(&["SELECT VALUE c FROM c WHERE c.id = '3'"]) {
        for dop in [1, 4] {
            for page in [None, Some(4)] {
                let mut options =
                    QueryOptions { max_degree_of_parallelism: dop, max_item_count: page, ..QueryOptions::default() };
                let mut from_memory = Vec::new();
                loop {
                    let out = execute(&memory, sql, &options).unwrap_or_else(|e| panic!("{sql}: {}", e.render(sql)));
                    from_memory.extend(out.items);
                    match out.continuation {
                        Some(token) => options.continuation = Some(token),
                        None => break,
                    }
                }
                let strip = |v: &Value| cosmoql::testing::strip_system(v);
                let from_store: Vec<Value> = execute(&store, sql, &QueryOptions::default()).unwrap().items;
                assert_eq!(
                    from_memory.iter().map(strip).collect::<Vec<_>>(),
                    from_store.iter().map(strip).collect::<Vec<_>>(),
                    "{sql} at MaxDOP {dop}, pages of {page:?}"
                );
            }
        }
    }
    // Pruning and the point read go through the trait as well.
    let out = execute(&memory, "SELECT VALUE c.id FROM c WHERE c.pk = 'k3'", &QueryOptions::default()).unwrap();
    assert_eq!(out.metrics.partitions_touched, 1);
    let out = execute(&memory, "SELECT * FROM c WHERE c.pk = 'k3' AND c.id = '10'", &QueryOptions::default()).unwrap();
    assert_eq!((out.items.len(), out.metrics.retrieved_document_count), (1, 1));
}

/// The run-time choices between access paths are the plan's (`cosmoql_planner::choices`): EXPLAIN
/// names them with their thresholds, taken from the constants the executor decides by, and each
/// choice gives the same rows.
#[test]
fn explain_names_the_run_time_choices_with_their_thresholds() {
    use cosmoql::planner::{SCAN_SHARE, SEEK_THEN_SORT};
    let c = container(400, 2);
    let options = QueryOptions::default();
    let text = explain(&c, "SELECT VALUE c.id FROM c WHERE c.pk = 'k3' AND c.n > 3", &options).unwrap().to_string();
    assert!(text.contains(&format!("fewer than 1 in {SCAN_SHARE} of")), "{text}");
    let text = explain(&c, "SELECT VALUE c.id FROM c WHERE c.g = 'g1' ORDER BY c.n", &options).unwrap().to_string();
    assert!(text.contains("  read      the items the indexes find"), "{text}");
    let threshold = SEEK_THEN_SORT.to_string();
    let threshold = format!("{},{}", &threshold[..threshold.len() - 3], &threshold[threshold.len() - 3..]);
    assert!(text.contains("  or walk   1 EPK range(s) in the order of"), "{text}");
    assert!(text.contains(&format!("finds more than {threshold} items in a partition")), "{text}");
    // A small logical partition in its physical partition (1 in 7 here, so not scanned; 400 items,
    // a walk would read more): whichever way each unit reads, the rows are the scan's.
    for sql in [
        "SELECT VALUE c.id FROM c WHERE c.pk = 'k3' AND c.n > 3",
        "SELECT VALUE c.id FROM c WHERE c.g = 'g1' ORDER BY c.n DESC, c.id",
        "SELECT TOP 3 VALUE c.id FROM c WHERE c.pk = 'k3' ORDER BY c.n DESC, c.id",
    ] {
        let got = execute(&c, sql, &options).unwrap().items;
        let scanned = execute(&Memory::new((0..400).map(doc), &["80"]), sql, &options).unwrap().items;
        let (mut got, mut scanned) = (got, scanned);
        if !sql.contains("ORDER BY") {
            got.sort();
            scanned.sort();
        }
        assert_eq!(got, scanned, "{sql}");
    }
}

#[test]
fn a_point_read_filters_only_what_it_does_not_answer() {
    let c = container(50, 3);
    let options = QueryOptions::default();
    let point = |sql: &str, options: &QueryOptions| plan_query(&c, sql, options).unwrap().targets.point.unwrap();
    let ids = |sql: &str, options: &QueryOptions| -> Vec<Value> {
        execute(&c, sql, options).unwrap().items.iter().map(|v| v.get("id").clone()).collect()
    };
    // Item 9 has pk "k2" and n 11.
    let nine = vec![Value::from("9")];
    // The key and the id equalities are the whole WHERE clause: the item read is the answer.
    for sql in ["SELECT * FROM c WHERE c.pk = 'k2' AND c.id = '9'", "SELECT * FROM c WHERE '9' = c.id AND 'k2' = c.pk"]
    {
        assert!(point(sql, &options).answers_filter, "{sql}");
        assert_eq!(ids(sql, &options), nine, "{sql}");
    }
    // Another term is still evaluated on it.
    for (sql, found) in [
        ("SELECT * FROM c WHERE c.pk = 'k2' AND c.id = '9' AND c.n > 100", vec![]),
        ("SELECT * FROM c WHERE c.pk = 'k2' AND c.id = '9' AND c.n = 11", nine.clone()),
    ] {
        assert!(!point(sql, &options).answers_filter, "{sql}");
        assert_eq!(ids(sql, &options), found, "{sql}");
    }
    // The request's key pins the point read; an equality with another key is evaluated (and
    // fails), an id equality alone is answered.
    let keyed = QueryOptions { partition_key: Some(PartitionKey::from("k2".to_string())), ..QueryOptions::default() };
    let other = "SELECT * FROM c WHERE c.pk = 'k3' AND c.id = '9'";
    assert!(!point(other, &keyed).answers_filter);
    assert_eq!(ids(other, &keyed), Vec::<Value>::new());
    let by_id = "SELECT * FROM c WHERE c.id = '9'";
    assert!(point(by_id, &keyed).answers_filter);
    assert_eq!(ids(by_id, &keyed), nine);
    // With V1 hashing, keys sharing their first 100 bytes share a logical partition: the read
    // finds the other key's item, and the filter must still be evaluated.
    let v1 = Container::new(
        "v1",
        PartitionKeyDefinition::hash("/pk").unwrap().with_version(HashVersion::V1).unwrap(),
        ContainerSettings::default(),
    );
    let (a, b) = ("p".repeat(100) + "a", "p".repeat(100) + "b");
    v1.create(&parse_json(&format!(r#"{{"id":"x","pk":"{a}"}}"#)).unwrap()).unwrap();
    for (key, rows) in [(&a, 1), (&b, 0)] {
        let sql = format!("SELECT * FROM c WHERE c.pk = '{key}' AND c.id = 'x'");
        let plan = plan_query(&v1, &sql, &options).unwrap();
        assert_eq!(plan.targets.point.map(|p| p.answers_filter), Some(false), "{sql}");
        assert_eq!(execute(&v1, &sql, &options).unwrap().items.len(), rows, "{sql}");
    }
    // Hierarchical and nested key paths.
    let h = Container::new(
        "h",
        PartitionKeyDefinition::hierarchical(&["/t", "/u/v"]).unwrap(),
        ContainerSettings::default(),
    );
    h.create(&parse_json(r#"{"id":"i","t":"x","u":{"v":2}}"#).unwrap()).unwrap();
    for (sql, answers, rows) in [
        ("SELECT * FROM c WHERE c.t = 'x' AND c.u.v = 2 AND c.id = 'i'", true, 1),
        ("SELECT * FROM c WHERE c.t = 'x' AND c.u.v = 2.0 AND c.id = 'i'", true, 1),
        ("SELECT * FROM c WHERE c.t = 'x' AND c.u.v = 2 AND c.id = 'i' AND c.u = 1", false, 0),
    ] {
        let plan = plan_query(&h, sql, &options).unwrap();
        assert_eq!(plan.targets.point.map(|p| p.answers_filter), Some(answers), "{sql}");
        assert_eq!(execute(&h, sql, &options).unwrap().items.len(), rows, "{sql}");
    }
}

/// A WHERE clause that only pins the key's logical partitions is answered by the targets: the
/// plan that runs filters no row. One the targets do not answer keeps its filter: a request's key
/// with another key in the clause, a conjunct beside the key's, V1 hashing.
#[test]
fn a_filter_the_targets_answer_is_not_run_again() {
    let c = container(60, 3);
    let scoped = QueryOptions { partition_key: Some(PartitionKey::from("k2")), ..QueryOptions::default() };
    let cases = [
        ("SELECT * FROM c WHERE c.pk = 'k2' ORDER BY c.n", QueryOptions::default(), false),
        ("SELECT * FROM c WHERE c.pk IN ('k2', 'k3')", QueryOptions::default(), false),
        ("SELECT * FROM c WHERE c.pk = 'k2' ORDER BY c.n", scoped.clone(), false),
        ("SELECT * FROM c WHERE c.pk = 'k3' ORDER BY c.n", scoped, true),
        ("SELECT * FROM c WHERE c.pk = 'k2' AND c.n > 3 ORDER BY c.n", QueryOptions::default(), true),
        ("SELECT c.id, t FROM c JOIN t IN c.tags WHERE c.pk = 'k2'", QueryOptions::default(), true),
    ];
    for (sql, options, filtered) in cases {
        let plan = plan_query(&c, sql, &options).unwrap();
        assert_eq!(plan.query.filter.is_some(), filtered, "{sql}");
        // EXPLAIN says so.
        let text = plan.to_string();
        assert_eq!(!text.contains("  filter    none: the targets hold exactly the rows of"), filtered, "{text}");
        // Same results either way: those of a scan that filters every item.
        let all: Vec<Value> = execute(&c, "SELECT * FROM c", &QueryOptions::default()).unwrap().items;
        let expected = all.iter().filter(|v| match sql {
            s if s.contains("'k3' ORDER") => false,
            s if s.contains("IN") => matches!(v.get("pk").as_str(), Some("k2" | "k3")),
            s if s.contains("c.n > 3") => v.get("pk").as_str() == Some("k2") && v.get("n").as_f64() > Some(3.0),
            _ => v.get("pk").as_str() == Some("k2"),
        });
        let got = execute(&c, sql, &options).unwrap().items;
        if !sql.contains("JOIN") {
            assert_eq!(got.len(), expected.count(), "{sql}");
        }
    }
    let v1 = Container::new(
        "v1",
        PartitionKeyDefinition::hash("/pk").unwrap().with_version(HashVersion::V1).unwrap(),
        ContainerSettings::default(),
    );
    let plan = plan_query(&v1, "SELECT * FROM c WHERE c.pk = 'k2'", &QueryOptions::default()).unwrap();
    assert!(plan.query.filter.is_some());
    // A point read whose item satisfies the clause is not filtered either.
    let point = plan_query(&c, "SELECT * FROM c WHERE c.pk = 'k2' AND c.id = '2'", &QueryOptions::default()).unwrap();
    assert!(point.to_string().contains("  filter    none: the item read satisfies"), "{point}");
}
