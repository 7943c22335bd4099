//! What a container is, apart from its data: the metadata the planner plans with and the storage
//! engine stores by.
//!
//! - Partition key definitions (one path, hierarchical, synthetic) and key values
//!   (`partition_key.rs`), hashed to effective partition keys, EPKs (`epk.rs`, over `murmur3.rs`).
//! - Indexing policies and the paths they index (`indexing.rs`).
//! - Index keys (`index_key.rs`) and the probes a query asks of the indexes (`probe.rs`).
//! - Resource ids (`_rid`) in the layout the SDKs parse (`rid.rs`).
//! - The service's item size limit.
//!
//! Both `planner` and `storage` depend on this crate; it depends only on `value`, so the planner
//! knows a container's shape without knowing the engine that stores it. See `docs/ARCHITECTURE.md`.

pub mod epk;
pub mod error;
pub mod index_key;
pub mod indexing;
mod murmur3;
mod padded;
pub mod partition_key;
pub mod probe;
pub mod rid;

pub use epk::{Epk, HashVersion, PartitionKeyComponent, PartitionKeyKind};
pub use error::CatalogError;
pub use index_key::IndexKey;
pub use indexing::{CompositePath, IndexPath, IndexStep, IndexingMode, IndexingPolicy};
pub use partition_key::{DocView, PartitionKey, PartitionKeyDefinition, PartitionKeyPath, SyntheticKey, SyntheticKind};
pub use probe::{IndexProbe, SpatialBox, StringTest};
pub use rid::Rid;

/// Cosmos DB's item size limit (2 MB of JSON).
pub const MAX_ITEM_BYTES: usize = 2 * 1024 * 1024;
