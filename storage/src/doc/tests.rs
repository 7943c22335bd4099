use super::*;
use cosmoql_value::{parse_json, to_json_string};

fn v(json: &str) -> Value {
    parse_json(json).unwrap_or_else(|e| panic!("bad test json {json}: {e}"))
}

fn enc(json: &str) -> Doc {
    encode_json_str(json).unwrap_or_else(|e| panic!("cannot encode {json}: {e}"))
}

/// Structural equality: kinds, number bits, key order.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.to_bits() == y.to_bits(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| same(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|((ka, a), (kb, b))| ka == kb && same(a, b))
        }
        _ => a == b && a.kind() == b.kind(),
    }
}

/// Encodes `json` both ways and checks decoding, JSON output and validation.
fn round_trip(json: &str) -> Doc {
    let expected = v(json);
    let d = enc(json);
    let from_value = encode_value(&expected).unwrap_or_else(|e| panic!("{json}: {e}"));
    assert_eq!(d, from_value, "JSON and Value encodings differ for {json}");
    let back = d.to_value();
    assert!(same(&back, &expected), "{json}: decoded {back:?}");
    assert_eq!(d.to_json_string(), to_json_string(&expected), "{json}");
    assert!(DocRef::new(d.as_bytes()).is_ok(), "{json}: encoder output does not validate");
    d
}

#[test]
fn scalars_use_their_tags() {
    assert_eq!(round_trip("null").as_bytes(), [tag::NULL]);
    assert_eq!(round_trip("false").as_bytes(), [tag::FALSE]);
    assert_eq!(round_trip("true").as_bytes(), [tag::TRUE]);
    assert_eq!(round_trip("0").as_bytes(), [0x80]);
    assert_eq!(round_trip("127").as_bytes(), [0xFF]);
    assert_eq!(round_trip("128").as_bytes(), [tag::I16, 128, 0]);
    assert_eq!(round_trip("-1").as_bytes(), [tag::I8, 0xFF]);
    assert_eq!(round_trip("-128").as_bytes(), [tag::I8, 0x80]);
    assert_eq!(round_trip("-129").as_bytes(), [tag::I16, 0x7F, 0xFF]);
    assert_eq!(round_trip("32768").as_bytes(), [tag::I32, 0, 0x80, 0, 0]);
    assert_eq!(round_trip("2147483647").as_bytes(), [tag::I32, 0xFF, 0xFF, 0xFF, 0x7F]);
    assert_eq!(round_trip("-2147483648").as_bytes(), [tag::I32, 0, 0, 0, 0x80]);
    assert_eq!(round_trip("2147483648").as_bytes()[0], tag::F64);
    assert_eq!(round_trip("1.5").as_bytes(), [&[tag::F64][..], &1.5f64.to_le_bytes()].concat());
    assert_eq!(round_trip("5.0").as_bytes(), [0x85], "integral floats are small ints");
    let neg_zero = round_trip("-0.0");
    assert_eq!(neg_zero.as_bytes(), [&[tag::F64][..], &(-0.0f64).to_le_bytes()].concat());
    assert!(neg_zero.root().as_f64().is_some_and(|n| n == 0.0 && n.is_sign_negative()));
    round_trip("-0");
    round_trip("1e300");
    round_trip("-5e-324");
    round_trip("9007199254740993");
    round_trip("18446744073709551616");
    round_trip("13.475000000000001");
    assert_eq!(round_trip(r#""""#).as_bytes(), [0x40]);
    assert_eq!(round_trip(r#""ab""#).as_bytes(), [0x42, b'a', b'b']);
    let s63 = format!("\"{}\"", "x".repeat(63));
    assert_eq!(round_trip(&s63).as_bytes()[0], 0x7F);
    let s64 = format!("\"{}\"", "x".repeat(64));
    assert_eq!(&round_trip(&s64).as_bytes()[..2], [tag::STRING, 64]);
}

#[test]
fn non_finite_numbers_are_not_stored() {
    // JSON has no form for them: an item holding one would read back without it.
    for v in [
        Value::array([Value::from(1), Value::from(f64::NAN)]),
        Value::from(f64::INFINITY),
        Value::object([("a", Value::object([("b", Value::from(f64::NEG_INFINITY))]))]),
    ] {
        let err = encode_value(&v).unwrap_err();
        assert_eq!(err.kind(), DocErrorKind::NonFinite, "{err}");
    }
    let err = Doc::from_value(&Value::object([("a", Value::from(f64::NAN)), ("b", Value::from(2))])).unwrap_err();
    assert!(err.to_string().contains("NaN"), "{err}");
}

#[test]
fn long_strings_use_multi_byte_varints() {
    for n in [127, 128, 300, 16_383, 16_384, 70_000] {
        let s = "é".repeat(n / 2) + &"a".repeat(n % 2);
        let d = encode_value(&Value::from(s.as_str())).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.root().as_str(), Some(s.as_str()));
        assert_eq!(
            d.len(),
            1 + s.len()
                + if s.len() < 128 {
                    1
                } else if s.len() < 16_384 {
                    2
                } else {
                    3
                }
        );
        // The same as a key and inside a big container (multi-byte container lengths).
        let json = format!(r#"{{"{s}":[{q},{q}],"z":1}}"#, q = format!("\"{s}\""));
        let d = round_trip(&json);
        assert_eq!(d.root().get(&s).and_then(|a| a.index(1)).and_then(|x| x.as_str()), Some(s.as_str()));
        assert_eq!(d.get("z").and_then(|x| x.as_f64()), Some(1.0));
    }
}

#[test]
fn containers_nested_and_empty() {
    assert_eq!(round_trip("[]").as_bytes(), [tag::ARRAY, 0, 0]);
    assert_eq!(round_trip("{}").as_bytes(), [tag::OBJECT, 0, 0]);
    assert_eq!(round_trip(r#"{"a":1}"#).to_bytes(), [tag::OBJECT, 1, 3, 1, b'a', 0x81]);
    round_trip("[[],{},[[]],{\"a\":{}}]");
    let d = round_trip(r#"{"a":[1,[2,{"b":[3,null,true,"x"]}]],"c":{"d":{"e":-1.25}}}"#);
    let r = d.root();
    assert_eq!(r.len(), 2);
    assert_eq!(r.path(&["c", "d", "e"]).and_then(|x| x.as_f64()), Some(-1.25));
    assert_eq!(r.path(&[]).map(|x| x.kind()), Some(ValueKind::Object));
    assert!(r.path(&["c", "x", "e"]).is_none());
    let a = r.get("a").unwrap_or(r);
    assert_eq!(a.kind(), ValueKind::Array);
    assert_eq!(a.len(), 2);
    let inner = a.index(1).and_then(|x| x.index(1)).and_then(|x| x.get("b"));
    assert_eq!(inner.map(|x| x.len()), Some(4));
    assert_eq!(inner.and_then(|x| x.index(0)).and_then(|x| x.as_f64()), Some(3.0));
    assert!(inner.and_then(|x| x.index(1)).is_some_and(|x| x.is_null()));
    assert_eq!(inner.and_then(|x| x.index(2)).and_then(|x| x.as_bool()), Some(true));
    assert_eq!(inner.and_then(|x| x.index(3)).and_then(|x| x.as_str()), Some("x"));
    assert!(inner.and_then(|x| x.index(4)).is_none());
    assert!(a.get("b").is_none(), "get on an array");
    assert!(r.index(0).is_none(), "index on an object");
    assert!(r.get("zz").is_none());
    let elems: Vec<ValueKind> = a.elements().map(|x| x.kind()).collect();
    assert_eq!(elems, [ValueKind::Number, ValueKind::Array]);
    assert_eq!(a.entries().count(), 0);
    assert_eq!(r.elements().count(), 0);
    // A deep container whose header needs multi-byte lengths.
    let big = format!("[{}]", vec!["{\"k\":\"vvvvvvvvvv\"}"; 500].join(","));
    let d = round_trip(&big);
    assert_eq!(d.root().len(), 500);
    assert_eq!(d.root().index(499).and_then(|o| o.get("k")).and_then(|s| s.as_str()), Some("vvvvvvvvvv"));
}

#[test]
fn key_order_and_duplicates() {
    let d = round_trip(r#"{"z":1,"a":2,"m":3}"#);
    let keys: Vec<&str> = d.root().entries().map(|(k, _)| k).collect();
    assert_eq!(keys, ["z", "a", "m"]);
    // Last value at the first position, as parse_json.
    let d = round_trip(r#"{"a":1,"b":2,"a":{"x":[1,2]},"c":3,"b":"s"}"#);
    assert_eq!(d.to_json_string().as_deref(), Some(r#"{"a":{"x":[1,2]},"b":"s","c":3}"#));
    assert_eq!(d.root().len(), 3);
    // Duplicates in a nested object, and many keys (hash-set path).
    round_trip(r#"{"o":{"k":1,"k":2,"k":3},"p":[{"a":1,"a":null}]}"#);
    let many: Vec<String> = (0..40).map(|i| format!("\"k{}\":{i}", i % 25)).collect();
    let d = round_trip(&format!("{{{}}}", many.join(",")));
    assert_eq!(d.root().len(), 25);
    assert_eq!(d.get("k3").and_then(|x| x.as_f64()), Some(28.0));
    // A duplicated key whose first value was a container.
    round_trip(r#"{"a":[1,2,3],"a":[]}"#);
}

#[test]
fn unicode_and_escapes() {
    let d =
        round_trip(r#"{"ключ":"значение","emoji 🎉":"\ud83d\ude00","ctl":"a\u0001\b\f\n\r\t\"\\/\u007f","":"empty"}"#);
    assert_eq!(d.get("ключ").and_then(|x| x.as_str()), Some("значение"));
    assert_eq!(d.get("emoji 🎉").and_then(|x| x.as_str()), Some("😀"));
    assert_eq!(d.get("").and_then(|x| x.as_str()), Some("empty"));
    let entries: Vec<(&str, Value)> = d.root().entries().map(|(k, x)| (k, x.to_value())).collect();
    assert_eq!(entries.len(), 4);
    assert_eq!(entries[2].1, Value::from("a\u{1}\u{8}\u{c}\n\r\t\"\\/\u{7f}"));
}

#[test]
fn items_must_be_objects() {
    for text in ["[1]", "1", "\"s\"", "null", "true"] {
        let err = Doc::from_json_str(text).err();
        assert_eq!(err.as_ref().map(DocError::kind), Some(DocErrorKind::NotAnObject), "{text}");
        assert!(err.is_some_and(|e| e.to_string().contains("must be a JSON object")));
        assert!(Doc::from_value(&v(text)).is_err());
    }
    assert_eq!(Doc::from_value(&Value::Undefined).err().map(|e| e.kind()), Some(DocErrorKind::NotAnObject));
    assert_eq!(encode_value(&Value::Undefined).err().map(|e| e.kind()), Some(DocErrorKind::Undefined));
    assert!(Doc::from_json_str(" {\"a\":1}\n").is_ok());
    assert!(Doc::from_json_slice(b"{\"a\":[true]}").is_ok());
}

#[test]
fn json_errors_have_positions() {
    let err = Doc::from_json_str("{\n  \"a\": ?}").err();
    assert_eq!(err.as_ref().map(|e| (e.kind(), e.line(), e.column())), Some((DocErrorKind::Json, 2, 8)));
    for bad in ["", "{", "[1,]", "{\"a\":1} x", "{\"a\" 1}", "{\"a\":NaN}", "{\"a\":01}", "{\"a\":\"\\ud800\"x}"] {
        assert!(Doc::from_json_str(bad).is_err(), "{bad:?}");
        assert!(parse_json(bad).is_err(), "{bad:?}");
    }
    assert!(Doc::from_json_slice(b"{\"a\":\"\xff\"}").is_err());
    // Deep nesting is an error, not a stack overflow; what serde_json accepts fits.
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    assert_eq!(encode_json_str(&deep).err().map(|e| e.kind()), Some(DocErrorKind::TooDeep));
    let ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
    assert!(parse_json(&ok).is_ok());
    round_trip(&ok);
    let mut deep_value = Value::from(1);
    for _ in 0..MAX_DEPTH + 1 {
        deep_value = Value::array([deep_value]);
    }
    assert_eq!(encode_value(&deep_value).err().map(|e| e.kind()), Some(DocErrorKind::TooDeep));
}

#[test]
fn undefined_is_omitted() {
    let val = Value::object([
        ("a", Value::Undefined),
        ("b", Value::array([Value::Undefined, Value::from(1), Value::Undefined])),
        ("c", Value::object([("x", Value::Undefined)])),
    ]);
    let d = Doc::from_value(&val).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(d.to_json_string().as_deref(), Some(r#"{"b":[1],"c":{}}"#));
    assert!(same(&d.to_value(), &v(r#"{"b":[1],"c":{}}"#)));
    assert!(d.get("a").is_none());
}

#[test]
fn with_fields_replaces_and_appends() {
    let d = Doc::from_json_str(r#"{"id":"x","pk":"p","n":[1,2],"_ts":5}"#).unwrap_or_else(|e| panic!("{e}"));
    let ts = Value::from(1_717_000_000);
    let rid = Value::from("AAAA==");
    let etag = Value::from("\"0000\"");
    let d2 = d.with_fields(&[("_rid", &rid), ("_ts", &ts), ("_etag", &etag)]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        d2.to_json_string().as_deref(),
        Some(r#"{"id":"x","pk":"p","n":[1,2],"_ts":1717000000,"_rid":"AAAA==","_etag":"\"0000\""}"#)
    );
    assert_eq!(d2.root().len(), 6);
    assert!(DocRef::new(d2.as_bytes()).is_ok());
    // Replace a field with a container, remove one with undefined, name given twice.
    let obj = Value::object([("deep", Value::array([1, 2, 3]))]);
    let d3 = d2
        .with_fields(&[("pk", &obj), ("n", &Value::Undefined), ("new", &Value::Null), ("new", &Value::from(7))])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        d3.to_json_string().as_deref(),
        Some(r#"{"id":"x","pk":{"deep":[1,2,3]},"_ts":1717000000,"_rid":"AAAA==","_etag":"\"0000\"","new":7}"#)
    );
    assert_eq!(d3.root().len(), 6);
    assert!(DocRef::new(d3.as_bytes()).is_ok());
    // Nothing to do; non-object root.
    assert_eq!(d.with_fields(&[]).ok(), Some(d.clone()));
    assert_eq!(d.with_fields(&[("zz", &Value::Undefined)]).ok(), Some(d.clone()));
    let arr = encode_json_str("[1]").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(arr.with_fields(&[("a", &ts)]).err().map(|e| e.kind()), Some(DocErrorKind::NotAnObject));
    // A header that grows past one byte.
    let long = Value::from("y".repeat(200));
    let d4 = d.with_fields(&[("long", &long)]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(d4.get("long").and_then(|x| x.as_str()).map(str::len), Some(200));
    assert!(DocRef::new(d4.as_bytes()).is_ok());
}

#[test]
fn to_json_matches_value_crate() {
    for json in [
        r#"{"a":1.0,"b":-0.0,"c":1e21,"d":1e-7,"e":123456789012345680000,"f":0.1,"g":1152921504606846976}"#,
        r#"[9007199254740993,-9223372036854775808,9223372036854775807,1.7976931348623157e308,5e-324]"#,
        r#"{"s":"\u0000\u001f\u0020 \"quoted\" back\\slash","t":"tab\there","u":"✓"}"#,
    ] {
        round_trip(json);
    }
    let d = enc(r#"{"a":[1,2.5,"x"]}"#);
    let mut out = b"prefix:".to_vec();
    assert!(d.write_json(&mut out));
    assert_eq!(out, br#"prefix:{"a":[1,2.5,"x"]}"#);
    assert!(!encode_value(&Value::from(f64::NAN)).is_ok_and(|d| d.write_json(&mut out)));
    assert_eq!(out, br#"prefix:{"a":[1,2.5,"x"]}"#);
    assert_eq!(format!("{d:?}"), r#"Doc({"a":[1,2.5,"x"]})"#);
}

#[test]
fn validation_rejects_malformed_bytes() {
    let good = enc(r#"{"a":[1,"x"],"b":{"c":null}}"#);
    let portable = good.to_bytes();
    assert_eq!(portable.len(), good.len());
    assert!(Doc::from_bytes(&portable).is_ok_and(|d| d == good));
    // Every truncation is rejected, and accessors on it do not panic.
    for cut in 0..portable.len() {
        assert!(Doc::from_bytes(&portable[..cut]).is_err(), "prefix of {cut} bytes accepted");
    }
    let bytes = good.as_bytes();
    for cut in 0..bytes.len() {
        let part = &bytes[..cut];
        assert!(DocRef::new(part).is_err(), "prefix of {cut} bytes accepted");
        let r = DocRef::trusted(part);
        let _ = (r.to_value(), r.to_json_string(), r.get("a"), r.get("b"), r.len(), r.kind());
    }
    let cases: &[(&[u8], &str)] = &[
        (&[], "missing value"),
        (&[0x0A], "invalid tag"),
        (&[0x00, 0x00], "trailing"),
        (&[0x41, 0xFF], "UTF-8"),
        (&[tag::ARRAY, 2, 1, 0x80], "count"),
        (&[tag::OBJECT, 1, 3, 1, 0xFF, 0x80], "key is not UTF-8"),
        (&[tag::OBJECT, 2, 6, 1, b'a', 0x80, 1, b'a', 0x81], "duplicate"),
        (&[tag::STRING, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F], "invalid tag or truncated"),
    ];
    for (b, what) in cases {
        let err = Doc::from_bytes(b).err();
        assert_eq!(err.as_ref().map(DocError::kind), Some(DocErrorKind::Malformed), "{b:?}");
        assert!(err.is_some_and(|e| e.to_string().contains(what)), "{b:?}: expected {what}");
    }
    // Non-canonical but valid forms are accepted; a container's header and a key's length are
    // read into the shortest form, and the size is that of what `to_bytes` writes.
    let long_header = Doc::from_bytes(&[tag::OBJECT, 0x81, 0x00, 3, 0x81, 0x00, b'a', 0x81]);
    assert!(long_header.is_err(), "the payload length counts the key's long varint");
    let long_header = Doc::from_bytes(&[tag::OBJECT, 0x81, 0x00, 4, 0x81, 0x00, b'a', 0x81]).unwrap();
    assert_eq!(long_header, enc(r#"{"a":1}"#));
    assert_eq!((long_header.len(), long_header.to_bytes().len()), (6, 6));
    assert!(Doc::from_bytes(&[tag::I32, 1, 0, 0, 0]).is_ok_and(|d| d.root().as_f64() == Some(1.0)));
    assert!(Doc::from_bytes(&[tag::STRING, 0x81, 0x00, b'a']).is_ok_and(|d| d.root().as_str() == Some("a")));
    // Too deep.
    let mut deep = Vec::new();
    for _ in 0..=MAX_DEPTH {
        deep.extend_from_slice(&[tag::ARRAY, 1, 0]);
    }
    assert!(Doc::from_bytes(&deep).is_err());
    let r = DocRef::trusted(&deep);
    let _ = (r.to_value(), r.to_json_string());
}

#[test]
fn varints() {
    for n in [0usize, 1, 127, 128, 255, 16_383, 16_384, 1 << 35, usize::MAX] {
        let mut b = Vec::new();
        push_varint(&mut b, n);
        assert_eq!(read_varint(&b, 0), Some((n, b.len())), "{n}");
        let mut arr = [0u8; 20];
        let len = put_varint(&mut arr, 0, n);
        assert_eq!(&arr[..len], &b[..]);
    }
    assert_eq!(read_varint(&[0x80; 11], 0), None);
    assert_eq!(read_varint(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], 0), None);
    assert_eq!(read_varint(&[0x80], 0), None);
}

#[test]
fn telemetry_doc_size() {
    let json = r#"{"id":"847e7a93-b52a-4037-accb-00000000c350","deviceId":"dev-00299","readingTime":"2024-06-03T17:21:09.412Z","date":"2024-06-03","metricType":"Temperature","unit":"celsius","metricValue":73.123456,"tags":["critical","outdoor"],"location":{"city":"Seattle","zip":"98101"}}"#;
    let d = Doc::from_json_str(json).unwrap_or_else(|e| panic!("{e}"));
    assert!(d.len() < json.len(), "{} >= {}", d.len(), json.len());
    assert_eq!(d.to_json_string().as_deref(), Some(json));
    assert_eq!(d.get("location").and_then(|l| l.get("zip")).and_then(|z| z.as_str()), Some("98101"));
}

#[test]
fn strings_are_escaped_wherever_the_character_falls() {
    // Every length around the eight-byte steps, the character at every position: the whole
    // string's check (the last eight bytes overlapping) and the escaping loop agree with the
    // value crate's writer.
    for len in 0..26 {
        for at in 0..len {
            for special in ['"', '\\', '\n', '\u{1}', '\u{1f}', 'é'] {
                let text: String = (0..len).map(|i| if i == at { special } else { 'a' }).collect();
                let mut out = Vec::new();
                write_escaped(&mut out, text.as_bytes());
                let expected = to_json_string(&Value::from(text.as_str())).expect("a string");
                assert_eq!(String::from_utf8(out).expect("UTF-8"), expected, "{text:?}");
            }
        }
    }
}

#[test]
fn kind_from_the_tag_is_what_the_header_says_for_every_value_and_every_truncation() {
    let doc = enc(r#"{"n":null,"t":true,"f":false,"small":7,"i8":-100,"i16":3000,"i32":-70000,"f64":0.5,"s":"short",
            "long":"a string longer than sixty-three bytes, stored with a varint length in front of it",
            "a":[1,"x",[],{}],"o":{"k":{"deep":[null]}}}"#);
    let bytes = doc.as_bytes();
    for start in 0..bytes.len() {
        for end in start..=bytes.len() {
            let part = &bytes[start..end];
            let expected = head(part).map_or(ValueKind::Undefined, |(h, _)| h.kind());
            assert_eq!(DocRef::trusted(part).kind(), expected, "bytes {start}..{end}");
        }
    }
}
