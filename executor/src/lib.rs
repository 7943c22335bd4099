//! The query executor: expression evaluation with Cosmos DB semantics, system functions, and the
//! operators that run a query over a container's items.

pub mod error;
pub mod functions;

pub use error::{FunctionError, QueryError, QueryErrorKind};
