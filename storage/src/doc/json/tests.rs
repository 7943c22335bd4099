//! The direct reader against serde_json: what it accepts it encodes byte for byte as the serde
//! path does, and it never accepts what serde_json rejects.

use proptest::prelude::*;

use super::super::encode::{encode_json_with, seal, Writer};
use super::super::names::Form;
use super::encode;

/// The direct reader's document in the portable form, its length as it counted it checked.
fn fast(text: impl AsRef<[u8]>) -> Option<Vec<u8>> {
    let mut w = Writer::default();
    w.reset(Form::Memory);
    encode(text.as_ref(), &mut w)?;
    let doc = seal(&mut w).expect("the direct reader wrote a malformed value");
    let portable = doc.to_bytes();
    assert_eq!(doc.len(), portable.len(), "the portable length counted wrong");
    Some(portable)
}

fn serde(text: impl AsRef<[u8]>) -> Result<Vec<u8>, String> {
    encode_json_with(serde_json::Deserializer::from_slice(text.as_ref()), false)
        .map(|d| d.to_bytes())
        .map_err(|e| e.to_string())
}

/// The two agree on `text`; returns whether the direct reader took it.
fn agree(text: impl AsRef<[u8]>) -> bool {
    let text = text.as_ref();
    let shown = String::from_utf8_lossy(text);
    match (fast(text), serde(text)) {
        (Some(f), Ok(s)) => {
            assert_eq!(f, s, "different encodings of {shown:?}");
            true
        }
        (Some(_), Err(e)) => panic!("the direct reader accepted {shown:?}, which serde_json rejects: {e}"),
        (None, _) => false,
    }
}

#[test]
fn takes_what_items_hold() {
    for text in [
        r#"{"id":"a","n":1,"f":-2.5,"t":true,"u":false,"z":null,"s":[],"o":{}}"#,
        r#" { "a" : [ 1 , 2 , { "b" : "c" } ] , "d" : "" } "#,
        "\t{\"a\":\r\n1}\n",
        r#"{"esc":"q\"b\\s\/n\nt\tr\rb\bf\f","u":"\u00e9\u4e2d\ud83d\ude00","raw":"é中😀"}"#,
        r#"{"mixed":"a long run of plain text, then é, then \n, then 😀 and more plain text after it"}"#,
        r#"{"eight":"12345678","seven":"1234567","nine":"123456789","é":"ééééééééé"}"#,
        r#"{"k\u0041":1,"k\"":2}"#,
        r#"{"a":1,"b":2,"a":3}"#,
        r#"{"a":1,"a":{"x":1,"x":2}}"#,
        r#"{"abcdefgh1":1,"abcdefgh2":2,"abcdefgh1":3,"abcdefg":4,"abcdefgh":5}"#,
        r#"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k3":33}"#,
        r#"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16}"#,
        r#"{"\u0061":1,"a":2,"b\"":3,"b\u0022":4}"#,
        r#"{"n":[0,-0,1,-1,127,128,-128,-129,32767,32768,2147483647,2147483648,-2147483648,-2147483649]}"#,
        r#"{"n":[0.0,-0.0,1e0,1E2,1e-2,-1.5e+3,0.1,0.30000000000000004,123456789012345678,1234567890123456789]}"#,
        r#"{"n":[18446744073709551615,18446744073709551616,99999999999999999999999,-9223372036854775808]}"#,
        r#"{"n":[4.9e-324,2.2250738585072014e-308,1.7976931348623157e308,1e-400,-1e-400]}"#,
        r#"{"n":9007199254740993,"m":9007199254740995,"p":0.1e1,"q":100e-2}"#,
        "[1,2,3]",
        "\"just a string\"",
        "12",
        "null",
    ] {
        assert!(agree(text), "the direct reader gave up on {text:?}");
    }
}

#[test]
fn leaves_errors_and_limits_to_serde() {
    let deep = format!("{}1{}", "[".repeat(super::FAST_DEPTH + 1), "]".repeat(super::FAST_DEPTH + 1));
    for text in [
        "",
        " ",
        "{",
        "}",
        "{\"a\"}",
        "{\"a\":}",
        "{\"a\":1,}",
        "[1,]",
        "[,1]",
        "{,}",
        "{\"a\" 1}",
        "{a:1}",
        "[1 2]",
        "01",
        "-",
        "-a",
        "1.",
        ".5",
        "1e",
        "1e+",
        "+1",
        "0x10",
        "1e400",
        "-1e400",
        "NaN",
        "Infinity",
        "tru",
        "nul",
        "falsey",
        "\"unterminated",
        "\"bad \\x escape\"",
        "\"ctrl \u{1} char\"",
        "\"tab\tinside\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "\"\\u12\"",
        "\"\\u12g4\"",
        "{} {}",
        "[] x",
        "\u{feff}{}",
        "{\"a\":1}}",
        "{\"long string, then a control character\u{1f}\"}",
        &deep,
    ] {
        agree(text);
        if serde(text).is_err() {
            assert!(fast(text).is_none(), "{text:?}");
        }
    }
    // Bytes that are not UTF-8, in strings and out: an overlong form, a surrogate, a lone
    // continuation byte, a truncated character, a byte never in UTF-8.
    for bad in [&[0xC0, 0xAF][..], &[0xED, 0xA0, 0x80], &[0x80], &[0xE4, 0xB8], &[0xFF], &[0xF5, 0x80, 0x80, 0x80]] {
        for (before, after) in [("[\"", "\"]"), ("[\"plain text before it ", " and after\"]"), ("[", "]")] {
            let text = [before.as_bytes(), bad, after.as_bytes()].concat();
            assert!(serde(&text).is_err() && fast(&text).is_none(), "{text:?}");
        }
    }
    // Deep but legal nesting is still read (by serde_json).
    assert!(serde(&deep).is_ok() && fast(&deep).is_none());
}

/// JSON values with the shapes and strings items have.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(|n| serde_json::json!(n)),
        any::<u64>().prop_map(|n| serde_json::json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| serde_json::json!(f)),
        (-1000i32..1000).prop_map(|n| serde_json::json!(n)),
        ".{0,12}".prop_map(serde_json::Value::String),
        "[a-z\"\\\\/\u{0}-\u{1f}é😀]{0,8}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            prop::collection::vec(("[a-c\"é]{0,3}", inner), 0..6)
                .prop_map(|entries| serde_json::Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// A number's text in forms serde_json would not write itself.
fn number_text() -> impl Strategy<Value = String> {
    ("-?", "(0|[1-9][0-9]{0,25})", "(\\.[0-9]{1,20})?", "([eE][+-]?[0-9]{1,3})?")
        .prop_map(|(sign, int, frac, exp)| format!("{sign}{int}{frac}{exp}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn encodes_as_serde_does(value in json_value(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) };
        let text = text.expect("a value serializes");
        prop_assert!(agree(&text), "the direct reader gave up on {}", text);
    }

    #[test]
    fn reads_numbers_as_serde_does(number in number_text()) {
        let text = format!("[{number}]");
        let taken = agree(&text);
        prop_assert_eq!(taken, serde(&text).is_ok(), "{}", text);
    }

    #[test]
    fn never_accepts_what_serde_rejects(value in json_value(), cut in any::<prop::sample::Index>(),
                                        byte in prop::sample::select(b"{}[],:\"\\ 0-.eu\x01\x80\xC3\xED\xFF".to_vec()),
                                        insert in any::<bool>()) {
        let mut text = serde_json::to_string(&value).expect("a value serializes").into_bytes();
        let at = cut.index(text.len() + 1);
        if insert || at == text.len() {
            text.insert(at.min(text.len()), byte);
        } else {
            text.remove(at);
        }
        agree(&text);
    }
}
