//! The bodies of the system functions of the Cosmos DB for NoSQL query language.
//!
//! Their signatures (names, argument counts) are the planner's (`cosmoql_planner::functions`),
//! which the binder checks calls against; each module here lists its bodies in a `FUNCTIONS`
//! table by name, and [`body`] maps a [`FunctionId`] to one. A body takes its evaluated arguments
//! and returns a value; wrong types give `Undefined` as in Cosmos DB (type checks give `false`),
//! and only a few cases (a bad regular expression, ...) are errors.

use std::collections::HashMap;
use std::sync::OnceLock;

use cosmoql_planner::functions::SIGNATURES;
use cosmoql_planner::FunctionId;

mod array;
mod body;
mod datetime;
mod math;
mod other;
mod spatial;
mod string;
mod type_check;
mod vector;

pub(crate) use array::contains_in_set;
pub use body::{Body, Builtin, FunctionContext};
pub use cosmoql_planner::VectorPolicy;
pub(crate) use other::{phrase_count, relevance, tokens};

/// The most a function builds: bytes of a string ([`MAX_BUILT`]), elements of an array
/// ([`MAX_BUILT_ELEMENTS`]). Functions that make a value larger than their arguments (CONCAT,
/// REPLACE, StringJoin, ARRAY_CONCAT) check the size before they build it: nesting them doubles
/// a value at each level, and without a bound one statement asks for gigabytes.
pub const MAX_BUILT: usize = 16 << 20;

/// See [`MAX_BUILT`].
pub const MAX_BUILT_ELEMENTS: usize = 1 << 20;

/// The error of a function whose result would pass [`MAX_BUILT`] (the evaluator names the
/// function).
pub(crate) fn too_large(size: u128, what: &str) -> crate::error::FunctionError {
    let (unit, most) = if what == "an array" { ("elements", MAX_BUILT_ELEMENTS) } else { ("bytes", MAX_BUILT) };
    crate::error::FunctionError(format!(
        "the result would be {what} of {size} {unit}; a function builds at most {most} {unit}"
    ))
}

/// An array or object a function built, or the error if it stands for more than [`MAX_BUILT`]
/// bytes of JSON: its elements are shared, not copied, so few elements can stand for a lot.
pub(crate) fn bounded_json(v: cosmoql_value::Value) -> Result<cosmoql_value::Value, crate::error::FunctionError> {
    match v.json_len_within(MAX_BUILT) {
        Some(_) => Ok(v),
        None => Err(crate::error::FunctionError(format!(
            "the result would be more than {MAX_BUILT} bytes of JSON; a function builds at most {MAX_BUILT} bytes"
        ))),
    }
}

/// The current time in ticks, as the clock functions read it.
pub fn clock_ticks() -> i64 {
    datetime::now_ticks()
}

/// The bodies, a table per module.
const GROUPS: [&[Builtin]; 8] = [
    string::FUNCTIONS,
    math::FUNCTIONS,
    array::FUNCTIONS,
    type_check::FUNCTIONS,
    datetime::FUNCTIONS,
    spatial::FUNCTIONS,
    vector::FUNCTIONS,
    other::FUNCTIONS,
];

/// Every body, by the planner's [`FunctionId`]; `None` where a signature has none (a bug the
/// `every_signature_has_one_body` test catches).
fn bodies() -> &'static [Option<Body>] {
    static BODIES: OnceLock<Vec<Option<Body>>> = OnceLock::new();
    BODIES.get_or_init(|| {
        let mut by_name: HashMap<String, Body> = HashMap::new();
        for group in GROUPS {
            for b in group {
                by_name.insert(b.name.to_ascii_uppercase(), b.eval);
            }
        }
        SIGNATURES.iter().map(|s| by_name.get(&s.name.to_ascii_uppercase()).copied()).collect()
    })
}

/// The body of a scalar function.
pub fn body(id: FunctionId) -> Option<Body> {
    bodies().get(usize::from(id.0)).copied().flatten()
}

/// A function's signature and body, looked up by name (any case).
#[derive(Debug, Clone, Copy)]
pub struct Function {
    pub id: FunctionId,
    pub name: &'static str,
    pub min_args: usize,
    pub max_args: Option<usize>,
    pub eval: Body,
}

/// The scalar function called `name`, with its body.
pub fn lookup(name: &str) -> Option<Function> {
    let id = cosmoql_planner::functions::lookup(name)?;
    let s = id.signature();
    Some(Function { id, name: s.name, min_args: s.min_args, max_args: s.max_args, eval: body(id)? })
}

/// Helpers for the functions' unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    use cosmoql_value::{parse_json, Value};

    use super::{lookup, FunctionContext};

    /// A value from JSON text.
    pub(crate) fn j(s: &str) -> Value {
        parse_json(s).unwrap_or_else(|e| panic!("bad json {s}: {e}"))
    }

    /// Calls a function, checking its arity, and expects no error.
    pub(crate) fn call(name: &str, args: &[Value]) -> Value {
        let def = lookup(name).unwrap_or_else(|| panic!("no function {name}"));
        assert!(args.len() >= def.min_args, "{name}: too few args");
        assert!(def.max_args.is_none_or(|m| args.len() <= m), "{name}: too many args");
        (def.eval)(args, &FunctionContext::default()).unwrap_or_else(|e| panic!("{name}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every function, with every combination of up to three arguments from a pool of extreme
    /// and awkward values (of more arguments: the first three and the last three varied), returns (a value or an error) without panicking: no overflow (the
    /// test profile keeps overflow checks on), no out-of-range index, no huge allocation.
    #[test]
    fn every_function_survives_extreme_arguments() {
        let pool: Vec<Value> = [
            "0",
            "-0",
            "1",
            "-1",
            "0.5",
            "9007199254740993",
            "-9223372036854775808",
            "18446744073709551615",
            "1e308",
            "-1e308",
            "4294967296",
            "\"\"",
            "\"abc😀\"",
            "[1, 2, 3]",
            "{\"a\": 1}",
            "null",
            "true",
        ]
        .iter()
        .map(|j| cosmoql_value::parse_json(j).unwrap())
        .chain([Value::Undefined, Value::from(f64::INFINITY), Value::from(f64::NEG_INFINITY), Value::from(f64::NAN)])
        .collect();
        let context = FunctionContext::default();
        for (i, signature) in SIGNATURES.iter().enumerate() {
            let Some(body) = body(FunctionId(i as u16)) else { continue };
            let max = signature.max_args.unwrap_or(signature.min_args + 1).min(3);
            for n in signature.min_args..=max.max(signature.min_args) {
                // Every combination over three positions at most: the first three, and for a
                // function of more arguments also the last three (the others hold the pool's
                // first value).
                let windows = if n > 3 { vec![(0, 3), (n - 3, n)] } else { vec![(0, n)] };
                for (start, end) in windows {
                    let mut index = vec![0usize; n];
                    loop {
                        let args: Vec<Value> = index.iter().map(|&k| pool[k].clone()).collect();
                        let _ = body(&args, &context);
                        // The next combination, odometer style, over the window.
                        let mut d = start;
                        while d < end {
                            index[d] += 1;
                            if index[d] < pool.len() {
                                break;
                            }
                            index[d] = 0;
                            d += 1;
                        }
                        if d == end {
                            break;
                        }
                    }
                }
            }
        }
    }
    use cosmoql_planner::functions::FunctionKind;
    use cosmoql_value::Value;

    #[test]
    fn every_signature_has_one_body_and_every_body_a_signature() {
        let scalar = |s: &&cosmoql_planner::Signature| matches!(s.kind, FunctionKind::Scalar | FunctionKind::PerQuery);
        for (i, s) in SIGNATURES.iter().enumerate() {
            let has = body(FunctionId(i as u16)).is_some();
            assert_eq!(has, scalar(&s), "{}: a body exactly when it is a scalar function", s.name);
        }
        let mut names = std::collections::HashSet::new();
        for group in GROUPS {
            for b in group {
                assert!(names.insert(b.name.to_ascii_uppercase()), "{} has two bodies", b.name);
                let id =
                    cosmoql_planner::functions::lookup(b.name).unwrap_or_else(|| panic!("{} has no signature", b.name));
                assert_eq!(id.name(), b.name, "spelled as the signature");
            }
        }
    }
}
