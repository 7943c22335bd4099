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
use cosmoql_storage::{Container, DocRef, ItemPosition, PartitionDelta, StoredItem};
use datafusion::arrow::array::ArrayData;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;
use std::sync::{Mutex, RwLock};

use crate::columns::{arrow_schema, record_batch, Row};
use crate::persist::{self, FileEntry, Identity, PartitionFile};
use crate::schema::{Observed, Schema, SchemaMode};
use crate::threads::{joined, on_threads};
use crate::view::read_ahead;

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
    ///
    /// Three steps, each on both cores when there is much to do (a first build): each
    /// partition's changes are read (in position order) and put in the order they were written;
    /// the schema observes them, partition after partition, each in that order; each partition
    /// files them.
    fn sync_round(&self, state: &mut State, now: u64, attl: Option<i64>, report: &mut SyncReport) -> bool {
        let layout = self.container.partitions();
        let mut old: Vec<MirrorPartition> = std::mem::take(&mut state.partitions);
        let mut next = Vec::with_capacity(layout.len());
        // Each partition's read: its id, the LSN it reads from, and the items it is known to take
        // (all of them when it reads from the start).
        let mut tasks: Vec<(u32, u64, usize)> = Vec::with_capacity(layout.len());
        for info in &layout {
            let p = match old.iter().position(|p| p.id == info.id) {
                Some(at) => old.swap_remove(at),
                None => inherit(&old, info.id, &info.min, &info.max),
            };
            tasks.push((p.id, p.lsn, if p.lsn == 0 { info.items } else { 0 }));
            next.push(p);
        }
        let reads: Vec<Option<Read>> = on_threads(
            tasks,
            |t| t.2,
            PARALLEL_ITEMS,
            |(id, lsn, _)| {
                let delta = self.container.partition_delta(id, lsn)?;
                let mut written: Vec<(u64, usize)> =
                    delta.changes.iter().enumerate().map(|(at, (item, _))| (item.meta.lsn, at)).collect();
                written.sort_unstable();
                Some(Read { delta, written: written.into_iter().map(|(_, at)| at).collect() })
            },
        );
        let complete = reads.iter().all(Option::is_some);
        let represented = observe_in_order(&mut state.schema, &reads);
        let mut offset = 0;
        let tasks: Vec<(&mut MirrorPartition, Option<Read>, usize)> = next
            .iter_mut()
            .zip(reads)
            .map(|(p, read)| {
                let at = offset;
                offset += read.as_ref().map_or(0, |r| r.delta.changes.len());
                (p, read, at)
            })
            .collect();
        let weight =
            |t: &(&mut MirrorPartition, Option<Read>, usize)| t.1.as_ref().map_or(0, |r| r.delta.changes.len());
        let removed: usize = on_threads(tasks, weight, PARALLEL_ITEMS, |(p, read, at)| {
            let Some(Read { delta, written }) = read else { return 0 };
            let mut flags = vec![false; written.len()];
            for (k, &i) in written.iter().enumerate() {
                flags[i] = represented.get(at + k).copied().unwrap_or(false);
            }
            self.file(p, delta, &flags, now, attl)
        })
        .into_iter()
        .sum();
        report.changed += offset;
        report.removed += removed;
        // Partitions gone (split) whose children all exist now are done with; one whose child
        // was not made yet (a split between the layout read and now) waits for the next round.
        if !complete {
            next.extend(old);
        }
        next.sort_by(|a, b| a.min.cmp(&b.min));
        state.partitions = next;
        complete
    }

    /// Files a partition's changes (in position order; `represented[i]` for `changes[i]`) in
    /// `p`, and lets go of the rows its physical partition no longer holds; returns how many went.
    fn file(
        &self,
        p: &mut MirrorPartition,
        delta: PartitionDelta,
        represented: &[bool],
        now: u64,
        attl: Option<i64>,
    ) -> usize {
        if !delta.changes.is_empty() {
            p.batches = None;
        }
        let filed = delta.changes.into_iter().zip(represented).map(|((item, epk), &represented)| {
            let held = Held { item, expired: false, represented };
            (ItemPosition { epk, seq: held.item.meta.seq }, held)
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
            return self.let_go(p, now, attl);
        }
        0
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

/// Items past which a sync's steps run on both cores.
const PARALLEL_ITEMS: usize = 8 * 1024;

/// A partition's changes as read: in position order, and `written`, their indexes in the order
/// they were written (by LSN).
struct Read {
    delta: PartitionDelta,
    written: Vec<usize>,
}

/// Observes the changes of `reads` into `schema`: partition after partition, each in the order
/// its changes were written. Whether each is represented, in that order. Many changes are
/// observed in two halves at once: the first into `schema`, the second into a copy of it as it
/// was, which [`Schema::absorb`] then takes in, or, when the halves could have come out
/// otherwise than in order (a type of one half the other would drop), observed again into
/// `schema`, in order.
fn observe_in_order(schema: &mut Schema, reads: &[Option<Read>]) -> Vec<bool> {
    let items: Vec<&StoredItem> =
        reads.iter().flatten().flat_map(|r| r.written.iter().map(|&i| &r.delta.changes[i].0)).collect();
    let observe = |schema: &mut Schema, items: &[&StoredItem]| -> Vec<bool> {
        let mut represented = Vec::with_capacity(items.len());
        read_ahead(
            items,
            |item| item.doc.root(),
            |item| represented.push(matches!(schema.observe(item.doc.root()), Observed::Included { .. })),
        );
        represented
    };
    if items.len() < PARALLEL_ITEMS || schema.mode() != SchemaMode::WellDefined {
        return observe(schema, &items);
    }
    let (first, second) = items.split_at(items.len() / 2);
    let base = schema.clone();
    let mut later = base.clone();
    let (mut represented, observed_later) = std::thread::scope(|scope| {
        let observing_second = scope.spawn(|| observe(&mut later, second));
        let first = observe(schema, first);
        (first, joined(observing_second))
    });
    let mut observed_later = if schema.absorb(&later, &base) { observed_later } else { observe(schema, second) };
    represented.append(&mut observed_later);
    represented
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

/// Builds the batches of the partitions that have none, on both cores; returns how many.
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
    on_threads(
        todo,
        |p| p.rows.len(),
        0,
        |p| -> Result<(), ArrowError> {
            let (batches, next_leave) = partition_batches(schema, arrow, p, container, now, attl)?;
            p.batches = Some(batches);
            p.file = None;
            p.next_leave = next_leave;
            Ok(())
        },
    )
    .into_iter()
    .collect::<Result<(), ArrowError>>()?;
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
                rid: container.item_rid_text(&h.item),
                ts: i64::try_from(h.item.meta.ts).unwrap_or(i64::MAX),
                etag: h.item.meta.etag_text(),
            })
            .collect();
        batches.push(record_batch(schema, arrow, &rows)?);
    }
    Ok((batches, next_leave))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cosmoql_storage::{Doc, ItemMeta};

    /// Reads of `partitions` partitions of `each` items: item `i` of the whole sequence (the
    /// order written, partition after partition) is `make(i)`, and each partition's changes come
    /// in another order (position order is not the order written).
    fn reads(partitions: usize, each: usize, make: impl Fn(usize) -> String) -> Vec<Option<Read>> {
        (0..partitions)
            .map(|p| {
                let changes: Vec<(StoredItem, Epk)> = (0..each)
                    .rev()
                    .map(|k| {
                        let i = p * each + k;
                        let meta = ItemMeta { seq: i as u64, lsn: i as u64 + 1, ts: 1, ttl: None };
                        (StoredItem { doc: Doc::from_json_str(&make(i)).unwrap(), meta }, Epk::min())
                    })
                    .collect();
                let written = (0..each).rev().collect();
                Some(Read { delta: PartitionDelta { changes, lsn: 0, items: each }, written })
            })
            .collect()
    }

    /// What observing every item one after another, in the order written, gives.
    fn one_by_one(reads: &[Option<Read>]) -> (Schema, Vec<bool>) {
        let mut schema = Schema::new(SchemaMode::WellDefined);
        let represented = reads
            .iter()
            .flatten()
            .flat_map(|r| r.written.iter().map(|&i| &r.delta.changes[i].0))
            .map(|item| matches!(schema.observe(item.doc.root()), Observed::Included { .. }))
            .collect();
        (schema, represented)
    }

    /// An item of the sequence, from its place in it.
    type Make = Box<dyn Fn(usize) -> String>;

    /// Items whose `v` is a number before `at`, a string from there.
    fn v_turns_string_at(at: usize) -> Make {
        Box::new(
            move |i| {
                if i < at {
                    format!(r#"{{"id":"{i}","v":{i}}}"#)
                } else {
                    format!(r#"{{"id":"{i}","v":"s{i}"}}"#)
                }
            },
        )
    }

    #[test]
    fn observing_in_halves_gives_what_observing_in_order_gives() {
        let cases: [(&str, Make); 4] = [
            // One type a property: the halves are absorbed.
            ("same types", Box::new(|i| format!(r#"{{"id":"{i}","n":{i},"tags":["a"]}}"#))),
            // `v` is a number until item 9000, a string after: the second half, observed from
            // the schema as it was, took numbers too, and drops the strings as in order.
            ("a type changes in the second half", v_turns_string_at(9000)),
            // From item 5000: the second half (from 6000) took strings, which the first half
            // drops; the halves are not absorbed but the second observed again, in order.
            ("a type changes in the first half", v_turns_string_at(5000)),
            // Every 97th item holds a mixed-type array: not represented.
            (
                "items left out",
                Box::new(|i| {
                    if i % 97 == 0 {
                        format!(r#"{{"id":"{i}","a":[1,"x"]}}"#)
                    } else {
                        format!(r#"{{"id":"{i}","a":[{i}]}}"#)
                    }
                }),
            ),
        ];
        for (name, make) in cases {
            let reads = reads(3, 4000, make);
            let mut schema = Schema::new(SchemaMode::WellDefined);
            let represented = observe_in_order(&mut schema, &reads);
            let (expected, expected_represented) = one_by_one(&reads);
            assert_eq!(represented, expected_represented, "{name}");
            assert_eq!(schema, expected, "{name}");
            assert_eq!(schema.describe(), expected.describe(), "{name}");
        }
    }
}
