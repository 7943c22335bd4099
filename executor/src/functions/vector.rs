//! `VectorDistance`: the similarity score between two vectors.
//!
//! `VectorDistance(v1, v2 [, bruteForce [, {distanceFunction, dataType, searchListSizeMultiplier,
//! ...}]])`. The distance function and data type come from the options object when it names them,
//! else from the container's vector embedding policy for the first argument's path
//! ([`FunctionContext::vector_policy`]), else `cosine` / `float32`:
//!
//! * `cosine`: cosine similarity, from -1 to 1, higher is more similar;
//! * `dotproduct`: the dot product, higher is more similar;
//! * `euclidean`: the Euclidean (L2) distance, lower is more similar.
//!
//! Both vectors must be non-empty arrays of numbers of the same length, otherwise the result is
//! `undefined` (as is a cosine with a zero vector). With `float32` / `float16` data the elements
//! are first rounded to single precision (as the service stores them; `float16` is approximated
//! by `f32`), with `int8` / `uint8` they must be integers in range. This engine always computes
//! exactly (brute force), so `bruteForce` and the index tuning options only get their types
//! checked. A malformed options argument is an error.

use cosmoql_value::Value;

use super::body::{Builtin, FunctionContext};
use crate::error::FunctionError;

pub(crate) const FUNCTIONS: &[Builtin] = &[
    Builtin { name: "VectorDistance", eval: vector_distance },
    // What the service's hybrid search plans call a component's VectorDistance.
    Builtin { name: "_VectorScore", eval: vector_distance },
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Distance {
    Cosine,
    DotProduct,
    Euclidean,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DataType {
    Float32,
    Float16,
    Int8,
    Uint8,
}

fn parse_distance(s: &str) -> Option<Distance> {
    match s.to_ascii_lowercase().as_str() {
        "cosine" => Some(Distance::Cosine),
        "dotproduct" => Some(Distance::DotProduct),
        "euclidean" => Some(Distance::Euclidean),
        _ => None,
    }
}

fn parse_data_type(s: &str) -> Option<DataType> {
    match s.to_ascii_lowercase().as_str() {
        "float32" => Some(DataType::Float32),
        "float16" => Some(DataType::Float16),
        "int8" => Some(DataType::Int8),
        "uint8" => Some(DataType::Uint8),
        _ => None,
    }
}

fn err(message: impl Into<String>) -> FunctionError {
    FunctionError(message.into())
}

fn vector_distance(args: &[Value], ctx: &FunctionContext<'_>) -> Result<Value, FunctionError> {
    if let Some(b) = args.get(2) {
        if !b.is_bool() {
            return Err(err("the third argument (bruteForce) must be a boolean"));
        }
    }
    let mut distance = None;
    let mut data_type = None;
    if let Some(options) = args.get(3) {
        let Some(map) = options.as_object() else {
            return Err(err("the fourth argument must be an object of options"));
        };
        for (key, value) in map {
            match key.as_str() {
                "distanceFunction" => {
                    distance = Some(
                        value
                            .as_str()
                            .and_then(parse_distance)
                            .ok_or_else(|| err("distanceFunction must be 'cosine', 'dotproduct' or 'euclidean'"))?,
                    );
                }
                "dataType" => {
                    data_type = Some(
                        value
                            .as_str()
                            .and_then(parse_data_type)
                            .ok_or_else(|| err("dataType must be 'float32', 'float16', 'int8' or 'uint8'"))?,
                    );
                }
                "searchListSizeMultiplier" | "quantizedVectorListMultiplier" | "filterPriority"
                    if !value.is_number() =>
                {
                    return Err(err(format!("{key} must be a number")));
                }
                _ => {}
            }
        }
    }
    let policy = ctx.vector_policy.as_ref();
    let distance =
        distance.or_else(|| policy.and_then(|p| parse_distance(&p.distance_function))).unwrap_or(Distance::Cosine);
    let data_type =
        data_type.or_else(|| policy.and_then(|p| parse_data_type(&p.data_type))).unwrap_or(DataType::Float32);

    let (Some(a), Some(b)) = (elements(&args[0], data_type), elements(&args[1], data_type)) else {
        return Ok(Value::Undefined);
    };
    if a.is_empty() || a.len() != b.len() {
        return Ok(Value::Undefined);
    }
    let score = match distance {
        Distance::DotProduct => dot(&a, &b),
        Distance::Euclidean => a.iter().zip(&b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>().sqrt(),
        Distance::Cosine => {
            let norms = (dot(&a, &a) * dot(&b, &b)).sqrt();
            if norms == 0.0 {
                return Ok(Value::Undefined);
            }
            dot(&a, &b) / norms
        }
    };
    Ok(if score.is_finite() { Value::from(score) } else { Value::Undefined })
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The elements of a numeric array, as the data type stores them.
fn elements(v: &Value, data_type: DataType) -> Option<Vec<f64>> {
    v.as_array()?
        .iter()
        .map(|e| {
            let x = e.as_f64().filter(|x| x.is_finite())?;
            match data_type {
                DataType::Float32 | DataType::Float16 => Some(f64::from(x as f32)),
                DataType::Int8 => (x.fract() == 0.0 && (-128.0..=127.0).contains(&x)).then_some(x),
                DataType::Uint8 => (x.fract() == 0.0 && (0.0..=255.0).contains(&x)).then_some(x),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use cosmoql_value::parse_json;

    use super::*;
    use crate::functions::{lookup, VectorPolicy};

    fn call_with(args: &[Value], ctx: &FunctionContext<'_>) -> Result<Value, FunctionError> {
        let def = lookup("VectorDistance").expect("registered");
        assert!(args.len() >= def.min_args && def.max_args.is_none_or(|m| args.len() <= m));
        (def.eval)(args, ctx)
    }

    fn call(args: &[Value]) -> Value {
        call_with(args, &FunctionContext::default()).expect("no error")
    }

    fn vec_of(xs: &[f64]) -> Value {
        Value::array(xs.iter().copied())
    }

    fn options(distance: &str) -> Value {
        Value::object([("distanceFunction", Value::from(distance))])
    }

    /// A context with a leaked policy (tests only), so it can be returned by value.
    fn policy(distance: &str, data_type: &str) -> FunctionContext<'static> {
        let policy = Box::leak(Box::new(VectorPolicy {
            path: "/embedding".into(),
            data_type: data_type.into(),
            distance_function: distance.into(),
            dimensions: None,
        }));
        FunctionContext { vector_policy: Some(policy), query_ticks: None }
    }

    #[track_caller]
    fn close(v: Value, expected: f64) {
        let x = v.as_f64().unwrap_or_else(|| panic!("not a number: {v:?}"));
        assert!((x - expected).abs() < 1e-9, "{x} != {expected}");
    }

    #[test]
    fn distance_functions() {
        let (a, b) = (vec_of(&[1.0, 2.0, 3.0]), vec_of(&[4.0, 5.0, 6.0]));
        // Cosine is the default.
        close(call(&[a.clone(), b.clone()]), 32.0 / (14.0f64.sqrt() * 77.0f64.sqrt()));
        close(call(&[a.clone(), b.clone(), Value::Bool(false), options("cosine")]), 32.0 / (14.0f64 * 77.0).sqrt());
        close(call(&[a.clone(), b.clone(), Value::Bool(true), options("dotproduct")]), 32.0);
        close(call(&[a.clone(), b.clone(), Value::Bool(false), options("euclidean")]), 27.0f64.sqrt());
        close(call(&[a.clone(), a.clone()]), 1.0);
        close(call(&[vec_of(&[1.0, 0.0]), vec_of(&[-1.0, 0.0])]), -1.0);
        close(call(&[vec_of(&[1.0, 0.0]), vec_of(&[0.0, 1.0])]), 0.0);
        close(call(&[a.clone(), a.clone(), Value::Bool(false), options("Euclidean")]), 0.0);
    }

    #[test]
    fn policy_and_options_precedence() {
        let (a, b) = (vec_of(&[1.0, 2.0]), vec_of(&[3.0, 4.0]));
        let ctx = policy("dotproduct", "float32");
        close(call_with(&[a.clone(), b.clone()], &ctx).expect("ok"), 11.0);
        // The options object wins over the container policy.
        close(
            call_with(&[a.clone(), b.clone(), Value::Bool(false), options("euclidean")], &ctx).expect("ok"),
            8.0f64.sqrt(),
        );
        // Options without distanceFunction keep the policy's.
        let other = Value::object([("searchListSizeMultiplier", Value::from(10))]);
        close(call_with(&[a.clone(), b.clone(), Value::Bool(false), other], &ctx).expect("ok"), 11.0);
        close(call_with(&[a, b], &policy("euclidean", "int8")).expect("ok"), 8.0f64.sqrt());
    }

    #[test]
    fn data_types() {
        let opts =
            |dt: &str| Value::object([("distanceFunction", Value::from("dotproduct")), ("dataType", Value::from(dt))]);
        close(call(&[vec_of(&[1.0, 2.0]), vec_of(&[3.0, 4.0]), Value::Bool(false), opts("uint8")]), 11.0);
        assert!(call(&[vec_of(&[1.5, 2.0]), vec_of(&[3.0, 4.0]), Value::Bool(false), opts("int8")]).is_undefined());
        assert!(call(&[vec_of(&[-1.0, 2.0]), vec_of(&[3.0, 4.0]), Value::Bool(false), opts("uint8")]).is_undefined());
        assert!(call(&[vec_of(&[200.0]), vec_of(&[3.0]), Value::Bool(false), opts("int8")]).is_undefined());
        // float32 rounds the elements to single precision.
        let x = call(&[vec_of(&[0.1]), vec_of(&[1.0]), Value::Bool(false), opts("float32")]);
        assert_eq!(x.as_f64(), Some(f64::from(0.1f32)));
    }

    #[test]
    fn invalid_vectors_are_undefined() {
        let a = vec_of(&[1.0, 2.0]);
        for other in [
            vec_of(&[1.0]),
            vec_of(&[]),
            Value::array([Value::from(1.0), Value::from("2")]),
            Value::array([Value::from(1.0), Value::Null]),
            Value::from("[1, 2]"),
            Value::Null,
            Value::Undefined,
            Value::object([("0", 1.0)]),
        ] {
            assert!(call(&[a.clone(), other.clone()]).is_undefined(), "{other:?}");
            assert!(call(&[other.clone(), a.clone()]).is_undefined(), "{other:?}");
        }
        assert!(call(&[vec_of(&[]), vec_of(&[])]).is_undefined());
        assert!(call(&[vec_of(&[0.0, 0.0]), a.clone()]).is_undefined(), "cosine of a zero vector");
        close(call(&[vec_of(&[0.0, 0.0]), a.clone(), Value::Bool(false), options("dotproduct")]), 0.0);
    }

    #[test]
    fn malformed_options_are_errors() {
        let a = vec_of(&[1.0, 2.0]);
        let ctx = FunctionContext::default();
        assert!(call_with(&[a.clone(), a.clone(), Value::from(1)], &ctx).is_err());
        assert!(call_with(&[a.clone(), a.clone(), Value::Bool(true), Value::from("cosine")], &ctx).is_err());
        assert!(call_with(&[a.clone(), a.clone(), Value::Bool(true), options("manhattan")], &ctx).is_err());
        let bad_type = Value::object([("dataType", Value::from("float64"))]);
        assert!(call_with(&[a.clone(), a.clone(), Value::Bool(true), bad_type], &ctx).is_err());
        let bad_mult = Value::object([("searchListSizeMultiplier", Value::from("10"))]);
        assert!(call_with(&[a.clone(), a, Value::Bool(true), bad_mult], &ctx).is_err());
    }

    fn load(name: &str) -> Value {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/vector").join(name);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        parse_json(&text).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()))
    }

    /// The recorded service scores of the engine baselines: the container's policy gives the
    /// distance function, and the top 6 by score (in the policy's order) match text and score.
    #[test]
    fn engine_baselines() {
        let docs = load("vectorTestData.json");
        let docs = docs.as_array().expect("an array of items");
        for case in ["vector_diskann_dotproduct.json", "vector_flat_euclidean.json", "vector_quantized_cosine.json"] {
            let case = load(case);
            let entry = case["container"]["vectorEmbeddingPolicy"]["vectorEmbeddings"].index(0);
            let ctx = policy(
                entry["distanceFunction"].as_str().expect("distanceFunction"),
                entry["dataType"].as_str().expect("dataType"),
            );
            let search = case["parameters"].index(0)["value"].clone();
            let tolerance = case["float_tolerance"].as_f64().expect("float_tolerance");
            let mut scored: Vec<(f64, &str)> = docs
                .iter()
                .map(|d| {
                    let score = call_with(&[d["embedding"].clone(), search.clone()], &ctx).expect("ok");
                    (score.as_f64().expect("a score"), d["text"].as_str().expect("text"))
                })
                .collect();
            let descending = entry["distanceFunction"].as_str() != Some("euclidean");
            scored.sort_by(|x, y| if descending { y.0.total_cmp(&x.0) } else { x.0.total_cmp(&y.0) });
            let expected = case["expected"].as_array().expect("expected rows");
            assert_eq!(expected.len(), 6);
            for (row, (score, text)) in expected.iter().zip(&scored) {
                assert_eq!(row["text"].as_str(), Some(*text));
                let want = row["SimilarityScore"].as_f64().expect("score");
                assert!((score - want).abs() <= tolerance, "{text}: {score} vs {want}");
                assert!((score - want).abs() <= 1e-7, "{text}: {score} vs {want} (tighter than the case asks)");
            }
        }
    }
}
