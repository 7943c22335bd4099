//! Property tests of the binary document encoding against `cosmoql_value`.

use cosmoql_storage::doc::{encode_json_str, encode_value, Doc, DocRef};
use cosmoql_storage::{ItemMeta, ItemNames, StoredItem, WholeItem};
use cosmoql_value::{parse_json, to_json_string, Map, Value};
use proptest::prelude::*;
use std::sync::Arc;

/// Structural equality: kinds, number bits, key order.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| same(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|((ka, a), (kb, b))| ka == kb && same(a, b))
        }
        _ => a.kind() == b.kind() && a == b,
    }
}

/// `v` with undefined fields and elements removed (what the encoding stores).
fn strip_undefined(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(Arc::new(a.iter().filter(|e| e.is_defined()).map(strip_undefined).collect())),
        Value::Object(o) => Value::Object(Arc::new(
            o.iter().filter(|(_, e)| e.is_defined()).map(|(k, e)| (k.clone(), strip_undefined(e))).collect(),
        )),
        other => other.clone(),
    }
}

fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(f64::MAX),
        Just(f64::MIN_POSITIVE),
        Just(5e-324),
        Just(9_007_199_254_740_992.0),
        Just(9_007_199_254_740_993.0),
        Just(-9_007_199_254_740_991.0),
        Just(9_223_372_036_854_775_808.0),
        Just(1e21),
        Just(1e-7),
        (-200i32..200).prop_map(f64::from),
        any::<i32>().prop_map(f64::from),
        any::<i64>().prop_map(|i| i as f64),
        ((1i64 << 52)..(1i64 << 54)).prop_map(|i| i as f64),
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        (-1e6f64..1e6),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{0,8}",
        ".{0,12}",
        "[\\x00-\\x1f\"\\\\/ a-z]{0,10}",
        "\\PC{60,140}",
        Just(String::new()),
        Just("é🎉ключ".to_string()),
    ]
}

fn value(with_undefined: bool) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number().prop_map(Value::Number),
        text().prop_map(|s| Value::from(s.as_str())),
        Just(if with_undefined { Value::Undefined } else { Value::Null }),
    ];
    leaf.prop_recursive(5, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(|v| Value::Array(Arc::new(v))),
            prop::collection::vec((text(), inner), 0..8).prop_map(|entries| {
                let mut m = Map::default();
                for (k, v) in entries {
                    m.insert(k, v);
                }
                Value::Object(Arc::new(m))
            }),
        ]
    })
}

fn object(with_undefined: bool) -> impl Strategy<Value = Value> {
    prop::collection::vec((text(), value(with_undefined)), 0..10).prop_map(|entries| {
        let mut m = Map::default();
        for (k, v) in entries {
            m.insert(k, v);
        }
        Value::Object(Arc::new(m))
    })
}

/// JSON text with features the Value printer never produces: duplicate keys, whitespace,
/// exponents, `-0`, trailing zeros, escapes, big integer literals.
fn json_text() -> impl Strategy<Value = String> {
    let num = prop_oneof![
        Just("-0".to_string()),
        Just("-0.0".to_string()),
        Just("1.0".to_string()),
        Just("1E2".to_string()),
        Just("2.50e-3".to_string()),
        Just("123456789012345678901234567890".to_string()),
        Just("-9223372036854775809".to_string()),
        Just("18446744073709551615".to_string()),
        Just("1e400".to_string()),
        any::<i64>().prop_map(|i| i.to_string()),
        any::<u64>().prop_map(|i| i.to_string()),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| format!("{f:e}")),
        (-1e9f64..1e9).prop_map(|f| format!("{f}")),
    ];
    let string = prop_oneof![
        "[a-c]{0,3}".prop_map(|s| format!("\"{s}\"")),
        Just(r#""\u00e9\n\t\"\\\/\ud83d\ude00""#.to_string()),
        ".{0,6}".prop_map(|s| serde_json::to_string(&s).unwrap_or_default()),
    ];
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        num,
        string.clone(),
    ];
    leaf.prop_recursive(5, 64, 8, move |inner| {
        prop_oneof![
            (prop::collection::vec(inner.clone(), 0..6), " ?").prop_map(|(v, ws)| format!("[{ws}{}]", v.join(" , "))),
            prop::collection::vec(("[a-c]{0,2}", inner), 0..8).prop_map(|entries| {
                let body: Vec<String> = entries.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
                format!("{{{}}}", body.join(","))
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn value_round_trips(v in value(true)) {
        match encode_value(&v) {
            Ok(d) => {
                let back = d.to_value();
                prop_assert!(same(&back, &strip_undefined(&v)), "{:?} decoded as {:?}", v, back);
                prop_assert_eq!(d.to_json_string(), to_json_string(&v));
                prop_assert!(DocRef::new(d.as_bytes()).is_ok());
                // The portable form reads back as the same document, of its length.
                let portable = d.to_bytes();
                prop_assert_eq!(portable.len(), d.len());
                prop_assert_eq!(Doc::from_bytes(&portable).ok(), Some(d.clone()));
            }
            Err(_) => prop_assert!(v.is_undefined()),
        }
    }

    #[test]
    fn object_round_trips_and_lookups_agree(v in object(true)) {
        let d = Doc::from_value(&v).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(same(&d.to_value(), &strip_undefined(&v)));
        prop_assert_eq!(d.to_json_string(), to_json_string(&v));
        let stripped = strip_undefined(&v);
        check_lookups(d.root(), &stripped)?;
        // Re-encoding the JSON output reads back the same (up to -0 and omitted NaN/infinities).
        if let Some(json) = to_json_string(&v) {
            let again = Doc::from_json_str(&json).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(again.to_json_string(), Some(json));
        }
    }

    /// A whole item's JSON written from its bytes is the JSON of its decoded value, system
    /// properties included (numbers without a JSON form: both refuse).
    #[test]
    fn whole_items_write_the_json_of_their_value(
        v in object(true),
        database in any::<u32>(),
        container in 0u32..(1 << 24),
        seq in 1u64..(1 << 60),
        lsn in any::<u64>(),
        ts in any::<u32>(),
    ) {
        let doc = Doc::from_value(&v).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let item = StoredItem { doc, meta: ItemMeta { seq, lsn, ts: u64::from(ts), ttl: None } };
        let whole = WholeItem { item, names: Arc::new(ItemNames::new(database, container)) };
        let mut out = b"[".to_vec();
        let written = whole.write_json(&mut out);
        prop_assert_eq!(written.then(|| String::from_utf8(out[1..].to_vec()).unwrap()), to_json_string(&whole.to_value()));
        prop_assert_eq!(written, out.len() > 1, "nothing is appended when nothing is written");
    }

    /// Strings are escaped as serde_json escapes them, whatever the position of the bytes that
    /// need it (the writer skips eight plain bytes at a time).
    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them(
        parts in prop::collection::vec(prop::sample::select(vec![
            "a", "abcdefgh", "\"", "\\", "\u{0}", "\u{1f}", " ", "\u{7f}", "é", "\u{1F600}", "/", "\n", "!", "~",
        ]), 0..40),
    ) {
        let text: String = parts.concat();
        let doc = Doc::from_value(&Value::from(Map::from_iter([(text.clone(), Value::from(text.clone()))]))).unwrap();
        let expected = serde_json::to_string(&serde_json::json!({ text.clone(): text })).unwrap();
        prop_assert_eq!(doc.to_json_string(), Some(expected));
    }

    #[test]
    fn json_text_matches_parse_json(text in json_text()) {
        let expected = parse_json(&text);
        let got = encode_json_str(&text);
        match (expected, got) {
            (Ok(v), Ok(d)) => {
                prop_assert!(same(&d.to_value(), &v), "{} decoded as {:?}, expected {:?}", text, d.to_value(), v);
                prop_assert_eq!(d.to_json_string(), to_json_string(&v));
                prop_assert!(DocRef::new(d.as_bytes()).is_ok());
                check_lookups(d.root(), &v)?;
                // from_value gives the same bytes.
                let from_value = encode_value(&v).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(from_value, d);
            }
            (Err(_), Err(_)) => {}
            (e, g) => prop_assert!(false, "{}: parse_json {:?} vs encode {:?}", text, e.is_ok(), g.is_ok()),
        }
    }

    #[test]
    fn with_fields_matches_value_insert(
        v in object(false),
        fields in prop::collection::vec(("[a-d]{1,2}", value(true)), 0..5),
    ) {
        let d = Doc::from_value(&v).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let refs: Vec<(&str, &Value)> = fields.iter().map(|(k, x)| (k.as_str(), x)).collect();
        let got = d.with_fields(&refs).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut expected = v.clone();
        if let Some(m) = expected.as_object_mut() {
            for (k, x) in &fields {
                m.insert(k.clone(), x.clone());
            }
            m.retain(|_, x| x.is_defined());
        }
        prop_assert!(same(&got.to_value(), &strip_undefined(&expected)), "{:?} vs {:?}", got, expected);
        prop_assert!(DocRef::new(got.as_bytes()).is_ok());
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        exercise(&bytes);
    }

    #[test]
    fn mutated_docs_never_panic(v in object(false), pos in any::<prop::sample::Index>(), byte in any::<u8>(), cut in any::<prop::sample::Index>()) {
        let d = Doc::from_value(&v).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for form in [d.as_bytes().to_vec(), d.to_bytes()] {
            let mut bytes = form;
            let i = pos.index(bytes.len());
            bytes[i] = byte;
            exercise(&bytes);
            exercise(&bytes[..cut.index(bytes.len())]);
        }
        let mut bytes = d.as_bytes().to_vec();
        let i = pos.index(bytes.len());
        bytes[i] = byte;
        if let Ok(r) = DocRef::new(&bytes) {
            // Valid after mutation: everything must agree.
            prop_assert_eq!(r.to_json_string(), to_json_string(&r.to_value()));
        }
    }
}

/// `get`/`index`/`len`/iterators of `r` agree with `v`, recursively.
fn check_lookups(r: DocRef<'_>, v: &Value) -> Result<(), TestCaseError> {
    prop_assert_eq!(r.kind(), v.kind());
    prop_assert!(same(&r.to_value(), v));
    match v {
        Value::Object(m) => {
            prop_assert_eq!(r.len(), m.len());
            for (k, x) in m.iter() {
                let got = r.get(k).ok_or_else(|| TestCaseError::fail(format!("missing {k:?}")))?;
                check_lookups(got, x)?;
            }
            let missing = r.get("\u{0}not a key");
            prop_assert!(missing.is_none());
            let keys: Vec<&str> = r.entries().map(|(k, _)| k).collect();
            let expected: Vec<&str> = m.keys().map(String::as_str).collect();
            prop_assert_eq!(keys, expected);
            prop_assert!(r.index(0).is_none());
        }
        Value::Array(a) => {
            prop_assert_eq!(r.len(), a.len());
            for (i, x) in a.iter().enumerate() {
                let got = r.index(i).ok_or_else(|| TestCaseError::fail(format!("missing [{i}]")))?;
                check_lookups(got, x)?;
            }
            prop_assert!(r.index(a.len()).is_none());
            prop_assert_eq!(r.elements().count(), a.len());
            prop_assert!(r.get("a").is_none());
        }
        Value::String(s) => prop_assert_eq!(r.as_str(), Some(&**s)),
        Value::Number(n) => prop_assert_eq!(r.as_f64().map(f64::to_bits), Some(n.to_bits())),
        Value::Bool(b) => prop_assert_eq!(r.as_bool(), Some(*b)),
        Value::Null => prop_assert!(r.is_null()),
        Value::Undefined => prop_assert!(false, "undefined stored"),
    }
    Ok(())
}

/// Runs every accessor over arbitrary bytes.
fn exercise(bytes: &[u8]) {
    let _ = Doc::from_bytes(bytes);
    let _ = DocRef::new(bytes);
    let r = DocRef::trusted(bytes);
    walk(r, 0);
    let _ = (r.to_value(), r.to_json_string(), format!("{r:?}"));
}

fn walk(r: DocRef<'_>, depth: usize) {
    let _ = (r.kind(), r.len(), r.as_bool(), r.as_f64(), r.as_str(), r.is_empty());
    let _ = (r.get("a"), r.get(""), r.index(0), r.index(3), r.path(&["a", "b"]));
    if depth < 4 {
        for (_, x) in r.entries() {
            walk(x, depth + 1);
        }
        for x in r.elements() {
            walk(x, depth + 1);
        }
    }
}
