//! Compiled scalar expressions and their evaluation with Cosmos DB semantics: a missing property
//! is undefined, operators on the wrong types give undefined, comparisons across types give
//! undefined, and AND/OR/NOT are three-valued (the rules themselves live in `cosmoql_value::ops`).

use cosmoql_parser::{BinaryOp, Span, UnaryOp};
use cosmoql_storage::StoredItem;
use cosmoql_value::{and, not, or, query_eq, query_ge, query_gt, query_le, query_lt, query_ne, Map, Value};

use crate::error::QueryError;
use crate::functions::{FunctionContext, FunctionDef};
use crate::query::{CompiledQuery, Runner};

/// What a row slot holds: a stored item (read lazily from its binary form) or a value.
#[derive(Debug, Clone)]
pub enum Binding {
    Undefined,
    Item(StoredItem),
    Value(Value),
}

/// A row: one binding per alias in scope (outer queries' aliases first).
pub type Row = Vec<Binding>;

/// How system properties and whole items are produced (the container knows its ids).
pub trait ItemContext: Sync {
    /// The whole item with its system properties.
    fn materialize(&self, item: &StoredItem) -> Value;
    /// One system property (`_rid`, `_ts`, ...), `Undefined` for other names.
    fn system_property(&self, item: &StoredItem, name: &str) -> Value;
}

impl ItemContext for cosmoql_storage::Container {
    fn materialize(&self, item: &StoredItem) -> Value {
        cosmoql_storage::Container::materialize(self, item)
    }

    fn system_property(&self, item: &StoredItem, name: &str) -> Value {
        cosmoql_storage::Container::system_property(self, item, name)
    }
}

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

/// A `LIKE` pattern, compiled.
#[derive(Debug, Clone, PartialEq)]
pub struct LikePattern(Vec<LikeToken>);

#[derive(Debug, Clone, PartialEq)]
enum LikeToken {
    Char(char),
    AnyChar,
    AnySeq,
    Set { negated: bool, ranges: Vec<(char, char)> },
}

impl LikePattern {
    /// Compiles `%` (any sequence), `_` (any character), `[abc]`, `[a-f]`, `[^...]`, with an
    /// optional escape character that makes the next character literal.
    pub fn compile(pattern: &str, escape: Option<char>) -> LikePattern {
        let mut tokens = Vec::new();
        let mut chars = pattern.chars().peekable();
        while let Some(c) = chars.next() {
            if Some(c) == escape {
                match chars.next() {
                    Some(next) => tokens.push(LikeToken::Char(next)),
                    None => tokens.push(LikeToken::Char(c)),
                }
                continue;
            }
            match c {
                '%' => {
                    if tokens.last() != Some(&LikeToken::AnySeq) {
                        tokens.push(LikeToken::AnySeq);
                    }
                }
                '_' => tokens.push(LikeToken::AnyChar),
                '[' => {
                    // A set runs to the next `]`; without one, `[` is literal.
                    let rest: String = chars.clone().collect();
                    match rest.find(']') {
                        Some(end) if end > 0 => {
                            let body: Vec<char> = rest[..end].chars().collect();
                            for _ in 0..=body.len() {
                                chars.next();
                            }
                            let (negated, body) = match body.split_first() {
                                Some(('^', tail)) => (true, tail.to_vec()),
                                _ => (false, body),
                            };
                            let mut ranges = Vec::new();
                            let mut i = 0;
                            while i < body.len() {
                                if i + 2 < body.len() && body[i + 1] == '-' {
                                    ranges.push((body[i], body[i + 2]));
                                    i += 3;
                                } else {
                                    ranges.push((body[i], body[i]));
                                    i += 1;
                                }
                            }
                            tokens.push(LikeToken::Set { negated, ranges });
                        }
                        _ => tokens.push(LikeToken::Char('[')),
                    }
                }
                c => tokens.push(LikeToken::Char(c)),
            }
        }
        LikePattern(tokens)
    }

    /// Whether `text` matches, in O(len(text) * len(pattern)) at worst.
    pub fn matches(&self, text: &str) -> bool {
        let text: Vec<char> = text.chars().collect();
        let p = &self.0;
        let (mut t, mut i) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        let single = |tok: &LikeToken, c: char| match tok {
            LikeToken::Char(x) => *x == c,
            LikeToken::AnyChar => true,
            LikeToken::Set { negated, ranges } => ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated,
            LikeToken::AnySeq => false,
        };
        while t < text.len() {
            if i < p.len() && p[i] == LikeToken::AnySeq {
                star = Some((i, t));
                i += 1;
            } else if i < p.len() && single(&p[i], text[t]) {
                i += 1;
                t += 1;
            } else if let Some((si, st)) = star {
                i = si + 1;
                t = st + 1;
                star = Some((si, st + 1));
            } else {
                return false;
            }
        }
        p[i..].iter().all(|tok| *tok == LikeToken::AnySeq)
    }
}

/// A compiled scalar expression.
#[derive(Debug, Clone)]
pub enum CExpr {
    Const(Value),
    /// A whole alias (a stored item is materialized with its system properties).
    Slot(usize),
    /// `alias.a.b[0]`: read lazily from a stored item's binary form.
    Path {
        slot: usize,
        steps: Vec<Step>,
    },
    Property(Box<CExpr>, String),
    Index(Box<CExpr>, Box<CExpr>),
    Array(Vec<CExpr>),
    Object(Vec<(String, CExpr)>),
    Unary(UnaryOp, Box<CExpr>),
    Binary(BinaryOp, Box<CExpr>, Box<CExpr>),
    Between {
        expr: Box<CExpr>,
        low: Box<CExpr>,
        high: Box<CExpr>,
        negated: bool,
    },
    In {
        expr: Box<CExpr>,
        list: Vec<CExpr>,
        negated: bool,
    },
    Like {
        expr: Box<CExpr>,
        pattern: Box<CExpr>,
        compiled: Option<LikePattern>,
        escape: Option<char>,
        negated: bool,
    },
    Conditional {
        condition: Box<CExpr>,
        then: Box<CExpr>,
        otherwise: Box<CExpr>,
    },
    Call {
        def: &'static FunctionDef,
        args: Vec<CExpr>,
        context: FunctionContext,
        span: Span,
    },
    /// The value of the i-th aggregate of the current group.
    Aggregate(usize),
    /// `DocumentId(alias)`: the item's numeric id in its container (undefined for non-items).
    DocumentId(usize),
    Subquery {
        query: Box<CompiledQuery>,
        kind: SubqueryKind,
    },
}

/// Everything evaluation needs besides the row.
pub struct EvalContext<'a> {
    pub items: &'a dyn ItemContext,
    /// Aggregate values of the current group, when projecting a group.
    pub aggregates: Option<&'a [Value]>,
    /// Runs subqueries.
    pub runner: &'a Runner<'a>,
}

impl std::fmt::Debug for EvalContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalContext").field("aggregates", &self.aggregates).finish_non_exhaustive()
    }
}

fn slot_value(ctx: &EvalContext<'_>, row: &Row, slot: usize) -> Value {
    match row.get(slot) {
        Some(Binding::Item(item)) => ctx.items.materialize(item),
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

/// Reads `steps` from a binding without decoding more than the value found.
pub fn read_path(ctx: &EvalContext<'_>, binding: Option<&Binding>, steps: &[Step]) -> Value {
    match binding {
        Some(Binding::Item(item)) => {
            let mut cur = item.doc.root();
            for (i, step) in steps.iter().enumerate() {
                let next = match step {
                    Step::Key(k) => {
                        if i == 0 && k.starts_with('_') {
                            let sys = ctx.items.system_property(item, k);
                            if !sys.is_undefined() {
                                return follow(sys, &steps[1..]);
                            }
                        }
                        cur.get(k)
                    }
                    Step::Index(n) => cur.index(*n),
                };
                match next {
                    Some(n) => cur = n,
                    None => return Value::Undefined,
                }
            }
            if steps.is_empty() {
                return ctx.items.materialize(item);
            }
            cur.to_value()
        }
        Some(Binding::Value(v)) => follow(v.clone(), steps),
        _ => Value::Undefined,
    }
}

impl CExpr {
    /// Evaluates the expression on a row.
    pub fn eval(&self, ctx: &EvalContext<'_>, row: &Row) -> Result<Value, QueryError> {
        Ok(match self {
            CExpr::Const(v) => v.clone(),
            CExpr::Slot(slot) => slot_value(ctx, row, *slot),
            CExpr::Path { slot, steps } => read_path(ctx, row.get(*slot), steps),
            CExpr::Property(base, name) => base.eval(ctx, row)?.get(name).clone(),
            CExpr::Index(base, index) => {
                let base = base.eval(ctx, row)?;
                match index.eval(ctx, row)? {
                    Value::String(k) => base.get(&k).clone(),
                    Value::Number(n) if n >= 0.0 && n.fract() == 0.0 => base.index(n as usize).clone(),
                    _ => Value::Undefined,
                }
            }
            CExpr::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    let v = item.eval(ctx, row)?;
                    // An undefined element is dropped, as the service does.
                    if !v.is_undefined() {
                        out.push(v);
                    }
                }
                Value::from(out)
            }
            CExpr::Object(props) => {
                let mut map = Map::with_capacity(props.len());
                for (name, e) in props {
                    let v = e.eval(ctx, row)?;
                    if !v.is_undefined() {
                        map.insert(name.clone(), v);
                    }
                }
                Value::from(map)
            }
            CExpr::Unary(op, e) => unary(*op, &e.eval(ctx, row)?),
            CExpr::Binary(BinaryOp::And, l, r) => {
                let left = l.eval(ctx, row)?;
                if left == Value::Bool(false) {
                    return Ok(left);
                }
                and(&left, &r.eval(ctx, row)?)
            }
            CExpr::Binary(BinaryOp::Or, l, r) => {
                let left = l.eval(ctx, row)?;
                if left == Value::Bool(true) {
                    return Ok(left);
                }
                or(&left, &r.eval(ctx, row)?)
            }
            CExpr::Binary(BinaryOp::Coalesce, l, r) => {
                let left = l.eval(ctx, row)?;
                if left.is_undefined() {
                    r.eval(ctx, row)?
                } else {
                    left
                }
            }
            CExpr::Binary(op, l, r) => binary(*op, &l.eval(ctx, row)?, &r.eval(ctx, row)?),
            CExpr::Between { expr, low, high, negated } => {
                let v = expr.eval(ctx, row)?;
                let inside = and(&query_ge(&v, &low.eval(ctx, row)?), &query_le(&v, &high.eval(ctx, row)?));
                if *negated {
                    not(&inside)
                } else {
                    inside
                }
            }
            CExpr::In { expr, list, negated } => {
                let v = expr.eval(ctx, row)?;
                let mut result = Value::Bool(false);
                for item in list {
                    match query_eq(&v, &item.eval(ctx, row)?) {
                        Value::Bool(true) => {
                            result = Value::Bool(true);
                            break;
                        }
                        Value::Bool(false) => {}
                        _ => result = Value::Undefined,
                    }
                }
                if *negated {
                    not(&result)
                } else {
                    result
                }
            }
            CExpr::Like { expr, pattern, compiled, escape, negated } => {
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
            CExpr::Conditional { condition, then, otherwise } => {
                if condition.eval(ctx, row)? == Value::Bool(true) {
                    then.eval(ctx, row)?
                } else {
                    otherwise.eval(ctx, row)?
                }
            }
            CExpr::Call { def, args, context, span } => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(a.eval(ctx, row)?);
                }
                (def.eval)(&values, context).map_err(|e| QueryError::eval(format!("{}: {e}", def.name), *span))?
            }
            CExpr::DocumentId(slot) => match row.get(*slot) {
                Some(Binding::Item(item)) => Value::from(item.meta.seq as f64),
                _ => Value::Undefined,
            },
            CExpr::Aggregate(i) => ctx
                .aggregates
                .and_then(|a| a.get(*i))
                .cloned()
                .ok_or_else(|| QueryError::internal("an aggregate was evaluated outside a group"))?,
            CExpr::Subquery { query, kind } => {
                let results = ctx.runner.run_subquery(query, row)?;
                match kind {
                    SubqueryKind::Scalar => results.into_iter().next().unwrap_or(Value::Undefined),
                    SubqueryKind::Exists => Value::Bool(!results.is_empty()),
                    SubqueryKind::Array => Value::from(results),
                }
            }
        })
    }
}

/// JavaScript's ToInt32.
fn to_int32(n: f64) -> i32 {
    if !n.is_finite() {
        return 0;
    }
    (n.trunc().rem_euclid(4_294_967_296.0) as u64 as u32) as i32
}

/// The prefix operators.
pub fn unary(op: UnaryOp, v: &Value) -> Value {
    match (op, v) {
        (UnaryOp::Not, v) => not(v),
        (UnaryOp::Negate, Value::Number(n)) => Value::Number(-n),
        (UnaryOp::Plus, Value::Number(n)) => Value::Number(*n),
        (UnaryOp::BitNot, Value::Number(n)) => Value::Number(f64::from(!to_int32(*n))),
        _ => Value::Undefined,
    }
}

/// The non-logical binary operators.
pub fn binary(op: BinaryOp, l: &Value, r: &Value) -> Value {
    match op {
        BinaryOp::Eq => return query_eq(l, r),
        BinaryOp::NotEq => return query_ne(l, r),
        BinaryOp::Lt => return query_lt(l, r),
        BinaryOp::LtEq => return query_le(l, r),
        BinaryOp::Gt => return query_gt(l, r),
        BinaryOp::GtEq => return query_ge(l, r),
        BinaryOp::Concat => {
            return match (l, r) {
                (Value::String(a), Value::String(b)) => Value::from(format!("{a}{b}")),
                _ => Value::Undefined,
            }
        }
        BinaryOp::And => return and(l, r),
        BinaryOp::Or => return or(l, r),
        BinaryOp::Coalesce => return if l.is_undefined() { r.clone() } else { l.clone() },
        _ => {}
    }
    let (Value::Number(a), Value::Number(b)) = (l, r) else { return Value::Undefined };
    let (a, b) = (*a, *b);
    Value::Number(match op {
        BinaryOp::Add => a + b,
        BinaryOp::Subtract => a - b,
        BinaryOp::Multiply => a * b,
        BinaryOp::Divide => a / b,
        BinaryOp::Modulo => a % b,
        BinaryOp::BitAnd => f64::from(to_int32(a) & to_int32(b)),
        BinaryOp::BitOr => f64::from(to_int32(a) | to_int32(b)),
        BinaryOp::BitXor => f64::from(to_int32(a) ^ to_int32(b)),
        BinaryOp::ShiftLeft => f64::from(to_int32(a).wrapping_shl(to_int32(b) as u32 & 31)),
        BinaryOp::ShiftRight => f64::from(to_int32(a).wrapping_shr(to_int32(b) as u32 & 31)),
        BinaryOp::ShiftRightZeroFill => f64::from((to_int32(a) as u32).wrapping_shr(to_int32(b) as u32 & 31)),
        _ => return Value::Undefined,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns() {
        let m = |p: &str, t: &str| LikePattern::compile(p, None).matches(t);
        assert!(m("%", ""));
        assert!(m("a%", "abc"));
        assert!(!m("a%", "bac"));
        assert!(m("%b%", "abc"));
        assert!(m("a_c", "abc"));
        assert!(!m("a_c", "abbc"));
        assert!(m("[a-c]x", "bx"));
        assert!(!m("[^a-c]x", "bx"));
        assert!(m("[^a-c]x", "dx"));
        assert!(m("%[0-9]", "abc7"));
        assert!(m("[", "["));
        assert!(!m("abc", "ABC"), "LIKE is case-sensitive");
        let e = |p: &str, t: &str| LikePattern::compile(p, Some('!')).matches(t);
        assert!(e("100!%", "100%"));
        assert!(!e("100!%", "1000"));
        assert!(e("a!_b", "a_b"));
        assert!(!e("a!_b", "axb"));
        // Many `%` over a long text stays fast.
        let long = "a".repeat(10_000);
        assert!(!m(&"%a".repeat(50).replace("%a%a", "%a%b"), &long));
    }

    #[test]
    fn arithmetic_and_bitwise_follow_javascript() {
        let n = Value::from;
        assert_eq!(binary(BinaryOp::Add, &n(1.0), &n(2.0)), n(3.0));
        assert_eq!(binary(BinaryOp::Add, &n(1.0), &Value::from("2")), Value::Undefined);
        assert_eq!(binary(BinaryOp::Modulo, &n(-7.0), &n(3.0)), n(-1.0));
        assert_eq!(binary(BinaryOp::BitAnd, &n(100.0), &n(1000.0)), n(96.0));
        assert_eq!(binary(BinaryOp::BitOr, &n(100.0), &n(1000.0)), n(1004.0));
        assert_eq!(binary(BinaryOp::BitXor, &n(100.0), &n(1000.0)), n(908.0));
        assert_eq!(binary(BinaryOp::ShiftRight, &n(100.0), &n(2.0)), n(25.0));
        assert_eq!(binary(BinaryOp::ShiftLeft, &n(100.0), &n(2.0)), n(400.0));
        assert_eq!(binary(BinaryOp::ShiftRightZeroFill, &n(-1.0), &n(0.0)), n(4294967295.0));
        assert_eq!(binary(BinaryOp::ShiftRight, &n(-8.0), &n(1.0)), n(-4.0));
        assert_eq!(unary(UnaryOp::BitNot, &n(5.0)), n(-6.0));
        assert_eq!(binary(BinaryOp::Concat, &Value::from("a"), &Value::from("b")), Value::from("ab"));
        assert_eq!(binary(BinaryOp::Concat, &Value::from("a"), &n(1.0)), Value::Undefined);
        assert_eq!(to_int32(4294967297.0), 1);
        assert_eq!(to_int32(-1.5), -1);
    }
}
