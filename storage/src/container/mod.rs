//! A container: physical partitions over EPK ranges and logical partitions inside them (this
//! file); by concern, in files of their own: `items.rs` (item operations), `batch.rs`
//! (transactional batches), `scan.rs` (scans and item positions), `serving.rs` (what the
//! indexes serve to queries), `splits.rs`, `ttl.rs` (time to live), `feed.rs` (reading the
//! change feed), `mirror.rs` (what the analytical store reads), `settings.rs` (settings, limits
//! and the properties' JSON) and `persist.rs` (the write-ahead log and rebuilding from it).
//!
//! Concurrency: an operation read-locks the partition map (`RwLock<Vec<Arc<PhysicalPartition>>>`)
//! and then the one physical partition it needs (read or write). Readers never block readers, and
//! writes to different physical partitions run in parallel. A split takes the map's write lock and
//! the splitting partition's write lock, moves the upper half of its logical partitions (a
//! `BTreeMap::split_off`, O(log n)) into a new partition and marks the old one retired, so no
//! operation is inside a partition while it splits. Scans hold the locks for one chunk of items at
//! a time and resume from an (EPK, sequence) cursor, so they never block writers for long.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use cosmoql_value::{Map, Value};
use parking_lot::{Mutex, RwLock};

use crate::doc::{Doc, SYSTEM_PROPERTIES};
use crate::error::{ErrorKind, Result, StorageError};
use crate::index::{IndexStats, IndexWork, PartitionIndex};
pub use crate::item::{ItemMeta, ItemNames, StoredItem, WholeItem};
use crate::patch::{apply_patch, PatchOperation};
pub use crate::throughput::cost::OperationKind;
use crate::throughput::cost::{item_charge, Consistency, ItemWork};
use crate::throughput::{Clock, SystemClock, Throttle};
use cosmoql_catalog::epk::Epk;
use cosmoql_catalog::indexing::{IndexStep, IndexingPolicy};
use cosmoql_catalog::partition_key::{PartitionKey, PartitionKeyDefinition};
use cosmoql_catalog::rid::{collection_id, Rid};
use cosmoql_catalog::{IndexKey, IndexProbe};

mod batch;
mod feed;
mod ids;
mod items;
mod local_order;
mod logical;
mod mirror;
mod persist;
mod scan;
mod scratch;
mod scripts;
mod serving;
mod settings;
mod splits;
mod ttl;

use ids::IdTable;
use local_order::LocalOrders;
use logical::*;
pub(crate) use persist::Journal;
use persist::{Entry, Pending};

pub use batch::MAX_TRANSACTION_OPERATIONS;
pub use mirror::PartitionDelta;
pub use scan::{ItemPosition, Scan};
pub use scripts::{
    Script, ScriptKind, TriggerOperation, TriggerType, MAX_SCRIPT_BODY, MAX_STORED_PROCEDURES, MAX_TRIGGERS,
    MAX_USER_DEFINED_FUNCTIONS,
};
pub use serving::{CompositeWalk, IndexBounds, IndexServing, OrderedEntries, OrderedWalk, RangeItems};
pub use settings::*;

/// What a write did, as the all-versions-and-deletes change feed reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeOperation {
    Create,
    Replace,
    Delete,
}

/// One write kept for the all-versions-and-deletes change feed.
#[derive(Debug, Clone)]
pub struct Change {
    pub operation: ChangeOperation,
    pub epk: Epk,
    pub id: Arc<str>,
    pub key: PartitionKey,
    /// The item written (`None` for a delete).
    pub item: Option<StoredItem>,
    /// The LSN of the version it replaced or deleted.
    pub previous_lsn: Option<u64>,
    /// When it was written (Unix seconds).
    pub ts: u64,
    /// A delete because the item's time to live passed.
    pub ttl_expired: bool,
}

/// The result of an item operation.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemResponse {
    /// 200 (read, replace, upsert of an existing item, patch), 201 (created) or 204 (deleted).
    pub status: u16,
    /// The item with its system properties (`Undefined` after a delete).
    pub item: Value,
    /// The item's new etag (empty after a delete).
    pub etag: String,
    /// What the operation was, for its request charge (computed in `cosmoql_executor::cost`).
    pub operation: OperationKind,
    /// The item's size in bytes as stored (after a delete: the deleted item's).
    pub bytes: usize,
    /// Index terms the item has under the container's indexing policy (after a delete: the
    /// deleted item's), for the write's request charge.
    pub indexed_terms: u64,
}

/// What the operation did, for its price.
impl From<&ItemResponse> for ItemWork {
    fn from(r: &ItemResponse) -> Self {
        ItemWork { kind: r.operation, bytes: r.bytes, indexed_terms: r.indexed_terms }
    }
}

/// The charge of a storage response at Session consistency (priced by `throughput::cost`).
pub fn response_charge(r: &ItemResponse) -> f64 {
    item_charge(&ItemWork::from(r), Consistency::Session)
}

/// Conditions on a write.
#[derive(Default)]
pub struct WriteOptions<'a> {
    /// Optimistic concurrency: the write applies only if the item's current `_etag` is this.
    pub if_match: Option<String>,
    /// Conditional patch: the patch applies only if this predicate holds on the current item
    /// (Cosmos's filter predicate; the query layer compiles `FROM c WHERE ...` into it).
    pub condition: Option<&'a (dyn Fn(&Value) -> bool + Sync)>,
}

impl std::fmt::Debug for WriteOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteOptions")
            .field("if_match", &self.if_match)
            .field("condition", &self.condition.map(|_| "<predicate>"))
            .finish()
    }
}

impl WriteOptions<'_> {
    /// Only if the item's etag is `etag`.
    pub fn if_match(etag: impl Into<String>) -> Self {
        WriteOptions { if_match: Some(etag.into()), condition: None }
    }
}

/// One operation of a transactional batch.
#[derive(Debug, Clone)]
pub enum BatchOperation {
    Create { item: Value },
    Upsert { item: Value, if_match: Option<String> },
    Replace { id: String, item: Value, if_match: Option<String> },
    Delete { id: String, if_match: Option<String> },
    Read { id: String },
    Patch { id: String, operations: Vec<PatchOperation>, if_match: Option<String> },
}

/// A batch that failed: which operation failed and why. Nothing of the batch was applied.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchError {
    /// Index of the failed operation (the others report 424 Failed Dependency in Cosmos DB).
    pub index: usize,
    pub error: StorageError,
}

impl std::fmt::Display for BatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "batch operation {} failed, nothing was applied: {}", self.index, self.error)
    }
}

impl std::error::Error for BatchError {}

/// Where a physical partition sits and how full it is.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionInfo {
    /// The partition key range id (`"0"`, `"1"`, ... as Cosmos numbers them).
    pub id: u32,
    pub min: Epk,
    pub max: Epk,
    pub items: usize,
    pub bytes: u64,
    pub logical_partitions: usize,
}

/// A physical partition: the items of the logical partitions whose EPK is in `[min, max)`.
#[derive(Debug)]
pub struct PhysicalPartition {
    id: u32,
    min: Epk,
    max: Epk,
    data: RwLock<PartitionData>,
}

impl PhysicalPartition {
    /// Whether sorted EPK ranges hold the whole partition (its entries need no range check).
    fn within(&self, ranges: &[(Epk, Epk)]) -> bool {
        ranges.iter().any(|(min, max)| *min <= self.min && *max >= self.max)
    }
}

#[derive(Debug)]
struct PartitionData {
    /// Set when a split moved this partition's data away; holders look the partition up again.
    retired: bool,
    logical: BTreeMap<Epk, LogicalPartition>,
    items: usize,
    bytes: u64,
    /// The indexes of the items, updated with every write under the same lock.
    index: PartitionIndex,
    /// Writes so far (an index transformation checks that none happened while it built).
    writes: u64,
    /// The change feed: each live item's last write by its LSN (assigned under this partition's
    /// write lock, so in commit order), as its logical partition's EPK (the logical partition's
    /// own copy, shared) and its sequence number: 16 bytes an item where an EPK and an id took 72.
    /// Built from the items by the change feed's first read of the partition, and kept by every
    /// write after that (`changes.get_mut()`); until then writes skip it (see
    /// [`PartitionData::changes`]).
    changes: OnceLock<BTreeMap<u64, (Arc<Epk>, u64)>>,
    /// With a change feed retention: every write within it, by LSN.
    history: BTreeMap<u64, Change>,
    /// In a durable store: the changes of the write under way, logged when it commits.
    pending: Vec<Pending>,
}

impl PartitionData {
    fn new(policy: Arc<IndexingPolicy>) -> Self {
        PartitionData {
            retired: false,
            logical: BTreeMap::new(),
            items: 0,
            bytes: 0,
            index: PartitionIndex::new(policy),
            writes: 0,
            changes: OnceLock::new(),
            history: BTreeMap::new(),
            pending: Vec::new(),
        }
    }

    /// The change feed's map of live items by LSN. It is what the items say (each one's last
    /// LSN, its logical partition and sequence number), so it is built from them when first
    /// read, in one pass and with full B-tree nodes: a bulk import, a replay or a split does not
    /// pay for it item by item, and a store whose change feed is never read never holds it.
    /// (Entered one by one with growing LSNs, the tree splits at its right edge and its nodes
    /// stay half full: about 50 bytes an item, 40-50 MB of 1,000,000 items' peak.)
    fn changes(&self) -> &BTreeMap<u64, (Arc<Epk>, u64)> {
        self.changes.get_or_init(|| {
            let mut entries: Vec<(u64, (Arc<Epk>, u64))> = Vec::with_capacity(self.items);
            for lp in self.logical.values() {
                entries.extend(lp.iter_from(0).map(|item| (item.meta.lsn, (Arc::clone(&lp.epk), item.meta.seq))));
            }
            entries.sort_unstable_by_key(|(lsn, _)| *lsn);
            // From sorted entries, `collect` builds the tree bottom-up.
            entries.into_iter().collect()
        })
    }

    /// A fresh index of the items for `policy`.
    fn build_index(&self, policy: Arc<IndexingPolicy>) -> PartitionIndex {
        PartitionIndex::build(
            policy,
            self.logical.iter().flat_map(|(epk, lp)| lp.iter_from(0).map(move |item| (epk, item))),
        )
    }

    /// Whether the index must be (re)built for `policy`.
    fn index_is_stale(&self, policy: &Arc<IndexingPolicy>) -> bool {
        !self.index.is_live() || !Arc::ptr_eq(self.index.policy(), policy)
    }
}

/// An item validated and keyed, ready to be written.
pub(crate) struct Prepared {
    doc: Doc,
    id: Arc<str>,
    key: PartitionKey,
    epk: Epk,
    /// The item's `ttl` property, when a time to live (see `ItemMeta::ttl`).
    ttl: Option<i32>,
}

/// What to do to take a write back (batches roll back with these).
#[derive(Debug, Clone)]
enum Undo {
    Inserted { epk: Epk, id: Arc<str> },
    Replaced { epk: Epk, id: Arc<str>, old: StoredItem },
    Deleted { epk: Epk, key: PartitionKey, id: Arc<str>, old: StoredItem },
}

impl Undo {
    /// What takes back the insert of `prep` (made only for a write that may be taken back: a
    /// batch's, a logged one's).
    fn inserted(prep: &Prepared) -> Undo {
        Undo::Inserted { epk: prep.epk.clone(), id: Arc::clone(&prep.id) }
    }
}

/// A container of items with one partition key definition.
#[derive(Debug)]
pub struct Container {
    id: String,
    rid: u32,
    database_rid: u32,
    definition: PartitionKeyDefinition,
    settings: ContainerSettings,
    partitions: RwLock<Vec<Arc<PhysicalPartition>>>,
    next_partition_id: AtomicU64,
    next_seq: AtomicU64,
    next_lsn: AtomicU64,
    splits: AtomicU64,
    /// What its items' system properties take from it (`_rid`, `_self`).
    names: Arc<ItemNames>,
    /// Which paths are indexed (replaceable while the container is in use).
    indexing_policy: RwLock<Arc<IndexingPolicy>>,
    /// Changes with the indexing policy; unique among containers (see [`Container::plan_epoch`]).
    plan_epoch: AtomicU64,
    /// Provisioned throughput, when the container has its own (dedicated).
    throughput: RwLock<Option<Arc<Throttle>>>,
    /// Its database's throughput, when the database has some and the container none of its own.
    shared_throughput: RwLock<Option<Arc<Throttle>>>,
    /// Where `_ts` and time to live take the time from.
    clock: RwLock<Arc<dyn Clock>>,
    /// When the container was created, in Unix seconds: its own `_ts`.
    created: u64,
    /// The default time to live (`defaultTtl`; `None`: off).
    default_ttl: RwLock<Option<i64>>,
    /// The analytical store's time to live (`mirror.rs`).
    analytical_ttl: RwLock<Option<i64>>,
    /// Its user-defined functions, stored procedures and triggers (`scripts.rs`).
    scripts: RwLock<scripts::Scripts>,
    /// Items that may expire, by when: (expiry, EPK, id). Entries go stale when their item is
    /// written again or deleted; they are checked when they come due.
    expiry: Mutex<BTreeSet<(u64, Epk, Arc<str>)>>,
    /// Items removed because their time to live passed.
    expired: AtomicU64,
    /// The earliest expiry queued (Unix seconds; `u64::MAX`: none), read without a lock.
    next_expiry: AtomicU64,
    /// In a durable store: its log.
    journal: OnceLock<Journal>,
    /// Held while a checkpoint copies the container's partitions into the log, so that none
    /// splits under it (writes go on meanwhile; a split that finds it held is left for a later
    /// write, a split asked for waits).
    layout: Mutex<()>,
}

thread_local! {
    /// Set while this thread imports in bulk: its writes are synced once, at the end.
    static BULK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// While it lives, this thread's writes are logged but not synced one by one (an import syncs
/// once at its end, [`Container::sync_log`]).
pub(crate) struct Bulk(());

impl Bulk {
    pub(crate) fn start() -> Bulk {
        BULK.set(true);
        Bulk(())
    }
}

impl Drop for Bulk {
    fn drop(&mut self) {
        BULK.set(false);
    }
}

/// The next plan epoch, shared by every container of the process.
static NEXT_PLAN_EPOCH: AtomicU64 = AtomicU64::new(1);

impl Container {
    /// A new, empty container.
    pub fn new(id: impl Into<String>, definition: PartitionKeyDefinition, settings: ContainerSettings) -> Self {
        Self::with_rids(id, definition, settings, 1, 1)
    }

    pub(crate) fn with_rids(
        id: impl Into<String>,
        definition: PartitionKeyDefinition,
        settings: ContainerSettings,
        database_rid: u32,
        rid: u32,
    ) -> Self {
        // A container without a key has one logical partition, so one physical partition. Settings
        // out of range are clamped here ([`ContainerSettings::validate`] reports them as errors).
        let n = if definition.is_none() { 1 } else { settings.initial_partitions.clamp(1, MAX_INITIAL_PARTITIONS) };
        let bounds = cosmoql_catalog::epk::split_space(n);
        let settings_ttl = settings.default_ttl;
        let policy = Arc::new(IndexingPolicy::default());
        let partitions = bounds
            .windows(2)
            .enumerate()
            .map(|(i, w)| {
                Arc::new(PhysicalPartition {
                    id: i as u32,
                    min: w[0].clone(),
                    max: w[1].clone(),
                    data: RwLock::new(PartitionData::new(Arc::clone(&policy))),
                })
            })
            .collect::<Vec<_>>();
        Container {
            id: id.into(),
            rid,
            database_rid,
            definition,
            settings,
            next_partition_id: AtomicU64::new(partitions.len() as u64),
            partitions: RwLock::new(partitions),
            next_seq: AtomicU64::new(1),
            next_lsn: AtomicU64::new(1),
            splits: AtomicU64::new(0),
            names: Arc::new(ItemNames::new(database_rid, rid)),
            indexing_policy: RwLock::new(policy),
            plan_epoch: AtomicU64::new(NEXT_PLAN_EPOCH.fetch_add(1, Ordering::Relaxed)),
            throughput: RwLock::new(None),
            shared_throughput: RwLock::new(None),
            clock: RwLock::new(Arc::new(SystemClock::default())),
            created: SystemClock::default().unix_seconds(),
            default_ttl: RwLock::new(settings_ttl),
            analytical_ttl: RwLock::new(None),
            scripts: RwLock::new(scripts::Scripts::default()),
            expiry: Mutex::new(BTreeSet::new()),
            expired: AtomicU64::new(0),
            next_expiry: AtomicU64::new(u64::MAX),
            journal: OnceLock::new(),
            layout: Mutex::new(()),
        }
    }

    /// Provisions dedicated throughput (split across the container's physical partitions), or
    /// removes it (`None`: the database's shared throughput if any, else unlimited). In a durable
    /// store, [`Container::persist_properties`] makes it (and any change to the throttle's offer)
    /// durable; the facade's provisioning calls do.
    pub fn set_throughput(&self, throttle: Option<Arc<Throttle>>) {
        *self.throughput.write() = throttle;
    }

    /// Joins (or leaves, `None`) its database's shared throughput; a dedicated throughput, when
    /// the container has one, stays in force.
    pub fn set_shared_throughput(&self, throttle: Option<Arc<Throttle>>) {
        *self.shared_throughput.write() = throttle;
    }

    /// The throughput in force: the container's own, else its database's shared one.
    pub fn throughput(&self) -> Option<Arc<Throttle>> {
        self.throughput.read().clone().or_else(|| self.shared_throughput.read().clone())
    }

    // ---- time: `_ts` and time to live ----------------------------------------------------------

    /// Takes `_ts` and time to live from `clock` (tests use a manual clock).
    pub fn set_clock(&self, clock: Arc<dyn Clock>) {
        *self.clock.write() = clock;
    }

    /// Now, in Unix seconds, by the container's clock.
    pub fn clock_now(&self) -> u64 {
        self.clock.read().unix_seconds()
    }

    /// Whether the container has throughput of its own (dedicated).
    pub fn has_own_throughput(&self) -> bool {
        self.throughput.read().is_some()
    }

    /// Whether the throughput in force is the database's, shared with its other containers.
    pub fn throughput_is_shared(&self) -> bool {
        self.throughput.read().is_none() && self.shared_throughput.read().is_some()
    }

    /// The ids of the physical partitions, in EPK order.
    pub fn partition_ids(&self) -> Vec<u32> {
        self.partitions.read().iter().map(|p| p.id).collect()
    }

    /// The throttle buckets that serve the physical partitions `ids`, and how many buckets share
    /// the offer: under dedicated throughput, the partitions themselves; under a database's
    /// shared throughput, the database's physical partitions (one per 10,000 RU/s of the offer,
    /// each owning an equal slice of the key space) whose range holds each partition's start.
    pub fn throughput_buckets(&self, throttle: &Throttle, ids: &[u32]) -> (Vec<u32>, usize) {
        if !self.throughput_is_shared() {
            return (ids.to_vec(), self.partition_count());
        }
        let n = throttle.shared_partitions();
        let bounds = cosmoql_catalog::epk::split_space(n);
        let map = self.partitions.read();
        let mut slots: Vec<u32> = map
            .iter()
            .filter(|p| ids.contains(&p.id))
            .map(|p| bounds.windows(2).position(|w| p.min >= w[0] && p.min < w[1]).unwrap_or(0) as u32)
            .collect();
        slots.sort_unstable();
        slots.dedup();
        (slots, n)
    }

    /// Admits a request that reads or writes the physical partitions `ids` under the throughput
    /// in force (always, without one), or refuses it (429) with how long to wait.
    pub fn admit(&self, ids: &[u32]) -> Result<()> {
        let Some(throttle) = self.throughput() else { return Ok(()) };
        let (buckets, n) = self.throughput_buckets(&throttle, ids);
        buckets.iter().try_for_each(|b| throttle.admit(*b, n))
    }

    /// [`Container::admit`] for the partitions `partitions` lists (asked again on each attempt),
    /// retrying refusals per `retry` on `throttle`'s clock, as the SDKs do; the partitions
    /// admitted and how many retries it took.
    pub fn admit_retrying(
        &self,
        throttle: &Throttle,
        retry: crate::throughput::RetryOptions,
        partitions: impl Fn() -> Result<Vec<u32>>,
    ) -> Result<(Vec<u32>, u32)> {
        crate::throughput::admission::admit_with_retries(|ids| self.admit(ids), &**throttle.clock(), retry, partitions)
    }

    /// Charges `ru` to the physical partition `id` (and to the logical partition `key`'s account
    /// for the kind of request).
    pub fn consume(&self, id: u32, ru: f64, key: Option<(&str, crate::throughput::RequestKind)>) {
        let Some(throttle) = self.throughput() else { return };
        let (buckets, n) = self.throughput_buckets(&throttle, &[id]);
        if let Some(b) = buckets.first() {
            throttle.consume(*b, n, ru, key);
        }
    }

    /// Every logical partition: its physical partition, key, items and bytes.
    pub fn logical_partition_sizes(&self) -> Vec<(u32, PartitionKey, u64, u64)> {
        let map = self.partitions.read();
        let mut out = Vec::new();
        for p in map.iter() {
            let data = p.data.read();
            for lp in data.logical.values() {
                out.push((p.id, lp.key.clone(), lp.len() as u64, lp.bytes));
            }
        }
        out
    }

    /// The largest a logical partition may grow, in bytes.
    pub fn logical_partition_cap(&self) -> u64 {
        self.settings.logical_partition_max_bytes
    }

    /// The id of the physical partition holding `key`'s items.
    pub fn partition_of_key(&self, key: &PartitionKey) -> Result<u32> {
        let epk = self.key_epk(key)?;
        let map = self.partitions.read();
        Ok(map[Self::index_for(&map, &epk)].id)
    }

    /// The id of the physical partition an item would be written to, and its partition key.
    pub fn partition_of_item(&self, item: &Value) -> Result<(u32, PartitionKey)> {
        let prep = self.prepare_value(item)?;
        let map = self.partitions.read();
        Ok((map[Self::index_for(&map, &prep.epk)].id, prep.key))
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn partition_key(&self) -> &PartitionKeyDefinition {
        &self.definition
    }

    pub fn settings(&self) -> &ContainerSettings {
        &self.settings
    }

    /// How many splits happened so far.
    pub fn split_count(&self) -> u64 {
        self.splits.load(Ordering::Relaxed)
    }

    /// A number unique among the containers of the process that changes whenever the container's
    /// indexing policy does: what a query's plan depends on besides the query (the partition key
    /// definition never changes), so plans are cached under it.
    pub fn plan_epoch(&self) -> u64 {
        self.plan_epoch.load(Ordering::Relaxed)
    }

    /// The indexing policy now.
    pub fn indexing_policy(&self) -> Arc<IndexingPolicy> {
        Arc::clone(&self.indexing_policy.read())
    }

    /// Replaces the indexing policy (in a durable store, [`Container::persist_properties`] logs
    /// it; the facade's `replace_indexing_policy` does). Queries planned afterwards follow it at once for what they
    /// may do (ORDER BY's index rules) and for paths it no longer indexes; paths it adds serve
    /// queries only once the index transformation ([`Container::transform_indexes`]) has rebuilt
    /// each partition's index. Until then those partitions answer by scanning: results stay
    /// exact. An empty container is transformed at once.
    pub fn replace_indexing_policy(&self, policy: IndexingPolicy) {
        *self.indexing_policy.write() = Arc::new(policy);
        self.plan_epoch.store(NEXT_PLAN_EPOCH.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        if self.item_count() == 0 {
            self.transform_indexes(usize::MAX);
        }
    }

    /// Index transformation: rebuilds the indexes of up to `max_partitions` physical partitions
    /// still built for an older policy, and returns the progress in percent (100: every
    /// partition's index follows the current policy).
    ///
    /// Each index is built from a snapshot of the partition's items without holding its lock,
    /// then swapped in if no write happened meanwhile (after a few tries, it is built under the
    /// write lock), so reads and writes go on during a transformation.
    pub fn transform_indexes(&self, max_partitions: usize) -> u8 {
        let mut left = max_partitions;
        while left > 0 {
            let policy = self.indexing_policy();
            let stale: Vec<Arc<PhysicalPartition>> = self
                .partitions
                .read()
                .iter()
                .filter(|p| p.data.read().index_is_stale(&policy))
                .take(left)
                .cloned()
                .collect();
            if stale.is_empty() {
                break;
            }
            left -= stale.len();
            // Partitions are independent: build several at once.
            let next = std::sync::atomic::AtomicUsize::new(0);
            let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(stale.len());
            std::thread::scope(|scope| {
                for _ in 0..workers {
                    scope.spawn(|| {
                        while let Some(p) = stale.get(next.fetch_add(1, Ordering::Relaxed)) {
                            self.transform_partition(p, &policy);
                        }
                    });
                }
            });
        }
        self.index_transformation_progress()
    }

    /// Stops maintaining the indexes (a bulk import): queries scan until
    /// [`Container::transform_indexes`] rebuilds them, in bulk, which is faster than entering
    /// items one by one.
    pub fn suspend_indexes(&self) {
        for p in self.partitions.read().iter() {
            let mut data = p.data.write();
            let policy = Arc::clone(data.index.policy());
            data.index = PartitionIndex::suspended(policy);
        }
    }

    fn transform_partition(&self, p: &PhysicalPartition, policy: &Arc<IndexingPolicy>) {
        for _ in 0..3 {
            let (snapshot, writes) = {
                let data = p.data.read();
                if data.retired {
                    return;
                }
                let items: Vec<(Epk, StoredItem)> = data
                    .logical
                    .iter()
                    .flat_map(|(epk, lp)| lp.iter_from(0).map(move |item| (epk.clone(), item.clone())))
                    .collect();
                (items, data.writes)
            };
            let index = PartitionIndex::build(Arc::clone(policy), snapshot.iter().map(|(epk, item)| (epk, item)));
            let mut data = p.data.write();
            if data.retired {
                return;
            }
            if data.writes == writes {
                data.index = index;
                return;
            }
        }
        let mut data = p.data.write();
        if !data.retired {
            data.index = data.build_index(Arc::clone(policy));
        }
    }

    /// How far the index transformation is, in percent of the physical partitions whose index
    /// follows the current policy.
    pub fn index_transformation_progress(&self) -> u8 {
        let policy = self.indexing_policy();
        let map = self.partitions.read();
        let current = map.iter().filter(|p| !p.data.read().index_is_stale(&policy)).count();
        (current * 100 / map.len().max(1)) as u8
    }

    /// The sizes of the indexes, summed over the partitions (with the orders logical partitions
    /// keep for pinned ORDER BY walks in the bytes).
    pub fn index_stats(&self) -> IndexStats {
        let mut stats = IndexStats::default();
        for p in self.partitions.read().iter() {
            let data = p.data.read();
            stats += data.index.stats();
            stats.bytes += data.logical.values().map(|lp| lp.orders.lock().heap_bytes() as u64).sum::<u64>();
        }
        stats
    }

    /// Checks that every partition's index equals one rebuilt from its items (for tests and
    /// tools, like a database's integrity check); the error names the first difference.
    pub fn check_indexes(&self) -> std::result::Result<(), String> {
        for p in self.partitions.read().iter() {
            let data = p.data.read();
            if !data.index.is_live() {
                continue;
            }
            let mut rebuilt = PartitionIndex::new(Arc::clone(data.index.policy()));
            for (epk, lp) in &data.logical {
                for item in lp.iter_from(0) {
                    rebuilt.insert(epk, item);
                }
            }
            let bulk = data.build_index(Arc::clone(data.index.policy()));
            if bulk.dump() != rebuilt.dump() {
                return Err(format!("partition {}: a bulk build differs from entering the items one by one", p.id));
            }
            let (have, want) = (data.index.dump(), rebuilt.dump());
            if have != want {
                let first = have.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(have.len().min(want.len()));
                return Err(format!(
                    "partition {}: index has {} entries, a rebuild {}; first difference at {first}: {:?} vs {:?}",
                    p.id,
                    have.len(),
                    want.len(),
                    have.get(first),
                    want.get(first)
                ));
            }
            if data.index.items() != data.items {
                return Err(format!(
                    "partition {}: index locates {} items of {}",
                    p.id,
                    data.index.items(),
                    data.items
                ));
            }
        }
        Ok(())
    }

    /// The container's resource id (`_rid`) as text.
    pub fn rid_text(&self) -> String {
        rid_text(collection_rid(self.database_rid, self.rid))
    }

    /// The container's self link: `dbs/<database _rid>/colls/<_rid>/`.
    pub fn self_link(&self) -> String {
        format!("dbs/{}/colls/{}/", rid_text(Rid::Database { database: self.database_rid }), self.rid_text())
    }

    // ---- partitions ----------------------------------------------------------------------------

    /// The physical partitions now, in EPK order.
    pub fn partitions(&self) -> Vec<PartitionInfo> {
        self.partitions
            .read()
            .iter()
            .map(|p| {
                let d = p.data.read();
                PartitionInfo {
                    id: p.id,
                    min: p.min.clone(),
                    max: p.max.clone(),
                    items: d.items,
                    bytes: d.bytes,
                    logical_partitions: d.logical.len(),
                }
            })
            .collect()
    }

    /// The physical partitions whose EPK range overlaps one of `ranges` (sorted `[min, max)`), as
    /// `(id, min, max)` in EPK order. Only the partition map is read: no partition is locked.
    pub fn partitions_overlapping(&self, ranges: &[(Epk, Epk)]) -> Vec<(u32, Epk, Epk)> {
        let map = self.partitions.read();
        // The whole space (a query that fans out): every partition, without comparing EPKs.
        if let [(min, max)] = ranges {
            if min.significant_bytes().is_empty() && *max == Epk::max() {
                return map.iter().map(|p| (p.id, p.min.clone(), p.max.clone())).collect();
            }
        }
        let mut out: Vec<(u32, Epk, Epk)> = Vec::new();
        for (min, max) in ranges {
            let first = Self::index_for(&map, min);
            for p in map[first..].iter().take_while(|p| p.min < *max) {
                if out.last().is_none_or(|last| last.0 != p.id) && p.max > *min {
                    out.push((p.id, p.min.clone(), p.max.clone()));
                }
            }
        }
        // One range's partitions come in EPK order, each once.
        if ranges.len() > 1 {
            out.sort_by(|a, b| a.1.cmp(&b.1));
            out.dedup_by(|a, b| a.0 == b.0);
        }
        out
    }

    /// Number of physical partitions now.
    pub fn partition_count(&self) -> usize {
        self.partitions.read().len()
    }

    /// Number of items in the container.
    pub fn item_count(&self) -> usize {
        self.partitions.read().iter().map(|p| p.data.read().items).sum()
    }

    /// Index of the partition holding `epk`: the last one whose min is <= epk (the ranges cover
    /// ["", "FF") without gaps).
    fn index_for(map: &[Arc<PhysicalPartition>], epk: &Epk) -> usize {
        map.partition_point(|p| p.min <= *epk).saturating_sub(1)
    }

    /// Runs `f` on the partition holding `epk`, then splits it if it grew past the thresholds.
    ///
    /// The map's read lock is held while `f` runs: splits take the map's write lock, so the
    /// partition cannot be split (retired) under `f`, and no reference count is touched on the
    /// hot path. Nothing that holds a partition lock ever waits for the map's write lock.
    ///
    /// In a durable store, the write's changes are logged before the partition's lock is released
    /// (a write the log refuses is taken back and fails), and the write returns once the log is
    /// synced (see [`crate::wal`]).
    fn write_partition<R>(&self, epk: &Epk, f: impl FnOnce(&mut PartitionData) -> Result<R>) -> Result<R> {
        let gate = self.journal().map(|j| j.durable.gate());
        let (result, to_split, logged) = {
            let map = self.partitions.read();
            let p = &map[Self::index_for(&map, epk)];
            let mut data = p.data.write();
            data.writes += 1;
            let kept_history = data.history.last_key_value().map_or(0, |(lsn, _)| *lsn);
            let result = match f(&mut data) {
                Ok(r) => r,
                Err(e) => {
                    data.pending.clear();
                    return Err(e);
                }
            };
            let logged = self.commit_pending(&mut data, gate.as_deref().map(|log| &**log), kept_history)?;
            let split = self.over_threshold(&data) && data.logical.len() > 1;
            (result, split.then(|| Arc::clone(p)), logged)
        };
        // The gate is let go before anything else takes it again (a sync's checkpoint, a split).
        let log = gate.as_deref().cloned();
        drop(gate);
        if let (Some(end), Some(log)) = (logged, log) {
            if let Some(journal) = self.journal().filter(|_| !BULK.get()) {
                journal.durable.sync(&log, end)?;
            }
        }
        if let Some(p) = to_split {
            self.split(&p);
        }
        Ok(result)
    }

    /// Holds off checkpoints while a change is made and logged (`None`: not durable).
    fn gate(&self) -> Option<crate::durable::Gate<'_>> {
        self.journal().map(|j| j.durable.gate())
    }

    fn read_partition<R>(&self, epk: &Epk, f: impl Fn(&PartitionData) -> R) -> R {
        let map = self.partitions.read();
        let data = map[Self::index_for(&map, epk)].data.read();
        f(&data)
    }

    // ---- items ---------------------------------------------------------------------------------

    // ---- the write primitives (under the partition's write lock) --------------------------------

    // ---- batches -------------------------------------------------------------------------------

    // ---- scans ---------------------------------------------------------------------------------
}

const SCAN_CHUNK: usize = 1024;

/// Index entries `(key, sequence number, location)` of a partition as `(key, position, item)`,
/// appended to `out`; entries of items gone meanwhile are skipped.
fn located<K>(data: &PartitionData, entries: Vec<(K, u64, &Epk)>, out: &mut OrderedEntries<K>) {
    for (key, seq, epk) in entries {
        let Some(item) = data.logical.get(epk).and_then(|lp| lp.get_seq(seq)) else { continue };
        out.push((key, ItemPosition { epk: epk.clone(), seq }, item.clone()));
    }
}

/// Whether `epk` is in one of the sorted, disjoint `[min, max)` ranges.
fn in_ranges(ranges: &[(Epk, Epk)], epk: &Epk) -> bool {
    let i = ranges.partition_point(|(min, _)| min <= epk);
    i > 0 && *epk < ranges[i - 1].1
}

fn existing(data: &PartitionData, epk: &Epk, id: &str) -> Option<StoredItem> {
    data.logical.get(epk).and_then(|lp| lp.get(id)).cloned()
}

fn check_etag(item: &StoredItem, options: &WriteOptions<'_>) -> Result<()> {
    match &options.if_match {
        Some(expected) if *expected != item.meta.etag() => Err(StorageError::new(
            ErrorKind::PreconditionFailed,
            format!("the item's etag is {}, not {expected}", item.meta.etag()),
        )),
        _ => Ok(()),
    }
}

fn not_found(key: &PartitionKey, id: &str) -> StorageError {
    StorageError::not_found(format!("no item with id `{id}` in logical partition {key}"))
}

fn partition_full(key: &PartitionKey, used: u64, adding: u64, cap: u64) -> StorageError {
    StorageError::new(
        ErrorKind::PartitionFull,
        format!("logical partition {key} holds {used} bytes; adding {adding} would pass its cap of {cap} bytes"),
    )
}

/// Cosmos DB's id rules: 1 to 1,023 bytes, none of `/ \ ? #`.
pub fn validate_id(id: &str) -> Result<()> {
    if id.is_empty() {
        return Err(StorageError::bad_request("the item's id is empty"));
    }
    if id.len() > MAX_ID_BYTES {
        return Err(StorageError::bad_request(format!(
            "the item's id is {} bytes; the limit is {MAX_ID_BYTES}",
            id.len()
        )));
    }
    // The four are ASCII: looking at bytes finds them.
    if let Some(c) = id.bytes().find(|c| matches!(c, b'/' | b'\\' | b'?' | b'#')) {
        let c = char::from(c);
        return Err(StorageError::bad_request(format!("the item's id contains `{c}`, which ids cannot hold")));
    }
    Ok(())
}

fn check_size(doc: &Doc) -> Result<()> {
    // JSON can be up to 6 times the encoded size (`\u0001` escapes); below that bound no JSON
    // text is needed to know the item fits.
    if doc.len() * 6 <= MAX_ITEM_BYTES {
        return Ok(());
    }
    let json = doc.to_json_string().map_or(0, |s| s.len());
    if json > MAX_ITEM_BYTES {
        return Err(StorageError::new(
            ErrorKind::TooLarge,
            format!("the item is {json} bytes of JSON; the limit is {MAX_ITEM_BYTES}"),
        ));
    }
    Ok(())
}

/// A container's resource id in the service's layout (see `cosmoql_catalog::rid`).
fn collection_rid(database_rid: u32, rid: u32) -> Rid {
    Rid::Collection { database: database_rid, collection: collection_id(rid) }
}

/// The text of a rid the store minted (in range by construction: containers are numbered below
/// [`cosmoql_catalog::rid::MAX_COLLECTIONS`], items below [`cosmoql_catalog::rid::MAX_CHILD`]).
fn rid_text(rid: Rid) -> String {
    rid.encode().unwrap_or_default()
}
