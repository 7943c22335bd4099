//! Conditional and full-text functions: IIF, FullTextContains, FullTextContainsAll,
//! FullTextContainsAny, and the service's internal `_FullTextWordCount` and `_FullTextScore` (BM25
//! under statistics given as arguments: its hybrid search plans sum each range's word counts and
//! hit counts and pass the totals, `docs/design/hybrid-search-plans.md`).
//!
//! (`DocumentId`, the only item function, needs the item itself and is handled by the
//! evaluator. `FullTextScore` and `RRF` rank rows against the whole container's statistics and
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
    Builtin {
        name: "_FullTextWordCount",
        eval: |a, _| Ok(a[0].as_str().map_or(Value::Undefined, |t| Value::from(token_count(t) as f64))),
    },
    Builtin { name: "_FullTextScore", eval: |a, _| Ok(full_text_score(a)) },
];

/// BM25's weight of one query term in one text (k1 = 1.2, b = 0.75): the term occurs `tf` times
/// in a text of `len` tokens; `df` of the `n` documents ranked hold it; they have `avg` tokens on
/// average.
fn bm25(tf: f64, df: f64, n: f64, len: f64, avg: f64) -> f64 {
    let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
    let (k1, b) = (1.2, 0.75);
    idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * len / avg.max(1e-9)))
}

/// How many times `needle`'s tokens occur in `text`'s, adjacent and in order.
pub(crate) fn phrase_count(text: &[String], needle: &[String]) -> usize {
    if needle.is_empty() {
        return 0;
    }
    text.windows(needle.len()).filter(|w| *w == needle).count()
}

/// The relevance of a text (its tokens) to the terms (each tokenized) under the statistics of
/// the documents ranked, as the service's hybrid search statistics give them: `n` documents,
/// `words` tokens in all, `hits[i]` documents holding term `i`. The sum of the terms' BM25
/// weights; FullTextScore (`crate::rank`, the container's statistics) and `_FullTextScore` (the
/// statistics as arguments) both score with it.
pub(crate) fn relevance(text: &[String], terms: &[Vec<String>], n: f64, words: f64, hits: &[f64]) -> f64 {
    let avg = words / n;
    terms
        .iter()
        .zip(hits)
        .filter(|(needle, _)| !needle.is_empty())
        .map(|(needle, df)| bm25(phrase_count(text, needle) as f64, *df, n, text.len() as f64, avg))
        .sum()
}

/// `_FullTextScore(text, [terms], documentCount, totalWordCount, [hitCounts])`: the sum over the
/// terms of their BM25 weight in `text`, each term counted where its tokens occur adjacent and in
/// order (as FullTextContains matches it), `hitCounts[i]` the texts holding term `i`.
/// Undefined when the text is not a string or the arguments are not of those shapes.
fn full_text_score(args: &[Value]) -> Value {
    let (Value::String(text), Value::Array(terms), Some(n), Some(words), Value::Array(hits)) =
        (&args[0], &args[1], args[2].as_f64(), args[3].as_f64(), &args[4])
    else {
        return Value::Undefined;
    };
    // Statistics that documents could have: a positive count, words, and hit counts within it.
    if terms.len() != hits.len() || !(n.is_finite() && n > 0.0) || !(words.is_finite() && words >= 0.0) {
        return Value::Undefined;
    }
    let (Some(terms), Some(hits)) = (
        terms.iter().map(|t| t.as_str().map(tokens)).collect::<Option<Vec<_>>>(),
        hits.iter().map(|h| h.as_f64().filter(|h| (0.0..=n).contains(h))).collect::<Option<Vec<_>>>(),
    ) else {
        return Value::Undefined;
    };
    let score = relevance(&tokens(text), &terms, n, words, &hits);
    if score.is_finite() {
        Value::from(score)
    } else {
        Value::Undefined
    }
}

/// The full-text tokens of `text`: its runs of letters and digits, lowercased (what
/// FullTextContains matches and FullTextScore counts).
pub(crate) fn tokens(text: &str) -> Vec<String> {
    words(text).map(str::to_lowercase).collect()
}

/// How many tokens `text` has.
fn token_count(text: &str) -> usize {
    words(text).count()
}

/// The runs of letters and digits of `text`, as they are written: where [`tokens`] cuts.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty())
}

/// Whether the keyword's tokens occur in the text's tokens, adjacent and in order.
fn contains_phrase(text: &[String], keyword: &str) -> bool {
    phrase_count(text, &tokens(keyword)) > 0
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
    fn the_internal_full_text_functions_score_with_the_statistics_they_are_given() {
        let text = Value::from("red fox, red hen");
        assert_eq!(call("_FullTextWordCount", std::slice::from_ref(&text)), Value::from(4));
        assert_eq!(call("_FullTextWordCount", &[Value::from(4)]), Value::Undefined);
        let score = |terms: &str, n: f64, words: f64, hits: &str| {
            let args = [
                text.clone(),
                parse_json(terms).unwrap(),
                Value::from(n),
                Value::from(words),
                parse_json(hits).unwrap(),
            ];
            call("_FullTextScore", &args)
        };
        // One term, twice in the text, in 2 of 10 texts of 4 tokens on average.
        let idf = ((10.0 - 2.0 + 0.5) / (2.0 + 0.5) + 1.0f64).ln();
        let expected = idf * 2.0 * 2.2 / (2.0 + 1.2 * (1.0 - 0.75 + 0.75 * 4.0 / 4.0));
        let got = score(r#"["RED"]"#, 10.0, 40.0, "[2]").as_f64().unwrap();
        assert!((got - expected).abs() < 1e-12, "{got} {expected}");
        // A phrase counts where its tokens are adjacent; absent terms add nothing.
        assert!(score(r#"["red fox", "cat"]"#, 10.0, 40.0, "[1, 0]").as_f64().unwrap() > 0.0);
        assert_eq!(score(r#"["cat"]"#, 10.0, 40.0, "[0]"), Value::from(0));
        // More documents holding the term: a lower score.
        assert!(score(r#"["red"]"#, 10.0, 40.0, "[9]").as_f64() < score(r#"["red"]"#, 10.0, 40.0, "[1]").as_f64());
        assert_eq!(score(r#"["red"]"#, 10.0, 40.0, "[1, 2]"), Value::Undefined);
        assert_eq!(score(r#""red""#, 10.0, 40.0, "[1]"), Value::Undefined);
        // Statistics no set of documents has: undefined, never NaN or infinity.
        for (n, words, hits) in [
            (10.0, 40.0, "[-1]"),
            (10.0, 40.0, "[-0.5]"),
            (10.0, 40.0, "[11]"),
            (0.0, 40.0, "[0]"),
            (f64::NAN, 40.0, "[1]"),
            (f64::INFINITY, 40.0, "[1]"),
            (10.0, -1.0, "[1]"),
            (10.0, f64::NAN, "[1]"),
        ] {
            assert_eq!(score(r#"["red"]"#, n, words, hits), Value::Undefined, "{n} {words} {hits}");
        }
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
