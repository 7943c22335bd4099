//! Request charges against the service's published figures (issue 12's anchors), end to end:
//! items written and read through the store, queries run by the executor. The model and its
//! coefficients are in `storage/src/throughput/cost.rs`.

use cosmoql::executor::cost::{item_charge, Consistency, ItemWork};
use cosmoql::storage::{
    Container, ContainerSettings, IndexingPolicy, ItemResponse, OperationKind, PartitionKey, PartitionKeyDefinition,
    WriteOptions,
};
use cosmoql::store::response_charge;
use cosmoql::value::{parse_json, Value};
use cosmoql::{execute, QueryOptions};

fn container(partitions: usize, policy: &str) -> Container {
    let settings = ContainerSettings {
        initial_partitions: partitions,
        split_max_items: usize::MAX,
        split_max_bytes: u64::MAX,
        ..ContainerSettings::default()
    };
    let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings);
    c.replace_indexing_policy(IndexingPolicy::from_json(&parse_json(policy).unwrap()).unwrap());
    c
}

fn doc(id: &str, pk: &str, pad: usize) -> Value {
    parse_json(&format!(r#"{{"id":"{id}","pk":"{pk}","pad":"{}"}}"#, "x".repeat(pad))).unwrap()
}

/// Creates an item whose stored size is exactly `bytes` (the padding is adjusted to the
/// encoding), returning the create's response.
fn create_sized(c: &Container, id: &str, bytes: usize) -> ItemResponse {
    let mut pad = bytes.saturating_sub(64);
    loop {
        let created = c.create(&doc(id, "p", pad)).unwrap();
        if created.bytes == bytes {
            return created;
        }
        c.delete(&PartitionKey::from("p"), id, &WriteOptions::default()).unwrap();
        pad = (pad + bytes).checked_sub(created.bytes).expect("the padding can shrink to fit");
    }
}

#[test]
fn item_operations_cost_what_the_service_publishes() {
    let c = container(1, "{}");
    // A create of a 1 KB item with at most 5 indexed terms (id, pk, pad, _ts): 5 RU.
    let small = create_sized(&c, "small", 1024);
    assert_eq!(small.indexed_terms, 4);
    assert_eq!((small.operation, response_charge(&small)), (OperationKind::Create, 5.00));
    let read = c.read(&PartitionKey::from("p"), "small").unwrap();
    assert_eq!(response_charge(&read), 1.00);
    // Replace: twice the create of the same item.
    let replaced =
        c.replace(&PartitionKey::from("p"), "small", &doc("small", "p", 900), &WriteOptions::default()).unwrap();
    let as_create =
        item_charge(&ItemWork { kind: OperationKind::Create, ..ItemWork::from(&replaced) }, Consistency::Session);
    assert_eq!(response_charge(&replaced), 2.0 * as_create);
    // A point read of a 100 KB item: 10 RU; at Strong consistency, 20.
    let big = create_sized(&c, "big", 100 * 1024);
    let read = c.read(&PartitionKey::from("p"), "big").unwrap();
    assert_eq!(response_charge(&read), 10.00);
    assert_eq!(item_charge(&ItemWork::from(&read), Consistency::Strong), 20.00);
    assert_eq!(response_charge(&big), 50.00, "4 indexed terms are within the 5 a create includes");
    // A create of 100 KB with indexing mode none: 50 RU.
    let none = container(1, r#"{"indexingMode":"none","automatic":false}"#);
    let unindexed = create_sized(&none, "big", 100 * 1024);
    assert_eq!((unindexed.indexed_terms, response_charge(&unindexed)), (0, 50.00));
    // More indexed terms cost more; excluding them makes writes cheaper.
    let wide = parse_json(r#"{"id":"w","pk":"p","a":1,"b":2,"c":3,"d":[1,2,3,4,5,6,7,8,9,10]}"#).unwrap();
    let indexed = c.create(&wide).unwrap();
    let narrow = container(1, r#"{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/d/*"}]}"#);
    let excluded = narrow.create(&wide).unwrap();
    assert_eq!(indexed.indexed_terms, excluded.indexed_terms + 10);
    assert!(response_charge(&indexed) > response_charge(&excluded));
    // Upserts are charged as what they did.
    let upsert = c.upsert(&doc("new", "p", 10), &WriteOptions::default()).unwrap();
    assert_eq!(upsert.operation, OperationKind::Create);
    let upsert = c.upsert(&doc("new", "p", 20), &WriteOptions::default()).unwrap();
    assert_eq!(upsert.operation, OperationKind::Replace);
}

fn charge(c: &Container, sql: &str) -> f64 {
    execute(c, sql, &QueryOptions::default()).unwrap().metrics.request_charge
}

#[test]
fn queries_cost_what_the_service_publishes() {
    // 3,000 items of about 12 KB in one physical partition.
    let c = container(1, r#"{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/excluded/?"}]}"#);
    for i in 0..3000 {
        let item = format!(
            r#"{{"id":"i{i}","pk":"p{}","indexed":{i},"excluded":{i},"pad":"{}"}}"#,
            i % 50,
            "y".repeat(12_000)
        );
        c.create(&parse_json(&item).unwrap()).unwrap();
    }
    // A query by id and key on a small item: about 2.8-3.0 RU.
    c.create(&parse_json(r#"{"id":"small","pk":"p1","indexed":-1}"#).unwrap()).unwrap();
    let point = charge(&c, "SELECT * FROM c WHERE c.pk = 'p1' AND c.id = 'small'");
    assert!((2.8..=3.0).contains(&point), "{point}");
    // An indexed equality against the same filter on an excluded path: at least 100 times less
    // (the docs' example: 2.98 against 409.51).
    let indexed = charge(&c, "SELECT * FROM c WHERE c.indexed = 7");
    let scanned = charge(&c, "SELECT * FROM c WHERE c.excluded = 7");
    assert!(scanned >= 100.0 * indexed, "{indexed} vs {scanned}");
    // Each extra physical partition a query touches adds at least 2.3 RU.
    let four = container(4, "{}");
    let one = container(1, "{}");
    for c in [&four, &one] {
        c.create(&parse_json(r#"{"id":"a","pk":"p1","n":1}"#).unwrap()).unwrap();
    }
    let sql = "SELECT * FROM c WHERE c.n = 1";
    assert!(charge(&four, sql) - charge(&one, sql) >= 3.0 * 2.3, "{} vs {}", charge(&four, sql), charge(&one, sql));
}

#[test]
fn a_query_costs_the_same_every_time_and_at_every_parallelism() {
    let c = container(6, "{}");
    for i in 0..600 {
        c.create(&parse_json(&format!(r#"{{"id":"i{i}","pk":"p{}","n":{i}}}"#, i % 37)).unwrap()).unwrap();
    }
    for sql in [
        "SELECT * FROM c WHERE c.n > 100",
        "SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk",
        "SELECT * FROM c ORDER BY c.n DESC",
        "SELECT DISTINCT VALUE c.pk FROM c",
    ] {
        let first = charge(&c, sql);
        for dop in [-1, 0, 1, 2, 5] {
            let options = QueryOptions { max_degree_of_parallelism: dop, ..QueryOptions::default() };
            for _ in 0..3 {
                let again = execute(&c, sql, &options).unwrap().metrics.request_charge;
                assert_eq!(again, first, "{sql} at MaxDegreeOfParallelism {dop}");
            }
        }
        // Two decimals, never a float artifact.
        assert!(format!("{first}").split('.').nth(1).map_or(0, str::len) <= 2, "{first}");
    }
}

#[test]
fn query_metrics_follow_the_service_header() {
    let c = container(2, "{}");
    for i in 0..10 {
        c.create(&parse_json(&format!(r#"{{"id":"i{i}","pk":"p{i}","n":{i}}}"#)).unwrap()).unwrap();
    }
    let out = execute(&c, "SELECT * FROM c WHERE c.n >= 5", &QueryOptions::default()).unwrap();
    let header = out.metrics.to_header_string();
    let keys: Vec<&str> = header.split(';').map(|kv| kv.split('=').next().unwrap()).collect();
    assert_eq!(
        keys,
        [
            "totalExecutionTimeInMs",
            "queryCompileTimeInMs",
            "queryLogicalPlanBuildTimeInMs",
            "queryPhysicalPlanBuildTimeInMs",
            "queryOptimizationTimeInMs",
            "VMExecutionTimeInMs",
            "indexLookupTimeInMs",
            "documentLoadTimeInMs",
            "systemFunctionExecuteTimeInMs",
            "userFunctionExecuteTimeInMs",
            "retrievedDocumentCount",
            "retrievedDocumentSize",
            "outputDocumentCount",
            "outputDocumentSize",
            "writeOutputTimeInMs",
            "indexUtilizationRatio",
        ]
    );
    assert!(header.contains(";retrievedDocumentCount=5;"), "{header}");
    assert!(header.contains(";outputDocumentCount=5;"), "{header}");
    assert!(header.ends_with(";indexUtilizationRatio=1.00"), "{header}");
    assert!(out.metrics.retrieved_document_size > 0 && out.metrics.output_document_size > 0);
}

#[test]
fn strong_and_bounded_staleness_reads_cost_twice() {
    use cosmoql::ContainerClient;
    let c = container(2, "{}");
    let created = create_sized(&c, "a", 1024);
    assert_eq!(response_charge(&created), 5.00);
    let session = ContainerClient::from_container(std::sync::Arc::new(c));
    let strong = session.with_consistency(Consistency::Strong);
    let bounded = session.with_consistency(Consistency::BoundedStaleness);
    let eventual = session.with_consistency(Consistency::Eventual);
    let read =
        |client: &ContainerClient| client.read_item::<Value>(PartitionKey::from("p"), "a").unwrap().request_charge;
    assert_eq!((read(&session), read(&strong), read(&bounded), read(&eventual)), (1.00, 2.00, 2.00, 1.00));
    let query = |client: &ContainerClient| {
        let pages = client.query_items::<Value>("SELECT * FROM c", QueryOptions::default());
        pages.drain().unwrap().metrics.request_charge
    };
    assert_eq!(query(&strong), cosmoql::executor::cost::round(2.0 * query(&session)));
    // Writes cost the same at every level.
    let write = strong.upsert_item::<Value>(&doc("b", "p", 10)).unwrap().request_charge;
    let again = session.upsert_item::<Value>(&doc("b", "p", 10)).unwrap().request_charge;
    assert_eq!(write * 2.0, again, "a create, then a replace of the same item");
}

#[test]
fn failed_requests_carry_their_charge() {
    use cosmoql::storage::ManualClock;
    use cosmoql::{ContainerClient, TransactionalBatch};
    let client = ContainerClient::from_container(std::sync::Arc::new(container(1, "{}")));
    client.create_item::<Value>(&doc("a", "p", 10)).unwrap();
    let charge = |e: cosmoql::Error| (e.status(), e.request_charge());
    // Refused after looking the item up: a point read's worth.
    assert_eq!(charge(client.read_item::<Value>(PartitionKey::from("p"), "none").unwrap_err()), (Some(404), 1.0));
    assert_eq!(charge(client.create_item::<Value>(&doc("a", "p", 10)).unwrap_err()), (Some(409), 1.0));
    let stale = client.replace_item::<Value>(PartitionKey::from("p"), "a", &doc("a", "p", 1), Some("\"0\""));
    assert_eq!(charge(stale.unwrap_err()), (Some(412), 1.0));
    assert_eq!(charge(client.delete_item(PartitionKey::from("p"), "none").unwrap_err()), (Some(404), 1.0));
    // Refused before any work: nothing.
    let bad = parse_json(r#"{"id":"a/b","pk":"p"}"#).unwrap();
    assert_eq!(charge(client.create_item::<Value>(&bad).unwrap_err()), (Some(400), 0.0));
    let syntax = client.query_items_blocking::<Value>("SELECT FROM", QueryOptions::default()).unwrap_err();
    assert_eq!(charge(syntax), (Some(400), 0.0));
    // A failed batch: its failing operation's lookup (the others were rolled back).
    let batch =
        TransactionalBatch::new().create_item(&doc("b", "p", 1)).unwrap().create_item(&doc("a", "p", 1)).unwrap();
    assert_eq!(
        charge(client.execute_transactional_batch(PartitionKey::from("p"), batch).unwrap_err()),
        (Some(409), 1.0)
    );
    // Under provisioned throughput a failed request's charge is consumed from its partition; a
    // throttled one costs nothing.
    client.set_throughput(Some(400.0), std::sync::Arc::new(ManualClock::default())).unwrap();
    let _ = client.read_item::<Value>(PartitionKey::from("p"), "none");
    let usage = client.container().throughput().unwrap().usage();
    assert_eq!(usage[0].1.consumed, 1.0);
    client.set_throughput(Some(0.001), std::sync::Arc::new(ManualClock::default())).unwrap();
    let strict =
        client.with_retry_options(cosmoql::RetryOptions { max_attempts: 1, max_wait: std::time::Duration::ZERO });
    let _ = strict.read_item::<Value>(PartitionKey::from("p"), "a").unwrap();
    assert_eq!(charge(strict.read_item::<Value>(PartitionKey::from("p"), "a").unwrap_err()), (Some(429), 0.0));
}

/// Every page of `sql` at `page` results a page and MaxDegreeOfParallelism `dop`: the charges in
/// hundredths of an RU, and the results.
fn paged(c: &Container, sql: &str, page: Option<usize>, dop: i32) -> (Vec<i64>, Vec<Value>) {
    let mut options = QueryOptions { max_item_count: page, max_degree_of_parallelism: dop, ..QueryOptions::default() };
    let (mut charges, mut items) = (Vec::new(), Vec::new());
    loop {
        let out = execute(c, sql, &options).unwrap_or_else(|e| panic!("{sql}: {e}"));
        charges.push((out.metrics.request_charge * 100.0).round() as i64);
        items.extend(out.items);
        match out.continuation {
            Some(token) => options.continuation = Some(token),
            None => return (charges, items),
        }
    }
}

/// The query shapes whose pages resume in each way: after a scan position (filters answered by
/// the index or by reading items, JOINs, OFFSET, TOP), after sort keys (ORDER BY walking its
/// index or sorting, with and without a filter the index cannot answer), or by running again
/// (aggregates, GROUP BY, DISTINCT).
const PAGED_QUERIES: &[&str] = &[
    "SELECT * FROM c",
    "SELECT c.id FROM c WHERE c.n > 40",
    "SELECT c.id FROM c WHERE c.excluded > 40",
    "SELECT c.id, t FROM c JOIN t IN c.tags WHERE t != 'b'",
    "SELECT c.id FROM c WHERE UPPER(c.pk) = 'P3' OFFSET 3 LIMIT 20",
    "SELECT TOP 17 c.id FROM c WHERE c.n % 3 = 0",
    "SELECT c.id, c.n FROM c ORDER BY c.n DESC",
    "SELECT c.id FROM c WHERE c.n % 4 = 1 ORDER BY c.n",
    "SELECT c.id FROM c WHERE c.excluded < 60 ORDER BY c.n",
    "SELECT c.id FROM c WHERE c.n > 40 ORDER BY c.n",
    "SELECT c.id FROM c WHERE c.pk = 'p3' ORDER BY c.n DESC",
    "SELECT c.id FROM c ORDER BY c.n OFFSET 5 LIMIT 30",
    "SELECT c.id FROM c ORDER BY c.n OFFSET 7 LIMIT 100",
    "SELECT TOP 25 c.id FROM c WHERE c.n > 10 ORDER BY c.n DESC",
    "SELECT c.pk, COUNT(1) AS n, SUM(c.n) AS s FROM c GROUP BY c.pk",
    "SELECT VALUE COUNT(1) FROM c WHERE c.n > 30",
    "SELECT DISTINCT c.pk FROM c",
    "SELECT DISTINCT VALUE c.n % 7 FROM c",
    "SELECT * FROM (SELECT c.id, c.n FROM c WHERE c.n < 50) s WHERE s.n > 5",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// The pages of a query cost, together, exactly what one page returning everything costs,
    /// whatever the page size and the parallelism (issue 12's invariant).
    #[test]
    fn the_pages_of_a_query_add_up_to_its_one_page_charge(
        partitions in 1usize..5,
        items in 0usize..140,
        page in 1usize..40,
        dop in proptest::sample::select(vec![-1, 1, 3]),
    ) {
        let c = container(partitions, r#"{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/excluded/?"}]}"#);
        for i in 0..items {
            let tags = ["a", "b", "c"][..i % 4 % 3].iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(",");
            let item = format!(
                r#"{{"id":"i{i}","pk":"p{}","n":{},"excluded":{},"tags":[{tags}],"pad":"{}"}}"#,
                i % 7,
                (i * 37) % 101,
                (i * 53) % 97,
                "z".repeat(i % 5 * 300)
            );
            c.create(&parse_json(&item).unwrap()).unwrap();
        }
        for sql in PAGED_QUERIES {
            let (whole, all) = paged(&c, sql, None, 1);
            proptest::prop_assert_eq!(whole.len(), 1);
            let (pages, items) = paged(&c, sql, Some(page), dop);
            proptest::prop_assert_eq!(items.len(), all.len(), "{}", sql);
            proptest::prop_assert_eq!(pages.iter().sum::<i64>(), whole[0], "{} in pages of {}: {:?}", sql, page, pages);
        }
    }
}
