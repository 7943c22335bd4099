//! A container: physical partitions over EPK ranges, logical partitions inside them, item
//! operations, transactional batches and scans.
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
use std::sync::Arc;

use cosmoql_value::{Map, Value};
use parking_lot::{Mutex, RwLock};

use crate::doc::{Doc, SYSTEM_PROPERTIES};
use crate::epk::Epk;
use crate::error::{ErrorKind, Result, StorageError};
use crate::index::{IndexKey, IndexProbe, IndexStats, IndexWork, PartitionIndex};
use crate::indexing::{IndexStep, IndexingPolicy};
pub use crate::item::{ItemMeta, StoredItem};
use crate::partition_key::{PartitionKey, PartitionKeyDefinition};
use crate::patch::{apply_patch, PatchOperation};
use crate::throughput::{Clock, SystemClock, Throttle};

mod persist;
pub(crate) use persist::Journal;
use persist::{Entry, Pending};

/// Cosmos DB's item size limit (2 MB of JSON).
pub const MAX_ITEM_BYTES: usize = 2 * 1024 * 1024;
/// Cosmos DB's id length limit, in UTF-8 bytes.
pub const MAX_ID_BYTES: usize = 1023;
/// Cosmos DB's logical partition size cap (20 GB).
pub const DEFAULT_LOGICAL_PARTITION_MAX_BYTES: u64 = 20 * 1024 * 1024 * 1024;
/// Operations per transactional batch.
pub const MAX_BATCH_OPERATIONS: usize = 100;
/// Items per physical partition at creation, for the default initial partition count.
pub const ITEMS_PER_INITIAL_PARTITION: usize = 10_000;

/// Sizing and splitting knobs of a container.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerSettings {
    /// Physical partitions at creation (default: 1 per 10,000 expected items, at least 1).
    pub initial_partitions: usize,
    /// A physical partition splits when it holds more items than this...
    pub split_max_items: usize,
    /// ...or more bytes (encoded item size) than this.
    pub split_max_bytes: u64,
    /// A write that would grow a logical partition past this many bytes fails with 403.
    pub logical_partition_max_bytes: u64,
    /// The unique key policy (set at creation only): each key's paths take a combination of
    /// values at most one item per logical partition may have.
    pub unique_keys: Vec<UniqueKey>,
    /// The default time to live (`defaultTtl`): `None` off, `-1` on without a default, `n` seconds.
    pub default_ttl: Option<i64>,
    /// The change feed's all-versions-and-deletes retention (`changeFeedPolicy.retentionDuration`,
    /// here in seconds): every create, replace and delete is kept this long. `None`: off (only
    /// latest versions).
    pub change_feed_retention: Option<u64>,
}

/// What a write did, as the all-versions-and-deletes change feed reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeOperation {
    Create,
    Replace,
    Delete,
}

/// What [`Container::changes_in`] reads of one partition's change feed: items with their EPKs, and
/// the LSN read up to.
pub(crate) type PartitionChanges = (Vec<(StoredItem, Epk)>, u64);

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

/// One unique key of a container's unique key policy: the paths whose values together must be
/// unique within each logical partition (a missing value counts as null).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniqueKey {
    /// The paths as written (`/address/zipCode`).
    pub paths: Vec<String>,
    /// Each path's property names.
    segments: Vec<Vec<String>>,
}

impl UniqueKey {
    /// The keys of a `uniqueKeyPolicy` (`{"uniqueKeys": [{"paths": ["/a", "/b"]}]}`); 400 when it
    /// is malformed.
    pub fn policy_from_json(policy: &Value) -> Result<Vec<UniqueKey>> {
        let bad =
            || StorageError::bad_request("a uniqueKeyPolicy is {\"uniqueKeys\": [{\"paths\": [\"/path\", ...]}, ...]}");
        let keys = match policy.get("uniqueKeys") {
            Value::Undefined | Value::Null => return Ok(Vec::new()),
            Value::Array(keys) => keys,
            _ => return Err(bad()),
        };
        keys.iter()
            .map(|k| {
                let paths = k.get("paths");
                let paths = paths.as_array().ok_or_else(bad)?;
                let paths: Vec<&str> = paths.iter().map(|p| p.as_str().ok_or_else(bad)).collect::<Result<_>>()?;
                UniqueKey::new(&paths)
            })
            .collect()
    }

    /// A unique key of `paths` (each `/a/b`); 400 for a path that is not a plain property path.
    pub fn new(paths: &[&str]) -> Result<UniqueKey> {
        if paths.is_empty() {
            return Err(StorageError::bad_request("a unique key needs at least one path"));
        }
        let mut segments = Vec::with_capacity(paths.len());
        for path in paths {
            let parsed = crate::partition_key::PartitionKeyPath::parse(path)
                .map_err(|e| StorageError::bad_request(format!("unique key path `{path}`: {e}")))?;
            segments.push(parsed.segments().to_vec());
        }
        Ok(UniqueKey { paths: paths.iter().map(|p| p.to_string()).collect(), segments })
    }
}

/// The most unique keys a policy may have, and the most paths they may name together.
pub const MAX_UNIQUE_KEYS: usize = 10;
pub const MAX_UNIQUE_KEY_PATHS: usize = 16;
/// The longest time to live, in seconds.
pub const MAX_TTL: i64 = 2_147_483_647;

/// A 400 unless `ttl` is a valid time to live (`-1`, or 1 to 2,147,483,647 seconds); `what`
/// names it (`defaultTtl`, `ttl`).
pub fn validate_ttl(ttl: i64, what: &str) -> Result<()> {
    if ttl == -1 || (1..=MAX_TTL).contains(&ttl) {
        return Ok(());
    }
    Err(StorageError::bad_request(format!(
        "The input {what} '{ttl}' is invalid. Ensure to provide a nonzero positive integer less than or equal to \
         '{MAX_TTL}', or '-1' which means never expire."
    )))
}

impl Default for ContainerSettings {
    fn default() -> Self {
        ContainerSettings {
            initial_partitions: 1,
            split_max_items: 2 * ITEMS_PER_INITIAL_PARTITION,
            split_max_bytes: 64 * 1024 * 1024,
            logical_partition_max_bytes: DEFAULT_LOGICAL_PARTITION_MAX_BYTES,
            unique_keys: Vec::new(),
            default_ttl: None,
            change_feed_retention: None,
        }
    }
}

/// The most physical partitions a container starts with (it may split into more as it grows).
pub const MAX_INITIAL_PARTITIONS: usize = 10_000;

impl ContainerSettings {
    /// Settings for a container expected to hold `items` items: 1 physical partition per 10,000
    /// (at most [`MAX_INITIAL_PARTITIONS`]).
    pub fn for_expected_items(items: usize) -> Self {
        let partitions = (items / ITEMS_PER_INITIAL_PARTITION).clamp(1, MAX_INITIAL_PARTITIONS);
        ContainerSettings { initial_partitions: partitions, ..Self::default() }
    }

    /// A 400 unless the settings are usable: 1 to [`MAX_INITIAL_PARTITIONS`] initial partitions,
    /// split thresholds of at least 1.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_INITIAL_PARTITIONS).contains(&self.initial_partitions) {
            return Err(StorageError::bad_request(format!(
                "a container starts with 1 to {MAX_INITIAL_PARTITIONS} physical partitions, not {}",
                self.initial_partitions
            )));
        }
        if self.split_max_items == 0 || self.split_max_bytes == 0 {
            return Err(StorageError::bad_request("split thresholds must be at least 1"));
        }
        if self.unique_keys.len() > MAX_UNIQUE_KEYS
            || self.unique_keys.iter().map(|k| k.paths.len()).sum::<usize>() > MAX_UNIQUE_KEY_PATHS
        {
            return Err(StorageError::bad_request(format!(
                "a unique key policy has at most {MAX_UNIQUE_KEYS} unique keys and {MAX_UNIQUE_KEY_PATHS} paths in all"
            )));
        }
        if let Some(ttl) = self.default_ttl {
            validate_ttl(ttl, "defaultTtl")?;
        }
        Ok(())
    }
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

/// Classes of operations, by what they cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperationKind {
    Read,
    /// A new item (create, or an upsert that created).
    Create,
    /// A new version of an item (replace, patch, or an upsert of an existing item).
    Replace,
    Delete,
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
    /// write lock, so in commit order).
    changes: BTreeMap<u64, (Epk, Arc<str>)>,
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
            changes: BTreeMap::new(),
            history: BTreeMap::new(),
            pending: Vec::new(),
        }
    }

    /// The change feed entries of `logical`'s items.
    fn changes_of(logical: &BTreeMap<Epk, LogicalPartition>) -> BTreeMap<u64, (Epk, Arc<str>)> {
        let mut changes = BTreeMap::new();
        for (epk, lp) in logical {
            for (id, at) in &lp.ids {
                if let Some(Slot::Live(item)) = lp.slots.get(*at as usize) {
                    changes.insert(item.meta.lsn, (epk.clone(), Arc::clone(id)));
                }
            }
        }
        changes
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

/// A slot of a logical partition's item list.
#[derive(Debug)]
enum Slot {
    Live(StoredItem),
    /// A deleted item's place, kept until the next compaction so positions stay put.
    Dead(u64),
}

impl Slot {
    fn seq(&self) -> u64 {
        match self {
            Slot::Live(item) => item.meta.seq,
            Slot::Dead(seq) => *seq,
        }
    }
}

/// The items of one partition key value, in creation order: a slot vector (cache-friendly scans,
/// one lookup per point read) indexed by id.
#[derive(Debug)]
struct LogicalPartition {
    key: PartitionKey,
    /// Item ids to slot positions (foldhash: SipHash was the top cost of imports).
    ids: HashMap<Arc<str>, u32, foldhash::fast::RandomState>,
    /// Items by increasing creation sequence number (assigned under the partition's write lock).
    slots: Vec<Slot>,
    bytes: u64,
    /// Under a unique key policy: each item's unique values (see `Container::unique_values`) to
    /// its id.
    unique: HashMap<String, Arc<str>, foldhash::fast::RandomState>,
}

impl LogicalPartition {
    fn new(key: PartitionKey) -> Self {
        LogicalPartition { key, ids: HashMap::default(), slots: Vec::new(), bytes: 0, unique: HashMap::default() }
    }

    /// A 409 if another item than `id` holds one of `values`.
    fn check_unique(&self, id: &str, values: &[String]) -> Result<()> {
        if values.iter().any(|v| self.unique.get(v).is_some_and(|owner| &**owner != id)) {
            return Err(StorageError::conflict("Unique index constraint violation."));
        }
        Ok(())
    }

    fn unindex_unique(&mut self, values: &[String]) {
        for v in values {
            self.unique.remove(v);
        }
    }

    fn index_unique(&mut self, id: &Arc<str>, values: Vec<String>) {
        for v in values {
            self.unique.insert(v, Arc::clone(id));
        }
    }

    fn len(&self) -> usize {
        self.ids.len()
    }

    fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    fn get(&self, id: &str) -> Option<&StoredItem> {
        match self.slots.get(*self.ids.get(id)? as usize)? {
            Slot::Live(item) => Some(item),
            Slot::Dead(_) => None,
        }
    }

    /// The live item with this sequence number (items are in sequence order).
    fn get_seq(&self, seq: u64) -> Option<&StoredItem> {
        let at = self.slots.binary_search_by(|s| s.seq().cmp(&seq)).ok()?;
        match &self.slots[at] {
            Slot::Live(item) => Some(item),
            Slot::Dead(_) => None,
        }
    }

    fn contains(&self, id: &str) -> bool {
        self.ids.contains_key(id)
    }

    /// Appends a new item (its sequence number is the largest so far).
    fn push(&mut self, id: Arc<str>, item: StoredItem) {
        self.bytes += item.doc.len() as u64;
        self.ids.insert(id, self.slots.len() as u32);
        self.slots.push(Slot::Live(item));
    }

    /// Replaces a live item; returns the old one.
    fn replace(&mut self, id: &str, item: StoredItem) -> Option<StoredItem> {
        let slot = self.slots.get_mut(*self.ids.get(id)? as usize)?;
        let Slot::Live(old) = slot else { return None };
        self.bytes = self.bytes - old.doc.len() as u64 + item.doc.len() as u64;
        Some(std::mem::replace(old, item))
    }

    /// Removes a live item; returns its id and the item.
    fn remove(&mut self, id: &str) -> Option<(Arc<str>, StoredItem)> {
        let (id, index) = self.ids.remove_entry(id)?;
        let slot = self.slots.get_mut(index as usize)?;
        let seq = slot.seq();
        let Slot::Live(old) = std::mem::replace(slot, Slot::Dead(seq)) else { return None };
        self.bytes -= old.doc.len() as u64;
        let dead = self.slots.len() - self.ids.len();
        if dead > 32 && dead > self.ids.len() {
            self.compact();
        }
        Some((id, old))
    }

    /// Puts the items back in sequence order (and drops dead slots). Replaying a log can put
    /// them out of order: a write logged while a checkpoint was copying comes before the copy of
    /// the items created before it. Returns a sequence number two items share, if any (a
    /// damaged log: scans go by them).
    pub(super) fn sort_by_seq(&mut self) -> Option<u64> {
        if self.slots.windows(2).all(|w| w[0].seq() < w[1].seq()) {
            return None;
        }
        let mut live: Vec<StoredItem> = std::mem::take(&mut self.slots)
            .into_iter()
            .filter_map(|s| match s {
                Slot::Live(item) => Some(item),
                Slot::Dead(_) => None,
            })
            .collect();
        live.sort_by_key(|item| item.meta.seq);
        for (pos, item) in live.iter().enumerate() {
            if let Some(id) = item.doc.root().get("id").and_then(|v| v.as_str()) {
                if let Some(index) = self.ids.get_mut(id) {
                    *index = pos as u32;
                }
            }
        }
        let shared = live.windows(2).find(|w| w[0].meta.seq == w[1].meta.seq).map(|w| w[0].meta.seq);
        self.slots = live.into_iter().map(Slot::Live).collect();
        shared
    }

    /// Drops dead slots and renumbers positions.
    fn compact(&mut self) {
        let mut new_index = Vec::with_capacity(self.slots.len());
        let mut next = 0u32;
        for slot in &self.slots {
            new_index.push(next);
            if matches!(slot, Slot::Live(_)) {
                next += 1;
            }
        }
        self.slots.retain(|s| matches!(s, Slot::Live(_)));
        for index in self.ids.values_mut() {
            *index = new_index[*index as usize];
        }
    }

    /// Puts back an item removed earlier (a rolled-back delete), at its place in creation order.
    fn restore(&mut self, id: Arc<str>, item: StoredItem) {
        let seq = item.meta.seq;
        self.bytes += item.doc.len() as u64;
        let pos = self.slots.partition_point(|s| s.seq() < seq);
        if matches!(self.slots.get(pos), Some(Slot::Dead(s)) if *s == seq) {
            self.slots[pos] = Slot::Live(item);
        } else {
            self.slots.insert(pos, Slot::Live(item));
            for index in self.ids.values_mut() {
                if *index as usize >= pos {
                    *index += 1;
                }
            }
        }
        self.ids.insert(id, pos as u32);
    }

    /// Live items whose sequence number is at least `from`, in creation order.
    fn iter_from(&self, from: u64) -> impl Iterator<Item = &StoredItem> {
        let start = self.slots.partition_point(|s| s.seq() < from);
        self.slots[start..].iter().filter_map(|s| match s {
            Slot::Live(item) => Some(item),
            Slot::Dead(_) => None,
        })
    }
}

/// An item validated and keyed, ready to be written.
pub(crate) struct Prepared {
    doc: Doc,
    id: Arc<str>,
    key: PartitionKey,
    epk: Epk,
    /// The item's `ttl` property, when an integer.
    ttl: Option<i64>,
}

/// What to do to take a write back (batches roll back with these).
#[derive(Debug, Clone)]
enum Undo {
    Inserted { epk: Epk, id: Arc<str> },
    Replaced { epk: Epk, id: Arc<str>, old: StoredItem },
    Deleted { epk: Epk, key: PartitionKey, id: Arc<str>, old: StoredItem },
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
    /// `dbs/<db rid>/colls/<container rid>/docs/`, the prefix of every item's `_self`.
    self_prefix: String,
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
    /// The default time to live (`defaultTtl`; `None`: off).
    default_ttl: RwLock<Option<i64>>,
    /// Items that may expire, by when: (expiry, EPK, id). Entries go stale when their item is
    /// written again or deleted; they are checked when they come due.
    expiry: Mutex<BTreeSet<(u64, Epk, Arc<str>)>>,
    /// Items removed because their time to live passed.
    expired: AtomicU64,
    /// The earliest expiry queued (Unix seconds; `u64::MAX`: none), read without a lock.
    next_expiry: AtomicU64,
    /// In a durable store: its log.
    journal: std::sync::OnceLock<Journal>,
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
        let bounds = crate::epk::split_space(n);
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
            self_prefix: format!(
                "dbs/{}/colls/{}/docs/",
                base64(&database_rid.to_le_bytes()),
                base64(&rid_bytes(database_rid, rid))
            ),
            indexing_policy: RwLock::new(policy),
            plan_epoch: AtomicU64::new(NEXT_PLAN_EPOCH.fetch_add(1, Ordering::Relaxed)),
            throughput: RwLock::new(None),
            shared_throughput: RwLock::new(None),
            clock: RwLock::new(Arc::new(SystemClock::default())),
            default_ttl: RwLock::new(settings_ttl),
            expiry: Mutex::new(BTreeSet::new()),
            expired: AtomicU64::new(0),
            next_expiry: AtomicU64::new(u64::MAX),
            journal: std::sync::OnceLock::new(),
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

    /// The default time to live (`defaultTtl`): `None` off, `-1` on without a default, `n` seconds.
    pub fn default_ttl(&self) -> Option<i64> {
        *self.default_ttl.read()
    }

    /// Replaces the default time to live (400 for a value other than -1 or 1 to 2,147,483,647);
    /// every item's expiry follows at once.
    pub fn set_default_ttl(&self, ttl: Option<i64>) -> Result<()> {
        if let Some(ttl) = ttl {
            validate_ttl(ttl, "defaultTtl")?;
        }
        *self.default_ttl.write() = ttl;
        let mut due = BTreeSet::new();
        if ttl.is_some() {
            let map = self.partitions.read();
            for p in map.iter() {
                let data = p.data.read();
                for (epk, lp) in &data.logical {
                    for (id, at) in &lp.ids {
                        if let Some(Slot::Live(item)) = lp.slots.get(*at as usize) {
                            if let Some(when) = self.expires_at(&item.meta) {
                                due.insert((when, epk.clone(), Arc::clone(id)));
                            }
                        }
                    }
                }
            }
        }
        let next = due.first().map_or(u64::MAX, |(when, _, _)| *when);
        *self.expiry.lock() = due;
        self.next_expiry.store(next, Ordering::Relaxed);
        self.persist_properties()
    }

    /// When an item written with `meta` expires (Unix seconds), under the current default: its
    /// own `ttl` applies only while the container has time to live on; -1 never expires.
    fn expires_at(&self, meta: &ItemMeta) -> Option<u64> {
        let default = (*self.default_ttl.read())?;
        let ttl = meta.ttl.unwrap_or(default);
        (ttl > 0).then(|| meta.ts.saturating_add(ttl as u64))
    }

    /// Notes when an item just written expires.
    fn schedule_expiry(&self, epk: &Epk, id: &Arc<str>, meta: &ItemMeta) {
        if let Some(when) = self.expires_at(meta) {
            self.expiry.lock().insert((when, epk.clone(), Arc::clone(id)));
            self.next_expiry.fetch_min(when, Ordering::Relaxed);
        }
    }

    /// Removes what has expired, if anything may have (a load and a comparison otherwise).
    pub fn expire(&self) {
        let next = self.next_expiry.load(Ordering::Relaxed);
        if next != u64::MAX && self.clock.read().unix_seconds() >= next {
            self.purge_expired();
        }
    }

    /// Removes the items whose time to live has passed; returns how many. Reads, writes and
    /// queries call it first, so an expired item is never seen.
    pub fn purge_expired(&self) -> usize {
        let now = self.clock.read().unix_seconds();
        let mut purged = 0;
        loop {
            let due = {
                let mut queue = self.expiry.lock();
                match queue.first() {
                    Some((when, _, _)) if *when <= now => queue.pop_first(),
                    _ => None,
                }
            };
            let Some((_, epk, id)) = due else { break };
            // The entry may be stale: the item rewritten (a later expiry) or deleted.
            let removed = self.write_partition(&epk, |data| {
                let current = existing(data, &epk, &id).map(|item| item.meta);
                Ok(match current {
                    Some(meta) if self.expires_at(&meta).is_some_and(|w| w <= now) => {
                        self.apply_delete_at(data, &epk, &id, true, None).is_some()
                    }
                    _ => false,
                })
            });
            if removed.unwrap_or(false) {
                purged += 1;
            }
        }
        let next = self.expiry.lock().first().map_or(u64::MAX, |(when, _, _)| *when);
        self.next_expiry.store(next, Ordering::Relaxed);
        self.expired.fetch_add(purged as u64, Ordering::Relaxed);
        purged
    }

    /// The LSN of the last write so far (0 before any).
    pub fn last_lsn(&self) -> u64 {
        self.next_lsn.load(Ordering::Relaxed).saturating_sub(1)
    }

    /// The change feed of physical partition `id` after LSN `from`, in `[lo, hi)`, last written
    /// at or after `min_ts`: at most `room` items with their EPKs, and the LSN read up to. A
    /// partition gone since (split) gives nothing and keeps `from`: the next read finds its
    /// children.
    pub(crate) fn changes_in(
        &self,
        id: u32,
        (lo, hi): (&Epk, &Epk),
        from: u64,
        min_ts: Option<u64>,
        room: usize,
    ) -> PartitionChanges {
        let map = self.partitions.read();
        let Some(p) = map.iter().find(|p| p.id == id) else { return (Vec::new(), from) };
        let data = p.data.read();
        if data.retired || room == 0 {
            return (Vec::new(), from);
        }
        let mut items = Vec::new();
        let mut upto = from;
        for (lsn, (epk, item_id)) in data.changes.range(from.saturating_add(1)..) {
            upto = *lsn;
            if epk < lo || epk >= hi {
                continue;
            }
            let Some(item) = existing(&data, epk, item_id) else { continue };
            if min_ts.is_some_and(|t| item.meta.ts < t) {
                continue;
            }
            items.push((item, epk.clone()));
            if items.len() == room {
                break;
            }
        }
        (items, upto)
    }

    /// The kept writes of physical partition `id` after LSN `from`, in `[lo, hi)`, at or after
    /// `min_ts`: at most `room`, and the LSN read up to (see [`Self::changes_in`]).
    pub(crate) fn history_in(
        &self,
        id: u32,
        (lo, hi): (&Epk, &Epk),
        from: u64,
        min_ts: Option<u64>,
        room: usize,
    ) -> (Vec<(u64, Change)>, u64) {
        let map = self.partitions.read();
        let Some(p) = map.iter().find(|p| p.id == id) else { return (Vec::new(), from) };
        let data = p.data.read();
        if data.retired || room == 0 {
            return (Vec::new(), from);
        }
        let mut out = Vec::new();
        let mut upto = from;
        for (lsn, change) in data.history.range(from.saturating_add(1)..) {
            upto = *lsn;
            if change.epk < *lo || change.epk >= *hi || min_ts.is_some_and(|t| change.ts < t) {
                continue;
            }
            out.push((*lsn, change.clone()));
            if out.len() == room {
                break;
            }
        }
        (out, upto)
    }

    /// Items removed so far because their time to live passed.
    pub fn expired_count(&self) -> u64 {
        self.expired.load(Ordering::Relaxed)
    }

    /// Each unique key's values in `doc`, tagged with the key's place in the policy (a missing
    /// value counts as null).
    fn unique_values(&self, doc: &Doc) -> Vec<String> {
        self.settings
            .unique_keys
            .iter()
            .enumerate()
            .map(|(i, key)| {
                let mut text = format!("{i}:");
                for path in &key.segments {
                    let names: Vec<&str> = path.iter().map(String::as_str).collect();
                    match doc.root().path(&names) {
                        Some(v) => text.push_str(&v.to_json_string().unwrap_or_default()),
                        None => text.push_str("null"),
                    }
                    text.push('\u{1}');
                }
                text
            })
            .collect()
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
        let bounds = crate::epk::split_space(n);
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
                out.push((p.id, lp.key.clone(), lp.ids.len() as u64, lp.bytes));
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

    /// The container's properties in Cosmos DB's JSON form.
    pub fn properties(&self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), Value::from(self.id.as_str()));
        m.insert("indexingPolicy".into(), self.indexing_policy().to_json());
        m.insert("partitionKey".into(), self.definition.to_json());
        if let Some(ttl) = self.default_ttl() {
            m.insert("defaultTtl".into(), Value::from(ttl as f64));
        }
        if let Some(seconds) = self.settings.change_feed_retention {
            m.insert(
                "changeFeedPolicy".into(),
                Value::object([("retentionDuration", Value::from((seconds / 60) as f64))]),
            );
        }
        if !self.settings.unique_keys.is_empty() {
            let keys: Vec<Value> = self
                .settings
                .unique_keys
                .iter()
                .map(|k| {
                    let paths: Vec<Value> = k.paths.iter().map(|p| Value::from(p.as_str())).collect();
                    Value::object([("paths", Value::from(paths))])
                })
                .collect();
            m.insert("uniqueKeyPolicy".into(), Value::object([("uniqueKeys", Value::from(keys))]));
        }
        m.insert("_rid".into(), Value::from(self.rid_text()));
        Value::from(m)
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

    /// The sizes of the indexes, summed over the partitions.
    pub fn index_stats(&self) -> IndexStats {
        let mut stats = IndexStats::default();
        for p in self.partitions.read().iter() {
            stats += p.data.read().index.stats();
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

    fn rid_text(&self) -> String {
        base64(&rid_bytes(self.database_rid, self.rid))
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
        let mut out: Vec<(u32, Epk, Epk)> = Vec::new();
        for (min, max) in ranges {
            let first = Self::index_for(&map, min);
            for p in map[first..].iter().take_while(|p| p.min < *max) {
                if out.last().is_none_or(|last| last.0 != p.id) && p.max > *min {
                    out.push((p.id, p.min.clone(), p.max.clone()));
                }
            }
        }
        out.sort_by(|a, b| a.1.cmp(&b.1));
        out.dedup_by(|a, b| a.0 == b.0);
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

    fn over_threshold(&self, d: &PartitionData) -> bool {
        d.items > self.settings.split_max_items || d.bytes > self.settings.split_max_bytes
    }

    /// Splits `p` in two at a boundary between logical partitions, if it is still live and over a
    /// threshold. Returns whether it split.
    fn split(&self, p: &Arc<PhysicalPartition>) -> bool {
        // A checkpoint is copying the partitions: the next write past the thresholds splits.
        let Some(_layout) = self.layout.try_lock() else { return false };
        let _gate = self.gate();
        let mut map = self.partitions.write();
        let mut data = p.data.write();
        if data.retired || !self.over_threshold(&data) {
            return false;
        }
        self.split_locked(&mut map, p, &mut data)
    }

    fn split_locked(
        &self,
        map: &mut Vec<Arc<PhysicalPartition>>,
        p: &Arc<PhysicalPartition>,
        data: &mut PartitionData,
    ) -> bool {
        if data.logical.len() < 2 {
            return false; // a logical partition is never split
        }
        // The boundary: the first logical partition past half of the items (never the first one,
        // so both halves hold something).
        let half = data.items.div_ceil(2).max(1);
        let mut seen = 0;
        let mut boundary = None;
        for (i, (epk, lp)) in data.logical.iter().enumerate() {
            if i > 0 && seen >= half {
                boundary = Some(epk.clone());
                break;
            }
            seen += lp.len();
        }
        let boundary = match boundary {
            Some(b) => b,
            // All but the last logical partition hold less than half: split before the last one.
            None => match data.logical.keys().next_back() {
                Some(last) => last.clone(),
                None => return false,
            },
        };
        self.split_at(map, p, data, boundary)
    }

    /// Splits `p` at `boundary` (strictly inside its range): the logical partitions below it stay
    /// left, the rest go right (either side may be empty).
    fn split_at(
        &self,
        map: &mut Vec<Arc<PhysicalPartition>>,
        p: &Arc<PhysicalPartition>,
        data: &mut PartitionData,
        boundary: Epk,
    ) -> bool {
        if boundary <= p.min || boundary >= p.max {
            return false;
        }
        let Some(at) = map.iter().position(|q| Arc::ptr_eq(q, p)) else { return false };
        if !self.log_split(&boundary) {
            return false; // the log refused it (disk full): the partition stays whole
        }
        let upper = data.logical.split_off(&boundary);
        let lower = std::mem::take(&mut data.logical);
        let policy = Arc::clone(data.index.policy());
        let index = std::mem::replace(&mut data.index, PartitionIndex::new(policy));
        let (lower_index, upper_index) = index.split(&boundary);
        let make = |min: Epk, max: Epk, logical: BTreeMap<Epk, LogicalPartition>, index: PartitionIndex| {
            let items = logical.values().map(LogicalPartition::len).sum();
            let bytes = logical.values().map(|lp| lp.bytes).sum();
            Arc::new(PhysicalPartition {
                id: self.next_partition_id.fetch_add(1, Ordering::Relaxed) as u32,
                min,
                max,
                data: RwLock::new(PartitionData {
                    retired: false,
                    history: BTreeMap::new(),
                    pending: Vec::new(),
                    changes: PartitionData::changes_of(&logical),
                    logical,
                    items,
                    bytes,
                    index,
                    writes: 0,
                }),
            })
        };
        let left = make(p.min.clone(), boundary.clone(), lower, lower_index);
        let right = make(boundary.clone(), p.max.clone(), upper, upper_index);
        // The kept writes go with their keys.
        for (lsn, change) in std::mem::take(&mut data.history) {
            let child = if change.epk < boundary { &left } else { &right };
            child.data.write().history.insert(lsn, change);
        }
        data.retired = true;
        data.items = 0;
        data.bytes = 0;
        let children = [left.id, right.id];
        map.splice(at..=at, [left, right]);
        self.splits.fetch_add(1, Ordering::Relaxed);
        // A partition with an explicit throughput: its children share it evenly.
        if let Some(t) = self.throughput.read().as_ref() {
            t.split_target(p.id, children);
        }
        true
    }

    /// Splits physical partitions, the widest EPK range first, each at the middle of its range,
    /// until there are at least `n` (as the service does when throughput is raised past what the
    /// partitions can serve: 10,000 RU/s each). Returns how many splits it made.
    pub fn split_to(&self, n: usize) -> usize {
        let mut splits = 0;
        let _layout = self.layout.lock();
        let _gate = self.gate();
        let mut map = self.partitions.write();
        while map.len() < n {
            // How much key space a split would give away: the widest range goes first.
            let width = |p: &PhysicalPartition| {
                crate::epk::midpoint(&p.min, &p.max).map(|mid| mid.top_u128().saturating_sub(p.min.top_u128()))
            };
            let Some(p) = map.iter().filter(|p| width(p).is_some()).max_by_key(|p| width(p)).cloned() else { break };
            let Some(mid) = crate::epk::midpoint(&p.min, &p.max) else { break };
            let mut data = p.data.write();
            if !self.split_at(&mut map, &p, &mut data, mid) {
                break;
            }
            splits += 1;
        }
        splits
    }

    /// Splits the physical partition `id` at the middle of its EPK range; the children's ids, or
    /// `None` when there is no such partition or its range is too narrow.
    pub fn split_partition_evenly(&self, id: u32) -> Option<[u32; 2]> {
        let _layout = self.layout.lock();
        let _gate = self.gate();
        let mut map = self.partitions.write();
        let p = Arc::clone(map.iter().find(|p| p.id == id)?);
        let mid = crate::epk::midpoint(&p.min, &p.max)?;
        let mut data = p.data.write();
        if !self.split_at(&mut map, &p, &mut data, mid) {
            return None;
        }
        let at = map.iter().position(|q| q.min == p.min)?;
        Some([map[at].id, map.get(at + 1)?.id])
    }

    /// Whether [`Container::split_partition_evenly`] can split partition `id`: it exists and
    /// its EPK range has a middle (only the log refusing the split can still stop it).
    pub fn can_split_evenly(&self, id: u32) -> bool {
        let map = self.partitions.read();
        map.iter().find(|p| p.id == id).is_some_and(|p| crate::epk::midpoint(&p.min, &p.max).is_some())
    }

    /// Splits the physical partition holding `epk` now, whatever its size (tests and tools use
    /// this to force splits). Returns false when it holds fewer than two logical partitions.
    pub fn force_split(&self, epk: &Epk) -> bool {
        let _layout = self.layout.lock();
        let _gate = self.gate();
        let mut map = self.partitions.write();
        let p = Arc::clone(&map[Self::index_for(&map, epk)]);
        let mut data = p.data.write();
        self.split_locked(&mut map, &p, &mut data)
    }

    // ---- items ---------------------------------------------------------------------------------

    /// Validates an item, fills its synthetic key and computes its key and EPK.
    pub(crate) fn prepare(&self, doc: Doc) -> Result<Prepared> {
        let mut doc = doc;
        if !doc.root().is_object() {
            return Err(StorageError::bad_request("an item must be a JSON object"));
        }
        // System properties belong to the store: values sent back with an item (a read, modified,
        // then replaced) are dropped, not stored.
        if doc.root().entries().any(|(k, _)| SYSTEM_PROPERTIES.contains(&k)) {
            let drop: Vec<(&str, &Value)> = SYSTEM_PROPERTIES.iter().map(|p| (*p, &Value::Undefined)).collect();
            doc = doc.with_fields(&drop).map_err(|e| StorageError::bad_request(e.to_string()))?;
        }
        if let Some(synthetic) = self.definition.synthetic_key() {
            if let Some(key) = synthetic.key_for(doc.root())? {
                doc = doc
                    .with_fields(&[(synthetic.property.as_str(), &Value::from(key))])
                    .map_err(|e| StorageError::bad_request(e.to_string()))?;
            }
        }
        let id = match doc.root().get("id") {
            None => return Err(StorageError::bad_request("the item has no `id` property")),
            Some(v) => match v.as_str() {
                Some(s) => s,
                None => {
                    return Err(StorageError::bad_request(format!(
                        "the item's `id` must be a string, not {}",
                        v.kind().name()
                    )))
                }
            },
        };
        validate_id(id)?;
        let id: Arc<str> = Arc::from(id);
        check_size(&doc)?;
        let key = self.definition.key_of(doc.root())?;
        let epk = self.definition.epk(&key)?;
        let ttl = self.item_ttl(&doc)?;
        Ok(Prepared { doc, id, key, epk, ttl })
    }

    /// The item's own time to live: its `ttl` property, which must be `-1` or 1 to 2,147,483,647
    /// seconds when the container has time to live on (otherwise it is an ordinary property,
    /// taken only when it is such an integer).
    fn item_ttl(&self, doc: &Doc) -> Result<Option<i64>> {
        let Some(v) = doc.root().get("ttl") else { return Ok(None) };
        let n = v.as_f64().filter(|n| n.fract() == 0.0 && n.abs() < 1e15).map(|n| n as i64);
        if self.default_ttl.read().is_some() {
            match n {
                Some(n) => validate_ttl(n, "ttl")?,
                None => {
                    return Err(StorageError::bad_request(format!(
                        "The input ttl '{}' is invalid. Ensure to provide a nonzero positive integer less than or \
                         equal to '{MAX_TTL}', or '-1' which means never expire.",
                        v.to_json_string().unwrap_or_default()
                    )))
                }
            }
        }
        Ok(n.filter(|n| *n == -1 || (1..=MAX_TTL).contains(n)))
    }

    /// The item to store for `prep`: a new write's metadata (`seq`: the item's creation sequence
    /// number when it exists).
    fn stored(&self, prep: &Prepared, seq: Option<u64>) -> StoredItem {
        StoredItem { doc: prep.doc.clone(), meta: ItemMeta { ttl: prep.ttl, ..self.new_meta(seq) } }
    }

    fn prepare_value(&self, item: &Value) -> Result<Prepared> {
        let doc = Doc::from_value(item).map_err(|e| StorageError::bad_request(e.to_string()))?;
        self.prepare(doc)
    }

    fn key_epk(&self, key: &PartitionKey) -> Result<Epk> {
        self.definition.check_key(key)?;
        self.definition.epk(key)
    }

    fn new_meta(&self, seq: Option<u64>) -> ItemMeta {
        ItemMeta {
            seq: seq.unwrap_or_else(|| self.next_seq.fetch_add(1, Ordering::Relaxed)),
            lsn: self.next_lsn.fetch_add(1, Ordering::Relaxed),
            ts: self.clock.read().unix_seconds(),
            ttl: None,
        }
    }

    /// The item with its system properties, as Cosmos DB returns it.
    pub fn materialize(&self, item: &StoredItem) -> Value {
        let mut value = item.doc.root().to_value();
        if let Some(map) = value.as_object_mut() {
            for name in SYSTEM_PROPERTIES {
                map.shift_remove(name);
            }
            for name in SYSTEM_PROPERTIES {
                map.insert(name.into(), self.system_property(item, name));
            }
        }
        value
    }

    /// The response to deleting `old`.
    fn deleted(&self, old: &StoredItem) -> ItemResponse {
        ItemResponse {
            status: 204,
            item: Value::Undefined,
            etag: String::new(),
            operation: OperationKind::Delete,
            bytes: old.doc.len(),
            indexed_terms: self.indexed_terms(old),
        }
    }

    /// The index terms an item has under the current indexing policy: its scalars at indexed
    /// paths (array elements each), `_ts`, its composite tuples and spatial entries.
    pub fn indexed_terms(&self, item: &StoredItem) -> u64 {
        crate::index::indexed_terms(&self.indexing_policy(), item)
    }

    /// One system property of an item (`_rid`, `_self`, `_etag`, `_attachments`, `_ts`);
    /// `Undefined` for any other name.
    pub fn system_property(&self, item: &StoredItem, name: &str) -> Value {
        match name {
            "_rid" => Value::from(self.item_rid(item.meta.seq)),
            "_self" => Value::from(format!("{}{}/", self.self_prefix, self.item_rid(item.meta.seq))),
            "_etag" => Value::from(item.meta.etag()),
            "_attachments" => Value::from("attachments/"),
            "_ts" => Value::from(item.meta.ts as f64),
            _ => Value::Undefined,
        }
    }

    fn item_rid(&self, seq: u64) -> String {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&rid_bytes(self.database_rid, self.rid));
        bytes[8..].copy_from_slice(&seq.to_le_bytes());
        base64(&bytes)
    }

    fn response(&self, status: u16, item: &StoredItem, kind: OperationKind) -> ItemResponse {
        // An upsert's status says whether it created the item.
        let kind = match (kind, status) {
            (OperationKind::Replace, 201) => OperationKind::Create,
            (kind, _) => kind,
        };
        let indexed_terms = if kind == OperationKind::Read { 0 } else { self.indexed_terms(item) };
        ItemResponse {
            indexed_terms,
            status,
            item: self.materialize(item),
            etag: item.meta.etag(),
            operation: kind,
            bytes: item.doc.len(),
        }
    }

    /// Creates an item; 409 if one with the same partition key and id exists.
    pub fn create(&self, item: &Value) -> Result<ItemResponse> {
        self.create_doc(Doc::from_value(item).map_err(|e| StorageError::bad_request(e.to_string()))?)
    }

    /// Creates an item from its JSON text.
    pub fn create_json(&self, json: &str) -> Result<ItemResponse> {
        self.create_doc(Doc::from_json_str(json).map_err(|e| StorageError::bad_request(e.to_string()))?)
    }

    /// Creates an item from an encoded document.
    pub fn create_doc(&self, doc: Doc) -> Result<ItemResponse> {
        self.expire();
        let stored = self.insert_doc(doc)?;
        Ok(self.response(201, &stored, OperationKind::Create))
    }

    /// Creates an item and returns what was stored, without materializing a response (the import
    /// path).
    pub fn insert_doc(&self, doc: Doc) -> Result<StoredItem> {
        self.expire();
        self.insert_prepared(self.prepare(doc)?)
    }

    /// Inserts an item [`Container::prepare`] validated.
    pub(crate) fn insert_prepared(&self, prep: Prepared) -> Result<StoredItem> {
        let epk = prep.epk.clone();
        self.write_partition(&epk, |data| {
            // Sequence numbers are taken under the partition's write lock, so a logical
            // partition's items are in sequence order.
            let stored = self.stored(&prep, None);
            self.apply_insert(data, &prep, stored.clone())?;
            Ok(stored)
        })
    }

    /// Reads an item by partition key and id; 404 if there is none.
    pub fn read(&self, key: &PartitionKey, id: &str) -> Result<ItemResponse> {
        self.expire();
        let stored = self.read_stored(key, id)?;
        Ok(self.response(200, &stored, OperationKind::Read))
    }

    /// Reads the stored form of an item (no decoding).
    pub fn read_stored(&self, key: &PartitionKey, id: &str) -> Result<StoredItem> {
        self.expire();
        let epk = self.key_epk(key)?;
        self.read_partition(&epk, |data| data.logical.get(&epk).and_then(|lp| lp.get(id)).cloned())
            .ok_or_else(|| not_found(key, id))
    }

    /// Replaces an item; its partition key and id cannot change.
    pub fn replace(
        &self,
        key: &PartitionKey,
        id: &str,
        item: &Value,
        options: &WriteOptions<'_>,
    ) -> Result<ItemResponse> {
        self.expire();
        let prep = self.prepare_value(item)?;
        self.check_same_item(key, id, &prep)?;
        let epk = prep.epk.clone();
        let stored = self.write_partition(&epk, |data| {
            let old = existing(data, &prep.epk, &prep.id).ok_or_else(|| not_found(key, id))?;
            check_etag(&old, options)?;
            let stored = self.stored(&prep, Some(old.meta.seq));
            self.apply_replace(data, &prep, stored.clone())?;
            Ok(stored)
        })?;
        Ok(self.response(200, &stored, OperationKind::Replace))
    }

    /// Creates the item, or replaces the one with the same partition key and id.
    pub fn upsert(&self, item: &Value, options: &WriteOptions<'_>) -> Result<ItemResponse> {
        self.expire();
        let prep = self.prepare_value(item)?;
        let epk = prep.epk.clone();
        let (status, stored) =
            self.write_partition(&epk, |data| self.apply_upsert(data, &prep, options).map(|(s, st, _)| (s, st)))?;
        Ok(self.response(status, &stored, OperationKind::Replace))
    }

    /// Deletes an item.
    pub fn delete(&self, key: &PartitionKey, id: &str, options: &WriteOptions<'_>) -> Result<ItemResponse> {
        self.expire();
        let epk = self.key_epk(key)?;
        let old = self.write_partition(&epk, |data| {
            let old = existing(data, &epk, id).ok_or_else(|| not_found(key, id))?;
            check_etag(&old, options)?;
            self.apply_delete(data, &epk, id);
            Ok(old)
        })?;
        Ok(self.deleted(&old))
    }

    /// Applies patch operations (add, set, replace, remove, incr) atomically. 412 if the etag or
    /// the condition does not hold; 400 for a bad patch (nothing changes).
    pub fn patch(
        &self,
        key: &PartitionKey,
        id: &str,
        operations: &[PatchOperation],
        options: &WriteOptions<'_>,
    ) -> Result<ItemResponse> {
        self.expire();
        let epk = self.key_epk(key)?;
        let stored = self.write_partition(&epk, |data| {
            let (stored, _) = self.apply_patch_locked(data, key, &epk, id, operations, options)?;
            Ok(stored)
        })?;
        Ok(self.response(200, &stored, OperationKind::Replace))
    }

    fn check_same_item(&self, key: &PartitionKey, id: &str, prep: &Prepared) -> Result<()> {
        self.definition.check_key(key)?;
        if prep.key != *key {
            return Err(StorageError::bad_request(format!(
                "the item's partition key {} differs from the request's {key}: an item's key never changes (copy it to a new item instead)",
                prep.key
            )));
        }
        if &*prep.id != id {
            return Err(StorageError::bad_request(format!(
                "the item's id `{}` differs from the id `{id}` being replaced",
                prep.id
            )));
        }
        Ok(())
    }

    // ---- the write primitives (under the partition's write lock) --------------------------------

    fn apply_insert(&self, data: &mut PartitionData, prep: &Prepared, stored: StoredItem) -> Result<Undo> {
        let cap = self.settings.logical_partition_max_bytes;
        let size = stored.doc.len() as u64;
        let unique = self.unique_values(&stored.doc);
        let lp = data.logical.entry(prep.epk.clone()).or_insert_with(|| LogicalPartition::new(prep.key.clone()));
        let failure = if lp.contains(&prep.id) {
            Some(StorageError::conflict(format!(
                "an item with id `{}` exists in logical partition {}",
                prep.id, prep.key
            )))
        } else if lp.bytes + size > cap {
            Some(partition_full(&prep.key, lp.bytes, size, cap))
        } else {
            lp.check_unique(&prep.id, &unique).err()
        };
        if let Some(err) = failure {
            if lp.is_empty() {
                data.logical.remove(&prep.epk);
            }
            return Err(err);
        }
        data.index.insert(&prep.epk, &stored);
        data.changes.insert(stored.meta.lsn, (prep.epk.clone(), Arc::clone(&prep.id)));
        lp.index_unique(&prep.id, unique);
        self.schedule_expiry(&prep.epk, &prep.id, &stored.meta);
        let change = self.settings.change_feed_retention.is_some().then(|| Change {
            operation: ChangeOperation::Create,
            epk: prep.epk.clone(),
            id: Arc::clone(&prep.id),
            key: prep.key.clone(),
            item: Some(stored.clone()),
            previous_lsn: None,
            ts: stored.meta.ts,
            ttl_expired: false,
        });
        let lsn = stored.meta.lsn;
        let undo = Undo::Inserted { epk: prep.epk.clone(), id: Arc::clone(&prep.id) };
        let logged = self.journal().is_some().then(|| stored.clone());
        lp.push(Arc::clone(&prep.id), stored);
        data.items += 1;
        data.bytes += size;
        if let Some(change) = change {
            self.record(data, lsn, change);
        }
        if let Some(item) = logged {
            self.log_change(data, || Entry::Put(item), &undo);
        }
        Ok(undo)
    }

    fn apply_replace(&self, data: &mut PartitionData, prep: &Prepared, stored: StoredItem) -> Result<Undo> {
        let cap = self.settings.logical_partition_max_bytes;
        let lp = data
            .logical
            .get_mut(&prep.epk)
            .ok_or_else(|| StorageError::internal("replace of a missing logical partition"))?;
        let old_size =
            lp.get(&prep.id).ok_or_else(|| StorageError::internal("replace of a missing item"))?.doc.len() as u64;
        let new_size = stored.doc.len() as u64;
        if new_size > old_size && lp.bytes - old_size + new_size > cap {
            return Err(partition_full(&prep.key, lp.bytes - old_size, new_size, cap));
        }
        let unique = self.unique_values(&stored.doc);
        lp.check_unique(&prep.id, &unique)?;
        self.schedule_expiry(&prep.epk, &prep.id, &stored.meta);
        let old =
            lp.replace(&prep.id, stored.clone()).ok_or_else(|| StorageError::internal("replace of a missing item"))?;
        lp.unindex_unique(&self.unique_values(&old.doc));
        lp.index_unique(&prep.id, unique);
        data.changes.remove(&old.meta.lsn);
        data.changes.insert(stored.meta.lsn, (prep.epk.clone(), Arc::clone(&prep.id)));
        if self.settings.change_feed_retention.is_some() {
            let change = Change {
                operation: ChangeOperation::Replace,
                epk: prep.epk.clone(),
                id: Arc::clone(&prep.id),
                key: prep.key.clone(),
                item: Some(stored.clone()),
                previous_lsn: Some(old.meta.lsn),
                ts: stored.meta.ts,
                ttl_expired: false,
            };
            self.record(data, stored.meta.lsn, change);
        }
        data.index.remove(&old);
        data.index.insert(&prep.epk, &stored);
        data.bytes = data.bytes - old_size + new_size;
        let undo = Undo::Replaced { epk: prep.epk.clone(), id: Arc::clone(&prep.id), old };
        self.log_change(data, || Entry::Put(stored), &undo);
        Ok(undo)
    }

    fn apply_upsert(
        &self,
        data: &mut PartitionData,
        prep: &Prepared,
        options: &WriteOptions<'_>,
    ) -> Result<(u16, StoredItem, Undo)> {
        match existing(data, &prep.epk, &prep.id) {
            Some(old) => {
                check_etag(&old, options)?;
                let stored = self.stored(prep, Some(old.meta.seq));
                let undo = self.apply_replace(data, prep, stored.clone())?;
                Ok((200, stored, undo))
            }
            None => {
                if options.if_match.is_some() {
                    return Err(StorageError::new(
                        ErrorKind::PreconditionFailed,
                        format!("no item `{}` to match the etag against", prep.id),
                    ));
                }
                let stored = self.stored(prep, None);
                let undo = self.apply_insert(data, prep, stored.clone())?;
                Ok((201, stored, undo))
            }
        }
    }

    /// Keeps a write for the all-versions-and-deletes change feed (with a retention), dropping
    /// what is older than the retention.
    fn record(&self, data: &mut PartitionData, lsn: u64, change: Change) {
        let Some(retention) = self.settings.change_feed_retention else { return };
        let horizon = change.ts.saturating_sub(retention);
        while data.history.first_key_value().is_some_and(|(_, c)| c.ts < horizon) {
            data.history.pop_first();
        }
        data.history.insert(lsn, change);
    }

    /// Removes an item known to exist; returns the undo record.
    fn apply_delete(&self, data: &mut PartitionData, epk: &Epk, id: &str) -> Option<Undo> {
        self.apply_delete_at(data, epk, id, false, None)
    }

    /// Removes an item known to exist (`expired`: because its time to live passed; `at`: the
    /// delete's LSN and time when replayed, else new ones).
    fn apply_delete_at(
        &self,
        data: &mut PartitionData,
        epk: &Epk,
        id: &str,
        expired: bool,
        at: Option<(u64, u64)>,
    ) -> Option<Undo> {
        let lp = data.logical.get_mut(epk)?;
        let (id, old) = lp.remove(id)?;
        let (mut lsn, mut ts) = at.unwrap_or((0, 0));
        if self.settings.change_feed_retention.is_some() {
            if at.is_none() {
                ts = self.clock.read().unix_seconds();
                lsn = self.next_lsn.fetch_add(1, Ordering::Relaxed);
            }
            let change = Change {
                operation: ChangeOperation::Delete,
                epk: epk.clone(),
                id: Arc::clone(&id),
                key: lp.key.clone(),
                item: None,
                previous_lsn: Some(old.meta.lsn),
                ts,
                ttl_expired: expired,
            };
            self.record(data, lsn, change);
        }
        let lp = data.logical.get_mut(epk)?;
        lp.unindex_unique(&self.unique_values(&old.doc));
        data.changes.remove(&old.meta.lsn);
        data.index.remove(&old);
        data.items -= 1;
        data.bytes -= old.doc.len() as u64;
        let key = lp.key.clone();
        if lp.is_empty() {
            data.logical.remove(epk);
        }
        let undo = Undo::Deleted { epk: epk.clone(), key, id: Arc::clone(&id), old };
        self.log_change(data, || Entry::Delete { epk: epk.clone(), id, lsn, ts, expired }, &undo);
        Some(undo)
    }

    fn apply_patch_locked(
        &self,
        data: &mut PartitionData,
        key: &PartitionKey,
        epk: &Epk,
        id: &str,
        operations: &[PatchOperation],
        options: &WriteOptions<'_>,
    ) -> Result<(StoredItem, Undo)> {
        let old = existing(data, epk, id).ok_or_else(|| not_found(key, id))?;
        check_etag(&old, options)?;
        let mut value = old.doc.root().to_value();
        if let Some(condition) = options.condition {
            if !condition(&self.materialize(&old)) {
                return Err(StorageError::new(
                    ErrorKind::PreconditionFailed,
                    "the patch condition does not hold for the item",
                ));
            }
        }
        // The id and the key paths cannot be patched; a patch of a synthetic key's source that
        // would move the item is caught below, when the key is recomputed.
        let mut protected: Vec<Vec<String>> = vec![vec!["id".to_string()]];
        protected.extend(self.definition.paths().iter().map(|p| p.segments().to_vec()));
        apply_patch(&mut value, operations, &protected)?;
        let doc = Doc::from_value(&value).map_err(|e| StorageError::bad_request(e.to_string()))?;
        let prep = self.prepare(doc)?;
        if prep.key != *key || &*prep.id != id {
            return Err(StorageError::bad_request("a patch cannot change the item's id or partition key"));
        }
        let stored = self.stored(&prep, Some(old.meta.seq));
        let undo = self.apply_replace(data, &prep, stored.clone())?;
        Ok((stored, undo))
    }

    fn undo(&self, data: &mut PartitionData, undo: Undo) {
        match undo {
            Undo::Inserted { epk, id } => {
                self.apply_delete(data, &epk, &id);
            }
            Undo::Replaced { epk, id, old } => {
                if let Some(lp) = data.logical.get_mut(&epk) {
                    let size = old.doc.len() as u64;
                    if let Some(newer) = lp.replace(&id, old.clone()) {
                        lp.unindex_unique(&self.unique_values(&newer.doc));
                        lp.index_unique(&id, self.unique_values(&old.doc));
                        self.schedule_expiry(&epk, &id, &old.meta);
                        data.changes.remove(&newer.meta.lsn);
                        data.changes.insert(old.meta.lsn, (epk.clone(), Arc::clone(&id)));
                        data.index.remove(&newer);
                        data.index.insert(&epk, &old);
                        data.bytes = data.bytes - newer.doc.len() as u64 + size;
                    }
                }
            }
            Undo::Deleted { epk, key, id, old } => {
                let size = old.doc.len() as u64;
                data.index.insert(&epk, &old);
                self.schedule_expiry(&epk, &id, &old.meta);
                data.changes.insert(old.meta.lsn, (epk.clone(), Arc::clone(&id)));
                let unique = self.unique_values(&old.doc);
                let lp = data.logical.entry(epk).or_insert_with(|| LogicalPartition::new(key));
                lp.index_unique(&id, unique);
                lp.restore(id, old);
                data.items += 1;
                data.bytes += size;
            }
        }
    }

    // ---- batches -------------------------------------------------------------------------------

    /// Runs up to 100 operations on one logical partition, all or nothing: if one fails, every
    /// earlier one is rolled back and the store is as before.
    pub fn execute_batch(
        &self,
        key: &PartitionKey,
        operations: &[BatchOperation],
    ) -> Result<Vec<ItemResponse>, BatchError> {
        self.expire();
        let whole = |error| BatchError { index: 0, error };
        if operations.is_empty() {
            return Err(whole(StorageError::bad_request("a batch needs at least one operation")));
        }
        if operations.len() > MAX_BATCH_OPERATIONS {
            return Err(whole(StorageError::bad_request(format!(
                "a batch holds at most {MAX_BATCH_OPERATIONS} operations, not {}",
                operations.len()
            ))));
        }
        let epk = self.key_epk(key).map_err(whole)?;
        // Validate and key every document first: nothing is locked yet.
        let mut prepared = Vec::with_capacity(operations.len());
        for (index, op) in operations.iter().enumerate() {
            let at = |error| BatchError { index, error };
            let prep = match op {
                BatchOperation::Create { item }
                | BatchOperation::Upsert { item, .. }
                | BatchOperation::Replace { item, .. } => {
                    let prep = self.prepare_value(item).map_err(at)?;
                    if prep.key != *key {
                        return Err(at(StorageError::bad_request(format!(
                            "the item's partition key {} differs from the batch's {key}: a batch stays in one logical partition",
                            prep.key
                        ))));
                    }
                    if let BatchOperation::Replace { id, .. } = op {
                        self.check_same_item(key, id, &prep).map_err(at)?;
                    }
                    Some(prep)
                }
                _ => None,
            };
            prepared.push(prep);
        }
        let result = self.write_partition(&epk, |data| {
            let mut undo_log = Vec::new();
            let mut responses = Vec::new();
            // The batch's writes are the partition's last: a rollback drops them (and the undo's).
            let kept = data.history.last_key_value().map_or(0, |(lsn, _)| *lsn);
            for (index, (op, prep)) in operations.iter().zip(&prepared).enumerate() {
                match self.apply_batch_op(data, key, &epk, op, prep.as_ref()) {
                    Ok((response, undo)) => {
                        responses.push(response);
                        undo_log.extend(undo);
                    }
                    Err(error) => {
                        for u in undo_log.into_iter().rev() {
                            self.undo(data, u);
                        }
                        data.pending.clear();
                        data.history.split_off(&kept.saturating_add(1));
                        return Ok(Err(BatchError { index, error }));
                    }
                }
            }
            Ok(Ok(responses))
        });
        match result {
            Ok(inner) => inner,
            Err(error) => Err(whole(error)),
        }
    }

    fn apply_batch_op(
        &self,
        data: &mut PartitionData,
        key: &PartitionKey,
        epk: &Epk,
        op: &BatchOperation,
        prep: Option<&Prepared>,
    ) -> Result<(ItemResponse, Option<Undo>)> {
        let prep_ref = || prep.ok_or_else(|| StorageError::internal("batch document was not prepared"));
        match op {
            BatchOperation::Create { .. } => {
                let prep = prep_ref()?;
                let stored = self.stored(prep, None);
                let undo = self.apply_insert(data, prep, stored.clone())?;
                Ok((self.response(201, &stored, OperationKind::Replace), Some(undo)))
            }
            BatchOperation::Upsert { if_match, .. } => {
                let options = WriteOptions { if_match: if_match.clone(), condition: None };
                let (status, stored, undo) = self.apply_upsert(data, prep_ref()?, &options)?;
                Ok((self.response(status, &stored, OperationKind::Replace), Some(undo)))
            }
            BatchOperation::Replace { id, if_match, .. } => {
                let prep = prep_ref()?;
                let old = existing(data, epk, id).ok_or_else(|| not_found(key, id))?;
                check_etag(&old, &WriteOptions { if_match: if_match.clone(), condition: None })?;
                let stored = self.stored(prep, Some(old.meta.seq));
                let undo = self.apply_replace(data, prep, stored.clone())?;
                Ok((self.response(200, &stored, OperationKind::Replace), Some(undo)))
            }
            BatchOperation::Delete { id, if_match } => {
                let old = existing(data, epk, id).ok_or_else(|| not_found(key, id))?;
                check_etag(&old, &WriteOptions { if_match: if_match.clone(), condition: None })?;
                let undo = self.apply_delete(data, epk, id);
                Ok((self.deleted(&old), undo))
            }
            BatchOperation::Read { id } => {
                let item = existing(data, epk, id).ok_or_else(|| not_found(key, id))?;
                Ok((self.response(200, &item, OperationKind::Read), None))
            }
            BatchOperation::Patch { id, operations, if_match } => {
                let options = WriteOptions { if_match: if_match.clone(), condition: None };
                let (stored, undo) = self.apply_patch_locked(data, key, epk, id, operations, &options)?;
                Ok((self.response(200, &stored, OperationKind::Replace), Some(undo)))
            }
        }
    }

    // ---- scans ---------------------------------------------------------------------------------

    /// Every item, in scan order: by the EPK of its logical partition, then by creation.
    pub fn scan(&self) -> Scan<'_> {
        self.expire();
        self.scan_range(Epk::min(), Epk::max())
    }

    /// The items whose EPK is in `[min, max)`, in scan order. Each item is seen exactly once even
    /// when partitions split during the scan; items written during the scan may or may not be seen.
    pub fn scan_range(&self, min: Epk, max: Epk) -> Scan<'_> {
        self.scan_from(ItemPosition::start_of(min), max)
    }

    /// Like [`Container::scan_range`], starting at `from` (the items at or after that position).
    /// Positions do not depend on how the EPK space is split into physical partitions, so a scan
    /// can resume from one across splits.
    pub fn scan_from(&self, from: ItemPosition, max: Epk) -> Scan<'_> {
        Scan { container: self, cursor: Some((from.epk, from.seq)), end: max, buffer: Vec::new().into_iter() }
    }

    /// The items of one logical partition, in creation order.
    pub fn scan_partition_key(&self, key: &PartitionKey) -> Result<Vec<StoredItem>> {
        self.expire();
        let epk = self.key_epk(key)?;
        Ok(self.read_partition(&epk, |data| {
            data.logical.get(&epk).map(|lp| lp.iter_from(0).cloned().collect()).unwrap_or_default()
        }))
    }

    /// Fills up to `limit` entries (made by `f` from each item and its logical partition's EPK)
    /// from `cursor` on; returns them and the next cursor (`None` at the end of the range).
    fn scan_chunk_with<T>(
        &self,
        cursor: &(Epk, u64),
        end: &Epk,
        limit: usize,
        f: impl Fn(&Epk, &StoredItem) -> T,
    ) -> (Vec<T>, Option<(Epk, u64)>) {
        let map = self.partitions.read();
        let p = &map[Self::index_for(&map, &cursor.0)];
        let data = p.data.read();
        let stop = if p.max < *end { &p.max } else { end };
        let mut out = Vec::new();
        let range = (Bound::Included(&cursor.0), Bound::Excluded(stop));
        for (epk, lp) in data.logical.range::<Epk, _>(range) {
            let from = if *epk == cursor.0 { cursor.1 } else { 0 };
            for item in lp.iter_from(from) {
                if out.len() == limit {
                    return (out, Some((epk.clone(), item.meta.seq)));
                }
                out.push(f(epk, item));
            }
        }
        let next = if *stop < *end { Some((stop.clone(), 0)) } else { None };
        (out, next)
    }
}

/// A walk of a range index in key order (see [`Container::index_ordered`]).
#[derive(Debug, Clone, Copy)]
pub struct OrderedWalk<'a> {
    pub path: &'a [IndexStep],
    pub descending: bool,
    /// Resume after this (key, sequence number).
    pub after: Option<&'a (IndexKey, u64)>,
    pub limit: usize,
    /// Read the items too (otherwise keys and positions only).
    pub items: bool,
}

/// Index entries in ORDER BY order: keys (one, or a tuple), positions and, if asked for, items.
pub type OrderedEntries<K> = Vec<(K, ItemPosition, Option<StoredItem>)>;

/// What [`Container::composite_ordered`] walks: ORDER BY paths with their directions.
#[derive(Debug, Clone, Copy)]
pub struct CompositeWalk<'a> {
    pub keys: &'a [(Vec<IndexStep>, bool)],
    /// Only tuples starting with these keys (equalities of the filter on the leading paths).
    pub prefix: &'a [IndexKey],
    /// Resume after this (tuple, sequence number).
    pub after: Option<&'a (Vec<IndexKey>, u64)>,
    pub limit: usize,
    /// Read the items too.
    pub items: bool,
}

impl Container {
    // ---- index access --------------------------------------------------------------------------

    /// Whether the current policy lets queries use the range index at `path` (a partition whose
    /// index is still being transformed may not have it yet).
    fn policy_serves(&self, path: &[IndexStep]) -> bool {
        self.indexing_policy().is_indexed(path)
    }

    /// The positions of the items in `ranges` (sorted, disjoint `[min, max)`; at or after `from`) that a probe matches, in
    /// scan order, with the index work done; `None` when a partition of the range cannot serve a
    /// path of the probe (not indexed, or not yet transformed): the caller scans instead.
    pub fn index_probe(
        &self,
        ranges: &[(Epk, Epk)],
        probe: &IndexProbe,
        from: Option<&ItemPosition>,
    ) -> Option<(Vec<ItemPosition>, IndexWork)> {
        if !probe.served_by(&self.indexing_policy()) {
            return None;
        }
        let mut work = IndexWork::default();
        let mut out = Vec::new();
        let map = self.partitions.read();
        for p in Self::covering(&map, ranges) {
            let data = p.data.read();
            for seq in data.index.probe(probe, &mut work)? {
                let Some(epk) = data.index.location(seq) else { continue };
                if in_ranges(ranges, epk) {
                    let pos = ItemPosition { epk: epk.clone(), seq };
                    if from.is_none_or(|f| pos >= *f) {
                        out.push(pos);
                    }
                }
            }
        }
        out.sort_unstable();
        Some((out, work))
    }

    /// The physical partitions overlapping sorted, disjoint EPK ranges, each once, in EPK order.
    fn covering<'m>(map: &'m [Arc<PhysicalPartition>], ranges: &[(Epk, Epk)]) -> Vec<&'m Arc<PhysicalPartition>> {
        let mut out: Vec<&Arc<PhysicalPartition>> = Vec::new();
        for (min, max) in ranges {
            for p in map[Self::index_for(map, min)..].iter().take_while(|p| p.min < *max) {
                if out.last().is_none_or(|last| !Arc::ptr_eq(last, p)) && !out.iter().any(|q| Arc::ptr_eq(q, p)) {
                    out.push(p);
                }
            }
        }
        out
    }

    /// How many items `ranges` hold, and how many the physical partitions holding them hold (an
    /// index covers a whole physical partition: for a few logical partitions of a big one, a scan
    /// of them reads less than an index does).
    pub fn items_in(&self, ranges: &[(Epk, Epk)]) -> (u64, u64) {
        let map = self.partitions.read();
        let (mut inside, mut whole) = (0u64, 0u64);
        for p in Self::covering(&map, ranges) {
            let data = p.data.read();
            whole += data.items as u64;
            for (min, max) in ranges {
                if *max <= p.min || *min >= p.max {
                    continue;
                }
                let range = (Bound::Included(min), Bound::Excluded(max));
                inside += data.logical.range::<Epk, _>(range).map(|(_, lp)| lp.len() as u64).sum::<u64>();
            }
        }
        (inside, whole)
    }

    /// The items at these positions (sorted), skipping those deleted meanwhile.
    pub fn fetch(&self, positions: &[ItemPosition]) -> Vec<(ItemPosition, StoredItem)> {
        let map = self.partitions.read();
        let mut out = Vec::with_capacity(positions.len());
        let mut rest = positions;
        while let Some(first) = rest.first() {
            let p = &map[Self::index_for(&map, &first.epk)];
            let n = rest.iter().take_while(|pos| pos.epk < p.max).count().max(1);
            let data = p.data.read();
            for pos in &rest[..n] {
                if let Some(item) = data.logical.get(&pos.epk).and_then(|lp| lp.get_seq(pos.seq)) {
                    out.push((pos.clone(), item.clone()));
                }
            }
            rest = &rest[n..];
        }
        out
    }

    /// Up to `walk.limit` entries of `ranges` in the order of the range index at `path` (keys
    /// descending if `descending`, then sequence numbers ascending), after `after`, with their
    /// keys. `None` when a partition of the range cannot serve the path, or when some item there
    /// has no scalar at the path (an undefined, array or object value has no index entry): the
    /// caller sorts instead.
    pub fn index_ordered(
        &self,
        ranges: &[(Epk, Epk)],
        walk: &OrderedWalk<'_>,
        work: &mut IndexWork,
    ) -> Option<Vec<(IndexKey, ItemPosition, Option<StoredItem>)>> {
        let path = walk.path;
        // An item has one value at a path without `[]`; with one, it has many.
        if path.contains(&IndexStep::Element) || !self.policy_serves(path) {
            return None;
        }
        let keep = |epk: &Epk| in_ranges(ranges, epk);
        let map = self.partitions.read();
        let mut runs = Vec::new();
        for p in Self::covering(&map, ranges) {
            let data = p.data.read();
            if data.index.items_with_scalar(path) != data.index.items() {
                return None;
            }
            // A unit covering the whole partition keeps every entry (no EPK comparisons).
            let whole = p.within(ranges);
            let keep: &dyn Fn(&Epk) -> bool = if whole { &|_| true } else { &keep };
            let entries = data.index.ordered(path, walk.descending, walk.after, walk.limit, keep, work)?;
            let mut run = Vec::with_capacity(entries.len());
            located(&data, entries, walk.items, &mut run);
            runs.push(run);
        }
        let mut all: Vec<_> = runs.into_iter().flatten().collect();
        all.sort_by(|a, b| {
            let keys = if walk.descending { b.0.cmp(&a.0) } else { a.0.cmp(&b.0) };
            keys.then(a.1.seq.cmp(&b.1.seq))
        });
        all.truncate(walk.limit);
        Some(all)
    }

    /// Like [`Container::index_ordered`] for ORDER BY on several paths, from a composite index
    /// of the current policy that serves their order: keys are tuples. `None` when none does, or
    /// when some item of the ranges lacks a scalar at one of the paths (the caller sorts).
    pub fn composite_ordered(
        &self,
        ranges: &[(Epk, Epk)],
        walk: &CompositeWalk<'_>,
        work: &mut IndexWork,
    ) -> Option<OrderedEntries<Vec<IndexKey>>> {
        if !self.indexing_policy().has_composite(walk.keys) {
            return None;
        }
        let keep = |epk: &Epk| in_ranges(ranges, epk);
        let map = self.partitions.read();
        let mut all = Vec::new();
        for p in Self::covering(&map, ranges) {
            let data = p.data.read();
            let entries = data.index.composite_ordered(walk.keys, walk.prefix, walk.after, walk.limit, &keep, work)?;
            located(&data, entries, walk.items, &mut all);
        }
        let directions: Vec<bool> = walk.keys.iter().map(|(_, d)| *d).collect();
        all.sort_by(|a, b| {
            let tuples =
                a.0.iter().zip(&b.0).zip(&directions).fold(std::cmp::Ordering::Equal, |o, ((x, y), d)| {
                    o.then_with(|| if *d { y.cmp(x) } else { x.cmp(y) })
                });
            tuples.then(a.1.seq.cmp(&b.1.seq))
        });
        all.truncate(walk.limit);
        Some(all)
    }

    /// The distinct scalars at `path` among the items of `ranges`, in key order, and whether
    /// every item there has one; `None` when a partition cannot serve the path.
    pub fn index_keys(
        &self,
        ranges: &[(Epk, Epk)],
        path: &[IndexStep],
        work: &mut IndexWork,
    ) -> Option<(Vec<IndexKey>, bool)> {
        if !self.policy_serves(path) {
            return None;
        }
        let keep = |epk: &Epk| in_ranges(ranges, epk);
        let map = self.partitions.read();
        let mut keys = Vec::new();
        let mut complete = true;
        for p in Self::covering(&map, ranges) {
            let data = p.data.read();
            complete &= data.index.items_with_scalar(path) == data.index.items();
            keys.extend(data.index.keys(path, &keep, work)?);
        }
        keys.sort();
        keys.dedup();
        Some((keys, complete))
    }

    /// How many items of `ranges` a probe finds (for `COUNT`), without making their positions;
    /// `None` when a partition cannot serve it.
    pub fn index_count(&self, ranges: &[(Epk, Epk)], probe: &IndexProbe) -> Option<(u64, IndexWork)> {
        if !probe.served_by(&self.indexing_policy()) {
            return None;
        }
        let mut work = IndexWork::default();
        let mut count = 0u64;
        let map = self.partitions.read();
        for p in Self::covering(&map, ranges) {
            let data = p.data.read();
            let seqs = data.index.probe(probe, &mut work)?;
            let whole = p.within(ranges);
            count += if whole {
                seqs.len() as u64
            } else {
                seqs.iter().filter(|s| data.index.location(**s).is_some_and(|e| in_ranges(ranges, e))).count() as u64
            };
        }
        Some((count, work))
    }

    /// The least and the greatest scalar at `path` among the items of `ranges` that `filter`
    /// finds (for `MIN` and `MAX`), and whether every item there has one; `None` when a partition
    /// cannot serve the path or the filter.
    pub fn index_bounds(
        &self,
        ranges: &[(Epk, Epk)],
        path: &[IndexStep],
        filter: Option<&IndexProbe>,
        work: &mut IndexWork,
    ) -> Option<IndexBounds> {
        if !self.policy_serves(path) || filter.is_some_and(|f| !f.served_by(&self.indexing_policy())) {
            return None;
        }
        let map = self.partitions.read();
        let mut bounds = IndexBounds { least: None, greatest: None, complete: true };
        for p in Self::covering(&map, ranges) {
            let data = p.data.read();
            // Among the items the filter finds, when there is one.
            let found: Option<std::collections::HashSet<u64>> = match filter {
                Some(f) => Some(data.index.probe(f, work)?.into_iter().collect()),
                None => None,
            };
            let keep = |seq: u64, epk: &Epk| in_ranges(ranges, epk) && found.as_ref().is_none_or(|f| f.contains(&seq));
            bounds.complete &= data.index.items_with_scalar(path) == data.index.items();
            let least = data.index.first_key(path, false, &keep, work)?;
            let greatest = data.index.first_key(path, true, &keep, work)?;
            bounds.widen(least, greatest);
        }
        Some(bounds)
    }
}

/// The least and greatest index keys at a path (see [`Container::index_bounds`]).
#[derive(Debug, Clone, PartialEq)]
pub struct IndexBounds {
    pub least: Option<IndexKey>,
    pub greatest: Option<IndexKey>,
    /// Every item of the ranges has a scalar at the path (none is undefined, an array or an
    /// object there).
    pub complete: bool,
}

impl IndexBounds {
    /// Takes in a key that may be less than the least or greater than the greatest.
    pub fn widen(&mut self, least: Option<IndexKey>, greatest: Option<IndexKey>) {
        if let Some(k) = least.filter(|k| self.least.as_ref().is_none_or(|l| k < l)) {
            self.least = Some(k);
        }
        if let Some(k) = greatest.filter(|k| self.greatest.as_ref().is_none_or(|g| k > g)) {
            self.greatest = Some(k);
        }
    }
}

/// Where an item is in scan order: its logical partition's EPK, then its creation sequence.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ItemPosition {
    pub epk: Epk,
    pub seq: u64,
}

impl ItemPosition {
    /// The position before every item of `[epk, ...)`.
    pub fn start_of(epk: Epk) -> Self {
        ItemPosition { epk, seq: 0 }
    }

    /// The position right after this one.
    pub fn next(&self) -> Self {
        ItemPosition { epk: self.epk.clone(), seq: self.seq + 1 }
    }
}

/// Items with their positions, in scan order (see [`Container::scan_range`]). It reads a chunk of
/// items under a partition's read lock at a time, so writers are never blocked for long.
#[derive(Debug)]
pub struct Scan<'a> {
    container: &'a Container,
    cursor: Option<(Epk, u64)>,
    end: Epk,
    buffer: std::vec::IntoIter<(ItemPosition, StoredItem)>,
}

const SCAN_CHUNK: usize = 1024;

impl<'a> Scan<'a> {
    /// The items alone, without their positions.
    pub fn items(self) -> impl Iterator<Item = StoredItem> + 'a {
        self.map(|(_, item)| item)
    }
}

impl Iterator for Scan<'_> {
    type Item = (ItemPosition, StoredItem);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(entry) = self.buffer.next() {
                return Some(entry);
            }
            let cursor = self.cursor.take()?;
            if cursor.0 >= self.end {
                return None;
            }
            let (items, next) = self.container.scan_chunk_with(&cursor, &self.end, SCAN_CHUNK, |epk, item| {
                (ItemPosition { epk: epk.clone(), seq: item.meta.seq }, item.clone())
            });
            self.cursor = next;
            self.buffer = items.into_iter();
        }
    }
}

/// Whether `epk` is in one of the sorted, disjoint `[min, max)` ranges.
/// Index entries `(key, sequence number)` of a partition as `(key, position, item if asked
/// for)`, appended to `out`; entries of items gone meanwhile are skipped.
fn located<K>(data: &PartitionData, entries: Vec<(K, u64)>, items: bool, out: &mut OrderedEntries<K>) {
    for (key, seq) in entries {
        let Some(epk) = data.index.location(seq) else { continue };
        let item = if items {
            let Some(item) = data.logical.get(epk).and_then(|lp| lp.get_seq(seq)) else { continue };
            Some(item.clone())
        } else {
            None
        };
        out.push((key, ItemPosition { epk: epk.clone(), seq }, item));
    }
}

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
    if let Some(c) = id.chars().find(|c| matches!(c, '/' | '\\' | '?' | '#')) {
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

/// The 8 bytes of a container's resource id: its database's number, then its own.
fn rid_bytes(database_rid: u32, rid: u32) -> [u8; 8] {
    let mut bytes = [0u8; 8];
    bytes[..4].copy_from_slice(&database_rid.to_le_bytes());
    bytes[4..].copy_from_slice(&rid.to_le_bytes());
    bytes
}

/// Standard base64 with padding (Cosmos's `_rid` alphabet).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
