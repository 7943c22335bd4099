//! Conditional and full-text functions: IIF, FullTextContains, FullTextContainsAll,
//! FullTextContainsAny.
//!
//! (`DocumentId`, the only item function, needs the item itself and is handled by the
//! evaluator. `FullTextScore` and `RRF` rank items against statistics of the whole container and
//! only make sense in `ORDER BY RANK`: their bodies are in `crate::rank`.)
//!
//! Full-text matching here is a tokenized, case-insensitive match: text and keywords are split on
//! anything that is not a letter or digit, and a keyword matches when all its tokens occur in the
//! text, in order and adjacent. The service also stems words (per the container's full-text
//! policy language); cosmoql does not, so `run` does not match `running`.

use cosmoql_value::Value;

use super::body::Builtin;

pub(crate) const FUNCTIONS: &[Builtin] = &[
    Builtin {
        name: "IIF",
        // Anything but `true` (false, undefined, a number, ...) selects the third argument.
        eval: |a, _| Ok(if matches!(a[0], Value::Bool(true)) { a[1].clone() } else { a[2].clone() }),
    },
    Builtin { name: "FullTextContains", eval: |a, _| Ok(full_text(a, true)) },
    Builtin { name: "FullTextContainsAll", eval: |a, _| Ok(full_text(a, true)) },
    Builtin { name: "FullTextContainsAny", eval: |a, _| Ok(full_text(a, false)) },
];

fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_lowercase).collect()
}

/// Whether the keyword's tokens occur in the text's tokens, adjacent and in order.
fn contains_phrase(text: &[String], keyword: &str) -> bool {
    let needle = tokens(keyword);
    !needle.is_empty() && text.windows(needle.len()).any(|w| w == needle.as_slice())
}

/// `all`: every keyword matches; otherwise any. Non-string text is undefined, as are non-string
/// keywords.
fn full_text(args: &[Value], all: bool) -> Value {
    let Value::String(text) = &args[0] else { return Value::Undefined };
    let text = tokens(text);
    let mut keywords = Vec::with_capacity(args.len() - 1);
    for k in &args[1..] {
        match k {
            Value::String(s) => keywords.push(s),
            _ => return Value::Undefined,
        }
    }
    let hit = |k: &&std::sync::Arc<str>| contains_phrase(&text, k);
    Value::Bool(if all { keywords.iter().all(hit) } else { keywords.iter().any(hit) })
}

#[cfg(test)]
mod tests {
    use cosmoql_value::parse_json;

    use super::*;
    use crate::functions::test_support::call;
    use crate::functions::{lookup, FunctionContext};

    fn iif(cond: Value, a: Value, b: Value) -> Value {
        let def = lookup("iif").unwrap();
        (def.eval)(&[cond, a, b], &FunctionContext::default()).unwrap()
    }

    #[test]
    fn full_text_matching() {
        let text = Value::from("The quick, brown fox jumps over the lazy dog.");
        let s = |x: &str| Value::from(x);
        assert_eq!(call("FullTextContains", &[text.clone(), s("brown FOX")]), Value::Bool(true));
        assert_eq!(call("FullTextContains", &[text.clone(), s("fox brown")]), Value::Bool(false));
        assert_eq!(call("FullTextContains", &[text.clone(), s("qui")]), Value::Bool(false));
        assert_eq!(call("FullTextContainsAll", &[text.clone(), s("lazy"), s("dog")]), Value::Bool(true));
        assert_eq!(call("FullTextContainsAll", &[text.clone(), s("lazy"), s("cat")]), Value::Bool(false));
        assert_eq!(call("FullTextContainsAny", &[text.clone(), s("cat"), s("dog")]), Value::Bool(true));
        assert_eq!(call("FullTextContainsAny", &[text.clone(), s("cat"), s("cow")]), Value::Bool(false));
        assert_eq!(call("FullTextContains", &[Value::from(5), s("5")]), Value::Undefined);
        assert_eq!(call("FullTextContains", &[text, Value::Undefined]), Value::Undefined);
    }

    #[test]
    fn iif_cases() {
        let (yes, no) = (Value::from(123), Value::from(456));
        assert_eq!(iif(Value::Bool(true), yes.clone(), no.clone()), yes);
        for cond in [
            Value::Bool(false),
            Value::from(123),
            Value::from("ABC"),
            parse_json("[1,2,3]").unwrap(),
            parse_json(r#"{"name": "Alice", "age": 20}"#).unwrap(),
            Value::Null,
            Value::Undefined,
        ] {
            assert_eq!(iif(cond.clone(), yes.clone(), no.clone()), no, "{cond:?}");
        }
        // IIF(p.onSale, p.pricing.sale, p.pricing.msrp)
        assert_eq!(iif(Value::Bool(true), Value::from(30.85), Value::from(55.95)), Value::from(30.85));
        assert_eq!(iif(Value::Bool(false), Value::from(12.55), Value::from(20.15)), Value::from(20.15));
        // An undefined branch is returned as is.
        assert_eq!(iif(Value::Bool(true), Value::Undefined, no), Value::Undefined);
    }
}
