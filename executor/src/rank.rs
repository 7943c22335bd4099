//! `ORDER BY RANK`: ordering rows by BM25 (`FullTextScore`), vector similarity
//! (`VectorDistance`) or reciprocal rank fusion of them (`RRF`), as the service's hybrid search
//! gives them. The service never runs such a query whole: its query plan has every client run a
//! pipeline (`docs/design/hybrid-search-plans.md`), and this module is that pipeline on one
//! machine, so that a query sent whole and one merged by an SDK from the plan agree:
//!
//! 1. FullTextScore scores under statistics of the whole container ([`TextStatistics`]: every
//!    item, whatever the query's WHERE or partition key; the .NET SDK's `FullTextScoreScope.Global`,
//!    "across all documents in the container, including all physical and logical partitions").
//! 2. One score: the rows by it, best first, ties as any ORDER BY's (creation order, latest
//!    first under a descending score).
//! 3. Several: each component's best [`fusion_window`] rows (a non-streaming ORDER BY), their union;
//!    per component, dense ranks over the union (equal scores share a rank), a row without a
//!    score ranked with its plan's fallback score; each row's sum of weight / (60 + rank),
//!    highest first; equal sums by `_rid` (as the Rust client engine's `fusion.rs` leaves them).

use std::cmp::Ordering;

use cosmoql_planner::{fusion_window, BoundExpr, RankComponent, RankFn};
use cosmoql_storage::tie_order;

use crate::error::QueryError;
use crate::eval::{Eval, EvalContext};
use crate::functions::{phrase_count, relevance, tokens};
use crate::row::Row;

/// The constant k of reciprocal rank fusion, 1 / (k + rank).
const RRF_K: f64 = 60.0;

/// What FullTextScore scores under: how many items the container holds and, per text scored
/// (in component order), their words and per term the items holding it (as FullTextContains
/// matches it): the answer of the plans' `globalStatisticsQuery`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextStatistics {
    pub documents: f64,
    pub texts: Vec<(f64, Vec<f64>)>,
}

/// The full-text statistics a ranking needs, gathered row by row (`None`: it has no text score).
#[derive(Debug)]
pub struct StatisticsGatherer<'r> {
    texts: Vec<(&'r BoundExpr, Vec<Vec<String>>)>,
    statistics: TextStatistics,
}

impl<'r> StatisticsGatherer<'r> {
    pub fn new(rank: &'r RankFn) -> Option<Self> {
        let texts: Vec<(&BoundExpr, Vec<Vec<String>>)> = rank
            .components()
            .into_iter()
            .filter_map(|c| match c.score {
                RankFn::FullText { text, terms } => Some((text, terms.iter().map(|t| tokens(t)).collect())),
                _ => None,
            })
            .collect();
        if texts.is_empty() {
            return None;
        }
        let statistics =
            TextStatistics { documents: 0.0, texts: texts.iter().map(|(_, t)| (0.0, vec![0.0; t.len()])).collect() };
        Some(StatisticsGatherer { texts, statistics })
    }

    /// Counts one item (its row).
    pub fn add(&mut self, ctx: &EvalContext<'_>, row: &Row) -> Result<(), QueryError> {
        self.statistics.documents += 1.0;
        for ((text, terms), (words, hits)) in self.texts.iter().zip(&mut self.statistics.texts) {
            if let Some(t) = text.eval(ctx, row)?.as_str() {
                let t = tokens(t);
                *words += t.len() as f64;
                for (hit, term) in hits.iter_mut().zip(terms) {
                    if phrase_count(&t, term) > 0 {
                        *hit += 1.0;
                    }
                }
            }
        }
        Ok(())
    }

    pub fn finish(self) -> TextStatistics {
        self.statistics
    }
}

/// A component's score of each row (`None` where it has none: no text, no vector).
fn scores(
    component: &RankComponent<'_>,
    text_index: &mut usize,
    statistics: &TextStatistics,
    ctx: &EvalContext<'_>,
    rows: &[Row],
) -> Result<Vec<Option<f64>>, QueryError> {
    match component.score {
        RankFn::FullText { text, terms } => {
            let terms: Vec<Vec<String>> = terms.iter().map(|t| tokens(t)).collect();
            let (words, hits) = statistics.texts.get(*text_index).cloned().unwrap_or_default();
            *text_index += 1;
            rows.iter()
                .map(|r| {
                    Ok(text
                        .eval(ctx, r)?
                        .as_str()
                        .map(|t| relevance(&tokens(t), &terms, statistics.documents, words, &hits)))
                })
                .collect()
        }
        RankFn::Distance { call, .. } => rows.iter().map(|r| Ok(call.eval(ctx, r)?.as_f64())).collect(),
        RankFn::Fusion { .. } => Err(QueryError::internal("an RRF inside an RRF was bound")),
    }
}

/// Best first under `component`'s direction; a row without a score sorts as an undefined ORDER BY
/// value does (lowest); ties by creation order in that direction.
fn by_score<'s>(
    descending: bool,
    scores: &'s [Option<f64>],
    seqs: &'s [u64],
) -> impl Fn(&usize, &usize) -> Ordering + 's {
    move |a, b| {
        let o = match (scores[*a], scores[*b]) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            (x, y) => x.is_some().cmp(&y.is_some()),
        };
        let o = if descending { o.reverse() } else { o };
        o.then_with(|| tie_order(seqs[*a], seqs[*b], descending))
    }
}

/// The order of `rows` (indexes; rows left out of a fusion's windows are not in it) under `rank`,
/// the rows' items' creation sequence numbers in `seqs` and their `_rid`s given by `rid`.
pub fn rank_order(
    rank: &RankFn,
    statistics: &TextStatistics,
    rows_needed: Option<u64>,
    ctx: &EvalContext<'_>,
    rows: &[Row],
    seqs: &[u64],
    rid: &dyn Fn(usize) -> String,
) -> Result<Vec<usize>, QueryError> {
    let components = rank.components();
    let mut text_index = 0;
    let all_scores =
        components.iter().map(|c| scores(c, &mut text_index, statistics, ctx, rows)).collect::<Result<Vec<_>, _>>()?;
    let mut order: Vec<usize> = (0..rows.len()).collect();
    if let ([component], [scores]) = (&components[..], &all_scores[..]) {
        order.sort_by(by_score(component.descending, scores, seqs));
        return Ok(order);
    }
    // Each component's window, their union.
    // All of them without a limit.
    let window = rows_needed.map_or(usize::MAX, |n| usize::try_from(fusion_window(n)).unwrap_or(usize::MAX));
    let mut chosen = vec![false; rows.len()];
    for (component, scores) in components.iter().zip(&all_scores) {
        order.sort_by(by_score(component.descending, scores, seqs));
        for i in order.iter().take(window) {
            chosen[*i] = true;
        }
    }
    let union: Vec<usize> = (0..rows.len()).filter(|i| chosen[*i]).collect();
    // Dense ranks per component over the union, the fallback score standing in for none.
    let mut fused = vec![0.0; rows.len()];
    for (component, scores) in components.iter().zip(&all_scores) {
        let fallback = component.fallback_score();
        let score = |i: usize| scores[i].unwrap_or(fallback);
        let mut sorted = union.clone();
        sorted.sort_by(|a, b| {
            let o = score(*a).total_cmp(&score(*b));
            if component.descending {
                o.reverse()
            } else {
                o
            }
        });
        let mut rank = 0u64;
        let mut previous: Option<f64> = None;
        for i in sorted {
            if previous != Some(score(i)) {
                rank += 1;
                previous = Some(score(i));
            }
            fused[i] += component.weight / (RRF_K + rank as f64);
        }
    }
    let mut ranked: Vec<(usize, String)> = union.iter().map(|i| (*i, rid(*i))).collect();
    ranked.sort_by(|(a, ra), (b, rb)| fused[*b].total_cmp(&fused[*a]).then_with(|| ra.cmp(rb)));
    Ok(ranked.into_iter().map(|(i, _)| i).collect())
}
