//! Index access paths against scans: for random items (mixed types, missing properties, arrays,
//! nested objects), random indexing policies (modes, included and excluded paths), splits and a
//! policy replacement part-way through its transformation, every query returns exactly what the
//! same plan returns when every partition is scanned, or fails the same way (ORDER BY on a path
//! the policy does not index is refused, as the service refuses it).

use cosmoql::executor::source::QuerySource;
use cosmoql::storage::{
    Container, ContainerSettings, IndexingPolicy, PartitionKey, PartitionKeyDefinition, PatchOperation, WriteOptions,
};
use cosmoql::value::{parse_json, Value};
use cosmoql::{execute, QueryOptions};
use proptest::prelude::*;

mod support;
use support::Seen;

/// A container seen without its indexes: the executor scans every partition.
fn scanned(container: &Container) -> Seen<'_> {
    Seen { container, indexed: false, whole: true }
}

const QUERIES: &[&str] = &[
    "SELECT VALUE c.id FROM c WHERE c.a = 3",
    "SELECT VALUE c.id FROM c WHERE c.a = null OR c.a = true",
    "SELECT VALUE c.id FROM c WHERE c.a > 2",
    "SELECT VALUE c.id FROM c WHERE c.a <= 'm'",
    "SELECT VALUE c.id FROM c WHERE 4 > c.a",
    "SELECT VALUE c.id FROM c WHERE c.a >= false",
    "SELECT VALUE c.id FROM c WHERE c.a > null",
    "SELECT VALUE c.id FROM c WHERE c.a BETWEEN 1 AND 5",
    "SELECT VALUE c.id FROM c WHERE c.a BETWEEN 'a' AND 'n'",
    "SELECT VALUE c.id FROM c WHERE c.a IN (1, 'b', null, -0)",
    "SELECT VALUE c.id FROM c WHERE c.a IN ([1], 2)",
    "SELECT VALUE c.id FROM c WHERE STARTSWITH(c.s, 'ab')",
    "SELECT VALUE c.id FROM c WHERE STARTSWITH(c.s, 'AB', true)",
    "SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.tags, 'y')",
    "SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.tags, 2)",
    "SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.tags, {k: 1}, true)",
    "SELECT VALUE c.id FROM c WHERE c.o.k = 1 AND c.a > 0",
    "SELECT VALUE c.id FROM c WHERE c.a = 3 OR c.s = 'b'",
    "SELECT VALUE c.id FROM c WHERE c.a = 3 OR UPPER(c.s) = 'B'",
    "SELECT VALUE c.id FROM c WHERE NOT (c.a = 3) AND c.pk = 'k1'",
    "SELECT VALUE c.id FROM c WHERE c.pk = 'k0' AND c.a != 2",
    "SELECT VALUE c.id FROM c WHERE c.pk IN ('k1', 'k2') AND c.s >= 'b'",
    "SELECT VALUE c.id FROM c WHERE c.id = 'i003'",
    "SELECT VALUE c.id FROM c WHERE c._ts > 0 AND c.a < 5",
    "SELECT c.id, t FROM c JOIN t IN c.tags WHERE c.a > 1 AND t = 'x'",
    "SELECT VALUE c.id FROM c ORDER BY c.a",
    "SELECT VALUE c.id FROM c ORDER BY c.a DESC",
    "SELECT TOP 3 c.id, c.a FROM c ORDER BY c.a DESC",
    "SELECT VALUE c.a FROM c WHERE c.a > 1 ORDER BY c.a OFFSET 2 LIMIT 3",
    "SELECT TOP 4 VALUE c.id FROM c WHERE c.pk = 'k0' ORDER BY c.s",
    "SELECT TOP 2 VALUE c.id FROM c WHERE c.a = 3 ORDER BY c.s DESC",
    "SELECT VALUE c.s FROM c WHERE STARTSWITH(c.s, 'a') ORDER BY c.s",
    "SELECT VALUE c.id FROM c ORDER BY c.o.k",
    "SELECT VALUE COUNT(1) FROM c WHERE c.a > 2",
    "SELECT VALUE COUNT(1) FROM c",
    "SELECT COUNT(1) AS n, COUNT('x') AS m FROM c WHERE c.a IN (1, 2) OR STARTSWITH(c.s, 'a')",
    "SELECT VALUE COUNT(1) FROM c WHERE c.pk = 'k1' AND ARRAY_CONTAINS(c.tags, 'y')",
    "SELECT VALUE COUNT(1) FROM c WHERE c.a > 1 AND UPPER(c.s) = 'AB'",
    "SELECT VALUE COUNT(1) FROM c WHERE (c.a > 1 AND UPPER(c.s) = 'AB') OR c.a = 0",
    "SELECT c.id FROM c ORDER BY c.id OFFSET 5 LIMIT 3",
    "SELECT * FROM c ORDER BY c.id DESC OFFSET 2 LIMIT 20",
    "SELECT * FROM c ORDER BY c.a OFFSET 3 LIMIT 4",
    // Ties under a descending key, merged on the partitions' index keys (latest first).
    "SELECT * FROM c ORDER BY c.a DESC OFFSET 3 LIMIT 4",
    "SELECT c.pk, COUNT(1) AS n FROM c WHERE ARRAY_CONTAINS(c.tags, 'x') GROUP BY c.pk",
    "SELECT DISTINCT VALUE c.a FROM c WHERE c.a >= 0",
    "SELECT DISTINCT VALUE c.a FROM c",
    "SELECT DISTINCT VALUE c.pk FROM c",
    "SELECT DISTINCT VALUE c.tags FROM c",
    "SELECT DISTINCT VALUE c.o.k FROM c WHERE c.pk = 'k0'",
    "SELECT DISTINCT VALUE c.s FROM c OFFSET 1 LIMIT 2",
    "SELECT VALUE MAX(c.a) FROM c",
    "SELECT VALUE MAX(c.id) FROM c",
    "SELECT MIN(c.pk) AS lo, MAX(c.pk) AS hi FROM c",
    "SELECT MIN(c.s) AS lo, MAX(c.s) AS hi FROM c WHERE c.pk IN ('k1', 'k2')",
    "SELECT VALUE MIN(c.o.k) FROM c",
    "SELECT c.id, t FROM c JOIN t IN c.tags WHERE t = 'y'",
    "SELECT c.id FROM c JOIN t IN c.tags WHERE t.k = 1 OR t > 1",
    "SELECT VALUE t FROM t IN c.tags WHERE t > 1",
    "SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags WHERE t = 'y'",
    "SELECT VALUE COUNT(1) FROM t IN c.tags WHERE t = 'x'",
    "SELECT DISTINCT VALUE t FROM t IN c.tags",
    "SELECT VALUE MAX(t) FROM t IN c.tags",
    "SELECT VALUE x.k FROM c.o x WHERE x.k = 1",
    "SELECT TOP 2 VALUE t FROM t IN c.tags ORDER BY t",
    "SELECT c.id, u FROM c JOIN t IN c.tags JOIN u IN t WHERE u = 'y'",
    "SELECT VALUE c.id FROM c WHERE StringEquals(c.s, 'ab')",
    "SELECT VALUE c.id FROM c WHERE StringEquals(c.s, 'AB', true)",
    "SELECT VALUE c.id FROM c WHERE CONTAINS(c.s, 'b')",
    "SELECT VALUE c.id FROM c WHERE CONTAINS(c.s, 'Bc', true) AND c.pk != 'k3'",
    "SELECT VALUE c.id FROM c WHERE ENDSWITH(c.s, 'c') OR ENDSWITH(c.s, 'A', true)",
    "SELECT VALUE c.id FROM c WHERE c.s LIKE 'a%c'",
    "SELECT VALUE c.id FROM c WHERE c.s LIKE '_b%' OR c.s LIKE 'b'",
    "SELECT VALUE c.id FROM c WHERE c.s NOT LIKE 'a%'",
    "SELECT VALUE c.id FROM c WHERE RegexMatch(c.s, '^a.c')",
    "SELECT VALUE c.id FROM c WHERE RegexMatch(c.s, 'B$', 'i')",
    "SELECT VALUE c.id FROM c WHERE LEFT(c.s, 2) = 'ab'",
    "SELECT VALUE c.id FROM c WHERE LEFT(c.s, 3) = 'ab'",
    "SELECT VALUE c.id FROM c WHERE 'a' = SUBSTRING(c.s, 0, 1)",
    "SELECT VALUE c.id FROM c WHERE LEFT(c.s, 1) = 'ab'",
    "SELECT c.id FROM c JOIN t IN c.tags WHERE CONTAINS(t, 'Y', true)",
    "SELECT VALUE COUNT(1) FROM c WHERE CONTAINS(c.s, 'a')",
    "SELECT TOP 3 VALUE c.s FROM c WHERE CONTAINS(c.s, 'b') ORDER BY c.s DESC",
    "SELECT VALUE c.id FROM c ORDER BY c.a, c.s DESC",
    "SELECT TOP 3 c.id, c.a, c.s FROM c ORDER BY c.a DESC, c.s",
    "SELECT c.id FROM c ORDER BY c.s, c.id OFFSET 2 LIMIT 3",
    "SELECT TOP 2 VALUE c.id FROM c WHERE c.pk = 'k0' ORDER BY c.s DESC, c.id DESC",
    "SELECT VALUE c.id FROM c WHERE c.a > 0 ORDER BY c.a, c.s DESC",
    "SELECT VALUE [c.s, c.id] FROM c ORDER BY c.s DESC, c.id DESC",
    "SELECT c.id FROM c ORDER BY c.pk DESC, c.id OFFSET 1 LIMIT 4",
    "SELECT TOP 3 VALUE c.id FROM c ORDER BY c.pk, c.id DESC",
    "SELECT VALUE c.id FROM c WHERE c.a > 1 ORDER BY c.pk, c.id DESC",
    "SELECT VALUE c.id FROM c WHERE ST_DISTANCE(c.g, {'type': 'Point', 'coordinates': [0, 0]}) < 50000",
    "SELECT VALUE c.id FROM c WHERE 120000 >= ST_DISTANCE({'type': 'Point', 'coordinates': [0.5, 0.5]}, c.g)",
    "SELECT VALUE c.id FROM c WHERE ST_DISTANCE(c.g, {'type': 'Point', 'coordinates': [1, -1]}) <= 0",
    "SELECT VALUE c.id FROM c WHERE ST_WITHIN(c.g, {'type': 'Polygon', 'coordinates': [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]]})",
    "SELECT VALUE c.id FROM c WHERE ST_INTERSECTS({'type': 'Polygon', 'coordinates': [[[-1, -1], [0.3, -1], [0.3, 0.3], [-1, 0.3], [-1, -1]]]}, c.g)",
    "SELECT VALUE c.id FROM c WHERE ST_WITHIN(c.g, {'type': 'Polygon', 'coordinates': [[[0, 0], [0, 1], [1, 1], [1, 0], [0, 0]]]})",
    "SELECT VALUE c.id FROM c WHERE ST_INTERSECTS(c.g, {'type': 'LineString', 'coordinates': [[-1, 1], [1, -1]]})",
    "SELECT VALUE COUNT(1) FROM c WHERE ST_DISTANCE(c.g, {'type': 'Point', 'coordinates': [0, 0]}) < 80000",
    "SELECT VALUE c.id FROM c WHERE c.a = 3 AND c.s > 'a'",
    "SELECT VALUE c.id FROM c WHERE c.a = 2 AND c.s <= 'b'",
    "SELECT VALUE c.id FROM c WHERE c.s = 'ab' AND c.id >= 'i010'",
    "SELECT VALUE c.id FROM c WHERE c.id < 'i020' AND c.s = 'b'",
    "SELECT VALUE c.id FROM c WHERE c.a = 2 AND c.s = 'b'",
    "SELECT VALUE COUNT(1) FROM c WHERE c.s = 'ab' AND c.id BETWEEN 'i003' AND 'i030'",
    "SELECT TOP 2 VALUE c.id FROM c WHERE c.a = 1 AND c.s > 'a' ORDER BY c.id DESC",
    "SELECT TOP 3 VALUE c.id FROM c WHERE c.pk = 'k0' ORDER BY c.pk, c.id DESC",
    "SELECT c.id FROM c WHERE c.pk = 'k1' ORDER BY c.pk DESC, c.id OFFSET 1 LIMIT 3",
    "SELECT VALUE c.id FROM c WHERE c.s = 'ab' ORDER BY c.s DESC, c.id DESC",
    "SELECT VALUE c.id FROM c WHERE c.s = 'b' AND c.a > 0 ORDER BY c.s, c.id",
    "SELECT TOP 5 VALUE c.id FROM c WHERE c.pk = 'k0' ORDER BY c.id DESC",
    "SELECT VALUE MAX(c.id) FROM c WHERE c.a > 2",
    "SELECT MIN(c.pk) AS lo, MAX(c.pk) AS hi FROM c WHERE ARRAY_CONTAINS(c.tags, 'x')",
    "SELECT VALUE MIN(c.id) FROM c WHERE c.a > 1 AND UPPER(c.s) = 'AB'",
    "SELECT VALUE MIN(c.id) FROM c WHERE c.s = 'zzz'",
    // `=` across two defined types is false, so these match every other type (value/src/ops.rs).
    "SELECT VALUE c.id FROM c WHERE c.a != null",
    "SELECT VALUE c.id FROM c WHERE c.a NOT IN (2, 'b', [1])",
    "SELECT VALUE c.id FROM c WHERE NOT (c.a = 'b') AND c.pk = 'k0'",
    "SELECT VALUE c.id FROM c WHERE c.pk != 3 AND c.a > 1",
    "SELECT VALUE c.id FROM c WHERE c.pk = 'k1' OR c.a != 1",
    "SELECT VALUE c.id FROM c WHERE (c.a = 'b') = false",
];

fn item() -> impl Strategy<Value = String> {
    let pk = prop_oneof![3 => Just("k0".to_string()), 1 => (0..4u8).prop_map(|k| format!("k{k}"))];
    let scalar = prop_oneof![
        4 => (-2..8i32).prop_map(|n| n.to_string()),
        1 => Just("-0".to_string()),
        1 => Just("2.5".to_string()),
        2 => "[a-c]{0,2}".prop_map(|s| format!("\"{s}\"")),
        1 => Just("null".to_string()),
        1 => prop::bool::ANY.prop_map(|b| b.to_string()),
        1 => Just("[1]".to_string()),
        1 => Just("{\"k\":1}".to_string()),
    ];
    let a = prop::option::of(scalar);
    let s = prop::option::of(prop_oneof![
        "(ab|AB|a|b|abc)[a-c]{0,2}".prop_map(|s| format!("\"{s}\"")),
        Just("3".to_string())
    ]);
    let tags = prop::collection::vec(
        prop_oneof![Just("\"x\""), Just("\"y\""), Just("2"), Just("{\"k\":1}"), Just("[\"y\"]")],
        0..4,
    );
    let o = prop::option::of(prop_oneof![(0..3i32).prop_map(|n| n.to_string()), Just("\"k\"".to_string())]);
    let g = prop::option::of(prop_oneof![
        4 => (-150..150i32, -150..150i32)
            .prop_map(|(x, y)| format!(r#"{{"type":"Point","coordinates":[{},{}]}}"#, x as f64 / 100.0, y as f64 / 100.0)),
        1 => Just(r#"{"type":"Polygon","coordinates":[[[0.2,0.2],[0.4,0.2],[0.4,0.4],[0.2,0.2]]]}"#.to_string()),
        1 => Just(r#"{"type":"LineString","coordinates":[[-2,-2],[2,2]]}"#.to_string()),
        1 => Just("\"here\"".to_string()),
    ]);
    (pk, a, s, tags, (o, g)).prop_map(|(pk, a, s, tags, (o, g))| {
        let mut fields = vec![format!("\"pk\":\"{pk}\"")];
        if let Some(a) = a {
            fields.push(format!("\"a\":{a}"));
        }
        if let Some(s) = s {
            fields.push(format!("\"s\":{s}"));
        }
        fields.push(format!("\"tags\":[{}]", tags.join(",")));
        if let Some(o) = o {
            fields.push(format!("\"o\":{{\"k\":{o}}}"));
        }
        if let Some(g) = g {
            fields.push(format!("\"g\":{g}"));
        }
        fields.join(",")
    })
}

/// A random policy: mode, root included or excluded, some paths the other way.
fn policy() -> impl Strategy<Value = IndexingPolicy> {
    let paths = prop::sample::subsequence(vec!["/a/?", "/s/?", "/tags/[]/?", "/tags/*", "/o/*", "/pk/?", "/a/*"], 0..4);
    let composites = prop::sample::subsequence(
        vec![
            r#"[{"path":"/a","order":"ascending"},{"path":"/s","order":"descending"}]"#,
            // The same orders walked the other way (ties follow the query's first key, not the walk).
            r#"[{"path":"/a","order":"descending"},{"path":"/s"}]"#,
            r#"[{"path":"/s"},{"path":"/id"}]"#,
            r#"[{"path":"/s","order":"descending"},{"path":"/id","order":"descending"}]"#,
            r#"[{"path":"/pk"},{"path":"/id","order":"descending"}]"#,
        ],
        0..4,
    );
    (0..8u8, paths, composites, prop::bool::ANY).prop_map(|(mode, paths, composites, spatial)| {
        let listed: Vec<String> = paths.iter().map(|p| format!("{{\"path\":\"{p}\"}}")).collect();
        let composites = composites.join(",");
        let spatial = if spatial { r#"{"path":"/g/*","types":["Point","Polygon","LineString"]}"# } else { "" };
        let json = match mode {
            0 => r#"{"indexingMode":"none","automatic":false}"#.to_string(),
            1..=4 => format!(
                r#"{{"includedPaths":[{{"path":"/*"}}],"excludedPaths":[{}],"compositeIndexes":[{composites}],"spatialIndexes":[{spatial}]}}"#,
                listed.join(",")
            ),
            _ => format!(
                r#"{{"includedPaths":[{}],"excludedPaths":[{{"path":"/*"}}],"compositeIndexes":[{composites}],"spatialIndexes":[{spatial}]}}"#,
                listed.join(",")
            ),
        };
        IndexingPolicy::from_json(&parse_json(&json).unwrap()).unwrap()
    })
}

fn load(items: &[String], partitions: usize, policy: &IndexingPolicy) -> Container {
    let settings =
        ContainerSettings { initial_partitions: partitions, split_max_items: 6, ..ContainerSettings::default() };
    let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings);
    c.replace_indexing_policy(policy.clone());
    for (i, fields) in items.iter().enumerate() {
        c.create(&parse_json(&format!("{{\"id\":\"i{i:03}\",{fields}}}")).unwrap()).unwrap();
    }
    c
}

/// The results (or the error) of a query, without system properties, page by page.
fn run(source: &dyn QuerySource, sql: &str, page: usize) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    let mut token = None;
    loop {
        let options =
            QueryOptions { max_item_count: Some(page), continuation: token.clone(), ..QueryOptions::default() };
        let result = execute(source, sql, &options).map_err(|e| format!("{} {}", e.status, e.message))?;
        out.extend(result.items);
        match result.continuation {
            Some(t) => token = Some(t),
            None => return Ok(out),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn index_access_paths_give_what_scans_give(
        items in prop::collection::vec(item(), 0..40),
        partitions in prop_oneof![Just(1usize), 2usize..6],
        first in policy(),
        second in policy(),
        transformed in 0usize..4,
        page in prop::sample::select(vec![2usize, 5, 1000]),
    ) {
        let c = load(&items, partitions, &first);
        for round in 0..2 {
            if round == 1 {
                // Replace the policy and transform only part of the container.
                c.replace_indexing_policy(second.clone());
                c.transform_indexes(transformed);
            }
            for sql in QUERIES {
                let indexed = run(&c, sql, page);
                let scanned = run(&scanned(&c), sql, page);
                prop_assert_eq!(&indexed, &scanned, "{} (round {}, policy {})", sql, round, c.indexing_policy());
            }
        }
    }
}

#[test]
fn index_reads_are_what_the_plan_says() {
    let items: Vec<String> =
        (0..300).map(|i| format!("\"pk\":\"k{}\",\"a\":{},\"tags\":[\"t{}\"]", i % 7, i, i % 3)).collect();
    let c = load(&items, 4, &IndexingPolicy::default());
    let options = QueryOptions::default();
    // A TOP over an index reads a handful of items per partition, not all of them.
    let top = execute(&c, "SELECT TOP 5 VALUE c.a FROM c ORDER BY c.a DESC", &options).unwrap();
    assert_eq!(top.items, (295..300).rev().map(|n| Value::from(n as f64)).collect::<Vec<_>>());
    let partitions = top.metrics.partitions_touched as u64;
    assert!(top.metrics.retrieved_document_count <= 16 * partitions, "{:?}", top.metrics);
    // Across partitions the merge on index keys reads each partition's head and then only where
    // the winners are: about two entries per partition and the rows taken, not a chunk of 17 in
    // every partition (which cost Q5 a lookup per entry in each of 89 partitions).
    let many = load(&items, 32, &IndexingPolicy::default());
    let top = execute(&many, "SELECT TOP 5 c.a FROM c ORDER BY c.a DESC", &options).unwrap();
    assert_eq!(top.items.len(), 5);
    let partitions = top.metrics.partitions_touched as u64;
    assert!(partitions >= 16, "{:?}", top.metrics);
    assert!(top.metrics.index_entries_read <= 2 * partitions + 2 * 5, "{:?}", top.metrics);
    // A range reads the items in it.
    let range = execute(&c, "SELECT VALUE c.a FROM c WHERE c.a >= 290", &options).unwrap();
    assert_eq!((range.items.len(), range.metrics.retrieved_document_count), (10, 10));
    assert_eq!(range.metrics.index_entries_read, 10);
    let tags = execute(&c, "SELECT VALUE COUNT(1) FROM c WHERE ARRAY_CONTAINS(c.tags, 't1')", &options).unwrap();
    // A COUNT the indexes answer exactly reads no item.
    assert_eq!((tags.items[0].clone(), tags.metrics.retrieved_document_count), (Value::from(100.0), 0));
    assert_eq!(tags.metrics.index_entries_read, 100);
    // OFFSET skips index keys: only the rows returned are read.
    let offset = execute(&c, "SELECT c.a FROM c ORDER BY c.a OFFSET 200 LIMIT 3", &options).unwrap();
    let expected: Vec<Value> = (200..203).map(|n| parse_json(&format!(r#"{{"a":{n}}}"#)).unwrap()).collect();
    assert_eq!(offset.items, expected);
    assert_eq!(offset.metrics.retrieved_document_count, 3, "{:?}", offset.metrics);
    // So does a TOP: the partitions' keys are merged first, and only the rows returned are read.
    let top_rows = execute(&c, "SELECT TOP 5 c.a FROM c ORDER BY c.a DESC", &options).unwrap();
    assert_eq!(top_rows.items.len(), 5);
    assert_eq!(top_rows.metrics.retrieved_document_count, 5, "{:?}", top_rows.metrics);
    // COUNT with a filter the indexes answer exactly reads no item.
    let count = execute(&c, "SELECT VALUE COUNT(1) FROM c WHERE c.a >= 100 AND c.a < 150", &options).unwrap();
    assert_eq!((count.items[0].clone(), count.metrics.retrieved_document_count), (Value::from(50.0), 0));
    // A JOIN's filter on the elements seeks their `[]` entries: only the items holding them are read.
    let join = execute(&c, "SELECT VALUE c.a FROM c JOIN t IN c.tags WHERE t = 't1'", &options).unwrap();
    assert_eq!((join.items.len(), join.metrics.retrieved_document_count), (100, 100));
    // MIN, MAX and DISTINCT VALUE of a path every item has read index keys, not items.
    let bounds = execute(&c, "SELECT MIN(c.a) AS lo, MAX(c.a) AS hi FROM c", &options).unwrap();
    assert_eq!(bounds.items, vec![parse_json(r#"{"lo":0,"hi":299}"#).unwrap()]);
    assert_eq!(bounds.metrics.retrieved_document_count, 0);
    // With a filter the indexes answer exactly: the keys of the items it finds.
    let filtered = execute(&c, "SELECT VALUE MAX(c.a) FROM c WHERE ARRAY_CONTAINS(c.tags, 't1')", &options).unwrap();
    assert_eq!((filtered.items, filtered.metrics.retrieved_document_count), (vec![Value::from(298.0)], 0));
    let distinct = execute(&c, "SELECT DISTINCT VALUE c.pk FROM c", &options).unwrap();
    let keys: Vec<Value> = (0..7).map(|k| Value::from(format!("k{k}"))).collect();
    assert_eq!((distinct.items, distinct.metrics.retrieved_document_count), (keys, 0));
    // ORDER BY on two paths walks their composite index, forward or backward.
    let composite = IndexingPolicy::from_json(
        &parse_json(r#"{"compositeIndexes":[[{"path":"/pk"},{"path":"/a","order":"descending"}]]}"#).unwrap(),
    )
    .unwrap();
    let d = load(&items, 4, &composite);
    for (sql, expected) in [
        ("SELECT TOP 5 VALUE c.a FROM c ORDER BY c.pk, c.a DESC", [294, 287, 280, 273, 266]),
        ("SELECT TOP 5 VALUE c.a FROM c ORDER BY c.pk DESC, c.a", [6, 13, 20, 27, 34]),
    ] {
        let top = execute(&d, sql, &options).unwrap();
        assert_eq!(top.items, expected.map(|n| Value::from(n as f64)).to_vec(), "{sql}");
        assert!(top.metrics.retrieved_document_count <= 16 * partitions, "{sql}: {:?}", top.metrics);
    }
    // With an equality on the leading path, the walk reads only the tuples starting with it.
    let prefixed =
        execute(&d, "SELECT TOP 3 VALUE c.a FROM c WHERE c.pk = 'k3' ORDER BY c.pk, c.a DESC", &options).unwrap();
    assert_eq!(prefixed.items, [297, 290, 283].map(|n| Value::from(n as f64)).to_vec());
    assert!(prefixed.metrics.index_entries_read <= 16, "{:?}", prefixed.metrics);
    assert!(prefixed.metrics.retrieved_document_count <= 4, "{:?}", prefixed.metrics);
    // Mode none reads everything.
    let none = IndexingPolicy::from_json(&parse_json(r#"{"indexingMode":"none","automatic":false}"#).unwrap()).unwrap();
    c.replace_indexing_policy(none);
    let scanned = execute(&c, "SELECT VALUE c.a FROM c WHERE c.a >= 290", &options).unwrap();
    assert_eq!((scanned.items, scanned.metrics.retrieved_document_count), (range.items, 300));
}

#[test]
fn spatial_predicates_read_the_points_near_the_shape() {
    let items: Vec<String> = (0..300)
        .map(|i| {
            let (lon, lat) = ((i % 20) as f64 / 10.0, (i / 20) as f64 / 10.0);
            format!(r#""pk":"k{}","g":{{"type":"Point","coordinates":[{lon},{lat}]}}"#, i % 7)
        })
        .collect();
    let policy =
        IndexingPolicy::from_json(&parse_json(r#"{"spatialIndexes":[{"path":"/g/*","types":["Point"]}]}"#).unwrap())
            .unwrap();
    let c = load(&items, 4, &policy);
    let options = QueryOptions::default();
    let near = execute(
        &c,
        "SELECT VALUE c.id FROM c WHERE ST_DISTANCE(c.g, {'type':'Point','coordinates':[0,0]}) < 12000",
        &options,
    )
    .unwrap();
    assert_eq!(near.items.len(), 3, "{:?}", near.items);
    // The box around the circle holds its corners too: at most the 3 x 3 grid points around it.
    assert!(near.metrics.retrieved_document_count <= 9, "{:?}", near.metrics);
    let within = execute(
        &c,
        "SELECT VALUE COUNT(1) FROM c WHERE ST_WITHIN(c.g, \
         {'type':'Polygon','coordinates':[[[0.45,0.45],[0.75,0.45],[0.75,0.75],[0.45,0.75],[0.45,0.45]]]})",
        &options,
    )
    .unwrap();
    assert_eq!(within.items, vec![Value::from(9.0)]);
    assert!(within.metrics.retrieved_document_count <= 25, "{:?}", within.metrics);
}

/// A request's ranges keep a physical partition's index entries by their logical partitions:
/// a few logical partitions are told apart by the address of the index's one copy of their EPK,
/// more than 32 by comparing EPKs with the ranges. Both answer as a scan does, in every index
/// service (ordered walks, probes, counts, keys, bounds), with the partition whole or in part.
#[test]
fn few_and_many_logical_partitions_keep_the_same_entries() {
    let items: Vec<String> = (0..600)
        .map(|i| {
            format!("\"pk\":\"k{}\",\"a\":{},\"s\":\"s{}\",\"tags\":[\"t{}\"]", i % 90, (i * 37) % 101, i % 13, i % 3)
        })
        .collect();
    let few = (0..3).map(|k| format!("'k{k}'")).collect::<Vec<_>>().join(",");
    let many = (0..45).map(|k| format!("'k{}'", 2 * k)).collect::<Vec<_>>().join(",");
    let policy = r#"{"includedPaths":[{"path":"/*"}],"compositeIndexes":[[{"path":"/a"},{"path":"/s"}]]}"#;
    let policy = IndexingPolicy::from_json(&parse_json(policy).unwrap()).unwrap();
    for partitions in [1, 3] {
        // No splits: a physical partition holds 30 or 90 logical partitions.
        let settings = ContainerSettings { initial_partitions: partitions, ..ContainerSettings::default() };
        let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings);
        c.replace_indexing_policy(policy.clone());
        for (i, fields) in items.iter().enumerate() {
            c.create(&parse_json(&format!("{{\"id\":\"i{i:03}\",{fields}}}")).unwrap()).unwrap();
        }
        assert_eq!(c.partition_count(), partitions);
        for keys in [&few, &many] {
            for sql in [
                format!("SELECT TOP 7 c.id, c.a FROM c WHERE c.pk IN ({keys}) ORDER BY c.a DESC"),
                format!("SELECT c.id FROM c WHERE c.pk IN ({keys}) ORDER BY c.a, c.s"),
                format!("SELECT VALUE c.id FROM c WHERE c.pk IN ({keys}) AND c.a > 90"),
                format!("SELECT VALUE COUNT(1) FROM c WHERE c.pk IN ({keys}) AND ARRAY_CONTAINS(c.tags, 't1')"),
                format!("SELECT DISTINCT VALUE c.s FROM c WHERE c.pk IN ({keys})"),
                format!("SELECT MIN(c.a) AS lo, MAX(c.a) AS hi FROM c WHERE c.pk IN ({keys}) AND c.s = 's4'"),
                "SELECT TOP 5 c.id FROM c WHERE c.pk = 'k17' ORDER BY c.a DESC".to_string(),
            ] {
                for page in [3, 1000] {
                    let indexed = run(&c, &sql, page).unwrap();
                    assert!(!indexed.is_empty(), "{sql}");
                    assert_eq!(indexed, run(&scanned(&c), &sql, page).unwrap(), "{sql} ({partitions} partitions)");
                }
            }
        }
    }
}

/// A write to a logical partition whose own orders a pinned ORDER BY built.
#[derive(Debug, Clone)]
enum Write {
    Create(u8, String),
    Replace(usize, String),
    Upsert(usize, String),
    Delete(usize),
    Patch(usize, String),
    RemoveA(usize),
}

fn write() -> impl Strategy<Value = Write> {
    let a = prop_oneof![
        4 => (-3..6i32).prop_map(|n| n.to_string()),
        2 => "[a-c]{0,2}".prop_map(|s| format!("\"{s}\"")),
        1 => Just("null".to_string()),
        1 => Just("[1]".to_string()),
    ];
    prop_oneof![
        3 => (0..4u8, a.clone()).prop_map(|(k, a)| Write::Create(k, a)),
        2 => (0..60usize, a.clone()).prop_map(|(i, a)| Write::Replace(i, a)),
        1 => (0..60usize, a.clone()).prop_map(|(i, a)| Write::Upsert(i, a)),
        2 => (0..60usize).prop_map(Write::Delete),
        1 => (0..60usize, a).prop_map(|(i, a)| Write::Patch(i, a)),
        1 => (0..60usize).prop_map(Write::RemoveA),
    ]
}

/// Pinned ORDER BY queries on small logical partitions (of up to 24 in a physical partition).
const PINNED: &[&str] = &[
    "SELECT c.id, c.a FROM c WHERE c.pk = 'k1' ORDER BY c.a DESC",
    "SELECT TOP 3 VALUE c.id FROM c WHERE c.pk = 'k1' ORDER BY c.a",
    "SELECT c.id FROM c WHERE c.pk = 'k1' ORDER BY c.a OFFSET 1 LIMIT 2",
    "SELECT VALUE c.id FROM c WHERE c.pk IN ('k1', 'k2') ORDER BY c.id DESC",
    "SELECT VALUE c.id FROM c WHERE c.pk = 'k2' ORDER BY c._ts, c.id",
    "SELECT TOP 2 VALUE c.id FROM c WHERE c.pk = 'k2' ORDER BY c._ts DESC",
    "SELECT VALUE c.id FROM c WHERE c.pk = 'k3' AND c.a > 0 ORDER BY c.a",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// A logical partition's own orders, built by the first pinned ORDER BY, follow every write
    /// after it (creates, replaces that change the key, upserts, deletes, patches, a key
    /// removed): after each, every pinned query returns what a scan returns.
    #[test]
    fn a_logical_partitions_own_orders_follow_its_writes(
        writes in prop::collection::vec(write(), 1..24),
        partitions in 1usize..3,
        page in prop::sample::select(vec![2usize, 1000]),
    ) {
        let settings = ContainerSettings { initial_partitions: partitions, ..ContainerSettings::default() };
        let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings);
        // 20 more logical partitions keep k1-k3 under half of their physical partitions.
        let mut ids: Vec<(String, String)> = Vec::new();
        for i in 0..80 {
            let (pk, id) = (format!("k{}", i % 24), format!("i{i:03}"));
            c.create(&parse_json(&format!(r#"{{"id":"{id}","pk":"{pk}","a":{}}}"#, i % 7)).unwrap()).unwrap();
            ids.push((pk, id));
        }
        let check = |when: &str| -> Result<(), TestCaseError> {
            for sql in PINNED {
                let indexed = run(&c, sql, page);
                prop_assert_eq!(&indexed, &run(&scanned(&c), sql, page), "{} ({})", sql, when);
            }
            Ok(())
        };
        check("before the writes")?;
        let none = WriteOptions::default();
        for (n, w) in writes.iter().enumerate() {
            let at = |i: &usize| ids[*i % ids.len()].clone();
            let item = |pk: &str, id: &str, a: &str| parse_json(&format!(r#"{{"id":"{id}","pk":"{pk}","a":{a}}}"#)).unwrap();
            // Writes to items deleted before fail (404) and change nothing.
            let _ = match w {
                Write::Create(k, a) => {
                    let (pk, id) = (format!("k{k}"), format!("n{n:03}"));
                    ids.push((pk.clone(), id.clone()));
                    c.create(&item(&pk, &id, a)).map(|_| ())
                }
                Write::Replace(i, a) => {
                    let (pk, id) = at(i);
                    c.replace(&PartitionKey::from(pk.as_str()), &id, &item(&pk, &id, a), &none).map(|_| ())
                }
                Write::Upsert(i, a) => {
                    let (pk, id) = at(i);
                    c.upsert(&item(&pk, &id, a), &none).map(|_| ())
                }
                Write::Delete(i) => {
                    let (pk, id) = at(i);
                    c.delete(&PartitionKey::from(pk.as_str()), &id, &none).map(|_| ())
                }
                Write::Patch(i, a) => {
                    let (pk, id) = at(i);
                    let set = PatchOperation::Set { path: "/a".into(), value: parse_json(a).unwrap() };
                    c.patch(&PartitionKey::from(pk.as_str()), &id, &[set], &none).map(|_| ())
                }
                Write::RemoveA(i) => {
                    let (pk, id) = at(i);
                    let remove = PatchOperation::Remove { path: "/a".into() };
                    c.patch(&PartitionKey::from(pk.as_str()), &id, &[remove], &none).map(|_| ())
                }
            };
            check(&format!("after {w:?}"))?;
        }
    }
}

/// A TOP of one small logical partition reads its own order: the rows' entries and one more,
/// not the physical partition's entries of every logical partition between them.
#[test]
fn a_pinned_top_reads_its_logical_partitions_entries_only() {
    // Two physical partitions of 20 logical partitions of 20 items each.
    let settings = ContainerSettings { initial_partitions: 2, ..ContainerSettings::default() };
    let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings);
    for i in 0..800 {
        let item = format!(r#"{{"id":"i{i:03}","pk":"k{}","a":{}}}"#, i % 40, (i * 37) % 800);
        c.create(&parse_json(&item).unwrap()).unwrap();
    }
    let sql = "SELECT TOP 5 c.id, c.a FROM c WHERE c.pk = 'k7' ORDER BY c.a DESC";
    // The first run builds the order, the second reads it: both read the same entries.
    for _ in 0..2 {
        let top = execute(&c, sql, &QueryOptions::default()).unwrap();
        assert_eq!(top.items, run(&scanned(&c), sql, 1000).unwrap());
        // The walk reads one row past the five to close the page, and a first chunk of 16.
        assert_eq!(top.metrics.retrieved_document_count, 6, "{:?}", top.metrics);
        assert_eq!(top.metrics.index_entries_read, 16, "{:?}", top.metrics);
    }
}

/// An import builds the indexes in bulk, which packs a key's long list of close sequence numbers
/// (2 bytes a number); writes after it unpack the lists they change. Probes, counts from the
/// lists' lengths, ordered walks both ways with TOP, OFFSET and pages, keys and bounds answer as
/// scans do, before the writes and after them.
#[test]
fn bulk_built_packed_postings_answer_as_scans_do() {
    let settings = ContainerSettings { initial_partitions: 2, ..ContainerSettings::default() };
    let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings);
    let lines: String = (0..2000)
        .map(|i| {
            format!(
                "{{\"id\":\"i{i:04}\",\"pk\":\"k{}\",\"g\":\"g{}\",\"n\":{},\"tags\":[\"t{}\",\"u\"]}}\n",
                i % 40,
                i % 5,
                i % 97,
                i % 4
            )
        })
        .collect();
    c.import(lines.as_bytes(), cosmoql::storage::ImportOptions::default(), |_| {}).unwrap();
    let queries = [
        "SELECT VALUE c.id FROM c WHERE c.g = 'g2'",
        "SELECT VALUE c.id FROM c WHERE c.g IN ('g1', 'g4')",
        "SELECT VALUE c.id FROM c WHERE c.g > 'g2' AND c.n < 10",
        "SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.tags, 't3')",
        "SELECT VALUE COUNT(1) FROM c WHERE c.g = 'g3'",
        "SELECT VALUE COUNT(1) FROM c WHERE c.g >= 'g1'",
        "SELECT VALUE COUNT(1) FROM c WHERE ARRAY_CONTAINS(c.tags, 'u')",
        "SELECT VALUE COUNT(1) FROM c WHERE c.pk = 'k7' AND c.g = 'g2'",
        "SELECT TOP 7 c.id, c.g FROM c ORDER BY c.g DESC",
        "SELECT c.id FROM c ORDER BY c.g OFFSET 10 LIMIT 5",
        "SELECT c.id FROM c WHERE c.pk IN ('k3', 'k9') ORDER BY c.g DESC",
        "SELECT DISTINCT VALUE c.g FROM c",
        "SELECT MIN(c.n) AS lo, MAX(c.n) AS hi FROM c WHERE c.g = 'g1'",
    ];
    let compare = |when: &str| {
        for sql in queries {
            for page in [3, 1000] {
                let indexed = run(&c, sql, page);
                assert!(indexed.as_ref().is_ok_and(|r| !r.is_empty()), "{sql} ({when}): {indexed:?}");
                assert_eq!(indexed, run(&scanned(&c), sql, page), "{sql} ({when}, pages of {page})");
            }
        }
    };
    compare("after the import");
    for i in (0..2000).step_by(23) {
        c.delete(&PartitionKey::from(format!("k{}", i % 40)), &format!("i{i:04}"), &WriteOptions::default()).unwrap();
    }
    for i in (1..2000).step_by(37) {
        let item =
            format!(r#"{{"id":"i{i:04}","pk":"k{}","g":"g{}","n":{},"tags":["t0"]}}"#, i % 40, (i + 1) % 5, i % 89);
        c.upsert(&parse_json(&item).unwrap(), &WriteOptions::default()).unwrap();
    }
    for i in 2000..2030 {
        let item = format!(r#"{{"id":"i{i:04}","pk":"k{}","g":"g2","n":{},"tags":["u"]}}"#, i % 40, i % 97);
        c.create(&parse_json(&item).unwrap()).unwrap();
    }
    compare("after writes");
}
