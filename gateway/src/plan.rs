//! The query-plan request (`POST .../docs` with `x-ms-cosmos-is-query-plan-request`): what SDKs
//! that plan on the client and fan out per range ask first (the JavaScript SDK always, the Rust
//! SDK for what it cannot plan itself), answered in the service's `PartitionedQueryExecutionInfo`
//! version 2 (`../shared/research/gateway-python.md` §6.1): `queryInfo` says what the client must
//! merge, `queryRanges` (upper-case hex EPKs) which ranges hold the query's items.
//!
//! In physical mode (a range per physical partition) the plan says what the client merges and
//! each range's query, as the service writes them (`crate::rewrite`): every merge the SDKs run
//! (ORDER BY, TOP, OFFSET/LIMIT, DISTINCT, VALUE aggregates, GROUP BY) is exercised against
//! cosmoql. A query whose per-range results concatenated are its results gets the pass-through
//! plan (every merge feature empty, `rewrittenQuery` empty: each range runs the query as written),
//! and so does every query under `--ranges single`, since one range holds everything and the
//! engine answers the whole query there. The few shapes without a per-range form here (see
//! [`crate::rewrite::Unsupported`]) are refused with a 400 that names the shape.

use cosmoql::Epk;
use serde_json::json;

use crate::errors::{self, WireError};
use crate::hybrid;
use crate::query::{query_options, query_spec};
use crate::resources::{Container, RangeMode};
use crate::rewrite::{self, Unsupported};
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
    let options = query_options(container, request, &spec)?;
    let explain = container
        .client
        .explain(spec.text.as_str(), options.clone(), false)
        .map_err(|e| errors::from_error(&e, &request.activity_id))?;
    let plan = &explain.plan;
    let ranges: Vec<serde_json::Value> = if plan.reads_items() {
        plan.targets.ranges.iter().map(query_range).collect()
    } else {
        vec![query_range(&(Epk::min(), Epk::max()))]
    };
    if let (RangeMode::Physical, Some(rank)) = (container.ranges, &plan.query.rank) {
        let components = rank.components();
        let skip_rewrite = request
            .header("x-ms-cosmos-supported-query-features")
            .is_some_and(|f| f.split(',').any(|f| f.trim() == hybrid::SKIP_ORDER_BY_REWRITE));
        let info = hybrid::hybrid_search_info(&plan.syntax, &options.parameters, &components, skip_rewrite)
            .map_err(|u| unsupported(request, u))?;
        return Ok(Reply::json(
            200,
            &json!({
                "partitionedQueryExecutionInfoVersion": 2,
                "queryRanges": ranges,
                "hybridSearchQueryInfo": info,
            }),
        ));
    }
    let query_info = if container.ranges == RangeMode::Physical && !plan.concatenates() {
        let descending: Vec<bool> = plan.query.order_by.iter().map(|k| k.descending).collect();
        rewrite::query_info(&plan.syntax, &options.parameters, &descending).map_err(|u| unsupported(request, u))?
    } else {
        pass_through()
    };
    Ok(Reply::json(
        200,
        &json!({
            "partitionedQueryExecutionInfoVersion": 2,
            "queryInfo": query_info,
            "queryRanges": ranges,
        }),
    ))
}

/// The 400 for a shape without a per-range form.
fn unsupported(request: &Request, Unsupported(shape): Unsupported) -> WireError {
    request.bad_request(&format!(
        "cosmoql serve has no per-range form for {shape} across partition key ranges: send the query itself \
         (the Python SDK does, and the JavaScript SDK without forceQueryPlan), or start the server with \
         --ranges single."
    ))
}

/// The plan of a query each range runs as written, its results concatenated.
fn pass_through() -> serde_json::Value {
    json!({
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
    })
}
