//! The differential suite's pairs (issue 25): each standard-SQL statement for the analytical
//! store beside its Cosmos SQL twin for the row engine, over the uniform fixture (`fixture`).
//! `differential.rs` runs them on the live mirror; `ballista/tests/loopback.rs` runs them on the
//! Parquet layout through a Ballista scheduler and executors.

use cosmoql::value::Value;
use cosmoql::{ContainerClient, QueryOptions};

/// The pairs: (standard SQL on the mirror, Cosmos SQL on the row engine, whether order counts).
/// Each pair returns rows of the same shape: objects with the same property names.
pub const PAIRS: &[(&str, &str, bool)] = &[
    // Aggregates without GROUP BY.
    ("SELECT COUNT(*) AS n FROM c", "SELECT COUNT(1) AS n FROM c", true),
    ("SELECT SUM(count) AS s FROM c", "SELECT SUM(c.count) AS s FROM c", true),
    (
        "SELECT MIN(metricValue) AS lo, MAX(metricValue) AS hi FROM c",
        "SELECT MIN(c.metricValue) AS lo, MAX(c.metricValue) AS hi FROM c",
        true,
    ),
    ("SELECT AVG(count) AS a FROM c", "SELECT AVG(c.count) AS a FROM c", true),
    ("SELECT MIN(site) AS lo, MAX(site) AS hi FROM c", "SELECT MIN(c.site) AS lo, MAX(c.site) AS hi FROM c", true),
    ("SELECT COUNT(note) AS n FROM c", "SELECT COUNT(c.note) AS n FROM c", true),
    ("SELECT COUNT(*) AS n FROM c WHERE ok", "SELECT COUNT(1) AS n FROM c WHERE c.ok", true),
    ("SELECT COUNT(*) AS n FROM c WHERE NOT ok", "SELECT COUNT(1) AS n FROM c WHERE NOT c.ok", true),
    (
        "SELECT SUM(metricValue) AS s FROM c WHERE count > 25",
        "SELECT SUM(c.metricValue) AS s FROM c WHERE c.count > 25",
        true,
    ),
    ("SELECT MAX(ts) AS t FROM c WHERE site = 'lab'", "SELECT MAX(c.ts) AS t FROM c WHERE c.site = 'lab'", true),
    ("SELECT MIN(location.zone) AS z FROM c", "SELECT MIN(c.location.zone) AS z FROM c", true),
    (
        "SELECT COUNT(*) AS n FROM c WHERE location.city = 'Oslo'",
        "SELECT COUNT(1) AS n FROM c WHERE c.location.city = 'Oslo'",
        true,
    ),
    // GROUP BY.
    ("SELECT site, COUNT(*) AS n FROM c GROUP BY site", "SELECT c.site, COUNT(1) AS n FROM c GROUP BY c.site", false),
    (
        "SELECT deviceId, SUM(count) AS s FROM c GROUP BY deviceId",
        "SELECT c.deviceId, SUM(c.count) AS s FROM c GROUP BY c.deviceId",
        false,
    ),
    (
        "SELECT site, AVG(metricValue) AS a FROM c GROUP BY site",
        "SELECT c.site, AVG(c.metricValue) AS a FROM c GROUP BY c.site",
        false,
    ),
    (
        "SELECT site, MIN(ts) AS lo, MAX(ts) AS hi FROM c GROUP BY site",
        "SELECT c.site, MIN(c.ts) AS lo, MAX(c.ts) AS hi FROM c GROUP BY c.site",
        false,
    ),
    ("SELECT ok, COUNT(*) AS n FROM c GROUP BY ok", "SELECT c.ok, COUNT(1) AS n FROM c GROUP BY c.ok", false),
    (
        "SELECT site, ok, COUNT(*) AS n FROM c GROUP BY site, ok",
        "SELECT c.site, c.ok, COUNT(1) AS n FROM c GROUP BY c.site, c.ok",
        false,
    ),
    (
        "SELECT location.city AS city, COUNT(*) AS n FROM c GROUP BY location.city",
        "SELECT c.location.city AS city, COUNT(1) AS n FROM c GROUP BY c.location.city",
        false,
    ),
    (
        "SELECT location.zone AS zone, SUM(count) AS s FROM c GROUP BY location.zone",
        "SELECT c.location.zone AS zone, SUM(c.count) AS s FROM c GROUP BY c.location.zone",
        false,
    ),
    (
        "SELECT count AS k, COUNT(*) AS n FROM c GROUP BY count",
        "SELECT c.count AS k, COUNT(1) AS n FROM c GROUP BY c.count",
        false,
    ),
    (
        "SELECT site, COUNT(*) AS n FROM c WHERE metricValue > 60 GROUP BY site",
        "SELECT c.site, COUNT(1) AS n FROM c WHERE c.metricValue > 60 GROUP BY c.site",
        false,
    ),
    (
        "SELECT deviceId, MAX(metricValue) AS m FROM c WHERE ok GROUP BY deviceId",
        "SELECT c.deviceId, MAX(c.metricValue) AS m FROM c WHERE c.ok GROUP BY c.deviceId",
        false,
    ),
    (
        "SELECT site, COUNT(note) AS n FROM c GROUP BY site",
        "SELECT c.site, COUNT(c.note) AS n FROM c GROUP BY c.site",
        false,
    ),
    (
        "SELECT deviceId, COUNT(*) AS n FROM c WHERE deviceId = 'dev-3' GROUP BY deviceId",
        "SELECT c.deviceId, COUNT(1) AS n FROM c WHERE c.deviceId = 'dev-3' GROUP BY c.deviceId",
        false,
    ),
    // DISTINCT, scalar and nested.
    ("SELECT DISTINCT site FROM c", "SELECT DISTINCT c.site FROM c", false),
    ("SELECT DISTINCT deviceId FROM c", "SELECT DISTINCT c.deviceId FROM c", false),
    ("SELECT DISTINCT ok FROM c", "SELECT DISTINCT c.ok FROM c", false),
    ("SELECT DISTINCT location.city AS city FROM c", "SELECT DISTINCT c.location.city AS city FROM c", false),
    ("SELECT DISTINCT location.zone AS zone FROM c", "SELECT DISTINCT c.location.zone AS zone FROM c", false),
    ("SELECT DISTINCT site, ok FROM c", "SELECT DISTINCT c.site, c.ok FROM c", false),
    (
        "SELECT DISTINCT note FROM c WHERE note IS NOT NULL",
        "SELECT DISTINCT c.note FROM c WHERE IS_DEFINED(c.note)",
        false,
    ),
    (
        "SELECT COUNT(DISTINCT deviceId) AS n FROM c",
        "SELECT COUNT(1) AS n FROM (SELECT DISTINCT VALUE c.deviceId FROM c) d",
        true,
    ),
    ("SELECT DISTINCT count FROM c WHERE count < 10", "SELECT DISTINCT c.count FROM c WHERE c.count < 10", false),
    // Filters on every type.
    (
        "SELECT id FROM c WHERE metricValue BETWEEN 10 AND 12",
        "SELECT c.id FROM c WHERE c.metricValue BETWEEN 10 AND 12",
        false,
    ),
    ("SELECT id FROM c WHERE count = 7", "SELECT c.id FROM c WHERE c.count = 7", false),
    ("SELECT id FROM c WHERE count >= 48 AND ok", "SELECT c.id FROM c WHERE c.count >= 48 AND c.ok", false),
    (
        "SELECT id FROM c WHERE site = 'east' AND count < 3",
        "SELECT c.id FROM c WHERE c.site = 'east' AND c.count < 3",
        false,
    ),
    (
        "SELECT id FROM c WHERE site <> 'east' AND count = 0",
        "SELECT c.id FROM c WHERE c.site != 'east' AND c.count = 0",
        false,
    ),
    (
        "SELECT id FROM c WHERE site IN ('lab', 'west') AND count = 1",
        "SELECT c.id FROM c WHERE c.site IN ('lab', 'west') AND c.count = 1",
        false,
    ),
    (
        "SELECT id FROM c WHERE ts > 1700100000 AND ts < 1700101000",
        "SELECT c.id FROM c WHERE c.ts > 1700100000 AND c.ts < 1700101000",
        false,
    ),
    (
        "SELECT id FROM c WHERE starts_with(id, 'item-19')",
        "SELECT c.id FROM c WHERE STARTSWITH(c.id, 'item-19')",
        false,
    ),
    ("SELECT id FROM c WHERE note = 'note 3'", "SELECT c.id FROM c WHERE c.note = 'note 3'", false),
    (
        "SELECT id FROM c WHERE note IS NULL AND count = 5",
        "SELECT c.id FROM c WHERE NOT IS_DEFINED(c.note) AND c.count = 5",
        false,
    ),
    (
        "SELECT id FROM c WHERE location.zone = 2 AND location.city = 'Pune'",
        "SELECT c.id FROM c WHERE c.location.zone = 2 AND c.location.city = 'Pune'",
        false,
    ),
    (
        "SELECT id FROM c WHERE ok = false AND count > 45",
        "SELECT c.id FROM c WHERE c.ok = false AND c.count > 45",
        false,
    ),
    ("SELECT id FROM c WHERE id = 'item-42'", "SELECT c.id FROM c WHERE c.id = 'item-42'", false),
    (
        "SELECT id FROM c WHERE lower(site) = 'lab' AND count = 2",
        "SELECT c.id FROM c WHERE LOWER(c.site) = 'lab' AND c.count = 2",
        false,
    ),
    // Array membership.
    (
        "SELECT COUNT(*) AS n FROM c WHERE array_has(tags, 'wet')",
        "SELECT COUNT(1) AS n FROM c WHERE ARRAY_CONTAINS(c.tags, 'wet')",
        true,
    ),
    (
        "SELECT id FROM c WHERE array_has(tags, 'windy') AND count < 5",
        "SELECT c.id FROM c WHERE ARRAY_CONTAINS(c.tags, 'windy') AND c.count < 5",
        false,
    ),
    (
        "SELECT COUNT(*) AS n FROM c WHERE array_length(tags) = 3",
        "SELECT COUNT(1) AS n FROM c WHERE ARRAY_LENGTH(c.tags) = 3",
        true,
    ),
    (
        "SELECT site, COUNT(*) AS n FROM c WHERE array_has(tags, 'hot') GROUP BY site",
        "SELECT c.site, COUNT(1) AS n FROM c WHERE ARRAY_CONTAINS(c.tags, 'hot') GROUP BY c.site",
        false,
    ),
    (
        "SELECT COUNT(*) AS n FROM c WHERE cardinality(tags) = 0",
        "SELECT COUNT(1) AS n FROM c WHERE ARRAY_LENGTH(c.tags) = 0",
        true,
    ),
    // Key filters (one mirror partition).
    (
        "SELECT COUNT(*) AS n FROM c WHERE deviceId = 'dev-5'",
        "SELECT COUNT(1) AS n FROM c WHERE c.deviceId = 'dev-5'",
        true,
    ),
    (
        "SELECT id FROM c WHERE deviceId = 'dev-7' AND count > 40",
        "SELECT c.id FROM c WHERE c.deviceId = 'dev-7' AND c.count > 40",
        false,
    ),
    (
        "SELECT SUM(count) AS s FROM c WHERE deviceId IN ('dev-1', 'dev-2')",
        "SELECT SUM(c.count) AS s FROM c WHERE c.deviceId IN ('dev-1', 'dev-2')",
        true,
    ),
    (
        "SELECT site, COUNT(*) AS n FROM c WHERE deviceId = 'dev-11' GROUP BY site",
        "SELECT c.site, COUNT(1) AS n FROM c WHERE c.deviceId = 'dev-11' GROUP BY c.site",
        false,
    ),
    (
        "SELECT MAX(metricValue) AS m FROM c WHERE deviceId = 'dev-0'",
        "SELECT MAX(c.metricValue) AS m FROM c WHERE c.deviceId = 'dev-0'",
        true,
    ),
    (
        "SELECT COUNT(*) AS n FROM c WHERE deviceId = 'nobody'",
        "SELECT COUNT(1) AS n FROM c WHERE c.deviceId = 'nobody'",
        true,
    ),
    // Ordering and paging.
    (
        "SELECT id, metricValue FROM c ORDER BY ts DESC LIMIT 5",
        "SELECT TOP 5 c.id, c.metricValue FROM c ORDER BY c.ts DESC",
        true,
    ),
    ("SELECT id FROM c ORDER BY ts LIMIT 3 OFFSET 10", "SELECT c.id FROM c ORDER BY c.ts OFFSET 10 LIMIT 3", true),
    (
        "SELECT id, count FROM c WHERE site = 'north' ORDER BY ts LIMIT 4",
        "SELECT TOP 4 c.id, c.count FROM c WHERE c.site = 'north' ORDER BY c.ts",
        true,
    ),
    // Projections of nested values.
    ("SELECT id, location FROM c WHERE id = 'item-8'", "SELECT c.id, c.location FROM c WHERE c.id = 'item-8'", true),
    ("SELECT id, tags FROM c WHERE id = 'item-7'", "SELECT c.id, c.tags FROM c WHERE c.id = 'item-7'", true),
];

/// Rows comparable across the engines: a null top-level property is left out (the row engine
/// leaves an undefined one out; the mirror holds a missing property as null).
pub fn normalized(rows: Vec<Value>, ordered: bool) -> Vec<String> {
    let mut out: Vec<String> = rows
        .into_iter()
        .map(|row| {
            let row = match row {
                Value::Object(map) => {
                    let mut map = (*map).clone();
                    map.retain(|_, v| !v.is_null());
                    Value::from(map)
                }
                other => other,
            };
            cosmoql::value::to_json_string(&row).unwrap()
        })
        .collect();
    if !ordered {
        out.sort();
    }
    out
}

/// Checks each pair's standard-SQL result on `engine` (`results[i]` is `PAIRS[i]`'s) against its
/// Cosmos SQL twin on the row engine of `client`; panics with every difference, at `stage`.
pub fn assert_agree(engine: &str, stage: &str, client: &ContainerClient, results: Vec<Result<Vec<Value>, String>>) {
    assert_eq!(results.len(), PAIRS.len());
    let mut failures = Vec::new();
    for ((sql, cosmos_sql, ordered), result) in PAIRS.iter().zip(results) {
        let ours = match result {
            Ok(rows) => normalized(rows, *ordered),
            Err(e) => {
                failures.push(format!("{stage}: {sql}: {e}"));
                continue;
            }
        };
        let rows: Vec<Value> = client.query_items_blocking(*cosmos_sql, QueryOptions::default()).unwrap();
        let cosmos = normalized(rows, *ordered);
        if ours != cosmos {
            failures.push(format!("{stage}: {sql}\n  {engine}: {ours:?}\n  cosmos: {cosmos:?}"));
        }
    }
    assert!(failures.is_empty(), "{} of {} pairs differ:\n{}", failures.len(), PAIRS.len(), failures.join("\n"));
}
