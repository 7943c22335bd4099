//! The binder: a syntax tree becomes a [`BoundQuery`].
//!
//! - Aliases of FROM/JOIN/IN become row slots (outer queries' slots first, so correlated
//!   subqueries read them); a FROM root names the container unless, in a subquery, it names an
//!   alias of an enclosing query.
//! - `@parameters` become constants, and constant expressions are folded (with the operators'
//!   semantics of [`crate::ops`], the same the executor evaluates with).
//! - Functions are looked up in [`crate::functions`] and their argument counts checked;
//!   aggregates are pulled out of the projection; `alias.a.b[0]` chains become `Path` reads.
//! - The service's rejections that depend on meaning are made here ([`crate::rules`]): ORDER BY
//!   items that are not document paths, OFFSET LIMIT in subqueries, scoring functions outside
//!   ORDER BY RANK.
//!
//! Every error keeps the span of the part of the query it is about.

use std::collections::HashMap;
use std::sync::Arc;

use cosmoql_parser::{
    Collection, Count, Expr, ExprKind, FromSource, Literal, PathSegment, Projection, Query, SortDirection, Span,
};
use cosmoql_value::{LikePattern, Map, Value, ValueSet};

use crate::bound::{
    AggregateSpec, BoundExpr, BoundProjection, BoundQuery, RankFn, SortKey, Source, SourceKind, Step, SubqueryKind,
};
use cosmoql_catalog::IndexStep;

use crate::error::PlanError;
use crate::functions::{lookup, FunctionKind};
use crate::ops::{binary, unary};
use crate::policy::VectorPolicy;
use crate::rules::{self, CountClause};

/// What binding needs besides the query.
#[derive(Debug, Clone, Copy)]
pub struct BindContext<'a> {
    /// Values of `@parameters`, by name without `@`.
    pub parameters: &'a HashMap<String, Value>,
    /// The container's vector embedding policy (for `VectorDistance`).
    pub vector_policies: &'a [VectorPolicy],
    /// The names of the container's user-defined functions (`udf.name(...)` binds to these).
    pub udfs: &'a [String],
}

/// Binds a parsed top-level query.
pub fn bind(query: &Query, context: BindContext<'_>) -> Result<BoundQuery, PlanError> {
    let scope = Scope::default();
    Binder { context }.query(query, &scope, true)
}

/// The aliases in scope, and for each slot the document path its value is at, when it is one
/// (an item, a path into one, an element of an array in one): what ORDER BY can sort by, and what
/// the indexing policy speaks of.
#[derive(Debug, Clone, Default)]
struct Scope {
    names: Vec<(String, usize)>,
    documents: Vec<Option<Vec<IndexStep>>>,
}

impl Scope {
    fn resolve(&self, name: &str) -> Option<usize> {
        self.names.iter().rev().find(|(n, _)| n == name).map(|(_, s)| *s)
    }

    fn slots(&self) -> usize {
        self.documents.len()
    }

    fn new_slot(&mut self, name: Option<&str>, document: Option<Vec<IndexStep>>) -> usize {
        let slot = self.documents.len();
        self.documents.push(document);
        if let Some(n) = name {
            self.names.push((n.to_string(), slot));
        }
        slot
    }

    /// The document path `e` reads, if it reads one: an alias of a document, or a path below one
    /// (constant indexes only; an array position is one of the array's elements, `/[]`).
    fn document_path(&self, e: &BoundExpr) -> Option<Vec<IndexStep>> {
        match e {
            BoundExpr::Slot(slot) => self.documents.get(*slot).cloned().flatten(),
            BoundExpr::Path { slot, steps } => {
                let mut path = self.documents.get(*slot).cloned().flatten()?;
                path.extend(steps.iter().map(step_of));
                Some(path)
            }
            BoundExpr::Index(base, index) if matches!(**index, BoundExpr::Const(_)) => {
                let mut path = self.document_path(base)?;
                path.push(IndexStep::Element);
                Some(path)
            }
            BoundExpr::Property(base, name) => {
                let mut path = self.document_path(base)?;
                path.push(IndexStep::Key(name.clone()));
                Some(path)
            }
            _ => None,
        }
    }
}

/// A bound path step as the indexing policy names it.
fn step_of(step: &Step) -> IndexStep {
    match step {
        Step::Key(k) => IndexStep::Key(k.clone()),
        Step::Index(_) => IndexStep::Element,
    }
}

/// `path` with every element of the array it names.
fn elements_of(path: Option<Vec<IndexStep>>) -> Option<Vec<IndexStep>> {
    path.map(|mut p| {
        p.push(IndexStep::Element);
        p
    })
}

struct Binder<'a> {
    context: BindContext<'a>,
}

/// Where aggregates may appear, and where they are collected.
type Aggregates<'x> = Option<&'x mut Vec<AggregateSpec>>;

impl Binder<'_> {
    fn query(&self, q: &Query, outer: &Scope, top_level: bool) -> Result<BoundQuery, PlanError> {
        // `plan` has already reported the one the service names first (`rules::check_limits`);
        // `bind` alone still refuses every such subquery.
        if !top_level {
            rules::check_subquery_clauses(q)?;
        }
        if q.order_by_rank {
            rules_for_rank(q)?;
        }
        let mut scope = outer.clone();
        let base = outer.slots();
        let mut sources = Vec::new();
        let mut reads_items = false;
        if let Some(from) = &q.from {
            let (source, reads) = self.first_source(&from.source, &mut scope, top_level)?;
            reads_items = reads;
            sources.push(source);
            for join in &from.joins {
                sources.push(self.join_source(join, &mut scope)?);
            }
        }
        let filter = q.where_clause.as_ref().map(|w| self.expr(w, &scope, None)).transpose()?;
        let mut aggregates = Vec::new();
        let projection = match &q.select.projection {
            Projection::Star(span) => {
                if sources.is_empty() {
                    return Err(rules::star_without_from(*span));
                }
                if !q.group_by.is_empty() {
                    return Err(rules::star_with_group_by(*span));
                }
                if sources.len() > 1 {
                    return Err(rules::star_with_joins(*span));
                }
                BoundProjection::Star(sources[0].slot)
            }
            Projection::Value(e) => BoundProjection::Value(self.expr(e, &scope, Some(&mut aggregates))?),
            Projection::List(items) => {
                let mut out: Vec<(String, BoundExpr)> = Vec::new();
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
                        return Err(PlanError::bind(
                            format!("the property `{name}` is projected more than once; give one an alias with AS"),
                            item.span,
                        ));
                    }
                    out.push((name, self.expr(&item.expr, &scope, Some(&mut aggregates))?));
                }
                BoundProjection::List(out)
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
                _ => return Err(rules::not_a_scoring_function(q.order_by.first().map_or(q.span, |i| i.span))),
            }
        }
        for item in q.order_by.iter().filter(|_| !q.order_by_rank) {
            let expr = self.expr(&item.expr, &scope, Some(&mut aggregates))?;
            let exempt = q.order_by.len() == 1
                && matches!(&expr, BoundExpr::Call { function, .. } if rules::may_order_by(function.name()));
            let path = scope.document_path(&expr);
            if !exempt && !matches!(expr, BoundExpr::Aggregate(_)) && path.is_none() {
                return Err(rules::order_by_not_a_path(item.expr.span));
            }
            let mut descending = item.direction == Some(SortDirection::Desc);
            // ORDER BY VectorDistance sorts the most similar first: descending for the similarity
            // functions (cosine, dot product), ascending for euclidean distance. The service's
            // plans write `_VectorScore` that way, and with ASC where a component is ranked
            // ascending (a negative RRF weight: "orderBy": ["Ascending"] beside `ORDER BY
            // _VectorScore(c.image, [1, 2, 3]) ASC`, the .NET SDK's QueryPlanRetrieverTests):
            // there a direction written is the direction of the score.
            let internal = matches!(&expr, BoundExpr::Call { function, .. } if function.name() == "_VectorScore");
            if vector_similarity(&expr) && !(internal && item.direction.is_some()) {
                descending = !descending;
            }
            order_by.push(SortKey { expr, descending, path, span: item.expr.span });
        }
        if group_by.is_some() || !aggregates.is_empty() {
            rules_for_groups(q)?;
        }
        let top = q.select.top.as_ref().map(|c| self.count(c, CountClause::Top)).transpose()?;
        let (mut offset, mut limit) = (0, None);
        if let Some(ol) = &q.offset_limit {
            offset = self.count(&ol.offset, CountClause::Offset)?;
            limit = Some(self.count(&ol.limit, CountClause::Limit)?);
        }
        if let Some(t) = top {
            limit = Some(limit.map_or(t, |l: u64| l.min(t)));
        }
        Ok(BoundQuery {
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
            slots: scope.slots(),
        })
    }

    /// A TOP, OFFSET or LIMIT count: an unsigned 32-bit integer, as the service takes it.
    fn count(&self, c: &Count, clause: CountClause) -> Result<u64, PlanError> {
        let (value, span) = match c {
            Count::Literal { value, span } => (*value, *span),
            Count::Parameter(p) => match self.context.parameters.get(&p.name) {
                Some(Value::Number(n)) if *n >= 0.0 && n.fract() == 0.0 => {
                    // Past u32::MAX is rejected below; `as` saturates, so nothing wraps.
                    (*n as u64, p.span)
                }
                Some(_) if clause == CountClause::Top => return Err(rules::count_too_large(clause, p.span)),
                Some(other) => {
                    return Err(PlanError::bind(
                        format!("@{} must be a non-negative integer here, not {other}", p.name),
                        p.span,
                    ))
                }
                None => return Err(PlanError::bind(format!("the parameter @{} is not defined", p.name), p.span)),
            },
        };
        if value > rules::MAX_COUNT {
            return Err(rules::count_too_large(clause, span));
        }
        Ok(value)
    }

    /// The first FROM source. Its root name means the container, unless (in a subquery) it names
    /// an alias of an outer query.
    fn first_source(
        &self,
        source: &FromSource,
        scope: &mut Scope,
        top_level: bool,
    ) -> Result<(Source, bool), PlanError> {
        match source {
            FromSource::Aliased { collection: Collection::Subquery(q), alias, .. } => {
                // Inside a subquery, a FROM subquery sees the enclosing query's aliases (`FROM
                // (SELECT VALUE v FROM root JOIN c IN root.children) r` reads the outer `root`):
                // the .NET SDK's emulator baseline LinqGeneralBaselineTests.TestSubquery runs such
                // queries. At the top level there are none to see.
                let inner = self.query(q, scope, false)?;
                // A subquery's results are computed values, not document paths.
                let slot = scope.new_slot(alias.as_ref().map(|a| a.name.as_str()), None);
                let reads = inner.reads_items;
                Ok((Source { slot, kind: SourceKind::Subquery(Box::new(inner)) }, reads))
            }
            FromSource::Aliased { collection: Collection::Path { root, path, .. }, alias, .. } => {
                let steps = path_steps(path);
                let alias_name =
                    alias.as_ref().map(|a| a.name.clone()).unwrap_or_else(|| default_alias(&root.name, path));
                if let Some(outer) = scope.resolve(&root.name).filter(|_| !top_level) {
                    let value =
                        if steps.is_empty() { BoundExpr::Slot(outer) } else { BoundExpr::Path { slot: outer, steps } };
                    let document = scope.document_path(&value);
                    let slot = scope.new_slot(Some(&alias_name), document);
                    return Ok((Source { slot, kind: SourceKind::Value(value) }, false));
                }
                if steps.is_empty() {
                    let slot = scope.new_slot(Some(&alias_name), Some(Vec::new()));
                    return Ok((Source { slot, kind: SourceKind::Items }, true));
                }
                let root_slot = scope.new_slot(None, Some(Vec::new()));
                let slot = scope.new_slot(Some(&alias_name), Some(steps.iter().map(step_of).collect()));
                Ok((Source { slot, kind: SourceKind::ItemPath { root: root_slot, steps } }, true))
            }
            FromSource::Iterate { alias, array, .. } => {
                let root_name = root_identifier(array);
                let outer = root_name.and_then(|n| scope.resolve(n)).filter(|_| !top_level);
                if outer.is_some() {
                    let array = self.expr(array, scope, None)?;
                    let document = elements_of(scope.document_path(&array));
                    let slot = scope.new_slot(Some(&alias.name), document);
                    return Ok((Source { slot, kind: SourceKind::Iterate(array) }, false));
                }
                // The root identifier, whatever its name, is the container's item.
                let root_slot = scope.new_slot(None, Some(Vec::new()));
                let mut inner = scope.clone();
                if let Some(n) = root_name {
                    inner.names.push((n.to_string(), root_slot));
                }
                let array = self.expr(array, &inner, None)?;
                let document = elements_of(inner.document_path(&array));
                let slot = scope.new_slot(Some(&alias.name), document);
                Ok((Source { slot, kind: SourceKind::ItemIterate { root: root_slot, array } }, true))
            }
        }
    }

    fn join_source(&self, source: &FromSource, scope: &mut Scope) -> Result<Source, PlanError> {
        match source {
            FromSource::Aliased { collection: Collection::Subquery(q), alias, .. } => {
                let inner = self.query(q, scope, false)?;
                let slot = scope.new_slot(alias.as_ref().map(|a| a.name.as_str()), None);
                Ok(Source { slot, kind: SourceKind::Subquery(Box::new(inner)) })
            }
            FromSource::Aliased { collection: Collection::Path { root, path, span }, alias, .. } => {
                let outer = scope.resolve(&root.name).ok_or_else(|| rules::unresolved_identifier(&root.name, *span))?;
                let steps = path_steps(path);
                let value =
                    if steps.is_empty() { BoundExpr::Slot(outer) } else { BoundExpr::Path { slot: outer, steps } };
                let document = scope.document_path(&value);
                let name = alias.as_ref().map(|a| a.name.clone()).unwrap_or_else(|| default_alias(&root.name, path));
                let slot = scope.new_slot(Some(&name), document);
                Ok(Source { slot, kind: SourceKind::Value(value) })
            }
            FromSource::Iterate { alias, array, .. } => {
                let array = self.expr(array, scope, None)?;
                let document = elements_of(scope.document_path(&array));
                let slot = scope.new_slot(Some(&alias.name), document);
                Ok(Source { slot, kind: SourceKind::Iterate(array) })
            }
        }
    }

    /// Binds an expression. `aggregates` is `Some` where aggregate functions are allowed; they
    /// are collected there and replaced by `BoundExpr::Aggregate`.
    fn expr(&self, e: &Expr, scope: &Scope, aggregates: Aggregates<'_>) -> Result<BoundExpr, PlanError> {
        let mut aggs = aggregates;
        self.expr_inner(e, scope, &mut aggs)
    }

    fn expr_inner(&self, e: &Expr, scope: &Scope, aggs: &mut Aggregates<'_>) -> Result<BoundExpr, PlanError> {
        let sub = |x: &Expr, aggs: &mut Aggregates<'_>| self.expr_inner(x, scope, aggs);
        Ok(match &e.kind {
            ExprKind::Literal(l) => BoundExpr::Const(literal(l)),
            ExprKind::Parameter(name) => match self.context.parameters.get(name) {
                Some(v) => BoundExpr::Const(v.clone()),
                None => return Err(PlanError::bind(format!("the parameter @{name} is not defined"), e.span)),
            },
            ExprKind::Identifier(name) => match scope.resolve(name) {
                Some(slot) => BoundExpr::Slot(slot),
                None => {
                    let mut error = rules::unresolved_identifier(name, e.span);
                    // `SELECT c.id FROM families`: the name after FROM is the items' name.
                    if let Some((alias, _)) = scope.names.first() {
                        error.hint = Some(format!(
                            "the name after FROM is what the query calls each item, here `{alias}`: write \
                             {alias} in place of {name}, or FROM {alias} {name}"
                        ));
                    }
                    return Err(error);
                }
            },
            ExprKind::Property { base, name } => {
                let base = sub(base, aggs)?;
                extend_path(base, Step::Key(name.name.clone()))
            }
            ExprKind::Index { base, index } => {
                let base = sub(base, aggs)?;
                match sub(index, aggs)? {
                    BoundExpr::Const(Value::String(k)) => extend_path(base, Step::Key(k.to_string())),
                    BoundExpr::Const(Value::Number(n)) if n >= 0.0 && n.fract() == 0.0 && n < 4_294_967_296.0 => {
                        extend_path(base, Step::Index(n as usize))
                    }
                    // A constant that is no index (`c.a[-1]`, `c.a[@p]` with @p = 0.5) reads
                    // undefined, but stays a path for ORDER BY.
                    index @ BoundExpr::Const(_) => BoundExpr::Index(Box::new(base), Box::new(index)),
                    _ => return Err(rules::member_indexer(e.span)),
                }
            }
            ExprKind::Array(items) => {
                let items = items.iter().map(|i| sub(i, aggs)).collect::<Result<Vec<_>, _>>()?;
                if items.iter().all(|i| matches!(i, BoundExpr::Const(_))) {
                    let values = items.into_iter().filter_map(|i| match i {
                        BoundExpr::Const(v) if !v.is_undefined() => Some(v),
                        _ => None,
                    });
                    BoundExpr::Const(Value::from(values.collect::<Vec<_>>()))
                } else {
                    BoundExpr::Array(items)
                }
            }
            ExprKind::Object(props) => {
                let mut out = Vec::with_capacity(props.len());
                for p in props {
                    out.push((p.name.name.clone(), sub(&p.value, aggs)?));
                }
                if out.iter().all(|(_, v)| matches!(v, BoundExpr::Const(_))) {
                    let mut map = Map::default();
                    for (k, v) in out {
                        if let BoundExpr::Const(v) = v {
                            if !v.is_undefined() {
                                map.insert(k, v);
                            }
                        }
                    }
                    BoundExpr::Const(Value::from(map))
                } else {
                    BoundExpr::Object(out)
                }
            }
            ExprKind::Unary { op, operand } => {
                let operand = sub(operand, aggs)?;
                match &operand {
                    BoundExpr::Const(v) => BoundExpr::Const(unary(*op, v)),
                    _ => BoundExpr::Unary(*op, Box::new(operand)),
                }
            }
            ExprKind::Binary { op, left, right } => {
                let (l, r) = (sub(left, aggs)?, sub(right, aggs)?);
                match (&l, &r) {
                    (BoundExpr::Const(a), BoundExpr::Const(b)) => BoundExpr::Const(binary(*op, a, b)),
                    _ => BoundExpr::Binary(*op, Box::new(l), Box::new(r)),
                }
            }
            ExprKind::Between { expr, low, high, negated } => BoundExpr::Between {
                expr: Box::new(sub(expr, aggs)?),
                low: Box::new(sub(low, aggs)?),
                high: Box::new(sub(high, aggs)?),
                negated: *negated,
            },
            ExprKind::In { expr, list, negated } => {
                let list: Vec<BoundExpr> = list.iter().map(|i| sub(i, aggs)).collect::<Result<_, _>>()?;
                let set = constant_set(list.iter().map(|i| match i {
                    BoundExpr::Const(v) => Some(v),
                    _ => None,
                }));
                BoundExpr::In { expr: Box::new(sub(expr, aggs)?), list, set, negated: *negated }
            }
            ExprKind::Like { expr, pattern, escape, negated } => {
                let escape_char = escape.as_ref().and_then(|s| s.chars().next());
                let pattern = sub(pattern, aggs)?;
                let compiled = match &pattern {
                    BoundExpr::Const(Value::String(p)) => Some(LikePattern::compile(p, escape_char)),
                    _ => None,
                };
                BoundExpr::Like {
                    expr: Box::new(sub(expr, aggs)?),
                    pattern: Box::new(pattern),
                    compiled,
                    escape: escape_char,
                    negated: *negated,
                }
            }
            ExprKind::Conditional { condition, then, otherwise } => BoundExpr::Conditional {
                condition: Box::new(sub(condition, aggs)?),
                then: Box::new(sub(then, aggs)?),
                otherwise: Box::new(sub(otherwise, aggs)?),
            },
            ExprKind::Call { name, udf, args } => return self.call(e, name, *udf, args, scope, aggs),
            ExprKind::Subquery(q) => {
                BoundExpr::Subquery { query: Box::new(self.subquery(q, scope, e.span)?), kind: SubqueryKind::Scalar }
            }
            ExprKind::Exists(q) => {
                BoundExpr::Subquery { query: Box::new(self.subquery(q, scope, e.span)?), kind: SubqueryKind::Exists }
            }
            ExprKind::ArraySubquery(q) => {
                BoundExpr::Subquery { query: Box::new(self.subquery(q, scope, e.span)?), kind: SubqueryKind::Array }
            }
        })
    }

    fn call(
        &self,
        e: &Expr,
        name: &cosmoql_parser::Ident,
        udf: bool,
        args: &[Expr],
        scope: &Scope,
        aggs: &mut Aggregates<'_>,
    ) -> Result<BoundExpr, PlanError> {
        if udf {
            if !self.context.udfs.contains(&name.name) {
                return Err(rules::unknown_udf(&name.name, e.span));
            }
            let args = args.iter().map(|a| self.expr_inner(a, scope, aggs)).collect::<Result<Vec<_>, _>>()?;
            return Ok(BoundExpr::Udf { name: name.name.clone(), args, span: e.span });
        }
        let Some(function) = lookup(&name.name) else { return Err(rules::unknown_function(&name.name, name.span)) };
        let signature = function.signature();
        match signature.kind {
            FunctionKind::Ranking if signature.name == "FullTextScore" => {
                return Err(rules::full_text_score_outside_rank(e.span))
            }
            // Outside ORDER BY RANK, the service does not know RRF at all.
            FunctionKind::Ranking => return Err(rules::unknown_function(&name.name, name.span)),
            FunctionKind::Aggregate(kind) => {
                let Some(list) = aggs.as_deref_mut() else {
                    return Err(PlanError::bind(
                        format!("the aggregate {} is not allowed here (only in SELECT and ORDER BY)", kind.name()),
                        e.span,
                    ));
                };
                if !signature.accepts(args.len()) {
                    return Err(rules::wrong_argument_count(signature, e.span));
                }
                // The argument is evaluated per row: no aggregate or subquery inside it.
                if contains_aggregate_or_subquery(&args[0]) {
                    return Err(rules::aggregate_of_aggregate(e.span));
                }
                let arg = self.expr_inner(&args[0], scope, &mut None)?;
                list.push(AggregateSpec { kind, arg });
                return Ok(BoundExpr::Aggregate(list.len() - 1));
            }
            _ => {}
        }
        if !signature.accepts(args.len()) {
            return Err(rules::wrong_argument_count(signature, e.span));
        }
        if signature.kind == FunctionKind::DocumentId {
            // The item's numeric id inside its container (from its `_rid`).
            return Ok(match self.expr_inner(&args[0], scope, aggs)? {
                BoundExpr::Slot(slot) => BoundExpr::DocumentId(slot),
                _ => BoundExpr::Const(Value::Undefined),
            });
        }
        let args = args.iter().map(|a| self.expr_inner(a, scope, aggs)).collect::<Result<Vec<_>, _>>()?;
        let vector_policy = if rules::is_vector_distance(signature.name) {
            args.iter().take(2).find_map(|a| self.vector_policy_for(a))
        } else {
            None
        };
        let set = match (signature.name, args.first(), args.get(2)) {
            (
                "ARRAY_CONTAINS",
                Some(BoundExpr::Const(Value::Array(items))),
                None | Some(BoundExpr::Const(Value::Bool(false))),
            )
            | ("ARRAY_CONTAINS_ANY" | "ARRAY_CONTAINS_ALL", Some(BoundExpr::Const(Value::Array(items))), _) => {
                constant_set(items.iter().map(Some))
            }
            _ => None,
        };
        Ok(BoundExpr::Call { function, args, vector_policy, set, span: e.span })
    }

    /// A scoring function of ORDER BY RANK: FullTextScore, VectorDistance, or RRF of them.
    fn rank_fn(&self, e: &Expr, scope: &Scope, top: bool) -> Result<RankFn, PlanError> {
        let ExprKind::Call { name, udf: false, args } = &e.kind else {
            return Err(rules::not_a_scoring_function(e.span));
        };
        if name.name.eq_ignore_ascii_case("FullTextScore") {
            let Some((text, terms)) = args.split_first() else {
                return Err(PlanError::bind("FullTextScore takes a property and at least one term", e.span));
            };
            let mut words = Vec::new();
            for t in terms {
                match self.expr(t, scope, None)? {
                    BoundExpr::Const(Value::String(w)) => words.push(w.to_string()),
                    BoundExpr::Const(Value::Array(items)) => {
                        for i in items.iter() {
                            match i.as_str() {
                                Some(w) => words.push(w.to_string()),
                                None => return Err(PlanError::bind("FullTextScore terms are strings", t.span)),
                            }
                        }
                    }
                    _ => return Err(PlanError::bind("FullTextScore terms are string constants", t.span)),
                }
            }
            if words.is_empty() {
                return Err(PlanError::bind("FullTextScore takes a property and at least one term", e.span));
            }
            return Ok(RankFn::FullText { text: self.expr(text, scope, None)?, terms: words });
        }
        if name.name.eq_ignore_ascii_case("VectorDistance") {
            let call = self.expr(e, scope, None)?;
            let similarity = vector_similarity(&call);
            return Ok(RankFn::Distance { call, similarity });
        }
        if name.name.eq_ignore_ascii_case("RRF") && top {
            let mut parts = Vec::new();
            let mut weights = Vec::new();
            for (i, a) in args.iter().enumerate() {
                // The weights, an array of numbers, come last; the scoring functions in any order.
                if i + 1 == args.len() && i > 0 && !matches!(a.kind, ExprKind::Call { .. }) {
                    match self.expr(a, scope, None)? {
                        BoundExpr::Const(Value::Array(w)) => {
                            weights = w
                                .iter()
                                .map(|x| x.as_f64().ok_or_else(|| rules::bad_rrf_weights(a.span)))
                                .collect::<Result<_, _>>()?;
                            continue;
                        }
                        _ => return Err(rules::bad_rrf_weights(a.span)),
                    }
                }
                parts.push(self.rank_fn(a, scope, false)?);
            }
            // RRF fuses two or more scores.
            if parts.len() < 2 {
                return Err(rules::not_a_scoring_function(e.span));
            }
            if !weights.is_empty() && weights.len() != parts.len() {
                return Err(rules::bad_rrf_weights(args[args.len() - 1].span));
            }
            return Ok(RankFn::Fusion { parts, weights });
        }
        Err(rules::not_a_scoring_function(e.span))
    }

    fn subquery(&self, q: &Query, scope: &Scope, span: Span) -> Result<BoundQuery, PlanError> {
        let bound = self.query(q, scope, false)?;
        if bound.reads_items {
            return Err(PlanError::bind(
                "a subquery here reads from an alias of the enclosing query (e.g. `FROM t IN c.tags`), not from the container",
                span,
            ));
        }
        Ok(bound)
    }

    fn vector_policy_for(&self, arg: &BoundExpr) -> Option<VectorPolicy> {
        let BoundExpr::Path { steps, .. } = arg else { return None };
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
        self.context.vector_policies.iter().find(|p| p.path == path).cloned()
    }
}

/// Whether an ORDER BY expression is a VectorDistance whose distance is a similarity (higher is
/// closer), which the service sorts most-similar first.
fn vector_similarity(e: &BoundExpr) -> bool {
    let BoundExpr::Call { function, args, vector_policy, .. } = e else { return false };
    if !rules::is_vector_distance(function.name()) {
        return false;
    }
    let from_options = match args.get(3) {
        Some(BoundExpr::Const(options)) => options.get("distanceFunction").as_str().map(str::to_ascii_lowercase),
        _ => None,
    };
    match from_options {
        Some(function) => function != "euclidean",
        None => vector_policy.as_ref().is_none_or(VectorPolicy::is_similarity),
    }
}

fn extend_path(base: BoundExpr, step: Step) -> BoundExpr {
    match base {
        BoundExpr::Slot(slot) => BoundExpr::Path { slot, steps: vec![step] },
        BoundExpr::Path { slot, mut steps } => {
            steps.push(step);
            BoundExpr::Path { slot, steps }
        }
        BoundExpr::Const(v) => BoundExpr::Const(match step {
            Step::Key(k) => v.get(&k).clone(),
            Step::Index(i) => v.index(i).clone(),
        }),
        other => match step {
            Step::Key(k) => BoundExpr::Property(Box::new(other), k),
            Step::Index(i) => BoundExpr::Index(Box::new(other), Box::new(BoundExpr::Const(Value::from(i as f64)))),
        },
    }
}

fn path_steps(path: &[PathSegment]) -> Vec<Step> {
    path.iter()
        .map(|s| match s {
            PathSegment::Property(i) => Step::Key(i.name.clone()),
            PathSegment::Key { name, .. } => Step::Key(name.clone()),
            PathSegment::Index { index, .. } => Step::Index(usize::try_from(*index).unwrap_or(usize::MAX)),
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
/// The name a select-list item without `AS` takes: its last property name (`c.a.b` is `b`, `c["x y"]`
/// is `x y`), an alias's own name; `None` for any other expression (those are `$1`, `$2`, ... in
/// order).
pub fn inferred_name(e: &Expr) -> Option<String> {
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

/// `ORDER BY RANK` reads the container's items directly: no `FROM x IN`, JOIN or FROM subquery.
fn rules_for_rank(q: &Query) -> Result<(), PlanError> {
    let Some(from) = &q.from else { return Ok(()) };
    match &from.source {
        FromSource::Iterate { span, .. } => return Err(rules::rank_with_from_in(*span)),
        FromSource::Aliased { collection: Collection::Subquery(_), span, .. } => {
            return Err(rules::rank_with_from_subquery(*span))
        }
        FromSource::Aliased { .. } => {}
    }
    match from.joins.first() {
        Some(FromSource::Aliased { span, .. } | FromSource::Iterate { span, .. }) => Err(rules::rank_with_join(*span)),
        None => Ok(()),
    }
}

/// In a query that groups or aggregates, the select list may refer to properties only through a
/// GROUP BY expression or inside an aggregate, and so may ORDER BY in a query with GROUP BY.
/// An aggregate without GROUP BY may be ordered by anything: the service answers
/// `SELECT VALUE AVG(r.key) FROM r WHERE IS_NUMBER(r.key) ORDER BY r.key` (and COUNT, SUM, MIN,
/// MAX) with the aggregate (Azure/azure-sdk-for-js,
/// sdk/cosmosdb/cosmos/test/public/integration/aggregateQuery.spec.ts, "... with ORDER BY"
/// against the service); SC2103 is recorded for GROUP BY queries only.
fn rules_for_groups(q: &Query) -> Result<(), PlanError> {
    let select: Vec<&Expr> = match &q.select.projection {
        Projection::Star(_) => vec![],
        Projection::Value(e) => vec![e],
        Projection::List(items) => items.iter().map(|i| &i.expr).collect(),
    };
    for e in select {
        if let Some(bad) = ungrouped(e, &q.group_by) {
            return Err(rules::not_grouped_in_select(&bad.to_string(), bad.span));
        }
    }
    for item in q.order_by.iter().filter(|_| !q.order_by_rank && !q.group_by.is_empty()) {
        if let Some(bad) = ungrouped(&item.expr, &q.group_by) {
            return Err(rules::not_grouped_in_order_by(&bad.to_string(), bad.span));
        }
    }
    Ok(())
}

/// The first property reference in `e` that is neither a group key, nor a path into one, nor
/// inside an aggregate. A member of a value the query builds from group keys is fine: the .NET
/// SDK's emulator baseline `LinqGeneralBaselineTests.TestGroupByMultiKeyTranslation` runs
/// `SELECT VALUE {"key1": root["id"], "key2": root["FamilyId"]}["key1"] FROM root GROUP BY
/// root["id"], root["FamilyId"]`, and its query-plan baseline `QueryPlanBaselineTests.GroupBy`
/// ("GROUP BY in multiple subqueries and outer query") compiles `g1.name` with `GROUP BY s1,
/// g1`. That a longer path into any group key (`c.a.b` with `GROUP BY c.a`) is fine too is
/// inferred from the second.
fn ungrouped<'e>(e: &'e Expr, keys: &[Expr]) -> Option<&'e Expr> {
    if keys.iter().any(|k| k == e) {
        return None;
    }
    match &e.kind {
        ExprKind::Identifier(_) => Some(e),
        // `c.a`, `c["a"]`, `c[0]`, `c[@p]` are property references; a member of anything else
        // (an object or array the query builds) is as grouped as that value.
        ExprKind::Property { base, .. } | ExprKind::Index { base, .. } if is_reference(e) => {
            if within_key(base, keys) {
                None
            } else {
                Some(e)
            }
        }
        ExprKind::Property { base, .. } => ungrouped(base, keys),
        ExprKind::Index { base, index } => ungrouped(base, keys).or_else(|| ungrouped(index, keys)),
        ExprKind::Call { name, udf: false, .. } if aggregate_name(&name.name) => None,
        // A subquery's own aliases are its business.
        ExprKind::Subquery(_) | ExprKind::Exists(_) | ExprKind::ArraySubquery(_) => None,
        _ => e.children().into_iter().find_map(|c| ungrouped(c, keys)),
    }
}

/// Whether `e` is a property reference: an identifier followed by property names and constant
/// indexes.
fn is_reference(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Identifier(_) => true,
        ExprKind::Property { base, .. } => is_reference(base),
        ExprKind::Index { base, index } => {
            matches!(index.kind, ExprKind::Literal(_) | ExprKind::Parameter(_)) && is_reference(base)
        }
        _ => false,
    }
}

/// Whether the reference `e` or one of its prefixes is a group key.
fn within_key(e: &Expr, keys: &[Expr]) -> bool {
    if keys.iter().any(|k| k == e) {
        return true;
    }
    match &e.kind {
        ExprKind::Property { base, .. } | ExprKind::Index { base, .. } => within_key(base, keys),
        _ => false,
    }
}

fn aggregate_name(name: &str) -> bool {
    lookup(name).is_some_and(|f| matches!(f.signature().kind, FunctionKind::Aggregate(_)))
}

/// Whether an aggregate's argument holds another aggregate or a subquery.
fn contains_aggregate_or_subquery(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call { name, udf: false, .. } if aggregate_name(&name.name) => true,
        ExprKind::Subquery(_) | ExprKind::Exists(_) | ExprKind::ArraySubquery(_) => true,
        _ => e.children().into_iter().any(contains_aggregate_or_subquery),
    }
}

/// The fewest constants gathered into a set for membership tests; a shorter list is compared
/// element by element, which is as fast.
const SET_FROM: usize = 8;

/// A set of constants, when there are enough of them and all are constants.
fn constant_set<'a>(values: impl ExactSizeIterator<Item = Option<&'a Value>>) -> Option<Arc<ValueSet>> {
    if values.len() < SET_FROM {
        return None;
    }
    let values: Option<Vec<&Value>> = values.collect();
    ValueSet::new(values?).map(Arc::new)
}
