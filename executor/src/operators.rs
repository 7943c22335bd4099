//! The operators of one input (a partition's items, a one-pass stream of every target partition,
//! or a subquery's outer row): FROM and JOIN expansion into rows, WHERE, projection, ORDER BY
//! (through [`crate::merge::SortBuffer`]), ranking, GROUP BY and aggregates; their results go to
//! an [`Emitter`].
//!
//! A stored item stays in its binary form in a row; a path read decodes only the value it reaches,
//! so `WHERE c.metricValue > 99.5` never decodes the rest of the item.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;

use cosmoql_planner::{compare_sort_keys, BoundExpr, BoundProjection, BoundQuery, IndexOrder, RankFn, SourceKind};
use cosmoql_storage::{CompositeWalk, Epk, IndexKey, IndexWork, ItemPosition, OrderedWalk, StoredItem};
use cosmoql_value::{Map, Value};

use crate::aggregate::{Accumulator, Groups};
use crate::continuation::ResumePoint;
use crate::cost::Work;
use crate::emitter::Emitter;
use crate::error::QueryError;
use crate::eval::{reach, read_path, Eval, EvalContext, Reached, Subqueries, UdfHost};
use crate::memory::{block, hash_entry, heap_bytes, row_bytes, Charge, MemoryBudget, DEFAULT_MEMORY_BUDGET};
use crate::merge::{SortBuffer, SortCursor, SortedRow};
use crate::output::Output;
use crate::rank::{rank_order, StatisticsGatherer, TextStatistics};
use crate::row::{Binding, Row, RowPos};
use crate::source::{Input, QuerySource};

/// An index entry's key in ORDER BY order: one path's key, or a composite index's tuple (one key
/// needs no allocation of its own).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum WalkKey {
    One(IndexKey),
    Tuple(Vec<IndexKey>),
}

impl WalkKey {
    /// The sort keys of a cursor as a walk's key; `None` when one is not a scalar.
    pub fn from_values(values: &[Value], composite: bool) -> Option<WalkKey> {
        if composite {
            values.iter().map(IndexKey::from_value).collect::<Option<Vec<_>>>().map(WalkKey::Tuple)
        } else {
            values.first().and_then(IndexKey::from_value).map(WalkKey::One)
        }
    }
}

/// Entries of a range index in order with their items, read a chunk at a time (small first: a
/// TOP 10 reads little).
pub struct IndexWalk<'s> {
    source: &'s dyn QuerySource,
    ranges: &'s [(Epk, Epk)],
    order: &'s IndexOrder,
    after: Option<(WalkKey, u64)>,
    chunk: usize,
    buffer: std::vec::IntoIter<(WalkKey, ItemPosition, StoredItem)>,
    done: bool,
    /// The source stopped answering from the index.
    pub broken: bool,
    pub work: IndexWork,
    /// Counts the entries handed out and their items' bytes, one entry at a time.
    meter: Option<&'s WalkMeter>,
}

/// What an index walk handed out: entries and item bytes so far, and the same before the last
/// entry (so a row can tell its own entry from those before it).
#[derive(Debug, Default)]
pub struct WalkMeter {
    pub now: Cell<Work>,
    pub before_last: Cell<Work>,
    /// The index key of the last entry handed out (a walk on one path): the row's ORDER BY
    /// value, without evaluating it again.
    pub key: std::cell::RefCell<Option<IndexKey>>,
}

impl std::fmt::Debug for IndexWalk<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexWalk").field("order", &self.order).field("after", &self.after).finish_non_exhaustive()
    }
}

impl<'s> IndexWalk<'s> {
    /// A walk after `after` whose first chunk is `first` entries (at most 1,024; each next one
    /// twice the last, up to 4,096).
    pub fn new(
        source: &'s dyn QuerySource,
        ranges: &'s [(Epk, Epk)],
        order: &'s IndexOrder,
        (after, first): (Option<(WalkKey, u64)>, usize),
    ) -> Self {
        let chunk = first.clamp(1, 1024);
        IndexWalk {
            source,
            ranges,
            order,
            after,
            chunk,
            buffer: Vec::new().into_iter(),
            done: false,
            broken: false,
            work: IndexWork::default(),
            meter: None,
        }
    }

    /// Counts what the walk hands out on `meter`.
    pub fn with_meter(self, meter: &'s WalkMeter) -> Self {
        IndexWalk { meter: Some(meter), ..self }
    }

    /// Reads the next chunk; false if the index cannot serve.
    pub fn fill(&mut self) -> bool {
        let entries = if self.order.composite.is_empty() {
            let after = match &self.after {
                Some((WalkKey::One(key), seq)) => Some((key.clone(), *seq)),
                Some((WalkKey::Tuple(_), _)) => return false,
                None => None,
            };
            let walk = OrderedWalk {
                path: &self.order.path,
                descending: self.order.descending,
                after: after.as_ref(),
                limit: self.chunk,
            };
            let indexes = self.source.indexes();
            indexes.and_then(|i| i.index_ordered(self.ranges, &walk, &mut self.work)).map(|entries| {
                entries.into_iter().map(|(key, pos, item)| (WalkKey::One(key), pos, item)).collect::<Vec<_>>()
            })
        } else {
            let after = match &self.after {
                Some((WalkKey::Tuple(keys), seq)) => Some((keys.clone(), *seq)),
                Some((WalkKey::One(_), _)) => return false,
                None => None,
            };
            let walk = CompositeWalk {
                keys: &self.order.composite,
                prefix: &self.order.prefix,
                after: after.as_ref(),
                limit: self.chunk,
            };
            let indexes = self.source.indexes();
            indexes.and_then(|i| i.composite_ordered(self.ranges, &walk, &mut self.work)).map(|entries| {
                entries.into_iter().map(|(key, pos, item)| (WalkKey::Tuple(key), pos, item)).collect::<Vec<_>>()
            })
        };
        match entries {
            None => {
                self.broken = true;
                self.done = true;
                false
            }
            Some(entries) => {
                self.done = entries.len() < self.chunk;
                if let Some((key, pos, _)) = entries.last() {
                    self.after = Some((key.clone(), pos.seq));
                }
                self.chunk = (self.chunk * 2).min(4096);
                self.buffer = entries.into_iter();
                true
            }
        }
    }
}

impl Iterator for IndexWalk<'_> {
    type Item = (ItemPosition, StoredItem);

    /// The next entry's position and item.
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((key, pos, item)) = self.buffer.next() {
                if let Some(meter) = self.meter {
                    let mut now = meter.now.get();
                    meter.before_last.set(now);
                    now.add(Work { bytes: item.doc.len() as u64, entries: 1 });
                    meter.now.set(now);
                    *meter.key.borrow_mut() = match key {
                        WalkKey::One(key) => Some(key),
                        WalkKey::Tuple(_) => None,
                    };
                }
                return Some((pos, item));
            }
            if self.done || !self.fill() {
                return None;
            }
        }
    }
}

/// Counters of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Items read from the input, and their bytes as stored.
    pub retrieved: u64,
    pub retrieved_bytes: u64,
    /// Rows held at once for sorting or grouping, at the peak.
    pub peak_buffered: u64,
    /// Time spent, in nanoseconds (set by the cross-partition producers).
    pub nanos: u64,
    /// Index entries read (probes and ordered walks).
    pub index_entries: u64,
}

impl RunStats {
    /// Adds the counts of another run (peaks take the maximum).
    pub fn add(&mut self, other: &RunStats) {
        self.retrieved = self.retrieved.saturating_add(other.retrieved);
        self.retrieved_bytes = self.retrieved_bytes.saturating_add(other.retrieved_bytes);
        self.index_entries = self.index_entries.saturating_add(other.index_entries);
        self.peak_buffered = self.peak_buffered.max(other.peak_buffered);
    }
}

/// Whether a row consumer wants more rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// Consumes rows with their scan positions.
pub type RowSink<'s> = dyn FnMut(&Row, &RowPos) -> Result<Flow, QueryError> + 's;

/// Runs bound queries over an input; subqueries run through it too.
pub struct Runner<'a> {
    pub source: &'a dyn QuerySource,
    /// Set by the caller to stop the query: checked for every item and every row.
    pub cancel: Option<Arc<AtomicBool>>,
    /// When the query started (ticks), for the `*Static` clock functions.
    pub query_ticks: i64,
    /// What the operators that hold rows may hold.
    pub budget: MemoryBudget,
    /// The container's full-text statistics, for `ORDER BY RANK` with a FullTextScore (gathered
    /// over every item by [`Runner::gather`] before the query runs).
    pub text_statistics: Option<TextStatistics>,
    /// Runs the query's `udf.name(...)` calls.
    pub udfs: Option<Arc<dyn UdfHost>>,
}

impl std::fmt::Debug for Runner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner").finish_non_exhaustive()
    }
}

impl Subqueries for Runner<'_> {
    fn run_subquery(&self, query: &BoundQuery, outer: &Row) -> Result<Vec<Value>, QueryError> {
        let mut out = Emitter::new(query);
        self.run_with(query, &mut std::iter::empty(), outer, &mut RunStats::default(), &mut out)?;
        Ok(out.finish().into_iter().map(Output::into_value).collect())
    }
}

impl<'a> Runner<'a> {
    pub fn new(source: &'a dyn QuerySource) -> Self {
        Runner {
            source,
            cancel: None,
            query_ticks: crate::functions::clock_ticks(),
            budget: MemoryBudget::new(DEFAULT_MEMORY_BUDGET),
            text_statistics: None,
            udfs: None,
        }
    }

    /// Runs `udf.name(...)` calls with `host`.
    pub fn with_udfs(mut self, host: Option<Arc<dyn UdfHost>>) -> Self {
        self.udfs = host;
        self
    }

    /// FullTextScore's statistics (what `ORDER BY RANK` scores under).
    pub fn with_text_statistics(mut self, statistics: Option<TextStatistics>) -> Self {
        self.text_statistics = statistics;
        self
    }

    /// The full-text statistics of `q`'s ranking (what `gatherer` counts) over the rows of
    /// `input` (every item of the container: `crate::rank`).
    pub fn gather(
        &self,
        q: &BoundQuery,
        mut gatherer: StatisticsGatherer<'_>,
        input: &mut Input<'_>,
        stats: &mut RunStats,
    ) -> Result<TextStatistics, QueryError> {
        let ctx = self.ctx(None);
        self.for_each_row(q, input, &Vec::new(), stats, &mut |row, _pos| {
            gatherer.add(&ctx, row)?;
            Ok(Flow::Continue)
        })?;
        Ok(gatherer.finish())
    }

    /// Holds at most `bytes` for sorts, groups and DISTINCT.
    pub fn with_budget(mut self, bytes: u64) -> Self {
        self.budget = MemoryBudget::new(bytes);
        self
    }

    /// Stops with a `Cancelled` error once `flag` is set.
    pub fn with_cancel(mut self, flag: Option<Arc<AtomicBool>>) -> Self {
        self.cancel = flag;
        self
    }

    pub fn check_cancelled(&self) -> Result<(), QueryError> {
        match &self.cancel {
            Some(flag) if flag.load(AtomicOrdering::Relaxed) => Err(QueryError::cancelled()),
            _ => Ok(()),
        }
    }

    pub fn ctx<'c>(&'c self, aggregates: Option<&'c [Value]>) -> EvalContext<'c> {
        EvalContext {
            source: self.source,
            aggregates,
            subqueries: self,
            query_ticks: self.query_ticks,
            udfs: self.udfs.as_deref(),
        }
    }

    /// Runs a top-level query over `input`, handing results to `out`.
    pub fn run_into(
        &self,
        q: &BoundQuery,
        input: &mut Input<'_>,
        stats: &mut RunStats,
        out: &mut Emitter<'_>,
    ) -> Result<(), QueryError> {
        self.run_with(q, input, &Vec::new(), stats, out)
    }

    /// Runs a query over `input` for one row of the enclosing query (`outer`), handing results to
    /// `out`.
    fn run_with(
        &self,
        q: &BoundQuery,
        input: &mut Input<'_>,
        outer: &Row,
        stats: &mut RunStats,
        out: &mut Emitter<'_>,
    ) -> Result<(), QueryError> {
        if q.is_aggregate() {
            // The groups (and what they charged) live until they are emitted.
            let (groups, _held) = self.collect_groups(q, input, outer, stats)?;
            self.finish_groups(q, groups, out)
        } else if let Some(rank) = &q.rank {
            self.run_ranked(q, rank, input, outer, stats, out)
        } else if !q.order_by.is_empty() {
            let (rows, _held) = self.sort(q, input, outer, q.rows_needed(), None, stats)?;
            let ctx = self.ctx(None);
            for r in rows {
                if out.push_row(self.project(q, &ctx, &r.row)?, || ResumePoint::Sort(r.cursor()))? {
                    break;
                }
            }
            Ok(())
        } else {
            let ctx = self.ctx(None);
            self.for_each_row(q, input, outer, stats, &mut |row, pos| {
                if !self.passes(q, row)? {
                    return Ok(Flow::Continue);
                }
                let value = self.project(q, &ctx, row)?;
                Ok(if out.push_row(value, || ResumePoint::Position(pos.clone()))? {
                    Flow::Stop
                } else {
                    Flow::Continue
                })
            })
        }
    }

    /// WHERE: whether the row's condition is exactly `true`.
    pub fn passes(&self, q: &BoundQuery, row: &Row) -> Result<bool, QueryError> {
        match &q.filter {
            Some(f) => Ok(f.eval(&self.ctx(None), row)? == Value::Bool(true)),
            None => Ok(true),
        }
    }

    /// The SELECT clause on one row. A stored item returned whole (`SELECT *`, `SELECT VALUE c`)
    /// or a part of one stays its stored bytes ([`Output::Whole`], [`Output::Part`]) unless
    /// DISTINCT compares it.
    pub fn project(&self, q: &BoundQuery, ctx: &EvalContext<'_>, row: &Row) -> Result<Output, QueryError> {
        let item_at = |slot: &usize| match row.get(*slot) {
            Some(Binding::Item(item)) if !q.distinct => Some(item),
            _ => None,
        };
        match &q.projection {
            BoundProjection::Star(slot) | BoundProjection::Value(BoundExpr::Slot(slot)) => {
                if let Some(item) = item_at(slot) {
                    return Ok(self.source.whole(item));
                }
            }
            // A part of the item (`SELECT VALUE c.location`) stays its bytes too.
            BoundProjection::Value(BoundExpr::Path { slot, steps }) if !steps.is_empty() => {
                if let Some(item) = item_at(slot) {
                    return Ok(match reach(self.source, item, steps) {
                        Reached::Doc(part) => self.source.part(item, part),
                        Reached::System(v) => Output::Value(v),
                        Reached::Nothing => Output::Value(Value::Undefined),
                    });
                }
            }
            _ => {}
        }
        Ok(Output::Value(match &q.projection {
            BoundProjection::Star(slot) => match row.get(*slot) {
                Some(Binding::Item(item)) => self.source.materialize(item),
                Some(Binding::Value(v)) => v.clone(),
                _ => Value::Undefined,
            },
            BoundProjection::Value(e) => e.eval(ctx, row)?,
            BoundProjection::List(items) => {
                let mut map = Map::with_capacity_and_hasher(items.len(), Default::default());
                for (name, e) in items {
                    let v = e.eval(ctx, row)?;
                    if !v.is_undefined() {
                        map.insert(name.clone(), v);
                    }
                }
                crate::eval::built(Value::from(map), "the SELECT list's object")?
            }
        }))
    }

    /// The rows passing WHERE, sorted by ORDER BY then scan position: the first `keep` of them
    /// (all without), only those after `after` (a resumed page); with their charge on the budget,
    /// released when it is dropped.
    pub fn sort(
        &self,
        q: &BoundQuery,
        input: &mut Input<'_>,
        outer: &Row,
        keep: Option<u64>,
        after: Option<&SortCursor>,
        stats: &mut RunStats,
    ) -> Result<(Vec<SortedRow>, Charge<'_>), QueryError> {
        let ctx = self.ctx(None);
        let mut charge = Charge::new(&self.budget);
        let mut buffer = SortBuffer::new(&q.order_by, keep);
        self.for_each_row(q, input, outer, stats, &mut |row, pos| {
            if !self.passes(q, row)? {
                return Ok(Flow::Continue);
            }
            let keys = q.order_by.iter().map(|k| k.expr.eval(&ctx, row)).collect::<Result<Vec<_>, _>>()?;
            if after.is_some_and(|c| !c.is_before(&keys, pos, &q.order_by)) || !buffer.admits(&keys, pos) {
                return Ok(Flow::Continue);
            }
            // A row whose `SELECT VALUE` is undefined gives no result, so it must not take a
            // place among the rows kept (checked only for rows that would be kept).
            if let BoundProjection::Value(e) = &q.projection {
                if e.eval(&ctx, row)?.is_undefined() {
                    return Ok(Flow::Continue);
                }
            }
            let held = SortedRow { keys, pos: pos.clone(), row: row.clone(), work: Work::default() };
            charge.add(sorted_bytes(&held), "ORDER BY")?;
            if let Some(dropped) = buffer.push(held) {
                charge.release(sorted_bytes(&dropped));
            }
            Ok(Flow::Continue)
        })?;
        stats.peak_buffered = stats.peak_buffered.max(buffer.len() as u64);
        Ok((buffer.into_sorted(), charge))
    }

    /// The rows of `input` that pass the WHERE clause, with their positions, in the input's
    /// order, held on the memory budget as a sort holds them (the rows of a page read at
    /// positions an index merge found, see `Coordinator::rows_at`).
    pub fn collect_rows(
        &self,
        q: &BoundQuery,
        input: &mut Input<'_>,
        stats: &mut RunStats,
    ) -> Result<(Vec<(RowPos, Row)>, Charge<'_>), QueryError> {
        let mut charge = Charge::new(&self.budget);
        let mut rows = Vec::new();
        self.for_each_row(q, input, &Vec::new(), stats, &mut |row, pos| {
            if self.passes(q, row)? {
                charge.add(row_bytes(row), "ORDER BY")?;
                rows.push((pos.clone(), row.clone()));
            }
            Ok(Flow::Continue)
        })?;
        Ok((rows, charge))
    }

    /// ORDER BY from a range index: the rows of `ranges` in index order, after `after`, the first
    /// `keep` of them (all without), read lazily so that only what the page needs is read.
    /// `None` when the index cannot order every item there (the caller sorts instead).
    ///
    /// Each row carries the work of its own entry and item and of the entries after it up to the
    /// next row (read for that: the walk reads one row past `keep`); the work before the first
    /// row is returned apart. So a page charged for the rows it returns, and the first page for
    /// that first stretch, charges each entry once whatever the page size.
    pub fn sort_indexed(
        &self,
        q: &BoundQuery,
        ranges: &[(Epk, Epk)],
        order: &IndexOrder,
        keep: Option<u64>,
        after: Option<&SortCursor>,
        stats: &mut RunStats,
    ) -> Result<Option<(Vec<SortedRow>, Charge<'_>, Work)>, QueryError> {
        let ctx = self.ctx(None);
        let mut charge = Charge::new(&self.budget);
        let keep = keep.map(|k| usize::try_from(k).unwrap_or(usize::MAX));
        let start = match after {
            None => None,
            Some(c) => match (WalkKey::from_values(&c.keys, !order.composite.is_empty()), &c.pos.item) {
                (Some(keys), Some(at)) => Some((keys, at.seq)),
                _ => return Ok(None),
            },
        };
        let meter = WalkMeter::default();
        let bound = keep.map(|k| k.saturating_add(1));
        // A lone walk that filters reads at least 16 entries first: the rows it keeps may be
        // sparse among them.
        let first = bound.map_or(1024, |b| b.saturating_add(1).max(16));
        let mut walk = IndexWalk::new(self.source, ranges, order, (start, first)).with_meter(&meter);
        if !walk.fill() {
            return Ok(None);
        }
        let mut rows: Vec<SortedRow> = Vec::new();
        let mut head = Work::default();
        let mut last = Work::default();
        if keep != Some(0) {
            self.for_each_row(q, &mut walk, &Vec::new(), stats, &mut |row, pos| {
                if !self.passes(q, row)? {
                    return Ok(Flow::Continue);
                }
                // One ORDER BY item: the entry's index key is its value (the walk reads items
                // having a scalar there; -0 is 0 in the key, and equal to it in the order).
                let walked = meter.key.borrow_mut().take();
                let keys = match (q.order_by.as_slice(), walked) {
                    ([_], Some(key)) => vec![key.to_value()],
                    _ => q.order_by.iter().map(|k| k.expr.eval(&ctx, row)).collect::<Result<Vec<_>, _>>()?,
                };
                if after.is_some_and(|c| !c.is_before(&keys, pos, &q.order_by)) {
                    return Ok(Flow::Continue);
                }
                if let BoundProjection::Value(e) = &q.projection {
                    if e.eval(&ctx, row)?.is_undefined() {
                        return Ok(Flow::Continue);
                    }
                }
                // The entries before this row's own go to the row before it (or the head); its
                // own entry and item to it (a second row of the same item has none).
                let (now, pre) = (meter.now.get(), meter.before_last.get());
                let from = if pre.entries > last.entries { pre } else { last };
                match rows.last_mut() {
                    Some(r) => r.work.add(from.since(last)),
                    None => head.add(from.since(last)),
                }
                last = now;
                let held = SortedRow { keys, pos: pos.clone(), row: row.clone(), work: now.since(from) };
                charge.add(sorted_bytes(&held), "ORDER BY")?;
                rows.push(held);
                Ok(if bound.is_some_and(|k| rows.len() >= k) { Flow::Stop } else { Flow::Continue })
            })?;
        }
        if bound.is_some_and(|k| rows.len() >= k) {
            // The row past `keep` only closed the stretch after the last one kept.
            if let Some(extra) = rows.pop() {
                charge.release(sorted_bytes(&extra));
            }
        } else {
            // The walk reached its end: the rest follows the last row.
            let tail = meter.now.get().since(last);
            match rows.last_mut() {
                Some(r) => r.work.add(tail),
                None => head.add(tail),
            }
        }
        stats.index_entries += walk.work.entries;
        if walk.broken {
            // The index stopped serving mid-walk (its policy was replaced): sort instead.
            return Ok(None);
        }
        stats.peak_buffered = stats.peak_buffered.max(rows.len() as u64);
        Ok(Some((rows, charge, head)))
    }

    fn run_ranked(
        &self,
        q: &BoundQuery,
        rank: &RankFn,
        input: &mut Input<'_>,
        outer: &Row,
        stats: &mut RunStats,
        out: &mut Emitter<'_>,
    ) -> Result<(), QueryError> {
        let ctx = self.ctx(None);
        let mut rows = Vec::new();
        let mut seqs = Vec::new();
        let mut held = Charge::new(&self.budget);
        self.for_each_row(q, input, outer, stats, &mut |row, pos| {
            if self.passes(q, row)? {
                held.add(row_bytes(row), "ORDER BY RANK")?;
                rows.push(row.clone());
                seqs.push(pos.item.as_ref().map_or(0, |p| p.seq));
            }
            Ok(Flow::Continue)
        })?;
        stats.peak_buffered = stats.peak_buffered.max(rows.len() as u64);
        // The container's statistics, gathered before the query ran (ORDER BY RANK is refused in
        // subqueries, SC2228, so this is the query's own ranking); none when it scores no text.
        let none = TextStatistics::default();
        let statistics = self.text_statistics.as_ref().unwrap_or(&none);
        let rid = |i: usize| match q.item_slot().and_then(|slot| rows[i].get(slot)) {
            Some(Binding::Item(item)) => self.source.system_property(item, "_rid").as_str().unwrap_or("").to_string(),
            _ => String::new(),
        };
        let order = rank_order(rank, statistics, q.rows_needed(), &ctx, &rows, &seqs, &rid)?;
        for i in order {
            self.check_cancelled()?;
            if out.push(self.project(q, &ctx, &rows[i])?)? {
                break;
            }
        }
        Ok(())
    }

    /// Groups the rows of `input` and runs the aggregates per group (a partial result: groups of
    /// several inputs merge with [`crate::aggregate::merge_groups`]); with their charge on the
    /// budget, released when it is dropped.
    pub fn collect_groups(
        &self,
        q: &BoundQuery,
        input: &mut Input<'_>,
        outer: &Row,
        stats: &mut RunStats,
    ) -> Result<(Groups, Charge<'_>), QueryError> {
        let ctx = self.ctx(None);
        let mut charge = Charge::new(&self.budget);
        let mut groups: Groups = Groups::default();
        let fresh = || q.aggregates.iter().map(|a| Accumulator::new(a.kind)).collect::<Vec<_>>();
        if q.group_by.is_none() {
            groups.insert(Vec::new(), (outer.clone(), fresh()));
        }
        self.for_each_row(q, input, outer, stats, &mut |row, _pos| {
            if !self.passes(q, row)? {
                return Ok(Flow::Continue);
            }
            let key = match &q.group_by {
                Some(keys) => keys.iter().map(|k| k.eval(&ctx, row)).collect::<Result<Vec<_>, _>>()?,
                None => Vec::new(),
            };
            if !groups.contains_key(&key) {
                // The group's entry (key, row and accumulators, with the map's index), the key's
                // vector and values, the row kept, the accumulators' vector.
                let entry = size_of::<Vec<Value>>() + size_of::<Row>() + size_of::<Vec<Accumulator>>() + 8;
                let bytes = hash_entry(entry)
                    + block(key.len() * size_of::<Value>())
                    + key.iter().map(heap_bytes).sum::<u64>()
                    + row_bytes(row)
                    + block(q.aggregates.len() * size_of::<Accumulator>());
                charge.add(bytes, "GROUP BY")?;
            }
            let entry = groups.entry(key).or_insert_with(|| (row.clone(), fresh()));
            if q.group_by.is_none() && entry.0.len() < row.len() {
                entry.0 = row.clone();
            }
            for (acc, spec) in entry.1.iter_mut().zip(&q.aggregates) {
                let held = acc.add(spec.arg.eval(&ctx, row)?);
                if held > 0 {
                    charge.add(held, spec.kind.name())?;
                }
            }
            Ok(Flow::Continue)
        })?;
        stats.peak_buffered = stats.peak_buffered.max(groups.len() as u64);
        Ok((groups, charge))
    }

    /// Projects finished groups (ordered by ORDER BY if any, else by first appearance).
    pub fn finish_groups(&self, q: &BoundQuery, groups: Groups, out: &mut Emitter<'_>) -> Result<(), QueryError> {
        let mut results = Vec::with_capacity(groups.len());
        for (i, (_, (row, accs))) in groups.into_iter().enumerate() {
            let values: Vec<Value> = accs.iter().map(Accumulator::result).collect();
            let gctx = self.ctx(Some(&values));
            let keys = q.order_by.iter().map(|k| k.expr.eval(&gctx, &row)).collect::<Result<Vec<_>, _>>()?;
            let value = self.project(q, &gctx, &row)?;
            results.push((keys, i, value));
        }
        if !q.order_by.is_empty() {
            results.sort_by(|a, b| compare_sort_keys(&a.0, &b.0, &q.order_by).then(a.1.cmp(&b.1)));
        }
        for (_, _, v) in results {
            self.check_cancelled()?;
            if out.push(v)? {
                break;
            }
        }
        Ok(())
    }

    /// Expands FROM and JOINs into rows and hands each to `sink`.
    pub fn for_each_row(
        &self,
        q: &BoundQuery,
        input: &mut Input<'_>,
        outer: &Row,
        stats: &mut RunStats,
        sink: &mut RowSink<'_>,
    ) -> Result<(), QueryError> {
        let mut row: Row = Vec::with_capacity(q.slots);
        row.extend_from_slice(&outer[..q.base.min(outer.len())]);
        row.resize(q.slots, Binding::Undefined);
        let mut pos = RowPos { item: None, sub: 0 };
        let Some(first) = q.sources.first() else {
            sink(&row, &pos)?;
            return Ok(());
        };
        let ctx = self.ctx(None);
        match &first.kind {
            SourceKind::Items | SourceKind::ItemPath { .. } | SourceKind::ItemIterate { .. } => {
                for (at, item) in input {
                    self.check_cancelled()?;
                    stats.retrieved += 1;
                    stats.retrieved_bytes += item.doc.len() as u64;
                    pos = RowPos { item: Some(at), sub: 0 };
                    let flow = match &first.kind {
                        SourceKind::Items => {
                            row[first.slot] = Binding::Item(item);
                            self.joins(q, 1, &mut row, &mut pos, sink)?
                        }
                        SourceKind::ItemPath { root, steps } => {
                            row[*root] = Binding::Item(item);
                            let v = read_path(&ctx, row.get(*root), steps);
                            if v.is_undefined() {
                                Flow::Continue
                            } else {
                                row[first.slot] = Binding::Value(v);
                                self.joins(q, 1, &mut row, &mut pos, sink)?
                            }
                        }
                        SourceKind::ItemIterate { root, array } => {
                            row[*root] = Binding::Item(item);
                            let array = array.eval(&ctx, &row)?;
                            self.iterate(q, (first.slot, array), 1, &mut row, &mut pos, sink)?
                        }
                        _ => Flow::Continue,
                    };
                    if let Flow::Stop = flow {
                        break;
                    }
                }
            }
            SourceKind::Subquery(inner) => {
                // The subquery's results stream into the outer query's rows, one at a time. Inside
                // a subquery it may read the enclosing query's aliases: it sees this row.
                let enclosing = row.clone();
                let mut failure = None;
                let mut each = |v: Output| -> bool {
                    row[first.slot] = Binding::Value(v.into_value());
                    match self.joins(q, 1, &mut row, &mut pos, sink) {
                        Ok(Flow::Continue) => true,
                        Ok(Flow::Stop) => false,
                        Err(e) => {
                            failure = Some(e);
                            false
                        }
                    }
                };
                let mut values = Emitter::new(inner).with_budget(&self.budget).into_sink(&mut each);
                self.run_with(inner, input, &enclosing, stats, &mut values)?;
                drop(values);
                if let Some(e) = failure {
                    return Err(e);
                }
            }
            SourceKind::Value(_) | SourceKind::Iterate(_) => {
                self.joins(q, 0, &mut row, &mut pos, sink)?;
            }
        }
        Ok(())
    }

    fn iterate(
        &self,
        q: &BoundQuery,
        (slot, array): (usize, Value),
        next: usize,
        row: &mut Row,
        pos: &mut RowPos,
        sink: &mut RowSink<'_>,
    ) -> Result<Flow, QueryError> {
        if let Value::Array(items) = array {
            for v in items.iter() {
                row[slot] = Binding::Value(v.clone());
                if let Flow::Stop = self.joins(q, next, row, pos, sink)? {
                    return Ok(Flow::Stop);
                }
            }
        }
        Ok(Flow::Continue)
    }

    /// Expands sources `index..` for the current row.
    fn joins(
        &self,
        q: &BoundQuery,
        index: usize,
        row: &mut Row,
        pos: &mut RowPos,
        sink: &mut RowSink<'_>,
    ) -> Result<Flow, QueryError> {
        let Some(source) = q.sources.get(index) else {
            self.check_cancelled()?;
            let flow = sink(row, pos);
            pos.sub = pos.sub.saturating_add(1);
            return flow;
        };
        let ctx = self.ctx(None);
        match &source.kind {
            SourceKind::Value(e) => {
                let v = e.eval(&ctx, row)?;
                if v.is_undefined() {
                    return Ok(Flow::Continue);
                }
                row[source.slot] = Binding::Value(v);
                self.joins(q, index + 1, row, pos, sink)
            }
            SourceKind::Iterate(e) => {
                let v = e.eval(&ctx, row)?;
                self.iterate(q, (source.slot, v), index + 1, row, pos, sink)
            }
            SourceKind::Subquery(inner) => {
                for v in self.run_subquery(inner, row)? {
                    row[source.slot] = Binding::Value(v);
                    if let Flow::Stop = self.joins(q, index + 1, row, pos, sink)? {
                        return Ok(Flow::Stop);
                    }
                }
                Ok(Flow::Continue)
            }
            _ => Err(QueryError::internal("a container source after the first FROM source")),
        }
    }
}

/// What a sorted row holds: its place in the sort's buffer (which doubles as it grows), its keys
/// and its row.
fn sorted_bytes(r: &SortedRow) -> u64 {
    2 * size_of::<SortedRow>() as u64
        + block(r.keys.capacity() * size_of::<Value>())
        + r.keys.iter().map(heap_bytes).sum::<u64>()
        + row_bytes(&r.row)
}
