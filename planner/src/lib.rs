//! The query planner: which partitions a query can touch.
//!
//! [`prune`] reads the WHERE clause of a parsed query (equalities and `IN` on the partition key
//! paths, `OR` of them, `AND` with other predicates, parameters, hierarchical key prefixes and
//! synthetic keys) and returns the partition keys or EPK ranges that can hold matching items, with
//! a one-line reason for EXPLAIN. The executor turns the targets into one producer per physical
//! partition they overlap (see `docs/ARCHITECTURE.md`).

pub mod prune;

pub use prune::{prune, Pruning, Targets, MAX_KEYS};
