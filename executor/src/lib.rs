//! The query executor: runs a planner's [`Plan`](cosmoql_planner::Plan) over a [`QuerySource`].
//!
//! | file | holds |
//! | --- | --- |
//! | `execute.rs` | the entry points: [`execute_plan`], [`execute`], [`explain`]; output, metrics |
//! | `options.rs` | [`QueryOptions`], what one request asks for |
//! | `plan_cache.rs` | planning a request ([`plan_query`]) and the plan cache |
//! | `coordinator.rs` | producers per physical partition on MaxDegreeOfParallelism threads, bounded buffers, the merges |
//! | `operators.rs` | the operators of one input: FROM/JOIN expansion, WHERE, projection, sort, groups |
//! | `emitter.rs` | where results go: the [`Emitter`](emitter::Emitter) (DISTINCT, OFFSET, LIMIT, a page's charge and resume point) |
//! | `output.rs` | [`Output`], one result: a value, or a stored item returned whole (written as JSON from its bytes) |
//! | `held.rs` | results held between pages for the shapes that cannot resume from a position (DISTINCT, GROUP BY, aggregates, ranking) |
//! | `merge.rs` | ORDER BY: the bounded top-k sort buffer and the streaming k-way merge |
//! | `key_merge.rs` | OFFSET and TOP merged on index keys alone, where every item is a result |
//! | `aggregate.rs` | accumulators (COUNT, COUNTIF, SUM, AVG, MIN, MAX, MAKELIST, MAKESET) and groups |
//! | `rank.rs` | ORDER BY RANK scores: BM25, vector similarity, RRF |
//! | `eval.rs` | evaluating bound expressions on a row |
//! | `functions/` | the bodies of the system functions |
//! | `continuation.rs` | the continuation token format |
//! | `memory.rs` | the memory budget of the operators that hold rows |
//! | `source.rs` | [`QuerySource`], what a query reads from storage |
//! | `row.rs` | rows and scan positions |

pub mod aggregate;
pub mod continuation;
pub mod coordinator;
/// Request charges (`cosmoql_storage::cost`, the home of request units beside the budgets).
pub use cosmoql_storage::cost;
pub mod emitter;
pub mod error;
pub mod eval;
pub mod execute;
pub mod functions;
pub mod held;
pub mod key_merge;
pub mod memory;
pub mod merge;
pub mod operators;
pub mod options;
pub mod output;
pub mod plan_cache;
pub mod rank;
pub mod row;
pub mod source;

pub use coordinator::PartitionMetrics;
pub use cosmoql_planner::VectorPolicy;
pub use error::{FunctionError, QueryError, QueryErrorKind};
pub use eval::UdfHost;
pub use execute::{
    execute, execute_plan, execute_plan_output, execute_plan_streaming, explain, explain_plan, Analysis, Explain,
    QueryMetrics, QueryOutput,
};
pub use memory::DEFAULT_MEMORY_BUDGET;
pub use options::QueryOptions;
pub use output::Output;
pub use plan_cache::{cached_plan, plan_query, timed_plan};
pub use source::{PartitionRange, QuerySource};
