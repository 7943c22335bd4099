//! The system functions of the Cosmos DB for NoSQL query language.
//!
//! Each module lists its functions in a `FUNCTIONS` table; [`lookup`] finds one by name, case-
//! insensitively. A function takes its evaluated arguments and returns a value; wrong types give
//! `Undefined` as in Cosmos DB (type checks give `false`), and only a few cases (a bad regular
//! expression, ...) are errors.

use std::collections::HashMap;
use std::sync::OnceLock;

use cosmoql_value::Value;

use crate::error::FunctionError;

mod array;
mod datetime;
mod math;
mod other;
mod spatial;
mod string;
mod type_check;
mod vector;

/// What a function may need besides its arguments.
#[derive(Debug, Clone, Default)]
pub struct FunctionContext {
    /// For `VectorDistance`: the container's vector embedding policy entry for the path of its
    /// first argument, if the container has one (`distanceFunction`, `dataType`, `dimensions`).
    pub vector_policy: Option<VectorPolicy>,
}

/// One entry of a container's `vectorEmbeddingPolicy.vectorEmbeddings`.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorPolicy {
    /// `/embedding`
    pub path: String,
    /// `float32`, `int8`, `uint8`, `float16`
    pub data_type: String,
    /// `cosine`, `dotproduct`, `euclidean`
    pub distance_function: String,
    pub dimensions: Option<usize>,
}

impl VectorPolicy {
    /// The `vectorEmbeddingPolicy.vectorEmbeddings` of container properties in Cosmos DB's JSON
    /// form (missing fields: `float32`, `cosine`).
    pub fn from_container_properties(properties: &Value) -> Vec<VectorPolicy> {
        let Some(list) = properties.get("vectorEmbeddingPolicy").get("vectorEmbeddings").as_array() else {
            return vec![];
        };
        list.iter()
            .filter_map(|v| {
                Some(VectorPolicy {
                    path: v.get("path").as_str()?.to_string(),
                    data_type: v.get("dataType").as_str().unwrap_or("float32").to_string(),
                    distance_function: v.get("distanceFunction").as_str().unwrap_or("cosine").to_string(),
                    dimensions: v.get("dimensions").as_f64().map(|d| d as usize),
                })
            })
            .collect()
    }
}

/// A function body.
pub type Builtin = fn(&[Value], &FunctionContext) -> Result<Value, FunctionError>;

/// A system function: its name as documented, how many arguments it takes, and its body.
#[derive(Debug)]
pub struct FunctionDef {
    pub name: &'static str,
    pub min_args: usize,
    /// `None`: any number from `min_args` up.
    pub max_args: Option<usize>,
    pub eval: Builtin,
}

fn table() -> &'static HashMap<String, &'static FunctionDef> {
    static TABLE: OnceLock<HashMap<String, &'static FunctionDef>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut map = HashMap::new();
        for group in [
            string::FUNCTIONS,
            math::FUNCTIONS,
            array::FUNCTIONS,
            type_check::FUNCTIONS,
            datetime::FUNCTIONS,
            spatial::FUNCTIONS,
            vector::FUNCTIONS,
            other::FUNCTIONS,
        ] {
            for def in group {
                map.insert(def.name.to_ascii_uppercase(), def);
            }
        }
        map
    })
}

/// The function called `name` (any case), if there is one.
pub fn lookup(name: &str) -> Option<&'static FunctionDef> {
    table().get(&name.to_ascii_uppercase()).copied()
}

/// Every function's documented name, sorted.
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<_> = table().values().map(|d| d.name).collect();
    names.sort_unstable();
    names
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

    /// Calls a registered function, checking its arity, and expects no error.
    pub(crate) fn call(name: &str, args: &[Value]) -> Value {
        let def = lookup(name).unwrap_or_else(|| panic!("no function {name}"));
        assert!(args.len() >= def.min_args, "{name}: too few args");
        assert!(def.max_args.is_none_or(|m| args.len() <= m), "{name}: too many args");
        (def.eval)(args, &FunctionContext::default()).unwrap_or_else(|e| panic!("{name}: {e}"))
    }
}
