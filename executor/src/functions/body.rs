//! What a function body is, and what it may read besides its arguments.

use cosmoql_planner::VectorPolicy;
use cosmoql_value::Value;

use crate::error::FunctionError;

/// What a function may need besides its arguments.
#[derive(Debug, Clone, Copy, Default)]
pub struct FunctionContext<'a> {
    /// For `VectorDistance`: the container's vector embedding policy entry for the path of its
    /// first argument, if the container has one (`distanceFunction`, `dataType`, `dimensions`).
    pub vector_policy: Option<&'a VectorPolicy>,
    /// When the query started, in ticks (100 ns since 0001-01-01): the one value the `*Static`
    /// clock functions give for the whole query. `None`: read the clock.
    pub query_ticks: Option<i64>,
}

/// A function body: evaluated arguments in (their count checked by the binder), a value out.
pub type Body = fn(&[Value], &FunctionContext<'_>) -> Result<Value, FunctionError>;

/// A function body with the name of the signature it implements.
#[derive(Debug)]
pub struct Builtin {
    pub name: &'static str,
    pub eval: Body,
}
