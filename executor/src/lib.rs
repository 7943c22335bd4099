//! The query executor (not yet built).
//!
//! It will evaluate expressions with Cosmos DB semantics (`cosmoql_value::ops` holds the comparison
//! and three-valued logic it builds on), run the per-partition operators over the store, and merge
//! partition results on the client side. See `docs/ARCHITECTURE.md`.
