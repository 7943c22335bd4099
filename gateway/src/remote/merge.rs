//! The client side of a distributed query: the results of each partition key range (each range
//! ran the plan's rewritten query) combined as the plan's `queryInfo` says, as the SDKs' query
//! pipelines do (`../shared/research/gateway-python.md` §6; the per-range shapes are those
//! `crate::rewrite` writes and the service returns). Equality, grouping and order are the
//! engine's total order on values (undefined < null < booleans < numbers < strings < arrays <
//! objects), which is the service's ORDER BY order.

use std::collections::HashMap;

use cosmoql::Value;

use crate::hybrid;

/// Whether a plan has anything for the client to merge (otherwise the query is sent whole).
pub fn needs_merge(info: &Value) -> bool {
    let non_empty = |name: &str| matches!(info.get(name), Value::Array(a) if !a.is_empty());
    let set = |name: &str| !matches!(info.get(name), Value::Undefined | Value::Null);
    non_empty("orderBy")
        || non_empty("aggregates")
        || non_empty("groupByExpressions")
        || matches!(info.get("groupByAliasToAggregateType"), Value::Object(m) if !m.is_empty())
        || !matches!(info.get("distinctType").as_str(), None | Some("None"))
        || set("top")
        || set("offset")
        || set("limit")
        || info.get("rewrittenQuery").as_str().is_some_and(|q| !q.is_empty())
}

/// Combines the ranges' results (`per_range`, in range order) into the query's.
pub fn merge(info: &Value, per_range: Vec<Vec<Value>>) -> Result<Vec<Value>, String> {
    let grouped = !matches!(info.get("groupByExpressions"), Value::Array(a) if a.is_empty())
        || matches!(info.get("groupByAliasToAggregateType"), Value::Object(m) if !m.is_empty())
        || matches!(info.get("aggregates"), Value::Array(a) if !a.is_empty());
    let ordered = matches!(info.get("orderBy"), Value::Array(a) if !a.is_empty());
    let mut rows: Vec<Value> = if grouped {
        group(info, per_range.into_iter().flatten())?
    } else if ordered {
        order(info, per_range)
    } else {
        per_range.into_iter().flatten().collect()
    };
    match info.get("distinctType").as_str() {
        Some("Ordered") => rows.dedup(),
        Some("Unordered") => {
            let mut seen = std::collections::HashSet::new();
            rows.retain(|r| seen.insert(r.clone()));
        }
        _ => {}
    }
    let count = |name: &str| info.get(name).as_f64().map(|n| n.max(0.0) as usize);
    let offset = count("offset").unwrap_or(0);
    let take = match (count("top"), count("limit")) {
        (Some(top), _) => top,
        (None, Some(limit)) => limit,
        (None, None) => usize::MAX,
    };
    Ok(rows.into_iter().skip(offset).take(take).collect())
}

/// ORDER BY: each range's rows are sorted; a stable sort of all of them by their `orderByItems`
/// (range order breaking ties, as a k-way merge does) gives the order, and each row's payload is
/// the result.
fn order(info: &Value, per_range: Vec<Vec<Value>>) -> Vec<Value> {
    sorted_rows(info, per_range)
        .into_iter()
        .map(|row| row.get("payload").clone())
        .filter(|p| !matches!(p, Value::Undefined))
        .collect()
}

/// The ranges' ORDER BY rows (`_rid`, `orderByItems`, `payload`) in the merged order.
fn sorted_rows(info: &Value, per_range: Vec<Vec<Value>>) -> Vec<Value> {
    let descending: Vec<bool> = match info.get("orderBy") {
        Value::Array(a) => a.iter().map(|d| d.as_str() == Some("Descending")).collect(),
        _ => Vec::new(),
    };
    let keys = |row: &Value| -> Vec<Value> {
        match row.get("orderByItems") {
            Value::Array(items) => items.iter().map(|i| i.get("item").clone()).collect(),
            _ => Vec::new(),
        }
    };
    let mut rows: Vec<(Vec<Value>, Value)> = per_range.into_iter().flatten().map(|row| (keys(&row), row)).collect();
    rows.sort_by(|(a, _), (b, _)| {
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            let o = x.cmp(y);
            let o = if descending.get(i).copied().unwrap_or(false) { o.reverse() } else { o };
            if o.is_ne() {
                return o;
            }
        }
        std::cmp::Ordering::Equal
    });
    rows.into_iter().map(|(_, row)| row).collect()
}

/// The placeholders of a hybrid search component's query replaced by the statistics its
/// `globalStatisticsQuery` gathered (`stats`: the ranges' answers), as the SDKs replace them: the
/// document count, and for the components that score text, in order, the next statistics entry
/// (the .NET SDK's `FormatComponentQueryTextWorkaround`, @azure/cosmos's
/// `replacePlaceholdersWorkaroud`); the ORDER BY filter `true`.
pub fn hybrid_component_query(text: &str, stats: &[Value], components: usize) -> String {
    let documents: f64 = stats.iter().map(|s| s.get("documentCount").as_f64().unwrap_or(0.0)).sum();
    let mut sql =
        text.replace(hybrid::DOCUMENT_COUNT, &format_count(documents)).replace(crate::rewrite::ORDER_BY_FILTER, "true");
    let mut entry = 0;
    for i in 0..components {
        let words_placeholder = hybrid::word_count_placeholder(i);
        if !sql.contains(&words_placeholder) {
            continue;
        }
        let mut words = 0.0;
        let mut hits: Vec<f64> = Vec::new();
        for s in stats {
            let entry = s.get("fullTextStatistics").index(entry);
            words += entry.get("totalWordCount").as_f64().unwrap_or(0.0);
            if let Value::Array(h) = entry.get("hitCounts") {
                hits.resize(hits.len().max(h.len()), 0.0);
                for (total, h) in hits.iter_mut().zip(h.iter()) {
                    *total += h.as_f64().unwrap_or(0.0);
                }
            }
        }
        let hits: Vec<String> = hits.into_iter().map(format_count).collect();
        sql = sql
            .replace(&words_placeholder, &format_count(words))
            .replace(&hybrid::hit_counts_placeholder(i), &format!("[{}]", hits.join(",")));
        entry += 1;
    }
    sql
}

fn format_count(n: f64) -> String {
    format!("{}", n.max(0.0) as u64)
}

/// Fuses the results of a hybrid search plan's components (`per_component`: each one's rows per
/// range), as the SDKs' hybrid pipelines do: a component with an ORDER BY merged across ranges
/// and cut to its window, one without (the second form) concatenated; one component, its
/// payloads in order; several, the rows deduplicated by `_rid`, per component dense ranks over
/// them by the scores in `componentScores` (highest first unless its ORDER BY is ascending), the
/// sum of weight / (60 + rank) highest first, equal sums by `_rid`; then skip and take.
pub fn hybrid(info: &Value, per_component: Vec<Vec<Vec<Value>>>) -> Result<Vec<Value>, String> {
    let infos: Vec<&Value> = match info.get("componentQueryInfos") {
        Value::Array(a) => a.iter().collect(),
        _ => return Err("the hybrid search plan has no componentQueryInfos".into()),
    };
    if infos.len() != per_component.len() {
        return Err("a hybrid search component without results".into());
    }
    let count = |v: &Value, name: &str| v.get(name).as_f64().map(|n| n.max(0.0) as usize);
    // Each row: (_rid, data, scores).
    let mut components: Vec<Vec<(Value, Value, Vec<f64>)>> = Vec::new();
    for (component, per_range) in infos.iter().zip(per_component) {
        let ordered = matches!(component.get("orderBy"), Value::Array(a) if !a.is_empty());
        let rows: Vec<Value> = if ordered {
            let window = count(component, "top").or(count(component, "limit")).unwrap_or(usize::MAX);
            sorted_rows(component, per_range).into_iter().take(window).collect()
        } else {
            per_range.into_iter().flatten().collect()
        };
        let parsed = rows
            .into_iter()
            .map(|row| {
                // The first form nests the payload beside its scores (the .NET SDK's
                // `HybridSearchQueryResult.Create` tells them apart so).
                let outer = row.get("payload");
                let (data, scores) = match outer.get("componentScores") {
                    Value::Array(_) => (outer.get("payload").clone(), outer.get("componentScores").clone()),
                    _ => (outer.clone(), row.get("componentScores").clone()),
                };
                let Value::Array(scores) = scores else { return Err("a hybrid search row without componentScores") };
                Ok((row.get("_rid").clone(), data, scores.iter().map(|s| s.as_f64().unwrap_or(f64::NAN)).collect()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        components.push(parsed);
    }
    let mut results: Vec<(Value, Value, Vec<f64>)> = if components.len() == 1 {
        components.pop().unwrap_or_default()
    } else {
        let mut seen = std::collections::HashSet::new();
        let mut rows: Vec<(Value, Value, Vec<f64>)> =
            components.into_iter().flatten().filter(|(rid, _, _)| seen.insert(rid.clone())).collect();
        let weights: Vec<f64> = match info.get("componentWeights") {
            Value::Array(w) if !w.is_empty() => w.iter().map(|x| x.as_f64().unwrap_or(1.0)).collect(),
            _ => vec![1.0; infos.len()],
        };
        let mut fused = vec![0.0; rows.len()];
        for (i, component) in infos.iter().enumerate() {
            let ascending = component.get("orderBy").index(0).as_str() == Some("Ascending");
            let mut order: Vec<usize> = (0..rows.len()).collect();
            let score = |r: usize| rows[r].2.get(i).copied().unwrap_or(f64::NAN);
            order.sort_by(|a, b| {
                let o = score(*a).total_cmp(&score(*b));
                if ascending {
                    o
                } else {
                    o.reverse()
                }
            });
            let mut rank = 0.0;
            let mut previous = None;
            for r in order {
                if previous != Some(score(r)) {
                    rank += 1.0;
                    previous = Some(score(r));
                }
                fused[r] += weights.get(i).copied().unwrap_or(1.0) / (60.0 + rank);
            }
        }
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by(|a, b| {
            fused[*b].total_cmp(&fused[*a]).then_with(|| rows[*a].0.as_str().cmp(&rows[*b].0.as_str()))
        });
        let mut taken: Vec<Option<(Value, Value, Vec<f64>)>> = rows.drain(..).map(Some).collect();
        order.into_iter().filter_map(|i| taken[i].take()).collect()
    };
    let skip = count(info, "skip").unwrap_or(0);
    let take = count(info, "take").unwrap_or(usize::MAX);
    results = results.into_iter().skip(skip).take(take).collect();
    Ok(results.into_iter().map(|(_, data, _)| data).filter(|d| !matches!(d, Value::Undefined)).collect())
}

/// A partial aggregate of one range: `{"item": v}` or, for MIN/MAX, `{"item2": {"min"|"max": v,
/// "count": n}}`; AVG's item is `{"sum", "count"}`.
fn partial(v: &Value) -> Value {
    match v.get("item2") {
        Value::Undefined => v.get("item").clone(),
        item2 => item2.clone(),
    }
}

/// One aggregate being combined across ranges.
#[derive(Debug, Clone)]
enum Combined {
    Count(f64),
    Sum(Option<f64>, bool),
    Extreme {
        max: bool,
        best: Value,
    },
    Average {
        sum: f64,
        count: f64,
    },
    List(Vec<Value>),
    Set(Vec<Value>),
    /// A group key or another non-aggregate item: the first range's value.
    First(Value),
}

impl Combined {
    fn new(kind: Option<&str>) -> Combined {
        match kind {
            Some("Count") | Some("CountIf") => Combined::Count(0.0),
            Some("Sum") => Combined::Sum(None, false),
            Some("Min") => Combined::Extreme { max: false, best: Value::Undefined },
            Some("Max") => Combined::Extreme { max: true, best: Value::Undefined },
            Some("Average") => Combined::Average { sum: 0.0, count: 0.0 },
            Some("MakeList") => Combined::List(Vec::new()),
            Some("MakeSet") => Combined::Set(Vec::new()),
            _ => Combined::First(Value::Undefined),
        }
    }

    fn add(&mut self, v: &Value) {
        match self {
            Combined::First(first) => {
                if matches!(first, Value::Undefined) {
                    *first = partial(v);
                }
            }
            Combined::Count(n) => *n += partial(v).as_f64().unwrap_or(0.0),
            Combined::Sum(total, poisoned) => match partial(v) {
                Value::Undefined => {}
                Value::Number(x) => *total = Some(total.unwrap_or(0.0) + x),
                // A range's SUM over non-numbers is undefined: so is the whole.
                _ => *poisoned = true,
            },
            Combined::Extreme { max, best } => {
                let p = partial(v);
                let candidate = match p.get("count").as_f64() {
                    Some(_) => p.get(if *max { "max" } else { "min" }).clone(),
                    None => p,
                };
                if matches!(candidate, Value::Undefined) {
                    return;
                }
                let better =
                    matches!(best, Value::Undefined) || if *max { candidate > *best } else { candidate < *best };
                if better {
                    *best = candidate;
                }
            }
            Combined::Average { sum, count } => {
                let p = partial(v);
                if let (Some(s), Some(c)) = (p.get("sum").as_f64(), p.get("count").as_f64()) {
                    *sum += s;
                    *count += c;
                }
            }
            Combined::List(all) | Combined::Set(all) => {
                if let Value::Array(items) = partial(v) {
                    all.extend(items.iter().cloned());
                }
            }
        }
    }

    fn result(self) -> Value {
        match self {
            Combined::First(v) | Combined::Extreme { best: v, .. } => v,
            Combined::Count(n) => Value::from(n),
            Combined::Sum(Some(total), false) => Value::from(total),
            Combined::Sum(..) => Value::Undefined,
            Combined::Average { count, .. } if count <= 0.0 => Value::Undefined,
            Combined::Average { sum, count } => Value::from(sum / count),
            Combined::List(all) => Value::array(all),
            Combined::Set(mut all) => {
                let mut seen = std::collections::HashSet::new();
                all.retain(|v| seen.insert(v.clone()));
                Value::array(all)
            }
        }
    }
}

/// Aggregates and GROUP BY: rows are grouped by their `groupByItems` (one group without GROUP
/// BY), each alias (or the VALUE aggregate) combined across ranges.
fn group(info: &Value, rows: impl Iterator<Item = Value>) -> Result<Vec<Value>, String> {
    let value = info.get("hasSelectValue") == &Value::Bool(true);
    let value_kind = match info.get("aggregates") {
        Value::Array(a) => a.first().and_then(|k| k.as_str()).map(str::to_string),
        _ => None,
    };
    let aliases: HashMap<String, Option<String>> = match info.get("groupByAliasToAggregateType") {
        Value::Object(m) => m.iter().map(|(k, v)| (k.to_string(), v.as_str().map(str::to_string))).collect(),
        _ => HashMap::new(),
    };
    let order: Vec<String> = match info.get("groupByAliases") {
        Value::Array(a) => a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    };
    let mut groups: Vec<(Value, Vec<(String, Combined)>)> = Vec::new();
    let mut index: HashMap<Value, usize> = HashMap::new();
    for row in rows {
        let (key, payload) = match row.get("groupByItems") {
            Value::Undefined => (
                Value::Undefined,
                if row.get("payload") == &Value::Undefined { row.clone() } else { row.get("payload").clone() },
            ),
            keys => (keys.clone(), row.get("payload").clone()),
        };
        let slot = *index.entry(key.clone()).or_insert_with(|| {
            groups.push((key, Vec::new()));
            groups.len() - 1
        });
        let combined = &mut groups[slot].1;
        if value {
            // A VALUE aggregate's partial is `[{"item": ...}]`; a VALUE group key the value itself.
            let (name, item) = match (&value_kind, &payload) {
                (Some(_), Value::Array(a)) => ("", a.first().cloned().unwrap_or(Value::Undefined)),
                (Some(_), _) => ("", Value::Undefined),
                (None, p) => ("", Value::object([("item", p.clone())])),
            };
            if combined.is_empty() {
                combined.push((name.to_string(), Combined::new(value_kind.as_deref())));
            }
            combined[0].1.add(&item);
            continue;
        }
        let Value::Object(fields) = &payload else {
            return Err(format!("a range returned a GROUP BY row whose payload is not an object: {payload}"));
        };
        for (name, v) in fields.iter() {
            let kind = aliases.get(name.as_str()).cloned().flatten();
            let item = if kind.is_some() { v.clone() } else { Value::object([("item", v.clone())]) };
            match combined.iter_mut().find(|(n, _)| n == name.as_str()) {
                Some((_, c)) => c.add(&item),
                None => {
                    let mut c = Combined::new(kind.as_deref());
                    c.add(&item);
                    combined.push((name.to_string(), c));
                }
            }
        }
    }
    Ok(groups
        .into_iter()
        .filter_map(|(_, mut combined)| {
            if value {
                return combined.pop().map(|(_, c)| c.result()).filter(|v| !matches!(v, Value::Undefined));
            }
            combined.sort_by_key(|(name, _)| order.iter().position(|o| o == name).unwrap_or(usize::MAX));
            let fields = combined
                .into_iter()
                .map(|(name, c)| (name, c.result()))
                .filter(|(_, v)| !matches!(v, Value::Undefined));
            Some(Value::object(fields))
        })
        .collect())
}
