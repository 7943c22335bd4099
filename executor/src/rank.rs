//! `ORDER BY RANK`: scoring rows with BM25 (`FullTextScore`), vector similarity
//! (`VectorDistance`) or reciprocal rank fusion (`RRF`). Scores need statistics over all the rows
//! being ranked, so ranked queries read every target partition in one pass.

use cosmoql_planner::RankFn;

use crate::error::QueryError;
use crate::eval::{Eval, EvalContext};
use crate::functions::{phrase_count, relevance, tokens};
use crate::row::Row;

/// Relevance of each row (higher first): BM25 for FullTextScore, reciprocal rank fusion for RRF.
pub fn rank_scores(rank: &RankFn, ctx: &EvalContext<'_>, rows: &[Row]) -> Result<Vec<f64>, QueryError> {
    match rank {
        RankFn::FullText { text, terms } => {
            let terms: Vec<Vec<String>> = terms.iter().map(|t| tokens(t)).collect();
            let docs: Vec<Option<Vec<String>>> =
                rows.iter().map(|r| text.eval(ctx, r).map(|v| v.as_str().map(tokens))).collect::<Result<_, _>>()?;
            // The statistics the service's hybrid search plans gather over the documents ranked
            // (`docs/design/hybrid-search-plans.md`): how many there are, their words, and per
            // term how many hold it.
            let n = rows.len() as f64;
            let words = docs.iter().flatten().map(Vec::len).sum::<usize>() as f64;
            let hits: Vec<f64> =
                terms.iter().map(|t| docs.iter().flatten().filter(|d| phrase_count(d, t) > 0).count() as f64).collect();
            Ok(docs
                .iter()
                .map(|d| d.as_ref().map_or(f64::NEG_INFINITY, |d| relevance(d, &terms, n, words, &hits)))
                .collect())
        }
        RankFn::Distance { call, similarity } => rows
            .iter()
            .map(|r| {
                Ok(match call.eval(ctx, r)?.as_f64() {
                    Some(d) if *similarity => d,
                    Some(d) => -d,
                    None => f64::NEG_INFINITY,
                })
            })
            .collect(),
        RankFn::Fusion { parts, weights } => {
            let mut total = vec![0.0; rows.len()];
            for (i, part) in parts.iter().enumerate() {
                let scores = rank_scores(part, ctx, rows)?;
                let mut order: Vec<usize> = (0..rows.len()).collect();
                order.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b)));
                let w = weights.get(i).copied().unwrap_or(1.0);
                for (position, row) in order.into_iter().enumerate() {
                    if scores[row] > f64::NEG_INFINITY {
                        total[row] += w / (60.0 + (position + 1) as f64);
                    }
                }
            }
            Ok(total)
        }
    }
}
