//! What the service rejects, in its words: every query compilation error whose wording, status or
//! code comes from Azure Cosmos DB is built here, so the texts live in one place. The binder
//! calls these where it finds the problem; [`check_limits`] checks the query engine limits the
//! service advertises before binding.
//!
//! Sources for each message are in `docs/ARCHITECTURE.md` ("Errors the service makes").

use cosmoql_parser::{Expr, ExprKind, FromSource, Query, Span};

use cosmoql_catalog::{IndexStep, IndexingPolicy};

use crate::bound::SortKey;
use crate::error::PlanError;
use crate::functions::Signature;

/// The functions ORDER BY may sort by although they are not document paths, when they are the
/// only ORDER BY item (the service's documented exceptions: vector and spatial distance; and the
/// scores its hybrid search plans sort each component by, `_FullTextScore` and `_VectorScore`).
pub fn may_order_by(function: &str) -> bool {
    is_vector_distance(function) || matches!(function, "ST_DISTANCE" | "_FullTextScore")
}

/// VectorDistance under either of its names (`_VectorScore` in the service's hybrid search
/// plans): bound with the container's vector policy, ordered most similar first.
pub fn is_vector_distance(function: &str) -> bool {
    matches!(function, "VectorDistance" | "_VectorScore")
}

/// `ORDER BY c.n + 1`, `ORDER BY UPPER(c.s)`, ordering by a value a FROM subquery computes, a
/// distance beside another ORDER BY item. (The service sends this one's code as the number 2206,
/// without a location.)
pub fn order_by_not_a_path(span: Span) -> PlanError {
    PlanError::rejected(
        "2206",
        "Unsupported ORDER BY clause. ORDER BY item expression could not be mapped to a document path.",
        Some(span),
    )
}

/// `ORDER BY` inside a subquery.
pub fn order_by_in_subquery(span: Span) -> PlanError {
    PlanError::rejected("SC2202", "'ORDER BY' is not supported in subqueries.", Some(span))
}

/// `TOP` inside a subquery.
pub fn top_in_subquery(span: Span) -> PlanError {
    PlanError::rejected("SC2203", "'TOP' is not supported in subqueries.", Some(span))
}

/// `OFFSET ... LIMIT ...` inside a subquery.
pub fn offset_limit_in_subquery(span: Span) -> PlanError {
    PlanError::rejected("SC2204", "'OFFSET LIMIT' clause is not supported in subqueries.", Some(span))
}

/// `ORDER BY RANK` inside a subquery.
pub fn rank_in_subquery(span: Span) -> PlanError {
    PlanError::rejected("SC2228", "The ORDER BY RANK clause is not supported in subqueries.", Some(span))
}

/// A subquery may not have ORDER BY (or ORDER BY RANK), TOP or OFFSET LIMIT; with several, the
/// service names ORDER BY first, then TOP, then OFFSET LIMIT (the .NET SDK's LINQ baselines, e.g.
/// LinqGeneralBaselineTests.TestThenByTranslation, see [`Counts`]).
pub fn check_subquery_clauses(q: &Query) -> Result<(), PlanError> {
    if let (Some(first), Some(last)) = (q.order_by.first(), q.order_by.last()) {
        let span = first.span.to(last.span);
        return Err(if q.order_by_rank { rank_in_subquery(span) } else { order_by_in_subquery(span) });
    }
    if let Some(top) = &q.select.top {
        let span = match top {
            cosmoql_parser::Count::Literal { span, .. } => *span,
            cosmoql_parser::Count::Parameter(p) => p.span,
        };
        return Err(top_in_subquery(span));
    }
    if let Some(ol) = &q.offset_limit {
        return Err(offset_limit_in_subquery(ol.span));
    }
    Ok(())
}

/// A name that is no alias in scope.
pub fn unresolved_identifier(name: &str, span: Span) -> PlanError {
    PlanError::rejected("SC2001", format!("Identifier '{name}' could not be resolved."), Some(span))
}

/// A function name the service does not know (also `RRF` outside `ORDER BY RANK`).
pub fn unknown_function(name: &str, span: Span) -> PlanError {
    PlanError::rejected("SC2005", format!("'{name}' is not a recognized built-in function name."), Some(span))
}

/// `udf.name(...)` where the container has no UDF `name` (names are case-sensitive, as the
/// prefix is). The service rejects such a query, but its status, substatus and message are not
/// recorded (`docs/design/server-side-js-research.md`, section 4, "Not found"): this is a 400
/// without a query error code, worded after SC2005's "is not a recognized built-in function".
pub fn unknown_udf(name: &str, span: Span) -> PlanError {
    PlanError::bind(format!("'udf.{name}' is not a recognized user-defined function name."), span)
}

/// A call with too few or too many arguments (the span is the whole call).
pub fn wrong_argument_count(signature: &Signature, span: Span) -> PlanError {
    let expected = match signature.max_args {
        Some(m) if m == signature.min_args => format!("{m}"),
        Some(m) => format!("{} to {m}", signature.min_args),
        None => format!("at least {}", signature.min_args),
    };
    PlanError::rejected(
        "SC2050",
        format!("The {} function requires {expected} argument(s).", signature.name.to_ascii_uppercase()),
        Some(span),
    )
}

/// An aggregate whose argument holds an aggregate or a subquery (the span is the outer call).
pub fn aggregate_of_aggregate(span: Span) -> PlanError {
    PlanError::rejected(
        "SC2101",
        "Cannot perform an aggregate function on an expression containing an aggregate or a subquery.",
        Some(span),
    )
}

/// A property in the select list of a GROUP BY query that is neither a group key nor inside an
/// aggregate; `expr` is the reference as the query wrote it.
pub fn not_grouped_in_select(expr: &str, span: Span) -> PlanError {
    PlanError::rejected(
        "SC2102",
        format!(
            "Property reference '{expr}' is invalid in the select list because it is not contained in either an aggregate function or the GROUP BY clause."
        ),
        Some(span),
    )
}

/// The same in ORDER BY.
pub fn not_grouped_in_order_by(expr: &str, span: Span) -> PlanError {
    PlanError::rejected(
        "SC2103",
        format!(
            "Property reference '{expr}' is invalid in the ORDER BY clause because it is not contained in either an aggregate function or the GROUP BY clause."
        ),
        Some(span),
    )
}

/// A cross-partition aggregate query whose SELECT nests an aggregate inside another expression
/// (`SELECT VALUE [COUNT(1)]`, `SELECT VALUE {'n': COUNT(1)}`, `FLOOR(AVG(c.n))`, `SUM(c.a) + 1`).
/// The service's query plan merges aggregates only when each is a whole projected item, and
/// rejects the rest in its older error form, without a code; with the request's partition key the
/// query runs on one partition and is accepted, as it is in a request for one feed range (the
/// SDKs' query pipelines send `SELECT VALUE [{"item": COUNT(1)}]` and the like per range, as the
/// service's plans rewrite aggregates: `../shared/research/gateway-python.md` §6.2). Inferred, not recorded: a container without a
/// partition key is treated like any other (the rule applies unless the request names a key);
/// every recording is of a partitioned container.
pub fn composed_aggregates(span: Span) -> PlanError {
    PlanError::bind("Compositions of aggregates and other expressions are not allowed.", span)
}

/// Checks the cross-partition aggregate shape: an aggregate is a whole projected item, never
/// inside another expression. Items without an aggregate (a group key, a function of it, an
/// object of group keys, a constant) are fine: `SELECT VALUE {"age": c.age} ... GROUP BY c.age`.
pub fn check_cross_partition_aggregates(query: &Query) -> Result<(), PlanError> {
    let items: Vec<&Expr> = match &query.select.projection {
        cosmoql_parser::Projection::Star(_) => vec![],
        cosmoql_parser::Projection::Value(e) => vec![e],
        cosmoql_parser::Projection::List(items) => items.iter().map(|i| &i.expr).collect(),
    };
    for item in items {
        if is_aggregate_call(item) {
            continue;
        }
        if let Some(inner) = find_aggregate(item) {
            return Err(composed_aggregates(inner.span));
        }
    }
    Ok(())
}

fn is_aggregate_call(e: &Expr) -> bool {
    aggregate_call(e).is_some()
}

/// The aggregate `e` calls, when `e` is an aggregate call (`COUNT(1)`, `AVG(c.n)`).
pub fn aggregate_call(e: &Expr) -> Option<crate::functions::AggregateKind> {
    let ExprKind::Call { name, udf: false, .. } = &e.kind else { return None };
    match crate::functions::lookup(&name.name)?.signature().kind {
        crate::functions::FunctionKind::Aggregate(kind) => Some(kind),
        _ => None,
    }
}

/// Whether `e` holds an aggregate call anywhere (not looking into subqueries).
pub fn contains_aggregate(e: &Expr) -> bool {
    find_aggregate(e).is_some()
}

/// The first aggregate call in `e`, in text order (not looking into subqueries, whose aggregates
/// are their own).
fn find_aggregate(e: &Expr) -> Option<&Expr> {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if is_aggregate_call(e) {
            return Some(e);
        }
        // Last pushed is first visited: the leftmost child first.
        stack.extend(e.children().into_iter().rev());
    }
    None
}

/// ORDER BY on two or more paths without a composite index for them (same paths in the same
/// order, directions all equal to the index's or all inverted).
pub fn no_composite_index(span: Span) -> PlanError {
    PlanError {
        code: None,
        ..PlanError::bind(
            "The order by query does not have a corresponding composite index that it can be served from.",
            span,
        )
    }
}

/// ORDER BY on one path that the indexing policy does not index.
pub fn order_by_path_excluded(span: Span) -> PlanError {
    PlanError::bind("The index path corresponding to the specified order-by item is excluded.", span)
}

/// ORDER BY needs the index: one path needs a range index on it, several need a composite index
/// that serves them. (VectorDistance and ST_DISTANCE, alone, need none.)
pub fn check_order_by_indexes(order_by: &[SortKey], policy: &IndexingPolicy) -> Result<(), PlanError> {
    let span = match (order_by.first(), order_by.last()) {
        (Some(first), Some(last)) => first.span.to(last.span),
        _ => return Ok(()),
    };
    if order_by.len() == 1 {
        return match &order_by[0].path {
            Some(path) if !policy.is_indexed(path) => Err(order_by_path_excluded(order_by[0].span)),
            _ => Ok(()),
        };
    }
    let items: Option<Vec<(Vec<IndexStep>, bool)>> =
        order_by.iter().map(|k| k.path.clone().map(|p| (p, k.descending))).collect();
    match items {
        Some(items) if policy.has_composite(&items) => Ok(()),
        _ => Err(no_composite_index(span)),
    }
}

/// `SELECT *` with GROUP BY (the span is the `*`).
pub fn star_with_group_by(span: Span) -> PlanError {
    PlanError::rejected("SC2041", "'SELECT *' is not allowed with GROUP BY.", Some(span))
}

/// `SELECT *` with JOINs.
pub fn star_with_joins(span: Span) -> PlanError {
    PlanError::rejected("SC2040", "'SELECT *' is only valid with a single input set.", Some(span))
}

/// `SELECT *` without FROM. (The service's code for it is not public.)
pub fn star_without_from(span: Span) -> PlanError {
    PlanError::bind("'SELECT *' is not valid if FROM clause is omitted.", span)
}

/// An indexer that is not a constant (`c.a[c.i]`; a parameter is a constant).
pub fn member_indexer(span: Span) -> PlanError {
    PlanError::rejected(
        "SC2990",
        "The specified query includes 'member indexer' which is currently not supported.",
        Some(span),
    )
}

/// Which count of `TOP n`, `OFFSET n` or `LIMIT n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountClause {
    Top,
    Offset,
    Limit,
}

/// The largest count the service accepts: counts are unsigned 32-bit integers.
pub const MAX_COUNT: u64 = u32::MAX as u64;

/// A TOP, OFFSET or LIMIT count past [`MAX_COUNT`].
pub fn count_too_large(clause: CountClause, span: Span) -> PlanError {
    match clause {
        CountClause::Top => {
            PlanError::rejected("SC2060", "The count value provided for a TOP clause must be an integer.", Some(span))
        }
        CountClause::Limit => {
            PlanError::rejected("SC2061", "The LIMIT count value exceeds the maximum allowed value.", Some(span))
        }
        CountClause::Offset => {
            PlanError::rejected("SC2062", "The OFFSET count value exceeds the maximum allowed value.", Some(span))
        }
    }
}

/// `FullTextScore` outside `ORDER BY RANK`.
pub fn full_text_score_outside_rank(span: Span) -> PlanError {
    PlanError::rejected("SC2240", "The FullTextScore function is only allowed in the ORDER BY RANK clause.", Some(span))
}

/// `ORDER BY RANK` of something that is not a scoring function, or `RRF` of fewer than two.
pub fn not_a_scoring_function(span: Span) -> PlanError {
    PlanError::rejected(
        "SC2221",
        "The ORDER BY RANK clause must be followed by a VectorDistance and/or a FullTextScore function call.",
        Some(span),
    )
}

/// `ORDER BY RANK` with `FROM x IN ...`.
pub fn rank_with_from_in(span: Span) -> PlanError {
    PlanError::rejected(
        "SC2223",
        "The FROM clause with the IN operator is not allowed with the ORDER BY RANK clause.",
        Some(span),
    )
}

/// `ORDER BY RANK` with a JOIN.
pub fn rank_with_join(span: Span) -> PlanError {
    PlanError::rejected("SC2224", "The JOIN operator is not allowed with the ORDER BY RANK clause.", Some(span))
}

/// `ORDER BY RANK` over a FROM subquery.
pub fn rank_with_from_subquery(span: Span) -> PlanError {
    PlanError::rejected(
        "SC2225",
        "Subqueries in the FROM clause are not allowed with the ORDER BY RANK clause.",
        Some(span),
    )
}

/// RRF weights that are not a literal array of numbers, one per score.
pub fn bad_rrf_weights(span: Span) -> PlanError {
    PlanError::rejected(
        "SC2229",
        "The last parameter of the RRF function is an optional array of weights. When present, it must be a literal array of numbers, one for each of the component scores used for the RRF function. The length of this array must be the same as the number of the component scores.",
        Some(span),
    )
}

/// The query engine limits the service advertises in its account properties
/// (`queryEngineConfiguration`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `maxSqlQueryInputLength`: characters of query text.
    pub max_query_text: usize,
    /// `maxJoinsPerSqlQuery`
    pub max_joins: usize,
    /// `maxLogicalAndPerSqlQuery`
    pub max_and: usize,
    /// `maxLogicalOrPerSqlQuery`
    pub max_or: usize,
    /// `maxUdfRefPerSqlQuery`
    pub max_udf_references: usize,
    /// `maxInExpressionItemsCount`
    pub max_in_items: usize,
}

/// The service's defaults: its advertised `queryEngineConfiguration` (query text 262144
/// characters, 500 ANDs, 500 ORs, 10 UDF references, 16000 IN items) and the documented limit of
/// 10 JOINs per query.
pub const LIMITS: Limits = Limits {
    max_query_text: 262_144,
    max_joins: 10,
    max_and: cosmoql_parser::MAX_LOGICAL_OPERATORS,
    max_or: cosmoql_parser::MAX_LOGICAL_OPERATORS,
    max_udf_references: 10,
    max_in_items: 16_000,
};

/// Rejects query text longer than the service accepts, before parsing it.
pub fn check_text(sql: &str, limits: &Limits) -> Result<(), PlanError> {
    // Bytes bound characters from above: count characters only when the bytes are over.
    if sql.len() > limits.max_query_text && sql.chars().count() > limits.max_query_text {
        return Err(PlanError::rejected(
            "SC3020",
            format!("The SQL query text exceeded the maximum limit of {} characters.", limits.max_query_text),
            Some(Span::new(0, sql.len())),
        ));
    }
    Ok(())
}

/// Counts what the service limits per query (JOINs, AND, OR, UDF references, IN items) over the
/// whole tree, subqueries included, and rejects the first count past its limit; a subquery's
/// clause it may not have (see [`check_subquery_clauses`]) comes first.
pub fn check_limits(query: &Query, limits: &Limits) -> Result<(), PlanError> {
    let mut counts = Counts::default();
    counts.query(query, true)?;
    if let Some(e) = counts.subquery_clause {
        return Err(e);
    }
    // The whole query is the location, as the service reports these.
    let exceeded = |code: &'static str, what: &str, limit: usize| PlanError {
        code: (!code.is_empty()).then_some(code),
        ..PlanError::bind(
            format!("The SQL query exceeded the maximum number of {what}. The allowed limit is {limit}."),
            query.span,
        )
    };
    if counts.joins > limits.max_joins {
        return Err(exceeded("SC3002", "joins", limits.max_joins));
    }
    // The service's codes for the AND and OR limits are not public.
    if counts.and > limits.max_and {
        return Err(exceeded("", "'AND' operators", limits.max_and));
    }
    if counts.or > limits.max_or {
        return Err(exceeded("", "'OR' operators", limits.max_or));
    }
    if counts.udf > limits.max_udf_references {
        return Err(exceeded("SC3005", "user-defined function calls", limits.max_udf_references));
    }
    if let Some((items, span)) = counts.largest_in.filter(|(n, _)| *n > limits.max_in_items) {
        // Neither the wording nor the code of the service's IN limit error is public.
        return Err(PlanError::bind(
            format!(
                "The IN expression has {items} items; the SQL query may have at most {} items in an IN expression.",
                limits.max_in_items
            ),
            span,
        ));
    }
    Ok(())
}

#[derive(Debug, Default)]
struct Counts {
    /// The first subquery with a clause subqueries may not have. The service lists every such
    /// clause, innermost subquery first, then in text order (in one subquery ORDER BY, TOP,
    /// OFFSET LIMIT), and before any limit: the .NET SDK's LINQ baselines, e.g.
    /// LinqGeneralBaselineTests.TestThenByTranslation "Where -> SelectMany -> OrderBy -> ThenBy ->
    /// Select => Distinct => Take => OrderBy" (SC2202 at 170, SC2203 at 60, SC2204 at 233), and
    /// LinqAggregateFunctionBaselineTests.TestAny "Skip -> Take -> Select(new()) -> ...", eleven
    /// JOINs and an OFFSET LIMIT in a subquery: SC2204. cosmoql answers with the first.
    subquery_clause: Option<PlanError>,
    joins: usize,
    and: usize,
    or: usize,
    udf: usize,
    largest_in: Option<(usize, Span)>,
}

impl Counts {
    /// Visits `q`'s parts in text order, its subqueries before itself.
    fn query(&mut self, q: &Query, top_level: bool) -> Result<(), PlanError> {
        match &q.select.projection {
            cosmoql_parser::Projection::Star(_) => {}
            cosmoql_parser::Projection::Value(e) => self.expr(e)?,
            cosmoql_parser::Projection::List(items) => {
                for item in items {
                    self.expr(&item.expr)?;
                }
            }
        }
        if let Some(from) = &q.from {
            self.source(&from.source)?;
            for join in &from.joins {
                self.joins += 1;
                self.source(join)?;
            }
        }
        for e in q.where_clause.iter().chain(&q.group_by).chain(q.order_by.iter().map(|o| &o.expr)) {
            self.expr(e)?;
        }
        if !top_level && self.subquery_clause.is_none() {
            self.subquery_clause = check_subquery_clauses(q).err();
        }
        Ok(())
    }

    fn source(&mut self, s: &FromSource) -> Result<(), PlanError> {
        match s {
            FromSource::Aliased { collection: cosmoql_parser::Collection::Subquery(q), .. } => self.query(q, false),
            FromSource::Aliased { .. } => Ok(()),
            FromSource::Iterate { array, .. } => self.expr(array),
        }
    }

    /// Walks an expression with an explicit stack (long AND/OR chains are deep on the left).
    fn expr(&mut self, root: &Expr) -> Result<(), PlanError> {
        let mut stack = vec![root];
        while let Some(e) = stack.pop() {
            match &e.kind {
                ExprKind::Binary { op: cosmoql_parser::BinaryOp::And, .. } => self.and += 1,
                ExprKind::Binary { op: cosmoql_parser::BinaryOp::Or, .. } => self.or += 1,
                ExprKind::In { list, .. } if self.largest_in.is_none_or(|(n, _)| list.len() > n) => {
                    self.largest_in = Some((list.len(), e.span));
                }
                ExprKind::Call { udf: true, .. } => self.udf += 1,
                _ => {}
            }
            if let Some(q) = e.subquery() {
                self.query(q, false)?;
            }
            stack.extend(e.children().into_iter().rev());
        }
        Ok(())
    }
}
