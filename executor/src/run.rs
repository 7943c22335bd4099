//! Running a query text against a container: parse, compile, choose the target partitions, run
//! one producer per physical partition in bounded parallel, and merge on the client side.
//!
//! - **Targets**: the request's partition key, or equalities on the key in WHERE, narrow the query
//!   to EPK ranges; each physical partition that overlaps them is one producer.
//! - **Producers** run on at most `max_degree_of_parallelism` threads at a time, taking
//!   partitions in EPK order.
//! - **Merges** reproduce a serial run over one partition exactly: without ORDER BY, results are
//!   concatenated in EPK order (later partitions run ahead into bounded buffers); ORDER BY is a
//!   k-way merge of per-partition sorted rows, ties broken by the rows' scan positions (EPK, then
//!   creation order, then JOIN expansion), which do not depend on how the space is partitioned;
//!   aggregates and GROUP BY merge partial accumulators in scan order. DISTINCT, OFFSET and
//!   LIMIT/TOP apply at the end; OFFSET skips rows without keeping them.
//! - **Paging**: with `max_item_count`, a call returns one page and an opaque continuation token;
//!   the token records the query's fingerprint and how many results were returned, so a resumed
//!   run gives exactly the rest (the order is deterministic, also across partition splits).

use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Mutex;

use cosmoql_storage::{Container, Epk, ItemPosition, PartitionKey};
use cosmoql_value::Value;

use crate::error::{QueryError, QueryErrorKind};
use crate::eval::Row;
use crate::functions::VectorPolicy;
use crate::query::{
    compare_keys, compile, merge_groups, CompileOptions, CompiledQuery, Emitter, Flow, Groups, Input, RowPos, RunStats,
    Runner,
};

/// Options of one query request.
#[derive(Debug, Clone)]
pub struct QueryOptions {
    /// Values of `@parameters`, by name without the `@`.
    pub parameters: HashMap<String, Value>,
    /// Scope the query to one logical partition (the request's partition key).
    pub partition_key: Option<PartitionKey>,
    /// Whether a query without a partition key may read several physical partitions.
    pub enable_cross_partition: bool,
    /// The container's vector embedding policy (for `VectorDistance`).
    pub vector_policies: Vec<VectorPolicy>,
    /// Producers running at once: 0 or 1 one at a time in EPK order, -1 as many as the machine
    /// has cores, n at most n.
    pub max_degree_of_parallelism: i32,
    /// Bound on the results produced but not yet returned (at least one page per running
    /// producer).
    pub max_buffered_item_count: Option<usize>,
    /// Results per page: with it, `execute` returns one page and a continuation token.
    pub max_item_count: Option<usize>,
    /// Resume after the pages a continuation token stands for.
    pub continuation: Option<String>,
    /// Set it (from any thread) to stop the query: it ends with a `Cancelled` error, and every
    /// producer stops at its next item.
    pub cancel: Option<std::sync::Arc<AtomicBool>>,
}

impl Default for QueryOptions {
    fn default() -> Self {
        QueryOptions {
            parameters: HashMap::new(),
            partition_key: None,
            enable_cross_partition: true,
            vector_policies: Vec::new(),
            max_degree_of_parallelism: -1,
            max_buffered_item_count: None,
            max_item_count: None,
            continuation: None,
            cancel: None,
        }
    }
}

impl QueryOptions {
    /// Adds a parameter (`name` with or without the leading `@`).
    pub fn parameter(mut self, name: &str, value: Value) -> Self {
        self.parameters.insert(name.trim_start_matches('@').to_string(), value);
        self
    }
}

/// What a query returned and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryOutput {
    pub items: Vec<Value>,
    pub metrics: QueryMetrics,
    /// Set when more results remain (paged requests only).
    pub continuation: Option<String>,
    /// What each physical partition's producer did, in partition order (empty when the query ran
    /// in one pass: no items, ORDER BY RANK, FROM subqueries).
    pub partitions: Vec<PartitionMetrics>,
}

/// Metrics of one physical partition's producer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartitionMetrics {
    pub partition: u32,
    pub retrieved_document_count: u64,
    pub time_ms: f64,
}

/// Execution metrics, named as Cosmos DB's query metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct QueryMetrics {
    /// Physical partitions the query read.
    pub partitions_touched: usize,
    /// Physical partitions of the container.
    pub physical_partitions: usize,
    /// Items read from storage.
    pub retrieved_document_count: u64,
    /// Results returned.
    pub output_document_count: u64,
    /// Request units: 2.5 per query, plus 0.05 per item read and 0.01 per result (a later issue
    /// derives it from what each operation touches).
    pub request_charge: f64,
    /// The most results produced but not yet returned at once (rows held for a merge or a group
    /// count as well).
    pub peak_buffered_items: u64,
}

/// The continuation token format, version 1: `cq1.` + hex of `fingerprint:returned`.
const TOKEN_PREFIX: &str = "cq1.";

fn fingerprint(sql: &str, options: &QueryOptions) -> u64 {
    // FNV-1a over the query text, the parameters (sorted) and the partition key: a token only
    // resumes the query it came from.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    };
    feed(sql.as_bytes());
    let mut params: Vec<_> = options.parameters.iter().collect();
    params.sort_by(|a, b| a.0.cmp(b.0));
    for (k, v) in params {
        feed(k.as_bytes());
        feed(cosmoql_value::to_json_string(v).unwrap_or_default().as_bytes());
    }
    if let Some(k) = &options.partition_key {
        feed(k.to_string().as_bytes());
    }
    h
}

fn encode_token(fp: u64, returned: u64, at: Option<&RowPos>) -> String {
    let mut text = format!("{fp:016x}:{returned}");
    if let Some(RowPos { item: Some(item), sub }) = at {
        text.push_str(&format!(":{}:{}:{sub}", item.epk.to_hex(), item.seq));
    }
    let hex: String = text.bytes().map(|b| format!("{b:02x}")).collect();
    format!("{TOKEN_PREFIX}{hex}")
}

/// What a token says: results returned so far, and (for queries without ORDER BY, aggregates or
/// DISTINCT) the scan position of the last one.
fn decode_token(token: &str, fp: u64) -> Result<(u64, Option<RowPos>), QueryError> {
    let bad = |why: &str| QueryError::new(QueryErrorKind::Bind, format!("invalid continuation token: {why}"), None);
    let hex = token.strip_prefix(TOKEN_PREFIX).ok_or_else(|| bad("unknown format or version"))?;
    if hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad("it is not a cosmoql token"));
    }
    let bytes: Vec<u8> =
        (0..hex.len()).step_by(2).filter_map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok()).collect();
    let text = String::from_utf8(bytes).map_err(|_| bad("it is not a cosmoql token"))?;
    let fields: Vec<&str> = text.split(':').collect();
    if fields.len() != 2 && fields.len() != 5 {
        return Err(bad("it is not a cosmoql token"));
    }
    if u64::from_str_radix(fields[0], 16).ok() != Some(fp) {
        return Err(bad("it belongs to another query (text, parameters or partition key differ)"));
    }
    let returned = fields[1].parse().map_err(|_| bad("it is not a cosmoql token"))?;
    let at = match fields.as_slice() {
        [_, _, epk, seq, sub] => Some(RowPos {
            item: Some(ItemPosition {
                epk: Epk::from_hex(epk).map_err(|_| bad("it is not a cosmoql token"))?,
                seq: seq.parse().map_err(|_| bad("it is not a cosmoql token"))?,
            }),
            sub: sub.parse().map_err(|_| bad("it is not a cosmoql token"))?,
        }),
        _ => None,
    };
    Ok((returned, at))
}

/// One producer's share of the query: EPK ranges inside one physical partition.
#[derive(Debug, Clone)]
struct Unit {
    /// The physical partition's id.
    partition: u32,
    /// Resume here (inclusive) instead of at the start of the range that holds it.
    start: Option<ItemPosition>,
    ranges: Vec<(Epk, Epk)>,
    /// A point read: the query pins the key and the id.
    point: Option<(PartitionKey, String)>,
}

fn unit_input<'c>(container: &'c Container, unit: &Unit) -> Box<Input<'c>> {
    if let Some((key, id)) = &unit.point {
        let found = container.read_stored(key, id).ok();
        let epk = unit.ranges.first().map(|r| r.0.clone()).unwrap_or_else(Epk::min);
        return Box::new(
            found.into_iter().map(move |item| (ItemPosition { epk: epk.clone(), seq: item.meta.seq }, item)),
        );
    }
    let ranges = unit.ranges.clone();
    let start = unit.start.clone();
    Box::new(ranges.into_iter().flat_map(move |(min, max)| {
        let from = match &start {
            Some(at) if min <= at.epk && at.epk < max => at.clone(),
            _ => ItemPosition::start_of(min),
        };
        container.scan_positions(from, max)
    }))
}

/// Parses, compiles and runs `sql` over `container`.
pub fn execute(container: &Container, sql: &str, options: &QueryOptions) -> Result<QueryOutput, QueryError> {
    let (query, compiled) = parse_and_compile(sql, options)?;
    let fp = fingerprint(sql, options);
    let (returned, resume_at) = match &options.continuation {
        Some(token) => decode_token(token, fp)?,
        None => (0, None),
    };
    if options.max_item_count == Some(0) {
        return Err(QueryError::new(QueryErrorKind::Bind, "max_item_count must be at least 1", None));
    }
    let ((ranges, point), _) = target_ranges(container, &query, &compiled, options)?;
    let physical_partitions = container.partition_count();
    let units: Vec<Unit> = container
        .partitions_overlapping(&ranges)
        .into_iter()
        .filter_map(|(id, p_min, p_max)| {
            let pieces: Vec<(Epk, Epk)> = ranges
                .iter()
                .filter_map(|(min, max)| {
                    let lo = if *min > p_min { min.clone() } else { p_min.clone() };
                    let hi = if *max < p_max { max.clone() } else { p_max.clone() };
                    (lo < hi).then_some((lo, hi))
                })
                .collect();
            (!pieces.is_empty()).then(|| Unit { partition: id, start: None, ranges: pieces, point: point.clone() })
        })
        .collect();
    let reads_items = compiled.reads_items();
    if reads_items && units.len() > 1 && !options.enable_cross_partition {
        return Err(QueryError::new(
            QueryErrorKind::Storage,
            "400 Bad Request: the query needs to read several partitions but cross-partition queries are disabled; give a partition key or filter on it",
            None,
        ));
    }
    // One more than the page, to know whether a continuation is needed.
    let take = options.max_item_count.map(|n| n as u64 + 1);
    // Results in scan order (no ORDER BY, aggregates or DISTINCT) resume from the scan position of
    // the last result returned: earlier items are not read again. The others resume by running
    // the plan again and skipping what was returned (exact: the order is deterministic).
    let by_position = reads_items
        && !compiled.is_aggregate()
        && !compiled.is_ordered()
        && !compiled.is_ranked()
        && !compiled.reads_through_subquery()
        && !compiled.is_distinct()
        && (returned == 0 || resume_at.is_some());
    let resume_at = if by_position { resume_at } else { None };
    let mut units = units;
    if let Some(RowPos { item: Some(at), .. }) = &resume_at {
        units.retain(|u| u.ranges.iter().any(|(_, max)| at.epk < *max));
        for u in &mut units {
            u.start = Some(at.clone());
        }
    }
    let units = units;
    let mut out =
        if by_position { Emitter::resume(&compiled, returned, take) } else { Emitter::page(&compiled, returned, take) };
    let runner = Runner::new(container).with_cancel(options.cancel.clone());
    let mut stats = RunStats::default();
    let coordinator = Coordinator {
        resume_after: resume_at.clone(),
        per_partition: Mutex::new(Vec::new()),
        container,
        compiled: &compiled,
        options,
        units: &units,
        runner: &runner,
    };
    if !reads_items {
        runner.run_into(&compiled, &mut std::iter::empty(), &mut stats, &mut out)?;
    } else if compiled.is_ranked() || compiled.reads_through_subquery() {
        // Ranking needs statistics over all rows, and a FROM subquery's DISTINCT, TOP or
        // aggregates need every item: one pass over every target partition in EPK order.
        let mut all = units.iter().flat_map(|u| unit_input(container, u));
        runner.run_into(&compiled, &mut all, &mut stats, &mut out)?;
    } else if compiled.is_aggregate() {
        coordinator.grouped(&mut stats, &mut out)?;
    } else if compiled.is_ordered() {
        coordinator.ordered(&mut stats, &mut out)?;
    } else {
        coordinator.concatenated(&mut stats, &mut out)?;
    }
    let last = options.max_item_count.and_then(|page| out.position_of(page).cloned());
    let mut items = out.finish();
    let mut continuation = None;
    if let Some(page) = options.max_item_count {
        if items.len() > page {
            items.truncate(page);
            continuation = Some(encode_token(fp, returned + page as u64, last.as_ref()));
        }
    }
    let metrics = QueryMetrics {
        partitions_touched: if reads_items { units.len() } else { 0 },
        physical_partitions,
        retrieved_document_count: stats.retrieved,
        output_document_count: items.len() as u64,
        request_charge: 2.5 + 0.05 * stats.retrieved as f64 + 0.01 * items.len() as f64,
        peak_buffered_items: stats.peak_buffered,
    };
    let mut partitions = coordinator.per_partition.into_inner().unwrap_or_default();
    partitions.sort_by_key(|p| p.partition);
    Ok(QueryOutput { items, metrics, continuation, partitions })
}

/// Runs a query to the end: page by page when `options.max_item_count` is set, each page resumed
/// from the previous page's continuation token. Items and metrics of all pages add up; returns
/// them with the number of pages.
pub fn execute_all(
    container: &Container,
    sql: &str,
    options: &QueryOptions,
) -> Result<(QueryOutput, usize), QueryError> {
    let mut options = options.clone();
    let mut all = execute(container, sql, &options)?;
    let mut pages = 1;
    while let Some(token) = all.continuation.take() {
        options.continuation = Some(token);
        let page = execute(container, sql, &options)?;
        pages += 1;
        let (m, p) = (&mut all.metrics, &page.metrics);
        m.retrieved_document_count += p.retrieved_document_count;
        m.output_document_count += p.output_document_count;
        m.request_charge += p.request_charge;
        m.peak_buffered_items = m.peak_buffered_items.max(p.peak_buffered_items);
        m.partitions_touched = m.partitions_touched.max(p.partitions_touched);
        all.items.extend(page.items);
        all.partitions.extend(page.partitions);
        all.continuation = page.continuation;
    }
    Ok((all, pages))
}

/// The plan of a query, without running it: target partitions and why, what each partition
/// runs, and the merge stages on the client.
pub fn explain(container: &Container, sql: &str, options: &QueryOptions) -> Result<String, QueryError> {
    let (query, compiled) = parse_and_compile(sql, options)?;
    let ((ranges, point), reason) = target_ranges(container, &query, &compiled, options)?;
    let physical_partitions = container.partition_count();
    let touched: Vec<String> =
        container.partitions_overlapping(&ranges).into_iter().map(|(id, _, _)| id.to_string()).collect();
    let dop = producer_threads(options.max_degree_of_parallelism, touched.len());
    let mut lines = vec![format!("query       {query}")];
    if !compiled.reads_items() {
        lines.push("targets     none: the query reads no items".to_string());
    } else {
        lines.push(format!(
            "targets     {reason}; {} of {} physical partitions [{}]",
            touched.len(),
            physical_partitions,
            touched.join(", ")
        ));
        lines.push(format!("producers   {}, at most {dop} at a time", touched.len()));
    }
    lines.push("per partition".to_string());
    match &point {
        Some((key, id)) => lines.push(format!("  read      point read of id {id:?} in logical partition {key}")),
        None => lines.push(format!("  scan      {} EPK range(s)", ranges.len())),
    }
    if let Some(w) = &query.where_clause {
        lines.push(format!("  filter    {w}"));
    }
    let serial = compiled.is_ranked() || compiled.reads_through_subquery();
    let order: Vec<String> = query
        .order_by
        .iter()
        .map(|o| match o.direction {
            Some(cosmoql_parser::SortDirection::Desc) => format!("{} DESC", o.expr),
            _ => o.expr.to_string(),
        })
        .collect();
    let mut merge = Vec::new();
    if serial {
        lines.push("  stream    items to the client in EPK order".to_string());
        merge.push(if compiled.is_ranked() {
            "rank every row (the scores need statistics over all rows)".to_string()
        } else {
            "run the FROM subquery over all items, then the outer query".to_string()
        });
    } else if compiled.is_aggregate() {
        let by = if query.group_by.is_empty() {
            "one group".to_string()
        } else {
            query.group_by.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", ")
        };
        lines.push(format!("  group     by {by}: partial aggregates (AVG as sum and count)"));
        merge.push("merge partial groups in scan order and finish the aggregates".to_string());
        if !order.is_empty() {
            merge.push(format!("order groups by {}", order.join(", ")));
        }
    } else if compiled.is_ordered() {
        let keep = compiled.rows_needed().map_or("all rows".to_string(), |n| format!("the first {n} rows"));
        lines.push(format!("  sort      {} (keep {keep}, as references to stored items)", order.join(", ")));
        merge.push(format!("k-way merge on {}, ties by scan position; project each row returned", order.join(", ")));
    } else {
        let keep = compiled.rows_needed().map_or(String::new(), |n| format!(" (stop after {n} results)"));
        lines.push(format!("  project   {}{keep}", query.select.projection_text()));
        if compiled.is_distinct() {
            lines.push("  distinct  within the partition".to_string());
        }
        merge.push("concatenate partitions in EPK order (later ones run ahead into bounded buffers)".to_string());
    }
    if query.select.distinct {
        merge.push("DISTINCT".to_string());
    }
    if let Some(ol) = &query.offset_limit {
        merge.push(format!("OFFSET {} (skipped rows are not kept) LIMIT {}", ol.offset, ol.limit));
    }
    if let Some(top) = &query.select.top {
        merge.push(format!("TOP {top}"));
    }
    lines.push("merge (client)".to_string());
    lines.extend(merge.into_iter().map(|m| format!("  {m}")));
    Ok(lines.join("\n"))
}

/// The EPK ranges the query can touch: the request's key, or keys pinned by equalities on the key
/// path in WHERE, or everything; and, when the key and the id are both pinned, the point read.
type Targets = (Vec<(Epk, Epk)>, Option<(PartitionKey, String)>);

/// The query's syntax tree and its compiled form, with the request's parameters bound.
fn parse_and_compile(sql: &str, options: &QueryOptions) -> Result<(cosmoql_parser::Query, CompiledQuery), QueryError> {
    let query = cosmoql_parser::parse(sql)
        .map_err(|e| QueryError::new(QueryErrorKind::Syntax, e.message.clone(), Some(e.span)))?;
    let compiled = compile(
        &query,
        &CompileOptions { parameters: options.parameters.clone(), vector_policies: options.vector_policies.clone() },
    )?;
    Ok((query, compiled))
}

/// [`target_ranges_of`], its storage errors (a key that does not fit the definition) as query
/// errors.
fn target_ranges(
    container: &Container,
    query: &cosmoql_parser::Query,
    compiled: &CompiledQuery,
    options: &QueryOptions,
) -> Result<(Targets, String), QueryError> {
    target_ranges_of(container, query, compiled, options)
        .map_err(|e| QueryError::new(QueryErrorKind::Storage, e.to_string(), None))
}

fn target_ranges_of(
    container: &Container,
    query: &cosmoql_parser::Query,
    compiled: &CompiledQuery,
    options: &QueryOptions,
) -> Result<(Targets, String), cosmoql_storage::StorageError> {
    let definition = container.partition_key();
    let point = |key: &PartitionKey| -> Result<(Epk, Epk), cosmoql_storage::StorageError> {
        definition.check_key(key)?;
        let epk = definition.epk(key)?;
        let next = epk.successor();
        Ok((epk, next))
    };
    let id = compiled
        .item_equalities()
        .into_iter()
        .find(|(p, _)| p.len() == 1 && p[0] == "id")
        .and_then(|(_, v)| v.as_str().map(str::to_string));
    let keys = |keys: Vec<PartitionKey>| -> Result<Targets, cosmoql_storage::StorageError> {
        let mut ranges = keys.iter().map(point).collect::<Result<Vec<_>, _>>()?;
        ranges.sort();
        ranges.dedup();
        let single = match (keys.as_slice(), &id) {
            ([key], Some(id)) => Some((key.clone(), id.clone())),
            _ => None,
        };
        Ok((ranges, single))
    };
    if let Some(key) = &options.partition_key {
        return Ok((keys(vec![key.clone()])?, "the request's partition key pins 1 key".to_string()));
    }
    let pruning = cosmoql_planner::prune(query, &options.parameters, definition);
    let targets = match pruning.targets {
        cosmoql_planner::Targets::All => (vec![(Epk::min(), Epk::max())], None),
        cosmoql_planner::Targets::Keys(list) => keys(list)?,
        cosmoql_planner::Targets::Ranges(ranges) => (ranges, None),
    };
    Ok((targets, pruning.reason))
}

struct Coordinator<'a> {
    /// Rows at or before this position were returned by earlier pages.
    resume_after: Option<RowPos>,
    /// Per-partition counters, filled as producers finish.
    per_partition: Mutex<Vec<PartitionMetrics>>,
    container: &'a Container,
    compiled: &'a CompiledQuery,
    options: &'a QueryOptions,
    units: &'a [Unit],
    runner: &'a Runner<'a>,
}

/// A page of results from a producer, or its end.
enum Message {
    Page(Vec<(RowPos, Value)>),
    Done(RunStats),
    Failed(QueryError),
}

/// Where a producer leaves its result for the coordinator.
type Outcome<T> = Mutex<Option<Result<(T, RunStats), QueryError>>>;

/// How many producer threads a query over `units` partitions runs: MaxDegreeOfParallelism, where
/// -1 means one per core (asked of the OS once per process: the answer costs system calls), and
/// never more than there are partitions nor fewer than one.
fn producer_threads(max_degree_of_parallelism: i32, units: usize) -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let dop = match max_degree_of_parallelism {
        -1 => *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        n if n <= 1 => 1,
        n => n as usize,
    };
    dop.clamp(1, units.max(1))
}

/// Rows of one partition, sorted, waiting for the merge: keys, scan position, the row (holding
/// references to stored items, not copies).
type SortedRows = Vec<(Vec<Value>, RowPos, Row)>;

impl Coordinator<'_> {
    fn threads(&self) -> usize {
        producer_threads(self.options.max_degree_of_parallelism, self.units.len())
    }

    fn page_size(&self) -> usize {
        self.options.max_item_count.unwrap_or(100).max(1)
    }

    /// Notes what one producer did.
    fn report(&self, unit: usize, stats: &RunStats) {
        if let Ok(mut list) = self.per_partition.lock() {
            list.push(PartitionMetrics {
                partition: self.units[unit].partition,
                retrieved_document_count: stats.retrieved,
                time_ms: stats.nanos as f64 / 1e6,
            });
        }
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

    /// No ORDER BY: concatenate the partitions' results in EPK order. Producers run ahead into
    /// bounded channels; the coordinator drains them in order and stops everything once it has
    /// enough.
    fn concatenated(&self, stats: &mut RunStats, out: &mut Emitter) -> Result<(), QueryError> {
        if self.threads() == 1 {
            return self.concatenated_serially(stats, out);
        }
        let page = self.page_size();
        let bound = self.options.max_buffered_item_count.unwrap_or(usize::MAX) as i64;
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
        let needed = self.compiled.rows_needed();
        let q = self.compiled;
        // A page may go out when it keeps the buffer within the bound, or, for the unit being
        // drained, when none of its pages is waiting (so the merge always moves).
        let send = |i: usize, tx: &SyncSender<Message>, batch: Vec<(RowPos, Value)>, cancel: &AtomicBool| -> bool {
            let n = batch.len() as i64;
            // Reserve room atomically, so two producers cannot both take the last of it.
            let now = loop {
                if cancel.load(AtomicOrdering::Relaxed) {
                    return false;
                }
                let now = buffered.load(AtomicOrdering::SeqCst);
                let drained = current.load(AtomicOrdering::SeqCst) == i && pending[i].load(AtomicOrdering::SeqCst) == 0;
                if (now + n <= bound || drained)
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
            let mut seen = q.is_distinct().then(std::collections::HashSet::new);
            let ctx = self.runner.ctx(None);
            let mut input = unit_input(self.container, &self.units[i]);
            let result = self.runner.for_each_row(q, &mut input, &Vec::new(), &mut unit_stats, &mut |row, pos| {
                if cancel.load(AtomicOrdering::Relaxed) {
                    return Ok(Flow::Stop);
                }
                if self.resume_after.as_ref().is_some_and(|after| pos <= after) {
                    return Ok(Flow::Continue);
                }
                if !self.runner.passes(q, row)? {
                    return Ok(Flow::Continue);
                }
                let v = self.runner.project(q, &ctx, row)?;
                if v.is_undefined() {
                    return Ok(Flow::Continue);
                }
                // DISTINCT per partition first: a duplicate never reaches the buffers (the
                // coordinator's DISTINCT keeps the first in EPK order, as this one does).
                if let Some(seen) = &mut seen {
                    if !seen.insert(v.clone()) {
                        return Ok(Flow::Continue);
                    }
                }
                batch.push((pos.clone(), v));
                produced += 1;
                if batch.len() == page && !send(i, &tx, std::mem::take(&mut batch), cancel) {
                    return Ok(Flow::Stop);
                }
                // This partition alone can give at most what the query returns.
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
            let _ = tx.send(Message::Done(unit_stats));
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
                            for (pos, v) in values {
                                if out.push_at(v, pos) {
                                    break 'units;
                                }
                            }
                        }
                        Message::Done(s) => {
                            stats.retrieved += s.retrieved;
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
                    if let Message::Done(s) = m {
                        stats.retrieved += s.retrieved;
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
    fn concatenated_serially(&self, stats: &mut RunStats, out: &mut Emitter) -> Result<(), QueryError> {
        let q = self.compiled;
        let ctx = self.runner.ctx(None);
        for (i, unit) in self.units.iter().enumerate() {
            let started = std::time::Instant::now();
            let mut unit_stats = RunStats::default();
            let mut input = unit_input(self.container, unit);
            let mut done = false;
            self.runner.for_each_row(q, &mut input, &Vec::new(), &mut unit_stats, &mut |row, pos| {
                if self.resume_after.as_ref().is_some_and(|after| pos <= after) || !self.runner.passes(q, row)? {
                    return Ok(Flow::Continue);
                }
                done = out.push_at(self.runner.project(q, &ctx, row)?, pos.clone());
                Ok(if done { Flow::Stop } else { Flow::Continue })
            })?;
            unit_stats.nanos = started.elapsed().as_nanos() as u64;
            self.report(i, &unit_stats);
            stats.retrieved += unit_stats.retrieved;
            if done {
                break;
            }
        }
        Ok(())
    }

    /// ORDER BY: each producer sorts its partition's rows (keeping at most OFFSET + LIMIT of them
    /// when there is a limit); the coordinator merges them k ways, projecting a row only when it
    /// is returned.
    fn ordered(&self, stats: &mut RunStats, out: &mut Emitter) -> Result<(), QueryError> {
        let q = self.compiled;
        let order = q.order_by();
        let keep = q.rows_needed().map(|n| n as usize);
        let slots: Vec<Outcome<SortedRows>> = self.units.iter().map(|_| Mutex::new(None)).collect();
        let cancel = AtomicBool::new(false);
        let work = |i: usize, _cancel: &AtomicBool| {
            let started = std::time::Instant::now();
            let ctx = self.runner.ctx(None);
            let mut unit_stats = RunStats::default();
            let mut rows: SortedRows = Vec::new();
            // With a row limit, only the partition's first OFFSET + LIMIT rows can be returned: a
            // max-heap of that many rejects every other row with one comparison, without copying it.
            let mut top: BinaryHeap<std::cmp::Reverse<Head>> = BinaryHeap::new();
            let mut input = unit_input(self.container, &self.units[i]);
            let result = self.runner.for_each_row(q, &mut input, &Vec::new(), &mut unit_stats, &mut |row, pos| {
                if !self.runner.passes(q, row)? {
                    return Ok(Flow::Continue);
                }
                let keys = order.iter().map(|(e, _)| e.eval(&ctx, row)).collect::<Result<Vec<_>, _>>()?;
                match keep {
                    Some(0) => {}
                    Some(k) => {
                        if top.len() >= k {
                            let worst = top
                                .peek()
                                .map(|w| compare_keys(&keys, &w.0.keys, order).then_with(|| pos.cmp(&w.0.pos)));
                            if worst != Some(std::cmp::Ordering::Less) {
                                return Ok(Flow::Continue);
                            }
                            top.pop();
                        }
                        top.push(std::cmp::Reverse(Head { keys, pos: pos.clone(), row: row.clone(), unit: i, order }));
                    }
                    None => rows.push((keys, pos.clone(), row.clone())),
                }
                Ok(Flow::Continue)
            });
            let outcome = result.map(|_| {
                if keep.is_some() {
                    // Ascending by (keys, position): `Reverse` undoes the merge heap's reversal.
                    rows =
                        top.into_sorted_vec().into_iter().map(|std::cmp::Reverse(h)| (h.keys, h.pos, h.row)).collect();
                } else {
                    rows.sort_by(|a, b| compare_keys(&a.0, &b.0, order).then_with(|| a.1.cmp(&b.1)));
                }
                unit_stats.peak_buffered = rows.len() as u64;
                unit_stats.nanos = started.elapsed().as_nanos() as u64;
                self.report(i, &unit_stats);
                (rows, unit_stats)
            });
            if let Ok(mut slot) = slots[i].lock() {
                *slot = Some(outcome);
            }
        };
        self.run_producers(&work, &cancel);
        let mut sorted: Vec<std::vec::IntoIter<(Vec<Value>, RowPos, Row)>> = Vec::with_capacity(self.units.len());
        let mut held = 0u64;
        for slot in slots {
            let taken = slot.into_inner().map_err(|_| QueryError::internal("a producer panicked"))?;
            match taken {
                Some(Ok((rows, s))) => {
                    stats.retrieved += s.retrieved;
                    held += rows.len() as u64;
                    sorted.push(rows.into_iter());
                }
                Some(Err(e)) => return Err(e),
                None => return Err(QueryError::internal("a producer did not report")),
            }
        }
        // Rows held for the merge are references to stored items; a result is produced (projected)
        // only when it is returned.
        stats.peak_buffered = stats.peak_buffered.max(held.min(self.units.len() as u64 * 2));
        let mut heap = BinaryHeap::new();
        for (i, it) in sorted.iter_mut().enumerate() {
            if let Some(r) = it.next() {
                heap.push(Head { keys: r.0, pos: r.1, row: r.2, unit: i, order });
            }
        }
        let ctx = self.runner.ctx(None);
        while let Some(head) = heap.pop() {
            if let Some(r) = sorted[head.unit].next() {
                heap.push(Head { keys: r.0, pos: r.1, row: r.2, unit: head.unit, order });
            }
            if out.push(self.runner.project(q, &ctx, &head.row)?) {
                break;
            }
        }
        Ok(())
    }

    /// Aggregates and GROUP BY: partial groups per partition, merged in scan order.
    fn grouped(&self, stats: &mut RunStats, out: &mut Emitter) -> Result<(), QueryError> {
        let q = self.compiled;
        let slots: Vec<Outcome<Groups>> = self.units.iter().map(|_| Mutex::new(None)).collect();
        let cancel = AtomicBool::new(false);
        let work = |i: usize, _cancel: &AtomicBool| {
            let started = std::time::Instant::now();
            let mut unit_stats = RunStats::default();
            let mut input = unit_input(self.container, &self.units[i]);
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
        for slot in slots {
            match slot.into_inner().map_err(|_| QueryError::internal("a producer panicked"))? {
                Some(Ok((groups, s))) => {
                    stats.retrieved += s.retrieved;
                    stats.peak_buffered = stats.peak_buffered.max(s.peak_buffered);
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
            None => self.runner.collect_groups(q, &mut std::iter::empty(), &Vec::new(), stats)?,
        };
        self.runner.finish_groups(q, groups, out)
    }
}

/// The head of one partition's sorted rows in the k-way merge (a min-heap by keys, then scan
/// position).
struct Head<'q> {
    keys: Vec<Value>,
    pos: RowPos,
    row: Row,
    unit: usize,
    order: &'q [(crate::eval::CExpr, bool)],
}

impl Ord for Head<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Reversed: BinaryHeap is a max-heap.
        compare_keys(&other.keys, &self.keys, self.order).then_with(|| other.pos.cmp(&self.pos))
    }
}

impl PartialOrd for Head<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Head<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for Head<'_> {}
