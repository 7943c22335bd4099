//! The query language's comparison operators and three-valued logic.
//!
//! These follow Cosmos DB for NoSQL and are deliberately different from the
//! total order (`Eq`/`Ord` on [`Value`]):
//!
//! * `=` ([`query_eq`]) is `undefined` when either operand is `undefined`,
//!   `false` between two defined values of different JSON types (null,
//!   boolean, number, string, array, object), and otherwise compares them:
//!   arrays and objects deeply, ignoring object property order. So
//!   `5 = 'a'` is `false` and `5 != null` is `true`, which is what the
//!   service does, not what its "Equality and comparison operators" page
//!   says (`undefined`). The evidence: the .NET SDK's emulator LINQ
//!   baselines (`LinqTranslationWithCustomSerializerBaseline.
//!   TestMemberInitializerDotNetCustomSerializer.xml` records
//!   `WHERE (root["StringValueDotNet"] != null)` returning every item over
//!   string values and `[]` where the field is missing; the checked
//!   `TestOrderByTranslation`/`TestDistinctTranslation` baselines run
//!   `root["NullableInt"] != null` over numbers), the Java SDK's live
//!   `OrderbyDocumentQueryTest` (`where r.propInt != null` asserts every
//!   item that has the property), and the .NET SDK's offline engine
//!   (`ScalarExpressionEvaluator.PerformBinaryEquality`), written by the
//!   query team to mimic the service. Object and array equality between the
//!   two kinds (`[] = {}` is `false`) is that offline engine's, asserted in
//!   its `ScalarExpressionEvaluatorTests`; no live recording shows it.
//!   `../shared/research/cross-type-equality.md` has the sources.
//! * `<`, `<=`, `>`, `>=` ([`query_cmp`]) are defined only between two
//!   numbers, two strings, two booleans (`false < true`) or two nulls; all
//!   other pairs (including two arrays or two objects) give `undefined`.
//! * `!=` ([`query_ne`]) is the negation of `=` (so it is `undefined`
//!   exactly when an operand is).
//! * `AND`/`OR`/`NOT` use three-valued logic where every non-boolean operand
//!   counts as `undefined`.
//! * `WHERE`/`JOIN` filters keep a row only when the condition is exactly
//!   `true` ([`is_truthy`]).
//!
//! Numbers compare as IEEE doubles, so `-0 = 0` is `true`. NaN cannot come
//! from JSON; if one is produced, `NaN = x` is `false` and `NaN < x` is
//! `undefined` (there is no ordering).

use std::cmp::Ordering;
use std::collections::HashSet;

use crate::value::{Map, Value};

/// Cosmos DB `a = b`: `Undefined` when either operand is undefined, `false`
/// for two defined values of different types, else whether they are equal.
pub fn query_eq(a: &Value, b: &Value) -> Value {
    match deep_eq(a, b) {
        Some(eq) => Value::Bool(eq),
        None => Value::Undefined,
    }
}

/// Cosmos DB `a != b`: the negation of [`query_eq`] (`Undefined` when it
/// is).
pub fn query_ne(a: &Value, b: &Value) -> Value {
    match deep_eq(a, b) {
        Some(eq) => Value::Bool(!eq),
        None => Value::Undefined,
    }
}

/// Query equality; `None` when either side is undefined, `false` across two
/// defined types.
fn deep_eq(a: &Value, b: &Value) -> Option<bool> {
    Some(match (a, b) {
        (Value::Undefined, _) | (_, Value::Undefined) => return None,
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| nested_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => objects_eq(x, y),
        _ => false,
    })
}

/// Equality of values nested in arrays/objects: as [`deep_eq`] (and
/// undefined equal to undefined, for completeness; JSON data never contains
/// it).
fn nested_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Undefined, Value::Undefined) => true,
        _ => deep_eq(a, b).unwrap_or(false),
    }
}

fn objects_eq(x: &Map, y: &Map) -> bool {
    x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| nested_eq(v, w)))
}

/// Cosmos DB relational comparison: `Some` only for two numbers, two
/// strings (ordinal, by code point), two booleans (`false < true`) or two
/// nulls (equal); `None` (→ `undefined`) for everything else, including two
/// arrays, two objects, an undefined operand, or a NaN.
pub fn query_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Null, Value::Null) => Some(Ordering::Equal),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        (Value::Number(x), Value::Number(y)) => x.partial_cmp(y),
        (Value::String(x), Value::String(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        _ => None,
    }
}

fn cmp_to_value(a: &Value, b: &Value, pred: fn(Ordering) -> bool) -> Value {
    match query_cmp(a, b) {
        Some(o) => Value::Bool(pred(o)),
        None => Value::Undefined,
    }
}

/// Cosmos DB `a < b` (`Bool` or `Undefined`, see [`query_cmp`]).
pub fn query_lt(a: &Value, b: &Value) -> Value {
    cmp_to_value(a, b, Ordering::is_lt)
}

/// Cosmos DB `a <= b` (`Bool` or `Undefined`, see [`query_cmp`]).
pub fn query_le(a: &Value, b: &Value) -> Value {
    cmp_to_value(a, b, Ordering::is_le)
}

/// Cosmos DB `a > b` (`Bool` or `Undefined`, see [`query_cmp`]).
pub fn query_gt(a: &Value, b: &Value) -> Value {
    cmp_to_value(a, b, Ordering::is_gt)
}

/// Cosmos DB `a >= b` (`Bool` or `Undefined`, see [`query_cmp`]).
pub fn query_ge(a: &Value, b: &Value) -> Value {
    cmp_to_value(a, b, Ordering::is_ge)
}

/// Cosmos DB `a AND b`: `false` if either is `false`; `true` only if both
/// are `true`; otherwise `undefined` (non-booleans count as undefined).
pub fn and(a: &Value, b: &Value) -> Value {
    match (a.as_bool(), b.as_bool()) {
        (Some(false), _) | (_, Some(false)) => Value::Bool(false),
        (Some(true), Some(true)) => Value::Bool(true),
        _ => Value::Undefined,
    }
}

/// Cosmos DB `a OR b`: `true` if either is `true`; `false` only if both are
/// `false`; otherwise `undefined` (non-booleans count as undefined).
pub fn or(a: &Value, b: &Value) -> Value {
    match (a.as_bool(), b.as_bool()) {
        (Some(true), _) | (_, Some(true)) => Value::Bool(true),
        (Some(false), Some(false)) => Value::Bool(false),
        _ => Value::Undefined,
    }
}

/// Cosmos DB `NOT a`: negates a boolean; `undefined` for anything else.
pub fn not(a: &Value) -> Value {
    match a {
        Value::Bool(b) => Value::Bool(!b),
        _ => Value::Undefined,
    }
}

/// Whether a filter condition keeps its row: exactly `Value::Bool(true)`.
/// `false`, `undefined` and every non-boolean value are all "not kept".
pub fn is_truthy(v: &Value) -> bool {
    matches!(v, Value::Bool(true))
}

/// Constant values gathered once for membership tests that would otherwise compare a value
/// with each of them in turn: `x IN (16,000 literals)` over 100,000 items made 1.6 billion
/// comparisons; with the set, 100,000 lookups.
#[derive(Debug, Clone)]
pub struct ValueSet {
    /// The members; `Eq`/`Hash` are the total order's, which agrees with `=` between defined
    /// values on everything but NaN (never a member here: see [`ValueSet::new`]).
    members: HashSet<Value>,
    /// Whether a constant is undefined (`c.x IN (c.missing)` cannot be a set of constants, but
    /// a parameter can be undefined): `v = undefined` is undefined.
    has_undefined: bool,
}

impl ValueSet {
    /// The set of `values`, or `None` if one of them is a NaN or holds one (the total order
    /// makes NaN equal to itself, `=` does not).
    pub fn new<'a>(values: impl IntoIterator<Item = &'a Value>) -> Option<ValueSet> {
        let mut members = HashSet::new();
        let mut has_undefined = false;
        for v in values {
            if holds_nan(v) {
                return None;
            }
            has_undefined |= v.is_undefined();
            members.insert(v.clone());
        }
        Some(ValueSet { members, has_undefined })
    }

    /// Whether a value equal to `v` in the total order is a member: `ARRAY_CONTAINS` of a
    /// constant array.
    pub fn contains(&self, v: &Value) -> bool {
        self.members.contains(v)
    }

    /// `v IN (members)`: `true` if `v = m` for a member `m`; otherwise `undefined` if some
    /// `v = m` is undefined (`v` undefined and the list not empty, or an undefined member), else
    /// `false`. The same as comparing `v` with each member in turn.
    pub fn query_in(&self, v: &Value) -> Value {
        if self.members.is_empty() {
            return Value::Bool(false);
        }
        if v.is_undefined() {
            return Value::Undefined;
        }
        if !holds_nan(v) && self.members.contains(v) {
            return Value::Bool(true);
        }
        if self.has_undefined {
            Value::Undefined
        } else {
            Value::Bool(false)
        }
    }
}

/// Whether `v` is or holds a NaN.
fn holds_nan(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_nan(),
        Value::Array(a) => a.iter().any(holds_nan),
        Value::Object(m) => m.values().any(holds_nan),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Value = Value::Bool(true);
    const F: Value = Value::Bool(false);
    const U: Value = Value::Undefined;

    fn v(json: &str) -> Value {
        crate::parse_json(json).unwrap_or_else(|e| panic!("bad test json {json}: {e}"))
    }

    /// One sample of each kind.
    fn samples() -> Vec<Value> {
        vec![
            Value::Undefined,
            Value::Null,
            Value::from(true),
            Value::from(1),
            Value::from("1"),
            v("[1]"),
            v(r#"{"a": 1}"#),
        ]
    }

    #[test]
    fn eq_across_all_type_pairs() {
        for a in samples() {
            for b in samples() {
                let got = query_eq(&a, &b);
                if a.is_undefined() || b.is_undefined() {
                    assert_eq!(got, U, "{a:?} = {b:?}");
                    assert_eq!(query_ne(&a, &b), U, "{a:?} != {b:?}");
                } else if a.kind() == b.kind() {
                    assert_eq!(got, T, "{a:?} = {b:?}");
                    assert_eq!(query_ne(&a, &b), F, "{a:?} != {b:?}");
                } else {
                    assert_eq!(got, F, "{a:?} = {b:?}");
                    assert_eq!(query_ne(&a, &b), T, "{a:?} != {b:?}");
                }
            }
        }
        // Undefined = undefined is undefined (not true) in queries.
        assert_eq!(query_eq(&U, &U), U);
        assert_eq!(query_ne(&U, &Value::Null), U);
        // The service's answers, not the docs page's (`undefined`): see the module comment.
        assert_eq!(query_ne(&Value::from(5), &Value::Null), T);
        assert_eq!(query_ne(&Value::from("x"), &Value::Null), T);
        assert_eq!(query_eq(&Value::from(0), &Value::from("true")), F);
        assert_eq!(query_eq(&Value::from(0), &F), F);
        assert_eq!(query_eq(&Value::Null, &F), F);
        assert_eq!(not(&query_eq(&Value::from(5), &Value::from("a"))), T);
        assert_eq!(query_eq(&v("[]"), &v("{}")), F);
    }

    #[test]
    fn eq_values() {
        assert_eq!(query_eq(&Value::from(1), &Value::from(1.0)), T);
        assert_eq!(query_eq(&Value::from(-0.0), &Value::from(0)), T);
        assert_eq!(query_eq(&Value::from(1), &Value::from(2)), F);
        assert_eq!(query_eq(&Value::from("a"), &Value::from("A")), F);
        assert_eq!(query_eq(&F, &F), T);
        assert_eq!(query_eq(&T, &F), F);
        assert_eq!(query_eq(&v("[1, [2, {}]]"), &v("[1.0, [2, {}]]")), T);
        assert_eq!(query_eq(&v("[1, 2]"), &v("[2, 1]")), F);
        assert_eq!(query_eq(&v("[1]"), &v("[1, 1]")), F);
        // Deep mismatched types are simply unequal, not undefined.
        assert_eq!(query_eq(&v("[1]"), &v(r#"["1"]"#)), F);
        assert_eq!(query_ne(&v("[1]"), &v(r#"["1"]"#)), T);
        assert_eq!(query_eq(&v(r#"{"a": 1, "b": [null]}"#), &v(r#"{"b": [null], "a": 1}"#)), T);
        assert_eq!(query_eq(&v(r#"{"a": 1}"#), &v(r#"{"a": 1, "b": 2}"#)), F);
        assert_eq!(query_eq(&v(r#"{"a": 1}"#), &v(r#"{"b": 1}"#)), F);
        let nan = Value::from(f64::NAN);
        assert_eq!(query_eq(&nan, &nan), F);
        assert_eq!(query_lt(&nan, &Value::from(1)), U);
    }

    #[test]
    fn cmp_across_all_type_pairs() {
        for a in samples() {
            for b in samples() {
                let comparable = a.kind() == b.kind()
                    && matches!(a, Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_));
                assert_eq!(query_cmp(&a, &b).is_some(), comparable, "{a:?} vs {b:?}");
                for r in [query_lt(&a, &b), query_le(&a, &b), query_gt(&a, &b), query_ge(&a, &b)] {
                    assert_eq!(r.is_bool(), comparable, "{a:?} vs {b:?}");
                    assert_eq!(r.is_undefined(), !comparable, "{a:?} vs {b:?}");
                }
            }
        }
    }

    #[test]
    fn cmp_values() {
        let n = Value::from;
        assert_eq!(query_lt(&n(1.0), &n(2.0)), T);
        assert_eq!(query_lt(&n(2.0), &n(2.0)), F);
        assert_eq!(query_le(&n(2.0), &n(2.0)), T);
        assert_eq!(query_gt(&n(-1.0), &n(-2.0)), T);
        assert_eq!(query_ge(&n(-0.0), &n(0.0)), T);
        assert_eq!(query_gt(&n(-0.0), &n(0.0)), F);
        assert_eq!(query_lt(&Value::from("B"), &Value::from("a")), T);
        assert_eq!(query_lt(&Value::from("ab"), &Value::from("b")), T);
        assert_eq!(query_lt(&Value::from("\u{E000}"), &Value::from("\u{10000}")), T);
        assert_eq!(query_lt(&F, &T), T);
        assert_eq!(query_ge(&F, &T), F);
        assert_eq!(query_le(&Value::Null, &Value::Null), T);
        assert_eq!(query_lt(&Value::Null, &Value::Null), F);
        assert_eq!(query_lt(&v("[1]"), &v("[2]")), U);
        assert_eq!(query_ge(&v("{}"), &v("{}")), U);
        assert_eq!(query_lt(&n(1.0), &Value::from("2")), U);
        assert_eq!(query_lt(&U, &n(1.0)), U);
        assert_eq!(query_lt(&Value::Null, &n(1.0)), U);
    }

    #[test]
    fn and_or_not_truth_tables() {
        // Operands: true, false, undefined, and a non-boolean (treated as undefined).
        let one = Value::from(1);
        let ops = [T, F, U, one.clone()];
        for a in &ops {
            for b in &ops {
                let (ab, bb) = (a.as_bool(), b.as_bool());
                let expect_and = match (ab, bb) {
                    (Some(false), _) | (_, Some(false)) => F,
                    (Some(true), Some(true)) => T,
                    _ => U,
                };
                let expect_or = match (ab, bb) {
                    (Some(true), _) | (_, Some(true)) => T,
                    (Some(false), Some(false)) => F,
                    _ => U,
                };
                assert_eq!(and(a, b), expect_and, "{a:?} AND {b:?}");
                assert_eq!(or(a, b), expect_or, "{a:?} OR {b:?}");
                // Commutative.
                assert_eq!(and(a, b), and(b, a));
                assert_eq!(or(a, b), or(b, a));
            }
        }
        // Spelled out, the rows that matter most.
        assert_eq!(and(&T, &T), T);
        assert_eq!(and(&T, &U), U);
        assert_eq!(and(&F, &U), F);
        assert_eq!(and(&U, &F), F);
        assert_eq!(and(&U, &U), U);
        assert_eq!(and(&T, &one), U);
        assert_eq!(and(&one, &F), F);
        assert_eq!(or(&F, &F), F);
        assert_eq!(or(&F, &U), U);
        assert_eq!(or(&U, &T), T);
        assert_eq!(or(&U, &U), U);
        assert_eq!(or(&F, &one), U);
        assert_eq!(or(&Value::Null, &T), T);
        assert_eq!(not(&T), F);
        assert_eq!(not(&F), T);
        assert_eq!(not(&U), U);
        assert_eq!(not(&Value::Null), U);
        assert_eq!(not(&Value::from(0)), U);
        assert_eq!(not(&Value::from("")), U);
    }

    #[test]
    fn truthiness_is_exactly_true() {
        assert!(is_truthy(&T));
        for x in [F, U, Value::Null, Value::from(1), Value::from("true"), v("[true]"), v("{}")] {
            assert!(!is_truthy(&x), "{x:?}");
        }
        // NOT (undefined) is still not truthy, nor is NOT of a non-boolean.
        assert!(!is_truthy(&not(&U)));
        assert!(!is_truthy(&not(&Value::from(1))));
    }

    #[test]
    fn a_value_set_answers_as_comparing_with_each_member() {
        let pool: Vec<Value> = [
            "null",
            "true",
            "false",
            "0",
            "-0",
            "1",
            "2.5",
            "\"a\"",
            "\"b\"",
            "[]",
            "[1]",
            "[1, \"a\"]",
            "{}",
            r#"{"a": 1, "b": [2]}"#,
            r#"{"b": [2], "a": 1}"#,
        ]
        .iter()
        .map(|t| crate::parse_json(t).unwrap())
        .chain([Value::Undefined])
        .collect();
        // Every list of up to three members of the pool, against every value of the pool.
        for a in 0..pool.len() {
            for b in a..pool.len() {
                for c in b..pool.len() {
                    let list = [pool[a].clone(), pool[b].clone(), pool[c].clone()];
                    let set = ValueSet::new(&list).unwrap();
                    for v in &pool {
                        let mut expected = Value::Bool(false);
                        for m in &list {
                            match query_eq(v, m) {
                                Value::Bool(true) => {
                                    expected = Value::Bool(true);
                                    break;
                                }
                                Value::Bool(false) => {}
                                _ => expected = Value::Undefined,
                            }
                        }
                        assert_eq!(set.query_in(v), expected, "{v:?} IN {list:?}");
                        assert_eq!(set.contains(v), list.contains(v), "{v:?} in {list:?}");
                    }
                }
            }
        }
        assert!(ValueSet::new(&[Value::from(f64::NAN)]).is_none());
        assert_eq!(ValueSet::new(&[Value::from(1)]).unwrap().query_in(&Value::from(f64::NAN)), Value::Bool(false));
    }
}
