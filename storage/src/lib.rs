//! The partitioned document store.
//!
//! Containers with a partition key definition, effective partition key (EPK) hashing, physical
//! partitions that own EPK ranges and split as they grow, logical partitions inside them, item
//! operations with Cosmos DB status codes, transactional batches, import and export.
//! See `docs/ARCHITECTURE.md`.

pub mod advisor;
pub mod changefeed;
pub mod clock;
mod codec;
pub mod container;
pub mod doc;
pub mod durable;
pub mod error;
mod faults;
pub mod import;
pub mod index;
pub mod item;
pub mod patch;
pub mod store;
pub mod throughput;
pub mod wal;

pub use throughput::cost;

pub use advisor::skew::{self, KeySize, PartitionSkew, SkewReport, Spread};
pub use advisor::{advise, advise_container, Advisor, AdvisorOptions, Candidate, KeyChoice};
pub use changefeed::{ChangeFeedStart, ChangePage, FeedRange, HistoryPage};
pub use container::{
    BatchError, BatchOperation, Change, ChangeOperation, CompositeWalk, Container, ContainerSettings, IndexBounds,
    IndexServing, ItemMeta, ItemNames, ItemPosition, ItemResponse, OperationKind, OrderedEntries, OrderedWalk,
    PartitionDelta, PartitionInfo, RangeItems, Scan, Script, ScriptKind, StoredItem, TriggerOperation, TriggerType,
    UniqueKey, WholeItem, WriteOptions, KEPT_PROPERTIES, MAX_INITIAL_PARTITIONS,
};
pub use doc::{Doc, DocPart, DocRef, Shape, SYSTEM_PROPERTIES};
pub use durable::{DurableOptions, Recovery};
pub use error::{ErrorKind, StorageError};
#[cfg(feature = "fault-injection")]
pub use faults::Faults;
pub use import::{ImportError, ImportOptions, ImportSummary};
pub use index::{entry_order, tie_order, IndexStats, IndexWork, PartitionIndex};
pub use patch::PatchOperation;
pub use store::{Database, Store};
pub use throughput::{
    Clock, KeyUsage, ManualClock, PartitionUsage, Provisioned, RequestKind, RetryOptions, SystemClock, Throttle,
};
pub use wal::{SyncMode, PREALLOCATE};

// The container metadata this engine stores by, from the catalog crate (the planner's too).
pub use cosmoql_catalog::{
    CatalogError, CompositePath, DocView, Epk, HashVersion, IndexKey, IndexPath, IndexProbe, IndexStep, IndexingMode,
    IndexingPolicy, PartitionKey, PartitionKeyComponent, PartitionKeyDefinition, PartitionKeyKind, PartitionKeyPath,
    SpatialBox, StringTest, SyntheticKey, SyntheticKind, MAX_ITEM_BYTES,
};
