//! How a container reaches the write-ahead log and is rebuilt from it.
//!
//! Writes are logged as after-images: each write frame holds the items as stored (document bytes
//! and system metadata) and the deletes with their LSNs, so replaying a frame never runs a
//! write's logic again (no checks, no clock, no counters): it puts back exactly what was
//! committed. One frame is one commit (a whole batch is one frame), so a batch is all there or
//! not at all after a crash. Splits are logged by their boundary and replayed in order, which
//! gives the children the same ids.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::*;
use crate::codec::{DecodeError, Decoded, Reader, Writer};
use crate::durable::{tag, Durable};

/// The most items (or kept changes) a checkpoint copies from a partition under one hold of its
/// lock: that partition's writes wait for at most this many.
const CHECKPOINT_STRETCH: usize = 2048;

/// A checkpoint frame is closed once it holds this many bytes (a frame may hold 256 MB at most;
/// an item, 2 MB).
const FRAME_BYTES: usize = 4 << 20;

/// A container's place in a durable store: the store's log and the container's number in it.
#[derive(Debug)]
pub(crate) struct Journal {
    pub durable: Arc<Durable>,
    pub handle: u32,
}

/// A change to log, kept under the partition's write lock until the write commits.
#[derive(Debug)]
pub(super) enum Entry {
    Put(StoredItem),
    Delete { epk: Epk, id: Arc<str>, lsn: u64, ts: u64, expired: bool },
}

/// A logged change and how to take it back (when the log refuses it).
#[derive(Debug)]
pub(super) struct Pending {
    pub entry: Entry,
    pub undo: Undo,
}

const ENTRY_PUT: u8 = 1;
const ENTRY_DELETE: u8 = 2;
/// A write frame's flag: the items of a checkpoint (no change feed history of their own).
const FROM_CHECKPOINT: u8 = 1;

fn put_item(w: &mut Writer, item: &StoredItem) {
    w.bytes(&item.doc.to_bytes())
        .u64(item.meta.seq)
        .u64(item.meta.lsn)
        .u64(item.meta.ts)
        .opt_i64(item.meta.ttl.map(i64::from));
}

fn read_item(r: &mut Reader<'_>) -> Decoded<StoredItem> {
    let doc = Doc::from_bytes(r.bytes()?).map_err(|e| DecodeError(format!("a stored document: {e}")))?;
    let (seq, lsn, ts) = (r.u64()?, r.u64()?, r.u64()?);
    let ttl = r.opt_i64()?.map(i32::try_from).transpose().map_err(|_| bad("a time to live out of range"))?;
    Ok(StoredItem { doc, meta: ItemMeta { seq, lsn, ts, ttl } })
}

/// A sequence number from the log, refused when it is past what any store reaches (so the
/// counters that follow it never wrap).
fn in_range(n: u64) -> Decoded<u64> {
    if n < 1 << 62 {
        Ok(n)
    } else {
        Err(bad(format!("a sequence number out of range ({n})")))
    }
}

fn bad(what: impl std::fmt::Display) -> DecodeError {
    DecodeError(what.to_string())
}

impl Container {
    /// The store's log, when the container is in a durable store.
    pub(super) fn journal(&self) -> Option<&Journal> {
        self.journal.get()
    }

    /// Joins a durable store's log (once; later calls do nothing).
    pub(crate) fn attach_journal(&self, durable: Arc<Durable>, handle: u32) {
        let _ = self.journal.set(Journal { durable, handle });
    }

    /// Waits until everything logged so far is durable (after a bulk import).
    pub fn sync_log(&self) -> Result<()> {
        match self.journal() {
            Some(j) => j.durable.sync_all(),
            None => Ok(()),
        }
    }

    /// Whether the container is in a durable store (its writes are logged).
    pub fn is_durable(&self) -> bool {
        self.journal().is_some()
    }

    pub(crate) fn journal_handle(&self) -> Option<u32> {
        self.journal().map(|j| j.handle)
    }

    /// Keeps a change for the log (when there is one) with its undo.
    pub(super) fn log_change(&self, data: &mut PartitionData, entry: impl FnOnce() -> Entry, undo: &Undo) {
        if self.journal.get().is_some() {
            data.pending.push(Pending { entry: entry(), undo: undo.clone() });
        }
    }

    /// The frame of a commit's changes.
    pub(super) fn encode_writes(handle: u32, entries: impl Iterator<Item = StoredItem>, flags: u8) -> Writer {
        let mut w = Writer::new();
        w.u8(tag::WRITES).u32(handle).u8(flags);
        for item in entries {
            w.u8(ENTRY_PUT);
            put_item(&mut w, &item);
        }
        w
    }

    fn encode_pending(handle: u32, pending: &[Pending]) -> Vec<u8> {
        let mut w = Writer::new();
        w.u8(tag::WRITES).u32(handle).u8(0);
        for p in pending {
            match &p.entry {
                Entry::Put(item) => {
                    w.u8(ENTRY_PUT);
                    put_item(&mut w, item);
                }
                Entry::Delete { epk, id, lsn, ts, expired } => {
                    w.u8(ENTRY_DELETE).bytes(epk.as_bytes()).str(id).u64(*lsn).u64(*ts).u8(*expired as u8);
                }
            }
        }
        w.buf
    }

    /// Logs what a write did (under its partition's lock): returns where its frame ends, or an
    /// error after taking every change of the write back (the log refused it: disk full).
    pub(super) fn commit_pending(
        &self,
        data: &mut PartitionData,
        log: Option<&crate::wal::Log>,
        kept_history: u64,
    ) -> Result<Option<u64>> {
        if data.pending.is_empty() {
            return Ok(None);
        }
        let (Some(journal), Some(log)) = (self.journal(), log) else {
            data.pending.clear();
            return Ok(None);
        };
        let frame = Self::encode_pending(journal.handle, &data.pending);
        let appended = if BULK.get() { log.append_bulk(&frame) } else { log.append(&frame) };
        match appended {
            Ok(end) => {
                data.pending.clear();
                Ok(Some(end))
            }
            Err(e) => {
                let pending = std::mem::take(&mut data.pending);
                for p in pending.into_iter().rev() {
                    self.undo(data, p.undo);
                }
                data.pending.clear();
                data.history.split_off(&kept_history.saturating_add(1));
                Err(journal.durable.io_error("writing to", log.path(), &e))
            }
        }
    }

    /// Writes one item of an import: an insert, or with `upsert` an upsert (`Ok(true)` when it
    /// replaced an item with its key and id).
    pub(crate) fn import_one(&self, prep: Prepared, upsert: bool) -> Result<bool> {
        if !upsert {
            // As `insert_prepared`, without keeping a copy of the item to answer with.
            return self
                .write_partition(&prep.epk, |data| self.apply_insert(data, &prep, self.stored(&prep, None)))
                .map(|()| false);
        }
        let epk = prep.epk.clone();
        self.write_partition(&epk, |data| {
            self.apply_upsert(data, &prep, &WriteOptions::default()).map(|(status, _, _)| status == 200)
        })
    }

    /// Inserts (or with `upsert` upserts) many items (an import into a durable store): each
    /// physical partition's share is written under one hold of its lock and logged as one frame,
    /// instead of a lock, a frame and a write call per item. Results in input order (`true` for an
    /// upsert that replaced an item); a frame the log refuses takes back its partition's share
    /// (each of those items fails with the log's error). Not synced.
    pub(crate) fn insert_many(&self, batch: Vec<Prepared>, upsert: bool) -> Vec<Result<bool>> {
        let mut results: Vec<Result<bool>> = (0..batch.len()).map(|_| Ok(false)).collect();
        let mut touched = Vec::new();
        {
            let gate = self.gate();
            let log = gate.as_deref().map(|l| &**l);
            let map = self.partitions.read();
            // Input positions grouped by physical partition, each group in input order.
            let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
            for (i, prep) in batch.iter().enumerate() {
                let at = Self::index_for(&map, &prep.epk);
                match groups.iter_mut().find(|(p, _)| *p == at) {
                    Some((_, members)) => members.push(i),
                    None => groups.push((at, vec![i])),
                }
            }
            for (at, members) in groups {
                let p = &map[at];
                let mut data = p.data.write();
                data.writes += 1;
                let kept_history = data.history.last_key_value().map_or(0, |(lsn, _)| *lsn);
                let mut inserted = Vec::new();
                for i in members {
                    let prep = &batch[i];
                    let written = if upsert {
                        self.apply_upsert(&mut data, prep, &WriteOptions::default()).map(|(status, _, _)| status == 200)
                    } else {
                        let stored = self.stored(prep, None);
                        self.apply_insert(&mut data, prep, stored).map(|_| false)
                    };
                    match written {
                        Ok(replaced) => {
                            results[i] = Ok(replaced);
                            inserted.push(i);
                        }
                        Err(e) => results[i] = Err(e),
                    }
                }
                if let Err(e) = self.commit_pending(&mut data, log, kept_history) {
                    for i in inserted {
                        results[i] = Err(e.clone());
                    }
                }
                if self.over_threshold(&data) && data.logical.len() > 1 {
                    touched.push(Arc::clone(p));
                }
            }
        }
        // A batch can take a partition well past the thresholds: split until none is (as one
        // write at a time would have).
        let mut over = touched;
        while !over.is_empty() {
            let mut split_any = false;
            for p in &over {
                split_any |= self.split(p);
            }
            if !split_any {
                break;
            }
            over = self
                .partitions
                .read()
                .iter()
                .filter(|p| {
                    let data = p.data.read();
                    self.over_threshold(&data) && data.logical.len() > 1
                })
                .cloned()
                .collect();
        }
        results
    }

    /// Logs a split at `boundary` (before it happens); false when the log refuses it (the split
    /// is then not made).
    pub(super) fn log_split(&self, boundary: &Epk) -> bool {
        let Some(journal) = self.journal() else { return true };
        let mut w = Writer::new();
        w.u8(tag::SPLIT).u32(journal.handle).bytes(boundary.as_bytes());
        journal.durable.append_now(&w.buf).is_ok()
    }

    /// Logs the container's changeable properties (indexing policy, default time to live) and
    /// its throughput as they are now, synced: call it after changing them (a durable store;
    /// nothing otherwise).
    pub fn persist_properties(&self) -> Result<()> {
        let Some(journal) = self.journal() else { return Ok(()) };
        let mut w = Writer::new();
        w.u8(tag::CONTAINER_PROPERTIES).u32(journal.handle);
        self.encode_changeable(&mut w);
        // Last, so records written before it existed still read.
        w.opt_i64(self.analytical_ttl());
        journal.durable.append_synced(&w.buf)
    }

    fn encode_changeable(&self, w: &mut Writer) {
        w.str(&cosmoql_value::to_json_string(&self.indexing_policy().to_json()).unwrap_or_default());
        w.opt_i64(self.default_ttl());
        Throttle::encode_optional(self.throughput.read().as_deref(), w);
    }

    fn replay_changeable(&self, r: &mut Reader<'_>) -> Decoded<()> {
        let policy = cosmoql_value::parse_json(r.str()?).map_err(bad)?;
        let policy = IndexingPolicy::from_json(&policy).map_err(bad)?;
        *self.indexing_policy.write() = Arc::new(policy);
        self.plan_epoch.store(NEXT_PLAN_EPOCH.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        let ttl = r.opt_i64()?;
        *self.default_ttl.write() = ttl;
        let clock = Arc::clone(&*self.clock.read());
        *self.throughput.write() = Throttle::decode_optional(r, &clock)?;
        Ok(())
    }

    /// The container as a record: what creates it again, with its partition layout and counters
    /// (`handle`: its number in the log).
    pub(crate) fn encode_state(&self, database: &str, handle: u32) -> Vec<u8> {
        let mut w = Writer::new();
        w.u8(tag::CREATE_CONTAINER).str(database).u32(handle).str(&self.id).u32(self.rid).u32(self.database_rid);
        w.str(&cosmoql_value::to_json_string(&self.definition.to_json()).unwrap_or_default());
        let s = &self.settings;
        w.u64(s.initial_partitions as u64).u64(s.split_max_items as u64).u64(s.split_max_bytes);
        w.u64(s.logical_partition_max_bytes).opt_u64(s.change_feed_retention).opt_i64(s.default_ttl);
        w.u32(s.unique_keys.len() as u32);
        for key in &s.unique_keys {
            w.u32(key.paths.len() as u32);
            for p in &key.paths {
                w.str(p);
            }
        }
        self.encode_changeable(&mut w);
        let map = self.partitions.read();
        w.u64(self.next_seq.load(Ordering::Relaxed))
            .u64(self.next_lsn.load(Ordering::Relaxed))
            .u64(self.next_partition_id.load(Ordering::Relaxed))
            .u64(self.splits.load(Ordering::Relaxed));
        w.u32(map.len() as u32);
        for p in map.iter() {
            w.u32(p.id).bytes(p.min.as_bytes()).bytes(p.max.as_bytes());
        }
        // Last, so records written before they existed still read: the properties kept for the
        // service's sake (empty: none), then the creation time.
        let kept = s.kept_properties.as_ref().and_then(cosmoql_value::to_json_string);
        w.str(kept.as_deref().unwrap_or_default()).u64(self.created).opt_i64(self.analytical_ttl());
        self.encode_scripts(&mut w);
        w.buf
    }

    /// A container from [`Container::encode_state`] (after its tag and database id), empty, with
    /// its indexes suspended until [`Container::finish_replay`]; returns it and its handle.
    pub(crate) fn decode_state(r: &mut Reader<'_>, clock: Arc<dyn Clock>) -> Decoded<(Container, u32)> {
        let handle = r.u32()?;
        let id = r.str()?.to_string();
        let rid = r.u32()?;
        let database_rid = r.u32()?;
        let definition = cosmoql_value::parse_json(r.str()?).map_err(bad)?;
        let definition = PartitionKeyDefinition::from_json(&definition).map_err(bad)?;
        let mut settings = ContainerSettings {
            initial_partitions: r.u64()? as usize,
            split_max_items: r.u64()? as usize,
            split_max_bytes: r.u64()?,
            logical_partition_max_bytes: r.u64()?,
            change_feed_retention: r.opt_u64()?,
            default_ttl: r.opt_i64()?,
            unique_keys: Vec::new(),
            kept_properties: None,
        };
        for _ in 0..r.u32()? {
            let paths: Vec<String> = (0..r.u32()?).map(|_| r.str().map(str::to_string)).collect::<Decoded<_>>()?;
            let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
            settings.unique_keys.push(UniqueKey::new(&refs).map_err(bad)?);
        }
        let container = Container::with_rids(id, definition, settings, database_rid, rid);
        *container.clock.write() = clock;
        container.replay_changeable(r)?;
        container.next_seq.store(in_range(r.u64()?)?, Ordering::Relaxed);
        container.next_lsn.store(in_range(r.u64()?)?, Ordering::Relaxed);
        container.next_partition_id.store(in_range(r.u64()?)?, Ordering::Relaxed);
        container.splits.store(in_range(r.u64()?)?, Ordering::Relaxed);
        let policy = container.indexing_policy();
        let mut partitions = Vec::new();
        for _ in 0..r.u32()? {
            let id = r.u32()?;
            let min = Epk::from_bytes(r.bytes()?);
            let max = Epk::from_bytes(r.bytes()?);
            let mut data = PartitionData::new(Arc::clone(&policy));
            data.index = PartitionIndex::suspended(Arc::clone(&policy));
            partitions.push(Arc::new(PhysicalPartition { id, min, max, data: RwLock::new(data) }));
        }
        let contiguous =
            partitions.windows(2).all(|w| w[0].max == w[1].min) && partitions.iter().all(|p| p.min < p.max);
        if partitions.is_empty()
            || partitions[0].min != Epk::min()
            || partitions[partitions.len() - 1].max != Epk::max()
            || !contiguous
        {
            return Err(bad(format!("container `{}`: its partitions do not cover the key space", container.id)));
        }
        *container.partitions.write() = partitions;
        let mut container = container;
        if !r.is_done() {
            let kept = r.str()?;
            if !kept.is_empty() {
                container.settings.kept_properties = Some(cosmoql_value::parse_json(kept).map_err(bad)?);
            }
        }
        // Records written before containers kept their creation time read as created now.
        if !r.is_done() {
            container.created = r.u64()?;
        }
        if !r.is_done() {
            *container.analytical_ttl.write() = r.opt_i64()?;
        }
        if !r.is_done() {
            container.replay_scripts(r)?;
        }
        Ok((container, handle))
    }

    /// Replays a changeable-properties record.
    pub(crate) fn replay_properties(&self, r: &mut Reader<'_>) -> Decoded<()> {
        self.replay_changeable(r)?;
        if !r.is_done() {
            *self.analytical_ttl.write() = r.opt_i64()?;
        }
        self.suspend_indexes();
        Ok(())
    }

    /// Replays a write frame (after its tag and handle).
    pub(crate) fn replay_writes(&self, r: &mut Reader<'_>) -> Decoded<()> {
        let from_checkpoint = r.u8()? & FROM_CHECKPOINT != 0;
        while !r.is_done() {
            match r.u8()? {
                ENTRY_PUT => {
                    let item = read_item(r)?;
                    self.replay_put(item, from_checkpoint)?;
                }
                ENTRY_DELETE => {
                    let epk = Epk::from_bytes(r.bytes()?);
                    let id = r.str()?;
                    let (lsn, ts, expired) = (r.u64()?, r.u64()?, r.u8()? != 0);
                    self.replay_delete(&epk, id, lsn, ts, expired)?;
                }
                t => return Err(bad(format!("a write entry of unknown kind {t}"))),
            }
        }
        Ok(())
    }

    pub(super) fn replay_put(&self, item: StoredItem, from_checkpoint: bool) -> Decoded<()> {
        let doc = item.doc.clone();
        let root = doc.root();
        let id: Arc<str> = Arc::from(root.get("id").and_then(|v| v.as_str()).ok_or_else(|| bad("an item without id"))?);
        let key = self.definition.key_of(root).map_err(bad)?;
        let epk = self.definition.epk(&key).map_err(bad)?;
        let prep = Prepared { doc: item.doc.clone(), id, key, epk, ttl: item.meta.ttl };
        self.next_seq.fetch_max(in_range(item.meta.seq)? + 1, Ordering::Relaxed);
        self.next_lsn.fetch_max(in_range(item.meta.lsn)? + 1, Ordering::Relaxed);
        let map = self.partitions.read();
        let p = &map[Self::index_for(&map, &prep.epk)];
        let mut data = p.data.write();
        let restoring = from_checkpoint && self.settings.change_feed_retention.is_some();
        let kept = data.history.remove(&item.meta.lsn);
        let result = if existing(&data, &prep.epk, &prep.id).is_some() {
            self.apply_replace(&mut data, &prep, item.clone()).map(drop)
        } else {
            self.apply_insert(&mut data, &prep, item.clone())
        };
        if restoring {
            // A checkpoint's items carry no history of their own: its history frames do.
            data.history.remove(&item.meta.lsn);
            if let Some(kept) = kept {
                data.history.insert(item.meta.lsn, kept);
            }
        }
        result.map_err(|e| bad(format!("replaying item `{}`: {e}", prep.id)))
    }

    fn replay_delete(&self, epk: &Epk, id: &str, lsn: u64, ts: u64, expired: bool) -> Decoded<()> {
        self.next_lsn.fetch_max(in_range(lsn)? + 1, Ordering::Relaxed);
        let map = self.partitions.read();
        let mut data = map[Self::index_for(&map, epk)].data.write();
        self.apply_delete_at(&mut data, epk, id, expired, Some((lsn, ts)));
        Ok(())
    }

    /// Replays a split (after its tag and handle).
    pub(crate) fn replay_split(&self, r: &mut Reader<'_>) -> Decoded<()> {
        let boundary = Epk::from_bytes(r.bytes()?);
        let mut map = self.partitions.write();
        let p = Arc::clone(&map[Self::index_for(&map, &boundary)]);
        let mut data = p.data.write();
        if boundary != p.min {
            self.split_at(&mut map, &p, &mut data, boundary);
        }
        Ok(())
    }

    /// A checkpoint's history frame: the all-versions change feed of one partition.
    pub(crate) fn replay_history(&self, r: &mut Reader<'_>) -> Decoded<()> {
        let epk_of_partition = Epk::from_bytes(r.bytes()?);
        let map = self.partitions.read();
        let mut data = map[Self::index_for(&map, &epk_of_partition)].data.write();
        while !r.is_done() {
            let lsn = r.u64()?;
            let operation = match r.u8()? {
                0 => ChangeOperation::Create,
                1 => ChangeOperation::Replace,
                _ => ChangeOperation::Delete,
            };
            let epk = Epk::from_bytes(r.bytes()?);
            let id: Arc<str> = Arc::from(r.str()?);
            let key = r.key()?;
            let item = if r.u8()? == 1 { Some(read_item(r)?) } else { None };
            let previous_lsn = r.opt_u64()?;
            let ts = r.u64()?;
            let ttl_expired = r.u8()? != 0;
            self.next_lsn.fetch_max(in_range(lsn)? + 1, Ordering::Relaxed);
            data.history.insert(lsn, Change { operation, epk, id, key, item, previous_lsn, ts, ttl_expired });
        }
        Ok(())
    }

    /// Builds the indexes after a replay (in bulk, as an import does) and the expiry queue.
    pub(crate) fn finish_replay(&self) -> Decoded<()> {
        for p in self.partitions.read().iter() {
            for lp in p.data.write().logical.values_mut() {
                if let Some(seq) = lp.sort_by_seq() {
                    return Err(bad(format!("container `{}`: two items with sequence number {seq}", self.id)));
                }
            }
        }
        self.transform_indexes(usize::MAX);
        let _ = self.set_default_ttl(self.default_ttl());
        Ok(())
    }

    /// The container's items and history as checkpoint frames, each passed to `out` while writes
    /// go on. A partition is copied a stretch of [`CHECKPOINT_STRETCH`] items at a time (in key
    /// order, and in sequence order within a logical partition; then its kept changes by LSN),
    /// each stretch passed while the partition's lock is held, so its frames fall into the log
    /// between that partition's writes, in the order of its changes: replaying a copy sets an item to what it was then,
    /// and the writes after it follow. An item written before its stretch was copied is in the
    /// log twice, which replays the same; a logical partition made after the copy began is
    /// whole in the log. No partition splits meanwhile. Stops early (returning `false`) when
    /// `keep_going` says so (it is asked before each stretch).
    pub(crate) fn checkpoint_frames(
        &self,
        handle: u32,
        out: &mut dyn FnMut(&[u8]) -> Result<()>,
        keep_going: &dyn Fn() -> bool,
    ) -> Result<bool> {
        const ITEMS_PER_FRAME: usize = 512;
        let _layout = self.layout.lock();
        let partitions: Vec<Arc<PhysicalPartition>> = self.partitions.read().clone();
        for p in &partitions {
            // Items, from where the last stretch stopped: a logical partition and an item
            // sequence number in it (items are kept in sequence order; a write after the copy
            // began gives its item a new, higher one, so nothing is passed over).
            let mut at: Option<(Epk, u64)> = None;
            loop {
                if !keep_going() {
                    return Ok(false);
                }
                let data = p.data.read();
                let rest = match &at {
                    None => data.logical.range::<Epk, _>(..),
                    Some((epk, _)) => data.logical.range((Bound::Included(epk), Bound::Unbounded)),
                };
                let mut chunk: Vec<StoredItem> = Vec::with_capacity(ITEMS_PER_FRAME);
                let (mut bytes, mut copied) = (0usize, 0usize);
                let mut resume = None;
                'stretch: for (epk, lp) in rest {
                    let from = match &at {
                        Some((e, seq)) if e == epk => *seq,
                        _ => 0,
                    };
                    for item in lp.iter_from(from) {
                        if copied == CHECKPOINT_STRETCH {
                            resume = Some((epk.clone(), item.meta.seq));
                            break 'stretch;
                        }
                        bytes += item.doc.len();
                        chunk.push(item.clone());
                        copied += 1;
                        if chunk.len() == ITEMS_PER_FRAME || bytes > FRAME_BYTES {
                            out(&Self::encode_writes(handle, chunk.drain(..), FROM_CHECKPOINT).buf)?;
                            bytes = 0;
                        }
                    }
                }
                if !chunk.is_empty() {
                    out(&Self::encode_writes(handle, chunk.drain(..), FROM_CHECKPOINT).buf)?;
                }
                match resume {
                    Some(next) => at = Some(next),
                    None => break,
                }
            }
            // Kept changes (the all-versions feed), by LSN up to the last one kept now; later
            // ones are writes logged after this point.
            let mut from = 0u64;
            let upto = p.data.read().history.last_key_value().map_or(0, |(lsn, _)| *lsn);
            while from < upto {
                if !keep_going() {
                    return Ok(false);
                }
                let data = p.data.read();
                let mut w = Writer::new();
                w.u8(tag::HISTORY).u32(handle).bytes(p.min.as_bytes());
                let mut copied = 0;
                let mut next = upto;
                for (lsn, c) in data.history.range((Bound::Excluded(from), Bound::Included(upto))) {
                    if copied == CHECKPOINT_STRETCH || w.buf.len() > FRAME_BYTES {
                        next = lsn - 1;
                        break;
                    }
                    let op = match c.operation {
                        ChangeOperation::Create => 0,
                        ChangeOperation::Replace => 1,
                        ChangeOperation::Delete => 2,
                    };
                    w.u64(*lsn).u8(op).bytes(c.epk.as_bytes()).str(&c.id).key(&c.key);
                    match &c.item {
                        Some(item) => {
                            w.u8(1);
                            put_item(&mut w, item);
                        }
                        None => {
                            w.u8(0);
                        }
                    }
                    w.opt_u64(c.previous_lsn).u64(c.ts).u8(c.ttl_expired as u8);
                    copied += 1;
                }
                if copied > 0 {
                    out(&w.buf)?;
                }
                from = next;
            }
        }
        Ok(true)
    }

    /// The container's resource id number in its database.
    pub(crate) fn rid(&self) -> u32 {
        self.rid
    }
}
