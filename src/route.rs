//! Another engine for some queries: [`QueryRoute`], which a client consults before the row engine
//! runs a query (the analytical store implements it, in `cosmoql-analytics`; this crate cannot
//! know it, being beneath it).

use std::fmt;
use std::sync::Arc;

use cosmoql_executor::{QueryError, QueryOptions};
use cosmoql_planner::Plan;
use cosmoql_storage::Container;
use cosmoql_value::Value;

/// Where a query runs, and why.
#[derive(Debug, Clone, PartialEq)]
pub enum Routing {
    /// On the row engine (the container's own items).
    RowEngine {
        /// Why not elsewhere.
        why: String,
    },
    /// On another engine.
    Elsewhere {
        /// Its name.
        engine: String,
        /// Why it answers exactly.
        why: String,
        /// What it runs there (its own query text).
        runs: String,
    },
}

impl Routing {
    /// Whether the query leaves the row engine.
    pub fn is_elsewhere(&self) -> bool {
        matches!(self, Routing::Elsewhere { .. })
    }
}

impl fmt::Display for Routing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Routing::RowEngine { why } => write!(f, "engine      row engine: {why}"),
            Routing::Elsewhere { engine, why, runs } => write!(f, "engine      {engine}: {why}\n  runs      {runs}"),
        }
    }
}

/// An engine that may answer some queries of a container instead of the row engine, with
/// exactly the results the row engine would give (in an order the query leaves free).
///
/// A routed query is charged no request units (as the service's analytical store costs the
/// container none) and is answered in one page.
pub trait QueryRoute: Send + Sync + fmt::Debug {
    /// Where `plan` (planned on `container` under `options`) would run now, and why (EXPLAIN).
    fn route(&self, container: &Arc<Container>, plan: &Plan, options: &QueryOptions) -> Routing;

    /// Every result of `plan`, when this engine answers it now (decided as [`Self::route`]
    /// decides, on the very data it then reads); `None` leaves it to the row engine. An error is
    /// a bug of the engine, said as one.
    fn answer(
        &self,
        container: &Arc<Container>,
        plan: &Plan,
        options: &QueryOptions,
    ) -> Option<Result<Vec<Value>, QueryError>>;
}

/// Where `route` would run `plan` under `options` (EXPLAIN): the request's rules first, then the
/// engine's.
pub(crate) fn consult(
    route: &dyn QueryRoute,
    container: &Arc<Container>,
    plan: &Plan,
    options: &QueryOptions,
) -> Routing {
    match request_allows_routing(plan, options) {
        Ok(()) => route.route(container, plan, options),
        Err(why) => Routing::RowEngine { why },
    }
}

/// Whether a query may leave the row engine at all under `options`, whatever the engine: only
/// whole answers (no continuation token to resume or hand out, no request-scoped partition or
/// feed range). The client asks it before it asks a route.
pub(crate) fn request_allows_routing(plan: &Plan, options: &QueryOptions) -> Result<(), String> {
    if options.continuation.is_some() {
        return Err("resumed from a continuation token".into());
    }
    if options.partition_key.is_some() || options.epk_range.is_some() {
        return Err("scoped to a partition key or feed range by the request".into());
    }
    if options.max_item_count.is_some() && plan.query.group_by.is_some() {
        return Err("paged (max item count): groups are resumed by continuation tokens".into());
    }
    Ok(())
}
