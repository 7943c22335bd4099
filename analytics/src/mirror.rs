//! A container's columnar mirror: one mirror partition a physical partition, fed from the
//! container's change feed, published as snapshots that queries read.
//!
//! * **Sync** ([`Mirror::sync`]): each mirror partition keeps the LSN it has read its physical
//!   partition's change feed up to. It takes the items written since (creates and replaces, in
//!   their latest versions, observed into the schema) and compares its count of live items with
//!   the partition's, read at the same moment. Every live item is either unchanged since the last
//!   sync (so held) or among the changes, so the counts differ exactly when items were deleted;
//!   then it walks the partition's item positions and lets go of the items no longer there.
//! * **Analytical time to live**: an item the container let go because its own time to live
//!   passed stays in the mirror while the analytical time to live keeps it (`-1`: always; `n`:
//!   `n` seconds after its last write), as the service's analytical store does; an item deleted
//!   by a user goes.
//! * **Splits**: a physical partition the mirror has not seen took its items from a partition
//!   that split; its mirror partition takes the parent's rows in its range and reads the change
//!   feed on from the parent's LSN (its items' LSNs are the parent's), so nothing is lost or held
//!   twice.
//! * **Snapshots**: a sync rebuilds the Arrow batch of each partition that changed (all of them
//!   when the schema grew), on both cores, and publishes a new [`Snapshot`]. A query reads the
//!   snapshot it started with; a sync never waits for a query and a query never waits for a sync
//!   (syncs wait for each other).
//! * **Files** ([`Mirror::persisted_in`], a durable database's mirrors): the first sync reads the
//!   mirror back from `persist.rs`'s files when the container is as they say, and a sync that
//!   rebuilt partitions writes theirs.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cosmoql_catalog::epk::Epk;
use cosmoql_storage::{Container, DocRef, ItemPosition, StoredItem};
use datafusion::arrow::array::ArrayData;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;
use std::sync::{Mutex, RwLock};

use crate::columns::{arrow_schema, record_batch, Row};
use crate::persist::{self, FileEntry, Identity, PartitionFile};
use crate::schema::{Observed, Schema, SchemaMode};

/// Rows in one record batch of a snapshot (a partition's rows come in several, so a scan of one
/// partition can still run on several threads). DataFusion's own batch size: a batch's items
/// (about 300 bytes each in the telemetry) and the values gathered from them stay in the cache
/// while each of its columns is built from them; at 64 Ki rows they did not.
const BATCH_ROWS: usize = 8 * 1024;

/// What a query reads: the mirror at one moment.
#[derive(Debug)]
pub struct Snapshot {
    /// The Arrow schema of every batch.
    pub schema: SchemaRef,
    /// The mirror partitions, in EPK order.
    pub partitions: Vec<SnapshotPartition>,
}

/// One mirror partition in a snapshot.
#[derive(Debug, Clone)]
pub struct SnapshotPartition {
    /// The physical partition's id.
    pub id: u32,
    pub min: Epk,
    pub max: Epk,
    pub batches: Vec<RecordBatch>,
}

impl Snapshot {
    /// Rows in the snapshot.
    pub fn rows(&self) -> usize {
        self.partitions.iter().flat_map(|p| &p.batches).map(RecordBatch::num_rows).sum()
    }
}

/// A mirror partition's item: held while it is live in the container, and after (`expired`) while
/// the analytical time to live keeps it.
#[derive(Debug, Clone)]
struct Held {
    item: StoredItem,
    expired: bool,
    /// The schema represents it (what [`Schema::observe`] said when it came): an object, and in
    /// well-defined mode without a mixed-type array.
    represented: bool,
}

#[derive(Debug)]
struct MirrorPartition {
    id: u32,
    min: Epk,
    max: Epk,
    /// The LSN of the physical partition's change feed read up to.
    lsn: u64,
    rows: BTreeMap<ItemPosition, Held>,
    /// Rows live in the container (not `expired`).
    live: usize,
    /// The partition's batches, built with the mirror's current Arrow schema; `None`: to build.
    batches: Option<Vec<RecordBatch>>,
    /// With a positive analytical time to live: when the next held item leaves it.
    next_leave: Option<u64>,
    /// Its batches as written to the mirror's directory (a durable database's); `None`: not
    /// written since they were built.
    file: Option<FileEntry>,
}

#[derive(Debug)]
struct State {
    schema: Schema,
    arrow: SchemaRef,
    partitions: Vec<MirrorPartition>,
    /// The analytical time to live the batches were built under.
    attl: Option<i64>,
    /// Whether the first sync looked for the mirror's files.
    looked_for_files: bool,
    /// Why the last sync could not write the mirror's files, if it could not.
    persist_error: Option<String>,
}

/// A container's mirror.
#[derive(Debug)]
pub struct Mirror {
    container: Arc<Container>,
    /// Where the mirror is kept between processes (a durable database's mirrors).
    dir: Option<PathBuf>,
    state: Mutex<State>,
    published: RwLock<Arc<Snapshot>>,
}

/// What a sync did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Items taken from the change feed (created or replaced since the last sync).
    pub changed: usize,
    /// Items let go (deleted, or past the analytical time to live).
    pub removed: usize,
    /// Mirror partitions whose batches were rebuilt.
    pub rebuilt: usize,
    /// The mirror was read from its files (the first sync of a persisted mirror whose container
    /// is as the files say).
    pub restored: bool,
}

impl Mirror {
    /// An empty mirror of `container` (its first [`Self::sync`] fills it).
    pub fn new(container: Arc<Container>, mode: SchemaMode) -> Mirror {
        let schema = Schema::new(mode);
        let arrow = arrow_schema(&schema);
        let snapshot = Snapshot { schema: Arc::clone(&arrow), partitions: Vec::new() };
        Mirror {
            container,
            dir: None,
            state: Mutex::new(State {
                schema,
                arrow,
                partitions: Vec::new(),
                attl: None,
                looked_for_files: false,
                persist_error: None,
            }),
            published: RwLock::new(Arc::new(snapshot)),
        }
    }

    /// The mirror, kept in `dir` between processes (`persist.rs`): its first sync reads it from
    /// there when the container is as the files say, and every sync that rebuilt a partition
    /// writes it there. Only a mirror whose analytical time to live is `-1` and that holds no
    /// item its container let go of is written (the files hold the batches, not the items).
    pub fn persisted_in(mut self, dir: PathBuf) -> Mirror {
        self.dir = Some(dir);
        self
    }

    pub fn container(&self) -> &Arc<Container> {
        &self.container
    }

    /// Why the last sync could not write the mirror's files, if it could not (the next process
    /// builds the mirror again; nothing else is lost).
    pub fn persist_error(&self) -> Option<String> {
        self.lock().persist_error.clone()
    }

    /// The snapshot the last sync published.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        Arc::clone(&self.published.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Bytes the mirror holds: its Arrow columns, and its map of the items (their positions and
    /// handles; the items' bytes are the container's, shared).
    pub fn memory_bytes(&self) -> usize {
        let state = self.lock();
        let per_row = size_of::<ItemPosition>() + size_of::<Held>();
        // Each buffer once: the arrays of a batch read back from a file share its buffer.
        let mut buffers = HashSet::new();
        state
            .partitions
            .iter()
            .map(|p| {
                let columns: usize = p
                    .batches
                    .iter()
                    .flatten()
                    .flat_map(RecordBatch::columns)
                    .map(|column| buffer_bytes(&column.to_data(), &mut buffers))
                    .sum();
                // A B-tree node holds up to 11 entries; about two thirds full.
                columns + p.rows.len() * per_row * 3 / 2
            })
            .sum()
    }

    /// The inferred schema now (a copy).
    pub fn schema(&self) -> Schema {
        self.lock().schema.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Brings the mirror up to the container's writes so far and publishes a snapshot of it.
    pub fn sync(&self) -> Result<SyncReport, ArrowError> {
        let mut state = self.lock();
        let mut report = SyncReport::default();
        let now = self.container.clock_now();
        let attl = self.container.analytical_ttl();
        if let Some(dir) = self.dir.as_deref().filter(|_| !state.looked_for_files) {
            state.looked_for_files = true;
            report.restored = self.restore(&mut state, dir, attl);
        }
        // A partition that splits while this runs is found gone; its children are read on the
        // next round (a split moves items, it never loses them).
        for _ in 0..64 {
            if self.sync_round(&mut state, now, attl, &mut report) {
                break;
            }
        }
        // A grown schema, or another analytical time to live: every batch is built again.
        let arrow = arrow_schema(&state.schema);
        if arrow != state.arrow || attl != state.attl {
            state.arrow = arrow;
            state.attl = attl;
            for p in &mut state.partitions {
                p.batches = None;
            }
        }
        let State { schema, arrow, partitions, .. } = &mut *state;
        for p in partitions.iter_mut() {
            if p.next_leave.is_some_and(|at| at <= now) {
                p.batches = None;
            }
        }
        report.rebuilt = build_batches(schema, arrow, partitions, &self.container, now, attl)?;
        let snapshot = Snapshot {
            schema: Arc::clone(arrow),
            partitions: partitions
                .iter()
                .map(|p| SnapshotPartition {
                    id: p.id,
                    min: p.min.clone(),
                    max: p.max.clone(),
                    batches: p.batches.clone().unwrap_or_default(),
                })
                .collect(),
        };
        *self.published.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(snapshot);
        if let Some(dir) = self.dir.as_deref().filter(|_| report.rebuilt > 0) {
            state.persist_error = self.persist(&mut state, dir, attl).err();
        }
        Ok(report)
    }

    fn identity(&self, attl: Option<i64>, schema: &Schema) -> Identity {
        Identity { container: self.container.rid_text(), mode: schema.mode(), attl }
    }

    /// Reads the mirror from `dir` when its files check out and its container is as they say:
    /// the same partitions, each with the same live items, none written since (every item's
    /// LSN at most the partition's in the files). `true` when it did; otherwise the mirror is
    /// built as without files.
    fn restore(&self, state: &mut State, dir: &Path, attl: Option<i64>) -> bool {
        if attl != Some(-1) {
            return false;
        }
        let identity = self.identity(attl, &state.schema);
        let Ok(Some(persisted)) = persist::read(dir, &identity, arrow_schema) else { return false };
        let layout = self.container.partitions();
        if layout.len() != persisted.partitions.len() {
            return false;
        }
        let mut partitions = Vec::with_capacity(layout.len());
        for (info, file) in layout.iter().zip(persisted.partitions) {
            if info.id != file.id || info.min != file.min || info.max != file.max {
                return false;
            }
            let Some(delta) = self.container.partition_delta(info.id, 0) else { return false };
            if delta.items != file.live
                || delta.changes.len() != file.live
                || delta.changes.iter().any(|(item, _)| item.meta.lsn > file.lsn)
            {
                return false;
            }
            let excluded: HashSet<ItemPosition> = file.excluded.into_iter().collect();
            let rows: Vec<(ItemPosition, Held)> = delta
                .changes
                .into_iter()
                .map(|(item, epk)| {
                    let position = ItemPosition { epk, seq: item.meta.seq };
                    let represented = !excluded.contains(&position);
                    (position, Held { item, expired: false, represented })
                })
                .collect();
            if rows.iter().filter(|(_, held)| held.represented).count() != file.file.rows {
                return false;
            }
            partitions.push(MirrorPartition {
                id: file.id,
                min: file.min,
                max: file.max,
                lsn: file.lsn,
                // Collected into the map, they are sorted by position.
                rows: rows.into_iter().collect(),
                live: file.live,
                batches: Some(file.batches),
                next_leave: None,
                file: Some(file.file),
            });
        }
        state.arrow = arrow_schema(&persisted.schema);
        state.schema = persisted.schema;
        state.partitions = partitions;
        state.attl = attl;
        true
    }

    /// Writes the mirror to `dir`: the files of the partitions rebuilt since they were last
    /// written, then the manifest. A mirror the files cannot hold (an analytical time to live
    /// other than `-1`, items its container let go of) has its manifest removed instead.
    fn persist(&self, state: &mut State, dir: &Path, attl: Option<i64>) -> Result<(), String> {
        let State { schema, arrow, partitions, .. } = &mut *state;
        if attl != Some(-1) || partitions.iter().any(|p| p.live != p.rows.len()) {
            return match std::fs::remove_file(dir.join("manifest")) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(format!("cannot remove {}: {e}", dir.display()))
                }
                _ => Ok(()),
            };
        }
        let mut files = Vec::with_capacity(partitions.len());
        for p in partitions.iter_mut() {
            let file = match &p.file {
                Some(file) => file.clone(),
                None => {
                    let file = persist::write_partition(dir, p.id, arrow, p.batches.as_deref().unwrap_or_default())?;
                    p.file = Some(file.clone());
                    file
                }
            };
            files.push(PartitionFile {
                id: p.id,
                min: p.min.clone(),
                max: p.max.clone(),
                lsn: p.lsn,
                live: p.live,
                excluded: p.rows.iter().filter(|(_, held)| !held.represented).map(|(at, _)| at.clone()).collect(),
                file,
                batches: Vec::new(),
            });
        }
        persist::write_manifest(dir, &self.identity(attl, schema), schema, &files)
    }

    /// One pass over the container's partitions; `false` when one split under it (run again).
    fn sync_round(&self, state: &mut State, now: u64, attl: Option<i64>, report: &mut SyncReport) -> bool {
        let layout = self.container.partitions();
        let mut old: Vec<MirrorPartition> = std::mem::take(&mut state.partitions);
        let mut next = Vec::with_capacity(layout.len());
        let mut complete = true;
        for info in &layout {
            let mut p = match old.iter().position(|p| p.id == info.id) {
                Some(at) => old.swap_remove(at),
                None => inherit(&old, info.id, &info.min, &info.max),
            };
            let Some(delta) = self.container.partition_delta(p.id, p.lsn) else {
                complete = false;
                next.push(p);
                continue;
            };
            if !delta.changes.is_empty() {
                p.batches = None;
            }
            report.changed += delta.changes.len();
            let (represented, order) = observe_and_order(&mut state.schema, &delta.changes);
            let mut changes: Vec<Option<(StoredItem, Epk)>> = delta.changes.into_iter().map(Some).collect();
            let filed = order.into_iter().filter_map(|at| {
                let (item, epk) = changes[at].take()?;
                let held = Held { item, expired: false, represented: represented[at] };
                Some((ItemPosition { epk, seq: held.item.meta.seq }, held))
            });
            if p.rows.is_empty() {
                // In order already: built in one pass, not item by item.
                p.rows = filed.collect();
                p.live = p.rows.len();
            } else {
                for (position, held) in filed {
                    if let Some(was) = p.rows.insert(position, held) {
                        p.live -= usize::from(!was.expired);
                    }
                    p.live += 1;
                }
            }
            p.lsn = delta.lsn;
            if p.live != delta.items {
                report.removed += self.let_go(&mut p, now, attl);
            }
            next.push(p);
        }
        // Partitions gone (split) whose children all exist now are done with; one whose child
        // was not made yet (a split between the layout read and now) waits for the next round.
        if !complete {
            next.extend(old);
        }
        next.sort_by(|a, b| a.min.cmp(&b.min));
        state.partitions = next;
        complete
    }

    /// Lets go of the rows of `p` that its physical partition no longer holds, unless the
    /// analytical time to live keeps them (an item expired by its time to live); returns how
    /// many went.
    fn let_go(&self, p: &mut MirrorPartition, now: u64, attl: Option<i64>) -> usize {
        let Some(positions) = self.container.partition_positions(p.id) else { return 0 };
        let live: HashSet<&ItemPosition> = positions.iter().collect();
        let before = p.rows.len();
        p.rows.retain(|position, held| {
            if held.expired || live.contains(position) {
                return true;
            }
            // Gone from the container: kept when its own time to live took it and the
            // analytical one keeps it.
            let expired = self.container.item_expiry(&held.item.meta).is_some_and(|at| at <= now);
            held.expired = expired && attl.is_some_and(|t| leaves_at(&held.item, t).is_none_or(|at| at > now));
            held.expired
        });
        p.live = p.rows.values().filter(|h| !h.expired).count();
        p.batches = None;
        before - p.rows.len()
    }
}

/// The bytes of the buffers of `data` (and of its children) not in `seen` yet, which they join.
fn buffer_bytes(data: &ArrayData, seen: &mut HashSet<usize>) -> usize {
    let own = data.buffers().iter().chain(data.nulls().map(|n| n.buffer()));
    let mut bytes: usize = own.filter(|b| seen.insert(b.data_ptr().as_ptr() as usize)).map(|b| b.capacity()).sum();
    for child in data.child_data() {
        bytes += buffer_bytes(child, seen);
    }
    bytes
}

/// Changes past which the schema observes them on threads of their own while this one sorts them.
const OBSERVE_APART: usize = 8 * 1024;

/// Observes `changes` into `schema`, in order (whether each is represented), and their order by
/// position. Many changes are observed on two threads while this one sorts them (the schema's
/// walk is the longest part of a first build): the first half into `schema`, the second into a
/// copy of it as it was, which [`Schema::absorb`] then takes in, or, when the halves could have
/// come out otherwise than in order (a type of one half the other would drop), observed again
/// into `schema`, in order.
fn observe_and_order(schema: &mut Schema, changes: &[(StoredItem, Epk)]) -> (Vec<bool>, Vec<usize>) {
    fn observe(schema: &mut Schema, changes: &[(StoredItem, Epk)]) -> Vec<bool> {
        changes.iter().map(|(item, _)| matches!(schema.observe(item.doc.root()), Observed::Included { .. })).collect()
    }
    let order = || {
        let mut order: Vec<usize> = (0..changes.len()).collect();
        order.sort_unstable_by(|&a, &b| {
            let ((x, ex), (y, ey)) = (&changes[a], &changes[b]);
            ex.cmp(ey).then(x.meta.seq.cmp(&y.meta.seq))
        });
        order
    };
    if changes.len() < OBSERVE_APART {
        return (observe(schema, changes), order());
    }
    if schema.mode() != SchemaMode::WellDefined {
        return std::thread::scope(|scope| {
            let observing = scope.spawn(|| observe(schema, changes));
            let order = order();
            (joined(observing), order)
        });
    }
    let (first, second) = changes.split_at(changes.len() / 2);
    let base = schema.clone();
    let mut later = base.clone();
    let (mut represented, observed_later, order) = std::thread::scope(|scope| {
        let observing_first = scope.spawn(|| observe(schema, first));
        let observing_second = scope.spawn(|| observe(&mut later, second));
        let order = order();
        (joined(observing_first), joined(observing_second), order)
    });
    let mut observed_later = if schema.absorb(&later, &base) { observed_later } else { observe(schema, second) };
    represented.append(&mut observed_later);
    (represented, order)
}

/// A scoped thread's result; a panic in it (a bug) goes on here as it would have inline.
fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
}

/// When the analytical time to live `ttl` lets `item` go (Unix seconds); `None` for `-1`, which
/// keeps it.
fn leaves_at(item: &StoredItem, ttl: i64) -> Option<u64> {
    u64::try_from(ttl).ok().map(|t| item.meta.ts.saturating_add(t))
}

/// A new mirror partition for physical partition `id` over `[min, max)`: the rows of the old
/// partitions in that range (its parent's, after a split), read on from the lowest LSN among
/// them (0 for a partition the mirror never held).
fn inherit(old: &[MirrorPartition], id: u32, min: &Epk, max: &Epk) -> MirrorPartition {
    let mut rows = BTreeMap::new();
    let mut lsn = None::<u64>;
    for parent in old.iter().filter(|p| p.min < *max && *min < p.max) {
        let from = ItemPosition::start_of(min.clone());
        rows.extend(
            parent
                .rows
                .range(from..)
                .take_while(|(position, _)| position.epk < *max)
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        lsn = Some(lsn.map_or(parent.lsn, |l| l.min(parent.lsn)));
    }
    let live = rows.values().filter(|h: &&Held| !h.expired).count();
    MirrorPartition {
        id,
        min: min.clone(),
        max: max.clone(),
        lsn: lsn.unwrap_or(0),
        rows,
        live,
        batches: None,
        next_leave: None,
        file: None,
    }
}

/// Builds the batches of the partitions that have none, on up to two threads; returns how many.
fn build_batches(
    schema: &Schema,
    arrow: &SchemaRef,
    partitions: &mut [MirrorPartition],
    container: &Container,
    now: u64,
    attl: Option<i64>,
) -> Result<usize, ArrowError> {
    let todo: Vec<&mut MirrorPartition> = partitions.iter_mut().filter(|p| p.batches.is_none()).collect();
    let count = todo.len();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(todo.len()).max(1);
    let mut shares: Vec<Vec<&mut MirrorPartition>> = (0..threads).map(|_| Vec::new()).collect();
    // Biggest first, each to the least loaded thread.
    let mut todo = todo;
    todo.sort_by_key(|p| std::cmp::Reverse(p.rows.len()));
    let mut loads = vec![0usize; threads];
    for p in todo {
        let at = (0..threads).min_by_key(|&t| loads[t]).unwrap_or(0);
        loads[at] += p.rows.len();
        shares[at].push(p);
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .into_iter()
            .map(|share| {
                scope.spawn(move || -> Result<(), ArrowError> {
                    for p in share {
                        let (batches, next_leave) = partition_batches(schema, arrow, p, container, now, attl)?;
                        p.batches = Some(batches);
                        p.file = None;
                        p.next_leave = next_leave;
                    }
                    Ok(())
                })
            })
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join().unwrap_or_else(|_| Err(ArrowError::ComputeError("a mirror build thread panicked (a bug)".into())))
        })
    })?;
    Ok(count)
}

/// One partition's batches (its rows the analytical time to live keeps), and when the next of
/// them leaves it.
fn partition_batches(
    schema: &Schema,
    arrow: &SchemaRef,
    p: &MirrorPartition,
    container: &Container,
    now: u64,
    attl: Option<i64>,
) -> Result<(Vec<RecordBatch>, Option<u64>), ArrowError> {
    let mut next_leave = None::<u64>;
    let kept: Vec<&Held> = p
        .rows
        .values()
        .filter(|h| match attl.and_then(|t| leaves_at(&h.item, t)) {
            Some(leaves) => {
                if leaves > now {
                    next_leave = Some(next_leave.map_or(leaves, |n| n.min(leaves)));
                }
                leaves > now
            }
            None => true,
        })
        .collect();
    let mut batches = Vec::with_capacity(kept.len().div_ceil(BATCH_ROWS));
    for chunk in kept.chunks(BATCH_ROWS) {
        let rows: Vec<Row<DocRef<'_>>> = chunk
            .iter()
            .filter(|h| h.represented)
            .map(|h| Row {
                doc: h.item.doc.root(),
                rid: container.item_rid(&h.item),
                ts: i64::try_from(h.item.meta.ts).unwrap_or(i64::MAX),
                etag: h.item.meta.etag(),
            })
            .collect();
        batches.push(record_batch(schema, arrow, &rows)?);
    }
    Ok((batches, next_leave))
}
