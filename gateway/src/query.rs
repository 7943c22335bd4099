//! Queries and read feeds. By default the gateway runs the whole query in cosmoql's own
//! cross-partition engine and returns exact pages with the engine's continuation token (mode A of
//! `../shared/research/gateway-python.md` §0): every shape, GROUP BY and non-VALUE aggregates
//! included, works from every SDK, and the token survives splits.
//!
//! Request (§3.3): `{"query": text, "parameters": [{"name": "@p", "value": v}]}`, the page size in
//! `x-ms-max-item-count` (absent: 100, the service's default; -1: as many as fit), the token in
//! `x-ms-continuation`, the key in `x-ms-documentdb-partitionkey`. Reply: `{"_rid",
//! "Documents": [...], "_count"}` with `x-ms-continuation` (absent on the last page),
//! `x-ms-item-count`, the charge, and the query and index metrics when asked for.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use cosmoql::{ContainerClient, Epk, FeedPage, JsonText, QueryOptions, Value};

use crate::errors::{self, WireError};
use crate::items::{check_session, header_key, session_headers};
use crate::pkranges::RangeHistory;
use crate::resources::{Container, RetiredRanges};
use crate::wire::{charge_text, Reply, Request};

/// Results a page holds when the client sets no size (the service's default).
pub const DEFAULT_PAGE: usize = 100;

/// Results a page holds when the client asks for as many as fit (`-1`).
pub const DYNAMIC_PAGE: usize = 1000;

/// A query request's text and parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct QuerySpec {
    /// The query text.
    pub text: String,
    /// The parameters, by name without the `@`.
    pub parameters: Vec<(String, Value)>,
}

/// Reads the body of a query request.
pub fn query_spec(request: &Request) -> Result<QuerySpec, WireError> {
    let body = request.json_body()?;
    let Some(text) = body.get("query").as_str() else {
        return Err(request.bad_request("The query body must be an object with a `query` string."));
    };
    let mut parameters = Vec::new();
    match body.get("parameters") {
        Value::Undefined | Value::Null => {}
        Value::Array(list) => {
            for p in list.iter() {
                let Some(name) = p.get("name").as_str() else {
                    return Err(request.bad_request("Each query parameter needs a `name`."));
                };
                parameters.push((name.trim_start_matches('@').to_string(), p.get("value").clone()));
            }
        }
        _ => return Err(request.bad_request("The query `parameters` must be an array.")),
    }
    Ok(QuerySpec { text: text.to_string(), parameters })
}

/// The page size a feed request asks for (`x-ms-max-item-count`).
pub fn page_size(request: &Request) -> Result<usize, WireError> {
    Ok(match request.max_item_count()? {
        None => DEFAULT_PAGE,
        Some(-1) => DYNAMIC_PAGE,
        Some(n) => usize::try_from(n).unwrap_or(DYNAMIC_PAGE).min(DYNAMIC_PAGE),
    })
}

/// What every request about a query says of it: the key it is scoped to and its parameters
/// (the query-plan request says no more).
pub fn query_options(container: &Container, request: &Request, spec: &QuerySpec) -> Result<QueryOptions, WireError> {
    let mut options = QueryOptions { partition_key: header_key(container, request)?, ..QueryOptions::default() };
    for (name, value) in &spec.parameters {
        options.parameters.insert(name.clone(), value.clone());
    }
    Ok(options)
}

/// The options of a query or read-feed request: the query's, and page size, continuation,
/// metrics.
fn options_of(container: &Container, request: &Request, spec: &QuerySpec) -> Result<QueryOptions, WireError> {
    Ok(QueryOptions {
        max_item_count: Some(page_size(request)?),
        continuation: request.header("x-ms-continuation").filter(|c| !c.is_empty()).map(str::to_string),
        populate_index_metrics: request.flag("x-ms-cosmos-populateindexmetrics"),
        ..query_options(container, request, spec)?
    })
}

/// A request's feed range: the serving range's id and the EPK span read.
pub type Scope = (u32, (Epk, Epk));

/// The feed range a request is scoped to: the range of `x-ms-documentdb-partitionkeyrangeid`
/// (a retired range: the span it had, now its children's), cut to `x-ms-start-epk` /
/// `x-ms-end-epk` when they are given; with the serving range's id. A range never listed is
/// 410/1002, as the service answers for a range it no longer has (the SDKs reload the ranges),
/// and so is a retired one under [`RetiredRanges::Gone`].
pub fn scope(container: &Container, ranges: &RangeHistory, request: &Request) -> Result<Option<Scope>, WireError> {
    let Some(text) = request.header("x-ms-documentdb-partitionkeyrangeid") else { return Ok(None) };
    let gone = || {
        errors::refusal(
            410,
            1002,
            &format!("The partition key range {text} is not known: read the partition key ranges again."),
            &request.activity_id,
        )
    };
    // The SDKs send `id` or `collectionRid,id`.
    let id = text.rsplit(',').next().unwrap_or_default().trim().parse::<u32>().map_err(|_| gone())?;
    let listed = container.listed_partitions();
    if container.retired == RetiredRanges::Gone && !listed.iter().any(|p| p.id == id) {
        return Err(gone());
    }
    let (min, max) = ranges.span(&container.rid, id, &listed).ok_or_else(gone)?;
    let epk = |hex: &str| {
        Epk::from_hex(hex).map_err(|_| request.bad_request(&format!("Invalid effective partition key '{hex}'.")))
    };
    let (mut lo, mut hi) = (epk(&min)?, epk(&max)?);
    if let Some(start) = request.header("x-ms-start-epk") {
        lo = lo.max(epk(start)?);
    }
    if let Some(end) = request.header("x-ms-end-epk") {
        hi = hi.min(epk(end)?);
    }
    Ok(Some((id, (lo, hi))))
}

/// Runs one page of `spec` on `client`.
fn page(
    client: &ContainerClient,
    spec: &QuerySpec,
    options: QueryOptions,
    request: &Request,
) -> Result<FeedPage<JsonText>, WireError> {
    let mut pager = client.query_pages::<JsonText>(spec.text.as_str(), options);
    match pager.next_page() {
        Some(Ok(page)) => Ok(page),
        Some(Err(e)) => Err(errors::from_error(&e, &request.activity_id)),
        None => Ok(FeedPage {
            items: Vec::new(),
            continuation: None,
            request_charge: 0.0,
            metrics: Default::default(),
            partitions: Vec::new(),
            index_metrics: None,
            retries: 0,
        }),
    }
}

/// The reply for a page: `{"_rid", <feed>: [...], "_count"}` and the feed headers. The results
/// are the engine's JSON text (whole items written from their stored bytes).
fn page_reply(rid: &str, feed: &str, page: &FeedPage<JsonText>, request: &Request) -> Reply {
    let mut reply = Reply::feed(rid, feed, &page.items).with("x-ms-request-charge", charge_text(page.request_charge));
    if let Some(token) = &page.continuation {
        reply = reply.with("x-ms-continuation", token.clone());
    }
    if request.flag("x-ms-documentdb-populatequerymetrics") {
        reply = reply.with("x-ms-documentdb-query-metrics", page.metrics.to_header_string());
    }
    if let Some(metrics) = &page.index_metrics {
        let text = cosmoql::value::to_json_string(metrics).unwrap_or_default();
        reply = reply.with("x-ms-cosmos-index-utilization", STANDARD.encode(text));
    }
    reply
}

/// `POST .../docs` with `x-ms-documentdb-isquery` (or `application/query+json`): one page of a
/// query, run whole by the engine.
pub fn query_documents(container: &Container, ranges: &RangeHistory, request: &Request) -> Result<Reply, WireError> {
    let spec = query_spec(request)?;
    run_documents(container, ranges, &spec, request)
}

/// `GET .../docs`: the read feed, every item page by page (in the engine's order).
pub fn read_feed(container: &Container, ranges: &RangeHistory, request: &Request) -> Result<Reply, WireError> {
    let spec = QuerySpec { text: "SELECT * FROM c".into(), parameters: Vec::new() };
    run_documents(container, ranges, &spec, request)
}

fn run_documents(
    container: &Container,
    ranges: &RangeHistory,
    spec: &QuerySpec,
    request: &Request,
) -> Result<Reply, WireError> {
    check_session(container, request)?;
    let mut options = options_of(container, request, spec)?;
    let scope = scope(container, ranges, request)?;
    options.epk_range = scope.as_ref().map(|(_, span)| span.clone());
    // A page of one range carries that range's session token; a page of several ranges none
    // (the token of one range would be wrong for the others).
    let serving = match (&scope, &options.partition_key) {
        (Some((id, _)), _) => Some(*id),
        (None, Some(key)) => container.range_of(key),
        (None, None) => None,
    };
    let page = page(&container.client, spec, options, request)?;
    let reply = page_reply(&container.rid, "Documents", &page, request);
    Ok(match serving {
        Some(range) => session_headers(container, range, reply),
        None => reply,
    })
}
