//! Nothing a user types or loads may hang, crash, wrap around or silently lose data: one test per
//! finding of the hardening issue (each failed before its fix), and properties over extreme
//! numbers in every clause and option.

use std::sync::Arc;

use cosmoql::storage::{Container, ContainerSettings, Database, PartitionKeyDefinition, Store, MAX_INITIAL_PARTITIONS};
use cosmoql::value::{parse_json, Value};
use cosmoql::{execute, ContainerClient, QueryErrorKind, QueryOptions};
use proptest::prelude::*;

fn container(n: usize, partitions: usize) -> Container {
    let c = Container::new(
        "c",
        PartitionKeyDefinition::hash("/pk").unwrap(),
        ContainerSettings { initial_partitions: partitions, ..ContainerSettings::default() },
    );
    for i in 0..n {
        let doc =
            format!(r#"{{"id":"{i}","pk":"k{}","v":{},"s":"s{}","arr":[1,2,3,4,5,6,7,8,9,10]}}"#, i % 5, i % 17, i % 3);
        c.create(&parse_json(&doc).unwrap()).unwrap();
    }
    c
}

/// Printing `-(-(-(...)))` printed each operand twice per level: 40 levels ran for hours in
/// `parse`, `explain` and pruning (which prints the WHERE clause). Now every walk is linear.
#[test]
fn nested_minus_signs_print_plan_and_run() {
    let mut e = "1".to_string();
    for _ in 0..60 {
        e = format!("-({e})");
    }
    let sql = format!("SELECT VALUE c.v FROM c WHERE c.pk = 'k1' AND c.v > {e}");
    let query = cosmoql::parse(&sql).unwrap();
    assert_eq!(cosmoql::parse(&query.to_string()).unwrap(), query, "the printed form parses back");
    let c = container(20, 2);
    let explained = cosmoql::explain(&c, &sql, &QueryOptions::default()).unwrap();
    assert!(explained.to_string().contains("pins 1 key"), "{explained}");
    assert_eq!(execute(&c, &sql, &QueryOptions::default()).unwrap().items.len(), 3);
}

/// A chain of 513 ORs said "operators deep"; it is past the service's limit on ORs, so it says
/// that, as 501 ORs do.
#[test]
fn too_many_ors_say_so() {
    let c = container(1, 1);
    for n in [502, 514, 2000] {
        let ors = vec!["c.v = 1"; n].join(" OR ");
        let err = execute(&c, &format!("SELECT * FROM c WHERE {ors}"), &QueryOptions::default()).unwrap_err();
        assert_eq!(
            err.message, "The SQL query exceeded the maximum number of 'OR' operators. The allowed limit is 500.",
            "{n} ORs"
        );
    }
}

/// `ORDER BY c.v OFFSET 1 LIMIT 18446744073709551615` returned `[]` (OFFSET + LIMIT wrapped):
/// counts past 2^32-1 are the service's SC2061, and sums of counts saturate.
#[test]
fn counts_do_not_wrap() {
    let c = container(30, 3);
    let err = execute(
        &c,
        "SELECT VALUE c.v FROM c ORDER BY c.v OFFSET 1 LIMIT 18446744073709551615",
        &QueryOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, Some("SC2061"));
    let all = execute(&c, "SELECT VALUE c.v FROM c ORDER BY c.v OFFSET 1 LIMIT 4294967295", &QueryOptions::default())
        .unwrap();
    assert_eq!(all.items.len(), 29);
    // A page size of usize::MAX is one page; a token's counts past 2^53 are not a token.
    let options = QueryOptions { max_item_count: Some(usize::MAX), ..QueryOptions::default() };
    let out = execute(&c, "SELECT VALUE c.v FROM c ORDER BY c.v", &options).unwrap();
    assert_eq!((out.items.len(), out.continuation), (30, None));
    let paged = QueryOptions { max_item_count: Some(7), ..QueryOptions::default() };
    let token = execute(&c, "SELECT VALUE c.v FROM c", &paged).unwrap().continuation.unwrap();
    let forged = reencode(&token, |json| json.replace("\"n\":7", "\"n\":18446744073709551615"));
    let err =
        execute(&c, "SELECT VALUE c.v FROM c", &QueryOptions { continuation: Some(forged), ..paged }).unwrap_err();
    assert!(err.message.starts_with("invalid continuation token"), "{}", err.message);
}

/// A token's JSON, changed by `edit` and hex-encoded again under its old signature (what a client
/// that reads the format can forge without the process's key).
fn reencode(token: &str, edit: impl Fn(&str) -> String) -> String {
    let (body, tag) = token.rsplit_once('.').unwrap();
    let hex = &body[4..];
    let json =
        String::from_utf8((0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect())
            .unwrap();
    let edited = edit(&json);
    assert_ne!(edited, json, "the edit changed nothing in {json}");
    format!("{}{}.{tag}", &body[..4], edited.bytes().map(|b| format!("{b:02x}")).collect::<String>())
}

/// Tokens were hex of JSON anyone could edit: charge sums near 2^53 skipped a page's charge, and
/// sort keys of another number or type repeated pages or ended them early. They are signed now
/// (HMAC-SHA256 under a key of the process); an edited token is the service's 400 and a real one
/// still pages through every result once.
#[test]
fn forged_continuation_tokens_are_refused() {
    let c = container(40, 4);
    let sql = "SELECT VALUE c.v FROM c ORDER BY c.v";
    let paged = QueryOptions { max_item_count: Some(7), ..QueryOptions::default() };
    let first = execute(&c, sql, &paged).unwrap();
    let token = first.continuation.clone().unwrap();
    type Edit = fn(&str) -> String;
    let edits: [(&str, Edit); 4] = [
        ("charges", |j: &str| j.replacen("\"n\":7", "\"n\":7,\"ru\":[4,9007199254740990,9007199254740990,0]", 1)),
        ("count", |j: &str| j.replacen("\"n\":7", "\"n\":1", 1)),
        ("no sort keys", |j: &str| j.replacen("\"keys\":[", "\"keys\":[[]],\"k\":[", 1)),
        ("sort key type", |j: &str| j.replacen("\"keys\":[[", "\"keys\":[[\"x\",", 1)),
    ];
    for (what, edit) in &edits {
        let forged = reencode(&token, edit);
        let err = execute(&c, sql, &QueryOptions { continuation: Some(forged), ..paged.clone() }).unwrap_err();
        assert_eq!((err.kind, err.status), (QueryErrorKind::Bind, 400), "{what}: {err}");
        assert!(err.message.contains("signature does not match"), "{what}: {err}");
    }
    let mut flipped = token.clone().into_bytes();
    let last = flipped.len() - 1;
    flipped[last] = if flipped[last] == b'0' { b'1' } else { b'0' };
    let err =
        execute(&c, sql, &QueryOptions { continuation: Some(String::from_utf8(flipped).unwrap()), ..paged.clone() })
            .unwrap_err();
    assert_eq!(err.status, 400, "{err}");
    // The real token still pages: every value once, in order.
    let mut seen = first.items.clone();
    let mut next = first.continuation;
    while let Some(token) = next {
        let page = execute(&c, sql, &QueryOptions { continuation: Some(token), ..paged.clone() }).unwrap();
        seen.extend(page.items);
        next = page.continuation;
    }
    let expected = execute(&c, sql, &QueryOptions::default()).unwrap().items;
    assert_eq!(seen, expected);
}

/// `--partitions 2^61` aborted with "capacity overflow" and 10^8 with a 5.6 GB allocation; the
/// store now refuses more than 10,000 initial partitions with a 400, and clamps where it cannot
/// refuse.
#[test]
fn partition_counts_are_capped() {
    let store = Store::new();
    let db: Arc<Database> = store.create_database("db").unwrap();
    for n in [0, MAX_INITIAL_PARTITIONS + 1, 1 << 61] {
        let settings = ContainerSettings { initial_partitions: n, ..ContainerSettings::default() };
        let err = db.create_container("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings).unwrap_err();
        assert_eq!(err.status_code(), 400, "{n}: {err}");
    }
    let clamped = Container::new(
        "c",
        PartitionKeyDefinition::hash("/pk").unwrap(),
        ContainerSettings { initial_partitions: usize::MAX, ..ContainerSettings::default() },
    );
    assert_eq!(clamped.partition_count(), MAX_INITIAL_PARTITIONS);
    assert!(ContainerSettings::for_expected_items(usize::MAX).validate().is_ok());
}

/// Operators that hold rows charge a memory budget and fail with a clear error past it; results
/// stream to the caller and are never charged.
#[test]
fn a_query_has_a_memory_budget() {
    let c = container(500, 4);
    let small = QueryOptions { memory_budget: Some(4 * 1024), ..QueryOptions::default() };
    for (sql, what) in [
        ("SELECT c.id FROM c ORDER BY c.v", "ORDER BY"),
        ("SELECT c.id, COUNT(1) AS n FROM c GROUP BY c.id", "GROUP BY"),
        ("SELECT DISTINCT VALUE c.id FROM c", "DISTINCT"),
        ("SELECT MAKELIST(c.arr) AS all FROM c", "MAKELIST"),
    ] {
        let err = execute(&c, sql, &small).unwrap_err();
        assert_eq!((err.kind, err.status), (QueryErrorKind::Resource, 400), "{sql}");
        assert!(err.message.contains(&format!("memory budget of 4 KiB for {what}")), "{sql}: {}", err.message);
    }
    // A bounded sort holds only what it returns, and results are not charged however many.
    assert_eq!(execute(&c, "SELECT TOP 5 c.id FROM c ORDER BY c.v", &small).unwrap().items.len(), 5);
    let client = ContainerClient::from_container(Arc::new(c));
    let mut count = 0u64;
    let summary = client
        .query_pages::<Value>("SELECT VALUE [a, b, x] FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN x IN c.arr", small)
        .for_each(|_| {
            count += 1;
            true
        })
        .unwrap();
    assert_eq!((count, summary.metrics.output_document_count), (500_000, 500_000));
}

/// "RegexMatch: RegexMatch: invalid ..." named its function twice.
#[test]
fn function_errors_name_the_function_once() {
    let c = container(1, 1);
    let err = execute(&c, "SELECT VALUE RegexMatch(c.s, '[') FROM c", &QueryOptions::default()).unwrap_err();
    assert!(err.message.starts_with("RegexMatch: invalid regular expression"), "{}", err.message);
    assert_eq!(err.message.matches("RegexMatch").count(), 1, "{}", err.message);
    let err = execute(&c, "SELECT VALUE VectorDistance([1], [1], 1) FROM c", &QueryOptions::default()).unwrap_err();
    assert_eq!(err.message.matches("VectorDistance").count(), 1, "{}", err.message);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Extreme integers in every numeric clause and option: an answer or a clean error, never a
    /// panic, a wrap-around or a hang.
    #[test]
    fn extreme_numbers_in_clauses_and_options(
        top in prop_oneof![Just(0u64), Just(1), Just(u32::MAX as u64), Just(u32::MAX as u64 + 1), Just(u64::MAX), any::<u64>()],
        offset in prop_oneof![Just(0u64), Just(u32::MAX as u64), Just(u64::MAX), any::<u64>()],
        index in prop_oneof![Just(0u64), Just(u64::MAX), Just(i64::MAX as u64), any::<u64>()],
        param in prop_oneof![Just(1e308), Just(-1e308), Just(9007199254740993.0), Just(-0.0), Just(0.5), any::<f64>()],
        page in prop_oneof![Just(1usize), Just(usize::MAX), Just(usize::MAX - 1), 1usize..50],
        dop in prop_oneof![Just(i32::MIN), Just(-1), Just(0), Just(i32::MAX), any::<i32>()],
        buffered in prop_oneof![Just(None), Just(Some(1usize)), Just(Some(usize::MAX))],
        budget in prop_oneof![Just(None), Just(Some(0u64)), Just(Some(u64::MAX)), Just(Some(1u64 << 20))],
    ) {
        let c = container(25, 3);
        let options = QueryOptions {
            max_item_count: Some(page),
            max_degree_of_parallelism: dop,
            max_buffered_item_count: buffered,
            memory_budget: budget,
            ..QueryOptions::default()
        }
        .parameter("@p", Value::from(param));
        for sql in [
            format!("SELECT TOP {top} VALUE c.v FROM c ORDER BY c.v"),
            format!("SELECT VALUE c.v FROM c OFFSET {offset} LIMIT {top}"),
            format!("SELECT VALUE c.arr[{index}] FROM c"),
            "SELECT TOP @p VALUE c.v FROM c".to_string(),
            "SELECT VALUE c.v FROM c OFFSET @p LIMIT @p".to_string(),
            "SELECT VALUE [c.arr[@p], SUBSTRING(c.s, @p, @p), ARRAY_SLICE(c.arr, @p, @p), REPLICATE(c.s, @p), LEFT(c.s, @p), RIGHT(c.s, @p), LASTINDEXOF(c.s, 's', @p), DateTimeAdd('yy', @p, '2020-01-01T00:00:00Z')] FROM c".to_string(),
            "SELECT DISTINCT VALUE c.v FROM c ORDER BY c.v".to_string(),
            "SELECT c.s, COUNT(1) AS n, SUM(c.v * @p) AS t FROM c GROUP BY c.s".to_string(),
        ] {
            let mut options = options.clone();
            let mut pages = 0;
            loop {
                match execute(&c, &sql, &options) {
                    Ok(out) => {
                        pages += 1;
                        prop_assert!(pages <= 30, "{} pages of {}: a paging loop", pages, sql);
                        match out.continuation {
                            Some(t) => options.continuation = Some(t),
                            None => break,
                        }
                    }
                    Err(e) => {
                        prop_assert!(e.kind != QueryErrorKind::Internal, "{}: {}", sql, e);
                        break;
                    }
                }
            }
        }
    }
}

/// Operators of a subquery that runs once per row hold their groups only while it runs: the
/// budget is charged for what is held at once, not for what was ever held. MAKESET is charged
/// for the values it keeps, not for duplicates; DISTINCT in a FROM subquery is charged too.
#[test]
fn the_budget_counts_what_is_held_at_once() {
    let c = container(500, 4);
    let small = QueryOptions { memory_budget: Some(16 * 1024), ..QueryOptions::default() };
    for sql in [
        "SELECT VALUE ARRAY(SELECT t, COUNT(1) AS n FROM t IN c.arr GROUP BY t) FROM c",
        "SELECT VALUE (SELECT VALUE MAKELIST(t) FROM t IN c.arr) FROM c",
        "SELECT VALUE MAKESET(c.s) FROM c",
        "SELECT DISTINCT VALUE c.s FROM c",
    ] {
        let out = execute(&c, sql, &small).unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert!(!out.items.is_empty(), "{sql}");
    }
    let tiny = QueryOptions { memory_budget: Some(4 * 1024), ..QueryOptions::default() };
    let err = execute(&c, "SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.id FROM c) s", &tiny).unwrap_err();
    assert_eq!(err.kind, QueryErrorKind::Resource, "{err}");
}

/// NaN and infinities have no JSON form: the service answers a query that would return one with
/// 400 and substatus 4001 (`cosmoql query` printed `[,,]`).
#[test]
fn non_finite_results_are_an_error() {
    let c = container(5, 2);
    for sql in
        ["SELECT VALUE c.v / 0 FROM c", "SELECT c.id, [LOG(0)] AS l FROM c", "SELECT VALUE SUM(c.v * 1e308) FROM c"]
    {
        let err = execute(&c, sql, &QueryOptions::default()).unwrap_err();
        assert_eq!((err.kind, err.status, err.substatus), (QueryErrorKind::Eval, 400, 4001), "{sql}: {err}");
    }
    // Inside the query they are values like any other.
    let out = execute(&c, "SELECT VALUE IS_FINITE_NUMBER(c.v / 0) FROM c", &QueryOptions::default()).unwrap();
    assert_eq!(out.items, vec![Value::Bool(false); 5]);
}

/// A cancelled query stops where it is, the merge and the output included: nothing more comes
/// after the flag is set.
#[test]
fn cancelling_stops_the_merge_and_the_output() {
    let c = container(2000, 8);
    let client = ContainerClient::from_container(Arc::new(c));
    for sql in [
        "SELECT c.id FROM c ORDER BY c.v",
        "SELECT c.id, COUNT(1) AS n FROM c GROUP BY c.id",
        "SELECT VALUE c.id FROM c",
    ] {
        let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let options = QueryOptions { cancel: Some(Arc::clone(&cancel)), ..QueryOptions::default() };
        let mut seen = 0;
        let err = client
            .query_pages::<Value>(sql, options)
            .for_each(|_| {
                seen += 1;
                cancel.store(true, std::sync::atomic::Ordering::SeqCst);
                true
            })
            .unwrap_err();
        assert_eq!(err.query_error().map(|e| e.kind), Some(QueryErrorKind::Cancelled), "{sql}: {err}");
        assert_eq!(seen, 1, "{sql}: results after the cancel");
    }
}

/// Issue 21: `REPLACE` of a 10,000-character string by 10,000-character strings, twice, asked
/// for 6.4 GB and aborted; doubling arrays or strings with nested calls did the same. A function
/// checks what it would build first.
#[test]
fn functions_that_build_values_are_bounded() {
    let c = container(1, 1);
    let big = Value::array((0..600_000).map(|i| Value::from(i as f64)));
    let options =
        QueryOptions { parameters: [("big".to_string(), big)].into_iter().collect(), ..QueryOptions::default() };
    for sql in [
        "SELECT VALUE LENGTH(REPLACE(REPLACE(REPLICATE('a',10000),'a',REPLICATE('b',10000)),'b',REPLICATE('c',10000)))",
        "SELECT VALUE LENGTH(CONCAT(REPLACE(REPLICATE('a',10000),'a',REPLICATE('b',1000)), REPLACE(REPLICATE('a',10000),'a',REPLICATE('b',1000))))",
        "SELECT VALUE ARRAY_LENGTH(ARRAY_CONCAT(@big, @big))",
    ] {
        let err = execute(&c, sql, &options).unwrap_err();
        assert_eq!(err.kind, QueryErrorKind::Eval, "{err}");
        assert!(err.message.contains("a function builds at most"), "{}", err.message);
    }
    // Just under the bound: built.
    let ok = execute(
        &c,
        "SELECT VALUE LENGTH(REPLACE(REPLICATE('a',10000),'a',REPLICATE('b',1000)))",
        &QueryOptions::default(),
    )
    .unwrap();
    assert_eq!(ok.items, vec![Value::from(10_000_000.0)]);
}

/// Issue 21: `RegexMatch(REPLICATE('a', 10000), '(a?)' x n + 'a' x n)` took 9.6 s and 636 MB for
/// n = 2,000 and aborted on a 2 GB allocation for 5,000: every step copied every group's capture
/// slots. Groups are compiled without them now, a pattern compiles to at most 10 MiB, and a
/// match stops with the sizes past its work bound.
#[test]
fn regular_expressions_are_bounded() {
    let c = container(1, 1);
    let pattern = |n: usize| format!("{}{}", "(a?)".repeat(n), "a".repeat(n));
    let run = |pattern: &str| {
        let options = QueryOptions {
            parameters: [("p".to_string(), Value::from(pattern))].into_iter().collect(),
            ..QueryOptions::default()
        };
        execute(&c, "SELECT VALUE RegexMatch(REPLICATE('a', 10000), @p)", &options)
    };
    // The issue's n = 2,000 (the fast engines) and n = 5,000 (the counted lazy DFA) match.
    for n in [2_000, 5_000] {
        assert_eq!(run(&pattern(n)).unwrap().items, vec![Value::Bool(true)], "n = {n}");
    }
    // Larger: the match's work bound, then the compiled size bound.
    let err = run(&pattern(9_000)).unwrap_err();
    assert_eq!(err.kind, QueryErrorKind::Eval, "{err}");
    assert!(err.message.contains("too complex to match against a string of 10000 characters"), "{}", err.message);
    for p in ["a{1000}{1000}", r"\w{1000}"] {
        let err = run(p).unwrap_err();
        assert!(err.message.contains("regular expression too large"), "{}", err.message);
        assert!(err.message.len() < 300, "the pattern is quoted shortened: {}", err.message);
    }
}

/// A string too long for a large pattern's match bound is a candidate of the index scan, so the
/// filter reports the error instead of the index dropping (or keeping) the item silently, and a
/// COUNT is not answered from such a probe alone.
#[test]
fn an_index_scan_leaves_undecidable_strings_to_the_filter() {
    let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), ContainerSettings::default());
    c.create(&parse_json(&format!(r#"{{"id":"1","pk":"a","s":"{}"}}"#, "a".repeat(20_000))).unwrap()).unwrap();
    c.create(&parse_json(r#"{"id":"2","pk":"a","s":"b"}"#).unwrap()).unwrap();
    let options = QueryOptions {
        parameters: [("p".to_string(), Value::from(format!("{}{}", "(a?)".repeat(9_000), "a".repeat(9_000)).as_str()))]
            .into_iter()
            .collect(),
        ..QueryOptions::default()
    };
    for sql in
        ["SELECT c.id FROM c WHERE RegexMatch(c.s, @p)", "SELECT VALUE COUNT(1) FROM c WHERE RegexMatch(c.s, @p)"]
    {
        let err = execute(&c, sql, &options).unwrap_err();
        assert!(err.message.contains("too complex to match"), "{sql}: {}", err.message);
    }
}

/// Issue 21 ("object construction"): arrays and objects share their parts, so `[t, t]` nested in
/// 34 FROM subqueries was built in microseconds and then printed for hours (2^35 copies). Every
/// value a query builds (array and object literals, the SELECT list, ARRAY(subquery)) stands
/// for at most 16 MiB of JSON; values just under it are built.
#[test]
fn values_built_from_shared_parts_are_bounded() {
    let c = container(1, 1);
    let nest = |start: &str, step: &dyn Fn(usize) -> String, levels: usize| {
        (1..=levels).fold(start.to_string(), |q, i| format!("{} FROM ({q}) AS t{i}", step(i)))
    };
    let array = nest("SELECT VALUE [1, 1]", &|i| format!("SELECT VALUE [t{i}, t{i}]"), 34);
    let object = nest("SELECT VALUE {a: 1}", &|i| format!("SELECT t{i} AS x, t{i} AS y"), 34);
    let literal = nest("SELECT VALUE {a: 1}", &|i| format!("SELECT VALUE {{x: t{i}, y: t{i}}}"), 34);
    let sub = "SELECT VALUE ARRAY(SELECT VALUE [t, u] FROM t IN c.big JOIN u IN c.big) FROM c";
    let big = format!(r#"{{"id":"b","pk":"k0","big":[{}]}}"#, vec![format!("\"{}\"", "x".repeat(5000)); 300].join(","));
    c.create(&parse_json(&big).unwrap()).unwrap();
    for (sql, what) in [
        (array.as_str(), "an array built by the query"),
        (object.as_str(), "the SELECT list's object built by the query"),
        (literal.as_str(), "an object built by the query"),
        (sub, "ARRAY(SELECT ...) built by the query"),
    ] {
        let err = execute(&c, sql, &QueryOptions::default()).unwrap_err();
        assert_eq!(err.kind, QueryErrorKind::Eval, "{err}");
        assert!(err.message.starts_with(what), "{}", err.message);
        assert!(err.message.contains("16777216 bytes of JSON"), "{}", err.message);
    }
    // A function that builds from shared parts: two elements, 2^34 copies of `[1, 1]`.
    let concat = nest("SELECT VALUE [1, 1]", &|i| format!("SELECT VALUE ARRAY_CONCAT([t{i}], [t{i}])"), 34);
    let err = execute(&c, &concat, &QueryOptions::default()).unwrap_err();
    assert!(
        err.message.starts_with("ARRAY_CONCAT: the result would be more than 16777216 bytes of JSON"),
        "{}",
        err.message
    );
    // 2^20 ones nested 20 deep: about 4 MiB of text, built and printed.
    let ok = nest("SELECT VALUE [1, 1]", &|i| format!("SELECT VALUE [t{i}, t{i}]"), 19);
    let out =
        execute(&c, &format!("SELECT VALUE LENGTH(ToString(t)) FROM ({ok}) AS t"), &QueryOptions::default()).unwrap();
    assert_eq!(out.items, vec![Value::from(4_194_301.0)]);
}

/// Issue 21, point 11: long lists of constants are gathered into a set once per query (`IN` and
/// `ARRAY_CONTAINS` of a constant array took 20.5 s and 17.6 s over 100k items; the figures are
/// in `benches/membership.rs`). The set answers exactly as comparing with each element does:
/// the same list with one element that is not a constant (so compared in turn) gives the same
/// results on values of every kind, undefined included.
#[test]
fn long_constant_lists_answer_as_comparing_each_element() {
    let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), ContainerSettings::default());
    let values =
        ["1", "-0", "2.5", "\"a\"", "\"B\"", "null", "true", "false", "[]", "[1]", "{}", r#"{"a":1}"#, r#"{"a":[1]}"#];
    for (i, v) in values.iter().enumerate() {
        c.create(&parse_json(&format!(r#"{{"id":"{i}","pk":"p","v":{v},"one":1}}"#)).unwrap()).unwrap();
    }
    c.create(&parse_json(r#"{"id":"missing","pk":"p","one":1}"#).unwrap()).unwrap();
    let lists = [
        "1, 2, 3, 4, 5, 6, 7, 8, 9",
        r#"1, 0, "a", "b", "c", "d", "e", "f", "g""#,
        r#"1, null, true, [1], {"a": 1}, "x", 4, 5, 6"#,
        "1, 2, 3, 4, 5, 6, 7, 8, undefined",
    ];
    let run = |sql: &str| execute(&c, sql, &QueryOptions::default()).unwrap().items;
    for list in lists {
        // `c.one` is 1, the list's first element: the same list, compared in turn.
        let set = run(&format!(
            "SELECT VALUE [c.id, c.v IN ({list}), c.v NOT IN ({list}), ARRAY_CONTAINS([{list}], c.v), \
             ARRAY_CONTAINS_ANY([{list}], c.v, 'zz'), ARRAY_CONTAINS_ALL([{list}], c.v, 1)] FROM c"
        ));
        let each = run(&format!(
            "SELECT VALUE [c.id, c.v IN ({list}, c.one), c.v NOT IN ({list}, c.one), ARRAY_CONTAINS([{list}, c.one], c.v), \
             ARRAY_CONTAINS_ANY([{list}, c.one], c.v, 'zz'), ARRAY_CONTAINS_ALL([{list}, c.one], c.v, 1)] FROM c"
        ));
        assert_eq!(set, each, "{list}");
        assert_eq!(set.len(), values.len() + 1);
    }
    // And over a long list, what it finds.
    let long: Vec<String> = (0..16_000).map(|i| (i * 7).to_string()).collect();
    let found = run(&format!("SELECT VALUE c.id FROM c WHERE ABS(c.v) IN ({})", long.join(", ")));
    assert_eq!(found, vec![Value::from("1")]);
}
