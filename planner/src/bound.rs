//! The bound query: what the binder ([`crate::bind`]) makes of a syntax tree. Every alias is a
//! row slot, every `@parameter` a constant, every function a [`FunctionId`] whose argument count
//! was checked, and aggregates are pulled out of the projection. The executor evaluates these
//! trees as they are; nothing in them refers back to the query text except spans for errors.

use std::cmp::Ordering;
use std::sync::Arc;

use cosmoql_parser::{BinaryOp, Span, UnaryOp};
use cosmoql_value::{LikePattern, Value, ValueSet};

use cosmoql_catalog::IndexStep;

use crate::functions::{AggregateKind, FunctionId};
use crate::policy::VectorPolicy;

/// A static step of a path.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// The kinds of subquery expressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubqueryKind {
    /// `(SELECT ...)`: the first result, undefined if none.
    Scalar,
    /// `EXISTS(SELECT ...)`
    Exists,
    /// `ARRAY(SELECT ...)`
    Array,
}

/// A bound scalar expression.
#[derive(Debug, Clone)]
pub enum BoundExpr {
    Const(Value),
    /// A whole alias (a stored item is materialized with its system properties).
    Slot(usize),
    /// `alias.a.b[0]`: read lazily from a stored item's binary form.
    Path {
        slot: usize,
        steps: Vec<Step>,
    },
    Property(Box<BoundExpr>, String),
    Index(Box<BoundExpr>, Box<BoundExpr>),
    Array(Vec<BoundExpr>),
    Object(Vec<(String, BoundExpr)>),
    Unary(UnaryOp, Box<BoundExpr>),
    Binary(BinaryOp, Box<BoundExpr>, Box<BoundExpr>),
    Between {
        expr: Box<BoundExpr>,
        low: Box<BoundExpr>,
        high: Box<BoundExpr>,
        negated: bool,
    },
    In {
        expr: Box<BoundExpr>,
        list: Vec<BoundExpr>,
        /// The list as a set, gathered once when it is long and all constants.
        set: Option<Arc<ValueSet>>,
        negated: bool,
    },
    Like {
        expr: Box<BoundExpr>,
        pattern: Box<BoundExpr>,
        /// The pattern, compiled once when it is a constant.
        compiled: Option<LikePattern>,
        escape: Option<char>,
        negated: bool,
    },
    Conditional {
        condition: Box<BoundExpr>,
        then: Box<BoundExpr>,
        otherwise: Box<BoundExpr>,
    },
    Call {
        function: FunctionId,
        args: Vec<BoundExpr>,
        /// For `VectorDistance`: the container's policy for the path of its first argument.
        vector_policy: Option<VectorPolicy>,
        /// For `ARRAY_CONTAINS`, `ARRAY_CONTAINS_ANY` and `ARRAY_CONTAINS_ALL` of a long constant
        /// array (matching whole values): its elements as a set, gathered once.
        set: Option<Arc<ValueSet>>,
        span: Span,
    },
    /// `udf.name(args)`: a user-defined function of the container, run by the executor's
    /// `UdfHost` (never served by an index).
    Udf {
        name: String,
        args: Vec<BoundExpr>,
        span: Span,
    },
    /// The value of the i-th aggregate of the current group.
    Aggregate(usize),
    /// `DocumentId(alias)`: the item's numeric id in its container (undefined for non-items).
    DocumentId(usize),
    Subquery {
        query: Box<BoundQuery>,
        kind: SubqueryKind,
    },
}

impl BoundExpr {
    /// Whether it calls a user-defined function (outside subqueries, which plan on their own).
    pub fn calls_udf(&self) -> bool {
        match self {
            BoundExpr::Udf { .. } => true,
            BoundExpr::Property(x, _) | BoundExpr::Unary(_, x) => x.calls_udf(),
            BoundExpr::Index(a, b) | BoundExpr::Binary(_, a, b) => a.calls_udf() || b.calls_udf(),
            BoundExpr::Array(items) => items.iter().any(BoundExpr::calls_udf),
            BoundExpr::Object(fields) => fields.iter().any(|(_, x)| x.calls_udf()),
            BoundExpr::Between { expr, low, high, .. } => expr.calls_udf() || low.calls_udf() || high.calls_udf(),
            BoundExpr::In { expr, list, .. } => expr.calls_udf() || list.iter().any(BoundExpr::calls_udf),
            BoundExpr::Like { expr, pattern, .. } => expr.calls_udf() || pattern.calls_udf(),
            BoundExpr::Conditional { condition, then, otherwise } => {
                condition.calls_udf() || then.calls_udf() || otherwise.calls_udf()
            }
            BoundExpr::Call { args, .. } => args.iter().any(BoundExpr::calls_udf),
            BoundExpr::Const(_)
            | BoundExpr::Slot(_)
            | BoundExpr::Path { .. }
            | BoundExpr::Aggregate(_)
            | BoundExpr::DocumentId(_)
            | BoundExpr::Subquery { .. } => false,
        }
    }
}

/// One ORDER BY item.
#[derive(Debug, Clone)]
pub struct SortKey {
    pub expr: BoundExpr,
    /// Descending. ORDER BY VectorDistance with a similarity (cosine, dot product) is descending
    /// when written ascending: the most similar first.
    pub descending: bool,
    /// The document path it sorts by (`/a/b`, `/tags/[]`), when it is one: what the indexing
    /// policy must index.
    pub path: Option<Vec<IndexStep>>,
    /// Where the query wrote it.
    pub span: Span,
}

/// Compares ORDER BY key values: the total order of values (undefined lowest), per direction.
pub fn compare_sort_keys(a: &[Value], b: &[Value], order: &[SortKey]) -> Ordering {
    for ((x, y), key) in a.iter().zip(b).zip(order) {
        let o = x.cmp(y);
        let o = if key.descending { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// One aggregate of a query: its function and argument.
#[derive(Debug, Clone)]
pub struct AggregateSpec {
    pub kind: AggregateKind,
    pub arg: BoundExpr,
}

/// A scoring function of `ORDER BY RANK`.
#[derive(Debug, Clone)]
pub enum RankFn {
    /// `FullTextScore(text, terms...)`: BM25 over the rows being ranked, higher first.
    FullText { text: BoundExpr, terms: Vec<String> },
    /// `VectorDistance(...)`: most similar first.
    Distance { call: BoundExpr, similarity: bool },
    /// `RRF(scores..., [weights])`: reciprocal rank fusion, sum of weight / (60 + rank).
    Fusion { parts: Vec<RankFn>, weights: Vec<f64> },
}

/// One score a ranking fuses (the whole ranking when it is not an RRF): what the service's hybrid
/// search plans call a component (`docs/design/hybrid-search-plans.md`).
#[derive(Debug, Clone, Copy)]
pub struct RankComponent<'a> {
    /// A `FullText` or a `Distance`.
    pub score: &'a RankFn,
    /// Best first is highest first: a text score, a similarity; a distance (Euclidean) is best
    /// lowest. A negative RRF weight turns its component around.
    pub descending: bool,
    /// The RRF weight's magnitude (1 without weights).
    pub weight: f64,
}

impl RankComponent<'_> {
    /// A FullTextScore's terms (`None` for a VectorDistance).
    pub fn text_terms(&self) -> Option<&[String]> {
        match self.score {
            RankFn::FullText { terms, .. } => Some(terms),
            _ => None,
        }
    }

    /// The score the service's plans give a row this component cannot score (`?? -1` after a
    /// text score, `?? -1.79769e+308` after a vector score, `?? 1.79769e+308` under an ascending
    /// order), so that it ranks after every scored row.
    pub fn fallback_score(&self) -> f64 {
        match (self.descending, self.score) {
            (true, RankFn::FullText { .. }) => -1.0,
            (true, _) => -1.79769e308,
            (false, _) => 1.79769e308,
        }
    }
}

/// The rows each component contributes to a fusion when `rows` are wanted (OFFSET + LIMIT, or
/// TOP): 2 × max(rows, 60), as the service's plans size their component queries (`TOP 120` for
/// `TOP 10`).
pub fn fusion_window(rows: u64) -> u64 {
    rows.max(60).saturating_mul(2)
}

impl RankFn {
    /// The scores ranked, in order, with their direction and weight, as the service's plans give
    /// them (`componentWeights` hold the magnitudes; a negative weight orders its component
    /// ascending: the .NET SDK's QueryPlanRetrieverTests, `RRF(..., [1, -0.3])`).
    pub fn components(&self) -> Vec<RankComponent<'_>> {
        let natural = |score: &RankFn| match score {
            RankFn::Distance { similarity, .. } => *similarity,
            _ => true,
        };
        match self {
            RankFn::Fusion { parts, weights } => parts
                .iter()
                .enumerate()
                .map(|(i, score)| {
                    let w = weights.get(i).copied().unwrap_or(1.0);
                    RankComponent { score, descending: natural(score) != (w < 0.0), weight: w.abs() }
                })
                .collect(),
            score => vec![RankComponent { score, descending: natural(score), weight: 1.0 }],
        }
    }
}

/// Where a FROM/JOIN source's rows come from.
#[derive(Debug, Clone)]
pub enum SourceKind {
    /// Each item of the input: the alias binds the item itself (`FROM c`).
    Items,
    /// The value at `steps` of each input item, skipped when undefined (`FROM c.children[0] ch`).
    ItemPath { root: usize, steps: Vec<Step> },
    /// Each element of an array computed from each input item (`FROM t IN c.tags`).
    ItemIterate { root: usize, array: BoundExpr },
    /// A value computed from the row so far: one row if defined (`JOIN c.address a`).
    Value(BoundExpr),
    /// Each element of an array computed from the row so far (`JOIN t IN c.tags`).
    Iterate(BoundExpr),
    /// Each result of a subquery (`FROM (SELECT ...) x`, `JOIN (SELECT ...) x`).
    Subquery(Box<BoundQuery>),
}

/// One FROM or JOIN source: the slot its alias binds and where its rows come from.
#[derive(Debug, Clone)]
pub struct Source {
    pub slot: usize,
    pub kind: SourceKind,
}

/// What SELECT returns.
#[derive(Debug, Clone)]
pub enum BoundProjection {
    /// `SELECT *`: the value of the single source's alias.
    Star(usize),
    Value(BoundExpr),
    List(Vec<(String, BoundExpr)>),
}

/// A bound query, top level or subquery.
#[derive(Debug, Clone)]
pub struct BoundQuery {
    pub sources: Vec<Source>,
    /// Whether the first source reads the container's items (otherwise it reads outer aliases).
    pub reads_items: bool,
    pub filter: Option<BoundExpr>,
    pub projection: BoundProjection,
    pub distinct: bool,
    pub order_by: Vec<SortKey>,
    /// `ORDER BY RANK ...`: the scoring to rank rows by.
    pub rank: Option<RankFn>,
    pub group_by: Option<Vec<BoundExpr>>,
    pub aggregates: Vec<AggregateSpec>,
    pub offset: u64,
    pub limit: Option<u64>,
    /// Slots of the enclosing queries (their rows are the prefix of this query's rows).
    pub base: usize,
    /// Slots of a row of this query, the enclosing queries' included.
    pub slots: usize,
}

impl BoundQuery {
    /// Whether the container's items go through a FROM subquery first (`FROM (SELECT ...) x`),
    /// whose own DISTINCT, TOP or aggregates need every item in one place.
    pub fn reads_through_subquery(&self) -> bool {
        matches!(self.sources.first(), Some(Source { kind: SourceKind::Subquery(_), .. }))
    }

    /// Whether the query groups or aggregates.
    pub fn is_aggregate(&self) -> bool {
        self.group_by.is_some() || !self.aggregates.is_empty()
    }

    /// Rows any single input must deliver for the final result: OFFSET + LIMIT/TOP (saturating),
    /// unless DISTINCT (whose duplicates are only known once inputs are merged).
    pub fn rows_needed(&self) -> Option<u64> {
        if self.distinct {
            None
        } else {
            self.limit.map(|l| l.saturating_add(self.offset))
        }
    }

    /// The slot of the container's item when the first source is the container itself (`FROM c`).
    pub fn item_slot(&self) -> Option<usize> {
        match self.sources.first() {
            Some(Source { slot, kind: SourceKind::Items }) => Some(*slot),
            _ => None,
        }
    }
}
