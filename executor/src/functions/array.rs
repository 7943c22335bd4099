//! Array functions: ARRAY_CONCAT, ARRAY_CONTAINS(_ALL/_ANY), ARRAY_LENGTH, ARRAY_SLICE, the
//! ARRAY_SUM/AVG/MEDIAN/MIN/MAX reductions, the Set* functions, CHOOSE and ObjectToArray.
//!
//! Element equality is JSON equality: `1` equals `1.0` and objects compare without regard to
//! property order (the total order's `==` on [`Value`]). A non-array argument gives `undefined`.

use std::collections::HashSet;

use cosmoql_value::{and, or, Map, Value, ValueSet};

use super::body::{Builtin, FunctionContext};
use crate::error::FunctionError;

type Res = Result<Value, FunctionError>;

macro_rules! def {
    ($name:literal, $f:expr) => {
        Builtin { name: $name, eval: $f }
    };
}

pub(crate) const FUNCTIONS: &[Builtin] = &[
    def!("ARRAY_CONCAT", concat),
    def!("ARRAY_CONTAINS", contains),
    def!("ARRAY_CONTAINS_ALL", |a, _| Ok(contains_many(a, true))),
    def!("ARRAY_CONTAINS_ANY", |a, _| Ok(contains_many(a, false))),
    def!("ARRAY_LENGTH", |a, _| Ok(a[0].as_array().map_or(Value::Undefined, |x| Value::from(x.len())))),
    def!("ARRAY_SLICE", slice),
    def!("ARRAY_SUM", |a, _| Ok(numbers(&a[0]).map_or(Value::Undefined, |x| Value::from(sum(&x))))),
    def!("ARRAY_AVG", |a, _| Ok(reduce_numbers(&a[0], |x| sum(x) / x.len() as f64))),
    def!("ARRAY_MEDIAN", |a, _| Ok(reduce_numbers(&a[0], median))),
    def!("ARRAY_MAX", |a, _| Ok(extreme(&a[0], true))),
    def!("ARRAY_MIN", |a, _| Ok(extreme(&a[0], false))),
    def!("SetIntersect", set_intersect),
    def!("SetUnion", set_union),
    def!("SetDifference", set_difference),
    def!("SetEqual", set_equal),
    def!("CHOOSE", choose),
    def!("ObjectToArray", object_to_array),
];

fn concat(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let size: u128 = args.iter().map(|a| a.as_array().map_or(0, |x| x.len() as u128)).sum();
    if size > super::MAX_BUILT_ELEMENTS as u128 {
        return Err(super::too_large(size, "an array"));
    }
    let mut out = Vec::with_capacity(size as usize);
    for a in args {
        match a.as_array() {
            Some(items) => out.extend_from_slice(items),
            None => return Ok(Value::Undefined),
        }
    }
    super::bounded_json(Value::from(out))
}

/// Whether `hay` matches `needle`: equal, or with `partial`, an object having every property of
/// an object `needle` with an equal value.
fn matches(hay: &Value, needle: &Value, partial: bool) -> bool {
    match (hay, needle) {
        (Value::Object(h), Value::Object(n)) if partial => n.iter().all(|(k, v)| h.get(k) == Some(v)),
        _ => hay == needle,
    }
}

/// `ARRAY_CONTAINS(array, value [, partial])`; an undefined value gives undefined, an undefined
/// `partial` counts as false.
fn contains(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let partial = match args.get(2) {
        None | Some(Value::Undefined) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Ok(Value::Undefined),
    };
    let Some(items) = args[0].as_array() else { return Ok(Value::Undefined) };
    Ok(found(&args[1], |needle| items.iter().any(|hay| matches(hay, needle, partial))))
}

/// `ARRAY_CONTAINS_ALL/ANY(array, v1, ...)`: `ARRAY_CONTAINS(array, v1) AND/OR ...` in
/// three-valued logic (an undefined value's test is undefined).
fn contains_many(args: &[Value], all: bool) -> Value {
    let Some(items) = args[0].as_array() else { return Value::Undefined };
    combined(&args[1..], all, |needle| items.iter().any(|h| h == needle))
}

/// `ARRAY_CONTAINS`, `ARRAY_CONTAINS_ANY` or `ARRAY_CONTAINS_ALL` of a constant array gathered
/// into a set (matching whole values: the binder gathers no set for a partial match), given the
/// values to look for: the same answers as the functions, one lookup per value.
pub(crate) fn contains_in_set(name: &str, set: &ValueSet, needles: &[Value]) -> Value {
    match name {
        "ARRAY_CONTAINS" => found(&needles[0], |n| set.contains(n)),
        _ => combined(needles, name == "ARRAY_CONTAINS_ALL", |n| set.contains(n)),
    }
}

/// Whether `needle` is in the array, by `is_in`; undefined for an undefined needle.
fn found(needle: &Value, is_in: impl Fn(&Value) -> bool) -> Value {
    if needle.is_undefined() {
        Value::Undefined
    } else {
        Value::Bool(is_in(needle))
    }
}

/// The AND (`all`) or OR of each needle's [`found`].
fn combined(needles: &[Value], all: bool, is_in: impl Fn(&Value) -> bool) -> Value {
    let mut acc = Value::Bool(all);
    for needle in needles {
        let found = found(needle, &is_in);
        acc = if all { and(&acc, &found) } else { or(&acc, &found) };
    }
    acc
}

/// An integral number as `i64` (saturating); `None` for anything else.
fn int_arg(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) if n.is_finite() && n.fract() == 0.0 => Some(*n as i64),
        _ => None,
    }
}

/// `ARRAY_SLICE(array, start [, length])`: a negative start counts from the end (clamped to the
/// beginning); the length is clamped to what is left, and a non-positive one gives `[]`.
fn slice(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let (Some(items), Some(start)) = (args[0].as_array(), int_arg(&args[1])) else { return Ok(Value::Undefined) };
    let len = items.len() as i64;
    let count = match args.get(2) {
        None => i64::MAX,
        Some(v) => match int_arg(v) {
            Some(c) => c,
            None => return Ok(Value::Undefined),
        },
    };
    let start = if start < 0 { (start + len).max(0) } else { start.min(len) };
    let end = start.saturating_add(count.max(0)).min(len);
    Ok(Value::from(items[start as usize..end as usize].to_vec()))
}

/// The numbers of an array, skipping undefined elements; `None` if it is not an array or has
/// any other non-number.
fn numbers(v: &Value) -> Option<Vec<f64>> {
    let mut out = Vec::new();
    for item in v.as_array()? {
        match item {
            Value::Undefined => {}
            Value::Number(n) => out.push(*n),
            _ => return None,
        }
    }
    Some(out)
}

fn sum(xs: &[f64]) -> f64 {
    xs.iter().sum()
}

/// `f` of the array's numbers; undefined for an empty (or non-numeric) array.
fn reduce_numbers(v: &Value, f: fn(&[f64]) -> f64) -> Value {
    match numbers(v) {
        Some(xs) if !xs.is_empty() => Value::from(f(&xs)),
        _ => Value::Undefined,
    }
}

fn median(xs: &[f64]) -> f64 {
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// `ARRAY_MAX`/`ARRAY_MIN`: over null, booleans, numbers and strings in the cross-type order
/// null < false < true < numbers < strings; undefined elements are skipped; an array or object
/// element, or no element at all, gives undefined.
fn extreme(v: &Value, max: bool) -> Value {
    let Some(items) = v.as_array() else { return Value::Undefined };
    let mut best: Option<&Value> = None;
    for item in items {
        match item {
            Value::Undefined => continue,
            Value::Array(_) | Value::Object(_) => return Value::Undefined,
            _ => {}
        }
        best = match best {
            Some(b) if (max && b >= item) || (!max && b <= item) => Some(b),
            _ => Some(item),
        };
    }
    best.cloned().unwrap_or(Value::Undefined)
}

/// Both arguments' elements, or `None` unless both are arrays.
fn two_arrays(args: &[Value]) -> Option<(&[Value], &[Value])> {
    Some((args[0].as_array()?, args[1].as_array()?))
}

/// The elements of `items` that pass `keep`, without duplicates, in order.
fn distinct<'a>(items: impl IntoIterator<Item = &'a Value>, keep: impl Fn(&Value) -> bool) -> Value {
    let mut seen = HashSet::new();
    items.into_iter().filter(|v| keep(v) && seen.insert(*v)).cloned().collect()
}

/// `SetIntersect(a, b)`: the distinct elements of `b` that are in `a`, in `b`'s order (the
/// documented `SetIntersect([1, 2, "A", "B"], ["A", 1])` is `["A", 1]`).
fn set_intersect(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let Some((a, b)) = two_arrays(args) else { return Ok(Value::Undefined) };
    let in_a: HashSet<&Value> = a.iter().collect();
    Ok(distinct(b, |v| in_a.contains(v)))
}

/// `SetUnion(a, b)`: the distinct elements of `a`, then those of `b` not already present.
fn set_union(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let Some((a, b)) = two_arrays(args) else { return Ok(Value::Undefined) };
    Ok(distinct(a.iter().chain(b), |_| true))
}

/// `SetDifference(a, b)`: the distinct elements of `a` that are not in `b`.
fn set_difference(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let Some((a, b)) = two_arrays(args) else { return Ok(Value::Undefined) };
    let in_b: HashSet<&Value> = b.iter().collect();
    Ok(distinct(a, |v| !in_b.contains(v)))
}

/// `SetEqual(a, b)`: whether both arrays have the same distinct elements.
fn set_equal(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let Some((a, b)) = two_arrays(args) else { return Ok(Value::Undefined) };
    let (sa, sb): (HashSet<&Value>, HashSet<&Value>) = (a.iter().collect(), b.iter().collect());
    Ok(Value::Bool(sa == sb))
}

/// `CHOOSE(index, v1, ..., vn)`: `v<index>` (1-based); undefined out of range.
fn choose(args: &[Value], _: &FunctionContext<'_>) -> Res {
    Ok(match int_arg(&args[0]) {
        Some(i) if i >= 1 && (i as u64) < args.len() as u64 => args[i as usize].clone(),
        _ => Value::Undefined,
    })
}

/// `ObjectToArray(object [, keyName [, valueName]])`: `[{k: name, v: value}, ...]` in property
/// order, with the property names `k` and `v` unless given.
fn object_to_array(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let Some(object) = args[0].as_object() else { return Ok(Value::Undefined) };
    let name = |i: usize, default: &'static str| match args.get(i) {
        None => Some(default),
        Some(v) => v.as_str(),
    };
    let (Some(k), Some(v)) = (name(1, "k"), name(2, "v")) else { return Ok(Value::Undefined) };
    Ok(object
        .iter()
        .map(|(key, value)| {
            let mut entry = Map::with_capacity_and_hasher(2, Default::default());
            entry.insert(k.to_owned(), Value::from(key.as_str()));
            entry.insert(v.to_owned(), value.clone());
            Value::from(entry)
        })
        .collect())
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::functions::test_support::{call, j};

    /// Calls `name` with the elements of a JSON array as arguments.
    fn call_j(name: &str, args: &str) -> Value {
        call(name, j(args).as_array().unwrap())
    }

    fn n(x: f64) -> Value {
        Value::from(x)
    }

    const U: Value = Value::Undefined;
    const T: Value = Value::Bool(true);
    const F: Value = Value::Bool(false);

    /// `[1, -2.7, 3, -4, undefined]` and `[12, 'abc', true, false, null, undefined]`.
    fn with_undefined(json: &str) -> Value {
        let mut v = j(json);
        v.as_array_mut().unwrap().push(U);
        v
    }

    #[test]
    fn concat_cases() {
        assert_eq!(
            call_j("ARRAY_CONCAT", r#"[["apples", "strawberries"], ["bananas"]]"#),
            j(r#"["apples", "strawberries", "bananas"]"#)
        );
        assert_eq!(
            call_j("ARRAY_CONCAT", r#"[["backpacks", "daypacks"], ["hippacks"]]"#),
            j(r#"["backpacks", "daypacks", "hippacks"]"#)
        );
        assert_eq!(call_j("ARRAY_CONCAT", "[[1], [], [2, [3]]]"), j("[1, 2, [3]]"));
        assert_eq!(call_j("ARRAY_CONCAT", "[[1], 2]"), U);
        assert_eq!(call("ARRAY_CONCAT", &[j("[1]"), U]), U);
    }

    #[test]
    fn contains_cases() {
        let clothes = j(r#"["coats", "jackets", "sweatshirts"]"#);
        assert_eq!(call("ARRAY_CONTAINS", &[clothes.clone(), Value::from("coats")]), T);
        assert_eq!(call("ARRAY_CONTAINS", &[clothes.clone(), Value::from("hoodies")]), F);
        let shirts = j(r#"[{ "category": "shirts", "color": "blue" }]"#);
        assert_eq!(call("ARRAY_CONTAINS", &[shirts.clone(), j(r#"{ "category": "shirts", "color": "blue" }"#)]), T);
        assert_eq!(call("ARRAY_CONTAINS", &[shirts.clone(), j(r#"{ "color": "blue", "category": "shirts" }"#)]), T);
        assert_eq!(call("ARRAY_CONTAINS", &[shirts.clone(), j(r#"{ "category": "shirts" }"#)]), F);
        assert_eq!(call("ARRAY_CONTAINS", &[shirts.clone(), j(r#"{ "category": "shirts" }"#), T]), T);
        assert_eq!(call("ARRAY_CONTAINS", &[shirts.clone(), j(r#"{ "category": "shorts", "color": "blue" }"#), T]), F);
        let fruit = j(r#"[{"name": "apples", "fresh": true}, {"name": "strawberries", "fresh": true}]"#);
        assert_eq!(call("ARRAY_CONTAINS", &[fruit.clone(), j(r#"{"name": "apples"}"#), T]), T);
        assert_eq!(call("ARRAY_CONTAINS", &[fruit.clone(), j(r#"{"name": "apples"}"#)]), F);
        assert_eq!(call("ARRAY_CONTAINS", &[fruit, j(r#"{"name": "mangoes"}"#), T]), F);
        let list = j(r#"["apples", "strawberries", "bananas"]"#);
        assert_eq!(call("ARRAY_CONTAINS", &[list.clone(), Value::from("apples")]), T);
        assert_eq!(call("ARRAY_CONTAINS", &[list.clone(), Value::from("mangoes")]), F);
        // Families: full object with the properties in another order, and partial.
        let parents =
            j(r#"[{"familyName": "Wakefield", "givenName": "Robin"}, {"familyName": "Miller", "givenName": "Ben"}]"#);
        assert_eq!(
            call("ARRAY_CONTAINS", &[parents.clone(), j(r#"{ "givenName": "Robin", "familyName": "Wakefield" }"#)]),
            T
        );
        assert_eq!(call("ARRAY_CONTAINS", &[parents.clone(), j(r#"{ "givenName": "Robin" }"#), T]), T);
        assert_eq!(
            call("ARRAY_CONTAINS", &[j(r#"[{"firstName": "Thomas"}]"#), j(r#"{ "givenName": "Robin" }"#), T]),
            F
        );
        // Numbers compare by value; partial on non-objects is plain equality.
        assert_eq!(call_j("ARRAY_CONTAINS", "[[1, 2.0], 2]"), T);
        assert_eq!(call_j("ARRAY_CONTAINS", "[[1, 2], 2, true]"), T);
        assert_eq!(call_j("ARRAY_CONTAINS", r#"[[[1, 2]], [1, 2]]"#), T);
        // Wrong types.
        assert_eq!(call("ARRAY_CONTAINS", &[list.clone(), U]), U);
        assert_eq!(call("ARRAY_CONTAINS", &[list.clone(), Value::from("apples"), U]), T);
        assert_eq!(call("ARRAY_CONTAINS", &[list, Value::from("apples"), n(1.0)]), U);
        assert_eq!(call("ARRAY_CONTAINS", &[Value::from("apples"), Value::from("apples")]), U);
        assert_eq!(call("ARRAY_CONTAINS", &[U, n(1.0)]), U);
        assert_eq!(call("ARRAY_CONTAINS", &[parents, Value::Null]), F);
    }

    #[test]
    fn contains_all_any() {
        let mixed = j(r#"[1, true, "3", [1,2,3]]"#);
        let nums = j("[1, 2, 3, 4]");
        let all = |args: &[Value]| call("ARRAY_CONTAINS_ALL", args);
        let any = |args: &[Value]| call("ARRAY_CONTAINS_ANY", args);
        let entire = [mixed.clone(), n(1.0), T, Value::from("3"), j("[1,2,3]")];
        assert_eq!(all(&entire), T);
        assert_eq!(any(&entire), T);
        let some = [nums.clone(), n(2.0), n(3.0), n(4.0), n(5.0)];
        assert_eq!(all(&some), F);
        assert_eq!(any(&some), T);
        let single = [nums.clone(), n(1.0), U];
        assert_eq!(all(&single), U);
        assert_eq!(any(&single), T);
        let none = [nums.clone(), n(5.0), n(6.0), n(7.0), n(8.0)];
        assert_eq!(all(&none), F);
        assert_eq!(any(&none), F);
        let empty = [j("[]"), n(1.0), n(2.0), n(3.0)];
        assert_eq!(all(&empty), F);
        assert_eq!(any(&empty), F);
        let none_undefined = [nums, n(5.0), U];
        assert_eq!(all(&none_undefined), F);
        assert_eq!(any(&none_undefined), U);
        assert_eq!(all(&[Value::from("x"), n(1.0)]), U);
        assert_eq!(any(&[U, n(1.0)]), U);
    }

    #[test]
    fn length_cases() {
        assert_eq!(call_j("ARRAY_LENGTH", "[[70, 86, 92, 99, 85, 90, 82]]"), n(7.0));
        assert_eq!(call_j("ARRAY_LENGTH", "[[]]"), n(0.0));
        assert_eq!(call_j("ARRAY_LENGTH", "[null]"), U);
        assert_eq!(call_j("ARRAY_LENGTH", r#"[["apples", "strawberries", "bananas"]]"#), n(3.0));
        assert_eq!(call_j("ARRAY_LENGTH", r#"["abc"]"#), U);
        assert_eq!(call("ARRAY_LENGTH", &[U]), U);
    }

    #[test]
    fn slice_cases() {
        let greek = r#"["Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf"]"#;
        let sl = |arr: &str, rest: &str| call_j("ARRAY_SLICE", &format!("[{arr}, {rest}]"));
        assert_eq!(sl(greek, "0"), j(greek));
        assert_eq!(sl(greek, "1"), j(r#"["Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf"]"#));
        assert_eq!(sl(greek, "-1"), j(r#"["Golf"]"#));
        assert_eq!(sl(greek, "-2"), j(r#"["Foxtrot", "Golf"]"#));
        assert_eq!(sl(greek, "0, 3"), j(r#"["Alpha", "Bravo", "Charlie"]"#));
        assert_eq!(sl(greek, "0, 12"), j(greek));
        assert_eq!(sl(greek, "3, 5"), j(r#"["Delta", "Echo", "Foxtrot", "Golf"]"#));
        assert_eq!(sl(greek, "-2, 1"), j(r#"["Foxtrot"]"#));
        let scores = "[70, 86, 92, 99, 85, 90, 82]";
        assert_eq!(sl(scores, "0"), j(scores));
        assert_eq!(sl(scores, "1"), j("[86, 92, 99, 85, 90, 82]"));
        assert_eq!(sl(scores, "-1"), j("[82]"));
        assert_eq!(sl(scores, "-2"), j("[90, 82]"));
        assert_eq!(sl(scores, "0, 3"), j("[70, 86, 92]"));
        assert_eq!(sl(scores, "0, 12"), j(scores));
        assert_eq!(sl(scores, "3, 5"), j("[99, 85, 90, 82]"));
        assert_eq!(sl(scores, "-2, 1"), j("[90]"));
        let fruit = r#"["apples", "strawberries", "bananas"]"#;
        assert_eq!(sl(fruit, "1"), j(r#"["strawberries", "bananas"]"#));
        assert_eq!(sl(fruit, "1, 1"), j(r#"["strawberries"]"#));
        assert_eq!(sl(fruit, "-2, 1"), j(r#"["strawberries"]"#));
        assert_eq!(sl(fruit, "-2, 2"), j(r#"["strawberries", "bananas"]"#));
        assert_eq!(sl(fruit, "1, 0"), j("[]"));
        assert_eq!(sl(fruit, "1, 1000"), j(r#"["strawberries", "bananas"]"#));
        assert_eq!(sl(fruit, "1, -100"), j("[]"));
        assert_eq!(sl(fruit, "-100"), j(fruit));
        assert_eq!(sl(fruit, "100"), j("[]"));
        assert_eq!(sl(fruit, "0.5"), U);
        assert_eq!(sl(fruit, "0, 1.5"), U);
        assert_eq!(sl(fruit, r#""1""#), U);
        assert_eq!(sl(r#""abc""#, "1"), U);
    }

    #[test]
    fn reductions() {
        let one = |name: &str, v: Value| call(name, &[v]);
        assert_eq!(one("ARRAY_AVG", j("[1, 2, 3, 4]")), n(2.5));
        assert_eq!(one("ARRAY_AVG", j("[1.0, 2.0, 3.3, 4.7]")), n(2.75));
        assert_eq!(one("ARRAY_AVG", with_undefined("[1, -2.7, 3, -4]")), n(-0.675));
        assert_eq!(one("ARRAY_AVG", j(r#"["abc", "ABC", "aBc", "AbC"]"#)), U);
        assert_eq!(one("ARRAY_AVG", with_undefined(r#"[12, "abc", true, false, null]"#)), U);
        assert_eq!(one("ARRAY_AVG", j("[]")), U);

        assert_eq!(one("ARRAY_SUM", j("[1, 2, 3, 4]")), n(10.0));
        assert_eq!(one("ARRAY_SUM", with_undefined("[1, 2, 3, 4]")), n(10.0));
        assert_eq!(one("ARRAY_SUM", j(r#"["abc", "ABC", "aBc", "AbC"]"#)), U);
        assert_eq!(one("ARRAY_SUM", with_undefined(r#"[12, "abc", true, false, null]"#)), U);
        assert_eq!(one("ARRAY_SUM", j("[]")), n(0.0));

        assert_eq!(one("ARRAY_MEDIAN", j("[1, 2, 3, 4]")), n(2.5));
        assert_eq!(one("ARRAY_MEDIAN", j("[1.0, 2.0, 3.3, 4.7, 7.8]")), n(3.3));
        assert_eq!(one("ARRAY_MEDIAN", with_undefined("[1, -2.7, 3, -4]")), n(-0.8500000000000001));
        assert_eq!(one("ARRAY_MEDIAN", j(r#"["abc", "ABC", "aBc", "AbC"]"#)), U);
        assert_eq!(one("ARRAY_MEDIAN", with_undefined(r#"[12, "abc", true, false, null]"#)), U);
        assert_eq!(one("ARRAY_MEDIAN", j("[5, 1, 3]")), n(3.0));
        assert_eq!(one("ARRAY_MEDIAN", j("[]")), U);

        assert_eq!(one("ARRAY_MAX", j("[1, 2, 3, 4]")), n(4.0));
        assert_eq!(one("ARRAY_MAX", j(r#"["abc", "ABC", "aBc", "AbC"]"#)), Value::from("abc"));
        assert_eq!(one("ARRAY_MAX", j("[true, false]")), T);
        assert_eq!(one("ARRAY_MAX", j("[null, null]")), Value::Null);
        assert_eq!(one("ARRAY_MAX", with_undefined(r#"[12, "abc", true, false, null]"#)), Value::from("abc"));
        assert_eq!(one("ARRAY_MIN", j("[1, 2, 3, 4]")), n(1.0));
        assert_eq!(one("ARRAY_MIN", j(r#"["abc", "ABC", "aBc", "AbC"]"#)), Value::from("ABC"));
        assert_eq!(one("ARRAY_MIN", j("[true, false]")), F);
        assert_eq!(one("ARRAY_MIN", j("[null, null]")), Value::Null);
        assert_eq!(one("ARRAY_MIN", with_undefined(r#"[12, "abc", true, false, null]"#)), Value::Null);
        assert_eq!(one("ARRAY_MAX", j("[]")), U);
        assert_eq!(one("ARRAY_MIN", j("[1, [2]]")), U);
        assert_eq!(one("ARRAY_MAX", j(r#"[1, {"a": 2}]"#)), U);

        for name in ["ARRAY_AVG", "ARRAY_SUM", "ARRAY_MEDIAN", "ARRAY_MAX", "ARRAY_MIN"] {
            assert_eq!(one(name, U), U, "{name}");
            assert_eq!(one(name, n(3.0)), U, "{name}");
            assert_eq!(one(name, Value::Null), U, "{name}");
        }
    }

    #[test]
    fn set_functions() {
        let two = |name: &str, a: &str, b: &str| call(name, &[j(a), j(b)]);
        assert_eq!(two("SetIntersect", "[1, 2, 3, 4]", "[3, 4, 5, 6]"), j("[3, 4]"));
        assert_eq!(two("SetIntersect", "[1, 2, 3, 4]", "[]"), j("[]"));
        assert_eq!(two("SetIntersect", "[1, 2, 3, 4]", "[1, 1, 1, 1]"), j("[1]"));
        assert_eq!(two("SetIntersect", "[1, 2, 3, 4]", r#"["A", "B"]"#), j("[]"));
        assert_eq!(two("SetIntersect", r#"[1, 2, "A", "B"]"#, r#"["A", 1]"#), j(r#"["A", 1]"#));
        assert_eq!(
            two("SetIntersect", r#"["Finch", "Mine Shaft", "Rhino"]"#, r#"["Rhino", "Finch"]"#),
            j(r#"["Rhino", "Finch"]"#)
        );
        assert_eq!(two("SetUnion", "[1, 2, 3, 4]", "[3, 4, 5, 6]"), j("[1, 2, 3, 4, 5, 6]"));
        assert_eq!(two("SetUnion", "[1, 2, 3, 4]", "[]"), j("[1, 2, 3, 4]"));
        assert_eq!(two("SetUnion", "[1, 2, 3, 4]", "[1, 1, 1, 1]"), j("[1, 2, 3, 4]"));
        assert_eq!(two("SetUnion", r#"[1, 2, "A", "B"]"#, r#"["A", 1]"#), j(r#"[1, 2, "A", "B"]"#));
        assert_eq!(
            two("SetUnion", r#"["Cutty Sark", "Horizon", "Russet", "Fuscous"]"#, r#"["Fuscous", "Horizon", "Tacha"]"#),
            j(r#"["Cutty Sark", "Horizon", "Russet", "Fuscous", "Tacha"]"#)
        );
        assert_eq!(two("SetDifference", "[1, 2, 3]", "[1, 2, 6, 7]"), j("[3]"));
        assert_eq!(two("SetDifference", "[1, 2, 6, 7]", "[1, 2, 3]"), j("[6, 7]"));
        assert_eq!(two("SetDifference", "[1, 2, 3, 4]", "[1, 2, 3, 4, 5, 6]"), j("[]"));
        assert_eq!(two("SetDifference", "[]", "[1, 2, 3]"), j("[]"));
        assert_eq!(two("SetDifference", "[1, 2, 3]", "[]"), j("[1, 2, 3]"));
        assert_eq!(two("SetDifference", "[1, 1, 1, 1]", "[2, 3, 4]"), j("[1]"));
        assert_eq!(two("SetEqual", "[1, 2, 3]", "[1, 2, 3]"), T);
        assert_eq!(two("SetEqual", "[1, 2, 3]", "[3, 2, 1]"), T);
        assert_eq!(two("SetEqual", "[1, 2, 3, 3]", "[1, 2, 2, 3, 1, 2]"), T);
        assert_eq!(two("SetEqual", "[]", "[1, 2, 3]"), F);
        assert_eq!(two("SetEqual", r#"[1, true, "abc"]"#, r#"[true, 1, "abc"]"#), T);
        assert_eq!(two("SetEqual", "[1, 1, 1, 1]", "[2, 3, 4]"), F);
        // Objects are equal regardless of property order.
        assert_eq!(two("SetUnion", r#"[{"a": 1, "b": 2}]"#, r#"[{"b": 2, "a": 1}]"#), j(r#"[{"a": 1, "b": 2}]"#));
        for name in ["SetIntersect", "SetUnion", "SetDifference", "SetEqual"] {
            assert_eq!(call(name, &[j("[1]"), U]), U, "{name}");
            assert_eq!(call(name, &[Value::from("a"), j("[1]")]), U, "{name}");
        }
    }

    #[test]
    fn choose_cases() {
        let words = r#""Mt.", "Hood", "Hydration", "Pack""#;
        let ch = |i: &str, rest: &str| call_j("CHOOSE", &format!("[{i}, {rest}]"));
        assert_eq!(ch("0", words), U);
        assert_eq!(ch("1", words), Value::from("Mt."));
        assert_eq!(ch("2", words), Value::from("Hood"));
        assert_eq!(ch("3", words), Value::from("Hydration"));
        assert_eq!(ch("4", words), Value::from("Pack"));
        assert_eq!(ch("5", words), U);
        let mixed = r#""abc", 1, true, [1]"#;
        assert_eq!(ch("0", mixed), U);
        assert_eq!(ch("1", mixed), Value::from("abc"));
        assert_eq!(ch("2", mixed), n(1.0));
        assert_eq!(ch("3", mixed), T);
        assert_eq!(ch("4", mixed), j("[1]"));
        assert_eq!(ch("5", mixed), U);
        assert_eq!(ch("1", r#""Vimero", "Hydration", "Pack""#), Value::from("Vimero"));
        assert_eq!(ch("1", r#""adventure", "works", true, [1]"#), Value::from("adventure"));
        assert_eq!(ch("3", r#""gear", "Vimero Hydration Pack", "69500""#), Value::from("69500"));
        assert_eq!(ch("-1", words), U);
        assert_eq!(ch("1.5", words), U);
        assert_eq!(ch(r#""1""#, words), U);
        assert_eq!(call("CHOOSE", &[n(1.0), U, n(2.0)]), U);
        assert_eq!(call("CHOOSE", &[U, n(2.0)]), U);
    }

    #[test]
    fn object_to_array_cases() {
        let obj = j(r#"{ "a": "12345", "b": "67890" }"#);
        assert_eq!(
            call("ObjectToArray", std::slice::from_ref(&obj)),
            j(r#"[{"k": "a", "v": "12345"}, {"k": "b", "v": "67890"}]"#)
        );
        assert_eq!(
            call("ObjectToArray", &[obj.clone(), Value::from("name")]),
            j(r#"[{"name": "a", "v": "12345"}, {"name": "b", "v": "67890"}]"#)
        );
        assert_eq!(
            call("ObjectToArray", &[obj.clone(), Value::from("key"), Value::from("value")]),
            j(r#"[{"key": "a", "value": "12345"}, {"key": "b", "value": "67890"}]"#)
        );
        let quantities = j(r#"{"small": 15, "medium": 24, "large": 2, "xlarge": 0}"#);
        let got = call("ObjectToArray", &[quantities, Value::from("size"), Value::from("quantity")]);
        let printed = cosmoql_value::to_json_string(&got).unwrap();
        assert_eq!(
            printed,
            r#"[{"size":"small","quantity":15},{"size":"medium","quantity":24},{"size":"large","quantity":2},{"size":"xlarge","quantity":0}]"#
        );
        assert_eq!(call("ObjectToArray", &[j("{}")]), j("[]"));
        assert_eq!(call("ObjectToArray", &[j("[1]")]), U);
        assert_eq!(call("ObjectToArray", &[U]), U);
        assert_eq!(call("ObjectToArray", &[obj.clone(), n(1.0)]), U);
        assert_eq!(call("ObjectToArray", &[obj, Value::from("k"), U]), U);
    }
}
