//! The query planner (not yet built).
//!
//! It will turn a parsed [`cosmoql_parser::Query`] into plans: bind aliases, parameters and functions
//! (with spans in errors), build a logical plan, prune partitions from the `WHERE` clause, and split
//! the plan into a per-partition part and the client-side merge stages. See `docs/ARCHITECTURE.md`.
