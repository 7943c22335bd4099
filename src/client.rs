//! The in-memory client: databases, containers, typed item operations, transactional batches and
//! queries returning a stream of pages. Names follow the `azure_data_cosmos` SDK where that fits.

use std::marker::PhantomData;
use std::sync::Arc;

use cosmoql_executor::cost::{item_charge, Consistency, ItemWork};
use cosmoql_executor::{Analysis, Explain, Output, QueryError, QueryOptions};
use cosmoql_storage::{
    BatchOperation, Clock, Container, ContainerSettings, DurableOptions, IndexingPolicy, PartitionKey,
    PartitionKeyDefinition, PatchOperation, Provisioned, RequestKind, Store, StoredItem, SystemClock, WriteOptions,
};
use cosmoql_value::Value;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::pager::QueryPager;
use crate::route::QueryRoute;
use crate::typed::{from_output, from_value, to_value};
use crate::Error;
use cosmoql_storage::RetryOptions;

/// The entry point: an in-memory Cosmos DB account.
///
/// ```
/// use cosmoql::{ContainerProperties, CosmosClient, PartitionKey};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Debug, PartialEq)]
/// struct Reading { id: String, #[serde(rename = "deviceId")] device_id: String, value: f64 }
///
/// let client = CosmosClient::new();
/// let db = client.create_database("iot")?;
/// let readings = db.create_container(ContainerProperties::new("readings", "/deviceId")?)?;
/// readings.create_item(&Reading { id: "r1".into(), device_id: "dev-1".into(), value: 21.5 })?;
/// let read = readings.read_item::<Reading>(PartitionKey::from("dev-1"), "r1")?;
/// assert_eq!(read.item.value, 21.5);
/// # Ok::<(), cosmoql::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct CosmosClient {
    pub(crate) store: Arc<Store>,
    /// Where provisioned throughput takes its time from.
    clock: Arc<dyn Clock>,
}

impl Default for CosmosClient {
    fn default() -> Self {
        CosmosClient { store: Arc::default(), clock: Arc::new(SystemClock::default()) }
    }
}

impl CosmosClient {
    /// A new, empty account.
    pub fn new() -> Self {
        CosmosClient::default()
    }

    /// The same account with provisioned throughput timed by `clock` (tests use a
    /// [`cosmoql_storage::ManualClock`]: nothing sleeps).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Creates a database; an error (409) if it exists.
    pub fn create_database(&self, id: &str) -> Result<DatabaseClient, Error> {
        self.store.create_database(id)?;
        Ok(self.database_client(id))
    }

    /// A client for a database (which must exist when it is used).
    pub fn database_client(&self, id: &str) -> DatabaseClient {
        DatabaseClient { store: Arc::clone(&self.store), id: id.to_string(), clock: Arc::clone(&self.clock) }
    }

    /// Deletes a database and its containers; an error (404) if there is none.
    pub fn delete_database(&self, id: &str) -> Result<(), Error> {
        Ok(self.store.delete_database(id)?)
    }

    /// The ids of the databases.
    pub fn database_ids(&self) -> Vec<String> {
        self.store.database_ids()
    }

    /// Removes every expired item (time to live) of every container now, as the service's
    /// background purge does; returns how many. Reads, writes and queries remove what has expired
    /// before they run anyway, so this only frees memory (and puts the deletes in the
    /// all-versions change feed) sooner: an application may call it from a timer.
    pub fn purge_expired(&self) -> usize {
        self.store.purge_expired()
    }

    /// Opens (or creates) a database directory: everything in it is loaded, and every change is
    /// on disk before it returns (see [`DurableOptions`] for the relaxed mode). One process at a
    /// time may open a directory.
    pub fn open(dir: impl AsRef<std::path::Path>) -> Result<Self, Error> {
        Self::open_with(dir, DurableOptions::default())
    }

    /// [`CosmosClient::open`] with options (sync mode, checkpoint size, recovery of a damaged log).
    pub fn open_with(dir: impl AsRef<std::path::Path>, options: DurableOptions) -> Result<Self, Error> {
        Ok(CosmosClient { store: Store::open(dir.as_ref(), options)?, clock: Arc::new(SystemClock::default()) })
    }

    /// Writes a checkpoint of a durable database now (the log then starts over from the current
    /// state, so the next open replays less); writes go on meanwhile. Nothing for an in-memory
    /// one.
    pub fn checkpoint(&self) -> Result<(), Error> {
        Ok(self.store.checkpoint()?)
    }

    /// The underlying store (feature `internals`).
    #[cfg(feature = "internals")]
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }
}

/// A container's definition: id, partition key, and sizing.
#[derive(Debug, Clone)]
pub struct ContainerProperties {
    /// The container id.
    pub id: String,
    /// The partition key definition (one path, a hierarchical key, a synthetic key, or none).
    pub partition_key: PartitionKeyDefinition,
    /// Physical partitions, split thresholds and the logical partition cap.
    pub settings: ContainerSettings,
    /// Which paths are indexed (default: every path but `/"_etag"/?`).
    pub indexing_policy: IndexingPolicy,
    /// Dedicated throughput (default: none of its own: the database's shared throughput if it has
    /// some, else unlimited).
    pub throughput: Option<Provisioned>,
    /// The analytical store's time to live (`analyticalStorageTtl`): `None` or `0` without an
    /// analytical store, `-1` keeping every item, `n` keeping items `n` seconds after their last
    /// write (the `cosmoql-analytics` crate mirrors containers that have one).
    pub analytical_storage_ttl: Option<i64>,
}

impl ContainerProperties {
    /// A container keyed on one path, e.g. `/deviceId`.
    pub fn new(id: &str, partition_key_path: &str) -> Result<Self, Error> {
        Ok(ContainerProperties {
            id: id.to_string(),
            partition_key: PartitionKeyDefinition::hash(partition_key_path)?,
            settings: ContainerSettings::default(),
            indexing_policy: IndexingPolicy::default(),
            throughput: None,
            analytical_storage_ttl: None,
        })
    }

    /// A container with any key definition.
    pub fn with_key(id: &str, partition_key: PartitionKeyDefinition) -> Self {
        ContainerProperties {
            id: id.to_string(),
            partition_key,
            settings: ContainerSettings::default(),
            indexing_policy: IndexingPolicy::default(),
            throughput: None,
            analytical_storage_ttl: None,
        }
    }

    /// Sets the indexing policy.
    ///
    /// ```
    /// use cosmoql::IndexingPolicy;
    /// let policy = IndexingPolicy::from_json(&cosmoql::value::parse_json(
    ///     r#"{"compositeIndexes": [[{"path": "/city"}, {"path": "/age", "order": "descending"}]]}"#,
    /// ).unwrap())?;
    /// let props = cosmoql::ContainerProperties::new("people", "/city")?.indexing_policy(policy);
    /// # Ok::<(), cosmoql::Error>(())
    /// ```
    pub fn indexing_policy(mut self, policy: IndexingPolicy) -> Self {
        self.indexing_policy = policy;
        self
    }

    /// Provisions the container's own throughput: manual RU/s (from 400, in steps of 100) or an
    /// autoscale maximum (from 1000, in steps of 1000). It starts with a physical partition per
    /// 6,000 RU/s manual or per 10,000 RU/s of an autoscale maximum.
    pub fn throughput(mut self, provisioned: Provisioned) -> Self {
        self.throughput = Some(provisioned);
        self
    }

    /// Adds a unique key (set at creation only): within each logical partition, at most one item
    /// may have a given combination of values at `paths` (a missing value counts as null); a
    /// write that would make a second is refused (409).
    pub fn unique_key(mut self, paths: &[&str]) -> Result<Self, Error> {
        self.settings.unique_keys.push(cosmoql_storage::UniqueKey::new(paths)?);
        Ok(self)
    }

    /// Sets the default time to live (`defaultTtl`): `None` off, `Some(-1)` on without a default
    /// (items with their own `ttl` expire), `Some(n)` items expire `n` seconds after their last
    /// write unless their own `ttl` says otherwise.
    pub fn default_ttl(mut self, ttl: Option<i64>) -> Self {
        self.settings.default_ttl = ttl;
        self
    }

    /// Sets the analytical store's time to live (`analyticalStorageTtl`): `None` or `Some(0)`
    /// without an analytical store, `Some(-1)` keeping every item written (even past the
    /// transactional time to live), `Some(n)` keeping each `n` seconds after its last write.
    pub fn analytical_storage_ttl(mut self, ttl: Option<i64>) -> Self {
        self.analytical_storage_ttl = ttl;
        self
    }

    /// Keeps every create, replace and delete for `retention` (whole minutes, as the service's
    /// `changeFeedPolicy.retentionDuration`), for the all-versions-and-deletes change feed
    /// ([`ContainerClient::read_change_feed_all_versions`]); `None` keeps only latest versions.
    pub fn change_feed_retention(mut self, retention: Option<std::time::Duration>) -> Self {
        self.settings.change_feed_retention = retention.map(|d| d.as_secs() / 60 * 60).filter(|s| *s > 0);
        self
    }

    /// Sets the sizing (for example more physical partitions to start with).
    pub fn settings(mut self, settings: ContainerSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Keeps the service's container properties the engine reads but does not index by, taken
    /// from a container body (`vectorEmbeddingPolicy`, `fullTextPolicy`; set at creation only):
    /// `VectorDistance` then defaults to the policy's distance, data type and dimensions. A 400 for
    /// a vector embedding policy the service refuses.
    pub fn kept_properties(mut self, body: &Value) -> Result<Self, Error> {
        cosmoql_planner::VectorPolicy::from_container_properties(body)
            .map_err(cosmoql_storage::StorageError::bad_request)?;
        let mut kept = cosmoql_value::Map::default();
        for name in cosmoql_storage::KEPT_PROPERTIES {
            let v = body.get(name);
            if !v.is_undefined() && !v.is_null() {
                kept.insert(name.into(), v.clone());
            }
        }
        self.settings.kept_properties = (!kept.is_empty()).then(|| Value::from(kept));
        Ok(self)
    }
}

/// A client for one database.
#[derive(Debug, Clone)]
pub struct DatabaseClient {
    pub(crate) store: Arc<Store>,
    pub(crate) id: String,
    pub(crate) clock: Arc<dyn Clock>,
}

impl DatabaseClient {
    /// The database id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The database's properties in the service's JSON form (`id`, `_rid`); an error (404) if
    /// there is no such database.
    pub fn read_properties(&self) -> Result<Value, Error> {
        Ok(self.store.database(&self.id)?.properties())
    }

    /// Creates a container; an error (409) if it exists.
    pub fn create_container(&self, properties: ContainerProperties) -> Result<ContainerClient, Error> {
        let db = self.store.database(&self.id)?;
        // Refused before the container is made.
        cosmoql_storage::container::checked_analytical_ttl(properties.analytical_storage_ttl)?;
        let mut settings = properties.settings;
        let dedicated = cosmoql_storage::throughput::dedicated_at_creation(
            properties.throughput,
            &mut settings.initial_partitions,
            &self.clock,
        )?;
        let container = db.create_container_with(&properties.id, properties.partition_key, settings, dedicated)?;
        container.replace_indexing_policy(properties.indexing_policy);
        container.set_analytical_ttl(properties.analytical_storage_ttl)?;
        container.set_clock(Arc::clone(&self.clock));
        Ok(ContainerClient {
            container,
            retry: RetryOptions::default(),
            consistency: Consistency::Session,
            clock: Arc::clone(&self.clock),
            route: None,
            database: Some(Arc::from(self.id.as_str())),
        })
    }

    /// A client for an existing container; an error (404) if there is none.
    pub fn container_client(&self, id: &str) -> Result<ContainerClient, Error> {
        Ok(ContainerClient {
            container: self.store.database(&self.id)?.container(id)?,
            retry: RetryOptions::default(),
            consistency: Consistency::Session,
            clock: Arc::clone(&self.clock),
            route: None,
            database: Some(Arc::from(self.id.as_str())),
        })
    }

    /// Deletes a container.
    pub fn delete_container(&self, id: &str) -> Result<(), Error> {
        Ok(self.store.database(&self.id)?.delete_container(id)?)
    }

    /// The ids of the containers.
    pub fn container_ids(&self) -> Result<Vec<String>, Error> {
        Ok(self.store.database(&self.id)?.container_ids())
    }
}

/// The result of an item operation.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemResponse<T> {
    /// The item as stored (with system properties in its JSON form).
    pub item: T,
    /// The item's etag, for optimistic concurrency (`WriteOptions::if_match`).
    pub etag: String,
    /// Request units charged.
    pub request_charge: f64,
    /// The HTTP status Cosmos DB would answer (200, 201, 204).
    pub status: u16,
    /// Diagnostics: how many times the request was refused (429) and retried before it ran.
    pub retries: u32,
}

/// Preconditions of a write: the service's `If-Match` and a patch's filter predicate.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemOptions {
    /// Apply only if the item's current `_etag` is this (else 412).
    pub if_match: Option<String>,
    /// A patch applies only if this predicate (`FROM c WHERE <condition>`, the service's
    /// conditional patch) holds on the current item (else 412).
    pub condition: Option<String>,
    /// The pre-trigger to run before a create, replace, upsert or delete (at most one, as the
    /// service allows): it sees the item and may change it.
    pub pre_triggers: Vec<String>,
    /// The post-trigger to run after the write, in the same transaction (at most one).
    pub post_triggers: Vec<String>,
}

impl ItemOptions {
    /// Whether the write names a trigger.
    pub fn has_triggers(&self) -> bool {
        !self.pre_triggers.is_empty() || !self.post_triggers.is_empty()
    }
}

/// A query with typed parameters.
///
/// ```
/// let q = cosmoql::Query::from("SELECT * FROM c WHERE c.n > @min").with_parameter("@min", 5)?;
/// # Ok::<(), cosmoql::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Query {
    text: String,
    parameters: Vec<(String, Value)>,
}

impl Query {
    /// Binds `@name` to any serializable value.
    pub fn with_parameter<T: Serialize>(mut self, name: &str, value: T) -> Result<Self, Error> {
        self.parameters.push((name.trim_start_matches('@').to_string(), to_value(&value)?));
        Ok(self)
    }

    /// The query text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl From<&str> for Query {
    fn from(text: &str) -> Self {
        Query { text: text.to_string(), parameters: Vec::new() }
    }
}

impl From<String> for Query {
    fn from(text: String) -> Self {
        Query { text, parameters: Vec::new() }
    }
}

/// A transactional batch: operations on one logical partition, all or nothing.
#[derive(Debug, Clone, Default)]
pub struct TransactionalBatch {
    operations: Vec<BatchOperation>,
}

impl TransactionalBatch {
    /// An empty batch.
    pub fn new() -> Self {
        TransactionalBatch::default()
    }

    /// Adds an operation as the store takes it, preconditions included (what a REST batch
    /// request carries).
    pub fn push(mut self, operation: BatchOperation) -> Self {
        self.operations.push(operation);
        self
    }

    /// Adds a create.
    pub fn create_item<T: Serialize>(mut self, item: &T) -> Result<Self, Error> {
        self.operations.push(BatchOperation::Create { item: to_value(item)? });
        Ok(self)
    }

    /// Adds an upsert.
    pub fn upsert_item<T: Serialize>(mut self, item: &T) -> Result<Self, Error> {
        self.operations.push(BatchOperation::Upsert { item: to_value(item)?, if_match: None });
        Ok(self)
    }

    /// Adds a replace.
    pub fn replace_item<T: Serialize>(mut self, id: &str, item: &T) -> Result<Self, Error> {
        self.operations.push(BatchOperation::Replace { id: id.to_string(), item: to_value(item)?, if_match: None });
        Ok(self)
    }

    /// Adds a delete.
    pub fn delete_item(mut self, id: &str) -> Self {
        self.operations.push(BatchOperation::Delete { id: id.to_string(), if_match: None });
        self
    }

    /// Adds a read.
    pub fn read_item(mut self, id: &str) -> Self {
        self.operations.push(BatchOperation::Read { id: id.to_string() });
        self
    }

    /// Adds a patch.
    pub fn patch_item(mut self, id: &str, operations: Vec<PatchOperation>) -> Self {
        self.operations.push(BatchOperation::Patch { id: id.to_string(), operations, if_match: None });
        self
    }
}

/// What a container holds in memory: its items' encoded bytes and its indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryReport {
    /// Items in the container.
    pub items: u64,
    /// The items' encoded bytes, every property name spelled out: the size request charges and
    /// partition sizes count.
    pub data_bytes: u64,
    /// What the items take in memory: their documents, whose repeated property names are held
    /// once for the process, and each item's metadata.
    pub data_memory_bytes: u64,
    /// The indexes: entries, keys and estimated bytes.
    pub index: cosmoql_storage::IndexStats,
}

impl MemoryReport {
    /// Data bytes per item.
    pub fn data_bytes_per_item(&self) -> u64 {
        self.data_bytes.checked_div(self.items).unwrap_or(0)
    }

    /// Index bytes per item.
    pub fn index_bytes_per_item(&self) -> u64 {
        self.index.bytes.checked_div(self.items).unwrap_or(0)
    }
}

/// A client for one container.
#[derive(Debug, Clone)]
pub struct ContainerClient {
    pub(crate) container: Arc<Container>,
    retry: RetryOptions,
    pub(crate) consistency: Consistency,
    /// Where provisioned throughput takes its time from.
    pub(crate) clock: Arc<dyn Clock>,
    /// Another engine consulted before the row engine runs a query (the analytical store).
    route: Option<Arc<dyn QueryRoute>>,
    /// The database's id, when the client came from one (scripts' `getAltLink()`).
    pub(crate) database: Option<Arc<str>>,
}

impl ContainerClient {
    /// A client for a container the caller already holds (one loaded from files, for example).
    pub fn from_container(container: Arc<Container>) -> Self {
        ContainerClient {
            container,
            retry: RetryOptions::default(),
            consistency: Consistency::Session,
            clock: Arc::new(SystemClock::default()),
            route: None,
            database: None,
        }
    }

    /// How evenly storage and request units spread over the physical partitions, the heaviest
    /// logical partitions (by size, and by RU under provisioned throughput) and what looks wrong.
    pub fn skew_report(&self) -> cosmoql_storage::SkewReport {
        cosmoql_storage::SkewReport::of(&self.container, 10)
    }

    /// A client of the same container with another retry policy for throttled requests.
    pub fn with_retry_options(&self, retry: RetryOptions) -> Self {
        ContainerClient { retry, ..self.clone() }
    }

    /// A client of the same container reading at another consistency level: Strong and Bounded
    /// Staleness reads (point reads and queries) cost twice the request units.
    pub fn with_consistency(&self, consistency: Consistency) -> Self {
        ContainerClient { consistency, ..self.clone() }
    }

    /// A client of the same container whose queries first ask `route` whether it answers them
    /// (see [`QueryRoute`]; EXPLAIN then says which engine runs a query, and why).
    pub fn with_route(&self, route: Arc<dyn QueryRoute>) -> Self {
        ContainerClient { route: Some(route), ..self.clone() }
    }

    /// The charge of a storage response at this client's consistency.
    fn charge(&self, r: &cosmoql_storage::ItemResponse) -> f64 {
        item_charge(&ItemWork::from(r), self.consistency)
    }

    /// Sets the container's own manual throughput to `ru_per_second` (split evenly across its
    /// physical partitions), timed by `clock`, without the service's checks ([`Self::
    /// replace_throughput`] applies them): a simulation knob, e.g. a tiny budget that throttles
    /// at once. `None` removes it.
    pub fn set_throughput(&self, ru_per_second: Option<f64>, clock: Arc<dyn Clock>) -> Result<(), Error> {
        self.container.set_throughput(ru_per_second.map(|ru| Arc::new(cosmoql_storage::Throttle::new(ru, clock))));
        Ok(self.container.persist_properties()?)
    }

    /// Replaces the container's default time to live (`None` off, `-1` on without a default,
    /// `n` seconds); 400 for another value. Items' expiry follows at once.
    pub fn replace_default_ttl(&self, ttl: Option<i64>) -> Result<(), Error> {
        Ok(self.container.set_default_ttl(ttl)?)
    }

    /// Replaces the analytical store's time to live (`None` or `0` turns the analytical store
    /// off, `-1` keeps every item, `n` seconds); 400 for another value.
    pub fn replace_analytical_storage_ttl(&self, ttl: Option<i64>) -> Result<(), Error> {
        Ok(self.container.set_analytical_ttl(ttl)?)
    }

    /// The same container with provisioned throughput timed by `clock` from now on (for
    /// [`Self::replace_throughput`]; tests use a [`cosmoql_storage::ManualClock`]).
    pub fn with_clock(&self, clock: Arc<dyn Clock>) -> Self {
        ContainerClient { clock, ..self.clone() }
    }

    /// Runs an item operation under the container's throughput (see [`Self::admitted`]); the
    /// charge of the operation is consumed from its partition's budget.
    fn throttled(
        &self,
        kind: RequestKind,
        partition: impl Fn() -> Result<(u32, PartitionKey), cosmoql_storage::StorageError>,
        op: impl FnOnce() -> Result<cosmoql_storage::ItemResponse, cosmoql_storage::StorageError>,
    ) -> Result<(cosmoql_storage::ItemResponse, u32), Error> {
        self.throttled_by(kind, partition, op, |r| self.charge(r))
    }

    /// [`Self::throttled`] for an operation whose result `price` charges.
    fn throttled_by<R>(
        &self,
        kind: RequestKind,
        partition: impl Fn() -> Result<(u32, PartitionKey), cosmoql_storage::StorageError>,
        op: impl FnOnce() -> Result<R, cosmoql_storage::StorageError>,
        price: impl Fn(&R) -> f64,
    ) -> Result<(R, u32), Error> {
        let priced = |mut e: cosmoql_storage::StorageError| {
            e.request_charge = cosmoql_executor::cost::error_charge(e.kind);
            e
        };
        let Some(throttle) = self.container.throughput() else { return Ok((op().map_err(priced)?, 0)) };
        let (ids, retries) = self.container.admit_retrying(&throttle, self.retry, || Ok(vec![partition()?.0]))?;
        let key = partition().ok().map(|(_, key)| key.to_string());
        match op() {
            Ok(r) => {
                self.container.consume(ids[0], price(&r), key.as_deref().map(|k| (k, kind)));
                Ok((r, retries))
            }
            Err(e) => {
                // A refusal after the lookup costs what the lookup did.
                let e = priced(e);
                self.container.consume(ids[0], e.request_charge, key.as_deref().map(|k| (k, kind)));
                Err(e.into())
            }
        }
    }

    /// The partition holding `key`'s items, and the key.
    fn key_partition(&self, key: &PartitionKey) -> Result<(u32, PartitionKey), cosmoql_storage::StorageError> {
        Ok((self.container.partition_of_key(key)?, key.clone()))
    }

    /// The storage engine's container itself (feature `internals`; the client's methods are the
    /// public way to it).
    #[cfg(feature = "internals")]
    pub fn container(&self) -> &Arc<Container> {
        &self.container
    }

    /// The container's properties in the service's JSON form (`id`, `indexingPolicy`,
    /// `partitionKey`, `_rid`).
    pub fn read_properties(&self) -> Value {
        self.container.properties()
    }

    /// Replaces the indexing policy. Queries follow it at once for what it allows and for the
    /// paths it no longer indexes; the paths it adds serve queries once the index transformation,
    /// started here on a background thread, has rebuilt each partition's index
    /// ([`ContainerClient::index_transformation_progress`]). Results are exact throughout.
    pub fn replace_indexing_policy(&self, policy: IndexingPolicy) -> Result<(), Error> {
        self.container.replace_indexing_policy(policy);
        self.container.persist_properties()?;
        let container = Arc::clone(&self.container);
        std::thread::spawn(move || container.transform_indexes(usize::MAX));
        Ok(())
    }

    /// How far the index transformation is, in percent (100 when no transformation is running).
    pub fn index_transformation_progress(&self) -> u8 {
        self.container.index_transformation_progress()
    }

    /// The sizes of the container's data and indexes.
    pub fn memory(&self) -> MemoryReport {
        let parts = self.container.partitions();
        MemoryReport {
            items: parts.iter().map(|p| p.items as u64).sum(),
            data_bytes: parts.iter().map(|p| p.bytes).sum(),
            data_memory_bytes: self.container.item_memory(),
            index: self.container.index_stats(),
        }
    }

    fn response<T: DeserializeOwned + 'static>(
        &self,
        (r, retries): (cosmoql_storage::ItemResponse, u32),
    ) -> Result<ItemResponse<T>, Error> {
        let request_charge = self.charge(&r);
        Ok(ItemResponse { item: from_value(r.item)?, etag: r.etag, request_charge, status: r.status, retries })
    }

    /// Creates an item; its partition key is read from it (a synthetic key is computed).
    pub fn create_item<T: Serialize + DeserializeOwned + 'static>(&self, item: &T) -> Result<ItemResponse<T>, Error> {
        self.create_item_with(item, &ItemOptions::default())
    }

    /// Creates an item under `options` (its triggers; `if_match` and a condition do not apply).
    pub fn create_item_with<T: Serialize + DeserializeOwned + 'static>(
        &self,
        item: &T,
        options: &ItemOptions,
    ) -> Result<ItemResponse<T>, Error> {
        let item = to_value(item)?;
        if options.has_triggers() {
            return self.triggered(crate::triggers::Write::Create(&item), options);
        }
        self.response(self.throttled(
            RequestKind::Write,
            || self.container.partition_of_item(&item),
            || self.container.create(&item),
        )?)
    }

    /// Reads an item by partition key and id (404 if absent).
    pub fn read_item<T: DeserializeOwned + 'static>(
        &self,
        partition_key: PartitionKey,
        id: &str,
    ) -> Result<ItemResponse<T>, Error> {
        // The stored item, handed to `T` from its bytes (a `Value` decoded, `JsonText` written,
        // any other type read); priced as the read it is.
        let price = |item: &StoredItem| item_charge(&ItemWork::read(item.doc.len()), self.consistency);
        let (stored, retries) = self.throttled_by(
            RequestKind::Read,
            || self.key_partition(&partition_key),
            || self.container.read_stored(&partition_key, id),
            price,
        )?;
        let (request_charge, etag) = (price(&stored), stored.meta.etag());
        let item = from_output(Output::Whole(self.container.whole_item(&stored)))?;
        Ok(ItemResponse { item, etag, request_charge, status: 200, retries })
    }

    /// Creates or replaces an item.
    pub fn upsert_item<T: Serialize + DeserializeOwned + 'static>(&self, item: &T) -> Result<ItemResponse<T>, Error> {
        self.upsert_item_with(item, &ItemOptions::default())
    }

    /// Replaces an item; with `if_match`, only if its etag is still that.
    pub fn replace_item<T: Serialize + DeserializeOwned + 'static>(
        &self,
        partition_key: PartitionKey,
        id: &str,
        item: &T,
        if_match: Option<&str>,
    ) -> Result<ItemResponse<T>, Error> {
        let options = ItemOptions { if_match: if_match.map(str::to_string), ..ItemOptions::default() };
        self.replace_item_with(partition_key, id, item, &options)
    }

    /// Replaces an item under `options` (`if_match`; a condition is refused: only patches take
    /// one).
    pub fn replace_item_with<T: Serialize + DeserializeOwned + 'static>(
        &self,
        partition_key: PartitionKey,
        id: &str,
        item: &T,
        options: &ItemOptions,
    ) -> Result<ItemResponse<T>, Error> {
        let item = to_value(item)?;
        if options.has_triggers() {
            let write = crate::triggers::Write::Replace { key: &partition_key, id, item: &item };
            return self.triggered(write, options);
        }
        self.with_write_options(options, false, |write| {
            self.response(self.throttled(
                RequestKind::Write,
                || self.key_partition(&partition_key),
                || self.container.replace(&partition_key, id, &item, write),
            )?)
        })
    }

    /// Creates or replaces an item under `options` (`if_match` applies when the item exists).
    pub fn upsert_item_with<T: Serialize + DeserializeOwned + 'static>(
        &self,
        item: &T,
        options: &ItemOptions,
    ) -> Result<ItemResponse<T>, Error> {
        let item = to_value(item)?;
        if options.has_triggers() {
            return self.triggered(crate::triggers::Write::Upsert(&item), options);
        }
        self.with_write_options(options, false, |write| {
            self.response(self.throttled(
                RequestKind::Write,
                || self.container.partition_of_item(&item),
                || self.container.upsert(&item, write),
            )?)
        })
    }

    /// Deletes an item; the response (status 204) carries the charge, and no item.
    pub fn delete_item(&self, partition_key: PartitionKey, id: &str) -> Result<ItemResponse<()>, Error> {
        self.delete_item_with(partition_key, id, &ItemOptions::default())
    }

    /// Deletes an item under `options` (`if_match`).
    pub fn delete_item_with(
        &self,
        partition_key: PartitionKey,
        id: &str,
        options: &ItemOptions,
    ) -> Result<ItemResponse<()>, Error> {
        if options.has_triggers() {
            let (r, request_charge) =
                self.triggered_write(crate::triggers::Write::Delete { key: &partition_key, id }, options)?;
            return Ok(ItemResponse { item: (), etag: r.etag, request_charge, status: r.status, retries: 0 });
        }
        self.with_write_options(options, false, |write| {
            let (r, retries) = self.throttled(
                RequestKind::Write,
                || self.key_partition(&partition_key),
                || self.container.delete(&partition_key, id, write),
            )?;
            let request_charge = self.charge(&r);
            Ok(ItemResponse { item: (), etag: r.etag, request_charge, status: r.status, retries })
        })
    }

    /// A write that names triggers, as the typed response.
    fn triggered<T: DeserializeOwned + 'static>(
        &self,
        write: crate::triggers::Write<'_>,
        options: &ItemOptions,
    ) -> Result<ItemResponse<T>, Error> {
        let (r, request_charge) = self.triggered_write(write, options)?;
        Ok(ItemResponse { item: from_value(r.item)?, etag: r.etag, request_charge, status: r.status, retries: 0 })
    }

    /// Runs `write` with the storage's form of `options`: the condition (`FROM c WHERE ...`)
    /// compiled once into a predicate over the current item; a condition where none is allowed
    /// (`conditions` false) is a 400.
    fn with_write_options<R>(
        &self,
        options: &ItemOptions,
        conditions: bool,
        write: impl FnOnce(&WriteOptions<'_>) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let predicate = match &options.condition {
            None => None,
            Some(_) if !conditions => {
                return Err(cosmoql_storage::StorageError::bad_request("only a patch takes a condition").into())
            }
            Some(text) => Some(crate::condition::Condition::compile(&self.container, text)?),
        };
        let test = predicate.as_ref().map(|p| move |item: &Value| p.holds(item));
        let write_options = WriteOptions {
            if_match: options.if_match.clone(),
            condition: test.as_ref().map(|t| t as &(dyn Fn(&Value) -> bool + Sync)),
        };
        write(&write_options)
    }

    /// Applies patch operations atomically.
    pub fn patch_item<T: DeserializeOwned + 'static>(
        &self,
        partition_key: PartitionKey,
        id: &str,
        operations: &[PatchOperation],
    ) -> Result<ItemResponse<T>, Error> {
        self.patch_item_with(partition_key, id, operations, &ItemOptions::default())
    }

    /// Applies patch operations atomically under `options`: only if the etag is still
    /// `if_match`, and only if `condition` (`FROM c WHERE ...`) holds on the current item (else
    /// 412, as the service answers).
    pub fn patch_item_with<T: DeserializeOwned + 'static>(
        &self,
        partition_key: PartitionKey,
        id: &str,
        operations: &[PatchOperation],
        options: &ItemOptions,
    ) -> Result<ItemResponse<T>, Error> {
        self.with_write_options(options, true, |write| {
            self.response(self.throttled(
                RequestKind::Write,
                || self.key_partition(&partition_key),
                || self.container.patch(&partition_key, id, operations, write),
            )?)
        })
    }

    /// Runs a transactional batch on one logical partition: all or nothing.
    pub fn execute_transactional_batch(
        &self,
        partition_key: PartitionKey,
        batch: TransactionalBatch,
    ) -> Result<Vec<ItemResponse<Value>>, Error> {
        // A batch runs on one partition: admitted once, charged the sum of its operations.
        let throttle = self.container.throughput();
        let (id, retries) = match &throttle {
            Some(t) => {
                let (ids, retries) = self
                    .container
                    .admit_retrying(t, self.retry, || Ok(vec![self.container.partition_of_key(&partition_key)?]))?;
                (ids[0], retries)
            }
            None => (0, 0),
        };
        let responses = self.container.execute_batch(&partition_key, &batch.operations).map_err(|e| {
            // The failing operation's lookup is what the batch cost; the rest was rolled back.
            let mut error = e.error;
            error.request_charge = cosmoql_executor::cost::error_charge(error.kind);
            if throttle.is_some() {
                self.container.consume(
                    id,
                    error.request_charge,
                    Some((&partition_key.to_string(), RequestKind::Batch)),
                );
            }
            Error::Batch { index: e.index, error }
        })?;
        if throttle.is_some() {
            let total: f64 = responses.iter().map(|r| self.charge(r)).sum();
            self.container.consume(id, total, Some((&partition_key.to_string(), RequestKind::Batch)));
        }
        responses.into_iter().map(|r| self.response((r, retries))).collect()
    }

    /// What a query takes from the container unless its options say otherwise: the vector
    /// embedding policy (VectorDistance's direction follows it) and the UDFs.
    fn container_defaults(&self, options: &mut QueryOptions) {
        if options.vector_policies.is_empty() {
            options.vector_policies = self.vector_policies();
        }
        if options.udfs.is_none() {
            options.udfs = crate::scripts::udf_host(&self.container);
        }
    }

    /// The container's vector embedding policy, as queries read it.
    fn vector_policies(&self) -> Vec<cosmoql_planner::VectorPolicy> {
        self.container
            .settings()
            .kept_properties
            .as_ref()
            .and_then(|kept| cosmoql_planner::VectorPolicy::from_container_properties(kept).ok())
            .unwrap_or_default()
    }

    /// The pages of a query, 100 results a page unless `options.max_item_count` says otherwise
    /// (as the SDKs do). Results deserialize into `T` (use [`Value`] or `serde_json::Value` for
    /// anything).
    pub fn query_items<T: DeserializeOwned + 'static>(
        &self,
        query: impl Into<Query>,
        options: QueryOptions,
    ) -> QueryPager<T> {
        let mut options = options;
        if options.max_item_count.is_none() {
            options.max_item_count = Some(100);
        }
        self.query_pages(query, options)
    }

    /// The pages of a query as `options` say: with `max_item_count: None`, one page holds every
    /// result.
    pub fn query_pages<T: DeserializeOwned + 'static>(
        &self,
        query: impl Into<Query>,
        options: QueryOptions,
    ) -> QueryPager<T> {
        let query = query.into();
        let mut options = options;
        for (name, value) in query.parameters {
            options.parameters.insert(name, value);
        }
        if options.consistency == Consistency::Session {
            options.consistency = self.consistency;
        }
        self.container_defaults(&mut options);
        QueryPager {
            container: Arc::clone(&self.container),
            retry: self.retry,
            sql: query.text,
            options,
            plan: None,
            route: self.route.clone(),
            done: false,
            marker: PhantomData,
        }
    }

    /// The plan of a query (EXPLAIN); with `analyze`, also runs that plan to the end, page by
    /// page, and reports what it did (EXPLAIN ANALYZE).
    pub fn explain(&self, query: impl Into<Query>, options: QueryOptions, analyze: bool) -> Result<Explain, Error> {
        let query = query.into();
        let mut options = options;
        for (name, value) in query.parameters {
            options.parameters.insert(name, value);
        }
        // Planned as the query runs: with the container's vector policy and UDFs.
        self.container_defaults(&mut options);
        let sql = query.text;
        let fail = |error: QueryError| Error::Query { sql: sql.clone(), error };
        let plan = cosmoql_executor::plan_query(&*self.container, &sql, &options).map_err(fail)?;
        let mut explain = cosmoql_executor::explain_plan(&*self.container, plan.clone(), &options);
        if let Some(route) = &self.route {
            explain.routing = Some(crate::route::consult(&**route, &self.container, &plan, &options).to_string());
        }
        if analyze {
            let started = std::time::Instant::now();
            let pager: QueryPager<Value> = QueryPager {
                container: Arc::clone(&self.container),
                retry: self.retry,
                sql: sql.clone(),
                options,
                plan: Some(Arc::new(plan)),
                route: self.route.clone(),
                done: false,
                marker: PhantomData,
            };
            let results = pager.drain()?;
            explain.analysis =
                Some(Analysis { elapsed: started.elapsed(), metrics: results.metrics, pages: results.pages });
        }
        Ok(explain)
    }

    /// Every result of a query, collected (blocking).
    pub fn query_items_blocking<T: DeserializeOwned + 'static>(
        &self,
        query: impl Into<Query>,
        options: QueryOptions,
    ) -> Result<Vec<T>, Error> {
        // Without a page size the results stream in one run (pages of 100 would re-run a sort or
        // an aggregation per page).
        self.query_pages(query, options).collect_all()
    }
}
