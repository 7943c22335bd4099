//! The [`Emitter`]: where a query's results go. It applies DISTINCT, OFFSET and LIMIT/TOP,
//! attributes the work read to the results (a page's charge), notes where a page's last result
//! came from, and checks that results are JSON.

use std::cell::Cell;
use std::collections::HashSet;

use cosmoql_planner::BoundQuery;
use cosmoql_value::Value;

use crate::continuation::ResumePoint;
use crate::cost::Work;
use crate::error::QueryError;
use crate::memory::{set_entry_bytes, Charge, MemoryBudget};
use crate::output::Output;
use crate::row::RowPos;

/// DISTINCT's set: the values seen so far, each charged to the query's budget as it is added.
/// The emitter keeps one, and so does each parallel producer (a duplicate never reaches the
/// buffers).
#[derive(Debug, Default)]
pub struct Seen(HashSet<Value>);

impl Seen {
    /// `v`, as a value, when it is seen for the first time (charged to `charge`); `None` for a
    /// duplicate.
    pub fn first(&mut self, v: Output, charge: Option<&mut Charge<'_>>) -> Result<Option<Output>, QueryError> {
        let v = v.into_value();
        if self.0.contains(&v) {
            return Ok(None);
        }
        if let Some(charge) = charge {
            charge.add(set_entry_bytes(&v), "DISTINCT")?;
        }
        self.0.insert(v.clone());
        Ok(Some(Output::Value(v)))
    }
}

/// Applies DISTINCT, OFFSET and LIMIT/TOP to results as they come; undefined results are
/// dropped. Results are collected, or handed to a sink as they come (streaming: nothing is held).
/// For a page, it also notes where the page's last result came from.
pub struct Emitter<'s> {
    distinct: Option<Seen>,
    skip: u64,
    limit: Option<u64>,
    /// Results given out (collected or sunk), and about how many bytes they hold.
    emitted: u64,
    emitted_bytes: u64,
    out: Vec<Output>,
    /// Where results go instead of `out`; returns false to stop.
    sink: Option<&'s mut dyn FnMut(Output) -> bool>,
    /// What the DISTINCT set holds, on the query's budget.
    charge: Option<Charge<'s>>,
    /// Note the resume point of the result with this (1-based) number.
    mark_at: Option<u64>,
    mark: Option<ResumePoint>,
    /// The query's own results (not a subquery's): they must be JSON.
    top_level: bool,
    /// Work read but not yet attributed to a result: the next result taken (or skipped by
    /// OFFSET) carries it (see [`Emitter::note_work`]).
    pending: Work,
    /// Work attributed to this page's results and OFFSET's skips: what the page is charged for.
    charged: Work,
    /// A replayed page: the results it skips were returned (and charged) by earlier pages.
    replayed: bool,
    /// A counter of the work read on this thread, read at each result (for the runs whose
    /// results the runner produces from inputs it pulls), and its last reading.
    meter: Option<&'s Cell<Work>>,
    metered: Work,
    /// Results past the page are kept to be held for the next pages, up to this many results
    /// and bytes (see [`Emitter::holding`]).
    hold: Option<(u64, u64)>,
    /// The results passed `hold`: the emitter stopped, and what it collected is not all.
    held_too_many: bool,
    /// Work attributed to the results past the page that are collected to be held.
    beyond: Work,
}

impl std::fmt::Debug for Emitter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emitter")
            .field("skip", &self.skip)
            .field("limit", &self.limit)
            .field("emitted", &self.emitted)
            .field("streaming", &self.sink.is_some())
            .finish_non_exhaustive()
    }
}

impl<'s> Emitter<'s> {
    /// An emitter for a whole query.
    pub fn new(q: &BoundQuery) -> Self {
        Emitter {
            distinct: q.distinct.then(Seen::default),
            skip: q.offset,
            limit: q.limit,
            emitted: 0,
            emitted_bytes: 0,
            out: Vec::new(),
            sink: None,
            charge: None,
            mark_at: None,
            mark: None,
            top_level: false,
            pending: Work::default(),
            charged: Work::default(),
            replayed: false,
            meter: None,
            metered: Work::default(),
            hold: None,
            held_too_many: false,
            beyond: Work::default(),
        }
    }

    /// An emitter that applies the query's DISTINCT but neither its OFFSET nor its limit.
    pub fn unlimited(q: &BoundQuery) -> Self {
        Emitter { skip: 0, limit: None, ..Emitter::new(q) }
    }

    /// An emitter for one page: `returned` results were given out by earlier pages, at most
    /// `take` more are wanted now, and the resume point of the `page`-th result is noted.
    /// `resumed`: the page starts after the last result returned (OFFSET was spent, nothing is
    /// skipped); otherwise the query runs again and skips what earlier pages returned.
    pub fn page(q: &BoundQuery, returned: u64, take: Option<u64>, page: Option<usize>, resumed: bool) -> Self {
        let remaining = q.limit.map(|l| l.saturating_sub(returned));
        let limit = match (remaining, take) {
            (Some(r), Some(t)) => Some(r.min(t)),
            (r, t) => r.or(t),
        };
        let skip = if resumed && returned > 0 { 0 } else { q.offset.saturating_add(returned) };
        Emitter {
            skip,
            limit,
            mark_at: page.map(|p| p as u64),
            top_level: true,
            replayed: !resumed && returned > 0,
            ..Emitter::new(q)
        }
    }

    /// Reads `meter` at each result: the work it counted since the last one is attributed to it.
    pub fn with_meter(self, meter: &'s Cell<Work>) -> Self {
        let metered = meter.get();
        Emitter { meter: Some(meter), metered, ..self }
    }

    /// Work done towards the next result: the next result this page takes (or OFFSET skips)
    /// carries it; a result skipped because an earlier page returned it drops it (that page was
    /// charged); work after the page's last result is charged only when no page follows.
    /// Attributing work to results this way makes the charges of a query's pages add up to the
    /// charge of one page returning everything, whatever the page size and parallelism.
    pub fn note_work(&mut self, work: Work) {
        self.pending.add(work);
    }

    /// Drops the work noted since the last result (it was charged to an earlier page: a resumed
    /// scan re-reading what precedes its resume point).
    pub fn drop_pending(&mut self) {
        self.read_meter();
        self.pending = Work::default();
    }

    fn read_meter(&mut self) {
        if let Some(meter) = self.meter {
            let now = meter.get();
            self.pending.add(now.since(self.metered));
            self.metered = now;
        }
    }

    /// The pending work goes to the result just taken (or, `false`, is dropped).
    fn attribute(&mut self, charge: bool) {
        if charge {
            self.charged.add(self.pending);
        }
        self.pending = Work::default();
    }

    /// What this page is charged for: the work attributed to its results, and, when no page
    /// follows (`last`), the work after them.
    pub fn charged_work(&mut self, last: bool) -> Work {
        self.read_meter();
        let mut work = self.charged;
        if last {
            work.add(self.pending);
        }
        work
    }

    /// Collects every result (not only one past the page) so that the pages after this one can
    /// be served from them ([`crate::held`]), stopping once more than `results` or `bytes`
    /// would be held ([`Emitter::held_all`] then says no).
    pub fn holding(self, results: u64, bytes: u64) -> Self {
        Emitter { hold: Some((results, bytes)), ..self }
    }

    /// With [`Emitter::holding`]: whether the collected results are all the query has.
    pub fn held_all(&self) -> bool {
        self.hold.is_some() && !self.held_too_many
    }

    /// With [`Emitter::holding`]: all the work read, for the page that holds the results after
    /// it (the pages served from them read nothing).
    pub fn charged_work_held(&mut self) -> Work {
        let mut work = self.charged_work(true);
        work.add(self.beyond);
        work
    }

    /// Whether the page took more results than it returns (so a continuation follows).
    pub fn overflowed(&self) -> bool {
        self.mark_at.is_some_and(|page| self.emitted > page)
    }

    /// Hands results to `sink` as they come instead of collecting them.
    pub fn into_sink(self, sink: &'s mut dyn FnMut(Output) -> bool) -> Self {
        Emitter { sink: Some(sink), ..self }
    }

    /// Charges the DISTINCT set to `budget` (while the emitter lives).
    pub fn with_budget(self, budget: &'s MemoryBudget) -> Self {
        Emitter { charge: Some(Charge::new(budget)), ..self }
    }

    /// Adds a result; returns true once no more results are wanted.
    pub fn push(&mut self, v: impl Into<Output>) -> Result<bool, QueryError> {
        self.push_row(v.into(), || ResumePoint::Position(RowPos { item: None, sub: 0 }))
    }

    /// Adds a result with where it came from (asked for only when the result is the page's last).
    pub fn push_row(&mut self, v: Output, resume: impl FnOnce() -> ResumePoint) -> Result<bool, QueryError> {
        if self.limit.is_some_and(|l| self.emitted >= l) {
            return Ok(true);
        }
        self.read_meter();
        if v.is_undefined() {
            return Ok(false);
        }
        let size = v.json_bytes();
        if self.top_level && size.is_err() {
            // The service cannot write NaN or an infinity in its JSON response: 400, substatus 4001.
            return Err(QueryError {
                substatus: 4001,
                ..QueryError::new(
                    crate::error::QueryErrorKind::Eval,
                    "a result holds a numeric value that cannot be represented in JSON (NaN, Infinity or -Infinity)",
                    None,
                )
            });
        }
        let v = match &mut self.distinct {
            Some(seen) => match seen.first(v, self.charge.as_mut())? {
                Some(v) => v,
                None => return Ok(false),
            },
            None => v,
        };
        if self.skip > 0 {
            self.skip -= 1;
            self.attribute(!self.replayed);
            return Ok(false);
        }
        self.emitted += 1;
        // The page's results carry their work; the one taken past the page (to know that a
        // continuation follows) does not: the next page reads it again.
        if self.hold.is_some() && self.mark_at.is_some_and(|page| self.emitted > page) {
            // Collected to be held: on the budget while the query runs (past it, the results
            // are not held: the next pages run the query again), and their work charged with
            // the page when they are held.
            let bytes = v.heap_bytes().saturating_add(size_of::<Output>() as u64);
            if self.charge.as_mut().is_some_and(|charge| charge.add(bytes, "held results").is_err()) {
                self.held_too_many = true;
                return Ok(true);
            }
            self.beyond.add(std::mem::take(&mut self.pending));
        } else {
            self.attribute(self.mark_at.is_none_or(|page| self.emitted <= page));
        }
        self.emitted_bytes = self.emitted_bytes.saturating_add(size.unwrap_or_else(|bytes| bytes));
        if self.mark_at == Some(self.emitted) {
            self.mark = Some(resume());
        }
        match &mut self.sink {
            Some(sink) => {
                if !sink(v) {
                    return Ok(true);
                }
            }
            None => self.out.push(v),
        }
        if let Some((results, bytes)) = self.hold {
            if self.emitted > results || self.emitted_bytes > bytes {
                self.held_too_many = true;
                return Ok(true);
            }
        }
        Ok(self.limit.is_some_and(|l| self.emitted >= l))
    }

    /// Rows one input must deliver for what this emitter still wants: the results to skip plus
    /// the limit; `None` without a limit or with DISTINCT (duplicates are known only at the end).
    /// Results OFFSET still has to skip.
    pub fn pending_skip(&self) -> u64 {
        self.skip
    }

    /// Notes that `n` results of the OFFSET were skipped before reaching the emitter (on index
    /// keys, without reading their items).
    pub fn skipped_before(&mut self, n: u64) {
        self.skip = self.skip.saturating_sub(n);
    }

    pub fn rows_wanted(&self) -> Option<u64> {
        if self.distinct.is_some() {
            return None;
        }
        self.limit.map(|l| l.saturating_add(self.skip))
    }

    /// The resume point of the marked result, if it was reached.
    pub fn mark(&self) -> Option<&ResumePoint> {
        self.mark.as_ref()
    }

    /// Results given out so far.
    pub fn emitted(&self) -> u64 {
        self.emitted
    }

    /// About how many bytes the results given out so far hold.
    pub fn emitted_bytes(&self) -> u64 {
        self.emitted_bytes
    }

    /// The collected results (empty when they went to a sink).
    pub fn finish(self) -> Vec<Output> {
        self.out
    }
}
