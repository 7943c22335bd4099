//! Partition pruning: table-driven cases, and a replay of the .NET SDK's query-plan baselines
//! (`tests/data/query_ranges.json`, copied from `shared/conformance/epk`).

use std::collections::HashMap;

use cosmoql_catalog::{Epk, PartitionKey, PartitionKeyDefinition, PartitionKeyPath, SyntheticKey, SyntheticKind};
use cosmoql_planner::{bind, prune, BindContext, Pruning, Targets, MAX_KEYS};
use cosmoql_value::{parse_json, Value};

// ---- helpers ----------------------------------------------------------------------------------

fn json(text: &str) -> Value {
    parse_json(text).unwrap_or_else(|e| panic!("bad JSON in test `{text}`: {e}"))
}

fn path(p: &str) -> PartitionKeyPath {
    PartitionKeyPath::parse(p).unwrap()
}

fn hash(p: &str) -> PartitionKeyDefinition {
    PartitionKeyDefinition::hash(p).unwrap()
}

fn hier(paths: &[&str]) -> PartitionKeyDefinition {
    PartitionKeyDefinition::hierarchical(paths).unwrap()
}

fn concat() -> PartitionKeyDefinition {
    PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::Concat {
        paths: vec![path("/a"), path("/b")],
        separator: "-".into(),
    }))
    .unwrap()
}

fn hash_suffix() -> PartitionKeyDefinition {
    PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::HashSuffix {
        base: path("/date"),
        source: path("/id"),
        buckets: 4,
    }))
    .unwrap()
}

fn random_suffix() -> PartitionKeyDefinition {
    PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::RandomSuffix {
        base: path("/date"),
        buckets: 3,
        seed: 7,
    }))
    .unwrap()
}

fn run(definition: &PartitionKeyDefinition, sql: &str, params: &[(&str, &str)]) -> Pruning {
    let query = cosmoql_parser::parse(sql).unwrap_or_else(|e| panic!("`{sql}` does not parse: {e}"));
    let parameters: HashMap<String, Value> = params.iter().map(|(k, v)| (k.to_string(), json(v))).collect();
    let bound = bind(&query, BindContext { parameters: &parameters, vector_policies: &[], udfs: &[] })
        .unwrap_or_else(|e| panic!("`{sql}` does not bind: {e}"));
    prune(&bound, query.where_clause.as_ref().map(|w| w.to_string()).as_deref(), definition)
}

/// `Targets::Keys` from a JSON array of keys, each a JSON array of components.
fn keys(text: &str) -> Targets {
    let Value::Array(list) = json(text) else { panic!("keys must be a JSON array") };
    Targets::Keys(
        list.iter()
            .map(|k| match k {
                Value::Array(parts) => PartitionKey::from_values(parts).unwrap(),
                _ => panic!("each key must be a JSON array"),
            })
            .collect(),
    )
}

/// `Targets::Ranges` of these prefixes (a JSON array of arrays), sorted, as `epk_range` gives them.
fn prefixes(definition: &PartitionKeyDefinition, text: &str) -> Targets {
    let Value::Array(list) = json(text) else { panic!("prefixes must be a JSON array") };
    let mut ranges: Vec<(Epk, Epk)> = list
        .iter()
        .map(|k| match k {
            Value::Array(parts) => definition.epk_range(&PartitionKey::from_values(parts).unwrap()).unwrap(),
            _ => panic!("each prefix must be a JSON array"),
        })
        .collect();
    ranges.sort();
    Targets::Ranges(ranges)
}

/// Synthetic keys: strings.
fn strings(list: &[&str]) -> Targets {
    Targets::Keys(list.iter().map(|s| PartitionKey::from(*s)).collect())
}

enum Expect {
    All,
    Keys(&'static str),
    Prefixes(&'static str),
    Strings(&'static [&'static str]),
    /// The one key `keys_from_parts` builds from these JSON values.
    Parts(&'static str),
}

struct Case {
    name: &'static str,
    definition: fn() -> PartitionKeyDefinition,
    sql: &'static str,
    params: &'static [(&'static str, &'static str)],
    expect: Expect,
}

fn pk() -> PartitionKeyDefinition {
    hash("/pk")
}
fn nested() -> PartitionKeyDefinition {
    hash("/a/b")
}
fn spaced() -> PartitionKeyDefinition {
    hash("/\"department name\"")
}
fn flag() -> PartitionKeyDefinition {
    hash("/flag")
}
fn two() -> PartitionKeyDefinition {
    hier(&["/tenant", "/user"])
}
fn three() -> PartitionKeyDefinition {
    hier(&["/tenant", "/user", "/session"])
}
fn custom_property() -> PartitionKeyDefinition {
    PartitionKeyDefinition::synthetic(
        SyntheticKey::new(SyntheticKind::Concat { paths: vec![path("/a"), path("/b")], separator: "|".into() })
            .with_property("pk"),
    )
    .unwrap()
}

const fn case(
    name: &'static str,
    definition: fn() -> PartitionKeyDefinition,
    sql: &'static str,
    expect: Expect,
) -> Case {
    Case { name, definition, sql, params: &[], expect }
}

const fn with_params(
    name: &'static str,
    definition: fn() -> PartitionKeyDefinition,
    sql: &'static str,
    params: &'static [(&'static str, &'static str)],
    expect: Expect,
) -> Case {
    Case { name, definition, sql, params, expect }
}

const CASES: &[Case] = &[
    // -- single path: equality --
    case("string", pk, "SELECT * FROM c WHERE c.pk = 'dev-1'", Expect::Keys(r#"[["dev-1"]]"#)),
    case("number", pk, "SELECT * FROM c WHERE c.pk = 5", Expect::Keys("[[5]]")),
    case("float", pk, "SELECT * FROM c WHERE c.pk = 2.5", Expect::Keys("[[2.5]]")),
    case("negative number", pk, "SELECT * FROM c WHERE c.pk = -5", Expect::Keys("[[-5]]")),
    case("minus zero is zero", pk, "SELECT * FROM c WHERE c.pk = -0 OR c.pk = 0", Expect::Keys("[[0]]")),
    case("1 and 1.0 are one key", pk, "SELECT * FROM c WHERE c.pk = 1 OR c.pk = 1.0", Expect::Keys("[[1]]")),
    case("bool", pk, "SELECT * FROM c WHERE c.pk = true", Expect::Keys("[[true]]")),
    case("false", pk, "SELECT * FROM c WHERE c.pk = false", Expect::Keys("[[false]]")),
    case("null", pk, "SELECT * FROM c WHERE c.pk = null", Expect::Keys("[[null]]")),
    with_params("parameter", pk, "SELECT * FROM c WHERE c.pk = @p", &[("p", r#""x""#)], Expect::Keys(r#"[["x"]]"#)),
    with_params("number parameter", pk, "SELECT * FROM c WHERE c.pk = @p", &[("p", "3")], Expect::Keys("[[3]]")),
    with_params("negated parameter", pk, "SELECT * FROM c WHERE c.pk = -@p", &[("p", "3")], Expect::Keys("[[-3]]")),
    case("reversed operands", pk, "SELECT * FROM c WHERE 'a' = c.pk", Expect::Keys(r#"[["a"]]"#)),
    case("string index", pk, r#"SELECT * FROM c WHERE c["pk"] = 'a'"#, Expect::Keys(r#"[["a"]]"#)),
    with_params(
        "parameter index",
        pk,
        "SELECT * FROM c WHERE c[@f] = 'a'",
        &[("f", r#""pk""#)],
        Expect::Keys(r#"[["a"]]"#),
    ),
    case("nested path", nested, "SELECT * FROM c WHERE c.a.b = 'x'", Expect::Keys(r#"[["x"]]"#)),
    case("nested path by index", nested, r#"SELECT * FROM c WHERE c["a"]["b"] = 'x'"#, Expect::Keys(r#"[["x"]]"#)),
    case("nested path mixed", nested, r#"SELECT * FROM c WHERE c.a["b"] = 'x'"#, Expect::Keys(r#"[["x"]]"#)),
    case("only part of a nested path", nested, "SELECT * FROM c WHERE c.a = 'x'", Expect::All),
    case(
        "quoted path",
        spaced,
        r#"SELECT * FROM c WHERE c["department name"] = 'Sales'"#,
        Expect::Keys(r#"[["Sales"]]"#),
    ),
    case("bare path is = true", flag, "SELECT * FROM c WHERE c.flag", Expect::Keys("[[true]]")),
    // -- IN / OR / AND --
    case("IN", pk, "SELECT * FROM c WHERE c.pk IN ('b', 'a', 'b')", Expect::Keys(r#"[["a"], ["b"]]"#)),
    with_params(
        "IN with parameters",
        pk,
        "SELECT * FROM c WHERE c.pk IN (@x, 7)",
        &[("x", "true")],
        Expect::Keys("[[true], [7]]"),
    ),
    case("NOT IN", pk, "SELECT * FROM c WHERE c.pk NOT IN ('a')", Expect::All),
    case("OR of equalities", pk, "SELECT * FROM c WHERE c.pk = 'b' OR c.pk = 'a'", Expect::Keys(r#"[["a"], ["b"]]"#)),
    case(
        "AND with other predicates",
        pk,
        "SELECT * FROM c WHERE c.x > 5 AND c.pk = 'a' AND NOT IS_DEFINED(c.y)",
        Expect::Keys(r#"[["a"]]"#),
    ),
    case(
        "AND inside OR",
        pk,
        "SELECT * FROM c WHERE (c.pk = 'a' AND c.x = 1) OR (c.y = 2 AND c.pk = 'b')",
        Expect::Keys(r#"[["a"], ["b"]]"#),
    ),
    case("OR with a non-key predicate", pk, "SELECT * FROM c WHERE c.pk = 'a' OR c.x = 1", Expect::All),
    case("NOT", pk, "SELECT * FROM c WHERE NOT (c.pk = 'a')", Expect::All),
    case("NOT under AND", pk, "SELECT * FROM c WHERE NOT (c.x = 1) AND c.pk = 'a'", Expect::Keys(r#"[["a"]]"#)),
    case("not equal", pk, "SELECT * FROM c WHERE c.pk != 'a'", Expect::All),
    case("less than", pk, "SELECT * FROM c WHERE c.pk < 'a'", Expect::All),
    case("BETWEEN", pk, "SELECT * FROM c WHERE c.pk BETWEEN 1 AND 1", Expect::All),
    case("function", pk, "SELECT * FROM c WHERE STARTSWITH(c.pk, 'a')", Expect::All),
    case("key compared to a path", pk, "SELECT * FROM c WHERE c.pk = c.other", Expect::All),
    case(
        "EXISTS does not break AND",
        pk,
        "SELECT * FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = 'x') AND c.pk = 'a'",
        Expect::Keys(r#"[["a"]]"#),
    ),
    case("contradiction", pk, "SELECT * FROM c WHERE c.pk = 1 AND c.pk = 2", Expect::Keys("[]")),
    case("type mismatch contradiction", pk, "SELECT * FROM c WHERE c.pk = 1 AND c.pk = '1'", Expect::Keys("[]")),
    case(
        "AND of IN lists",
        pk,
        "SELECT * FROM c WHERE c.pk IN (1, 2, 3) AND c.pk IN (3, 2, 9)",
        Expect::Keys("[[2], [3]]"),
    ),
    case("WHERE false", pk, "SELECT * FROM c WHERE false", Expect::Keys("[]")),
    case("WHERE true", pk, "SELECT * FROM c WHERE true", Expect::All),
    case("no WHERE", pk, "SELECT * FROM c", Expect::All),
    // -- parameters (a missing one is a binding error: see `missing_parameters_do_not_bind`) --
    // -- constants that no key equals: sound answer is no partition (the SDK keeps the full range) --
    case("array constant", pk, "SELECT * FROM c WHERE c.pk = []", Expect::Keys("[]")),
    case("object constant", pk, "SELECT * FROM c WHERE c.pk = {}", Expect::Keys("[]")),
    case("non-empty array", pk, "SELECT * FROM c WHERE c.pk = ['a']", Expect::Keys("[]")),
    case("undefined constant", pk, "SELECT * FROM c WHERE c.pk = undefined", Expect::Keys("[]")),
    case("NaN", pk, "SELECT * FROM c WHERE c.pk = NaN", Expect::Keys("[]")),
    case("Infinity", pk, "SELECT * FROM c WHERE c.pk = Infinity", Expect::Keys("[]")),
    with_params("array parameter", pk, "SELECT * FROM c WHERE c.pk = @p", &[("p", "[1]")], Expect::Keys("[]")),
    case("array OR key", pk, "SELECT * FROM c WHERE c.pk = [] OR c.pk = 'a'", Expect::Keys(r#"[["a"]]"#)),
    // -- FROM shapes --
    case("FROM root r", pk, "SELECT * FROM root r WHERE r.pk = 'a'", Expect::Keys(r#"[["a"]]"#)),
    case("FROM Families f", pk, "SELECT * FROM Families f WHERE f.pk = 'a'", Expect::Keys(r#"[["a"]]"#)),
    case("FROM root, no alias", pk, "SELECT * FROM root WHERE root.pk = 'a'", Expect::Keys(r#"[["a"]]"#)),
    case("another alias", pk, "SELECT d FROM c JOIN d IN c.list WHERE d.pk = 'a'", Expect::All),
    case("FROM c.path", pk, "SELECT * FROM c.children ch WHERE ch.pk = 'a'", Expect::All),
    case("FROM x IN c.arr", pk, "SELECT * FROM x IN c.items WHERE x.pk = 'a'", Expect::All),
    case("FROM subquery", pk, "SELECT * FROM (SELECT * FROM c) s WHERE s.pk = 'a'", Expect::All),
    case(
        "JOIN still prunes",
        pk,
        "SELECT c.id FROM c JOIN t IN c.tags WHERE c.pk = 'a' AND t = 'x'",
        Expect::Keys(r#"[["a"]]"#),
    ),
    case("JOIN alias path", pk, "SELECT c.id FROM c JOIN ch IN c.children WHERE ch.pk = 'a'", Expect::All),
    case("array index on the key path", pk, "SELECT * FROM c WHERE c.pk[0] = 'a'", Expect::All),
    case("array index in a nested path", nested, "SELECT * FROM c WHERE c.a[0].b = 'x'", Expect::All),
    // -- hierarchical keys --
    case(
        "hierarchical full key",
        three,
        "SELECT * FROM c WHERE c.session = 's' AND c.tenant = 't' AND c.user = 'u'",
        Expect::Keys(r#"[["t", "u", "s"]]"#),
    ),
    case(
        "hierarchical cross product",
        two,
        "SELECT * FROM c WHERE c.tenant IN ('b', 'a') AND (c.user = 1 OR c.user = 2)",
        Expect::Keys(r#"[["a", 1], ["a", 2], ["b", 1], ["b", 2]]"#),
    ),
    case("hierarchical prefix", three, "SELECT * FROM c WHERE c.tenant = 't'", Expect::Prefixes(r#"[["t"]]"#)),
    case(
        "hierarchical two-level prefix",
        three,
        "SELECT * FROM c WHERE c.tenant = 't' AND c.user = 'u' AND c.x = 1",
        Expect::Prefixes(r#"[["t", "u"]]"#),
    ),
    case(
        "hierarchical prefixes",
        two,
        "SELECT * FROM c WHERE c.tenant = 'a' OR c.tenant = 'b'",
        Expect::Prefixes(r#"[["a"], ["b"]]"#),
    ),
    case(
        "hierarchical prefix and full key",
        two,
        "SELECT * FROM c WHERE c.tenant = 'a' OR (c.tenant = 'b' AND c.user = 'u')",
        Expect::Prefixes(r#"[["a"], ["b", "u"]]"#),
    ),
    case(
        "hierarchical full key inside a prefix",
        two,
        "SELECT * FROM c WHERE c.tenant = 'a' OR (c.tenant = 'a' AND c.user = 'u')",
        Expect::Prefixes(r#"[["a"]]"#),
    ),
    case("hierarchical skipped level", three, "SELECT * FROM c WHERE c.user = 'u'", Expect::All),
    case(
        "hierarchical gap",
        three,
        "SELECT * FROM c WHERE c.tenant = 't' AND c.session = 's'",
        Expect::Prefixes(r#"[["t"]]"#),
    ),
    case(
        "hierarchical OR with a skipped level",
        two,
        "SELECT * FROM c WHERE c.tenant = 'a' OR c.user = 'u'",
        Expect::All,
    ),
    case(
        "hierarchical contradiction",
        two,
        "SELECT * FROM c WHERE c.tenant = 'a' AND c.tenant = 'b'",
        Expect::Keys("[]"),
    ),
    // -- synthetic keys --
    case("concat: all parts", concat, "SELECT * FROM c WHERE c.a = 'x' AND c.b = 2", Expect::Strings(&["x-2"])),
    case(
        "concat: IN on a part",
        concat,
        "SELECT * FROM c WHERE c.a IN ('y', 'x') AND c.b = true",
        Expect::Strings(&["x-true", "y-true"]),
    ),
    case("concat: one part missing", concat, "SELECT * FROM c WHERE c.a = 'x'", Expect::All),
    case("concat: null part", concat, "SELECT * FROM c WHERE c.a = null AND c.b = 1", Expect::Keys("[]")),
    case(
        "concat: the property itself",
        concat,
        "SELECT * FROM c WHERE c.partitionKey = 'x-2'",
        Expect::Strings(&["x-2"]),
    ),
    case("concat: the property as a number", concat, "SELECT * FROM c WHERE c.partitionKey = 5", Expect::Keys("[]")),
    case(
        "concat: custom property",
        custom_property,
        "SELECT * FROM c WHERE c.pk = 'p' OR (c.a = 1 AND c.b = 'q')",
        Expect::Strings(&["1|q", "p"]),
    ),
    case(
        "hash suffix: base and source",
        hash_suffix,
        "SELECT * FROM c WHERE c.date = '2024-01-01' AND c.id = 'item-7'",
        Expect::Parts(r#"["2024-01-01", "item-7"]"#),
    ),
    case(
        "hash suffix: base only",
        hash_suffix,
        "SELECT * FROM c WHERE c.date = '2024-01-01'",
        Expect::Strings(&["2024-01-01.1", "2024-01-01.2", "2024-01-01.3", "2024-01-01.4"]),
    ),
    case(
        "hash suffix: numeric base",
        hash_suffix,
        "SELECT * FROM c WHERE c.date = 20240101.0",
        Expect::Strings(&["20240101.1", "20240101.2", "20240101.3", "20240101.4"]),
    ),
    case("hash suffix: source only", hash_suffix, "SELECT * FROM c WHERE c.id = 'item-7'", Expect::All),
    case(
        "random suffix: base",
        random_suffix,
        "SELECT * FROM c WHERE c.date = '2018-08-09'",
        Expect::Strings(&["2018-08-09.1", "2018-08-09.2", "2018-08-09.3"]),
    ),
    case("random suffix: nothing", random_suffix, "SELECT * FROM c WHERE c.other = 1", Expect::All),
    case(
        "random suffix: the property itself",
        random_suffix,
        "SELECT * FROM c WHERE c.partitionKey = '2018-08-09.2'",
        Expect::Strings(&["2018-08-09.2"]),
    ),
];

fn expected(definition: &PartitionKeyDefinition, expect: &Expect) -> Targets {
    match expect {
        Expect::All => Targets::All,
        Expect::Keys(text) => keys(text),
        Expect::Prefixes(text) => prefixes(definition, text),
        Expect::Strings(list) => strings(list),
        Expect::Parts(text) => {
            let Value::Array(parts) = json(text) else { panic!("parts must be a JSON array") };
            let built = definition.synthetic_key().unwrap().keys_from_parts(&parts).unwrap();
            Targets::Keys(built.into_iter().map(PartitionKey::from).collect())
        }
    }
}

#[test]
fn table() {
    let mut failures = Vec::new();
    for case in CASES {
        let definition = (case.definition)();
        let got = run(&definition, case.sql, case.params);
        let want = expected(&definition, &case.expect);
        if got.targets != want {
            failures.push(format!("{}: `{}`\n  want {want:?}\n  got  {got:?}", case.name, case.sql));
        }
        assert!(!got.reason.is_empty() && !got.reason.contains('\n'), "{}: reason {:?}", case.name, got.reason);
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), CASES.len(), failures.join("\n"));
}

#[test]
fn container_without_a_key() {
    let got = run(&PartitionKeyDefinition::none(), "SELECT * FROM c WHERE c.pk = 'a'", &[]);
    assert_eq!(got.targets, Targets::All);
}

/// Pruning reads the bound query, so it never sees a parameter without a value: the binder
/// rejects the query first, wherever the parameter is.
#[test]
fn missing_parameters_do_not_bind() {
    for sql in [
        "SELECT * FROM c WHERE c.pk = @nope",
        "SELECT * FROM c WHERE c.pk = @nope AND c.pk = 'a'",
        "SELECT * FROM c WHERE c.pk IN ('a', @nope)",
    ] {
        let query = cosmoql_parser::parse(sql).unwrap();
        let err =
            bind(&query, BindContext { parameters: &HashMap::new(), vector_policies: &[], udfs: &[] }).unwrap_err();
        assert_eq!(err.message, "the parameter @nope is not defined", "{sql}");
    }
}

#[test]
fn reasons() {
    let got = run(&pk(), "SELECT * FROM c WHERE c.pk = 'dev-1'", &[]);
    assert!(got.reason.contains("pins 1 key"), "{}", got.reason);
    let got = run(&pk(), "SELECT * FROM c WHERE c.x = 1", &[]);
    assert_eq!(got.reason, "no equality filter on /pk: all partitions");
    let got = run(&pk(), "SELECT * FROM c WHERE c.pk = 1 AND c.pk = 2", &[]);
    assert!(got.reason.contains("no partition"), "{}", got.reason);
    let got = run(&three(), "SELECT * FROM c WHERE c.user = 'u'", &[]);
    assert!(got.reason.contains("/tenant"), "{}", got.reason);
    let got = run(&three(), "SELECT * FROM c WHERE c.tenant = 'u'", &[]);
    assert!(got.reason.contains("1 EPK range"), "{}", got.reason);
    let got = run(&concat(), "SELECT * FROM c WHERE c.a = 'x'", &[]);
    assert!(got.reason.contains("/a, /b"), "{}", got.reason);
    let got = run(&pk(), "SELECT * FROM c.children ch WHERE ch.pk = 'a'", &[]);
    assert!(got.reason.contains("all partitions"), "{}", got.reason);
    let long = format!("SELECT * FROM c WHERE c.pk = '{}'", "x".repeat(200));
    assert!(run(&pk(), &long, &[]).reason.chars().count() < 120);
}

fn in_list(path: &str, prefix: &str, n: usize) -> String {
    let items: Vec<String> = (0..n).map(|i| format!("'{prefix}{i}'")).collect();
    format!("{path} IN ({})", items.join(", "))
}

#[test]
fn bounded_sets() {
    // An IN list up to MAX_KEYS prunes; a longer one does not.
    let sql = format!("SELECT * FROM c WHERE {}", in_list("c.pk", "k", MAX_KEYS));
    let Targets::Keys(found) = run(&pk(), &sql, &[]).targets else { panic!("expected keys") };
    assert_eq!(found.len(), MAX_KEYS);
    let sql = format!("SELECT * FROM c WHERE {}", in_list("c.pk", "k", MAX_KEYS + 1));
    assert_eq!(run(&pk(), &sql, &[]).targets, Targets::All);

    // 40 x 40 combinations on a hierarchical key: too many keys, so the first level's 40 prefixes.
    let definition = two();
    let sql = format!("SELECT * FROM c WHERE {} AND {}", in_list("c.user", "u", 40), in_list("c.tenant", "t", 40));
    let got = run(&definition, &sql, &[]);
    let tenants: Vec<String> = (0..40).map(|i| format!("[\"t{i}\"]")).collect();
    let want = prefixes(&definition, &format!("[{}]", tenants.join(",")));
    assert_eq!(got.targets, want);

    // Buckets past MAX_KEYS: all partitions.
    let definition = PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::RandomSuffix {
        base: path("/date"),
        buckets: 5000,
        seed: 1,
    }))
    .unwrap();
    assert_eq!(run(&definition, "SELECT * FROM c WHERE c.date = 'd'", &[]).targets, Targets::All);
}

#[test]
fn ranges_are_sorted_and_disjoint() {
    let definition = three();
    let sql = format!("SELECT * FROM c WHERE {} OR (c.tenant = 't3' AND c.user = 'x')", in_list("c.tenant", "t", 30));
    let Targets::Ranges(ranges) = run(&definition, &sql, &[]).targets else { panic!("expected ranges") };
    assert_eq!(ranges.len(), 30, "the t3/x range lies inside the t3 prefix");
    for pair in ranges.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "{pair:?}");
    }
    for (start, end) in &ranges {
        assert!(start < end);
    }
}

// ---- .NET SDK query-plan baselines ------------------------------------------------------------

#[test]
fn sdk_query_plan_baselines() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/query_ranges.json")).unwrap();
    let data = json(&text);
    let Value::Array(cases) = data.get("cases") else { panic!("no cases") };
    assert!(cases.len() >= 16, "{} cases", cases.len());
    let mut checked = 0;
    for case in cases.iter() {
        let name = case.get("description").as_str().unwrap();
        let sql = case.get("query").as_str().unwrap();
        let Value::Array(paths) = case.get("partition_key_paths") else { panic!("{name}: no paths") };
        let paths: Vec<&str> = paths.iter().map(|p| p.as_str().unwrap()).collect();
        let Value::Array(ranges) = case.get("expected_query_ranges") else { panic!("{name}: no ranges") };
        assert_eq!(ranges.len(), 1, "{name}: one range per baseline case");
        let range = &ranges[0];
        let point = range.get("max").is_array() && range.get("min") == range.get("max");
        let expected_point = match point {
            true => {
                let Value::Array(components) = range.get("min") else { unreachable!() };
                Some(PartitionKey::from_values(components).unwrap())
            }
            false => {
                assert_eq!(range.get("max").as_str(), Some("Infinity"), "{name}: neither a point nor the full range");
                None
            }
        };
        assert_eq!(case.get("single_partition").as_bool(), Some(point), "{name}");

        let definition = match PartitionKeyDefinition::from_paths(&paths) {
            Ok(d) => d,
            Err(_) => {
                // `/key[0]`: this engine refuses array indexes in key paths at container creation, so
                // there is no such container to prune. The same query on a `/key` container must not
                // read `key[0]` as the key either.
                assert!(expected_point.is_none(), "{name}");
                assert!(paths.iter().any(|p| p.contains('[')), "{name}");
                let fixed: Vec<String> = paths.iter().map(|p| p.split('[').next().unwrap().to_string()).collect();
                let fixed: Vec<&str> = fixed.iter().map(String::as_str).collect();
                let definition = PartitionKeyDefinition::from_paths(&fixed).unwrap();
                assert_eq!(run(&definition, sql, &[]).targets, Targets::All, "{name}");
                checked += 1;
                continue;
            }
        };
        let got = run(&definition, sql, &[]).targets;
        let want = match (expected_point, name) {
            (Some(key), _) => Targets::Keys(vec![key]),
            // Deliberate difference: no item's key is an array or object (such items are rejected on
            // write), so `= []` / `= {}` can never hold. We prune to no partition; the SDK keeps the
            // full range. Both are sound.
            (None, "Partition Key Equals Array" | "Partition Key Equals Object") => Targets::Keys(vec![]),
            // Deliberate difference: a WHERE keeps a row only when its condition is exactly `true`,
            // so a bare `r.a.b.c` pins the first level to `true`: the prefix range of `[true]`. The
            // SDK keeps the full range.
            (None, "Multi Key Is Defined") => {
                Targets::Ranges(vec![definition.epk_range(&PartitionKey::from(true)).unwrap()])
            }
            (None, _) => Targets::All,
        };
        assert_eq!(got, want, "{name}: `{sql}`");
        checked += 1;
    }
    assert_eq!(checked, cases.len());
}
