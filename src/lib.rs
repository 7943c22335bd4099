//! cosmoql: Azure Cosmos DB for NoSQL-style SQL over a partitioned JSON document store, embedded in
//! your Rust program.
//!
//! The client ([`CosmosClient`], [`DatabaseClient`], [`ContainerClient`]) is named after the
//! `azure_data_cosmos` SDK: typed item operations, transactional batches, and queries returning a
//! stream of pages with continuation tokens.
//!
//! ```
//! use cosmoql::{ContainerProperties, CosmosClient, QueryOptions, Value};
//! use futures::StreamExt;
//!
//! let client = CosmosClient::new();
//! let db = client.create_database("shop")?;
//! let orders = db.create_container(ContainerProperties::new("orders", "/customer")?)?;
//! for (i, customer) in ["ana", "bo", "ana"].iter().enumerate() {
//!     let order = serde_json::json!({"id": format!("o{i}"), "customer": customer, "total": 10 * (i + 1)});
//!     orders.create_item(&order)?;
//! }
//! // Blocking: every result.
//! let totals: Vec<f64> = orders.query_items_blocking(
//!     cosmoql::Query::from("SELECT VALUE c.total FROM c WHERE c.customer = @who ORDER BY c.total")
//!         .with_parameter("@who", "ana")?,
//!     QueryOptions::default(),
//! )?;
//! assert_eq!(totals, vec![10.0, 30.0]);
//! // Async: a stream of pages.
//! let options = QueryOptions { max_item_count: Some(2), ..QueryOptions::default() };
//! let pages: Vec<_> = futures::executor::block_on(
//!     orders.query_items::<Value>("SELECT * FROM c", options).collect::<Vec<_>>(),
//! );
//! assert_eq!(pages.len(), 2);
//! # Ok::<(), cosmoql::Error>(())
//! ```
//!
//! Also here: [`value`] (documents, JSON) and [`parser`] (the syntax tree), the types the
//! client's methods take and return, and [`store`] (the embedded store beneath the client). The
//! engine's crates whole (`storage`, `catalog`, `planner`, `executor`) are behind the `internals`
//! feature, for this crate's own tests (the `cosmoql` binary uses the client, as any program does).

#![warn(missing_docs)]

mod advice;
mod change_feed;
mod client;
mod condition;
mod inspect;
mod pager;
mod procedures;
mod processor;
mod provisioning;
mod route;
mod scripts;
#[cfg(feature = "testing")]
pub mod testing;
mod transfer;
mod triggers;
mod typed;

/// The README's Rust examples, run as doctests so the tour stays true.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub use advice::{ranking_json, read_workload, KeyAdvisor, Progress, Workload, MAX_PARTITIONS, PLAN_PARTITIONS};
pub use change_feed::ChangeFeedPage;
pub use client::{
    ContainerClient, ContainerProperties, CosmosClient, DatabaseClient, ItemOptions, ItemResponse, MemoryReport, Query,
    TransactionalBatch,
};
pub use cosmoql_storage::RetryOptions;
pub use inspect::LogicalPartitionSize;
pub use pager::{FeedPage, QueryPager, QueryResults, QuerySummary};
pub use procedures::{ProcedureOptions, ProcedureResponse, ScriptFailure};
pub use processor::{ChangeFeedProcessor, LeaseLag, LEASE_EXPIRY_SECONDS};
pub use provisioning::{ThroughputProperties, MAX_OFFER};
pub use route::{QueryRoute, Routing};
pub use typed::JsonText;

/// Errors of the embedded API. Each says what the service would answer: [`Error::status`] and
/// [`Error::substatus`].
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// The store refused (with the Cosmos DB status code).
    Storage(StorageError),
    /// A query failed: its kind, message, span, status, substatus and service error code are in
    /// `error`; `Display` renders it against `sql` (`line L, column C` and a caret).
    Query {
        /// The query text.
        sql: String,
        /// What went wrong.
        error: QueryError,
    },
    /// A transactional batch failed at operation `index`; nothing of it was applied.
    Batch {
        /// The failed operation.
        index: usize,
        /// Why.
        error: StorageError,
    },
    /// A value did not (de)serialize to the requested type.
    Serialization(String),
    /// A stored procedure or trigger failed (it threw, ran past a limit, or its writes could not
    /// be committed); nothing it wrote was kept.
    Script(ScriptFailure),
}

impl Error {
    /// The HTTP status the service answers with (`None` for a client-side serialization error).
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Storage(e) | Error::Batch { error: e, .. } => Some(e.status_code()),
            Error::Query { error, .. } => Some(error.status),
            Error::Serialization(_) => None,
            Error::Script(f) => Some(f.status),
        }
    }

    /// The service's substatus (`x-ms-substatus`), 0 when it sends none.
    pub fn substatus(&self) -> u32 {
        match self {
            Error::Storage(e) | Error::Batch { error: e, .. } => e.kind.substatus().unwrap_or(0),
            Error::Query { error, .. } => error.substatus,
            Error::Serialization(_) => 0,
            Error::Script(f) => f.substatus,
        }
    }

    /// For a 429: how long the service asks to wait before retrying, in milliseconds.
    pub fn retry_after_ms(&self) -> Option<u64> {
        match self {
            Error::Storage(e) | Error::Batch { error: e, .. } => e.retry_after_ms,
            _ => None,
        }
    }

    /// Request units the failed request cost (the service's `x-ms-request-charge` on an error):
    /// a point read's worth when the item was looked up (404, 409, 412), nothing when the request
    /// was refused before any work (400, 413, a 429, a query that does not compile). A failed
    /// batch costs what its failing operation did (the others were rolled back).
    pub fn request_charge(&self) -> f64 {
        match self {
            Error::Storage(e) | Error::Batch { error: e, .. } => e.request_charge,
            Error::Query { .. } | Error::Serialization(_) | Error::Script(_) => 0.0,
        }
    }

    /// The query error, for a failed query.
    pub fn query_error(&self) -> Option<&QueryError> {
        match self {
            Error::Query { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Storage(e) => write!(f, "{e}"),
            Error::Query { sql, error } => f.write_str(&error.render(sql)),
            Error::Batch { index, error } => write!(f, "batch operation {index} failed, nothing was applied: {error}"),
            Error::Serialization(e) => write!(f, "serialization: {e}"),
            Error::Script(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<StorageError> for Error {
    fn from(e: StorageError) -> Self {
        Error::Storage(e)
    }
}

/// A refused key path, key value or indexing policy: the store's 400.
impl From<cosmoql_storage::CatalogError> for Error {
    fn from(e: cosmoql_storage::CatalogError) -> Self {
        Error::Storage(e.into())
    }
}

/// Document values: [`Value`], JSON I/O, the total order and query comparison.
pub use cosmoql_value as value;

/// The query language: lexer, syntax tree, parser and printer.
pub use cosmoql_parser as parser;

/// The partitioned document store, whole (feature `internals`).
#[cfg(feature = "internals")]
pub use cosmoql_storage as storage;

/// Container metadata, whole: partition keys and EPK hashing, indexing policies, index probes
/// (feature `internals`).
#[cfg(feature = "internals")]
pub use cosmoql_catalog as catalog;

/// The query planner, whole (feature `internals`).
#[cfg(feature = "internals")]
pub use cosmoql_planner as planner;

/// The query executor, whole (feature `internals`).
#[cfg(feature = "internals")]
pub use cosmoql_executor as executor;

/// Resource ids (`_rid`) in the service's layout: what the store mints and the REST gateway
/// parses.
pub use cosmoql_catalog::rid;

pub use cosmoql_catalog::epk::{
    effective_partition_key, EpkError, HashVersion, PartitionKeyComponent, PartitionKeyKind,
};
pub use cosmoql_executor::cost::Consistency;
pub use cosmoql_executor::{
    execute, explain, Analysis, Explain, PartitionMetrics, QueryError, QueryErrorKind, QueryMetrics, QueryOptions,
    QueryOutput, QuerySource, UdfHost, DEFAULT_MEMORY_BUDGET,
};
pub use cosmoql_parser::{parse, ParseError};
/// The query language's built-in functions by name (sorted): for completion and help.
pub use cosmoql_planner::functions::names as function_names;
/// What the planner reads in a query's syntax: the aggregate a call is, whether an expression
/// holds one, the name a select-list item without `AS` takes (for rewriting a query, as the REST
/// gateway's query plans do, with the engine's own rules).
pub use cosmoql_planner::{
    bind::inferred_name,
    rules::{aggregate_call, contains_aggregate},
    AggregateKind,
};
/// The scores an `ORDER BY RANK` fuses, as the planner binds them (`RankFn::components`), and
/// the rows each contributes: what the REST gateway writes into hybrid search plans.
pub use cosmoql_planner::{fusion_window, RankComponent, RankFn};
pub use cosmoql_planner::{Limits, Plan, VectorPolicy, LIMITS};
/// The ranking of candidate partition keys as text (a line per candidate, best first, with the
/// reasons), as `cosmoql advise` prints it; [`ranking_json`] is its JSON form.
pub use cosmoql_storage::advisor::render as ranking_table;
pub use cosmoql_storage::advisor::WhatIf;
pub use cosmoql_storage::container::{Script, ScriptKind, TriggerOperation, TriggerType};
pub use cosmoql_storage::import::ImportProblem;
#[cfg(feature = "fault-injection")]
pub use cosmoql_storage::Faults;
pub use cosmoql_storage::{
    Candidate, ChangeFeedStart, Clock, CompositePath, Container, ContainerSettings, Database, DurableOptions, Epk,
    FeedRange, ImportError, ImportOptions, ImportSummary, IndexPath, IndexStats, IndexStep, IndexingMode,
    IndexingPolicy, KeyChoice, ManualClock, PartitionKey, PartitionKeyDefinition, PartitionKeyPath, PatchOperation,
    Provisioned, Recovery, SkewReport, StorageError, Store, SyncMode, SyntheticKey, SyntheticKind, SystemClock,
    UniqueKey,
};
pub use cosmoql_value::Value;
pub use scripts::udf_host;

/// The embedded store beneath the client, for programs that use [`Container`] and [`Store`]
/// directly (no admission, retries or consistency): what their methods take and return.
pub mod store {
    pub use cosmoql_storage::container::response_charge;
    pub use cosmoql_storage::{
        BatchError, BatchOperation, Doc, ItemResponse, OperationKind, PartitionInfo, PartitionUsage, Scan, StoredItem,
        Throttle, WriteOptions,
    };
}
