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

pub use body::{Body, Builtin, FunctionContext};
pub use cosmoql_planner::VectorPolicy;

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
    use cosmoql_planner::functions::FunctionKind;

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
