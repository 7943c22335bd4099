//! The partitioned document store.
//!
//! Containers with a partition key definition, effective partition key (EPK) hashing, physical
//! partitions that own EPK ranges and split as they grow, logical partitions inside them, item
//! operations with Cosmos DB status codes, transactional batches, import and export.
//! See `docs/ARCHITECTURE.md`.

pub mod doc;
pub mod epk;
mod murmur3;
