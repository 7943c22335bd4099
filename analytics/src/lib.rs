//! The analytical store: a columnar mirror of a container on Arrow, with the schema Azure Cosmos
//! DB's analytical store infers, and standard SQL over it through DataFusion (issue 25). The only
//! crate of the workspace on DataFusion: above the storage engine, never imported by the query
//! crates.
//!
//! * [`schema`]: the schema inference, as the service documents it
//!   (`docs/design/analytical-store-research.md`, section 1).
//! * [`columns`]: the schema as Arrow types, items as Arrow columns.
//! * [`mirror`]: a container's mirror, a partition a physical partition, synced from the change
//!   feed, read as snapshots.
//! * [`table`]: a snapshot as a DataFusion table that reads only the partitions a key filter
//!   pins.
//! * [`session`]: the SQL session over every container with an analytical store.
//! * [`values`]: results as cosmoql values.
//! * [`view`]: one way to read values and stored documents alike.
//! * [`route`]: Cosmos SQL aggregates the mirror answers exactly, routed to it.
//! * [`parquet`]: the mirror as Parquet files, one a physical partition, in a hive layout.
//! * `persist`: a durable database's mirrors on disk between processes.
//! * `threads`: work shared over the cores (the mirror's sync and build).

pub mod columns;
pub mod mirror;
pub mod parquet;
mod persist;
pub mod route;
pub mod schema;
pub mod session;
pub mod table;
mod threads;
pub mod values;
pub mod view;

pub use mirror::{Mirror, Snapshot, SyncReport};
pub use route::AnalyticalRoute;
pub use schema::{ColumnType, Dropped, Field, ObjectSchema, Observed, Schema, SchemaMode, MAX_NESTING, MAX_PROPERTIES};
pub use session::{Analytics, AnalyticsError, IntervalSync, SyncPolicy, Synced};
