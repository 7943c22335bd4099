//! The cross-partition coordinator: one producer per physical partition the plan targets, at most
//! MaxDegreeOfParallelism of them at a time, and the client-side merge of what they produce.
//!
//! - **Concatenate**: producers run ahead into bounded channels (the buffer bound is
//!   MaxBufferedItemCount, plus one page of the partition being drained so the merge always
//!   moves); the coordinator drains them in EPK order and stops everything once it has enough.
//! - **Merge sorted**: each producer sorts its partition's rows (keeping what the page can still
//!   return); the coordinator merges them k ways ([`merge_rows`]), projecting a row only when it
//!   is returned.
//! - **Merge groups**: each producer computes partial groups; the coordinator merges them in scan
//!   order and finishes them.
//!
//! With one producer at a time, the work runs on the caller's thread, in EPK order.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Mutex;

use cosmoql_planner::{Access, AggregateKind, BoundQuery, OrderedRead, PointRead, UnitShare, SEEK_THEN_SORT};
use cosmoql_storage::{Epk, IndexBounds, IndexKey, IndexServing, IndexStep, IndexWork, ItemPosition, StoredItem};
use cosmoql_value::Value;

use crate::aggregate::{merge_groups, Accumulator, Groups};
use crate::continuation::ResumePoint;
use crate::cost::Work;
use crate::emitter::{Emitter, Seen};
use crate::error::QueryError;
use crate::key_merge::{merge_on_keys, KeyMerge};
use crate::memory::Charge;
use crate::merge::{merge_rows, SortCursor, SortedRow};
use crate::operators::{Flow, RunStats, Runner};
use crate::output::Output;
use crate::rank::{StatisticsGatherer, TextStatistics};
use crate::row::RowPos;
use crate::source::{Input, QuerySource};

/// A unit's EPK ranges.
pub type UnitRanges = smallvec::SmallVec<[(Epk, Epk); 1]>;

/// One producer's share of the query: EPK ranges inside one physical partition.
#[derive(Debug, Clone)]
pub struct Unit {
    /// The physical partition's id.
    pub partition: u32,
    /// Resume here (inclusive) instead of at the start of the range that holds it.
    pub start: Option<ItemPosition>,
    /// Its EPK ranges (nearly always one: the whole partition, or the part of it a query targets),
    /// held inline.
    pub ranges: UnitRanges,
    /// A point read: the query pins the key and the id.
    pub point: Option<PointRead>,
}

/// The full-text statistics `ORDER BY RANK` scores under (`crate::rank`): over every item of the
/// container, whatever the query's targets, read (and charged) as the query's reads are; `None`
/// when the query ranks no text.
pub fn text_statistics(
    source: &dyn QuerySource,
    query: &BoundQuery,
    runner: &Runner<'_>,
    stats: &mut RunStats,
    meter: &Cell<Work>,
) -> Result<Option<TextStatistics>, QueryError> {
    let Some(gatherer) = query.rank.as_ref().and_then(StatisticsGatherer::new) else { return Ok(None) };
    let whole = [(Epk::min(), Epk::max())];
    let mut inputs = Vec::new();
    for p in source.partitions_overlapping(&whole) {
        let unit = Unit { partition: p.id, start: None, ranges: smallvec::smallvec![(p.min, p.max)], point: None };
        inputs.push(unit_input(source, &unit, &Access::default(), stats, meter));
    }
    runner.gather(query, gatherer, &mut inputs.into_iter().flatten(), stats).map(Some)
}

/// The items of a unit, in scan order: every item, or those the index filter finds when the plan
/// probes for this unit ([`Access::probes`]; the entries it reads are counted in `stats`).
pub fn unit_input<'c>(
    source: &'c dyn QuerySource,
    unit: &Unit,
    access: &Access,
    stats: &mut RunStats,
    meter: &'c Cell<Work>,
) -> Box<Input<'c>> {
    unit_input_answered(source, unit, access, stats, meter).0
}

/// [`unit_input`], and whether every item it reads satisfies the WHERE clause
/// ([`Access::filter_answered`]): its rows need not be filtered again.
pub fn unit_input_answered<'c>(
    source: &'c dyn QuerySource,
    unit: &Unit,
    access: &Access,
    stats: &mut RunStats,
    meter: &'c Cell<Work>,
) -> (Box<Input<'c>>, bool) {
    let tick = move |entries: u64, bytes: u64| {
        let mut w = meter.get();
        w.add(Work { bytes, entries });
        meter.set(w);
    };
    // A point read reads its item; otherwise the filter's probe, when the unit's share of its
    // partitions makes the index worth it (asked only then: it counts items).
    let probe = match (&unit.point, &access.filter, source.indexes()) {
        (None, Some(probe), Some(indexes)) if access.probes(unit_share(source, unit)) => Some((probe, indexes)),
        _ => None,
    };
    if let Some((probe, indexes)) = probe {
        if let Some((positions, work)) = indexes.index_probe(&unit.ranges, probe, unit.start.as_ref()) {
            stats.index_entries += work.entries;
            // The probe's entries are charged one per item as the items are read; what it read
            // beyond them, when the unit starts at its beginning (a resumed unit's earlier
            // entries were charged by earlier pages).
            if unit.start.is_none() {
                tick(work.entries.saturating_sub(positions.len() as u64), 0);
            }
            let fetch = Fetch { indexes, positions, next: 0, buffer: Vec::new().into_iter() };
            return (
                Box::new(fetch.inspect(move |(_, item)| tick(1, item.doc.len() as u64))),
                access.filter_answered(true),
            );
        }
    }
    if let Some(point) = &unit.point {
        let found = source.read_item(&point.key, &point.id);
        let epk = unit.ranges.first().map(|r| r.0.clone()).unwrap_or_else(Epk::min);
        let read = found.into_iter().map(move |item| {
            tick(0, item.doc.len() as u64);
            (ItemPosition { epk: epk.clone(), seq: item.meta.seq }, item)
        });
        return (Box::new(read), point.answers_filter);
    }
    let ranges = unit.ranges.clone();
    let start = unit.start.clone();
    let scan: Box<Input<'c>> = Box::new(
        ranges
            .into_iter()
            .flat_map(move |(min, max)| {
                let from = match &start {
                    Some(at) if min <= at.epk && at.epk < max => at.clone(),
                    _ => ItemPosition::start_of(min),
                };
                source.scan(from, max)
            })
            .inspect(move |(_, item)| tick(0, item.doc.len() as u64)),
    );
    (scan, access.filter_answered(false))
}

/// The bytes of the item a row comes from.
fn item_bytes(row: &crate::row::Row) -> u64 {
    row.iter()
        .find_map(|b| match b {
            crate::row::Binding::Item(item) => Some(item.doc.len() as u64),
            _ => None,
        })
        .unwrap_or(0)
}

/// What the storage says of a unit's share of its physical partitions (`None` when it does not
/// know): the statistics the plan's run-time choices read (`cosmoql_planner::choices`).
fn unit_share(source: &dyn QuerySource, unit: &Unit) -> Option<UnitShare> {
    source.indexes().map(|i| i.items_in(&unit.ranges)).map(|r| UnitShare {
        inside: r.inside,
        whole: r.whole,
        own_orders: r.own_orders,
    })
}

/// The items at known positions, read a chunk at a time.
struct Fetch<'c> {
    indexes: &'c dyn IndexServing,
    positions: Vec<ItemPosition>,
    next: usize,
    buffer: std::vec::IntoIter<(ItemPosition, StoredItem)>,
}

impl Iterator for Fetch<'_> {
    type Item = (ItemPosition, StoredItem);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(entry) = self.buffer.next() {
                return Some(entry);
            }
            if self.next >= self.positions.len() {
                return None;
            }
            let end = (self.next + 256).min(self.positions.len());
            self.buffer = self.indexes.fetch(&self.positions[self.next..end]).into_iter();
            self.next = end;
        }
    }
}

/// Metrics of one physical partition's producer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartitionMetrics {
    pub partition: u32,
    pub retrieved_document_count: u64,
    /// Bytes of the items loaded.
    pub retrieved_document_size: u64,
    /// Index entries read.
    pub index_entries: u64,
    pub time_ms: f64,
}

/// How many producer threads a query over `units` partitions runs: MaxDegreeOfParallelism, where
/// -1 means one per core (asked of the OS once per process: the answer costs system calls), and
/// never more than there are partitions nor fewer than one.
pub fn producer_threads(max_degree_of_parallelism: i32, units: usize) -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let dop = match max_degree_of_parallelism {
        -1 => *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        n if n <= 1 => 1,
        n => n as usize,
    };
    dop.clamp(1, units.max(1))
}

/// A page of results from a producer, or its end.
enum Message {
    /// Results, each with the work read since the previous one of its unit.
    Page(Vec<(RowPos, Output, Work)>),
    /// The unit's counters, and the work read after its last result.
    Done(RunStats, Work),
    Failed(QueryError),
}

/// Where a producer leaves its result for the coordinator.
type Outcome<T> = Mutex<Option<Result<(T, RunStats), QueryError>>>;

/// Runs one plan's producers and merges their output.
pub struct Coordinator<'a> {
    pub source: &'a dyn QuerySource,
    pub query: &'a BoundQuery,
    /// What the indexes do for the query.
    pub access: &'a Access,
    pub units: &'a [Unit],
    pub runner: &'a Runner<'a>,
    /// Producer threads at most (MaxDegreeOfParallelism).
    pub max_degree_of_parallelism: i32,
    /// Results produced but not yet returned, at most (plus one page of the partition drained).
    pub max_buffered_item_count: Option<usize>,
    /// The page size: a producer sends results in batches of a page (at most 1,000).
    pub page_size: usize,
    /// Where the previous page stopped.
    pub resume: Option<ResumePoint>,
    /// Per-partition counters, filled as producers finish.
    pub per_partition: Mutex<Vec<PartitionMetrics>>,
}

impl std::fmt::Debug for Coordinator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coordinator").field("units", &self.units).field("resume", &self.resume).finish_non_exhaustive()
    }
}

impl Coordinator<'_> {
    fn threads(&self) -> usize {
        producer_threads(self.max_degree_of_parallelism, self.units.len())
    }

    fn resume_after(&self) -> Option<&RowPos> {
        match &self.resume {
            Some(ResumePoint::Position(pos)) => Some(pos),
            _ => None,
        }
    }

    fn sort_cursor(&self) -> Option<&SortCursor> {
        match &self.resume {
            Some(ResumePoint::Sort(cursor)) => Some(cursor),
            _ => None,
        }
    }

    /// Notes what one producer did.
    fn report(&self, unit: usize, stats: &RunStats) {
        if let Ok(mut list) = self.per_partition.lock() {
            list.push(PartitionMetrics {
                partition: self.units[unit].partition,
                retrieved_document_count: stats.retrieved,
                retrieved_document_size: stats.retrieved_bytes,
                index_entries: stats.index_entries,
                time_ms: stats.nanos as f64 / 1e6,
            });
        }
    }

    /// The per-partition metrics, in partition order.
    pub fn partition_metrics(self) -> Vec<PartitionMetrics> {
        let mut list = self.per_partition.into_inner().unwrap_or_default();
        list.sort_by_key(|p| p.partition);
        list
    }

    /// Runs `work` for every unit on the producer threads, in EPK order of starting.
    fn run_producers(&self, work: &(dyn Fn(usize, &AtomicBool) + Sync), cancel: &AtomicBool) {
        let next = AtomicUsize::new(0);
        if self.threads() == 1 {
            // One producer at a time: run them here, in EPK order, without a thread.
            for i in 0..self.units.len() {
                if cancel.load(AtomicOrdering::Relaxed) {
                    return;
                }
                work(i, cancel);
            }
            return;
        }
        std::thread::scope(|scope| {
            for _ in 0..self.threads() {
                let producer = || loop {
                    if cancel.load(AtomicOrdering::Relaxed) {
                        return;
                    }
                    let i = next.fetch_add(1, AtomicOrdering::Relaxed);
                    if i >= self.units.len() {
                        return;
                    }
                    work(i, cancel);
                };
                // The main thread's stack size: deeply nested (but legal) queries recurse here.
                let spawned = std::thread::Builder::new()
                    .name("producer".into())
                    .stack_size(8 << 20)
                    .spawn_scoped(scope, producer);
                if spawned.is_err() {
                    // No thread to be had: the remaining work runs on this one.
                    producer();
                }
            }
        });
    }

    /// Every target partition's items in EPK order as one input, for the queries that run in one
    /// pass on the client (ORDER BY RANK, FROM subqueries).
    /// `meter` counts the work read (the emitter reads it at each result).
    pub fn one_pass(&self, stats: &mut RunStats, out: &mut Emitter<'_>, meter: &Cell<Work>) -> Result<(), QueryError> {
        let mut inputs = Vec::with_capacity(self.units.len());
        for u in self.units {
            inputs.push(unit_input(self.source, u, self.access, stats, meter));
        }
        let mut all = inputs.into_iter().flatten();
        self.runner.run_into(self.query, &mut all, stats, out)
    }

    /// No ORDER BY: concatenate the partitions' results in EPK order.
    /// Run serially, the work read is counted on `meter` (the emitter reads it at each result).
    pub fn concatenated(
        &self,
        stats: &mut RunStats,
        out: &mut Emitter<'_>,
        meter: &Cell<Work>,
    ) -> Result<(), QueryError> {
        if self.access.distinct_keys.is_some() {
            return self.distinct_values(stats, out, meter);
        }
        self.concatenated_rows(stats, out, meter)
    }

    /// `DISTINCT VALUE` of an indexed path: the values in ascending order, from the index's keys
    /// when it has them all, else from the items (sorted, so that the results, and the pages,
    /// are the same whichever way they were found).
    fn distinct_values(
        &self,
        stats: &mut RunStats,
        out: &mut Emitter<'_>,
        meter: &Cell<Work>,
    ) -> Result<(), QueryError> {
        let before = stats.index_entries;
        let values = match self.distinct_from_index(stats) {
            Some(values) => {
                out.note_work(Work { bytes: 0, entries: stats.index_entries - before });
                values
            }
            None => {
                let mut all = Emitter::unlimited(self.query).with_budget(&self.runner.budget);
                self.concatenated_rows(stats, &mut all, meter)?;
                // All of it is read before the first value goes out.
                out.note_work(all.charged_work(true));
                let mut values: Vec<Value> = all.finish().into_iter().map(Output::into_value).collect();
                values.sort_unstable();
                values
            }
        };
        for v in values {
            if out.push(v)? {
                break;
            }
        }
        Ok(())
    }

    fn concatenated_rows(
        &self,
        stats: &mut RunStats,
        out: &mut Emitter<'_>,
        meter: &Cell<Work>,
    ) -> Result<(), QueryError> {
        if self.threads() == 1 {
            return self.concatenated_serially(stats, out, meter);
        }
        // Results a producer sends at once: a page, at most 1,000 (a page of usize::MAX is no batch).
        let page = self.page_size.clamp(1, 1000);
        let bound = i64::try_from(self.max_buffered_item_count.unwrap_or(usize::MAX)).unwrap_or(i64::MAX);
        let (senders, receivers): (Vec<SyncSender<Message>>, Vec<Receiver<Message>>) =
            (0..self.units.len()).map(|_| sync_channel::<Message>(1)).unzip();
        let senders: Vec<Mutex<Option<SyncSender<Message>>>> =
            senders.into_iter().map(|s| Mutex::new(Some(s))).collect();
        // Results produced but not yet handed to the caller, and the unit being drained.
        let buffered = AtomicI64::new(0);
        let pending: Vec<AtomicI64> = self.units.iter().map(|_| AtomicI64::new(0)).collect();
        let current = AtomicUsize::new(0);
        let peak = AtomicI64::new(0);
        let cancel = AtomicBool::new(false);
        let needed = out.rows_wanted();
        let q = self.query;
        // A page may go out when it keeps the buffer within the bound, or, for the unit being
        // drained, when none of its pages is waiting (so the merge always moves).
        let send = |i: usize,
                    tx: &SyncSender<Message>,
                    batch: Vec<(RowPos, Output, Work)>,
                    cancel: &AtomicBool|
         -> bool {
            let n = batch.len() as i64;
            // Reserve room atomically, so two producers cannot both take the last of it.
            let now = loop {
                if cancel.load(AtomicOrdering::Relaxed) {
                    return false;
                }
                let now = buffered.load(AtomicOrdering::SeqCst);
                let drained = current.load(AtomicOrdering::SeqCst) == i && pending[i].load(AtomicOrdering::SeqCst) == 0;
                if (now.saturating_add(n) <= bound || drained)
                    && buffered.compare_exchange(now, now + n, AtomicOrdering::SeqCst, AtomicOrdering::SeqCst).is_ok()
                {
                    break now + n;
                }
                std::thread::sleep(std::time::Duration::from_micros(50));
            };
            pending[i].fetch_add(n, AtomicOrdering::SeqCst);
            peak.fetch_max(now, AtomicOrdering::SeqCst);
            tx.send(Message::Page(batch)).is_ok()
        };
        let work = |i: usize, cancel: &AtomicBool| {
            let Some(tx) = senders[i].lock().ok().and_then(|mut s| s.take()) else { return };
            let started = std::time::Instant::now();
            let mut unit_stats = RunStats::default();
            let mut batch = Vec::with_capacity(page);
            let mut produced = 0u64;
            let mut seen = q.distinct.then(Seen::default);
            // This producer's DISTINCT set, given back when it is done.
            let mut held = Charge::new(&self.runner.budget);
            let ctx = self.runner.ctx(None);
            // The unit's work, and its reading at the last result sent.
            let meter = Cell::new(Work::default());
            let mut last = Work::default();
            let (mut input, answered) =
                unit_input_answered(self.source, &self.units[i], self.access, &mut unit_stats, &meter);
            let result = self.runner.for_each_row(q, &mut input, &Vec::new(), &mut unit_stats, &mut |row, pos| {
                if cancel.load(AtomicOrdering::Relaxed) {
                    return Ok(Flow::Stop);
                }
                if self.resume_after().is_some_and(|after| pos <= after) {
                    // Read again to find the resume point: charged by the page that read it first.
                    last = meter.get();
                    return Ok(Flow::Continue);
                }
                // Rows of items the indexes found exactly are not filtered again.
                if !answered && !self.runner.passes(q, row)? {
                    return Ok(Flow::Continue);
                }
                let mut v = self.runner.project(q, &ctx, row)?;
                if v.is_undefined() {
                    return Ok(Flow::Continue);
                }
                // DISTINCT per partition first: a duplicate never reaches the buffers (the
                // coordinator's DISTINCT keeps the first in EPK order, as this one does).
                if let Some(seen) = &mut seen {
                    match seen.first(v, Some(&mut held))? {
                        Some(first) => v = first,
                        None => return Ok(Flow::Continue),
                    }
                }
                let work = meter.get().since(last);
                last = meter.get();
                batch.push((pos.clone(), v, work));
                produced += 1;
                if batch.len() == page && !send(i, &tx, std::mem::take(&mut batch), cancel) {
                    return Ok(Flow::Stop);
                }
                // This partition alone can give at most what the page still wants.
                Ok(if needed.is_some_and(|n| produced >= n) { Flow::Stop } else { Flow::Continue })
            });
            if let Err(e) = result {
                let _ = tx.send(Message::Failed(e));
                return;
            }
            if !batch.is_empty() {
                send(i, &tx, batch, cancel);
            }
            unit_stats.nanos = started.elapsed().as_nanos() as u64;
            self.report(i, &unit_stats);
            let _ = tx.send(Message::Done(unit_stats, meter.get().since(last)));
        };
        let mut failure = None;
        std::thread::scope(|scope| {
            scope.spawn(|| self.run_producers(&work, &cancel));
            'units: for (i, rx) in receivers.iter().enumerate() {
                current.store(i, AtomicOrdering::SeqCst);
                for message in rx.iter() {
                    match message {
                        Message::Page(values) => {
                            // The page is the caller's now: release its room before marking the
                            // unit drained, so a new page never counts twice.
                            let n = values.len() as i64;
                            buffered.fetch_sub(n, AtomicOrdering::SeqCst);
                            pending[i].fetch_sub(n, AtomicOrdering::SeqCst);
                            for (pos, v, work) in values {
                                if let Err(e) = self.runner.check_cancelled() {
                                    failure = Some(e);
                                    break 'units;
                                }
                                out.note_work(work);
                                match out.push_row(v, || ResumePoint::Position(pos)) {
                                    Ok(false) => {}
                                    Ok(true) => break 'units,
                                    Err(e) => {
                                        failure = Some(e);
                                        break 'units;
                                    }
                                }
                            }
                        }
                        Message::Done(s, tail) => {
                            stats.add(&RunStats { peak_buffered: 0, ..s });
                            out.note_work(tail);
                            break;
                        }
                        Message::Failed(e) => {
                            failure = Some(e);
                            break 'units;
                        }
                    }
                }
            }
            // Stop the producers: no more results are needed.
            cancel.store(true, AtomicOrdering::Relaxed);
            for rx in &receivers {
                while let Ok(m) = rx.try_recv() {
                    if let Message::Done(s, _) = m {
                        stats.add(&RunStats { peak_buffered: 0, ..s });
                    }
                }
            }
            drop(receivers);
        });
        stats.peak_buffered = stats.peak_buffered.max(peak.load(AtomicOrdering::SeqCst).max(0) as u64);
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// One producer at a time: the partitions' rows go straight to the caller, in EPK order, on
    /// this thread (nothing is buffered).
    fn concatenated_serially(
        &self,
        stats: &mut RunStats,
        out: &mut Emitter<'_>,
        meter: &Cell<Work>,
    ) -> Result<(), QueryError> {
        let q = self.query;
        let ctx = self.runner.ctx(None);
        for (i, unit) in self.units.iter().enumerate() {
            let started = std::time::Instant::now();
            let mut unit_stats = RunStats::default();
            let (mut input, answered) = unit_input_answered(self.source, unit, self.access, &mut unit_stats, meter);
            let mut done = false;
            self.runner.for_each_row(q, &mut input, &Vec::new(), &mut unit_stats, &mut |row, pos| {
                if self.resume_after().is_some_and(|after| pos <= after) {
                    // Read again to find the resume point: charged by the page that read it first.
                    out.drop_pending();
                    return Ok(Flow::Continue);
                }
                // Rows of items the indexes found exactly are not filtered again.
                if !answered && !self.runner.passes(q, row)? {
                    return Ok(Flow::Continue);
                }
                done = out.push_row(self.runner.project(q, &ctx, row)?, || ResumePoint::Position(pos.clone()))?;
                Ok(if done { Flow::Stop } else { Flow::Continue })
            })?;
            unit_stats.nanos = started.elapsed().as_nanos() as u64;
            self.report(i, &unit_stats);
            stats.add(&RunStats { peak_buffered: 0, ..unit_stats });
            if done {
                break;
            }
        }
        Ok(())
    }

    /// ORDER BY: each producer sorts its partition's rows after the page's cursor (keeping what
    /// the page can still return); the coordinator merges them k ways, projecting a row only
    /// when it is returned.
    pub fn ordered(&self, stats: &mut RunStats, out: &mut Emitter<'_>) -> Result<(), QueryError> {
        let q = self.query;
        // OFFSET on index keys: find the last row it skips without reading any item, then read
        // only what follows.
        let mut skipped_to = None;
        // The work read before each unit's first row is charged on the first page only (later
        // pages start after the cursor; see `Runner::sort_indexed`).
        let first_page = self.sort_cursor().is_none();
        if self.access.skip_on_keys {
            // Every item is a result: merging the partitions' index keys finds the rows OFFSET
            // skips and the rows the page returns without reading any other item. (Charged as
            // the walk below would charge them: an entry and an item per row, nothing between.)
            let skip = out.pending_skip();
            let take = out.rows_wanted().map_or(0, |w| w.saturating_sub(skip));
            if skip > 0 || take > 0 {
                if let Some(merged) = self.merge_on_index(skip, take, stats)? {
                    out.skipped_before(merged.skipped);
                    // OFFSET's rows cost their index entries.
                    out.note_work(Work { bytes: 0, entries: merged.skipped });
                    skipped_to = merged.last_skipped.map(|(key, pos)| SortCursor {
                        keys: vec![key.to_value()],
                        pos: RowPos { item: Some(pos), sub: 0 },
                    });
                    if take > 0 {
                        if let Some((rows, charge)) = self.rows_at(merged.taken, stats)? {
                            let ctx = self.runner.ctx(None);
                            for row in rows {
                                self.runner.check_cancelled()?;
                                // A result costs its index entry and its item.
                                out.note_work(Work { bytes: item_bytes(&row.row), entries: 1 });
                                let result = self.runner.project(q, &ctx, &row.row)?;
                                if out.push_row(result, || ResumePoint::Sort(row.cursor()))? {
                                    break;
                                }
                            }
                            drop(charge);
                            return Ok(());
                        }
                    }
                }
            }
        }
        let keep = out.rows_wanted();
        // Walk or sort: decided on the query's own bound, never the page size, so that every
        // page of a query reads its partitions the same way (and is charged the same way).
        let bound = q.limit.map(|l| l.saturating_add(q.offset));
        let cursor = skipped_to.as_ref().or(self.sort_cursor());
        let slots: Vec<Outcome<(Vec<SortedRow>, Charge<'_>, Work)>> =
            self.units.iter().map(|_| Mutex::new(None)).collect();
        let cancel = AtomicBool::new(false);
        let work = |i: usize, _cancel: &AtomicBool| {
            let started = std::time::Instant::now();
            let mut unit_stats = RunStats::default();
            let unit = &self.units[i];
            // The plan's choice for this unit (`Access::ordered_read`): an index seek that finds
            // few items sorts those; otherwise the ORDER BY index is walked, unless the unit is a
            // small part of its partitions and the walk would read more entries than the unit
            // has items.
            // (A point read is read and sorted whatever the statistics say: none are asked.)
            let share = if unit.point.is_some() { None } else { unit_share(self.source, unit) };
            let read = self.access.ordered_read(unit.point.is_some(), share, bound);
            let sought = match (read, self.source.indexes(), &self.access.filter) {
                (OrderedRead::SeekThenSort, Some(indexes), Some(probe)) => indexes
                    .index_probe(&unit.ranges, probe, None)
                    .filter(|(positions, _)| positions.len() <= SEEK_THEN_SORT)
                    .map(|found| (indexes, found)),
                _ => None,
            };
            // A sort reads the unit whole on every page: its work is charged as the head.
            let whole = |s: &RunStats| Work { bytes: s.retrieved_bytes, entries: s.index_entries };
            let indexed = match (&self.access.order, read, sought) {
                (_, _, Some((indexes, (positions, work)))) => {
                    unit_stats.index_entries += work.entries;
                    let mut input: Box<Input<'_>> =
                        Box::new(Fetch { indexes, positions, next: 0, buffer: Vec::new().into_iter() });
                    self.runner
                        .sort(q, &mut input, &Vec::new(), keep, cursor, &mut unit_stats)
                        .map(|(rows, charge)| Some((rows, charge, whole(&unit_stats))))
                }
                (Some(order), OrderedRead::SeekThenSort | OrderedRead::Walk, None) => {
                    self.runner.sort_indexed(q, &unit.ranges, order, keep, cursor, &mut unit_stats)
                }
                _ => Ok(None),
            };
            let outcome = match indexed {
                Ok(Some(sorted)) => Ok(sorted),
                Err(e) => Err(e),
                Ok(None) => {
                    let meter = Cell::new(Work::default());
                    let mut input = unit_input(self.source, unit, self.access, &mut unit_stats, &meter);
                    self.runner
                        .sort(q, &mut input, &Vec::new(), keep, cursor, &mut unit_stats)
                        .map(|(rows, charge)| (rows, charge, whole(&unit_stats)))
                }
            }
            .map(|sorted| {
                unit_stats.nanos = started.elapsed().as_nanos() as u64;
                self.report(i, &unit_stats);
                (sorted, unit_stats)
            });
            if let Ok(mut slot) = slots[i].lock() {
                *slot = Some(outcome);
            }
        };
        self.run_producers(&work, &cancel);
        let mut sorted = Vec::with_capacity(self.units.len());
        // The rows held for the merge, and their charges (given back when the merge is done).
        let mut charges = Vec::with_capacity(self.units.len());
        let mut held = 0u64;
        let mut heads = Work::default();
        for slot in slots {
            match slot.into_inner().map_err(|_| QueryError::internal("a producer panicked"))? {
                Some(Ok(((rows, charge, head), s))) => {
                    stats.add(&RunStats { peak_buffered: 0, ..s });
                    held += rows.len() as u64;
                    sorted.push(rows.into_iter());
                    charges.push(charge);
                    heads.add(head);
                }
                Some(Err(e)) => return Err(e),
                None => return Err(QueryError::internal("a producer did not report")),
            }
        }
        // Rows held for the merge are references to stored items; a result is produced (projected)
        // only when it is returned.
        stats.peak_buffered = stats.peak_buffered.max(held);
        let ctx = self.runner.ctx(None);
        if first_page {
            out.note_work(heads);
        }
        for row in merge_rows(&q.order_by, sorted) {
            self.runner.check_cancelled()?;
            out.note_work(row.work);
            if out.push_row(self.runner.project(q, &ctx, &row.row)?, || ResumePoint::Sort(row.cursor()))? {
                break;
            }
        }
        drop(charges);
        Ok(())
    }

    /// Merges the partitions' index keys in ORDER BY order, reading no item: skips `skip` rows,
    /// then takes the positions of the next `take`. `None` when some partition's index cannot
    /// order its rows.
    fn merge_on_index(&self, skip: u64, take: u64, stats: &mut RunStats) -> Result<Option<KeyMerge>, QueryError> {
        let (Some(order), Some(indexes)) = (&self.access.order, self.source.indexes()) else { return Ok(None) };
        if self.units.iter().any(|u| u.point.is_some()) || self.units.is_empty() {
            return Ok(None);
        }
        let start = match self.sort_cursor() {
            None => None,
            Some(c) => match (c.keys.first().and_then(IndexKey::from_value), &c.pos.item) {
                (Some(key), Some(at)) => Some((key, at.seq)),
                _ => return Ok(None),
            },
        };
        let units: Vec<&[(Epk, Epk)]> = self.units.iter().map(|u| &u.ranges[..]).collect();
        let cancelled = || self.runner.check_cancelled();
        merge_on_keys(indexes, &units, order, start, (skip, take), &cancelled, &mut stats.index_entries)
    }

    /// The rows of the items `taken` (in ORDER BY order, with their index keys), in that order;
    /// `None` when some item is gone (deleted since its index entry was read: the caller runs the
    /// query the long way). The items are read in position order (a logical partition's
    /// together) and put back in the merge's order: no ORDER BY value is evaluated or compared
    /// again, and a row's cursor holds its index key (as the last row skipped's does).
    fn rows_at(
        &self,
        taken: Vec<(IndexKey, ItemPosition)>,
        stats: &mut RunStats,
    ) -> Result<Option<(Vec<SortedRow>, Charge<'_>)>, QueryError> {
        let Some(indexes) = self.source.indexes() else { return Ok(None) };
        let mut order: Vec<usize> = (0..taken.len()).collect();
        order.sort_unstable_by(|&a, &b| taken[a].1.cmp(&taken[b].1));
        let positions = order.iter().map(|&at| taken[at].1.clone()).collect();
        let mut input: Box<Input<'_>> = Box::new(Fetch { indexes, positions, next: 0, buffer: Vec::new().into_iter() });
        let (read, charge) = self.runner.collect_rows(self.query, &mut input, stats)?;
        if read.len() != taken.len() {
            return Ok(None);
        }
        let mut rows: Vec<Option<SortedRow>> = (0..taken.len()).map(|_| None).collect();
        for ((pos, row), &at) in read.into_iter().zip(&order) {
            let (key, want) = &taken[at];
            // One row per item, each the item asked for: anything else is read the long way.
            if pos.item.as_ref() != Some(want) {
                return Ok(None);
            }
            rows[at] = Some(SortedRow { keys: vec![key.to_value()], pos, row, work: Work::default() });
        }
        Ok(rows.into_iter().collect::<Option<Vec<_>>>().map(|rows| (rows, charge)))
    }

    /// `DISTINCT VALUE` of a path from the index's keys, in key order; `None` when some
    /// partition's index cannot give them all (an item without a scalar there).
    fn distinct_from_index(&self, stats: &mut RunStats) -> Option<Vec<Value>> {
        let path = self.access.distinct_keys.as_ref()?;
        let indexes = self.source.indexes()?;
        if self.units.iter().any(|u| u.point.is_some()) {
            return None;
        }
        let mut work = IndexWork::default();
        let mut keys = Vec::new();
        for unit in self.units {
            match indexes.index_keys(&unit.ranges, path, &mut work) {
                Some((found, true)) => keys.extend(found),
                _ => return None,
            }
        }
        stats.index_entries += work.entries;
        keys.sort_unstable();
        keys.dedup();
        Some(keys.into_iter().map(|k| k.to_value()).collect())
    }

    /// MIN and MAX of a path from the least and greatest index keys of each unit; `None` when
    /// some partition's index cannot give them (an item without a scalar there).
    fn bounds_from_index(&self, path: &[IndexStep], stats: &mut RunStats) -> Option<(Option<Value>, Option<Value>)> {
        let indexes = self.source.indexes()?;
        if self.units.iter().any(|u| u.point.is_some()) {
            return None;
        }
        let mut work = IndexWork::default();
        let mut all = IndexBounds { least: None, greatest: None, complete: true };
        for unit in self.units {
            let bounds = indexes.index_bounds(&unit.ranges, path, self.access.filter.as_ref(), &mut work)?;
            if !bounds.complete {
                return None;
            }
            all.widen(bounds.least, bounds.greatest);
        }
        stats.index_entries += work.entries;
        Some((all.least.map(|k| k.to_value()), all.greatest.map(|k| k.to_value())))
    }

    /// COUNT from index entries: how many items each unit's probe finds (or its ranges hold,
    /// without a WHERE clause); `None` when a unit cannot be counted so.
    fn count_from_index(&self, stats: &mut RunStats) -> Option<u64> {
        let indexes = self.source.indexes()?;
        let mut total = 0u64;
        for unit in self.units {
            if unit.point.is_some() {
                return None;
            }
            let n = match &self.access.filter {
                Some(probe) => {
                    let (count, work) = indexes.index_count(&unit.ranges, probe)?;
                    stats.index_entries += work.entries;
                    count
                }
                None => indexes.items_in(&unit.ranges).inside,
            };
            total = total.saturating_add(n);
        }
        Some(total)
    }

    /// Aggregates and GROUP BY: partial groups per partition, merged in scan order.
    pub fn grouped(&self, stats: &mut RunStats, out: &mut Emitter<'_>) -> Result<(), QueryError> {
        let q = self.query;
        // Everything is read before the first group goes out: the first result carries it all.
        let before = *stats;
        let read = |stats: &RunStats| Work {
            bytes: stats.retrieved_bytes - before.retrieved_bytes,
            entries: stats.index_entries - before.index_entries,
        };
        if self.access.count_only && self.resume_after().is_none() {
            if let Some(n) = self.count_from_index(stats) {
                let mut groups: Groups = Groups::default();
                groups.insert(Vec::new(), (Vec::new(), q.aggregates.iter().map(|_| Accumulator::counted(n)).collect()));
                out.note_work(read(stats));
                return self.runner.finish_groups(q, groups, out);
            }
        }
        if let (Some(path), None) = (&self.access.min_max, self.resume_after()) {
            if let Some((least, greatest)) = self.bounds_from_index(path, stats) {
                let accumulators = q
                    .aggregates
                    .iter()
                    .map(|a| {
                        let mut acc = Accumulator::new(a.kind);
                        let best = if a.kind == AggregateKind::Min { &least } else { &greatest };
                        if let Some(v) = best {
                            acc.add(v.clone());
                        }
                        acc
                    })
                    .collect();
                let mut groups: Groups = Groups::default();
                groups.insert(Vec::new(), (Vec::new(), accumulators));
                out.note_work(read(stats));
                return self.runner.finish_groups(q, groups, out);
            }
        }
        let slots: Vec<Outcome<(Groups, Charge<'_>)>> = self.units.iter().map(|_| Mutex::new(None)).collect();
        let cancel = AtomicBool::new(false);
        let work = |i: usize, _cancel: &AtomicBool| {
            let started = std::time::Instant::now();
            let mut unit_stats = RunStats::default();
            let meter = Cell::new(Work::default());
            let mut input = unit_input(self.source, &self.units[i], self.access, &mut unit_stats, &meter);
            let outcome = self.runner.collect_groups(q, &mut input, &Vec::new(), &mut unit_stats).map(|g| {
                unit_stats.nanos = started.elapsed().as_nanos() as u64;
                self.report(i, &unit_stats);
                (g, unit_stats)
            });
            if let Ok(mut slot) = slots[i].lock() {
                *slot = Some(outcome);
            }
        };
        self.run_producers(&work, &cancel);
        let mut merged: Option<Groups> = None;
        let mut charges = Vec::with_capacity(self.units.len());
        for slot in slots {
            match slot.into_inner().map_err(|_| QueryError::internal("a producer panicked"))? {
                Some(Ok(((groups, charge), s))) => {
                    charges.push(charge);
                    stats.add(&s);
                    match &mut merged {
                        Some(m) => merge_groups(m, groups),
                        None => merged = Some(groups),
                    }
                }
                Some(Err(e)) => return Err(e),
                None => return Err(QueryError::internal("a producer did not report")),
            }
        }
        let groups = match merged {
            Some(g) => g,
            // No partition to read: aggregates over no rows.
            None => {
                let (groups, charge) = self.runner.collect_groups(q, &mut std::iter::empty(), &Vec::new(), stats)?;
                charges.push(charge);
                groups
            }
        };
        out.note_work(read(stats));
        self.runner.finish_groups(q, groups, out)
    }
}
