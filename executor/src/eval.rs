//! Evaluating bound expressions on a row, with Cosmos DB semantics: a missing property is
//! undefined, operators on the wrong types give undefined, `<`/`>` across types give undefined
//! (`=` across two defined types is false), and AND/OR/NOT are three-valued (the operators themselves are
//! `cosmoql_planner::ops`, shared with constant folding; the comparison rules are
//! `cosmoql_value::ops`).

use cosmoql_parser::BinaryOp;
use cosmoql_planner::ops::{binary, unary};
use cosmoql_planner::{BoundExpr, BoundQuery, Step, SubqueryKind};
use cosmoql_value::{and, not, or, query_eq, query_ge, query_le, LikePattern, Map, Value};

use crate::error::{QueryError, QueryErrorKind};
use crate::functions::{self, FunctionContext, MAX_BUILT};
use crate::row::{Binding, Row};
use crate::source::QuerySource;
use cosmoql_storage::{DocRef, StoredItem};

/// Runs subqueries for the evaluator (the operators implement it; the evaluator does not know
/// them).
pub trait Subqueries {
    /// The results of `query` for one row of the enclosing query.
    fn run_subquery(&self, query: &BoundQuery, outer: &Row) -> Result<Vec<Value>, QueryError>;
}

/// Runs user-defined functions (`udf.name(args)`). The facade implements it over the container's
/// scripts and an embedded JavaScript engine; the query crates never run JavaScript themselves.
pub trait UdfHost: Send + Sync + std::fmt::Debug {
    /// The names of the UDFs the container has (what `udf.name` may bind to).
    fn names(&self) -> Vec<String>;
    /// Runs the UDF `name` on `args` (each defined: a call with an undefined argument is skipped
    /// before it gets here). `span` is the call's, for the error. The result may be undefined.
    fn call(&self, name: &str, args: &[Value], span: cosmoql_parser::Span) -> Result<Value, QueryError>;
}

/// Everything evaluation needs besides the row.
pub struct EvalContext<'a> {
    /// Materializes items and their system properties.
    pub source: &'a dyn QuerySource,
    /// Aggregate values of the current group, when projecting a group.
    pub aggregates: Option<&'a [Value]>,
    /// Runs subqueries.
    pub subqueries: &'a dyn Subqueries,
    /// When the query started (ticks): the `*Static` clock functions' one value.
    pub query_ticks: i64,
    /// Runs `udf.name(...)` calls (`None`: the container has no UDFs, and no query binds one).
    pub udfs: Option<&'a dyn UdfHost>,
}

impl std::fmt::Debug for EvalContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalContext").field("aggregates", &self.aggregates).finish_non_exhaustive()
    }
}

fn slot_value(ctx: &EvalContext<'_>, row: &Row, slot: usize) -> Value {
    match row.get(slot) {
        Some(Binding::Item(item)) => ctx.source.materialize(item),
        Some(Binding::Value(v)) => v.clone(),
        _ => Value::Undefined,
    }
}

fn follow(mut v: Value, steps: &[Step]) -> Value {
    for step in steps {
        v = match step {
            Step::Key(k) => v.get(k).clone(),
            Step::Index(i) => v.index(*i).clone(),
        };
        if v.is_undefined() {
            break;
        }
    }
    v
}

/// A value the query builds (an array or object, a SELECT list, `ARRAY(SELECT ...)`), or an
/// error if it stands for more than [`MAX_BUILT`] bytes of JSON. Its parts are shared, not
/// copied, so `[t, t]` nested 40 deep is cheap to build and 2^40 times `t` to print, compare or
/// hash: the bound keeps every value a query makes printable.
pub(crate) fn built(v: Value, what: &str) -> Result<Value, QueryError> {
    match v.json_len_within(MAX_BUILT) {
        Some(_) => Ok(v),
        None => Err(QueryError::new(
            QueryErrorKind::Eval,
            format!("{what} built by the query would be more than {MAX_BUILT} bytes of JSON, the most a query builds"),
            None,
        )),
    }
}

/// `v IN (list)`, comparing `v` with each element in turn: `true` at the first equal one,
/// otherwise `undefined` if a comparison was undefined, else `false`.
fn in_list(ctx: &EvalContext<'_>, row: &Row, v: &Value, list: &[BoundExpr]) -> Result<Value, QueryError> {
    let mut result = Value::Bool(false);
    for item in list {
        match query_eq(v, &item.eval(ctx, row)?) {
            Value::Bool(true) => return Ok(Value::Bool(true)),
            Value::Bool(false) => {}
            _ => result = Value::Undefined,
        }
    }
    Ok(result)
}

/// What a path of a stored item reaches: a part of its document, a system property's value
/// (followed by the rest of the path), or nothing.
#[derive(Debug)]
pub enum Reached<'i> {
    Doc(DocRef<'i>),
    System(Value),
    Nothing,
}

/// Follows `steps` in a stored item without decoding anything (a first step naming a system
/// property reads that property).
#[inline]
pub fn reach<'i>(source: &dyn QuerySource, item: &'i StoredItem, steps: &[Step]) -> Reached<'i> {
    let mut cur = item.doc.root();
    for (i, step) in steps.iter().enumerate() {
        let next = match step {
            Step::Key(k) => {
                if i == 0 && k.starts_with('_') {
                    let sys = source.system_property(item, k);
                    if !sys.is_undefined() {
                        return Reached::System(follow(sys, &steps[1..]));
                    }
                }
                cur.get(k)
            }
            Step::Index(n) => cur.index(*n),
        };
        match next {
            Some(n) => cur = n,
            None => return Reached::Nothing,
        }
    }
    Reached::Doc(cur)
}

/// Reads `steps` from a binding without decoding more than the value found.
pub fn read_path(ctx: &EvalContext<'_>, binding: Option<&Binding>, steps: &[Step]) -> Value {
    match binding {
        Some(Binding::Item(item)) if steps.is_empty() => ctx.source.materialize(item),
        Some(Binding::Item(item)) => match reach(ctx.source, item, steps) {
            Reached::Doc(part) => part.to_value(),
            Reached::System(v) => v,
            Reached::Nothing => Value::Undefined,
        },
        Some(Binding::Value(v)) => follow(v.clone(), steps),
        _ => Value::Undefined,
    }
}

/// Evaluates bound expressions.
pub trait Eval {
    /// The value of the expression on a row.
    fn eval(&self, ctx: &EvalContext<'_>, row: &Row) -> Result<Value, QueryError>;
}

impl Eval for BoundExpr {
    fn eval(&self, ctx: &EvalContext<'_>, row: &Row) -> Result<Value, QueryError> {
        Ok(match self {
            BoundExpr::Const(v) => v.clone(),
            BoundExpr::Slot(slot) => slot_value(ctx, row, *slot),
            BoundExpr::Path { slot, steps } => read_path(ctx, row.get(*slot), steps),
            BoundExpr::Property(base, name) => base.eval(ctx, row)?.get(name).clone(),
            BoundExpr::Index(base, index) => {
                let base = base.eval(ctx, row)?;
                match index.eval(ctx, row)? {
                    Value::String(k) => base.get(&k).clone(),
                    Value::Number(n) if n >= 0.0 && n.fract() == 0.0 => base.index(n as usize).clone(),
                    _ => Value::Undefined,
                }
            }
            BoundExpr::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    let v = item.eval(ctx, row)?;
                    // An undefined element is dropped, as the service does.
                    if !v.is_undefined() {
                        out.push(v);
                    }
                }
                built(Value::from(out), "an array")?
            }
            BoundExpr::Object(props) => {
                let mut map = Map::with_capacity_and_hasher(props.len(), Default::default());
                for (name, e) in props {
                    let v = e.eval(ctx, row)?;
                    if !v.is_undefined() {
                        map.insert(name.clone(), v);
                    }
                }
                built(Value::from(map), "an object")?
            }
            BoundExpr::Unary(op, e) => unary(*op, &e.eval(ctx, row)?),
            BoundExpr::Binary(BinaryOp::And, l, r) => {
                let left = l.eval(ctx, row)?;
                if left == Value::Bool(false) {
                    return Ok(left);
                }
                and(&left, &r.eval(ctx, row)?)
            }
            BoundExpr::Binary(BinaryOp::Or, l, r) => {
                let left = l.eval(ctx, row)?;
                if left == Value::Bool(true) {
                    return Ok(left);
                }
                or(&left, &r.eval(ctx, row)?)
            }
            BoundExpr::Binary(BinaryOp::Coalesce, l, r) => {
                let left = l.eval(ctx, row)?;
                if left.is_undefined() {
                    r.eval(ctx, row)?
                } else {
                    left
                }
            }
            BoundExpr::Binary(op, l, r) => binary(*op, &l.eval(ctx, row)?, &r.eval(ctx, row)?),
            BoundExpr::Between { expr, low, high, negated } => {
                let v = expr.eval(ctx, row)?;
                let inside = and(&query_ge(&v, &low.eval(ctx, row)?), &query_le(&v, &high.eval(ctx, row)?));
                if *negated {
                    not(&inside)
                } else {
                    inside
                }
            }
            BoundExpr::In { expr, list, set, negated } => {
                let v = expr.eval(ctx, row)?;
                let result = match set {
                    // A long list of constants: one lookup.
                    Some(set) => set.query_in(&v),
                    None => in_list(ctx, row, &v, list)?,
                };
                if *negated {
                    not(&result)
                } else {
                    result
                }
            }
            BoundExpr::Like { expr, pattern, compiled, escape, negated } => {
                let v = expr.eval(ctx, row)?;
                let matched = match (&v, compiled) {
                    (Value::String(s), Some(p)) => Value::Bool(p.matches(s)),
                    (Value::String(s), None) => match pattern.eval(ctx, row)? {
                        Value::String(p) => Value::Bool(LikePattern::compile(&p, *escape).matches(s)),
                        _ => Value::Undefined,
                    },
                    _ => Value::Undefined,
                };
                if *negated {
                    not(&matched)
                } else {
                    matched
                }
            }
            BoundExpr::Conditional { condition, then, otherwise } => {
                if condition.eval(ctx, row)? == Value::Bool(true) {
                    then.eval(ctx, row)?
                } else {
                    otherwise.eval(ctx, row)?
                }
            }
            BoundExpr::Call { function, args, vector_policy, set, span } => {
                if let Some(set) = set {
                    // A long constant array: one lookup per value instead of a pass over it.
                    let mut needles = Vec::with_capacity(args.len() - 1);
                    for a in &args[1..] {
                        needles.push(a.eval(ctx, row)?);
                    }
                    return Ok(functions::contains_in_set(function.name(), set, &needles));
                }
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(a.eval(ctx, row)?);
                }
                let body = functions::body(*function)
                    .ok_or_else(|| QueryError::internal(format!("the function {} has no body", function.name())))?;
                let context =
                    FunctionContext { vector_policy: vector_policy.as_ref(), query_ticks: Some(ctx.query_ticks) };
                body(&values, &context).map_err(|e| QueryError::eval(format!("{}: {e}", function.name()), *span))?
            }
            BoundExpr::Udf { name, args, span } => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    let v = a.eval(ctx, row)?;
                    // "If the properties referred to by the UDF parameters aren't available in
                    // the JSON value, the parameter is considered as undefined and the UDF
                    // invocation is skipped" (research, section 4).
                    if v.is_undefined() {
                        return Ok(Value::Undefined);
                    }
                    values.push(v);
                }
                let host = ctx.udfs.ok_or_else(|| {
                    QueryError::internal(format!("udf.{name} was bound but the query has no UDF host"))
                })?;
                host.call(name, &values, *span)?
            }
            BoundExpr::DocumentId(slot) => match row.get(*slot) {
                Some(Binding::Item(item)) => Value::from(item.meta.seq as f64),
                _ => Value::Undefined,
            },
            BoundExpr::Aggregate(i) => ctx
                .aggregates
                .and_then(|a| a.get(*i))
                .cloned()
                .ok_or_else(|| QueryError::internal("an aggregate was evaluated outside a group"))?,
            BoundExpr::Subquery { query, kind } => {
                let results = ctx.subqueries.run_subquery(query, row)?;
                match kind {
                    SubqueryKind::Scalar => results.into_iter().next().unwrap_or(Value::Undefined),
                    SubqueryKind::Exists => Value::Bool(!results.is_empty()),
                    SubqueryKind::Array => built(Value::from(results), "ARRAY(SELECT ...)")?,
                }
            }
        })
    }
}
