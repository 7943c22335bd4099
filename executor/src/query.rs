//! Compiling a parsed query (resolving aliases, parameters and functions, with spans in errors)
//! and running it over a sequence of stored items: FROM and JOIN expansion, WHERE, GROUP BY and
//! aggregates, ORDER BY, DISTINCT, OFFSET/LIMIT and TOP, and the projection.
//!
//! The operators work on any sequence of items, so the same compiled query runs over one
//! partition's items or over the whole container.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, HashSet};

use cosmoql_parser::{
    Collection, Count, Expr, ExprKind, FromSource, Literal, PathSegment, Projection, Query, SortDirection, Span,
};
use cosmoql_storage::{ItemPosition, StoredItem};
use cosmoql_value::indexmap::IndexMap;
use cosmoql_value::{Map, Value};

use crate::error::QueryError;
use crate::eval::{binary, unary, Binding, CExpr, EvalContext, ItemContext, LikePattern, Row, Step, SubqueryKind};
use crate::functions::{lookup, FunctionContext, VectorPolicy};

/// What compilation needs besides the query.
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// Values of `@parameters`, by name without `@`.
    pub parameters: HashMap<String, Value>,
    /// The container's vector embedding policy (for `VectorDistance`).
    pub vector_policies: Vec<VectorPolicy>,
}

/// The aggregate functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggregateKind {
    Count,
    Sum,
    Avg,
    Min,
    Max,
}

impl AggregateKind {
    fn from_name(name: &str) -> Option<Self> {
        Some(match name.to_ascii_uppercase().as_str() {
            "COUNT" => AggregateKind::Count,
            "SUM" => AggregateKind::Sum,
            "AVG" => AggregateKind::Avg,
            "MIN" => AggregateKind::Min,
            "MAX" => AggregateKind::Max,
            _ => return None,
        })
    }
}

/// One aggregate of a query: its function and argument.
#[derive(Debug, Clone)]
pub struct AggregateSpec {
    pub kind: AggregateKind,
    pub arg: CExpr,
}

/// A running aggregate. Cosmos DB's rules: undefined arguments are skipped; SUM and AVG of
/// anything but numbers are undefined; MIN and MAX order mixed scalars by type (null < booleans <
/// numbers < strings) and are undefined over arrays or objects; over no rows COUNT and SUM are 0,
/// the others undefined.
#[derive(Debug, Clone, PartialEq)]
pub struct Accumulator {
    kind: AggregateKind,
    count: u64,
    sum: f64,
    /// A SUM/AVG saw a non-number, or a MIN/MAX saw an array or object.
    poisoned: bool,
    best: Option<Value>,
}

impl Accumulator {
    pub fn new(kind: AggregateKind) -> Self {
        Accumulator { kind, count: 0, sum: 0.0, poisoned: false, best: None }
    }

    pub fn add(&mut self, v: Value) {
        if v.is_undefined() {
            return;
        }
        self.count += 1;
        match self.kind {
            AggregateKind::Count => {}
            AggregateKind::Sum | AggregateKind::Avg => match v {
                Value::Number(n) => self.sum += n,
                _ => self.poisoned = true,
            },
            AggregateKind::Min | AggregateKind::Max => {
                if matches!(v, Value::Array(_) | Value::Object(_)) {
                    self.poisoned = true;
                    return;
                }
                let better = match &self.best {
                    None => true,
                    Some(b) => {
                        let o = v.cmp(b);
                        if self.kind == AggregateKind::Min {
                            o == Ordering::Less
                        } else {
                            o == Ordering::Greater
                        }
                    }
                };
                if better {
                    self.best = Some(v);
                }
            }
        }
    }

    /// Folds another partial result of the same aggregate into this one.
    pub fn merge(&mut self, other: &Accumulator) {
        self.count += other.count;
        self.sum += other.sum;
        self.poisoned |= other.poisoned;
        if let Some(b) = &other.best {
            self.add_best(b.clone());
        }
    }

    fn add_best(&mut self, v: Value) {
        let keep = match &self.best {
            None => true,
            Some(b) => (self.kind == AggregateKind::Min) == (v.cmp(b) == Ordering::Less),
        };
        if keep {
            self.best = Some(v);
        }
    }

    pub fn result(&self) -> Value {
        match self.kind {
            AggregateKind::Count => Value::from(self.count as f64),
            _ if self.poisoned => Value::Undefined,
            AggregateKind::Sum => Value::from(self.sum),
            AggregateKind::Avg if self.count == 0 => Value::Undefined,
            AggregateKind::Avg => Value::from(self.sum / self.count as f64),
            AggregateKind::Min | AggregateKind::Max => self.best.clone().unwrap_or(Value::Undefined),
        }
    }
}

/// A scoring function of `ORDER BY RANK`.
#[derive(Debug, Clone)]
enum RankFn {
    /// `FullTextScore(text, terms...)`: BM25 over the rows being ranked, higher first.
    FullText { text: CExpr, terms: Vec<String> },
    /// `VectorDistance(...)` inside RRF: most similar first.
    Distance { call: CExpr, similarity: bool },
    /// `RRF(scores..., [weights])`: reciprocal rank fusion, sum of weight / (60 + rank).
    Fusion { parts: Vec<RankFn>, weights: Vec<f64> },
}

/// Where a FROM/JOIN source's rows come from.
#[derive(Debug, Clone)]
enum SourceKind {
    /// Each item of the input: the alias binds the item itself (`FROM c`).
    Items,
    /// The value at `steps` of each input item, skipped when undefined (`FROM c.children[0] ch`).
    ItemPath { root: usize, steps: Vec<Step> },
    /// Each element of an array computed from each input item (`FROM t IN c.tags`).
    ItemIterate { root: usize, array: CExpr },
    /// A value computed from the row so far: one row if defined (`JOIN c.address a`).
    Value(CExpr),
    /// Each element of an array computed from the row so far (`JOIN t IN c.tags`).
    Iterate(CExpr),
    /// Each result of a subquery (`FROM (SELECT ...) x`, `JOIN (SELECT ...) x`).
    Subquery(Box<CompiledQuery>),
}

#[derive(Debug, Clone)]
struct Source {
    slot: usize,
    kind: SourceKind,
}

#[derive(Debug, Clone)]
enum CProjection {
    /// `SELECT *`: the value of the single source's alias.
    Star(usize),
    Value(CExpr),
    List(Vec<(String, CExpr)>),
}

/// A query ready to run.
#[derive(Debug, Clone)]
pub struct CompiledQuery {
    sources: Vec<Source>,
    /// Whether the first source reads the input items (otherwise it reads outer aliases).
    reads_items: bool,
    filter: Option<CExpr>,
    projection: CProjection,
    distinct: bool,
    order_by: Vec<(CExpr, bool)>,
    /// `ORDER BY RANK ...`: the scoring to rank rows by.
    rank: Option<RankFn>,
    group_by: Option<Vec<CExpr>>,
    aggregates: Vec<AggregateSpec>,
    offset: u64,
    limit: Option<u64>,
    /// Slots of the enclosing queries (their rows are the prefix of this query's rows).
    base: usize,
    slots: usize,
}

impl CompiledQuery {
    /// Whether the query reads the container's items (as opposed to only outer aliases).
    pub fn reads_items(&self) -> bool {
        self.reads_items
    }

    /// Whether the container's items go through a FROM subquery first (`FROM (SELECT ...) x`),
    /// whose own DISTINCT, TOP or aggregates need every item in one place.
    pub fn reads_through_subquery(&self) -> bool {
        matches!(self.sources.first(), Some(Source { kind: SourceKind::Subquery(_), .. }))
    }

    /// Whether the query ranks (`ORDER BY RANK`), which needs all rows in one place.
    pub fn is_ranked(&self) -> bool {
        self.rank.is_some()
    }

    /// Whether the query has DISTINCT.
    pub fn is_distinct(&self) -> bool {
        self.distinct
    }

    /// Whether the query has ORDER BY.
    pub fn is_ordered(&self) -> bool {
        !self.order_by.is_empty()
    }

    /// ORDER BY expressions with their directions (true: descending).
    pub(crate) fn order_by(&self) -> &[(CExpr, bool)] {
        &self.order_by
    }

    /// Rows any single input must deliver for the final result: OFFSET + LIMIT/TOP, unless
    /// DISTINCT (whose duplicates are only known once inputs are merged).
    pub fn rows_needed(&self) -> Option<u64> {
        if self.distinct {
            None
        } else {
            self.limit.map(|l| l + self.offset)
        }
    }

    /// Whether the query groups or aggregates.
    pub fn is_aggregate(&self) -> bool {
        self.group_by.is_some() || !self.aggregates.is_empty()
    }

    /// The equalities `alias.a.b = constant` among the top-level AND terms of WHERE, where `alias`
    /// is the container item itself (`FROM c`): every result's item satisfies them, so they can
    /// pin the partition key or the id.
    pub fn item_equalities(&self) -> Vec<(Vec<String>, Value)> {
        let Some(Source { slot, kind: SourceKind::Items }) = self.sources.first() else { return vec![] };
        let mut terms = Vec::new();
        if let Some(f) = &self.filter {
            conjuncts(f, &mut terms);
        }
        terms
            .into_iter()
            .filter_map(|t| {
                let CExpr::Binary(cosmoql_parser::BinaryOp::Eq, l, r) = t else { return None };
                let (path, value) = match (l.as_ref(), r.as_ref()) {
                    (CExpr::Path { slot: s, steps }, CExpr::Const(v))
                    | (CExpr::Const(v), CExpr::Path { slot: s, steps })
                        if s == slot =>
                    {
                        (steps, v)
                    }
                    _ => return None,
                };
                let keys = path
                    .iter()
                    .map(|step| match step {
                        Step::Key(k) => Some(k.clone()),
                        Step::Index(_) => None,
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some((keys, value.clone()))
            })
            .collect()
    }
}

fn conjuncts<'e>(e: &'e CExpr, out: &mut Vec<&'e CExpr>) {
    match e {
        CExpr::Binary(cosmoql_parser::BinaryOp::And, l, r) => {
            conjuncts(l, out);
            conjuncts(r, out);
        }
        other => out.push(other),
    }
}

// ---- compilation ----------------------------------------------------------------------------------

struct Scope {
    names: Vec<(String, usize)>,
    slots: usize,
}

impl Scope {
    fn resolve(&self, name: &str) -> Option<usize> {
        self.names.iter().rev().find(|(n, _)| n == name).map(|(_, s)| *s)
    }
}

struct Compiler<'a> {
    options: &'a CompileOptions,
}

/// Compiles a parsed query.
pub fn compile(query: &Query, options: &CompileOptions) -> Result<CompiledQuery, QueryError> {
    let scope = Scope { names: vec![], slots: 0 };
    Compiler { options }.query(query, &scope, true)
}

impl Compiler<'_> {
    fn query(&self, q: &Query, outer: &Scope, top_level: bool) -> Result<CompiledQuery, QueryError> {
        let mut scope = Scope { names: outer.names.clone(), slots: outer.slots };
        let base = outer.slots;
        let mut sources = Vec::new();
        let mut reads_items = false;
        if let Some(from) = &q.from {
            let (source, reads) = self.first_source(&from.source, &mut scope, top_level)?;
            reads_items = reads;
            sources.push(source);
            for join in &from.joins {
                let source = self.join_source(join, &mut scope)?;
                sources.push(source);
            }
        }
        let filter = q.where_clause.as_ref().map(|w| self.expr(w, &scope, None)).transpose()?;
        let mut aggregates = Vec::new();
        let projection = match &q.select.projection {
            Projection::Star(span) => {
                if sources.is_empty() {
                    return Err(QueryError::bind("SELECT * needs a FROM clause", *span));
                }
                if sources.len() > 1 {
                    return Err(QueryError::bind("SELECT * is only valid with a single input set (no JOIN)", *span));
                }
                CProjection::Star(sources[0].slot)
            }
            Projection::Value(e) => CProjection::Value(self.expr(e, &scope, Some(&mut aggregates))?),
            Projection::List(items) => {
                let mut out: Vec<(String, CExpr)> = Vec::new();
                let mut unnamed = 0;
                for item in items {
                    let name = match &item.alias {
                        Some(a) => a.name.clone(),
                        None => match inferred_name(&item.expr) {
                            Some(n) => n,
                            None => {
                                unnamed += 1;
                                format!("${unnamed}")
                            }
                        },
                    };
                    if out.iter().any(|(n, _)| *n == name) {
                        return Err(QueryError::bind(
                            format!("the property `{name}` is projected more than once; give one an alias with AS"),
                            item.span,
                        ));
                    }
                    out.push((name, self.expr(&item.expr, &scope, Some(&mut aggregates))?));
                }
                CProjection::List(out)
            }
        };
        let group_by = if q.group_by.is_empty() {
            None
        } else {
            Some(q.group_by.iter().map(|e| self.expr(e, &scope, None)).collect::<Result<Vec<_>, _>>()?)
        };
        let mut order_by = Vec::new();
        let mut rank = None;
        if q.order_by_rank {
            match q.order_by.as_slice() {
                [item] => rank = Some(self.rank_fn(&item.expr, &scope, true)?),
                _ => {
                    return Err(QueryError::bind(
                        "ORDER BY RANK takes one scoring function (FullTextScore or RRF)",
                        q.order_by.first().map_or(q.span, |i| i.span),
                    ))
                }
            }
        }
        for item in q.order_by.iter().filter(|_| !q.order_by_rank) {
            let e = self.expr(&item.expr, &scope, Some(&mut aggregates))?;
            let mut desc = item.direction == Some(SortDirection::Desc);
            // ORDER BY VectorDistance sorts the most similar first: descending for the similarity
            // functions (cosine, dot product), ascending for euclidean distance.
            if vector_similarity(&e) {
                desc = !desc;
            }
            order_by.push((e, desc));
        }
        let count = |c: &Count| -> Result<u64, QueryError> {
            match c {
                Count::Literal { value, .. } => Ok(*value),
                Count::Parameter(p) => match self.options.parameters.get(&p.name) {
                    Some(Value::Number(n)) if *n >= 0.0 && n.fract() == 0.0 => Ok(*n as u64),
                    Some(other) => Err(QueryError::bind(
                        format!("@{} must be a non-negative integer here, not {other}", p.name),
                        p.span,
                    )),
                    None => Err(QueryError::bind(format!("the parameter @{} is not defined", p.name), p.span)),
                },
            }
        };
        let top = q.select.top.as_ref().map(count).transpose()?;
        let (mut offset, mut limit) = (0, None);
        if let Some(ol) = &q.offset_limit {
            offset = count(&ol.offset)?;
            limit = Some(count(&ol.limit)?);
        }
        if let Some(t) = top {
            limit = Some(limit.map_or(t, |l| l.min(t)));
        }
        Ok(CompiledQuery {
            sources,
            reads_items,
            filter,
            projection,
            distinct: q.select.distinct,
            order_by,
            rank,
            group_by,
            aggregates,
            offset,
            limit,
            base,
            slots: scope.slots,
        })
    }

    fn new_slot(scope: &mut Scope, name: Option<&str>) -> usize {
        let slot = scope.slots;
        scope.slots += 1;
        if let Some(n) = name {
            scope.names.push((n.to_string(), slot));
        }
        slot
    }

    /// The first FROM source. Its root name means the container, unless (in a subquery) it names
    /// an alias of an outer query.
    fn first_source(
        &self,
        source: &FromSource,
        scope: &mut Scope,
        top_level: bool,
    ) -> Result<(Source, bool), QueryError> {
        match source {
            FromSource::Aliased { collection: Collection::Subquery(q), alias, .. } => {
                let inner = self.query(q, &Scope { names: vec![], slots: 0 }, false)?;
                let slot = Self::new_slot(scope, alias.as_ref().map(|a| a.name.as_str()));
                let reads = inner.reads_items;
                Ok((Source { slot, kind: SourceKind::Subquery(Box::new(inner)) }, reads))
            }
            FromSource::Aliased { collection: Collection::Path { root, path, .. }, alias, .. } => {
                let steps = path_steps(path);
                let alias_name =
                    alias.as_ref().map(|a| a.name.clone()).unwrap_or_else(|| default_alias(&root.name, path));
                if let Some(outer) = scope.resolve(&root.name).filter(|_| !top_level) {
                    let value = if steps.is_empty() { CExpr::Slot(outer) } else { CExpr::Path { slot: outer, steps } };
                    let slot = Self::new_slot(scope, Some(&alias_name));
                    return Ok((Source { slot, kind: SourceKind::Value(value) }, false));
                }
                if steps.is_empty() {
                    let slot = Self::new_slot(scope, Some(&alias_name));
                    return Ok((Source { slot, kind: SourceKind::Items }, true));
                }
                let root_slot = Self::new_slot(scope, None);
                let slot = Self::new_slot(scope, Some(&alias_name));
                Ok((Source { slot, kind: SourceKind::ItemPath { root: root_slot, steps } }, true))
            }
            FromSource::Iterate { alias, array, .. } => {
                let root_name = root_identifier(array);
                let outer = root_name.and_then(|n| scope.resolve(n)).filter(|_| !top_level);
                if outer.is_some() {
                    let array = self.expr(array, scope, None)?;
                    let slot = Self::new_slot(scope, Some(&alias.name));
                    return Ok((Source { slot, kind: SourceKind::Iterate(array) }, false));
                }
                // The root identifier, whatever its name, is the container's item.
                let root_slot = Self::new_slot(scope, None);
                let mut inner = Scope { names: scope.names.clone(), slots: scope.slots };
                if let Some(n) = root_name {
                    inner.names.push((n.to_string(), root_slot));
                }
                let array = self.expr(array, &inner, None)?;
                let slot = Self::new_slot(scope, Some(&alias.name));
                Ok((Source { slot, kind: SourceKind::ItemIterate { root: root_slot, array } }, true))
            }
        }
    }

    fn join_source(&self, source: &FromSource, scope: &mut Scope) -> Result<Source, QueryError> {
        match source {
            FromSource::Aliased { collection: Collection::Subquery(q), alias, .. } => {
                let inner = self.query(q, scope, false)?;
                let slot = Self::new_slot(scope, alias.as_ref().map(|a| a.name.as_str()));
                Ok(Source { slot, kind: SourceKind::Subquery(Box::new(inner)) })
            }
            FromSource::Aliased { collection: Collection::Path { root, path, span }, alias, .. } => {
                let outer = scope.resolve(&root.name).ok_or_else(|| {
                    QueryError::bind(format!("identifier `{}` could not be resolved", root.name), *span)
                })?;
                let steps = path_steps(path);
                let value = if steps.is_empty() { CExpr::Slot(outer) } else { CExpr::Path { slot: outer, steps } };
                let name = alias.as_ref().map(|a| a.name.clone()).unwrap_or_else(|| default_alias(&root.name, path));
                let slot = Self::new_slot(scope, Some(&name));
                Ok(Source { slot, kind: SourceKind::Value(value) })
            }
            FromSource::Iterate { alias, array, .. } => {
                let array = self.expr(array, scope, None)?;
                let slot = Self::new_slot(scope, Some(&alias.name));
                Ok(Source { slot, kind: SourceKind::Iterate(array) })
            }
        }
    }

    /// Compiles an expression. `aggregates` is `Some` where aggregate functions are allowed; they
    /// are collected there and replaced by `CExpr::Aggregate`.
    fn expr(&self, e: &Expr, scope: &Scope, aggregates: Option<&mut Vec<AggregateSpec>>) -> Result<CExpr, QueryError> {
        let mut aggs = aggregates;
        self.expr_inner(e, scope, &mut aggs)
    }

    fn expr_inner(
        &self,
        e: &Expr,
        scope: &Scope,
        aggs: &mut Option<&mut Vec<AggregateSpec>>,
    ) -> Result<CExpr, QueryError> {
        let sub = |x: &Expr, aggs: &mut Option<&mut Vec<AggregateSpec>>| self.expr_inner(x, scope, aggs);
        Ok(match &e.kind {
            ExprKind::Literal(l) => CExpr::Const(literal(l)),
            ExprKind::Parameter(name) => match self.options.parameters.get(name) {
                Some(v) => CExpr::Const(v.clone()),
                None => return Err(QueryError::bind(format!("the parameter @{name} is not defined"), e.span)),
            },
            ExprKind::Identifier(name) => match scope.resolve(name) {
                Some(slot) => CExpr::Slot(slot),
                None => return Err(QueryError::bind(format!("identifier `{name}` could not be resolved"), e.span)),
            },
            ExprKind::Property { base, name } => {
                let base = sub(base, aggs)?;
                extend_path(base, Step::Key(name.name.clone()))
            }
            ExprKind::Index { base, index } => {
                let base = sub(base, aggs)?;
                match sub(index, aggs)? {
                    CExpr::Const(Value::String(k)) => extend_path(base, Step::Key(k.to_string())),
                    CExpr::Const(Value::Number(n)) if n >= 0.0 && n.fract() == 0.0 => {
                        extend_path(base, Step::Index(n as usize))
                    }
                    index => CExpr::Index(Box::new(base), Box::new(index)),
                }
            }
            ExprKind::Array(items) => {
                let items = items.iter().map(|i| sub(i, aggs)).collect::<Result<Vec<_>, _>>()?;
                if items.iter().all(|i| matches!(i, CExpr::Const(_))) {
                    let values = items.into_iter().filter_map(|i| match i {
                        CExpr::Const(v) if !v.is_undefined() => Some(v),
                        _ => None,
                    });
                    CExpr::Const(Value::from(values.collect::<Vec<_>>()))
                } else {
                    CExpr::Array(items)
                }
            }
            ExprKind::Object(props) => {
                let mut out = Vec::with_capacity(props.len());
                for p in props {
                    out.push((p.name.name.clone(), sub(&p.value, aggs)?));
                }
                if out.iter().all(|(_, v)| matches!(v, CExpr::Const(_))) {
                    let mut map = Map::new();
                    for (k, v) in out {
                        if let CExpr::Const(v) = v {
                            if !v.is_undefined() {
                                map.insert(k, v);
                            }
                        }
                    }
                    CExpr::Const(Value::from(map))
                } else {
                    CExpr::Object(out)
                }
            }
            ExprKind::Unary { op, operand } => {
                let operand = sub(operand, aggs)?;
                match &operand {
                    CExpr::Const(v) => CExpr::Const(unary(*op, v)),
                    _ => CExpr::Unary(*op, Box::new(operand)),
                }
            }
            ExprKind::Binary { op, left, right } => {
                let (l, r) = (sub(left, aggs)?, sub(right, aggs)?);
                match (&l, &r) {
                    (CExpr::Const(a), CExpr::Const(b)) => CExpr::Const(binary(*op, a, b)),
                    _ => CExpr::Binary(*op, Box::new(l), Box::new(r)),
                }
            }
            ExprKind::Between { expr, low, high, negated } => CExpr::Between {
                expr: Box::new(sub(expr, aggs)?),
                low: Box::new(sub(low, aggs)?),
                high: Box::new(sub(high, aggs)?),
                negated: *negated,
            },
            ExprKind::In { expr, list, negated } => CExpr::In {
                expr: Box::new(sub(expr, aggs)?),
                list: list.iter().map(|i| sub(i, aggs)).collect::<Result<_, _>>()?,
                negated: *negated,
            },
            ExprKind::Like { expr, pattern, escape, negated } => {
                let escape_char = escape.as_ref().and_then(|s| s.chars().next());
                let pattern = sub(pattern, aggs)?;
                let compiled = match &pattern {
                    CExpr::Const(Value::String(p)) => Some(LikePattern::compile(p, escape_char)),
                    _ => None,
                };
                CExpr::Like {
                    expr: Box::new(sub(expr, aggs)?),
                    pattern: Box::new(pattern),
                    compiled,
                    escape: escape_char,
                    negated: *negated,
                }
            }
            ExprKind::Conditional { condition, then, otherwise } => CExpr::Conditional {
                condition: Box::new(sub(condition, aggs)?),
                then: Box::new(sub(then, aggs)?),
                otherwise: Box::new(sub(otherwise, aggs)?),
            },
            ExprKind::Call { name, udf, args } => {
                if *udf {
                    return Err(QueryError::bind(
                        format!("user-defined function udf.{} is not defined (cosmoql has no UDFs yet)", name.name),
                        e.span,
                    ));
                }
                if let Some(kind) = AggregateKind::from_name(&name.name) {
                    let Some(list) = aggs.as_deref_mut() else {
                        return Err(QueryError::bind(
                            format!(
                                "the aggregate {} is not allowed here (only in SELECT and ORDER BY)",
                                name.name.to_ascii_uppercase()
                            ),
                            e.span,
                        ));
                    };
                    if args.len() != 1 {
                        return Err(QueryError::bind(
                            format!("{} takes 1 argument, {} given", name.name.to_ascii_uppercase(), args.len()),
                            e.span,
                        ));
                    }
                    // The argument is evaluated per row: no aggregates inside it.
                    let arg = self.expr_inner(&args[0], scope, &mut None)?;
                    list.push(AggregateSpec { kind, arg });
                    return Ok(CExpr::Aggregate(list.len() - 1));
                }
                if name.name.eq_ignore_ascii_case("DocumentId") {
                    // The item's numeric id inside its container (from its `_rid`).
                    return match args.as_slice() {
                        [arg] => match sub(arg, aggs)? {
                            CExpr::Slot(slot) => Ok(CExpr::DocumentId(slot)),
                            _ => Ok(CExpr::Const(Value::Undefined)),
                        },
                        _ => Err(QueryError::bind(
                            format!("DocumentId takes 1 argument(s), {} given", args.len()),
                            e.span,
                        )),
                    };
                }
                if name.name.eq_ignore_ascii_case("FullTextScore") || name.name.eq_ignore_ascii_case("RRF") {
                    return Err(QueryError::bind(format!("{} can only be used in ORDER BY RANK", name.name), e.span));
                }
                let Some(def) = lookup(&name.name) else {
                    return Err(QueryError::bind(format!("unknown function `{}`", name.name), name.span));
                };
                let max_ok = def.max_args.is_none_or(|m| args.len() <= m);
                if args.len() < def.min_args || !max_ok {
                    let expected = match def.max_args {
                        Some(m) if m == def.min_args => format!("{m}"),
                        Some(m) => format!("{} to {m}", def.min_args),
                        None => format!("at least {}", def.min_args),
                    };
                    return Err(QueryError::bind(
                        format!("{} takes {expected} argument(s), {} given", def.name, args.len()),
                        e.span,
                    ));
                }
                let args = args.iter().map(|a| sub(a, aggs)).collect::<Result<Vec<_>, _>>()?;
                // The *Static clock functions give one value for the whole query: take it now.
                if args.is_empty() && def.name.to_ascii_lowercase().ends_with("static") {
                    let now = (def.eval)(&[], &FunctionContext::default())
                        .map_err(|err| QueryError::eval(format!("{}: {err}", def.name), e.span))?;
                    return Ok(CExpr::Const(now));
                }
                let mut context = FunctionContext::default();
                if def.name.eq_ignore_ascii_case("VectorDistance") {
                    context.vector_policy = args.iter().take(2).find_map(|a| self.vector_policy_for(a));
                }
                CExpr::Call { def, args, context, span: e.span }
            }
            ExprKind::Subquery(q) => {
                CExpr::Subquery { query: Box::new(self.subquery(q, scope, e.span)?), kind: SubqueryKind::Scalar }
            }
            ExprKind::Exists(q) => {
                CExpr::Subquery { query: Box::new(self.subquery(q, scope, e.span)?), kind: SubqueryKind::Exists }
            }
            ExprKind::ArraySubquery(q) => {
                CExpr::Subquery { query: Box::new(self.subquery(q, scope, e.span)?), kind: SubqueryKind::Array }
            }
        })
    }

    /// A scoring function of ORDER BY RANK: FullTextScore, RRF, or (inside RRF) VectorDistance.
    fn rank_fn(&self, e: &Expr, scope: &Scope, top: bool) -> Result<RankFn, QueryError> {
        let ExprKind::Call { name, udf: false, args } = &e.kind else {
            return Err(QueryError::bind("ORDER BY RANK needs FullTextScore(...) or RRF(...)", e.span));
        };
        if name.name.eq_ignore_ascii_case("FullTextScore") {
            let Some((text, terms)) = args.split_first() else {
                return Err(QueryError::bind("FullTextScore takes a property and at least one term", e.span));
            };
            let mut words = Vec::new();
            for t in terms {
                match self.expr(t, scope, None)? {
                    CExpr::Const(Value::String(w)) => words.push(w.to_string()),
                    CExpr::Const(Value::Array(items)) => {
                        for i in items.iter() {
                            match i.as_str() {
                                Some(w) => words.push(w.to_string()),
                                None => return Err(QueryError::bind("FullTextScore terms are strings", t.span)),
                            }
                        }
                    }
                    _ => return Err(QueryError::bind("FullTextScore terms are string constants", t.span)),
                }
            }
            if words.is_empty() {
                return Err(QueryError::bind("FullTextScore takes a property and at least one term", e.span));
            }
            return Ok(RankFn::FullText { text: self.expr(text, scope, None)?, terms: words });
        }
        if name.name.eq_ignore_ascii_case("RRF") && top {
            let mut parts = Vec::new();
            let mut weights = Vec::new();
            for (i, a) in args.iter().enumerate() {
                if i + 1 == args.len() && i > 0 {
                    if let CExpr::Const(Value::Array(w)) = self.expr(a, scope, None)? {
                        weights = w.iter().map(|x| x.as_f64().unwrap_or(1.0)).collect();
                        continue;
                    }
                }
                parts.push(self.rank_fn(a, scope, false)?);
            }
            if parts.is_empty() {
                return Err(QueryError::bind("RRF takes at least one scoring function", e.span));
            }
            if !weights.is_empty() && weights.len() != parts.len() {
                return Err(QueryError::bind("RRF's weights need one number per scoring function", e.span));
            }
            return Ok(RankFn::Fusion { parts, weights });
        }
        if name.name.eq_ignore_ascii_case("VectorDistance") && !top {
            let call = self.expr(e, scope, None)?;
            let similarity = vector_similarity(&call);
            return Ok(RankFn::Distance { call, similarity });
        }
        Err(QueryError::bind(
            format!(
                "`{}` cannot rank here: ORDER BY RANK takes FullTextScore or RRF (of FullTextScore and VectorDistance)",
                name.name
            ),
            e.span,
        ))
    }

    fn subquery(&self, q: &Query, scope: &Scope, span: Span) -> Result<CompiledQuery, QueryError> {
        let compiled = self.query(q, scope, false)?;
        if compiled.reads_items {
            return Err(QueryError::bind(
                "a subquery here reads from an alias of the enclosing query (e.g. `FROM t IN c.tags`), not from the container",
                span,
            ));
        }
        Ok(compiled)
    }

    fn vector_policy_for(&self, arg: &CExpr) -> Option<VectorPolicy> {
        let CExpr::Path { steps, .. } = arg else { return None };
        let mut path = String::new();
        for s in steps {
            match s {
                Step::Key(k) => {
                    path.push('/');
                    path.push_str(k);
                }
                Step::Index(_) => return None,
            }
        }
        self.options.vector_policies.iter().find(|p| p.path == path).cloned()
    }
}

/// Whether an ORDER BY expression is a VectorDistance whose distance is a similarity (higher is
/// closer), which the service sorts most-similar first.
fn vector_similarity(e: &CExpr) -> bool {
    let CExpr::Call { def, args, context, .. } = e else { return false };
    if !def.name.eq_ignore_ascii_case("VectorDistance") {
        return false;
    }
    let from_options = match args.get(3) {
        Some(CExpr::Const(options)) => options.get("distanceFunction").as_str().map(str::to_ascii_lowercase),
        _ => None,
    };
    let function = from_options
        .or_else(|| context.vector_policy.as_ref().map(|p| p.distance_function.to_ascii_lowercase()))
        .unwrap_or_else(|| "cosine".to_string());
    function != "euclidean"
}

fn extend_path(base: CExpr, step: Step) -> CExpr {
    match base {
        CExpr::Slot(slot) => CExpr::Path { slot, steps: vec![step] },
        CExpr::Path { slot, mut steps } => {
            steps.push(step);
            CExpr::Path { slot, steps }
        }
        CExpr::Const(v) => CExpr::Const(match step {
            Step::Key(k) => v.get(&k).clone(),
            Step::Index(i) => v.index(i).clone(),
        }),
        other => match step {
            Step::Key(k) => CExpr::Property(Box::new(other), k),
            Step::Index(i) => CExpr::Index(Box::new(other), Box::new(CExpr::Const(Value::from(i as f64)))),
        },
    }
}

fn path_steps(path: &[PathSegment]) -> Vec<Step> {
    path.iter()
        .map(|s| match s {
            PathSegment::Property(i) => Step::Key(i.name.clone()),
            PathSegment::Key { name, .. } => Step::Key(name.clone()),
            PathSegment::Index { index, .. } => Step::Index(*index as usize),
        })
        .collect()
}

fn default_alias(root: &str, path: &[PathSegment]) -> String {
    path.iter()
        .rev()
        .find_map(|s| match s {
            PathSegment::Property(i) => Some(i.name.clone()),
            PathSegment::Key { name, .. } => Some(name.clone()),
            PathSegment::Index { .. } => None,
        })
        .unwrap_or_else(|| root.to_string())
}

fn root_identifier(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Identifier(n) => Some(n),
        ExprKind::Property { base, .. } | ExprKind::Index { base, .. } => root_identifier(base),
        _ => None,
    }
}

/// The name Cosmos DB gives an unaliased select item: the last property name of a path.
fn inferred_name(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Property { name, .. } => Some(name.name.clone()),
        ExprKind::Index { index, .. } => match &index.kind {
            ExprKind::Literal(Literal::String(s)) => Some(s.clone()),
            _ => None,
        },
        ExprKind::Identifier(n) => Some(n.clone()),
        _ => None,
    }
}

fn literal(l: &Literal) -> Value {
    match l {
        Literal::Undefined => Value::Undefined,
        Literal::Null => Value::Null,
        Literal::Bool(b) => Value::Bool(*b),
        Literal::Number(n) => Value::Number(*n),
        Literal::String(s) => Value::from(s.as_str()),
    }
}

// ---- execution ------------------------------------------------------------------------------------

/// Counters of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Items read from the input.
    pub retrieved: u64,
    /// Rows held at once for sorting or grouping, at the peak.
    pub peak_buffered: u64,
    /// Time spent, in nanoseconds (set by the cross-partition producers).
    pub nanos: u64,
}

/// Runs compiled queries; subqueries run through it too.
pub struct Runner<'a> {
    pub items: &'a dyn ItemContext,
    /// Set by the caller to stop the query: checked for every item and every row.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl std::fmt::Debug for Runner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner").finish_non_exhaustive()
    }
}

pub(crate) enum Flow {
    Continue,
    Stop,
}

/// Consumes rows with their scan positions.
pub(crate) type RowSink<'s> = dyn FnMut(&Row, &RowPos) -> Result<Flow, QueryError> + 's;

/// The items a query reads, with their positions, in scan order.
pub type Input<'a> = dyn Iterator<Item = (ItemPosition, StoredItem)> + 'a;

/// Where a row comes from in scan order: its item's position, then its place among the rows the
/// item expands into (JOINs). Rows of sources that read no item have no item position.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowPos {
    pub item: Option<ItemPosition>,
    pub sub: u32,
}

/// A row with its ORDER BY keys; ordered by the keys, then by arrival.
struct Ordered<'q> {
    keys: Vec<Value>,
    seq: u64,
    row: Row,
    order: &'q [(CExpr, bool)],
}

impl Ord for Ordered<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_keys(&self.keys, &other.keys, self.order).then(self.seq.cmp(&other.seq))
    }
}

impl PartialOrd for Ordered<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ordered<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ordered<'_> {}

impl<'a> Runner<'a> {
    pub fn new(items: &'a dyn ItemContext) -> Self {
        Runner { items, cancel: None }
    }

    /// Stops with a `Cancelled` error once `flag` is set.
    pub fn with_cancel(mut self, flag: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) -> Self {
        self.cancel = flag;
        self
    }

    fn check_cancelled(&self) -> Result<(), QueryError> {
        match &self.cancel {
            Some(flag) if flag.load(std::sync::atomic::Ordering::Relaxed) => {
                Err(QueryError::new(crate::error::QueryErrorKind::Cancelled, "the query was cancelled", None))
            }
            _ => Ok(()),
        }
    }

    pub(crate) fn ctx<'c>(&'c self, aggregates: Option<&'c [Value]>) -> EvalContext<'c> {
        EvalContext { items: self.items, aggregates, runner: self }
    }

    /// Runs a subquery for one outer row.
    pub fn run_subquery(&self, q: &CompiledQuery, outer: &Row) -> Result<Vec<Value>, QueryError> {
        self.run_with(q, &mut std::iter::empty(), outer, &mut RunStats::default())
    }

    /// Runs a top-level query over `input` and returns its results.
    pub fn run(
        &self,
        q: &CompiledQuery,
        input: &mut Input<'_>,
        stats: &mut RunStats,
    ) -> Result<Vec<Value>, QueryError> {
        self.run_with(q, input, &Vec::new(), stats)
    }

    /// Runs a query over `input`, handing results to `out`.
    pub(crate) fn run_into(
        &self,
        q: &CompiledQuery,
        input: &mut Input<'_>,
        stats: &mut RunStats,
        out: &mut Emitter,
    ) -> Result<(), QueryError> {
        self.run_into_with(q, input, &Vec::new(), stats, out)
    }

    /// Runs a query over `input` for one row of the enclosing query (`outer`), handing results to
    /// `out`.
    fn run_into_with(
        &self,
        q: &CompiledQuery,
        input: &mut Input<'_>,
        outer: &Row,
        stats: &mut RunStats,
        out: &mut Emitter,
    ) -> Result<(), QueryError> {
        if q.is_aggregate() {
            self.run_grouped(q, input, outer, stats, out)
        } else if let Some(rank) = &q.rank {
            self.run_ranked(q, rank, input, outer, stats, out)
        } else if !q.order_by.is_empty() {
            self.run_ordered(q, input, outer, stats, out)
        } else {
            let ctx = self.ctx(None);
            self.for_each_row(q, input, outer, stats, &mut |row, _pos| {
                if !self.passes(q, row)? {
                    return Ok(Flow::Continue);
                }
                let value = self.project(q, &ctx, row)?;
                Ok(if out.push(value) { Flow::Stop } else { Flow::Continue })
            })
        }
    }

    fn run_with(
        &self,
        q: &CompiledQuery,
        input: &mut Input<'_>,
        outer: &Row,
        stats: &mut RunStats,
    ) -> Result<Vec<Value>, QueryError> {
        let mut out = Emitter::new(q);
        self.run_into_with(q, input, outer, stats, &mut out)?;
        Ok(out.finish())
    }

    pub(crate) fn passes(&self, q: &CompiledQuery, row: &Row) -> Result<bool, QueryError> {
        match &q.filter {
            Some(f) => Ok(f.eval(&self.ctx(None), row)? == Value::Bool(true)),
            None => Ok(true),
        }
    }

    pub(crate) fn project(&self, q: &CompiledQuery, ctx: &EvalContext<'_>, row: &Row) -> Result<Value, QueryError> {
        Ok(match &q.projection {
            CProjection::Star(slot) => match row.get(*slot) {
                Some(Binding::Item(item)) => self.items.materialize(item),
                Some(Binding::Value(v)) => v.clone(),
                _ => Value::Undefined,
            },
            CProjection::Value(e) => e.eval(ctx, row)?,
            CProjection::List(items) => {
                let mut map = Map::with_capacity(items.len());
                for (name, e) in items {
                    let v = e.eval(ctx, row)?;
                    if !v.is_undefined() {
                        map.insert(name.clone(), v);
                    }
                }
                Value::from(map)
            }
        })
    }

    fn run_ordered(
        &self,
        q: &CompiledQuery,
        input: &mut Input<'_>,
        outer: &Row,
        stats: &mut RunStats,
        out: &mut Emitter,
    ) -> Result<(), QueryError> {
        let ctx = self.ctx(None);
        // With a row limit and no DISTINCT, only the first offset + limit rows can be returned: a
        // max-heap of that many rows rejects the others with one comparison, without copying them.
        let keep = match (q.limit, q.distinct) {
            (Some(l), false) => Some((q.offset + l) as usize),
            _ => None,
        };
        let mut heap: BinaryHeap<Ordered> = BinaryHeap::new();
        let mut rows: Vec<Ordered> = Vec::new();
        let mut seq = 0u64;
        self.for_each_row(q, input, outer, stats, &mut |row, _pos| {
            if !self.passes(q, row)? {
                return Ok(Flow::Continue);
            }
            let keys = q.order_by.iter().map(|(e, _)| e.eval(&ctx, row)).collect::<Result<Vec<_>, _>>()?;
            seq += 1;
            match keep {
                Some(0) => {}
                Some(k) => {
                    if heap.len() == k {
                        let worst =
                            heap.peek().map(|w| compare_keys(&keys, &w.keys, &q.order_by).then(seq.cmp(&w.seq)));
                        if worst != Some(Ordering::Less) {
                            return Ok(Flow::Continue);
                        }
                        heap.pop();
                    }
                    heap.push(Ordered { keys, seq, row: row.clone(), order: &q.order_by });
                }
                None => rows.push(Ordered { keys, seq, row: row.clone(), order: &q.order_by }),
            }
            Ok(Flow::Continue)
        })?;
        let mut rows = if keep.is_some() { heap.into_vec() } else { rows };
        stats.peak_buffered = stats.peak_buffered.max(rows.len() as u64);
        rows.sort();
        for r in rows {
            if out.push(self.project(q, &ctx, &r.row)?) {
                break;
            }
        }
        Ok(())
    }

    fn run_ranked(
        &self,
        q: &CompiledQuery,
        rank: &RankFn,
        input: &mut Input<'_>,
        outer: &Row,
        stats: &mut RunStats,
        out: &mut Emitter,
    ) -> Result<(), QueryError> {
        let ctx = self.ctx(None);
        let mut rows = Vec::new();
        self.for_each_row(q, input, outer, stats, &mut |row, _pos| {
            if self.passes(q, row)? {
                rows.push(row.clone());
            }
            Ok(Flow::Continue)
        })?;
        stats.peak_buffered = stats.peak_buffered.max(rows.len() as u64);
        let scores = rank_scores(rank, &ctx, &rows)?;
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b)));
        for i in order {
            if out.push(self.project(q, &ctx, &rows[i])?) {
                break;
            }
        }
        Ok(())
    }

    fn run_grouped(
        &self,
        q: &CompiledQuery,
        input: &mut Input<'_>,
        outer: &Row,
        stats: &mut RunStats,
        out: &mut Emitter,
    ) -> Result<(), QueryError> {
        let groups = self.collect_groups(q, input, outer, stats)?;
        self.finish_groups(q, groups, out)
    }

    /// Groups the rows of `input` and runs the aggregates per group (a partial result: groups of
    /// several inputs merge with [`merge_groups`]).
    pub(crate) fn collect_groups(
        &self,
        q: &CompiledQuery,
        input: &mut Input<'_>,
        outer: &Row,
        stats: &mut RunStats,
    ) -> Result<Groups, QueryError> {
        let ctx = self.ctx(None);
        let mut groups: Groups = IndexMap::new();
        let fresh = || q.aggregates.iter().map(|a| Accumulator::new(a.kind)).collect::<Vec<_>>();
        if q.group_by.is_none() {
            groups.insert(Vec::new(), (outer.clone(), fresh()));
        }
        self.for_each_row(q, input, outer, stats, &mut |row, _pos| {
            if !self.passes(q, row)? {
                return Ok(Flow::Continue);
            }
            let key = match &q.group_by {
                Some(keys) => keys.iter().map(|k| k.eval(&ctx, row)).collect::<Result<Vec<_>, _>>()?,
                None => Vec::new(),
            };
            let entry = groups.entry(key).or_insert_with(|| (row.clone(), fresh()));
            if q.group_by.is_none() && entry.0.len() < row.len() {
                entry.0 = row.clone();
            }
            for (acc, spec) in entry.1.iter_mut().zip(&q.aggregates) {
                acc.add(spec.arg.eval(&ctx, row)?);
            }
            Ok(Flow::Continue)
        })?;
        stats.peak_buffered = stats.peak_buffered.max(groups.len() as u64);
        Ok(groups)
    }

    /// Projects finished groups (ordered by ORDER BY if any, else by first appearance).
    pub(crate) fn finish_groups(&self, q: &CompiledQuery, groups: Groups, out: &mut Emitter) -> Result<(), QueryError> {
        let mut results = Vec::with_capacity(groups.len());
        for (i, (_, (row, accs))) in groups.into_iter().enumerate() {
            let values: Vec<Value> = accs.iter().map(Accumulator::result).collect();
            let gctx = self.ctx(Some(&values));
            let keys = q.order_by.iter().map(|(e, _)| e.eval(&gctx, &row)).collect::<Result<Vec<_>, _>>()?;
            let value = self.project(q, &gctx, &row)?;
            results.push((keys, i, value));
        }
        if !q.order_by.is_empty() {
            results.sort_by(|a, b| compare_keys(&a.0, &b.0, &q.order_by).then(a.1.cmp(&b.1)));
        }
        for (_, _, v) in results {
            if out.push(v) {
                break;
            }
        }
        Ok(())
    }

    /// Expands FROM and JOINs into rows and hands each to `sink`.
    pub(crate) fn for_each_row(
        &self,
        q: &CompiledQuery,
        input: &mut Input<'_>,
        outer: &Row,
        stats: &mut RunStats,
        sink: &mut RowSink<'_>,
    ) -> Result<(), QueryError> {
        let mut row: Row = Vec::with_capacity(q.slots);
        row.extend_from_slice(&outer[..q.base.min(outer.len())]);
        row.resize(q.slots, Binding::Undefined);
        let mut pos = RowPos { item: None, sub: 0 };
        let Some(first) = q.sources.first() else {
            sink(&row, &pos)?;
            return Ok(());
        };
        let ctx = self.ctx(None);
        match &first.kind {
            SourceKind::Items | SourceKind::ItemPath { .. } | SourceKind::ItemIterate { .. } => {
                for (at, item) in input {
                    self.check_cancelled()?;
                    stats.retrieved += 1;
                    pos = RowPos { item: Some(at), sub: 0 };
                    let flow = match &first.kind {
                        SourceKind::Items => {
                            row[first.slot] = Binding::Item(item);
                            self.joins(q, 1, &mut row, &mut pos, sink)?
                        }
                        SourceKind::ItemPath { root, steps } => {
                            row[*root] = Binding::Item(item);
                            let v = crate::eval::read_path(&ctx, row.get(*root), steps);
                            if v.is_undefined() {
                                Flow::Continue
                            } else {
                                row[first.slot] = Binding::Value(v);
                                self.joins(q, 1, &mut row, &mut pos, sink)?
                            }
                        }
                        SourceKind::ItemIterate { root, array } => {
                            row[*root] = Binding::Item(item);
                            {
                                let array = array.eval(&ctx, &row)?;
                                self.iterate(q, (first.slot, array), 1, &mut row, &mut pos, sink)?
                            }
                        }
                        _ => Flow::Continue,
                    };
                    if let Flow::Stop = flow {
                        break;
                    }
                }
            }
            SourceKind::Subquery(inner) => {
                let values = self.run_with(inner, input, &Vec::new(), stats)?;
                for v in values {
                    row[first.slot] = Binding::Value(v);
                    if let Flow::Stop = self.joins(q, 1, &mut row, &mut pos, sink)? {
                        break;
                    }
                }
            }
            SourceKind::Value(_) | SourceKind::Iterate(_) => {
                self.joins(q, 0, &mut row, &mut pos, sink)?;
            }
        }
        Ok(())
    }

    fn iterate(
        &self,
        q: &CompiledQuery,
        (slot, array): (usize, Value),
        next: usize,
        row: &mut Row,
        pos: &mut RowPos,
        sink: &mut RowSink<'_>,
    ) -> Result<Flow, QueryError> {
        if let Value::Array(items) = array {
            for v in items.iter() {
                row[slot] = Binding::Value(v.clone());
                if let Flow::Stop = self.joins(q, next, row, pos, sink)? {
                    return Ok(Flow::Stop);
                }
            }
        }
        Ok(Flow::Continue)
    }

    /// Expands sources `index..` for the current row.
    fn joins(
        &self,
        q: &CompiledQuery,
        index: usize,
        row: &mut Row,
        pos: &mut RowPos,
        sink: &mut RowSink<'_>,
    ) -> Result<Flow, QueryError> {
        let Some(source) = q.sources.get(index) else {
            self.check_cancelled()?;
            let flow = sink(row, pos);
            pos.sub += 1;
            return flow;
        };
        let ctx = self.ctx(None);
        match &source.kind {
            SourceKind::Value(e) => {
                let v = e.eval(&ctx, row)?;
                if v.is_undefined() {
                    return Ok(Flow::Continue);
                }
                row[source.slot] = Binding::Value(v);
                self.joins(q, index + 1, row, pos, sink)
            }
            SourceKind::Iterate(e) => {
                let v = e.eval(&ctx, row)?;
                self.iterate(q, (source.slot, v), index + 1, row, pos, sink)
            }
            SourceKind::Subquery(inner) => {
                for v in self.run_subquery(inner, row)? {
                    row[source.slot] = Binding::Value(v);
                    if let Flow::Stop = self.joins(q, index + 1, row, pos, sink)? {
                        return Ok(Flow::Stop);
                    }
                }
                Ok(Flow::Continue)
            }
            _ => Err(QueryError::internal("a container source after the first FROM source")),
        }
    }
}

/// Relevance of each row (higher first): BM25 for FullTextScore, reciprocal rank fusion for RRF.
fn rank_scores(rank: &RankFn, ctx: &EvalContext<'_>, rows: &[Row]) -> Result<Vec<f64>, QueryError> {
    match rank {
        RankFn::FullText { text, terms } => {
            let tokenize = |s: &str| -> Vec<String> {
                s.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_lowercase).collect()
            };
            let query: Vec<String> = terms.iter().flat_map(|t| tokenize(t)).collect();
            let docs: Vec<Option<Vec<String>>> =
                rows.iter().map(|r| text.eval(ctx, r).map(|v| v.as_str().map(tokenize))).collect::<Result<_, _>>()?;
            let n = docs.iter().filter(|d| d.is_some()).count().max(1) as f64;
            let avg = docs.iter().flatten().map(Vec::len).sum::<usize>() as f64 / n;
            let df = |t: &String| docs.iter().flatten().filter(|d| d.contains(t)).count() as f64;
            let idf: Vec<f64> = query.iter().map(|t| ((n - df(t) + 0.5) / (df(t) + 0.5) + 1.0).ln()).collect();
            let (k1, b) = (1.2, 0.75);
            Ok(docs
                .iter()
                .map(|d| match d {
                    None => f64::NEG_INFINITY,
                    Some(d) => query
                        .iter()
                        .zip(&idf)
                        .map(|(t, idf)| {
                            let f = d.iter().filter(|w| *w == t).count() as f64;
                            idf * f * (k1 + 1.0) / (f + k1 * (1.0 - b + b * d.len() as f64 / avg.max(1e-9)))
                        })
                        .sum(),
                })
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

/// Groups by key, in order of first appearance: a representative row and the accumulators.
pub(crate) type Groups = IndexMap<Vec<Value>, (Row, Vec<Accumulator>)>;

/// Folds the groups of a later input (in scan order) into `into`.
pub(crate) fn merge_groups(into: &mut Groups, from: Groups) {
    for (key, (row, accs)) in from {
        match into.get_mut(&key) {
            Some((first, mine)) => {
                if first.len() < row.len() {
                    *first = row;
                }
                for (a, b) in mine.iter_mut().zip(&accs) {
                    a.merge(b);
                }
            }
            None => {
                into.insert(key, (row, accs));
            }
        }
    }
}

/// Compares ORDER BY keys: the total order of values (undefined lowest), per direction.
pub fn compare_keys(a: &[Value], b: &[Value], order: &[(CExpr, bool)]) -> Ordering {
    for ((x, y), (_, desc)) in a.iter().zip(b).zip(order) {
        let o = x.cmp(y);
        let o = if *desc { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// Applies DISTINCT, OFFSET and LIMIT/TOP to results as they come; undefined results are dropped.
pub(crate) struct Emitter {
    distinct: Option<HashSet<Value>>,
    skip: u64,
    limit: Option<u64>,
    out: Vec<Value>,
    /// Scan positions of the results in `out`, for continuation tokens that resume by position.
    positions: Option<Vec<RowPos>>,
}

impl Emitter {
    pub(crate) fn new(q: &CompiledQuery) -> Self {
        Emitter {
            distinct: q.distinct.then(HashSet::new),
            skip: q.offset,
            limit: q.limit,
            out: Vec::new(),
            positions: None,
        }
    }

    /// An emitter for one page: `returned` results were given out by earlier pages, and at most
    /// `take` more are wanted now.
    pub(crate) fn page(q: &CompiledQuery, returned: u64, take: Option<u64>) -> Self {
        let remaining = q.limit.map(|l| l.saturating_sub(returned));
        let limit = match (remaining, take) {
            (Some(r), Some(t)) => Some(r.min(t)),
            (r, t) => r.or(t),
        };
        Emitter {
            distinct: q.distinct.then(HashSet::new),
            skip: q.offset + returned,
            limit,
            out: Vec::new(),
            positions: None,
        }
    }

    /// An emitter resuming after `returned` results at a known scan position: OFFSET was spent
    /// by earlier pages, so nothing is skipped; positions of the results are kept.
    pub(crate) fn resume(q: &CompiledQuery, returned: u64, take: Option<u64>) -> Self {
        let mut e = Emitter::page(q, returned, take);
        e.skip = if returned > 0 { 0 } else { q.offset };
        e.positions = Some(Vec::new());
        e
    }

    /// Adds a result with its scan position (kept when the emitter tracks positions).
    pub(crate) fn push_at(&mut self, v: Value, pos: RowPos) -> bool {
        let before = self.out.len();
        let stop = self.push(v);
        if self.out.len() > before {
            if let Some(p) = &mut self.positions {
                p.push(pos);
            }
        }
        stop
    }

    /// The scan position of the `n`-th result (1-based), when positions are kept.
    pub(crate) fn position_of(&self, n: usize) -> Option<&RowPos> {
        self.positions.as_ref().and_then(|p| p.get(n.checked_sub(1)?))
    }

    /// Adds a result; returns true once no more results are wanted.
    pub(crate) fn push(&mut self, v: Value) -> bool {
        if self.limit.is_some_and(|l| self.out.len() as u64 >= l) {
            return true;
        }
        if v.is_undefined() {
            return false;
        }
        if let Some(seen) = &mut self.distinct {
            if !seen.insert(v.clone()) {
                return false;
            }
        }
        if self.skip > 0 {
            self.skip -= 1;
            return false;
        }
        self.out.push(v);
        self.limit.is_some_and(|l| self.out.len() as u64 >= l)
    }

    pub(crate) fn finish(self) -> Vec<Value> {
        self.out
    }
}
