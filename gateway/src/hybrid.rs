//! The service's plan of an `ORDER BY RANK` query (hybrid search): `hybridSearchQueryInfo`, which
//! has every client gather the container's full-text statistics, run one non-streaming ORDER BY
//! per score (a component) with those statistics written in, and fuse the components' ranks
//! (`docs/design/hybrid-search-plans.md`; the forms are the service's, recorded by the .NET SDK's
//! `QueryPlanRetrieverTests` and `QueryPlanBaselineTests.OffsetLimit.xml`). The engine orders such
//! a query sent whole as this pipeline does (`executor/src/rank.rs`).
//!
//! Two forms, as the request's `x-ms-cosmos-supported-query-features` allows:
//! - each component an ORDER BY the client merges across ranges (`orderBy`, `orderByItems`,
//!   `{"payload": ..., "componentScores": [...]}`, the ORDER BY filter placeholder);
//! - with `HybridSearchSkipOrderByRewrite` (`@azure/cosmos` 4.10 sends it) and several
//!   components, each range's best rows as they are (`c AS payload, [...] AS componentScores`, no
//!   `orderBy`): the client sorts every component highest first, so a score ranked ascending is
//!   negated.

use std::collections::HashMap;

use cosmoql::parser::{Expr, ExprKind, Query};
use cosmoql::value::format_number;
use cosmoql::{fusion_window, RankComponent, Value};
use serde_json::{json, Value as Json};

use crate::rewrite::{self, Unsupported, ORDER_BY_FILTER};

/// The feature a client declares when it takes the second form.
pub const SKIP_ORDER_BY_REWRITE: &str = "HybridSearchSkipOrderByRewrite";

/// The placeholders of a component's query that the client replaces with the statistics: the
/// container's document count, and per component `i` that scores text its words and hit counts.
pub const DOCUMENT_COUNT: &str = "{documentdb-formattablehybridsearchquery-totaldocumentcount}";

pub fn word_count_placeholder(i: usize) -> String {
    format!("{{documentdb-formattablehybridsearchquery-totalwordcount-{i}}}")
}

pub fn hit_counts_placeholder(i: usize) -> String {
    format!("{{documentdb-formattablehybridsearchquery-hitcountsarray-{i}}}")
}

/// The `hybridSearchQueryInfo` of `query` (an `ORDER BY RANK` query), its scores `components`
/// as the engine bound them (`RankFn::components`), in the form `skip_order_by_rewrite` chooses.
pub fn hybrid_search_info(
    query: &Query,
    parameters: &HashMap<String, Value>,
    components: &[RankComponent<'_>],
    skip_order_by_rewrite: bool,
) -> Result<Json, Unsupported> {
    let root = rewrite::root_alias(query)?;
    let Some(rank) = query.order_by.first().filter(|_| query.order_by_rank) else {
        return Err(Unsupported("ORDER BY RANK without a score"));
    };
    let (calls, weighted) = scores(&rank.expr);
    if calls.len() != components.len() {
        return Err(Unsupported("ORDER BY RANK over scores the engine binds otherwise"));
    }
    let rewrite::Counts { top, offset: skip, limit } = rewrite::counts(query, parameters)?;
    // Without TOP or LIMIT the service takes 2^31 rows, and its window would be 2^32 (a plan the
    // .NET SDK's QueryPlanRetrieverTests record), a count TOP refuses: here the largest it takes.
    let take = top.or(limit).unwrap_or(1 << 31);
    let window = fusion_window(skip.unwrap_or(0).saturating_add(take)).min(u64::from(u32::MAX));
    let texts: Vec<String> = calls.iter().zip(components).enumerate().map(|(i, (e, c))| score_text(i, e, c)).collect();
    let from = query.from.as_ref().map(|f| format!(" FROM {}", f.source)).unwrap_or_default();
    let payload = rewrite::payload(query, root);
    let conditions = rewrite::where_text(query);
    let optimized = skip_order_by_rewrite && components.len() > 1;
    let scores_of = |negate_ascending: bool| -> String {
        let items: Vec<String> = texts
            .iter()
            .zip(components)
            .map(|(t, c)| match (c.descending, negate_ascending) {
                (false, true) => format!("(-1 * ({t} ?? {}))", format_number(c.fallback_score())),
                _ => format!("({t} ?? {})", format_number(c.fallback_score())),
            })
            .collect();
        format!("[{}]", items.join(", "))
    };
    // The window: TOP, or OFFSET 0 LIMIT when the query skips (the client skips after fusing).
    let (top_clause, limit_clause) = match skip {
        None => (format!("TOP {window} "), String::new()),
        Some(_) => (String::new(), format!(" OFFSET 0 LIMIT {window}")),
    };
    let where_clause = |conditions: &[String]| match conditions {
        [] => String::new(),
        c => format!(" WHERE {}", c.join(" AND ")),
    };
    let component_infos: Vec<Json> = texts
        .iter()
        .zip(components)
        .map(|(text, c)| {
            let order = format!(" ORDER BY {text}{}{limit_clause}", direction_keyword(c));
            if optimized {
                let sql = format!(
                    "SELECT {top_clause}{root}._rid, {payload} AS payload, {} AS componentScores{from}{}{order}",
                    scores_of(true),
                    where_clause(&conditions)
                );
                return component_info(sql, None, (None, None));
            }
            // A single component's payload carries no scores when the client skips the rewrite.
            let component_scores = if skip_order_by_rewrite { "[]".to_string() } else { scores_of(false) };
            let mut filtered = conditions.clone();
            filtered.push(format!("({ORDER_BY_FILTER})"));
            let sql = format!(
                r#"SELECT {top_clause}{root}._rid, [{{"item": {text}}}] AS orderByItems, {{"payload": {payload}, "componentScores": {component_scores}}} AS payload{from}{}{order}"#,
                where_clause(&filtered)
            );
            let sort = if c.descending { "Descending" } else { "Ascending" };
            let window = if skip.is_some() { (None, Some(window)) } else { (Some(window), None) };
            component_info(sql, Some((sort, text)), window)
        })
        .collect();
    let statistics: Vec<String> = calls
        .iter()
        .zip(components)
        .filter_map(|(call, c)| {
            let terms = c.text_terms()?;
            let text = first_argument(call)?;
            let hits: Vec<String> = terms
                .iter()
                .map(|t| format!("COUNTIF(FullTextContains({text}, {}))", Json::String(t.clone())))
                .collect();
            Some(format!(
                r#"{{"totalWordCount": SUM(_FullTextWordCount({text})), "hitCounts": [{}]}}"#,
                hits.join(", ")
            ))
        })
        .collect();
    Ok(json!({
        "globalStatisticsQuery": format!(
            "SELECT COUNT(1) AS documentCount, [{}] AS fullTextStatistics{from}",
            statistics.join(", ")
        ),
        "componentQueryInfos": component_infos,
        "componentWithoutPayloadQueryInfos": [],
        "projectionQueryInfo": null,
        "componentWeights": if weighted { components.iter().map(|c| c.weight).collect() } else { Vec::new() },
        "skip": skip,
        "take": take,
        "requiresGlobalStatistics": components.iter().any(|c| c.text_terms().is_some()),
    }))
}

/// The scores of a ranking (the RRF's arguments, or the one score) and whether weights follow.
fn scores(e: &Expr) -> (Vec<&Expr>, bool) {
    match &e.kind {
        ExprKind::Call { name, args, .. } if name.name.eq_ignore_ascii_case("RRF") => {
            let calls: Vec<&Expr> = args.iter().filter(|a| matches!(a.kind, ExprKind::Call { .. })).collect();
            let weighted = calls.len() < args.len();
            (calls, weighted)
        }
        _ => (vec![e], false),
    }
}

fn first_argument(call: &Expr) -> Option<String> {
    match &call.kind {
        ExprKind::Call { args, .. } => args.first().map(|a| a.to_string()),
        _ => None,
    }
}

/// Component `i`'s score as the ranges compute it: `_FullTextScore` with the statistics'
/// placeholders (numbered by component, as the service numbers them and the SDKs replace them),
/// or `_VectorScore` with VectorDistance's arguments.
fn score_text(i: usize, call: &Expr, c: &RankComponent<'_>) -> String {
    let ExprKind::Call { args, .. } = &call.kind else { return call.to_string() };
    match c.text_terms() {
        Some(terms) => {
            let text = args.first().map(|a| a.to_string()).unwrap_or_default();
            let terms: Vec<String> = terms.iter().map(|t| Json::String(t.clone()).to_string()).collect();
            format!(
                "_FullTextScore({text}, [{}], {DOCUMENT_COUNT}, {}, {})",
                terms.join(", "),
                word_count_placeholder(i),
                hit_counts_placeholder(i)
            )
        }
        None => {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            format!("_VectorScore({})", args.join(", "))
        }
    }
}

/// What a component's ORDER BY says after its score: a text score `DESC`; a vector score nothing
/// in its natural direction (most similar first, as VectorDistance), else the direction.
fn direction_keyword(c: &RankComponent<'_>) -> &'static str {
    match (c.text_terms(), c.descending) {
        (Some(_), true) => " DESC",
        (Some(_), false) => " ASC",
        (None, true) => "",
        (None, false) => " ASC",
    }
}

/// A component's `queryInfo`: an ORDER BY (`order`: direction and expression) or, in the second
/// form, none; its window as TOP or as OFFSET 0 LIMIT.
fn component_info(rewritten: String, order: Option<(&str, &String)>, (top, limit): (Option<u64>, Option<u64>)) -> Json {
    json!({
        "distinctType": "None",
        "top": top,
        "offset": limit.map(|_| 0),
        "limit": limit,
        "orderBy": order.iter().map(|(d, _)| *d).collect::<Vec<_>>(),
        "orderByExpressions": order.iter().map(|(_, e)| e.as_str()).collect::<Vec<_>>(),
        "groupByExpressions": [],
        "groupByAliases": [],
        "aggregates": [],
        "groupByAliasToAggregateType": {},
        "rewrittenQuery": rewritten,
        "hasSelectValue": false,
        "dCountInfo": null,
        "hasNonStreamingOrderBy": order.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan of `sql` as `plan::query_plan` answers it: planned by the engine, here over a
    /// container without a vector policy (a VectorDistance is a cosine similarity, most similar
    /// first), its scores as the planner binds them.
    fn info(sql: &str, parameters: &HashMap<String, Value>, skip_order_by_rewrite: bool) -> Json {
        let client = cosmoql::CosmosClient::new();
        let properties = cosmoql::ContainerProperties::new("c", "/pk").unwrap();
        let container = client.create_database("d").unwrap().create_container(properties).unwrap();
        let options = cosmoql::QueryOptions { parameters: parameters.clone(), ..Default::default() };
        let explain = container.explain(sql, options, false).unwrap();
        let components = explain.plan.query.rank.as_ref().unwrap().components();
        hybrid_search_info(&explain.plan.syntax, parameters, &components, skip_order_by_rewrite).unwrap()
    }

    /// Every plan of `tests/data/hybrid_plans.json` (the service's, recorded by the .NET SDK),
    /// field by field.
    #[test]
    fn plans_are_the_services() {
        let data: Json = serde_json::from_str(include_str!("../tests/data/hybrid_plans.json")).unwrap();
        let cases = data["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 8);
        let one_line = |v: &Json| -> Json {
            let text = v.to_string().replace("\\n", " ");
            serde_json::from_str(&text).unwrap()
        };
        for case in cases {
            let sql = case["query"].as_str().unwrap();
            let skip = case["skipOrderByRewrite"].as_bool().unwrap();
            let got = info(sql, &HashMap::new(), skip);
            let want = one_line(&case["plan"]);
            for (field, value) in want.as_object().unwrap() {
                assert_eq!(&got[field], value, "{sql} (skip {skip}): {field}");
            }
            assert_eq!(got.as_object().unwrap().len(), want.as_object().unwrap().len(), "{sql}");
        }
    }

    /// Without TOP or LIMIT the service's take (2^31) and window (2^32); a parameter counts.
    #[test]
    fn takes_and_windows() {
        let plan = info("SELECT * FROM c ORDER BY RANK FullTextScore(c.t, 'a')", &HashMap::new(), false);
        assert_eq!(plan["take"], json!(2147483648u64));
        assert_eq!(plan["componentQueryInfos"][0]["top"], json!(4294967295u64));
        let params = HashMap::from([("n".to_string(), Value::from(5.0))]);
        let sql = "SELECT * FROM c WHERE c.k = 1 ORDER BY RANK FullTextScore(c.t, 'a') OFFSET @n LIMIT 70";
        let plan = info(sql, &params, false);
        assert_eq!((&plan["skip"], &plan["take"]), (&json!(5), &json!(70)));
        let component = &plan["componentQueryInfos"][0];
        assert_eq!((&component["offset"], &component["limit"]), (&json!(0), &json!(150)));
        let sql = component["rewrittenQuery"].as_str().unwrap();
        assert!(sql.contains(" WHERE (c.k = 1) AND ({documentdb-formattableorderbyquery-filter}) ORDER BY "), "{sql}");
        assert!(sql.ends_with(" DESC OFFSET 0 LIMIT 150"), "{sql}");
    }
}
