//! The query-plan request (`POST .../docs` with `x-ms-cosmos-is-query-plan-request`): what SDKs
//! that plan on the client and fan out per range ask first (the JavaScript SDK always, the Rust
//! SDK for what it cannot plan itself), answered in the service's `PartitionedQueryExecutionInfo`
//! version 2 (`../shared/research/gateway-python.md` §6.1): `queryInfo` says what the client must
//! merge, `queryRanges` (upper-case hex EPKs) which ranges hold the query's items.
//!
//! Served now: the plan of a query whose per-range results concatenated are its results (no
//! ORDER BY, aggregate, GROUP BY, DISTINCT, TOP or OFFSET/LIMIT across ranges), with every
//! merge feature empty and `rewrittenQuery` empty (each range runs the query as written); and,
//! under `--ranges single`, that same plan for every query, since one range holds everything and
//! the engine answers the whole query there. The plans with merge stages for several ranges
//! (the service's rewritten ORDER BY and aggregate queries) are not served yet: such a request is
//! refused with a 400 that says so.

use cosmoql::{Epk, QueryOptions};
use serde_json::json;

use crate::errors::{self, WireError};
use crate::items::header_key;
use crate::query::query_spec;
use crate::resources::{Container, RangeMode};
use crate::wire::{Reply, Request};

/// A range of the plan, as the service writes it.
fn query_range((min, max): &(Epk, Epk)) -> serde_json::Value {
    json!({
        "min": min.to_hex().to_uppercase(),
        "max": max.to_hex().to_uppercase(),
        "isMinInclusive": true,
        "isMaxInclusive": false,
    })
}

/// Answers a query-plan request.
pub fn query_plan(container: &Container, request: &Request) -> Result<Reply, WireError> {
    let spec = query_spec(request)?;
    let mut options = QueryOptions { partition_key: header_key(container, request)?, ..QueryOptions::default() };
    for (name, value) in spec.parameters {
        options.parameters.insert(name, value);
    }
    let explain = container
        .client
        .explain(spec.text.as_str(), options, false)
        .map_err(|e| errors::from_error(&e, &request.activity_id))?;
    let plan = &explain.plan;
    if container.ranges == RangeMode::Physical && !plan.concatenates() {
        return Err(request.bad_request(
            "This query merges results across partition key ranges, and cosmoql serve does not serve such query \
             plans yet: send the query itself (the Python SDK does), or start the server with --ranges single.",
        ));
    }
    let ranges: Vec<serde_json::Value> = if plan.reads_items() {
        plan.targets.ranges.iter().map(query_range).collect()
    } else {
        vec![query_range(&(Epk::min(), Epk::max()))]
    };
    Ok(Reply::json(
        200,
        &json!({
            "partitionedQueryExecutionInfoVersion": 2,
            "queryInfo": {
                "distinctType": "None",
                "top": null,
                "offset": null,
                "limit": null,
                "orderBy": [],
                "orderByExpressions": [],
                "groupByExpressions": [],
                "groupByAliases": [],
                "aggregates": [],
                "groupByAliasToAggregateType": {},
                "rewrittenQuery": "",
                "hasSelectValue": false,
                "dCountInfo": null,
                "hasNonStreamingOrderBy": false,
            },
            "queryRanges": ranges,
        }),
    ))
}
