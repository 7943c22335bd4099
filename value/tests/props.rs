//! Property tests: the total order, equality and hashing agree with each
//! other, and JSON output round-trips.

use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use cosmoql_value::{format_number, parse_json, query_cmp, query_eq, to_json_string, Map, Value};
use proptest::prelude::*;

fn hash_of(v: &Value) -> u64 {
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(1.0),
        Just(-1.0),
        Just(0.5),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(1e21),
        (-5i32..5).prop_map(f64::from),
        any::<f64>(),
    ]
}

fn string() -> impl Strategy<Value = String> {
    // Small alphabet (so equal strings are common) including the code points
    // where UTF-8 and UTF-16 orders disagree.
    prop::collection::vec(
        prop::sample::select(vec!['a', 'b', 'A', 'é', '\u{E000}', '\u{FFFF}', '\u{10000}', '😀']),
        0..4,
    )
    .prop_map(|cs| cs.into_iter().collect())
}

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "c", "id", "é"]).prop_map(str::to_owned)
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Undefined),
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number().prop_map(Value::Number),
        string().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec((key(), inner), 0..4).prop_map(Value::object),
        ]
    })
}

/// A value equal to `v` in the total order but built differently: object
/// keys reversed, `-0` ↔ `0`, a different NaN, fresh allocations.
fn twin(v: &Value) -> Value {
    match v {
        Value::Number(n) if *n == 0.0 => Value::Number(-*n),
        Value::Number(n) if n.is_nan() => Value::Number(-*n),
        Value::Number(n) => Value::Number(*n),
        Value::String(s) => Value::String(Arc::from(s.to_string())),
        Value::Array(a) => Value::Array(Arc::new(a.iter().map(twin).collect())),
        Value::Object(o) => {
            let m: Map = o.iter().rev().map(|(k, v)| (k.clone(), twin(v))).collect();
            Value::from(m)
        }
        other => other.clone(),
    }
}

/// What JSON output keeps of a value: undefined and non-finite numbers are
/// dropped from arrays and objects.
fn json_visible(v: &Value) -> Option<Value> {
    match v {
        Value::Undefined => None,
        Value::Number(n) if !n.is_finite() => None,
        Value::Array(a) => Some(a.iter().filter_map(json_visible).collect()),
        Value::Object(o) => Some(o.iter().filter_map(|(k, v)| Some((k.clone(), json_visible(v)?))).collect()),
        other => Some(other.clone()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn eq_agrees_with_cmp_and_hash(a in value(), b in value()) {
        prop_assert_eq!(a == b, a.cmp(&b) == Ordering::Equal);
        if a == b {
            prop_assert_eq!(hash_of(&a), hash_of(&b));
        }
        prop_assert_eq!(a.partial_cmp(&b), Some(a.cmp(&b)));
    }

    #[test]
    fn twins_are_equal_and_hash_equal(a in value()) {
        let t = twin(&a);
        prop_assert_eq!(&a, &t);
        prop_assert_eq!(a.cmp(&t), Ordering::Equal);
        prop_assert_eq!(hash_of(&a), hash_of(&t));
        prop_assert_eq!(&a, &a.clone());
    }

    #[test]
    fn cmp_is_antisymmetric(a in value(), b in value()) {
        prop_assert_eq!(a.cmp(&b), b.cmp(&a).reverse());
        prop_assert_eq!(a.cmp(&a), Ordering::Equal);
    }

    #[test]
    fn cmp_is_transitive(a in value(), b in value(), c in value()) {
        let mut v = [a, b, c];
        v.sort();
        prop_assert!(v[0] <= v[1] && v[1] <= v[2]);
        prop_assert!(v[0] <= v[2]);
        // Also through twins (equal values are interchangeable).
        prop_assert!(twin(&v[0]) <= v[2]);
        if v[0] < v[1] || v[1] < v[2] {
            prop_assert!(v[0] < v[2]);
        }
    }

    #[test]
    fn kind_order_is_respected(a in value(), b in value()) {
        if a.kind() != b.kind() {
            prop_assert_eq!(a.cmp(&b), a.kind().cmp(&b.kind()));
        }
    }

    #[test]
    fn query_ops_agree_with_total_order_on_same_type(a in value(), b in value()) {
        // Where the query operators are defined and no NaN is involved, they
        // agree with the total order.
        let has_nan = |v: &Value| v.as_f64().is_some_and(f64::is_nan);
        if let Some(o) = query_cmp(&a, &b) {
            prop_assert_eq!(o, a.cmp(&b));
        }
        if a.kind() == b.kind() && a.is_primitive() && !has_nan(&a) && !has_nan(&b) {
            prop_assert_eq!(query_eq(&a, &b), Value::Bool(a == b));
        }
        if a.is_undefined() || b.is_undefined() {
            prop_assert_eq!(query_eq(&a, &b), Value::Undefined);
        } else if a.kind() != b.kind() {
            prop_assert_eq!(query_eq(&a, &b), Value::Bool(false));
        }
    }

    #[test]
    fn json_round_trips(a in value()) {
        match (to_json_string(&a), json_visible(&a)) {
            (None, None) => {}
            (Some(text), Some(visible)) => {
                let back = parse_json(&text);
                prop_assert!(back.is_ok(), "unparsable output {}", text);
                let back = back.unwrap_or_default();
                // Same value, and for numbers the very same f64 (shortest
                // round-trip formatting).
                prop_assert_eq!(&back, &visible);
                prop_assert_eq!(to_json_string(&back), Some(text.clone()));
                prop_assert!(!text.contains(".0,") && !text.ends_with(".0"), "{}", text);
                // serde path agrees with the main path on what is kept.
                let via_serde = serde_json::to_string(&a).ok().and_then(|s| parse_json(&s).ok());
                prop_assert_eq!(via_serde, Some(visible));
            }
            (text, visible) => {
                prop_assert!(false, "mismatch: {:?} vs {:?}", text, visible);
            }
        }
    }
}

#[test]
fn integers_past_2_pow_53_print_as_javascript_does() {
    let big = Value::from(2f64.powi(60));
    assert_eq!(to_json_string(&big).unwrap(), "1152921504606847000");
    assert_eq!(format_number(2f64.powi(60)), "1152921504606847000");
    let safe = Value::from(2f64.powi(53));
    assert_eq!(to_json_string(&safe).unwrap(), "9007199254740992");
    assert_eq!(to_json_string(&Value::from(-(2f64.powi(53)))).unwrap(), "-9007199254740992");
}
