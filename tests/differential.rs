//! Differential property test of the cross-partition executor: for random containers (1 to 64
//! physical partitions, hot keys, mixed types, missing properties) and queries covering every
//! clause and merge stage, the results at every MaxDegreeOfParallelism and page size, resumed
//! through continuation tokens with splits forced between pages, equal the results of the same
//! query over a single-partition container.

use cosmoql::storage::{Container, ContainerSettings, Epk, IndexingPolicy, PartitionKeyDefinition};
use cosmoql::value::{parse_json, Value};
use cosmoql::{execute, QueryOptions};
use proptest::prelude::*;

const QUERIES: &[&str] = &[
    "SELECT * FROM c",
    "SELECT c.id, c.a FROM c WHERE c.a > 3",
    "SELECT VALUE c.a FROM c ORDER BY c.a",
    "SELECT c.id FROM c ORDER BY c.b DESC, c.a",
    "SELECT TOP 5 c.id, c.a FROM c ORDER BY c.a DESC",
    "SELECT TOP 7 * FROM c",
    "SELECT c.id FROM c ORDER BY c.id OFFSET 3 LIMIT 4",
    "SELECT VALUE c.id FROM c OFFSET 2 LIMIT 5",
    "SELECT VALUE COUNT(1) FROM c",
    "SELECT COUNT(1) AS n, SUM(c.a) AS s, AVG(c.a) AS av, MIN(c.b) AS lo, MAX(c.b) AS hi FROM c",
    "SELECT VALUE SUM(c.n) FROM c WHERE IS_NUMBER(c.n)",
    "SELECT VALUE AVG(c.n) FROM c WHERE c.pk = 'nope'",
    "SELECT c.b, COUNT(1) AS n, MIN(c.a) AS lo FROM c GROUP BY c.b",
    "SELECT c.pk, MAX(c.a) AS hi FROM c GROUP BY c.pk ORDER BY c.pk",
    "SELECT DISTINCT VALUE c.b FROM c",
    "SELECT DISTINCT c.a FROM c ORDER BY c.a DESC",
    "SELECT DISTINCT TOP 3 VALUE c.pk FROM c",
    "SELECT c.id, t FROM c JOIN t IN c.tags WHERE t != 'x'",
    "SELECT VALUE t FROM c JOIN t IN c.tags ORDER BY t, c.id",
    "SELECT t, COUNT(1) AS n FROM c JOIN t IN c.tags GROUP BY t",
    "SELECT * FROM c WHERE c.pk = 'k1'",
    "SELECT VALUE c.id FROM c WHERE c.pk = 'k0' ORDER BY c.a",
    "SELECT VALUE c.id FROM c WHERE c.pk IN ('k1', 'k2') AND c.a >= 0",
    "SELECT VALUE {i: c.id, m: c.missing ?? 'none'} FROM c WHERE NOT IS_DEFINED(c.b)",
    "SELECT VALUE x.id FROM (SELECT c.id, c.a FROM c WHERE c.a != 5) x WHERE x.a > 2",
    "SELECT VALUE x FROM (SELECT DISTINCT VALUE c.b FROM c) x",
    "SELECT VALUE c.id FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = 'y')",
];

fn item() -> impl Strategy<Value = String> {
    let pk = prop_oneof![3 => Just("k0".to_string()), 1 => (0..6u8).prop_map(|k| format!("k{k}"))];
    let a = prop_oneof![
        3 => (0..10i32).prop_map(|n| n.to_string()),
        1 => Just("\"text\"".to_string()),
        1 => Just("null".to_string()),
        1 => Just(String::new()),
    ];
    let b = prop_oneof![(0..4u8).prop_map(|n| format!("\"b{n}\"")), Just("true".to_string()), Just(String::new())];
    let tags = prop::collection::vec(prop_oneof![Just("x"), Just("y"), Just("z")], 0..3);
    let n = prop_oneof![(0..100i32).prop_map(|n| n.to_string()), Just("\"n\"".to_string())];
    (pk, a, b, tags, n).prop_map(|(pk, a, b, tags, n)| {
        let mut fields = vec![format!("\"pk\":\"{pk}\""), format!("\"n\":{n}")];
        if !a.is_empty() {
            fields.push(format!("\"a\":{a}"));
        }
        if !b.is_empty() {
            fields.push(format!("\"b\":{b}"));
        }
        let tags: Vec<String> = tags.iter().map(|t| format!("\"{t}\"")).collect();
        fields.push(format!("\"tags\":[{}]", tags.join(",")));
        fields.join(",")
    })
}

/// The composite indexes the queries' multi-path ORDER BY clauses need (the service refuses them
/// without one).
const POLICY: &str = r#"{"compositeIndexes": [
    [{"path": "/b", "order": "descending"}, {"path": "/a"}],
    [{"path": "/b", "order": "descending"}, {"path": "/id"}],
    [{"path": "/tags/[]"}, {"path": "/id"}]]}"#;

fn load(items: &[String], settings: ContainerSettings) -> Container {
    let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings);
    c.replace_indexing_policy(IndexingPolicy::from_json(&parse_json(POLICY).unwrap()).unwrap());
    for (i, fields) in items.iter().enumerate() {
        c.create(&parse_json(&format!("{{\"id\":\"i{i:03}\",{fields}}}")).unwrap()).unwrap();
    }
    c
}

fn strip(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::object(m.iter().filter(|(k, _)| !k.starts_with('_')).map(|(k, v)| (k.clone(), strip(v))))
        }
        other => other.clone(),
    }
}

/// All results, page by page, forcing a split after every page.
fn paged(c: &Container, sql: &str, dop: i32, page: usize, split_at: &[u8]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut token = None;
    let mut pages = 0;
    loop {
        let options = QueryOptions {
            max_degree_of_parallelism: dop,
            max_item_count: Some(page),
            continuation: token.clone(),
            ..QueryOptions::default()
        };
        let result = execute(c, sql, &options).unwrap_or_else(|e| panic!("{sql}: {}", e.render(sql)));
        assert!(result.items.len() <= page);
        out.extend(result.items.iter().map(strip));
        let Some(t) = result.continuation else { break };
        token = Some(t);
        let at = split_at[pages % split_at.len()];
        c.force_split(&Epk::from_bytes(&[at & 0x3f, at]));
        pages += 1;
        assert!(pages < 1000, "paging does not end: {sql}");
    }
    out
}

/// Queries from parts: a projection shape, a filter, an order, DISTINCT, TOP or OFFSET/LIMIT.
fn query() -> impl Strategy<Value = String> {
    let filter = prop_oneof![
        Just(String::new()),
        Just("WHERE c.a > 2".to_string()),
        Just("WHERE c.b = 'b1' OR c.a < 3".to_string()),
        Just("WHERE IS_DEFINED(c.b) AND NOT (c.a = 5)".to_string()),
        (0..6u8).prop_map(|k| format!("WHERE c.pk = 'k{k}'")),
        Just("WHERE c.pk IN ('k0', 'k3') AND c.n >= 10".to_string()),
        Just("WHERE ARRAY_CONTAINS(c.tags, 'y')".to_string()),
    ];
    let order = prop_oneof![
        Just(String::new()),
        Just("ORDER BY c.a".to_string()),
        Just("ORDER BY c.b DESC, c.id".to_string()),
        Just("ORDER BY c.n DESC".to_string()),
    ];
    let limit = prop_oneof![Just(String::new()), (0..12u8, 1..9u8).prop_map(|(o, l)| format!("OFFSET {o} LIMIT {l}")),];
    let top = prop_oneof![Just(String::new()), (1..8u8).prop_map(|t| format!("TOP {t} "))];
    let plain = prop_oneof![
        Just("*"),
        Just("VALUE c.id"),
        Just("c.id, c.a, c.b"),
        Just("VALUE {k: c.pk, t: ARRAY_LENGTH(c.tags)}"),
    ];
    let distinct = prop_oneof![Just("VALUE c.b"), Just("c.a"), Just("VALUE c.pk")];
    let aggregate = prop_oneof![
        Just(("VALUE COUNT(1)", "")),
        Just(("COUNT(1) AS n, SUM(c.n) AS s, MIN(c.a) AS lo, MAX(c.b) AS hi, AVG(c.a) AS av", "")),
        Just(("c.b, COUNT(1) AS n, AVG(c.n) AS av", "GROUP BY c.b")),
        Just(("c.pk, MAX(c.a) AS hi", "GROUP BY c.pk")),
    ];
    prop_oneof![
        (top.clone(), plain, filter.clone(), order.clone())
            .prop_map(|(t, p, f, o)| format!("SELECT {t}{p} FROM c {f} {o}")),
        (plain_limit(), filter.clone(), order.clone(), limit.clone())
            .prop_map(|(p, f, o, l)| format!("SELECT {p} FROM c {f} {o} {l}")),
        (top, distinct, filter.clone(), prop::bool::ANY).prop_map(|(t, d, f, ordered)| {
            let order = if ordered { format!("ORDER BY {}", d.trim_start_matches("VALUE ")) } else { String::new() };
            format!("SELECT DISTINCT {t}{d} FROM c {f} {order}")
        }),
        (aggregate, filter).prop_map(|((a, g), f)| format!("SELECT {a} FROM c {f} {g}")),
    ]
}

fn plain_limit() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("*"), Just("VALUE c.id"), Just("c.id, c.n")]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn generated_queries_give_the_serial_results_at_every_setting(
        items in prop::collection::vec(item(), 0..50),
        partitions in prop_oneof![Just(1usize), 2usize..9, Just(64usize)],
        sql in query(),
        dop in prop::sample::select(vec![0, 1, 2, 8, -1]),
        page in prop::sample::select(vec![1usize, 2, 5, 100]),
        split_at in prop::collection::vec(any::<u8>(), 1..4),
    ) {
        let serial = load(&items, ContainerSettings { split_max_items: usize::MAX, ..ContainerSettings::default() });
        let expected: Vec<Value> = execute(&serial, &sql, &QueryOptions::default())
            .unwrap_or_else(|e| panic!("{sql}: {}", e.render(&sql)))
            .items
            .iter()
            .map(strip)
            .collect();
        let many = load(&items, ContainerSettings { initial_partitions: partitions, split_max_items: 8, ..ContainerSettings::default() });
        let all: Vec<Value> = execute(&many, &sql, &QueryOptions { max_degree_of_parallelism: dop, max_buffered_item_count: Some(7), ..QueryOptions::default() })
            .unwrap()
            .items
            .iter()
            .map(strip)
            .collect();
        prop_assert_eq!(&all, &expected, "{} at MaxDOP {}", sql, dop);
        let paged = paged(&many, &sql, dop, page, &split_at);
        prop_assert_eq!(&paged, &expected, "{} in pages of {}", sql, page);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn cross_partition_results_equal_a_serial_run(
        items in prop::collection::vec(item(), 0..60),
        partitions in prop_oneof![Just(1usize), 2usize..9, Just(64usize)],
        split_at in prop::collection::vec(any::<u8>(), 1..4),
    ) {
        let serial = load(&items, ContainerSettings { split_max_items: usize::MAX, ..ContainerSettings::default() });
        prop_assert_eq!(serial.partitions().len(), 1);
        for sql in QUERIES {
            let expected: Vec<Value> = execute(&serial, sql, &QueryOptions::default())
                .unwrap_or_else(|e| panic!("{sql}: {}", e.render(sql)))
                .items
                .iter()
                .map(strip)
                .collect();
            for dop in [0, 1, 2, 8, -1] {
                let many = load(&items, ContainerSettings { initial_partitions: partitions, split_max_items: 8, ..ContainerSettings::default() });
                let all = execute(&many, sql, &QueryOptions { max_degree_of_parallelism: dop, ..QueryOptions::default() }).unwrap();
                let got: Vec<Value> = all.items.iter().map(strip).collect();
                prop_assert_eq!(&got, &expected, "{} at MaxDOP {} over {} partitions", sql, dop, many.partitions().len());
            }
            for page in [1usize, 3, 50] {
                let many = load(&items, ContainerSettings { initial_partitions: partitions, ..ContainerSettings::default() });
                let got = paged(&many, sql, 2, page, &split_at);
                prop_assert_eq!(&got, &expected, "{} in pages of {}", sql, page);
            }
        }
    }
}

#[test]
fn a_token_from_another_query_is_rejected() {
    let c = load(
        &(0..10).map(|i| format!("\"pk\":\"k{}\",\"n\":{i}", i % 3)).collect::<Vec<_>>(),
        ContainerSettings::default(),
    );
    let first =
        execute(&c, "SELECT * FROM c", &QueryOptions { max_item_count: Some(2), ..QueryOptions::default() }).unwrap();
    let token = first.continuation.expect("more pages");
    let other = QueryOptions { max_item_count: Some(2), continuation: Some(token.clone()), ..QueryOptions::default() };
    let err = execute(&c, "SELECT VALUE c.n FROM c", &other).unwrap_err();
    assert!(err.to_string().contains("belongs to another query"), "{err}");
    let garbage = QueryOptions { continuation: Some("not a token".into()), ..QueryOptions::default() };
    assert!(execute(&c, "SELECT * FROM c", &garbage).unwrap_err().to_string().contains("invalid continuation token"));
}

/// What the SDKs' query pipelines send per range (`../shared/research/gateway-python.md` §6): an
/// ORDER BY query of one feed range resumes from the range's token with its filter slot now
/// holding a condition that drops what came before (the token still resumes after its sort
/// keys), where a query of no feed range, or one not ordered, still refuses a token of another
/// text; and aggregates compose in a feed range's query as the service's rewrites need.
#[test]
fn a_feed_range_order_by_resumes_under_another_filter() {
    let c = load(
        &(0..30).map(|i| format!("\"pk\":\"k{}\",\"n\":{i}", i % 7)).collect::<Vec<_>>(),
        ContainerSettings { initial_partitions: 3, ..ContainerSettings::default() },
    );
    let range = Some((Epk::min(), Epk::max()));
    let sql = |filter: &str| {
        format!(
            r#"SELECT c._rid, [{{"item": c.n}}] AS orderByItems, c.n AS payload FROM c WHERE ({filter}) ORDER BY c.n"#
        )
    };
    let page = |text: &str, token: Option<String>, epk_range: Option<(Epk, Epk)>| {
        execute(
            &c,
            text,
            &QueryOptions { max_item_count: Some(4), continuation: token, epk_range, ..QueryOptions::default() },
        )
    };
    let first = page(&sql("true"), None, range.clone()).unwrap();
    let token = first.continuation.clone().expect("more pages");
    let payloads = |items: &[Value]| items.iter().map(|i| i.get("payload").clone()).collect::<Vec<_>>();
    assert_eq!(payloads(&first.items), (0..4).map(|n| Value::from(n as f64)).collect::<Vec<_>>());
    // The filter the JavaScript SDK sends on resume: `c.n >= <last emitted>`.
    let next = page(&sql("c.n >= 2"), Some(token.clone()), range.clone()).unwrap();
    assert_eq!(payloads(&next.items), (4..8).map(|n| Value::from(n as f64)).collect::<Vec<_>>());
    // Without a feed range the token is the query's alone.
    let err = page(&sql("c.n >= 2"), Some(token.clone()), None).unwrap_err();
    assert!(err.to_string().contains("belongs to another query"), "{err}");
    // An unordered query's token counts results, which another filter would not mean.
    let unordered = page("SELECT VALUE c.n FROM c WHERE true", None, range.clone()).unwrap();
    let err = page("SELECT VALUE c.n FROM c WHERE c.n > 1", unordered.continuation, range.clone()).unwrap_err();
    assert!(err.to_string().contains("belongs to another query"), "{err}");
    // The service's per-range aggregate rewrites, refused across partitions without a range.
    let avg = r#"SELECT VALUE [{"item": {"sum": SUM(c.n), "count": COUNT(c.n)}}] FROM c"#;
    let all = execute(&c, avg, &QueryOptions { epk_range: range, ..QueryOptions::default() }).unwrap();
    assert_eq!(all.items, vec![parse_json(r#"[{"item": {"sum": 435, "count": 30}}]"#).unwrap()]);
    let err = execute(&c, avg, &QueryOptions::default()).unwrap_err();
    assert!(err.to_string().contains("Compositions of aggregates"), "{err}");
}
