//! The query executor: expression evaluation with Cosmos DB semantics, system functions, and the
//! operators that run a query over a container's items.

pub mod error;
pub mod eval;
pub mod functions;
pub mod query;
pub mod run;

pub use error::{FunctionError, QueryError, QueryErrorKind};
pub use eval::ItemContext;
pub use functions::VectorPolicy;
pub use query::{compile, CompileOptions, CompiledQuery, RunStats, Runner};
pub use run::{execute, execute_all, explain, PartitionMetrics, QueryMetrics, QueryOptions, QueryOutput};
