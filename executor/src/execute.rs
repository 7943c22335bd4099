//! The executor's entry points: plan a query ([`plan_query`]), run one page of a plan
//! ([`execute_plan`]), or both ([`execute`]); and [`explain`], which prints the same plan.

use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use cosmoql_planner::{Paging, Plan, Strategy};
use cosmoql_value::{format_number, Value};

use crate::continuation::{self, ResumePoint, Token};
use crate::coordinator::{producer_threads, Coordinator, PartitionMetrics, Unit, UnitRanges};
use crate::cost;
use crate::emitter::Emitter;
use crate::error::{QueryError, QueryErrorKind};
use crate::memory::DEFAULT_MEMORY_BUDGET;
use crate::operators::{RunStats, Runner};
pub use crate::options::QueryOptions;
use crate::output::Output;
use crate::row::RowPos;
use crate::source::QuerySource;

/// What one page of a query returned and what it cost: its results as values, or as
/// [`Output`]s ([`execute_plan_output`]: whole items not decoded).
#[derive(Debug, Clone, PartialEq)]
pub struct QueryOutput<T = Value> {
    pub items: Vec<T>,
    pub metrics: QueryMetrics,
    /// Set when more results remain (paged requests only).
    pub continuation: Option<String>,
    /// What each physical partition's producer did, in partition order (empty when the query ran
    /// in one pass: no items, ORDER BY RANK, FROM subqueries).
    pub partitions: Vec<PartitionMetrics>,
    /// With `populate_index_metrics`: the index metrics in the service's JSON (V2):
    /// `{"UtilizedIndexes": {"SingleIndexes": [...], "CompositeIndexes": [...]},
    /// "PotentialIndexes": {...}}`.
    pub index_metrics: Option<Value>,
}

impl<T> QueryOutput<T> {
    /// The same page with each result turned by `f`.
    pub fn map_items<U>(self, f: impl FnMut(T) -> U) -> QueryOutput<U> {
        QueryOutput {
            items: self.items.into_iter().map(f).collect(),
            metrics: self.metrics,
            continuation: self.continuation,
            partitions: self.partitions,
            index_metrics: self.index_metrics,
        }
    }

    /// The work each of the physical partitions `ids` did for this page (bytes loaded, index
    /// entries read; none for a partition the page did not reach): how its charge divides among
    /// their throughput budgets (`cosmoql_storage::throughput::admission::consume_page`).
    pub fn partition_work(&self, ids: &[u32]) -> Vec<(u32, u64, u64)> {
        ids.iter()
            .map(|id| {
                let m = self.partitions.iter().find(|m| m.partition == *id);
                (*id, m.map_or(0, |m| m.retrieved_document_size), m.map_or(0, |m| m.index_entries))
            })
            .collect()
    }
}

/// Execution metrics, named as Cosmos DB's query metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct QueryMetrics {
    /// Physical partitions the query read.
    pub partitions_touched: usize,
    /// Physical partitions of the container.
    pub physical_partitions: usize,
    /// Items read from storage, and their bytes as stored.
    pub retrieved_document_count: u64,
    pub retrieved_document_size: u64,
    /// Index entries read (probes and ordered walks).
    pub index_entries_read: u64,
    /// Results returned, and about how many bytes they hold.
    pub output_document_count: u64,
    pub output_document_size: u64,
    /// Time spent parsing, binding and planning (0 when the plan came from the plan cache), and
    /// running the plan, in nanoseconds.
    pub compile_time_ns: u64,
    pub execution_time_ns: u64,
    /// Request units (see [`crate::cost`]).
    pub request_charge: f64,
    /// The most results produced but not yet returned at once (rows held for a merge or a group
    /// count as well).
    pub peak_buffered_items: u64,
}

impl QueryMetrics {
    /// Adds a later page's metrics to these (counts and charges add up, peaks take the maximum).
    pub fn add_page(&mut self, page: &QueryMetrics) {
        self.retrieved_document_count = self.retrieved_document_count.saturating_add(page.retrieved_document_count);
        self.retrieved_document_size = self.retrieved_document_size.saturating_add(page.retrieved_document_size);
        self.output_document_size = self.output_document_size.saturating_add(page.output_document_size);
        self.compile_time_ns = self.compile_time_ns.saturating_add(page.compile_time_ns);
        self.execution_time_ns = self.execution_time_ns.saturating_add(page.execution_time_ns);
        self.index_entries_read = self.index_entries_read.saturating_add(page.index_entries_read);
        self.output_document_count = self.output_document_count.saturating_add(page.output_document_count);
        self.request_charge += page.request_charge;
        self.peak_buffered_items = self.peak_buffered_items.max(page.peak_buffered_items);
        self.partitions_touched = self.partitions_touched.max(page.partitions_touched);
        self.physical_partitions = page.physical_partitions;
    }
}

impl QueryMetrics {
    /// The metrics as the service's `x-ms-documentdb-query-metrics` header writes them: its keys,
    /// in its order, times in milliseconds with two decimals. Times cosmoql does not split
    /// (index lookup, document load, output writing, functions) are within `VMExecutionTimeInMs`
    /// and reported as 0; `indexUtilizationRatio` is results per item retrieved (1 when none
    /// was retrieved: the indexes answered alone).
    pub fn to_header_string(&self) -> String {
        let ms = |ns: u64| format!("{:.2}", ns as f64 / 1e6);
        let ratio = if self.retrieved_document_count == 0 {
            1.0
        } else {
            (self.output_document_count as f64 / self.retrieved_document_count as f64).min(1.0)
        };
        format!(
            "totalExecutionTimeInMs={};queryCompileTimeInMs={};queryLogicalPlanBuildTimeInMs=0.00;\
             queryPhysicalPlanBuildTimeInMs=0.00;queryOptimizationTimeInMs=0.00;VMExecutionTimeInMs={};\
             indexLookupTimeInMs=0.00;documentLoadTimeInMs=0.00;systemFunctionExecuteTimeInMs=0.00;\
             userFunctionExecuteTimeInMs=0.00;retrievedDocumentCount={};retrievedDocumentSize={};\
             outputDocumentCount={};outputDocumentSize={};writeOutputTimeInMs=0.00;indexUtilizationRatio={:.2}",
            ms(self.compile_time_ns.saturating_add(self.execution_time_ns)),
            ms(self.compile_time_ns),
            ms(self.execution_time_ns),
            self.retrieved_document_count,
            self.retrieved_document_size,
            self.output_document_count,
            self.output_document_size,
            ratio
        )
    }
}

/// Plans and runs `sql` over `source`: one page when `options.max_item_count` is set.
pub fn execute(source: &dyn QuerySource, sql: &str, options: &QueryOptions) -> Result<QueryOutput, QueryError> {
    let (plan, compile_time_ns) = crate::plan_cache::timed_plan(source, sql, options)?;
    let mut output = execute_plan(source, &plan, options)?;
    output.metrics.compile_time_ns = compile_time_ns;
    Ok(output)
}

/// The producers of a plan now: one per physical partition overlapping its target ranges, with
/// the pieces of the ranges inside that partition.
fn units(source: &dyn QuerySource, plan: &Plan, options: &QueryOptions) -> Vec<Unit> {
    if !plan.reads_items() {
        return Vec::new();
    }
    let ranges = &options.scoped_ranges(plan);
    let partitions = source.partitions_overlapping(ranges);
    let mut units = Vec::with_capacity(partitions.len());
    units.extend(partitions.into_iter().filter_map(|p| {
        let pieces: UnitRanges = match &ranges[..] {
            // The usual unit: one range holding the whole partition.
            [(min, max)] if *min <= p.min && *max >= p.max => smallvec::smallvec![(p.min, p.max)],
            _ => ranges
                .iter()
                .filter_map(|(min, max)| {
                    let lo = if *min > p.min { min.clone() } else { p.min.clone() };
                    let hi = if *max < p.max { max.clone() } else { p.max.clone() };
                    (lo < hi).then_some((lo, hi))
                })
                .collect(),
        };
        (!pieces.is_empty()).then(|| Unit {
            partition: p.id,
            start: None,
            ranges: pieces,
            point: plan.targets.point.clone(),
        })
    }));
    units
}

/// Runs one page of `plan` over `source` (all of it without `options.max_item_count`).
pub fn execute_plan(source: &dyn QuerySource, plan: &Plan, options: &QueryOptions) -> Result<QueryOutput, QueryError> {
    Ok(run(source, plan, options, None)?.map_items(Output::into_value))
}

/// [`execute_plan`], its results as [`Output`]s: a stored item returned whole is not decoded, so
/// a consumer that writes JSON writes it from the stored bytes.
pub fn execute_plan_output(
    source: &dyn QuerySource,
    plan: &Plan,
    options: &QueryOptions,
) -> Result<QueryOutput<Output>, QueryError> {
    run(source, plan, options, None)
}

/// Runs `plan` to the end, handing each result to `sink` as it is produced, so nothing is
/// collected (a result set larger than memory streams through); `sink` returns false to stop.
/// Paging options are ignored. The output's `items` is empty; its metrics count the results.
pub fn execute_plan_streaming(
    source: &dyn QuerySource,
    plan: &Plan,
    options: &QueryOptions,
    sink: &mut dyn FnMut(Output) -> bool,
) -> Result<QueryOutput<Output>, QueryError> {
    run(source, plan, options, Some(sink))
}

fn run(
    source: &dyn QuerySource,
    plan: &Plan,
    options: &QueryOptions,
    sink: Option<&mut dyn FnMut(Output) -> bool>,
) -> Result<QueryOutput<Output>, QueryError> {
    let started = std::time::Instant::now();
    // A streamed run ignores the paging options (not copying the options: they hold the
    // parameters, and a copy was 3% of a point read).
    let (token_text, max_item_count) =
        if sink.is_some() { (None, None) } else { (options.continuation.as_deref(), options.max_item_count) };
    source.begin_read();
    // What tokens are signed with: only a query that reads or writes one needs it (hashing the
    // parameters' JSON was 7% of a point read).
    let fingerprint = std::cell::OnceCell::new();
    let fp = || *fingerprint.get_or_init(|| continuation::plan_fingerprint(plan, options));
    let token = match token_text {
        Some(text) => continuation::decode(text, fp())?,
        None => Token { returned: 0, resume: None, charged: cost::ChargedSoFar::default(), held: None },
    };
    if max_item_count == Some(0) {
        return Err(QueryError::new(QueryErrorKind::Bind, "max_item_count must be at least 1", None));
    }
    // The next page of a query whose results are held: a slice of them, nothing read.
    if let (Paging::Replay, Some(id), Some(page)) = (plan.paging, token.held, max_item_count) {
        if let Some((items, more)) = crate::held::page(id, token.returned, page) {
            return Ok(held_page(plan, options, fp(), &token, (id, items, more), started));
        }
    }
    let physical_partitions = source.partition_count();
    let mut units = units(source, plan, options);
    if units.len() > 1 && !options.enable_cross_partition {
        return Err(QueryError::new(
            QueryErrorKind::Storage,
            "400 Bad Request: the query needs to read several partitions but cross-partition queries are disabled; give a partition key or filter on it",
            None,
        ));
    }
    // Where the previous page stopped, as far as this plan's paging can use it. (Only this
    // process's tokens get here; their sort keys have the shape of the plan that made them.)
    if let (Paging::BySortKeys, Some(ResumePoint::Sort(cursor))) = (plan.paging, &token.resume) {
        if cursor.keys.len() != plan.query.order_by.len() {
            return Err(QueryError::new(
                QueryErrorKind::Bind,
                format!(
                    "invalid continuation token: it has {} sort keys and the query orders by {}",
                    cursor.keys.len(),
                    plan.query.order_by.len()
                ),
                None,
            ));
        }
    }
    let resume = match (plan.paging, token.resume) {
        (Paging::ByPosition, Some(r @ ResumePoint::Position(_))) => Some(r),
        (Paging::BySortKeys, Some(r @ ResumePoint::Sort(_))) => Some(r),
        _ => None,
    };
    if let Some(ResumePoint::Position(RowPos { item: Some(at), .. })) = &resume {
        // Earlier items were returned: start every scan at the last one's position.
        units.retain(|u| u.ranges.iter().any(|(_, max)| at.epk < *max));
        for u in &mut units {
            u.start = Some(at.clone());
        }
    }
    // One more than the page, to know whether a continuation is needed; or, where pages cannot
    // resume from a position, all of them, to hold the rest for the next pages.
    let hold = plan.paging == Paging::Replay && max_item_count.is_some() && sink.is_none();
    let take = if hold { None } else { max_item_count.map(|n| (n as u64).saturating_add(1)) };
    let runner = Runner::new(source)
        .with_cancel(options.cancel.clone())
        .with_udfs(options.udfs.clone())
        .with_budget(options.memory_budget.unwrap_or(DEFAULT_MEMORY_BUDGET));
    // The work read on this thread by the runs whose results the runner produces.
    let meter = std::cell::Cell::new(cost::Work::default());
    let mut stats = RunStats::default();
    let statistics = crate::coordinator::text_statistics(source, &plan.query, &runner, &mut stats, &meter)?;
    let runner = runner.with_text_statistics(statistics);
    let mut out = Emitter::page(&plan.query, token.returned, take, max_item_count, resume.is_some())
        .with_budget(&runner.budget)
        .with_meter(&meter);
    if hold {
        out = out.holding(crate::held::MAX_QUERY_HELD_RESULTS, crate::held::MAX_QUERY_HELD_BYTES);
    }
    let streaming = sink.is_some();
    if let Some(sink) = sink {
        out = out.into_sink(sink);
    }
    let coordinator = Coordinator {
        source,
        query: &plan.query,
        access: &plan.access,
        units: &units,
        runner: &runner,
        max_degree_of_parallelism: options.max_degree_of_parallelism,
        max_buffered_item_count: options.max_buffered_item_count,
        page_size: max_item_count.unwrap_or(100),
        resume,
        per_partition: Mutex::new(Vec::with_capacity(units.len())),
    };
    match plan.strategy {
        Strategy::NoItems => runner.run_into(&plan.query, &mut std::iter::empty(), &mut stats, &mut out)?,
        Strategy::OnePass(_) => coordinator.one_pass(&mut stats, &mut out, &meter)?,
        Strategy::Concatenate => coordinator.concatenated(&mut stats, &mut out, &meter)?,
        Strategy::MergeSorted => coordinator.ordered(&mut stats, &mut out)?,
        Strategy::MergeGroups => coordinator.grouped(&mut stats, &mut out)?,
    }
    let mark = out.mark().cloned();
    let overflowed = out.overflowed();
    let held_all = out.held_all();
    let (work_held, work_all, work_page) = (out.charged_work_held(), out.charged_work(true), out.charged_work(false));
    let emitted = out.emitted();
    let emitted_bytes = out.emitted_bytes();
    let mut items = out.finish();
    let mut continuation = None;
    let mut held = None;
    if let Some(page) = max_item_count {
        if items.len() > page {
            let returned = token.returned.saturating_add(page as u64);
            if held_all {
                let rest = items.split_off(page);
                // What they hold in memory (the bound on all held results is on real bytes).
                let bytes = rest.iter().map(|v| v.heap_bytes() + size_of::<Output>() as u64).sum();
                held = crate::held::hold(returned, rest, bytes).ok();
            }
            items.truncate(page);
            let resume = if plan.paging == Paging::Replay { None } else { mark };
            continuation = Some((returned, resume));
        }
    }
    // The page is charged for the work its results carry, and for the rest when it is the last
    // or the rest is held (the next pages read nothing).
    let charged_work = match held {
        Some(_) => work_held,
        None if !overflowed => work_all,
        None => work_page,
    };
    // Results returned: those of the page, or every one handed to the sink.
    let output = if streaming { emitted } else { items.len() as u64 };
    let output_bytes = if streaming { emitted_bytes } else { items.iter().map(Output::bytes).sum::<u64>() };
    // What the pages so far and this one were charged for: the partitions once, on the first.
    let before = token.charged;
    let mut charged = before;
    if token_text.is_none() {
        charged.partitions = units.len().max(1) as u64;
    }
    charged.work.add(charged_work);
    charged.output_bytes = charged.output_bytes.saturating_add(output_bytes);
    let continuation =
        continuation.map(|(returned, resume)| continuation::encode(fp(), &Token { returned, resume, charged, held }));
    let metrics = QueryMetrics {
        partitions_touched: units.len(),
        physical_partitions,
        retrieved_document_count: stats.retrieved,
        retrieved_document_size: stats.retrieved_bytes,
        index_entries_read: stats.index_entries,
        output_document_count: output,
        output_document_size: output_bytes,
        compile_time_ns: 0,
        execution_time_ns: started.elapsed().as_nanos() as u64,
        request_charge: charged.page_charge(&before, options.consistency),
        peak_buffered_items: stats.peak_buffered,
    };
    let index_metrics = options.populate_index_metrics.then(|| cosmoql_planner::access::index_metrics(&plan.access));
    Ok(QueryOutput { items, metrics, continuation, partitions: coordinator.partition_metrics(), index_metrics })
}

/// A page served from held results (`id`, the page's `items`, whether `more` follow): charged
/// for its output only, the query's work having been charged to the page that held them.
fn held_page(
    plan: &Plan,
    options: &QueryOptions,
    fp: u64,
    token: &Token,
    (id, items, more): (u64, Vec<Output>, bool),
    started: std::time::Instant,
) -> QueryOutput<Output> {
    let output_bytes = items.iter().map(Output::bytes).sum::<u64>();
    let mut charged = token.charged;
    charged.output_bytes = charged.output_bytes.saturating_add(output_bytes);
    let returned = token.returned.saturating_add(items.len() as u64);
    let continuation =
        more.then(|| continuation::encode(fp, &Token { returned, resume: None, charged, held: Some(id) }));
    let metrics = QueryMetrics {
        output_document_count: items.len() as u64,
        output_document_size: output_bytes,
        execution_time_ns: started.elapsed().as_nanos() as u64,
        request_charge: charged.page_charge(&token.charged, options.consistency),
        ..QueryMetrics::default()
    };
    let index_metrics = options.populate_index_metrics.then(|| cosmoql_planner::access::index_metrics(&plan.access));
    QueryOutput { items, metrics, continuation, partitions: Vec::new(), index_metrics }
}

/// A plan as EXPLAIN prints it: the plan itself (its `Display`), where it runs now, and with
/// ANALYZE what running it did.
#[derive(Debug, Clone)]
pub struct Explain {
    pub plan: Plan,
    /// The physical partitions the plan reads now.
    pub partitions: Vec<u32>,
    /// Physical partitions of the container.
    pub physical_partitions: usize,
    /// Producer threads at most.
    pub producers: usize,
    /// EXPLAIN ANALYZE: what running the plan did.
    pub analysis: Option<Analysis>,
    /// Where a client with another engine to ask (the analytical store) runs the query, and why:
    /// a line or two, written after the partitions.
    pub routing: Option<String>,
}

/// What running a plan did, for EXPLAIN ANALYZE.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Analysis {
    pub elapsed: Duration,
    /// The metrics of all pages together.
    pub metrics: QueryMetrics,
    pub pages: usize,
}

/// The plan of `sql` and where it would run now, without running it.
pub fn explain(source: &dyn QuerySource, sql: &str, options: &QueryOptions) -> Result<Explain, QueryError> {
    let plan = crate::plan_cache::plan_query(source, sql, options)?;
    Ok(explain_plan(source, plan, options))
}

/// Where `plan` would run now.
pub fn explain_plan(source: &dyn QuerySource, plan: Plan, options: &QueryOptions) -> Explain {
    let partitions: Vec<u32> = units(source, &plan, options).iter().map(|u| u.partition).collect();
    let producers = producer_threads(options.max_degree_of_parallelism, partitions.len());
    Explain {
        physical_partitions: source.partition_count(),
        partitions,
        producers,
        plan,
        analysis: None,
        routing: None,
    }
}

impl fmt::Display for Explain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.plan)?;
        if self.plan.reads_items() {
            let list: Vec<String> = self.partitions.iter().map(u32::to_string).collect();
            write!(
                f,
                "\npartitions  {} of {} physical partitions [{}], at most {} producer{} at a time",
                self.partitions.len(),
                self.physical_partitions,
                list.join(", "),
                self.producers,
                if self.producers == 1 { "" } else { "s" }
            )?;
        }
        if let Some(routing) = &self.routing {
            write!(f, "\n{routing}")?;
        }
        if let Some(a) = &self.analysis {
            let m = &a.metrics;
            write!(f, "\nanalyze")?;
            write!(f, "\n  time      {:.3} ms", a.elapsed.as_secs_f64() * 1000.0)?;
            write!(f, "\n  partitions touched {} of {}", m.partitions_touched, m.physical_partitions)?;
            write!(
                f,
                "\n  read {} index entries, retrieved {} items, returned {} results in {} page(s)",
                m.index_entries_read, m.retrieved_document_count, m.output_document_count, a.pages
            )?;
            write!(
                f,
                "\n  peak buffered {} items, request charge {} RU",
                m.peak_buffered_items,
                format_number((m.request_charge * 100.0).round() / 100.0)
            )?;
        }
        Ok(())
    }
}
