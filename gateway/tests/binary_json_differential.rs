//! The gateway's binary JSON decoder against the Rust SDK's own encoder (the bytes the SDK sends
//! for an item body): any JSON document the SDK encodes decodes to the same document.

use cosmoql_gateway::binary_json::decode;
use proptest::prelude::*;
use serde_json::{Map, Number, Value};

/// JSON documents: scalars of every kind (integers across the widths, fractions, unicode and
/// repeated strings, which the encoder may write as references) nested in arrays and objects.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| Value::Number(n.into())),
        any::<u64>().prop_map(|n| Value::Number(n.into())),
        (-1e12f64..1e12).prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "[a-z]{0,12}".prop_map(Value::String),
        "\\PC{0,40}".prop_map(Value::String),
        Just(Value::String("2026-11-27T02:05:29.1234567Z".into())),
        Just(Value::String("0f8fad5b-d9cb-469f-a165-70867728950e".into())),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec(("[a-zA-Z_]{1,10}", inner), 0..8)
                .prop_map(|fields| Value::Object(fields.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Numbers compare by value (the encoder may write an integral double as an integer).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
        }
        _ => a == b,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn what_the_sdk_encodes_decodes_to_the_same_document(doc in json()) {
        let body = azure_data_cosmos_driver::binary_json::encode(&doc);
        let decoded = decode(&body).map_err(|e| TestCaseError::fail(format!("{e} for {doc}")))?;
        prop_assert!(same(&decoded, &doc), "{decoded} != {doc}");
    }
}
