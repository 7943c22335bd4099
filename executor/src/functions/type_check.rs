//! Type-checking functions: IS_ARRAY, IS_BOOL, IS_DATETIME, IS_DEFINED, IS_FINITE_NUMBER,
//! IS_INTEGER, IS_NULL, IS_NUMBER, IS_OBJECT, IS_PRIMITIVE, IS_STRING.
//!
//! They always return a boolean: an undefined argument gives `false` (except that `IS_DEFINED`
//! is exactly "not undefined"), as documented from 2020 on.

use cosmoql_value::Value;

use super::body::Builtin;

macro_rules! check {
    ($name:literal, $f:expr) => {
        Builtin { name: $name, eval: |a, _| Ok(Value::Bool($f(&a[0]))) }
    };
}

pub(crate) const FUNCTIONS: &[Builtin] = &[
    check!("IS_ARRAY", Value::is_array),
    check!("IS_BOOL", Value::is_bool),
    check!("IS_DATETIME", |v: &Value| v.as_str().is_some_and(is_datetime)),
    check!("IS_DEFINED", Value::is_defined),
    check!("IS_FINITE_NUMBER", |v: &Value| v.as_f64().is_some_and(f64::is_finite)),
    check!("IS_INTEGER", |v: &Value| v.as_f64().is_some_and(is_integer)),
    check!("IS_NULL", Value::is_null),
    check!("IS_NUMBER", Value::is_number),
    check!("IS_OBJECT", Value::is_object),
    check!("IS_PRIMITIVE", Value::is_primitive),
    check!("IS_STRING", Value::is_string),
];

/// A 64-bit integer: integral and within [-2^63, 2^63]. The upper bound is inclusive because
/// the literal `9223372036854775807` (i64::MAX, documented as an integer) is the double 2^63;
/// `18446744073709551615` (2^64) is documented as out of range.
fn is_integer(x: f64) -> bool {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    x.is_finite() && x.fract() == 0.0 && (-TWO_63..=TWO_63).contains(&x)
}

/// The documented `IS_DATETIME` grammar: `YYYY-MM-DD`, optionally followed by `Z`, or by `T` or
/// a space and `hh:mm:ss`, optional `.` and 1 to 7 fraction digits, and an optional `Z`. Each
/// field must be in range (a real calendar date, hour < 24, minute and second < 60).
fn is_datetime(s: &str) -> bool {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<u32> {
        let digits = b.get(from..from + len)?;
        digits.iter().all(u8::is_ascii_digit).then(|| digits.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
    };
    let (Some(year), Some(month), Some(day)) = (num(0, 4), num(5, 2), num(8, 2)) else { return false };
    if b[4] != b'-' || b[7] != b'-' || !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return false;
    }
    let rest = &b[10..];
    match rest {
        [] | [b'Z'] => return true,
        [b'T' | b' ', ..] => {}
        _ => return false,
    }
    let (Some(hour), Some(minute), Some(second)) = (num(11, 2), num(14, 2), num(17, 2)) else { return false };
    if b.get(13) != Some(&b':') || b.get(16) != Some(&b':') || hour > 23 || minute > 59 || second > 59 {
        return false;
    }
    let mut tail = &b[19..];
    if let [b'.', fraction @ ..] = tail {
        let digits = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
        if !(1..=7).contains(&digits) {
            return false;
        }
        tail = &fraction[digits..];
    }
    matches!(tail, [] | [b'Z'])
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => 29,
        2 => 28,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::functions::test_support::j;
    use crate::functions::{lookup, FunctionContext};

    fn call(name: &str, arg: Value) -> Value {
        let def = lookup(name).unwrap_or_else(|| panic!("no function {name}"));
        assert_eq!((def.min_args, def.max_args), (1, Some(1)));
        (def.eval)(&[arg], &FunctionContext::default()).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    /// One sample of each kind: true, 1, "value", null, {"prop": "value"}, [1, 2, 3], undefined.
    fn samples() -> Vec<Value> {
        vec![
            Value::Bool(true),
            Value::from(1),
            Value::from("value"),
            Value::Null,
            j(r#"{"prop": "value"}"#),
            j("[1, 2, 3]"),
            Value::Undefined,
        ]
    }

    /// The documented all-types tables (2020 pages, and the newer ones).
    #[test]
    fn all_types_tables() {
        let table: &[(&str, [bool; 7])] = &[
            ("IS_ARRAY", [false, false, false, false, false, true, false]),
            ("IS_BOOL", [true, false, false, false, false, false, false]),
            ("IS_NULL", [false, false, false, true, false, false, false]),
            ("IS_NUMBER", [false, true, false, false, false, false, false]),
            ("IS_OBJECT", [false, false, false, false, true, false, false]),
            ("IS_STRING", [false, false, true, false, false, false, false]),
            ("IS_PRIMITIVE", [true, true, true, true, false, false, false]),
            ("IS_DEFINED", [true, true, true, true, true, true, false]),
            ("IS_FINITE_NUMBER", [false, true, false, false, false, false, false]),
            ("IS_INTEGER", [false, true, false, false, false, false, false]),
            ("IS_DATETIME", [false, false, false, false, false, false, false]),
        ];
        for (name, expected) in table {
            for (arg, want) in samples().into_iter().zip(expected) {
                assert_eq!(call(name, arg.clone()), Value::Bool(*want), "{name}({arg:?})");
            }
        }
        assert_eq!(call("is_number", Value::from(-4)), Value::Bool(true));
        // {"skus": [...], "vendors": null}.skus / .size / .vendor
        let obj = j(r#"{"skus": [25344, 82947], "vendors": null}"#);
        assert_eq!(call("IS_ARRAY", obj.get("skus").clone()), Value::Bool(true));
        assert_eq!(call("IS_ARRAY", obj.get("size").clone()), Value::Bool(false));
        assert_eq!(call("IS_NULL", obj.get("vendors").clone()), Value::Bool(true));
        assert_eq!(call("IS_NULL", obj.get("vendor").clone()), Value::Bool(false));
    }

    #[test]
    fn numbers() {
        let t = |name: &str, x: f64| call(name, Value::from(x)) == Value::Bool(true);
        assert!(t("IS_FINITE_NUMBER", 1234.567));
        assert!(!t("IS_FINITE_NUMBER", f64::INFINITY));
        assert!(!t("IS_FINITE_NUMBER", f64::NAN));
        assert!(!t("IS_INTEGER", 3454.123));
        assert!(t("IS_INTEGER", 5523432.0));
        assert!(t("IS_INTEGER", -0.0));
        assert!(!t("IS_INTEGER", f64::INFINITY));
        assert!(!t("IS_INTEGER", f64::NAN));
        for (literal, want) in [
            ("-9223372036854775808", true),
            ("9223372036854775807", true),
            ("18446744073709551615", false),
            ("1e300", false),
        ] {
            assert_eq!(call("IS_INTEGER", j(literal)), Value::Bool(want), "{literal}");
        }
    }

    #[test]
    fn datetime() {
        for (s, want) in [
            ("2024-12-12", true),
            ("2024-12-12Z", true),
            ("2024-12-12 20:21:25", true),
            ("2024-12-12T20:21:25Z", true),
            ("2024-12-12T20:21:25.123", true),
            ("2024-12-12 20:21:25.123Z", true),
            ("2024-12-12T20Z", false),
            ("2024-12-12 20:21:25.", false),
            ("2023-03-06T15:29:59.1234567Z", true),
            ("2023-03-06T15:29:59.12345678Z", false),
            ("2023-03-06X15:29:59", false),
            ("2023-03-06T15:29", false),
            ("2023-13-06", false),
            ("2023-02-29", false),
            ("2024-02-29", true),
            ("2023-03-06T24:00:00", false),
            ("2023-03-06T15:29:59+01:00", false),
            ("2023-3-6", false),
            ("20230306", false),
            ("", false),
            ("2023-03-06ZZ", false),
            ("2023-03-06T15:29:59ZZ", false),
            ("２０２３-03-06", false),
        ] {
            assert_eq!(call("IS_DATETIME", Value::from(s)), Value::Bool(want), "{s:?}");
        }
    }
}
