//! The analytical store: a columnar mirror of a container, with the schema Azure Cosmos DB's
//! analytical store infers, for standard SQL over it (issue 25).
//!
//! Built so far: the schema inference ([`schema`]), as the service documents it
//! (`docs/design/analytical-store-research.md`, section 1). The mirror on Arrow, DataFusion over
//! it and Parquet out come next; this crate is the only one that will depend on them, above the
//! storage engine and never imported by the query crates.

pub mod schema;

pub use schema::{ColumnType, Dropped, Field, ObjectSchema, Observed, Schema, SchemaMode, MAX_NESTING, MAX_PROPERTIES};
