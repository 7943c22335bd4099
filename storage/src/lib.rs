//! The partitioned document store (not yet built).
//!
//! It will hold containers, partition key definitions, effective partition key hashing, physical
//! partitions that own EPK ranges and split as they grow, item operations, batches and persistence.
//! See `docs/ARCHITECTURE.md`.
