//! Mathematical functions: ABS ... TRUNC, NumberBin, RAND and the 64-bit integer functions.
//!
//! Every number is an IEEE double; a non-number argument gives `undefined`. The `Int*` functions
//! take integral numbers that fit in an `i64` (anything else gives `undefined`), compute in 64-bit
//! two's complement (wrapping on overflow; shift counts taken modulo 64, right shifts arithmetic)
//! and return the result as a double.

use std::cell::Cell;
use std::collections::hash_map::RandomState;
use std::f64::consts::PI;
use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

use cosmoql_value::Value;

use super::body::{Builtin, FunctionContext};
use crate::error::FunctionError;

type Res = Result<Value, FunctionError>;

macro_rules! unary {
    ($name:literal, $f:expr) => {
        Builtin { name: $name, eval: |a, _| Ok(num1(&a[0], $f)) }
    };
}

macro_rules! int2 {
    ($name:literal, $f:expr) => {
        Builtin { name: $name, eval: |a, _| Ok(int_op(a, $f)) }
    };
}

pub(crate) const FUNCTIONS: &[Builtin] = &[
    unary!("ABS", f64::abs),
    unary!("ACOS", f64::acos),
    unary!("ASIN", f64::asin),
    unary!("ATAN", f64::atan),
    unary!("CEILING", f64::ceil),
    unary!("COS", f64::cos),
    unary!("COT", |x| 1.0 / x.tan()),
    unary!("DEGREES", |x| x * 180.0 / PI),
    unary!("EXP", f64::exp),
    unary!("FLOOR", f64::floor),
    unary!("LOG10", f64::log10),
    // x * PI / 180, left to right (the documented results depend on it).
    unary!("RADIANS", |x| x * PI / 180.0),
    // Half away from zero: ROUND(2.5) = 3, ROUND(-2.5) = -3.
    unary!("ROUND", f64::round),
    unary!("SIGN", sign),
    unary!("SIN", f64::sin),
    unary!("SQRT", f64::sqrt),
    unary!("SQUARE", |x| x * x),
    unary!("TAN", f64::tan),
    unary!("TRUNC", f64::trunc),
    // ATN2(a, b) = atan2(a, b), the CI-validated order: ATN2(35.175643, 129.44) = 0.265344532064832.
    Builtin { name: "ATN2", eval: |a, _| Ok(num2(a, f64::atan2)) },
    Builtin { name: "POWER", eval: |a, _| Ok(num2(a, f64::powf)) },
    Builtin { name: "LOG", eval: log },
    Builtin { name: "NumberBin", eval: number_bin },
    Builtin { name: "PI", eval: |_, _| Ok(Value::from(PI)) },
    Builtin { name: "RAND", eval: rand },
    int2!("IntAdd", i64::wrapping_add),
    int2!("IntSub", i64::wrapping_sub),
    int2!("IntMul", i64::wrapping_mul),
    int2!("IntDiv", |a, b| (b != 0).then(|| a.wrapping_div(b))),
    int2!("IntMod", |a, b| (b != 0).then(|| a.wrapping_rem(b))),
    int2!("IntBitAnd", |a, b| a & b),
    int2!("IntBitOr", |a, b| a | b),
    int2!("IntBitXor", |a, b| a ^ b),
    int2!("IntBitLeftShift", |a, b| a.wrapping_shl(b as u32)),
    int2!("IntBitRightShift", |a, b| a.wrapping_shr(b as u32)),
    Builtin { name: "IntBitNot", eval: |a, _| Ok(int_not(&a[0])) },
];

fn num1(v: &Value, f: fn(f64) -> f64) -> Value {
    v.as_f64().map_or(Value::Undefined, |x| Value::from(f(x)))
}

fn num2(args: &[Value], f: fn(f64, f64) -> f64) -> Value {
    match (args[0].as_f64(), args[1].as_f64()) {
        (Some(a), Some(b)) => Value::from(f(a, b)),
        _ => Value::Undefined,
    }
}

/// -1, 0 or 1 (NaN stays NaN).
fn sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else if x == 0.0 {
        0.0
    } else {
        x
    }
}

/// `LOG(x)` is the natural logarithm; `LOG(x, base)` is `log10(x) / log10(base)`, which gives the
/// documented `LOG(2, 10) = 0.3010299956639812` (`ln 2 / ln 10` is one unit in the last place
/// lower).
fn log(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let Some(x) = args[0].as_f64() else { return Ok(Value::Undefined) };
    Ok(match args.get(1) {
        None => Value::from(x.ln()),
        Some(base) => base.as_f64().map_or(Value::Undefined, |b| Value::from(x.log10() / b.log10())),
    })
}

/// `NumberBin(x [, size])`: `floor(x / size) * size`; size defaults to 1, and 0 gives undefined.
fn number_bin(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let Some(x) = args[0].as_f64() else { return Ok(Value::Undefined) };
    let size = match args.get(1) {
        None => 1.0,
        Some(v) => match v.as_f64() {
            Some(s) if s != 0.0 && s.is_finite() => s,
            _ => return Ok(Value::Undefined),
        },
    };
    Ok(Value::from((x / size).floor() * size))
}

thread_local! {
    static RAND_STATE: Cell<u64> = Cell::new(seed());
}

/// A random seed: std's `RandomState` keys are random per thread and per call.
fn seed() -> u64 {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(nanos);
    hasher.finish() | 1
}

/// `RAND()`: a pseudo-random number in `[0, 1)` (xorshift64*, 53 random bits).
fn rand(_: &[Value], _: &FunctionContext<'_>) -> Res {
    let bits = RAND_STATE.with(|state| {
        let mut x = state.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    });
    Ok(Value::from((bits >> 11) as f64 / (1u64 << 53) as f64))
}

/// An integral number that fits in an `i64`.
fn int_arg(v: &Value) -> Option<i64> {
    v.as_i64()
}

fn int_op<R: Into<Option<i64>>>(args: &[Value], f: fn(i64, i64) -> R) -> Value {
    match (int_arg(&args[0]), int_arg(&args[1])) {
        (Some(a), Some(b)) => f(a, b).into().map_or(Value::Undefined, Value::from),
        _ => Value::Undefined,
    }
}

fn int_not(v: &Value) -> Value {
    int_arg(v).map_or(Value::Undefined, |a| Value::from(!a))
}

#[cfg(test)]
mod tests {
    use cosmoql_value::{format_number, parse_json};

    use super::*;
    use crate::functions::test_support::call;

    fn n(x: f64) -> Value {
        Value::from(x)
    }

    /// Calls `name` on numbers and checks the result prints exactly as documented.
    fn check(name: &str, args: &[f64], expected: &str) {
        let args: Vec<Value> = args.iter().map(|&x| n(x)).collect();
        let got = call(name, &args);
        let printed = got.as_f64().map(format_number);
        assert_eq!(printed.as_deref(), Some(expected), "{name}{args:?} = {got:?}");
    }

    const U: Value = Value::Undefined;

    #[test]
    #[allow(clippy::approx_constant)] // the documented literals
    fn documented_values() {
        let cases: &[(&str, &[f64], &str)] = &[
            ("ABS", &[-1.0], "1"),
            ("ABS", &[0.0], "0"),
            ("ABS", &[1.0], "1"),
            ("ABS", &[-4.0], "4"),
            ("ACOS", &[-1.0], "3.141592653589793"),
            ("ASIN", &[-1.0], "-1.5707963267948966"),
            ("ATAN", &[-45.01], "-1.5485826962062663"),
            ("ATN2", &[35.175643, 129.44], "0.265344532064832"),
            ("CEILING", &[123.45], "124"),
            ("CEILING", &[-45.72], "-45"),
            ("CEILING", &[-123.45], "-123"),
            ("CEILING", &[0.0], "0"),
            ("COS", &[14.78], "-0.5994654261946543"),
            ("COT", &[124.1332], "-0.040311998371148884"),
            ("DEGREES", &[1.5707963267948966], "90"),
            ("DEGREES", &[3.141592653589793], "180"),
            ("DEGREES", &[4.71238898038469], "270"),
            ("DEGREES", &[6.283185307179586], "360"),
            ("DEGREES", &[PI / 2.0], "90"),
            ("EXP", &[0.0], "1"),
            ("EXP", &[10.0], "22026.465794806718"),
            ("EXP", &[20.0], "485165195.4097903"),
            ("FLOOR", &[62.6], "62"),
            ("FLOOR", &[-145.12], "-146"),
            ("FLOOR", &[0.2989], "0"),
            ("FLOOR", &[0.0], "0"),
            ("FLOOR", &[123.45], "123"),
            ("FLOOR", &[-123.45], "-124"),
            ("LOG", &[5.0], "1.6094379124341003"),
            ("LOG", &[2.0, 10.0], "0.3010299956639812"),
            ("LOG", &[10.0], "2.302585092994046"),
            ("LOG10", &[5.0], "0.6989700043360189"),
            ("LOG10", &[2.0], "0.3010299956639812"),
            ("LOG10", &[100.0], "2"),
            ("POWER", &[1.0, 1.0], "1"),
            ("POWER", &[2.0, 2.0], "4"),
            ("POWER", &[3.0, 3.0], "27"),
            ("POWER", &[4.0, 4.0], "256"),
            ("POWER", &[5.0, 5.0], "3125"),
            ("POWER", &[0.0, 2.0], "0"),
            ("POWER", &[2.0, 3.0], "8"),
            ("POWER", &[2.5, 3.0], "15.625"),
            ("RADIANS", &[90.0], "1.5707963267948966"),
            ("RADIANS", &[180.0], "3.141592653589793"),
            ("RADIANS", &[270.0], "4.71238898038469"),
            ("RADIANS", &[360.0], "6.283185307179586"),
            ("RADIANS", &[-45.01], "-0.7855726963226477"),
            ("RADIANS", &[-181.01], "-3.1592204790349356"),
            ("RADIANS", &[0.0], "0"),
            ("RADIANS", &[0.1472738], "0.002570412711923625"),
            ("RADIANS", &[197.1099392], "3.4402174274458375"),
            ("ROUND", &[2.4], "2"),
            ("ROUND", &[2.6], "3"),
            ("ROUND", &[2.5], "3"),
            ("ROUND", &[-2.4], "-2"),
            ("ROUND", &[-2.6], "-3"),
            ("ROUND", &[-2.5], "-3"),
            ("SIGN", &[-2.0], "-1"),
            ("SIGN", &[-1.0], "-1"),
            ("SIGN", &[0.0], "0"),
            ("SIGN", &[1.0], "1"),
            ("SIGN", &[2.0], "1"),
            ("SIN", &[45.175643], "0.929607286611012"),
            ("SQRT", &[0.0], "0"),
            ("SQRT", &[1.0], "1"),
            ("SQRT", &[2.0], "1.4142135623730951"),
            ("SQRT", &[3.0], "1.7320508075688772"),
            ("SQRT", &[4.0], "2"),
            ("SQRT", &[17.0], "4.123105625617661"),
            ("SQRT", &[25.0], "5"),
            ("SQUARE", &[0.0], "0"),
            ("SQUARE", &[1.0], "1"),
            ("SQUARE", &[2.0], "4"),
            ("SQUARE", &[3.0], "9"),
            ("TAN", &[PI / 2.0], "16331239353195370"),
            ("TAN", &[124.1332], "-24.80651023035602"),
            ("TRUNC", &[2.4], "2"),
            ("TRUNC", &[2.6], "2"),
            ("TRUNC", &[2.5], "2"),
            ("TRUNC", &[-2.4], "-2"),
            ("TRUNC", &[-2.6], "-2"),
            ("TRUNC", &[2.37], "2"),
            ("TRUNC", &[-2.78], "-2"),
            ("TRUNC", &[2.0], "2"),
            ("TRUNC", &[0.0000714], "0"),
            ("TRUNC", &[PI], "3"),
            ("PI", &[], "3.141592653589793"),
            ("NumberBin", &[37.752, -100.0], "100"),
            ("NumberBin", &[37.752, 10.0], "30"),
            ("NumberBin", &[37.752, 1.0], "37"),
            ("NumberBin", &[37.752], "37"),
            ("NumberBin", &[37.752, 0.1], "37.7"),
            ("NumberBin", &[37.752, 0.01], "37.75"),
            ("NumberBin", &[155.23478, 0.01], "155.23"),
        ];
        for (name, args, expected) in cases {
            check(name, args, expected);
        }
    }

    #[test]
    fn exp_log_round_trips() {
        let exp_log = |x: f64| call("EXP", &[call("LOG", &[n(x)])]);
        let log_exp = |x: f64| call("LOG", &[call("EXP", &[n(x)])]);
        assert_eq!(exp_log(20.0), n(19.999999999999996));
        assert_eq!(log_exp(20.0), n(20.0));
        assert_eq!(exp_log(10.0), n(10.000000000000002));
    }

    #[test]
    fn wrong_types_are_undefined() {
        for name in [
            "ABS",
            "ACOS",
            "ASIN",
            "ATAN",
            "CEILING",
            "COS",
            "COT",
            "DEGREES",
            "EXP",
            "FLOOR",
            "LOG",
            "LOG10",
            "RADIANS",
            "ROUND",
            "SIGN",
            "SIN",
            "SQRT",
            "SQUARE",
            "TAN",
            "TRUNC",
            "NumberBin",
            "IntBitNot",
        ] {
            for bad in [U, Value::Null, Value::from("1"), Value::Bool(true), Value::empty_array()] {
                assert_eq!(call(name, std::slice::from_ref(&bad)), U, "{name}({bad:?})");
            }
        }
        assert_eq!(call("POWER", &[Value::Null, n(3.0)]), U);
        assert_eq!(call("POWER", &[n(2.0), Value::Null]), U);
        assert_eq!(call("ATN2", &[n(1.0), U]), U);
        assert_eq!(call("LOG", &[n(2.0), Value::from("10")]), U);
        assert_eq!(call("NumberBin", &[n(37.752), n(0.0)]), U);
        assert_eq!(call("NumberBin", &[n(37.752), Value::Null]), U);
    }

    #[test]
    fn special_values() {
        assert!(call("SQRT", &[n(-1.0)]).as_f64().unwrap().is_nan());
        assert_eq!(call("LOG", &[n(0.0)]), n(f64::NEG_INFINITY));
        assert_eq!(call("ABS", &[n(-0.0)]), n(0.0));
        assert!(call("SIGN", &[n(f64::NAN)]).as_f64().unwrap().is_nan());
    }

    #[test]
    fn rand_is_in_unit_interval() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let x = call("RAND", &[]).as_f64().unwrap();
            assert!((0.0..1.0).contains(&x), "{x}");
            seen.insert(x.to_bits());
        }
        assert!(seen.len() > 990);
    }

    #[test]
    fn int_functions() {
        let int = |name: &str, a: f64, b: f64| call(name, &[n(a), n(b)]);
        assert_eq!(int("IntAdd", 20.0, 10.0), n(30.0));
        assert_eq!(int("IntAdd", 20.0, 0.0), n(20.0));
        assert_eq!(int("IntAdd", 20.0, 0.1), U);
        assert_eq!(int("IntBitAnd", 15.0, 25.0), n(9.0));
        assert_eq!(int("IntBitAnd", 15.0, 0.0), n(0.0));
        assert_eq!(int("IntBitAnd", 15.0, 15.0), n(15.0));
        assert_eq!(int("IntBitAnd", 15.0, 1.5), U);
        assert_eq!(int("IntBitLeftShift", 16.0, 4.0), n(256.0));
        assert_eq!(int("IntBitLeftShift", 16.0, 0.4), U);
        assert_eq!(call("IntBitNot", &[n(65.0)]), n(-66.0));
        assert_eq!(call("IntBitNot", &[n(0.0)]), n(-1.0));
        assert_eq!(call("IntBitNot", &[n(0.1)]), U);
        assert_eq!(int("IntBitOr", 56.0, 100.0), n(124.0));
        assert_eq!(int("IntBitOr", 56.0, 56.0), n(56.0));
        assert_eq!(int("IntBitOr", 56.0, 0.0), n(56.0));
        assert_eq!(int("IntBitOr", 56.0, 0.1), U);
        assert_eq!(int("IntBitRightShift", 16.0, 4.0), n(1.0));
        assert_eq!(int("IntBitRightShift", 16.0, 0.4), U);
        assert_eq!(int("IntBitRightShift", -16.0, 2.0), n(-4.0));
        assert_eq!(int("IntBitXor", 56.0, 100.0), n(92.0));
        assert_eq!(int("IntBitXor", 56.0, 56.0), n(0.0));
        assert_eq!(int("IntBitXor", 56.0, 0.0), n(56.0));
        assert_eq!(int("IntBitXor", 56.0, 0.1), U);
        assert_eq!(int("IntDiv", 10.0, 2.0), n(5.0));
        assert_eq!(int("IntDiv", 10.0, -2.0), n(-5.0));
        assert_eq!(int("IntDiv", -10.0, -2.0), n(5.0));
        assert_eq!(int("IntDiv", 10.0, 10.0), n(1.0));
        assert_eq!(int("IntDiv", 10.0, 0.0), U);
        assert_eq!(int("IntDiv", 10.0, 0.1), U);
        assert_eq!(int("IntDiv", 7.0, 2.0), n(3.0));
        assert_eq!(int("IntDiv", -7.0, 2.0), n(-3.0));
        assert_eq!(int("IntMod", 12.0, 5.0), n(2.0));
        assert_eq!(int("IntMod", 12.0, -5.0), n(2.0));
        assert_eq!(int("IntMod", -12.0, -5.0), n(-2.0));
        assert_eq!(int("IntMod", 15.0, 5.0), n(0.0));
        assert_eq!(int("IntMod", 12.0, 0.0), U);
        assert_eq!(int("IntMod", 12.0, 0.2), U);
        assert_eq!(int("IntMul", 5.0, 2.0), n(10.0));
        assert_eq!(int("IntMul", 5.0, -2.0), n(-10.0));
        assert_eq!(int("IntMul", -5.0, -2.0), n(10.0));
        assert_eq!(int("IntMul", 5.0, 5.0), n(25.0));
        assert_eq!(call("IntMul", &[n(5.0), int("IntMul", 5.0, 5.0)]), n(125.0));
        assert_eq!(int("IntMul", 5.0, 0.0), n(0.0));
        assert_eq!(int("IntMul", 5.0, 0.5), U);
        assert_eq!(int("IntSub", 25.0, 50.0), n(-25.0));
        assert_eq!(int("IntSub", 25.0, 15.0), n(10.0));
        assert_eq!(int("IntSub", 25.0, 25.0), n(0.0));
        assert_eq!(int("IntSub", 25.0, 0.0), n(25.0));
        assert_eq!(int("IntSub", 25.0, 2.5), U);
        // Out of the i64 range, non-numbers.
        assert_eq!(int("IntAdd", 1e19, 1.0), U);
        assert_eq!(call("IntAdd", &[n(1.0), Value::from("1")]), U);
        assert_eq!(call("IntAdd", &[U, n(1.0)]), U);
        // Wrapping.
        let max = parse_json("9223372036854775807").unwrap(); // rounds to 2^63: out of range
        assert_eq!(call("IntAdd", &[max, n(1.0)]), U);
        assert_eq!(int("IntMul", 4611686018427387904.0, 4.0), n(0.0));
    }
}
