//! The total order over values (`Eq`, `Ord`, `Hash` for [`Value`]).
//!
//! This is the order of `ORDER BY`, `MIN`/`MAX`, indexes and merges, and the
//! identity used by `DISTINCT` and `GROUP BY`. It is **not** the query
//! language's `=`/`<` (see [`crate::ops`]).
//!
//! * Kinds first: undefined < null < false < true < numbers < strings <
//!   arrays < objects.
//! * Numbers by numeric value; `-0.0 == 0.0`. All NaNs are one value, placed
//!   **after `+Infinity`** (i.e. the greatest number). This is
//!   [`f64::total_cmp`] after normalising `-0.0` to `0.0` and every NaN to
//!   the canonical positive quiet NaN.
//! * Strings ordinally by their UTF-8 bytes, which is the same as Unicode
//!   code point order. This is the order of the Cosmos DB back end's index.
//!   The .NET SDK compares UTF-16 code units instead; the two disagree only
//!   when a character in U+E000..=U+FFFF meets a supplementary character
//!   (U+10000 and above): in code point order `"\u{E000}" < "\u{10000}"`,
//!   while in UTF-16 order the surrogate `0xD800` sorts before `0xE000`. We
//!   choose code point order because it is what the service (and its index)
//!   produces, and it is also Rust's native `str` order, so it is cheap.
//! * Arrays element-wise (lexicographically) by this same order; a proper
//!   prefix sorts first.
//! * Objects as the sequence of their `(key, value)` entries **sorted by
//!   key**, compared lexicographically (key first, then value); a proper
//!   prefix sorts first. Property order therefore never matters.
//!
//! `Eq` and `Hash` agree with `Ord`: `a.cmp(b) == Equal` ⇔ `a == b` ⇒
//! `hash(a) == hash(b)`. `Undefined == Undefined` (so undefined is one group).

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use crate::value::{Map, Value};

/// Normalises a number for ordering/hashing: `-0.0` → `0.0`, any NaN → the
/// canonical NaN.
#[inline]
fn canonical(n: f64) -> f64 {
    if n.is_nan() {
        f64::NAN
    } else if n == 0.0 {
        0.0
    } else {
        n
    }
}

/// Compares two numbers in the total order (see module docs).
#[inline]
pub(crate) fn cmp_numbers(a: f64, b: f64) -> Ordering {
    canonical(a).total_cmp(&canonical(b))
}

/// Rank of a value's kind, splitting booleans into false < true.
#[inline]
fn rank(v: &Value) -> u8 {
    match v {
        Value::Undefined => 0,
        Value::Null => 1,
        Value::Bool(false) => 2,
        Value::Bool(true) => 3,
        Value::Number(_) => 4,
        Value::String(_) => 5,
        Value::Array(_) => 6,
        Value::Object(_) => 7,
    }
}

/// An object's entries in key order, without allocating when the map's keys
/// are already sorted.
enum SortedEntries<'a> {
    InPlace(indexmap::map::Iter<'a, String, Value>),
    Sorted(std::vec::IntoIter<(&'a String, &'a Value)>),
}

impl<'a> SortedEntries<'a> {
    fn new(map: &'a Map) -> Self {
        if map.keys().is_sorted() {
            SortedEntries::InPlace(map.iter())
        } else {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            // Keys of a map are unique, so an unstable sort is deterministic.
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            SortedEntries::Sorted(entries.into_iter())
        }
    }
}

impl<'a> Iterator for SortedEntries<'a> {
    type Item = (&'a String, &'a Value);
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            SortedEntries::InPlace(it) => it.next(),
            SortedEntries::Sorted(it) => it.next(),
        }
    }
}

fn cmp_objects(a: &Map, b: &Map) -> Ordering {
    let mut ia = SortedEntries::new(a);
    let mut ib = SortedEntries::new(b);
    loop {
        match (ia.next(), ib.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some((ka, va)), Some((kb, vb))) => {
                let o = ka.cmp(kb).then_with(|| va.cmp(vb));
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
    }
}

impl Ord for Value {
    /// The total order described in the [module docs](self).
    fn cmp(&self, other: &Value) -> Ordering {
        match (self, other) {
            (Value::Number(a), Value::Number(b)) => cmp_numbers(*a, *b),
            (Value::String(a), Value::String(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Value::Array(a), Value::Array(b)) => {
                if std::sync::Arc::ptr_eq(a, b) {
                    return Ordering::Equal;
                }
                // Slice `cmp` is lexicographic, shorter prefix first.
                a.as_slice().cmp(b.as_slice())
            }
            (Value::Object(a), Value::Object(b)) => {
                if std::sync::Arc::ptr_eq(a, b) {
                    return Ordering::Equal;
                }
                cmp_objects(a, b)
            }
            _ => rank(self).cmp(&rank(other)),
        }
    }
}

impl PartialOrd for Value {
    /// Always `Some(self.cmp(other))`: this is the *total* order, not the
    /// query language's `<` (for that see [`crate::ops::query_cmp`]).
    fn partial_cmp(&self, other: &Value) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Value {
    /// Identity in the total order: `1 == 1.0`, `-0 == 0`, `NaN == NaN`,
    /// `undefined == undefined`, objects equal regardless of key order.
    /// Not the query language's `=` (see [`crate::ops::query_eq`]).
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Undefined, Value::Undefined) | (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => a == b || (a.is_nan() && b.is_nan()),
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Array(a), Value::Array(b)) => std::sync::Arc::ptr_eq(a, b) || a == b,
            (Value::Object(a), Value::Object(b)) => {
                std::sync::Arc::ptr_eq(a, b)
                    || (a.len() == b.len() && a.iter().all(|(k, va)| b.get(k).is_some_and(|vb| va == vb)))
            }
            _ => false,
        }
    }
}

impl Eq for Value {}

impl Hash for Value {
    /// Consistent with `Eq`: numbers hash their canonical bits (`-0` as `0`,
    /// one NaN), objects hash their entries in key order.
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u8(rank(self));
        match self {
            Value::Undefined | Value::Null | Value::Bool(_) => {}
            Value::Number(n) => state.write_u64(canonical(*n).to_bits()),
            Value::String(s) => s.hash(state),
            Value::Array(a) => {
                state.write_usize(a.len());
                for v in a.iter() {
                    v.hash(state);
                }
            }
            Value::Object(o) => {
                state.write_usize(o.len());
                for (k, v) in SortedEntries::new(o) {
                    k.hash(state);
                    v.hash(state);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn v(json: &str) -> Value {
        crate::parse_json(json).unwrap_or_else(|e| panic!("bad test json {json}: {e}"))
    }

    #[test]
    fn kinds_are_ordered() {
        let ordered = [
            Value::Undefined,
            Value::Null,
            Value::from(false),
            Value::from(true),
            Value::from(f64::NEG_INFINITY),
            Value::from(-1e300),
            Value::from(-1),
            Value::from(0),
            Value::from(0.5),
            Value::from(1e300),
            Value::from(f64::INFINITY),
            Value::from(f64::NAN),
            Value::from(""),
            Value::from("A"),
            Value::from("B"),
            Value::from("a"),
            Value::from("ab"),
            Value::from("b"),
            Value::empty_array(),
            v("[null]"),
            v("[1]"),
            v("[1, 2]"),
            v("[2]"),
            v("[[]]"),
            Value::empty_object(),
            v(r#"{"a": 1}"#),
            v(r#"{"a": 1, "b": 0}"#),
            v(r#"{"a": 2}"#),
            v(r#"{"b": 0}"#),
        ];
        for (i, a) in ordered.iter().enumerate() {
            for (j, b) in ordered.iter().enumerate() {
                assert_eq!(a.cmp(b), i.cmp(&j), "{a:?} vs {b:?}");
                assert_eq!(a == b, i == j, "{a:?} == {b:?}");
            }
        }
        let mut shuffled = ordered.to_vec();
        shuffled.reverse();
        shuffled.rotate_left(7);
        shuffled.sort();
        assert_eq!(shuffled, ordered);
    }

    #[test]
    fn numbers_zero_and_nan() {
        assert_eq!(Value::from(-0.0), Value::from(0.0));
        assert_eq!(Value::from(-0.0).cmp(&Value::from(0)), Ordering::Equal);
        assert_eq!(Value::from(1), Value::from(1.0));
        let nan2 = f64::from_bits((f64::NAN.to_bits() ^ (1 << 63)) | 1);
        assert!(nan2.is_nan());
        assert_eq!(Value::from(f64::NAN), Value::from(nan2));
        assert_eq!(Value::from(nan2).cmp(&Value::from(f64::INFINITY)), Ordering::Greater);
        assert!(Value::from(-0.0) < Value::from(f64::MIN_POSITIVE));
        assert!(Value::from(-f64::MIN_POSITIVE) < Value::from(-0.0));
    }

    #[test]
    fn strings_use_code_point_order_not_utf16() {
        // UTF-8 byte order = code point order: U+E000 < U+10000.
        let private_use = Value::from("\u{E000}");
        let supplementary = Value::from("\u{10000}");
        assert!(private_use < supplementary);
        // Under UTF-16 ordinal comparison (the .NET SDK) it would be the
        // other way round, because U+10000 is encoded as 0xD800 0xDC00.
        let utf16 = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
        assert!(utf16("\u{E000}") > utf16("\u{10000}"));
        // Ordinal, not locale-aware: upper case before lower case.
        assert!(Value::from("Z") < Value::from("a"));
        assert!(Value::from("é") > Value::from("z"));
    }

    #[test]
    fn object_key_order_is_irrelevant() {
        let a = v(r#"{"x": 1, "y": [1, {"p": 1, "q": 2}]}"#);
        let b = v(r#"{"y": [1, {"q": 2, "p": 1}], "x": 1.0}"#);
        assert_eq!(a, b);
        assert_eq!(a.cmp(&b), Ordering::Equal);
        let mut set = HashSet::new();
        set.insert(a);
        set.insert(b);
        assert_eq!(set.len(), 1);
        // Sorted-entries comparison: {"b":0,"a":5} is {"a":5,"b":0}, which is
        // greater than {"a":1,"z":9} (first entries differ: 5 > 1).
        assert!(v(r#"{"b": 0, "a": 5}"#) > v(r#"{"a": 1, "z": 9}"#));
        // Key before value: {"a": 100} < {"b": 0}.
        assert!(v(r#"{"a": 100}"#) < v(r#"{"b": 0}"#));
        // Not equal with one extra key.
        assert_ne!(v(r#"{"a": 1}"#), v(r#"{"a": 1, "b": null}"#));
    }

    #[test]
    fn hash_set_merges_equal_values() {
        let mut set = HashSet::new();
        for s in [
            "1",
            "1.0",
            "1e0",
            "-0",
            "0",
            "0.0",
            "null",
            "[1, 2]",
            "[1.0, 2.0]",
            r#""1""#,
            "true",
            r#"{"a": null, "b": false}"#,
            r#"{"b": false, "a": null}"#,
        ] {
            set.insert(v(s));
        }
        set.insert(Value::Undefined);
        set.insert(Value::Undefined);
        set.insert(Value::from(f64::NAN));
        set.insert(Value::from(-f64::NAN));
        // 1 | 0 | null | [1,2] | "1" | true | {a,b} | undefined | NaN
        assert_eq!(set.len(), 9);
    }

    #[test]
    fn shared_arcs_compare_equal() {
        let a = v(r#"[{"x": [1, 2, 3]}]"#);
        let b = a.clone();
        assert_eq!(a, b);
        assert_eq!(a.cmp(&b), Ordering::Equal);
    }
}
