//! User-defined functions (issue 26): registered on a container, called from queries as
//! `udf.name(...)`, run in the JavaScript sandbox. The documented examples give the documented
//! results (`docs/design/server-side-js-research.md`, sections 4 and 6.6).

use std::sync::Arc;

use cosmoql::storage::{Container, ContainerSettings, PartitionKeyDefinition};
use cosmoql::value::{parse_json, Value};
use cosmoql::{ContainerClient, Error, QueryOptions};

fn json(text: &str) -> Value {
    parse_json(text).unwrap()
}

fn client(items: &[&str]) -> ContainerClient {
    let c = Container::new(
        "c",
        PartitionKeyDefinition::hash("/pk").unwrap(),
        ContainerSettings { initial_partitions: 3, ..ContainerSettings::default() },
    );
    for item in items {
        c.create(&json(item)).unwrap();
    }
    ContainerClient::from_container(Arc::new(c))
}

fn query(client: &ContainerClient, sql: &str) -> Result<Vec<Value>, Error> {
    let results = client.query_pages::<Value>(sql, QueryOptions::default()).drain()?;
    Ok(results
        .items
        .into_iter()
        .map(|v| match v {
            Value::Object(mut m) => {
                Arc::make_mut(&mut m).retain(|k, _| !k.starts_with('_'));
                Value::Object(m)
            }
            other => other,
        })
        .collect())
}

/// "User-defined functions (UDFs) in Azure Cosmos DB", the tax example, unchanged (as
/// `examples/scripts/` keeps it).
const TAX: &str = include_str!("../examples/scripts/tax.js");

/// The regular-expression example, unchanged (its trailing `;` too).
const REGEX_MATCH: &str = r#"function (input, pattern) {
    return input.match(pattern) !== null;
};"#;

#[test]
fn the_documented_tax_udf_filters_and_projects() {
    let c = client(&[
        r#"{"id":"a","pk":"x","income":500}"#,
        r#"{"id":"b","pk":"y","income":60000}"#,
        r#"{"id":"c","pk":"z","income":70000}"#,
        r#"{"id":"d","pk":"x","name":"no income"}"#,
    ]);
    c.create_user_defined_function("Tax", TAX).unwrap();
    // The documented query: `udf.Tax(t.income) > 20000`. Item d has no income: the call is
    // skipped (undefined), so it does not throw 'no input' and is not returned.
    let rich = query(&c, "SELECT VALUE t.id FROM Incomes t WHERE udf.Tax(t.income) > 20000").unwrap();
    let mut rich: Vec<String> = rich.iter().map(|v| v.as_str().unwrap().to_string()).collect();
    rich.sort();
    assert_eq!(rich, ["b", "c"]);
    let taxes = query(&c, "SELECT t.id, udf.Tax(t.income) AS tax FROM t WHERE t.pk = 'x' ORDER BY t.id").unwrap();
    assert_eq!(taxes, [json(r#"{"id":"a","tax":50}"#), json(r#"{"id":"d"}"#)]);
}

#[test]
fn the_documented_regex_udf_gives_the_documented_results() {
    let c = client(&[
        r#"{"id":"AndersenFamily","pk":"a","address":{"city":"Seattle"}}"#,
        r#"{"id":"WakefieldFamily","pk":"w","address":{"city":"NY"}}"#,
    ]);
    c.create_user_defined_function("REGEX_MATCH", REGEX_MATCH).unwrap();
    let projected =
        query(&c, r#"SELECT udf.REGEX_MATCH(Families.address.city, ".*eattle") FROM Families ORDER BY Families.id"#)
            .unwrap();
    assert_eq!(projected, [json(r#"{"$1":true}"#), json(r#"{"$1":false}"#)]);
    let filtered =
        query(&c, r#"SELECT VALUE Families.id FROM Families WHERE udf.REGEX_MATCH(Families.address.city, ".*eattle")"#)
            .unwrap();
    assert_eq!(filtered, [json(r#""AndersenFamily""#)]);
}

#[test]
fn an_unknown_udf_is_refused_and_names_are_case_sensitive() {
    let c = client(&[r#"{"id":"a","pk":"x","income":500}"#]);
    let e = query(&c, "SELECT udf.Tax(c.income) FROM c").unwrap_err();
    assert_eq!(e.status(), Some(400));
    assert!(e.to_string().contains("'udf.Tax' is not a recognized user-defined function name."), "{e}");
    c.create_user_defined_function("Tax", TAX).unwrap();
    assert!(query(&c, "SELECT udf.tax(c.income) FROM c").is_err());
    assert_eq!(query(&c, "SELECT VALUE udf.Tax(c.income) FROM c").unwrap(), [json("50")]);
    // Deleted, it no longer binds (the plan cache does not keep the old plan).
    c.delete_user_defined_function("Tax").unwrap();
    assert!(query(&c, "SELECT VALUE udf.Tax(c.income) FROM c").is_err());
}

#[test]
fn a_throwing_udf_fails_the_query_with_the_services_message() {
    let c = client(&[r#"{"id":"a","pk":"x","income":500}"#, r#"{"id":"b","pk":"x","income":null}"#]);
    c.create_user_defined_function("Tax", TAX).unwrap();
    // null is a value (the call runs) and `null == undefined` in JavaScript: the UDF throws.
    let e = query(&c, "SELECT VALUE udf.Tax(c.income) FROM c").unwrap_err();
    assert_eq!(e.status(), Some(400));
    assert!(e.to_string().contains("Encountered exception while executing Javascript. Exception = no input"), "{e}");
    // The query's error points at the call.
    let Error::Query { error, .. } = &e else { panic!("{e:?}") };
    assert_eq!(error.span.map(|s| (s.start, s.end)), Some((13, 30)));
}

#[test]
fn a_udf_that_runs_too_long_ends_with_408_and_the_next_query_works() {
    let c = client(&[r#"{"id":"a","pk":"x","n":1}"#]);
    c.create_user_defined_function("spin", "function (x) { while (true) {} }").unwrap();
    c.create_user_defined_function("twice", "function (x) { return 2 * x; }").unwrap();
    let started = std::time::Instant::now();
    let e = query(&c, "SELECT VALUE udf.spin(c.n) FROM c").unwrap_err();
    assert_eq!(e.status(), Some(408), "{e}");
    assert!(e.to_string().contains("The requested operation exceeded maximum alloted time."), "{e}");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(query(&c, "SELECT VALUE udf.twice(c.n) FROM c").unwrap(), [json("2")]);
}

#[test]
fn udfs_are_kept_listed_replaced_and_deleted() {
    let c = client(&[r#"{"id":"a","pk":"x","n":3}"#]);
    let created = c.create_user_defined_function("f", "function (x) { return x + 1; }").unwrap();
    assert_eq!(created.id, "f");
    let e = c.create_user_defined_function("f", "function (x) { return x; }").unwrap_err();
    assert_eq!(e.status(), Some(409));
    assert_eq!(query(&c, "SELECT VALUE udf.f(c.n) FROM c").unwrap(), [json("4")]);
    let replaced = c.replace_user_defined_function("f", "function (x) { return x * 10; }").unwrap();
    assert_ne!(replaced.etag, created.etag);
    assert_eq!(replaced.rid, created.rid);
    assert_eq!(query(&c, "SELECT VALUE udf.f(c.n) FROM c").unwrap(), [json("30")]);
    assert_eq!(c.list_user_defined_functions().iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["f"]);
    assert_eq!(c.read_user_defined_function("g").unwrap_err().status(), Some(404));
    assert_eq!(c.replace_user_defined_function("g", "function () {}").unwrap_err().status(), Some(404));
    c.delete_user_defined_function("f").unwrap();
    assert_eq!(c.delete_user_defined_function("f").unwrap_err().status(), Some(404));
    assert!(c.list_user_defined_functions().is_empty());
    // The service's limit: 50 a container.
    for i in 0..50 {
        c.create_user_defined_function(&format!("u{i}"), "function () { return 1; }").unwrap();
    }
    assert_eq!(c.create_user_defined_function("u50", "function () { return 1; }").unwrap_err().status(), Some(400));
}

#[test]
fn a_filter_with_a_udf_is_not_served_by_indexes_and_explain_says_so() {
    let c = client(&[r#"{"id":"a","pk":"x","income":500}"#]);
    c.create_user_defined_function("Tax", TAX).unwrap();
    let explain = c
        .explain("SELECT * FROM c WHERE udf.Tax(c.income) > 10 AND c.income > 100", QueryOptions::default(), false)
        .unwrap()
        .to_string();
    assert!(explain.contains("UDFs never use the index"), "{explain}");
    // The other conjunct still uses its index.
    assert!(explain.contains("c.income > 100: index range scan"), "{explain}");
}

#[test]
fn order_by_a_udf_is_refused_as_the_service_refuses_a_computed_order() {
    let c = client(&[r#"{"id":"a","pk":"x","income":500}"#]);
    c.create_user_defined_function("Tax", TAX).unwrap();
    // The service's rejection of an ORDER BY item that is no document path (recorded for
    // LOWER(...); inferred for a UDF: research, section 4).
    let e = query(&c, "SELECT * FROM c ORDER BY udf.Tax(c.income)").unwrap_err();
    assert_eq!(e.status(), Some(400));
    assert!(e.to_string().contains("ORDER BY item expression could not be mapped to a document path"), "{e}");
}

#[test]
fn a_udf_has_no_context() {
    let c = client(&[r#"{"id":"a","pk":"x","n":1}"#]);
    // "UDFs don't have access to the context object" (research, section 1.2).
    c.create_user_defined_function("sneaky", "function (x) { return getContext(); }").unwrap();
    let e = query(&c, "SELECT VALUE udf.sneaky(c.n) FROM c").unwrap_err();
    assert_eq!(e.status(), Some(400));
    assert!(e.to_string().contains("getContext is not defined"), "{e}");
}

#[test]
fn a_udf_filter_loads_every_item_and_is_charged_for_it() {
    // "UDF's do not utilize the index so evaluating the UDF will require loading documents"
    // (research, section 4): the same filter through a UDF reads every item, where the index
    // finds the one item, and costs more.
    let items: Vec<String> = (0..200).map(|i| format!(r#"{{"id":"{i}","pk":"k{}","n":{i}}}"#, i % 7)).collect();
    let c = client(&items.iter().map(String::as_str).collect::<Vec<_>>());
    c.create_user_defined_function("same", "function (x) { return x; }").unwrap();
    let run = |sql: &str| c.query_pages::<Value>(sql, QueryOptions::default()).drain().unwrap();
    let indexed = run("SELECT VALUE c.id FROM c WHERE c.n = 42");
    let by_udf = run("SELECT VALUE c.id FROM c WHERE udf.same(c.n) = 42");
    assert_eq!(indexed.items, by_udf.items);
    assert_eq!((indexed.metrics.retrieved_document_count, by_udf.metrics.retrieved_document_count), (1, 200));
    let (a, b) = (indexed.metrics.request_charge, by_udf.metrics.request_charge);
    assert!(b > a, "{b} vs {a}");
}
