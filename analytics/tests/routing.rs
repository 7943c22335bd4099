//! Cosmos SQL routed to the analytical store (issue 25): each aggregate query the mirror answers
//! exactly runs there (EXPLAIN says so, the run charges nothing) and gives the row engine's
//! results, at 1, 3 and 16 physical partitions with splits and writes in between; each query it
//! cannot answer exactly stays on the row engine, EXPLAIN saying why.

mod fixture;

use std::sync::Arc;

use cosmoql::value::Value;
use cosmoql::{ContainerClient, ContainerProperties, QueryOptions};
use cosmoql_analytics::{AnalyticalRoute, Analytics, SchemaMode};
use fixture::{container, filled, item, through_splits_and_writes};

/// Queries the mirror answers, and whether their results come in an order (no GROUP BY).
const ROUTED: &[&str] = &[
    "SELECT COUNT(1) AS n FROM c",
    "SELECT VALUE COUNT(1) FROM c",
    "SELECT COUNT(1) FROM c",
    "SELECT COUNT(c.site) AS n FROM c",
    "SELECT SUM(c.count) AS s, AVG(c.count) AS a FROM c",
    "SELECT MIN(c.metricValue) AS lo, MAX(c.metricValue) AS hi FROM c",
    "SELECT MIN(c.site) AS lo, MAX(c.site) AS hi FROM c",
    "SELECT MIN(c.ok) AS lo, MAX(c.ok) AS hi FROM c",
    "SELECT VALUE SUM(c.metricValue) FROM c WHERE c.count > 25",
    "SELECT COUNT(1) AS n FROM c WHERE c.ok",
    "SELECT COUNT(1) AS n FROM c WHERE NOT c.ok AND c.site != 'lab'",
    "SELECT MAX(c.ts) AS t FROM c WHERE c.site = 'lab' OR c.site = 'east'",
    "SELECT COUNT(1) AS n FROM c WHERE c.location.city = 'Oslo'",
    "SELECT COUNT(1) AS n FROM c WHERE c.count BETWEEN 10 AND 20",
    "SELECT COUNT(1) AS n FROM c WHERE c.count NOT BETWEEN 10 AND 20",
    "SELECT COUNT(1) AS n FROM c WHERE c.site IN ('lab', 'north')",
    "SELECT COUNT(1) AS n FROM c WHERE c.site NOT IN ('lab', 'north')",
    "SELECT COUNT(1) AS n FROM c WHERE 25 < c.count",
    "SELECT COUNT(1) AS n FROM c WHERE c.metricValue >= 60.5 AND c.metricValue < 90",
    "SELECT COUNT(1) AS n, SUM(c.count) AS s FROM c WHERE c.deviceId = 'dev-4'",
    "SELECT COUNT(1) AS n FROM c WHERE c.count = @k",
    "SELECT COUNT(1) AS n FROM c WHERE 1 = 2",
    "SELECT VALUE AVG(c.metricValue) FROM c WHERE c.count > 1000",
    "SELECT AVG(c.metricValue) AS a, SUM(c.count) AS s, COUNT(1) AS n, MIN(c.site) AS m FROM c WHERE c.count > 1000",
    "SELECT c.site, COUNT(1) AS n FROM c GROUP BY c.site",
    "SELECT c.site, COUNT(1) AS n, AVG(c.metricValue) AS avgValue FROM c GROUP BY c.site",
    "SELECT c.deviceId, SUM(c.count) AS s FROM c GROUP BY c.deviceId",
    "SELECT c.site, MIN(c.ts) AS lo, MAX(c.ts) AS hi FROM c GROUP BY c.site",
    "SELECT c.ok, COUNT(1) AS n FROM c GROUP BY c.ok",
    "SELECT c.site, c.ok, COUNT(1) AS n FROM c GROUP BY c.site, c.ok",
    "SELECT c.location.city AS city, COUNT(1) AS n FROM c GROUP BY c.location.city",
    "SELECT c.location.zone AS zone, SUM(c.count) AS s FROM c GROUP BY c.location.zone",
    "SELECT c.count AS k, COUNT(1) AS n FROM c GROUP BY c.count",
    "SELECT c.site, COUNT(1) AS n FROM c WHERE c.metricValue > 60 GROUP BY c.site",
    "SELECT c.deviceId, MAX(c.metricValue) AS m FROM c WHERE c.ok GROUP BY c.deviceId",
    "SELECT VALUE c.site FROM c GROUP BY c.site",
    "SELECT COUNT(1) AS n FROM c GROUP BY c.location.zone",
    "SELECT c.site, COUNT(1) AS n FROM c WHERE c.count > 1000 GROUP BY c.site",
];

/// Queries that stay on the row engine, with (part of) the reason EXPLAIN gives.
const STAYING: &[(&str, &str)] = &[
    ("SELECT COUNT(c.note) AS n FROM c", "c.note is null or missing in"),
    ("SELECT COUNT(1) AS n FROM c WHERE c.note = 'note 1'", "c.note is null or missing in"),
    ("SELECT SUM(c.site) AS s FROM c", "c.site holds string, read here as another type"),
    ("SELECT COUNT(1) AS n FROM c WHERE c.count = 'x'", "c.count holds int64, read here as another type"),
    ("SELECT MIN(c.location) AS m FROM c", "c.location holds object"),
    ("SELECT MAX(c.tags) AS m FROM c", "c.tags holds array"),
    ("SELECT COUNT(1) AS n FROM c WHERE c.nowhere = 1", "c.nowhere is not a column"),
    ("SELECT COUNT(1) AS n FROM c WHERE c.Site = 'lab'", "c.Site is not a column"),
    ("SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags", "it reads more than the container's items"),
    ("SELECT c.site FROM c", "it does not aggregate"),
    ("SELECT TOP 1 c.site, COUNT(1) AS n FROM c GROUP BY c.site", "TOP"),
    ("SELECT COUNTIF(c.ok) AS n FROM c", "COUNTIF"),
    ("SELECT c.metricValue AS v, COUNT(1) AS n FROM c GROUP BY c.metricValue", "c.metricValue holds float64: grouping"),
    ("SELECT COUNT(1) AS n FROM c WHERE ARRAY_CONTAINS(c.tags, 'hot')", "its filter is not only comparisons"),
    ("SELECT COUNT(1) AS n FROM c WHERE c.count = c.ts", "its filter is not only comparisons"),
    ("SELECT COUNT(1) AS n FROM c GROUP BY LOWER(c.site)", "groups by something other than properties"),
];

fn options() -> QueryOptions {
    QueryOptions::default().parameter("k", Value::from(13.0))
}

/// Results comparable across the engines: as JSON, sorted for a query whose order is free.
fn normalized(sql: &str, rows: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = rows.iter().map(|r| cosmoql::value::to_json_string(r).unwrap()).collect();
    if sql.contains("GROUP BY") {
        out.sort();
    }
    out
}

fn check_all(routed: &ContainerClient, plain: &ContainerClient, stage: &str) {
    let mut failures = Vec::new();
    for sql in ROUTED {
        let explained = routed.explain(*sql, options(), false).unwrap().to_string();
        if !explained.contains("engine      analytical store:") {
            failures.push(format!("{stage}: {sql} was not routed:\n{explained}"));
            continue;
        }
        let on_mirror = routed.query_pages::<Value>(*sql, options()).drain().unwrap();
        let on_rows = plain.query_pages::<Value>(*sql, options()).drain().unwrap();
        // Answered by the mirror: the row engine read nothing and charged nothing.
        if on_mirror.metrics.request_charge != 0.0 || on_mirror.metrics.retrieved_document_count != 0 {
            failures.push(format!("{stage}: {sql} ran on the row engine: {:?}", on_mirror.metrics));
        }
        let (m, r) = (normalized(sql, &on_mirror.items), normalized(sql, &on_rows.items));
        if m != r {
            failures.push(format!("{stage}: {sql}\n  mirror:     {m:?}\n  row engine: {r:?}"));
        }
    }
    for (sql, why) in STAYING {
        let explained = routed.explain(*sql, options(), false).unwrap().to_string();
        if !explained.contains("engine      row engine:") || !explained.contains(why) {
            failures.push(format!("{stage}: {sql} should stay on the row engine because {why}:\n{explained}"));
        }
        let stayed = routed.query_pages::<Value>(*sql, options()).drain().unwrap();
        let on_rows = plain.query_pages::<Value>(*sql, options()).drain().unwrap();
        if stayed.items != on_rows.items || stayed.metrics.request_charge == 0.0 {
            failures.push(format!("{stage}: {sql} did not run on the row engine"));
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// A client of `plain`'s container that routes to its analytical store (given one, `-1`).
fn with_analytical_route(plain: &ContainerClient) -> ContainerClient {
    let analytics = Analytics::new(SchemaMode::WellDefined).unwrap().with_container("db", plain).unwrap();
    plain.with_route(Arc::new(AnalyticalRoute::new(Arc::new(analytics))))
}

#[test]
fn routed_aggregates_equal_the_row_engine_at_1_3_and_16_partitions() {
    let plain = filled(1, 1500);
    let routed = with_analytical_route(&plain);
    through_splits_and_writes(&plain, || {}, |stage| check_all(&routed, &plain, stage));
}

#[test]
fn explain_names_the_engine_the_reason_and_the_statement() {
    let plain = filled(4, 200);
    let routed = with_analytical_route(&plain);
    let sql = "SELECT c.site, COUNT(1) AS n, AVG(c.metricValue) AS avgValue FROM c WHERE c.ok GROUP BY c.site";
    let explained = routed.explain(sql, QueryOptions::default(), false).unwrap().to_string();
    assert!(
        explained.ends_with(
            "engine      analytical store: an aggregate over columns of one type, in every item (c.site string, \
             c.metricValue float64, c.ok bool)\n  runs      SELECT \"site\" AS \"o0\", count(*) AS \"o1\", \
             avg(CAST(\"metricValue\" AS DOUBLE)) AS \"o2\" FROM \"db\".\"c\" WHERE \"ok\" GROUP BY \"site\""
        ),
        "{explained}"
    );
    // A client without the route says nothing of engines.
    let plain_explained = plain.explain(sql, QueryOptions::default(), false).unwrap().to_string();
    assert!(!plain_explained.contains("engine"), "{plain_explained}");
    // Paged GROUP BY stays: its groups resume from continuation tokens.
    let paged = QueryOptions { max_item_count: Some(2), ..QueryOptions::default() };
    let explained = routed.explain(sql, paged.clone(), false).unwrap().to_string();
    assert!(explained.contains("engine      row engine: paged (max item count)"), "{explained}");
    let mut pager = routed.query_pages::<Value>(sql, paged);
    let mut pages = 0;
    while let Some(page) = pager.next_page() {
        page.unwrap();
        pages += 1;
    }
    assert_eq!(pages, 3, "five sites in pages of two");
    // EXPLAIN ANALYZE runs it where it is routed.
    let analyzed = routed.explain(sql, QueryOptions::default(), true).unwrap();
    assert_eq!(analyzed.analysis.unwrap().metrics.request_charge, 0.0);
}

#[test]
fn values_the_mirror_does_not_represent_keep_a_query_on_the_row_engine() {
    let plain = container(2);
    for text in [
        r#"{"id":"1","deviceId":"a","code":123,"name":"ann","n":1,"maybe":1}"#,
        r#"{"id":"2","deviceId":"a","code":"123","Name":"bob","n":2,"maybe":null}"#,
        r#"{"id":"3","deviceId":"b","code":7.5,"name":"cy","n":3,"maybe":3}"#,
    ] {
        plain.create_item(&cosmoql::value::parse_json(text).unwrap()).unwrap();
    }
    let routed = with_analytical_route(&plain);
    let why = |sql: &str| routed.explain(sql, QueryOptions::default(), false).unwrap().to_string();
    assert!(why("SELECT SUM(c.code) AS s FROM c").contains("c.code has had values the analytical store does not"));
    assert!(why("SELECT MIN(c.name) AS s FROM c").contains("c.name has had values the analytical store does not"));
    assert!(why("SELECT SUM(c.maybe) AS s FROM c").contains("c.maybe is null or missing in 1 item(s)"));
    assert!(why("SELECT SUM(c.n) AS s FROM c").contains("engine      analytical store:"));

    // An item with a mixed-type array is left out of the mirror: nothing is routed.
    let item = cosmoql::value::parse_json(r#"{"id":"4","deviceId":"b","n":4,"tags":["x",1]}"#).unwrap();
    plain.create_item(&item).unwrap();
    assert!(why("SELECT SUM(c.n) AS s FROM c").contains("the analytical store has left items out (1 so far"));
    let sums: Vec<Value> =
        routed.query_items_blocking("SELECT VALUE SUM(c.n) FROM c", QueryOptions::default()).unwrap();
    assert_eq!(sums, vec![Value::from(10.0)]);
}

#[test]
fn two_times_to_live_that_both_let_items_go_keep_queries_on_the_row_engine() {
    let properties = ContainerProperties::new("c", "/deviceId").unwrap().default_ttl(Some(3600));
    let plain = ContainerClient::standalone(properties.analytical_storage_ttl(Some(60))).unwrap();
    plain.create_item(&item(1, 0)).unwrap();
    let routed = with_analytical_route(&plain);
    let explained = routed.explain("SELECT COUNT(1) AS n FROM c", QueryOptions::default(), false).unwrap();
    assert!(explained.to_string().contains("both let items go"), "{explained}");
    // With an analytical store that keeps everything, the mirror holds at least the container's
    // items: equal counts mean the same items.
    plain.replace_analytical_storage_ttl(Some(-1)).unwrap();
    let explained = routed.explain("SELECT COUNT(1) AS n FROM c", QueryOptions::default(), false).unwrap();
    assert!(explained.to_string().contains("engine      analytical store:"), "{explained}");
}

#[test]
fn a_routed_query_keeps_the_memory_budget_and_the_cancel_flag_of_the_row_engine() {
    let plain = filled(2, 3000);
    let routed = with_analytical_route(&plain);
    let sql = "SELECT c.deviceId, c.site, c.count, COUNT(1) AS n FROM c GROUP BY c.deviceId, c.site, c.count";
    let run = |client: &ContainerClient, options: QueryOptions| {
        client.query_items_blocking::<Value>(sql, options).map(|rows| normalized(sql, &rows)).map_err(|e| e.to_string())
    };
    // Past a small budget DataFusion gives up; the row engine then answers as it would alone.
    let small = || QueryOptions { memory_budget: Some(4096), ..QueryOptions::default() };
    let (on_route, alone) = (run(&routed, small()), run(&plain, small()));
    assert_eq!(on_route, alone);
    assert!(alone.is_err(), "the budget is small enough to stop the row engine too");
    // Within the default budget it is answered on the mirror, charging nothing.
    let fine = routed.query_pages::<Value>(sql, QueryOptions::default()).drain().unwrap();
    assert_eq!(fine.metrics.request_charge, 0.0);
    // A query cancelled before it runs ends as the row engine's would.
    let cancelled =
        || QueryOptions { cancel: Some(Arc::new(std::sync::atomic::AtomicBool::new(true))), ..QueryOptions::default() };
    let (on_route, alone) = (run(&routed, cancelled()), run(&plain, cancelled()));
    assert!(on_route.is_err() && alone.is_err(), "{on_route:?} {alone:?}");
}
