//! The service's distributed form of a query: what a client that fans out per range must merge
//! (`queryInfo` of the query plan) and the query each range runs (`rewrittenQuery`), as the
//! service writes them (`../shared/research/gateway-python.md` §6.2-6.3, from the .NET SDK's
//! query-plan baselines, which match the service; the per-range shapes the JavaScript SDK's
//! merge components read in `queryExecutionContext/`).
//!
//! - ORDER BY: each range returns `{"_rid", "orderByItems": [{"item": key}, ...], "payload"}`
//!   sorted, and the client merges the streams; the WHERE holds the placeholder
//!   `{documentdb-formattableorderbyquery-filter}` the client replaces with `true` or its resume
//!   filter. DISTINCT with ORDER BY is `Ordered` (the client drops consecutive duplicates).
//! - TOP is kept per range; OFFSET o LIMIT l becomes `OFFSET 0 LIMIT o+l` per range, o and l
//!   applied by the client.
//! - VALUE aggregates: each range returns `[{"item": partial}]` (AVG as `{"sum", "count"}`, MIN
//!   and MAX also as `"item2": {"min"|"max", "count"}`), which the client combines.
//! - GROUP BY and aggregates with names: each range returns `{"groupByItems": [{"item": key}],
//!   "payload": {"alias": value or {"item": partial}}}`, and `groupByAliasToAggregateType` says
//!   how the client combines each alias.
//! - DISTINCT without ORDER BY: `Unordered`; each range runs the query as written.
//!
//! - ORDER BY VectorDistance, or the internal `_VectorScore` and `_FullTextScore` of the
//!   service's hybrid search components (with TOP or LIMIT): the ORDER BY form, in the engine's
//!   direction (a similarity is most similar first), marked `hasNonStreamingOrderBy`: the client
//!   buffers each range's best and sorts them.
//!
//! The engine runs the per-range queries as any query scoped to a feed range (there, aggregates
//! may compose: `PlanContext::request_feed_range`). ORDER BY RANK has a plan of its own
//! (`crate::hybrid`). Shapes without a faithful per-range form (a score without TOP or LIMIT,
//! GROUP BY with ORDER BY or DISTINCT, ORDER BY over a FROM path, `IN` or subquery, a FROM
//! subquery that computes over its rows or has no FROM) are [`Unsupported`]. A FROM over a path,
//! `IN` or a subquery that filters and projects has rows from each item on its own: the ranges'
//! rows concatenate and its aggregates compose.

use std::collections::HashMap;

use cosmoql::parser::{Collection, Count, Expr, ExprKind, FromSource, Projection, Query, SortDirection};
use cosmoql::{aggregate_call, contains_aggregate, inferred_name, AggregateKind, Value};
use serde_json::{json, Map, Value as Json};

/// What the client substitutes (`true`, or a filter that resumes after a continuation).
pub const ORDER_BY_FILTER: &str = "{documentdb-formattableorderbyquery-filter}";

/// Why a query has no per-range form here.
#[derive(Debug, Clone, PartialEq)]
pub struct Unsupported(pub &'static str);

/// The `queryInfo` of the service's plan for `query` (parsed from the request's text, with its
/// parameters by name without `@`), `rewrittenQuery` included.
///
/// `descending` holds each ORDER BY key's direction as the engine binds it (ORDER BY
/// VectorDistance with a similarity, cosine or dot product, is most similar first: descending when
/// written ascending); empty, the directions as written.
pub fn query_info(
    query: &Query,
    parameters: &HashMap<String, Value>,
    descending: &[bool],
) -> Result<Json, Unsupported> {
    if query.order_by_rank {
        return Err(Unsupported("ORDER BY RANK outside a hybrid search plan"));
    }
    let Counts { top, offset, limit } = counts(query, parameters)?;
    if !per_item(query) {
        return Err(Unsupported(
            "a FROM subquery without FROM, or with TOP, OFFSET, ORDER BY, DISTINCT, GROUP BY or aggregates",
        ));
    }
    let mut info = Info { top, offset, limit, ..Info::default() };
    let grouped = !query.group_by.is_empty() || projection_has_aggregate(query);
    if grouped {
        if query.select.distinct {
            return Err(Unsupported("DISTINCT with GROUP BY or aggregates"));
        }
        if !query.group_by.is_empty() && !query.order_by.is_empty() {
            return Err(Unsupported("GROUP BY with ORDER BY"));
        }
        group_by(query, &mut info)?;
    } else if !query.order_by.is_empty() {
        if query.order_by.iter().any(|o| non_streaming(&o.expr)) {
            // The service's non-streaming ORDER BY: each range's best, buffered and sorted by
            // the client, which needs a bound on what it holds.
            if info.top.is_none() && info.limit.is_none() {
                return Err(Unsupported("ORDER BY a vector or full-text score without TOP or LIMIT"));
            }
            info.non_streaming = true;
        }
        order_by(query, root_alias(query)?, descending, &mut info);
    } else {
        if query.select.distinct {
            info.distinct = "Unordered";
        }
        if info.offset.is_some() {
            // Each range's first o+l results hold the first o+l of the union it contributes.
            let (top, limit) = info.per_range(true);
            info.rewritten = assemble(query, &select_head(query), &where_text(query), false, top, limit);
        }
    }
    Ok(info.to_json(query))
}

#[derive(Default)]
struct Info {
    top: Option<u64>,
    offset: Option<u64>,
    limit: Option<u64>,
    distinct: &'static str,
    order_by: Vec<&'static str>,
    order_by_expressions: Vec<String>,
    group_by_expressions: Vec<String>,
    group_by_aliases: Vec<String>,
    aggregates: Vec<&'static str>,
    alias_aggregates: Map<String, Json>,
    rewritten: String,
    non_streaming: bool,
}

impl Info {
    fn to_json(&self, query: &Query) -> Json {
        json!({
            "distinctType": if self.distinct.is_empty() { "None" } else { self.distinct },
            "top": self.top,
            "offset": self.offset,
            "limit": self.limit,
            "orderBy": self.order_by,
            "orderByExpressions": self.order_by_expressions,
            "groupByExpressions": self.group_by_expressions,
            "groupByAliases": self.group_by_aliases,
            "aggregates": self.aggregates,
            "groupByAliasToAggregateType": self.alias_aggregates,
            "rewrittenQuery": self.rewritten,
            "hasSelectValue": matches!(query.select.projection, Projection::Value(_)),
            "dCountInfo": null,
            "hasNonStreamingOrderBy": self.non_streaming,
        })
    }
}

/// A query's TOP, OFFSET and LIMIT counts.
pub(crate) struct Counts {
    pub top: Option<u64>,
    pub offset: Option<u64>,
    pub limit: Option<u64>,
}

/// The query's TOP, OFFSET and LIMIT counts, parameters resolved.
pub(crate) fn counts(query: &Query, parameters: &HashMap<String, Value>) -> Result<Counts, Unsupported> {
    let top = query.select.top.as_ref().map(|c| count(c, parameters)).transpose()?;
    let (offset, limit) = match &query.offset_limit {
        Some(ol) => (Some(count(&ol.offset, parameters)?), Some(count(&ol.limit, parameters)?)),
        None => (None, None),
    };
    Ok(Counts { top, offset, limit })
}

/// A TOP, OFFSET or LIMIT count, a parameter resolved.
fn count(c: &Count, parameters: &HashMap<String, Value>) -> Result<u64, Unsupported> {
    match c {
        Count::Literal { value, .. } => Ok(*value),
        Count::Parameter(p) => match parameters.get(&p.name) {
            Some(Value::Number(n)) if *n >= 0.0 && n.fract() == 0.0 && *n <= u32::MAX as f64 => Ok(*n as u64),
            _ => Err(Unsupported("a TOP, OFFSET or LIMIT parameter that is not a count")),
        },
    }
}

/// The alias the items are bound to (`c` in `FROM c`, `r` in `FROM root r`), which ORDER BY's
/// per-range form reads `_rid` from: a FROM over a path, `IN` or a subquery binds no item.
pub(crate) fn root_alias(query: &Query) -> Result<&str, Unsupported> {
    match query.from.as_ref().map(|f| &f.source) {
        Some(FromSource::Aliased { collection: Collection::Path { root, path, .. }, alias, .. }) if path.is_empty() => {
            Ok(alias.as_ref().map_or(root.name.as_str(), |a| a.name.as_str()))
        }
        Some(_) => Err(Unsupported("ORDER BY over a FROM path, IN or subquery")),
        None => Ok(""),
    }
}

/// Whether the query's rows come from each item on its own, so that the ranges' rows together
/// are the query's: a FROM over the container, a path in it, `IN`, or a subquery that only
/// filters and projects such rows (one with TOP, OFFSET, ORDER BY, DISTINCT, GROUP BY or an
/// aggregate computes over a range's rows, not the container's; one without FROM gives its row
/// once per range).
fn per_item(query: &Query) -> bool {
    let Some(from) = &query.from else { return true };
    match &from.source {
        FromSource::Aliased { collection: Collection::Subquery(inner), .. } => {
            inner.select.top.is_none()
                && inner.offset_limit.is_none()
                && inner.order_by.is_empty()
                && !inner.order_by_rank
                && !inner.select.distinct
                && inner.group_by.is_empty()
                && !projection_has_aggregate(inner)
                && inner.from.is_some()
                && per_item(inner)
        }
        _ => true,
    }
}

fn projection_has_aggregate(query: &Query) -> bool {
    match &query.select.projection {
        Projection::Star(_) => false,
        Projection::Value(e) => contains_aggregate(e),
        Projection::List(items) => items.iter().any(|i| contains_aggregate(&i.expr)),
    }
}

/// A score the service orders by without an index (VectorDistance, and the internal scores of its
/// hybrid search components): each range's best are buffered and sorted by the client.
fn non_streaming(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Call { name, .. }
        if ["VectorDistance", "_VectorScore", "_FullTextScore"].iter().any(|f| name.name.eq_ignore_ascii_case(f)))
}

/// The service's name of an aggregate in a plan.
fn aggregate_name(kind: AggregateKind) -> &'static str {
    match kind {
        AggregateKind::Count => "Count",
        AggregateKind::CountIf => "CountIf",
        AggregateKind::Sum => "Sum",
        AggregateKind::Avg => "Average",
        AggregateKind::Min => "Min",
        AggregateKind::Max => "Max",
        AggregateKind::MakeList => "MakeList",
        AggregateKind::MakeSet => "MakeSet",
    }
}

/// What one range returns for an aggregate call `e` of `kind`, for the client to combine.
fn partial(kind: AggregateKind, e: &Expr) -> String {
    let ExprKind::Call { args, .. } = &e.kind else { return e.to_string() };
    let arg = args.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ");
    match kind {
        AggregateKind::Avg => format!(r#"{{"item": {{"sum": SUM({arg}), "count": COUNT({arg})}}}}"#),
        AggregateKind::Min => {
            format!(r#"{{"item": MIN({arg}), "item2": {{"min": MIN({arg}), "count": COUNT({arg})}}}}"#)
        }
        AggregateKind::Max => {
            format!(r#"{{"item": MAX({arg}), "item2": {{"max": MAX({arg}), "count": COUNT({arg})}}}}"#)
        }
        _ => format!(r#"{{"item": {e}}}"#),
    }
}

/// `[DISTINCT] <projection>` as written.
fn select_head(query: &Query) -> String {
    let mut head = String::new();
    if query.select.distinct {
        head.push_str("DISTINCT ");
    }
    head.push_str(&query.select.projection_text());
    head
}

/// The WHERE condition as written, parenthesized, if any.
pub(crate) fn where_text(query: &Query) -> Vec<String> {
    query.where_clause.iter().map(|w| format!("({w})")).collect()
}

/// `SELECT [TOP top] <head> FROM ... [WHERE <conditions>] [GROUP BY ...] [ORDER BY ...]
/// [OFFSET 0 LIMIT limit]`: one range's query.
fn assemble(
    query: &Query,
    head: &str,
    conditions: &[String],
    order_by: bool,
    top: Option<u64>,
    limit: Option<u64>,
) -> String {
    let mut sql = String::from("SELECT ");
    if let Some(top) = top {
        sql.push_str(&format!("TOP {top} "));
    }
    sql.push_str(head);
    if let Some(from) = &query.from {
        sql.push_str(&format!(" FROM {}", from.source));
        for join in &from.joins {
            sql.push_str(&format!(" JOIN {join}"));
        }
    }
    if !conditions.is_empty() {
        sql.push_str(&format!(" WHERE {}", conditions.join(" AND ")));
    }
    if !query.group_by.is_empty() {
        let keys: Vec<String> = query.group_by.iter().map(|e| e.to_string()).collect();
        sql.push_str(&format!(" GROUP BY {}", keys.join(", ")));
    }
    if order_by {
        let keys: Vec<String> = query
            .order_by
            .iter()
            .map(|o| match o.direction {
                Some(SortDirection::Desc) => format!("{} DESC", o.expr),
                Some(SortDirection::Asc) => format!("{} ASC", o.expr),
                None => o.expr.to_string(),
            })
            .collect();
        sql.push_str(&format!(" ORDER BY {}", keys.join(", ")));
    }
    if let Some(limit) = limit {
        sql.push_str(&format!(" OFFSET 0 LIMIT {limit}"));
    }
    sql
}

impl Info {
    /// What one range must return of a query whose merge keeps the first `top`, or skips
    /// `offset` and keeps `limit`: its own first as many (none when the range query drops a
    /// DISTINCT, whose first n rows may hold fewer than n distinct values).
    fn per_range(&self, keeps_distinct: bool) -> (Option<u64>, Option<u64>) {
        if !keeps_distinct {
            return (None, None);
        }
        // With TOP and OFFSET both, the merge skips the offset before TOP counts.
        let top = self.top.map(|t| t.saturating_add(self.offset.unwrap_or(0)));
        (top, self.offset.zip(self.limit).map(|(o, l)| o.saturating_add(l)))
    }
}

/// A JSON string literal, which is also a query string literal.
fn quoted(name: &str) -> String {
    Json::String(name.to_string()).to_string()
}

/// What an ORDER BY row carries as its result: the item (`root`), the VALUE, or the select list
/// as one object.
pub(crate) fn payload(query: &Query, root: &str) -> String {
    match &query.select.projection {
        Projection::Star(_) => root.to_string(),
        Projection::Value(e) => e.to_string(),
        Projection::List(list) => projection_object(list, |e| e.to_string()).0,
    }
}

/// The select list as one object `{"name": expr, ...}`, names as the engine gives them.
fn projection_object(items: &[cosmoql::parser::SelectItem], value: impl Fn(&Expr) -> String) -> (String, Vec<String>) {
    let mut unnamed = 0;
    let mut names = Vec::new();
    let mut fields = Vec::new();
    for item in items {
        let name = match item.alias.as_ref().map(|a| a.name.clone()).or_else(|| inferred_name(&item.expr)) {
            Some(name) => name,
            None => {
                unnamed += 1;
                format!("${unnamed}")
            }
        };
        fields.push(format!("{}: {}", quoted(&name), value(&item.expr)));
        names.push(name);
    }
    (format!("{{{}}}", fields.join(", ")), names)
}

fn order_by(query: &Query, root: &str, descending: &[bool], info: &mut Info) {
    info.distinct = if query.select.distinct { "Ordered" } else { "" };
    for (i, o) in query.order_by.iter().enumerate() {
        let down = descending.get(i).copied().unwrap_or(o.direction == Some(SortDirection::Desc));
        info.order_by.push(if down { "Descending" } else { "Ascending" });
        info.order_by_expressions.push(o.expr.to_string());
    }
    let items: Vec<String> = query.order_by.iter().map(|o| format!(r#"{{"item": {}}}"#, o.expr)).collect();
    let mut conditions = where_text(query);
    if let Projection::Value(e) = &query.select.projection {
        conditions.push(format!("IS_DEFINED({e})"));
    }
    let payload = payload(query, root);
    conditions.push(format!("({ORDER_BY_FILTER})"));
    let head = format!("{root}._rid, [{}] AS orderByItems, {payload} AS payload", items.join(", "));
    let (top, limit) = info.per_range(!query.select.distinct);
    info.rewritten = assemble(query, &head, &conditions, true, top, limit);
}

fn group_by(query: &Query, info: &mut Info) -> Result<(), Unsupported> {
    info.group_by_expressions = query.group_by.iter().map(|e| e.to_string()).collect();
    let keys = if query.group_by.is_empty() {
        String::new()
    } else {
        let items: Vec<String> = query.group_by.iter().map(|e| format!(r#"{{"item": {e}}}"#)).collect();
        format!("[{}] AS groupByItems, ", items.join(", "))
    };
    // Each projected item is an aggregate or holds none (compositions were refused by planning).
    let item = |e: &Expr| match aggregate_call(e) {
        Some(kind) => Ok((partial(kind, e), Some(kind))),
        None if contains_aggregate(e) => Err(Unsupported("an aggregate inside another expression")),
        None => Ok((e.to_string(), None)),
    };
    let payload = match &query.select.projection {
        Projection::Star(_) => return Err(Unsupported("SELECT * with GROUP BY")),
        Projection::Value(e) => {
            let (value, kind) = item(e)?;
            match kind {
                Some(kind) => {
                    info.aggregates.push(aggregate_name(kind));
                    format!("[{value}]")
                }
                None => value,
            }
        }
        Projection::List(list) => {
            for i in list {
                item(&i.expr)?;
            }
            let (object, names) = projection_object(list, |e| item(e).map(|(v, _)| v).unwrap_or_default());
            for (name, i) in names.iter().zip(list) {
                let kind = aggregate_call(&i.expr).map(|k| Json::from(aggregate_name(k)));
                info.alias_aggregates.insert(name.clone(), kind.unwrap_or(Json::Null));
            }
            info.group_by_aliases = names;
            object
        }
    };
    let head = if query.group_by.is_empty() && matches!(query.select.projection, Projection::Value(_)) {
        format!("VALUE {payload}")
    } else {
        format!("{keys}{payload} AS payload")
    };
    // Groups are merged across ranges before TOP, OFFSET and LIMIT apply.
    info.rewritten = assemble(query, &head, &where_text(query), false, None, None);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(sql: &str) -> Json {
        let params = HashMap::from([("n".to_string(), Value::from(3.0))]);
        query_info(&cosmoql::parse(sql).unwrap(), &params, &[]).unwrap()
    }

    fn rewritten(sql: &str) -> String {
        info(sql)["rewrittenQuery"].as_str().unwrap().to_string()
    }

    /// The forms of `../shared/research/gateway-python.md` §6.1-6.2 (the service's, recorded by
    /// the .NET SDK's query-plan baselines), on one line as cosmoql prints queries.
    #[test]
    fn order_by_rewrites_as_the_service_does() {
        let plan = info("SELECT TOP 3 c.id FROM c ORDER BY c.n");
        assert_eq!(plan["top"], json!(3));
        assert_eq!(plan["orderBy"], json!(["Ascending"]));
        assert_eq!(plan["orderByExpressions"], json!(["c.n"]));
        assert_eq!(plan["distinctType"], json!("None"));
        assert_eq!(
            plan["rewrittenQuery"],
            json!(
                r#"SELECT TOP 3 c._rid, [{"item": c.n}] AS orderByItems, {"id": c.id} AS payload FROM c WHERE ({documentdb-formattableorderbyquery-filter}) ORDER BY c.n"#
            )
        );
        assert_eq!(
            rewritten("SELECT * FROM root r WHERE r.a = 1 ORDER BY r.n DESC, r.m OFFSET 5 LIMIT @n"),
            r#"SELECT r._rid, [{"item": r.n}, {"item": r.m}] AS orderByItems, r AS payload FROM root r WHERE (r.a = 1) AND ({documentdb-formattableorderbyquery-filter}) ORDER BY r.n DESC, r.m OFFSET 0 LIMIT 8"#
        );
        assert_eq!(
            rewritten("SELECT VALUE c.x FROM c ORDER BY c.n"),
            r#"SELECT c._rid, [{"item": c.n}] AS orderByItems, c.x AS payload FROM c WHERE IS_DEFINED(c.x) AND ({documentdb-formattableorderbyquery-filter}) ORDER BY c.n"#
        );
        // Unnamed items are $1, $2, ... as the engine names them; DISTINCT is the client's.
        let plan = info("SELECT DISTINCT TOP 2 c.a, LOWER(c.b), c.n + 1 FROM c ORDER BY c.a");
        assert_eq!(plan["distinctType"], json!("Ordered"));
        assert_eq!(
            plan["rewrittenQuery"],
            json!(
                r#"SELECT c._rid, [{"item": c.a}] AS orderByItems, {"a": c.a, "$1": LOWER(c.b), "$2": c.n + 1} AS payload FROM c WHERE ({documentdb-formattableorderbyquery-filter}) ORDER BY c.a"#
            )
        );
    }

    #[test]
    fn aggregates_rewrite_to_partials() {
        let plan = info("SELECT VALUE AVG(c.n) FROM c WHERE c.k = 'a'");
        assert_eq!(plan["aggregates"], json!(["Average"]));
        assert_eq!(plan["hasSelectValue"], json!(true));
        assert_eq!(
            plan["rewrittenQuery"],
            json!(r#"SELECT VALUE [{"item": {"sum": SUM(c.n), "count": COUNT(c.n)}}] FROM c WHERE (c.k = "a")"#)
        );
        assert_eq!(
            rewritten("SELECT VALUE MIN(c.n) FROM c"),
            r#"SELECT VALUE [{"item": MIN(c.n), "item2": {"min": MIN(c.n), "count": COUNT(c.n)}}] FROM c"#
        );
        let plan = info("SELECT c.k, COUNT(1) AS n, MAX(c.v) FROM c GROUP BY c.k OFFSET 1 LIMIT 2");
        assert_eq!(plan["groupByExpressions"], json!(["c.k"]));
        assert_eq!(plan["groupByAliases"], json!(["k", "n", "$1"]));
        assert_eq!(plan["groupByAliasToAggregateType"], json!({"k": null, "n": "Count", "$1": "Max"}));
        assert_eq!((&plan["offset"], &plan["limit"]), (&json!(1), &json!(2)));
        assert_eq!(
            plan["rewrittenQuery"],
            json!(
                r#"SELECT [{"item": c.k}] AS groupByItems, {"k": c.k, "n": {"item": COUNT(1)}, "$1": {"item": MAX(c.v), "item2": {"max": MAX(c.v), "count": COUNT(c.v)}}} AS payload FROM c GROUP BY c.k"#
            )
        );
        let plan = info("SELECT VALUE COUNTIF(c.n > 1) FROM c");
        assert_eq!(
            (&plan["aggregates"], &plan["rewrittenQuery"]),
            (&json!(["CountIf"]), &json!(r#"SELECT VALUE [{"item": COUNTIF(c.n > 1)}] FROM c"#))
        );
        assert_eq!(
            rewritten("SELECT VALUE SUM(c.v) FROM c GROUP BY c.k"),
            r#"SELECT [{"item": c.k}] AS groupByItems, [{"item": SUM(c.v)}] AS payload FROM c GROUP BY c.k"#
        );
    }

    /// VectorDistance is ordered by the engine's direction (a similarity: most similar first),
    /// buffered by the client (`hasNonStreamingOrderBy`), and needs TOP or LIMIT.
    #[test]
    fn order_by_vector_distance_is_non_streaming() {
        let query = cosmoql::parse("SELECT TOP 2 c.id FROM c ORDER BY VectorDistance(c.v, [1, 0])").unwrap();
        let plan = query_info(&query, &HashMap::new(), &[true]).unwrap();
        assert_eq!(plan["hasNonStreamingOrderBy"], json!(true));
        assert_eq!(plan["orderBy"], json!(["Descending"]));
        assert_eq!(
            plan["rewrittenQuery"],
            json!(
                r#"SELECT TOP 2 c._rid, [{"item": VectorDistance(c.v, [1, 0])}] AS orderByItems, {"id": c.id} AS payload FROM c WHERE ({documentdb-formattableorderbyquery-filter}) ORDER BY VectorDistance(c.v, [1, 0])"#
            )
        );
        let unbounded = cosmoql::parse("SELECT c.id FROM c ORDER BY VectorDistance(c.v, [1, 0])").unwrap();
        assert_eq!(
            query_info(&unbounded, &HashMap::new(), &[true]),
            Err(Unsupported("ORDER BY a vector or full-text score without TOP or LIMIT"))
        );
    }

    /// The scores of the service's hybrid search components are non-streaming too.
    #[test]
    fn order_by_the_internal_scores_is_non_streaming() {
        let query =
            cosmoql::parse(r#"SELECT TOP 3 VALUE c.id FROM c ORDER BY _FullTextScore(c.t, ["a"], 5, 11, [2]) DESC"#)
                .unwrap();
        let plan = query_info(&query, &HashMap::new(), &[true]).unwrap();
        assert_eq!((&plan["hasNonStreamingOrderBy"], &plan["orderBy"]), (&json!(true), &json!(["Descending"])));
        let query = cosmoql::parse("SELECT TOP 3 VALUE c.id FROM c ORDER BY _VectorScore(c.v, [1, 0])").unwrap();
        assert_eq!(query_info(&query, &HashMap::new(), &[true]).unwrap()["hasNonStreamingOrderBy"], json!(true));
        let unbounded =
            cosmoql::parse(r#"SELECT c.id FROM c ORDER BY _FullTextScore(c.t, ["a"], 5, 11, [2])"#).unwrap();
        assert_eq!(
            query_info(&unbounded, &HashMap::new(), &[false]),
            Err(Unsupported("ORDER BY a vector or full-text score without TOP or LIMIT"))
        );
    }

    #[test]
    fn distinct_top_and_offset_without_order() {
        let plan = info("SELECT DISTINCT VALUE c.k FROM c");
        assert_eq!((&plan["distinctType"], &plan["rewrittenQuery"]), (&json!("Unordered"), &json!("")));
        assert_eq!(info("SELECT TOP @n * FROM c")["top"], json!(3));
        assert_eq!(rewritten("SELECT * FROM c OFFSET 10 LIMIT 5"), "SELECT * FROM c OFFSET 0 LIMIT 15");
    }

    #[test]
    fn a_from_over_a_path_in_or_a_per_item_subquery_runs_per_range() {
        // Rows that come from each item on their own concatenate: no rewrite.
        for sql in [
            "SELECT * FROM c.children ch WHERE ch.age > 3",
            "SELECT VALUE t FROM t IN c.tags",
            "SELECT x.id FROM (SELECT c.id, c.n FROM c WHERE c.n > 1) x",
        ] {
            let plan = info(sql);
            assert_eq!((&plan["rewrittenQuery"], &plan["aggregates"]), (&json!(""), &json!([])), "{sql}");
        }
        // Their aggregates compose from the ranges' partial ones as any other's do.
        assert_eq!(
            rewritten("SELECT VALUE COUNT(1) FROM t IN c.tags"),
            r#"SELECT VALUE [{"item": COUNT(1)}] FROM t IN c.tags"#
        );
        assert_eq!(
            rewritten("SELECT VALUE MAX(x.n) FROM (SELECT VALUE c FROM c WHERE c.k = 1) x"),
            concat!(
                r#"SELECT VALUE [{"item": MAX(x.n), "item2": {"max": MAX(x.n), "count": COUNT(x.n)}}] "#,
                "FROM (SELECT VALUE c FROM c WHERE c.k = 1) x"
            )
        );
    }

    #[test]
    fn shapes_without_a_per_range_form_are_named() {
        let params = HashMap::new();
        for (sql, shape) in [
            ("SELECT c.k, COUNT(1) AS n FROM c GROUP BY c.k ORDER BY c.k", "GROUP BY with ORDER BY"),
            ("SELECT * FROM c.children ORDER BY c.n", "ORDER BY over a FROM path, IN or subquery"),
            ("SELECT VALUE t FROM t IN c.tags ORDER BY t", "ORDER BY over a FROM path, IN or subquery"),
            (
                "SELECT VALUE COUNT(1) FROM (SELECT TOP 3 * FROM c) x",
                "a FROM subquery without FROM, or with TOP, OFFSET, ORDER BY, DISTINCT, GROUP BY or aggregates",
            ),
            (
                "SELECT VALUE COUNT(1) FROM (SELECT VALUE 1) x",
                "a FROM subquery without FROM, or with TOP, OFFSET, ORDER BY, DISTINCT, GROUP BY or aggregates",
            ),
            (
                "SELECT * FROM (SELECT VALUE COUNT(1) FROM c) n",
                "a FROM subquery without FROM, or with TOP, OFFSET, ORDER BY, DISTINCT, GROUP BY or aggregates",
            ),
            ("SELECT TOP @missing * FROM c", "a TOP, OFFSET or LIMIT parameter that is not a count"),
        ] {
            assert_eq!(query_info(&cosmoql::parse(sql).unwrap(), &params, &[]), Err(Unsupported(shape)), "{sql}");
        }
    }
}
