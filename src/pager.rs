//! Query results through the client: [`QueryPager`], the one page loop (planned once, each page
//! admitted under provisioned throughput, run, charged, and resumed from its continuation token),
//! and what it hands back ([`FeedPage`], [`QueryResults`], [`QuerySummary`]).

use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use cosmoql_executor::{Output, PartitionMetrics, QueryError, QueryMetrics, QueryOptions};
use cosmoql_planner::Plan;
use cosmoql_storage::throughput::admission::consume_page;
use cosmoql_storage::RetryOptions;
use cosmoql_storage::{Container, RequestKind};
use cosmoql_value::Value;
use serde::de::DeserializeOwned;

use crate::route::QueryRoute;
use crate::typed::from_output;
use crate::Error;

/// One page of query results.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedPage<T> {
    /// The results of this page.
    pub items: Vec<T>,
    /// Resume after this page (`QueryOptions::continuation`); `None` on the last page.
    pub continuation: Option<String>,
    /// Request units charged for this page.
    pub request_charge: f64,
    /// Execution metrics of this page.
    pub metrics: QueryMetrics,
    /// What each physical partition's producer did for this page, in partition order.
    pub partitions: Vec<PartitionMetrics>,
    /// With `QueryOptions::populate_index_metrics`: the index metrics, in the service's JSON.
    pub index_metrics: Option<Value>,
    /// Diagnostics: how many times the page was refused (429) and retried before it ran.
    pub retries: u32,
}

/// What running a query to the end did.
#[derive(Debug, Clone, PartialEq)]
pub struct QuerySummary {
    /// The metrics of all pages together (counts and charges add up, peaks take the maximum).
    pub metrics: QueryMetrics,
    /// What each physical partition's producer did, page after page.
    pub partitions: Vec<PartitionMetrics>,
    /// How many pages it took (1 for a streamed run).
    pub pages: usize,
    /// With `QueryOptions::populate_index_metrics`: the index metrics, in the service's JSON.
    pub index_metrics: Option<Value>,
}

impl QuerySummary {
    fn add(&mut self, metrics: &QueryMetrics, partitions: Vec<PartitionMetrics>, index_metrics: Option<Value>) {
        if self.index_metrics.is_none() {
            self.index_metrics = index_metrics;
        }
        if self.pages == 0 {
            self.metrics = *metrics;
        } else {
            self.metrics.add_page(metrics);
        }
        // A one-page query keeps the page's list as it is.
        if self.partitions.is_empty() {
            self.partitions = partitions;
        } else {
            self.partitions.extend(partitions);
        }
        self.pages += 1;
    }
}

/// Every result of a query, with what fetching them did.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResults<T> {
    /// The results of all pages, in order.
    pub items: Vec<T>,
    /// The metrics of all pages together (counts and charges add up, peaks take the maximum).
    pub metrics: QueryMetrics,
    /// What each physical partition's producer did, page after page.
    pub partitions: Vec<PartitionMetrics>,
    /// How many pages it took.
    pub pages: usize,
}

/// The pages of a query, as an async [`futures::Stream`]. The query is planned once, at the first
/// page, and every page runs that plan, resuming after the previous page's continuation token.
/// Each page is computed when polled; a page ends when `QueryOptions::max_item_count` results are
/// in (with `None`, one page holds every result).
///
/// This is the one page loop: the REPL, `cosmoql query` and `cosmoql::testing` drive queries
/// through it.
pub struct QueryPager<T> {
    pub(crate) container: Arc<Container>,
    pub(crate) retry: RetryOptions,
    pub(crate) sql: String,
    pub(crate) options: QueryOptions,
    pub(crate) plan: Option<Arc<Plan>>,
    /// Asked before the first page whether another engine answers the query whole.
    pub(crate) route: Option<Arc<dyn QueryRoute>>,
    pub(crate) done: bool,
    pub(crate) marker: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for QueryPager<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryPager").field("sql", &self.sql).field("done", &self.done).finish_non_exhaustive()
    }
}

impl<T: DeserializeOwned + 'static> QueryPager<T> {
    fn error(&self, error: QueryError) -> Error {
        Error::Query { sql: self.sql.clone(), error }
    }

    /// The physical partitions a plan reads now.
    fn partitions_read(&self, plan: &Plan) -> Vec<u32> {
        if !plan.reads_items() {
            return Vec::new();
        }
        self.container
            .partitions_overlapping(&self.options.scoped_ranges(plan))
            .into_iter()
            .map(|(id, _, _)| id)
            .collect()
    }

    /// Consumes the page's charge from the partitions `ids` it read (and from its key's account).
    fn consume<R>(&self, ids: &[u32], out: &cosmoql_executor::QueryOutput<R>) {
        let key = self.options.partition_key.as_ref().map(ToString::to_string);
        consume_page(out.metrics.request_charge, &out.partition_work(ids), |id, ru| {
            self.container.consume(id, ru, key.as_deref().map(|k| (k, RequestKind::Query)))
        });
    }

    /// When the route answers `plan` (asked once, before the first page): every result, in
    /// one page, with its metrics (no request units: the row engine read nothing).
    fn routed(&mut self, plan: &Plan, compile_time_ns: u64) -> Option<Result<(Vec<T>, QueryMetrics), Error>> {
        let route = self.route.take()?;
        crate::route::request_allows_routing(plan, &self.options).ok()?;
        let started = std::time::Instant::now();
        let answer = route.answer(&self.container, plan, &self.options)?;
        self.done = true;
        let values = match answer {
            Ok(values) => values,
            Err(e) => return Some(Err(self.error(e))),
        };
        let metrics = QueryMetrics {
            physical_partitions: self.container.partition_count(),
            output_document_count: values.len() as u64,
            compile_time_ns,
            execution_time_ns: started.elapsed().as_nanos() as u64,
            ..QueryMetrics::default()
        };
        let items = values.into_iter().map(|v| from_output(Output::Value(v))).collect::<Result<Vec<T>, _>>();
        Some(items.map(|items| (items, metrics)))
    }

    /// The next page, computed now; `None` after the last.
    pub fn next_page(&mut self) -> Option<Result<FeedPage<T>, Error>> {
        if self.done {
            return None;
        }
        let (plan, compile_time_ns) = match &self.plan {
            Some(plan) => (Arc::clone(plan), 0),
            None => match cosmoql_executor::timed_plan(&*self.container, &self.sql, &self.options) {
                Ok((plan, ns)) => {
                    self.plan = Some(Arc::clone(&plan));
                    (plan, ns)
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(self.error(e)));
                }
            },
        };
        if let Some(routed) = self.routed(&plan, compile_time_ns) {
            return Some(routed.map(|(items, metrics)| FeedPage {
                items,
                continuation: None,
                request_charge: 0.0,
                metrics,
                partitions: Vec::new(),
                index_metrics: None,
                retries: 0,
            }));
        }
        // Under provisioned throughput, every partition the page reads must admit it.
        let throttle = self.container.throughput();
        let (ids, retries) = match &throttle {
            Some(t) => match self.container.admit_retrying(t, self.retry, || Ok(self.partitions_read(&plan))) {
                Ok(admitted) => admitted,
                Err(e) => return Some(Err(e.into())),
            },
            None => (Vec::new(), 0),
        };
        let result = cosmoql_executor::execute_plan_output(&*self.container, &plan, &self.options).map(|mut out| {
            out.metrics.compile_time_ns = compile_time_ns;
            if throttle.is_some() {
                self.consume(&ids, &out);
            }
            out
        });
        Some(match result {
            Err(e) => {
                self.done = true;
                Err(self.error(e))
            }
            Ok(out) => {
                self.done = out.continuation.is_none();
                self.options.continuation = out.continuation.clone();
                out.items.into_iter().map(from_output).collect::<Result<Vec<T>, _>>().map(|items| FeedPage {
                    items,
                    continuation: out.continuation,
                    request_charge: out.metrics.request_charge,
                    metrics: out.metrics,
                    partitions: out.partitions,
                    index_metrics: out.index_metrics,
                    retries,
                })
            }
        })
    }

    /// Hands every remaining result to `f` as it comes (`f` returns false to stop), holding none
    /// of them: with `max_item_count`, page after page; without it, in one run that streams its
    /// results as they are produced, however many there are.
    pub fn for_each(mut self, mut f: impl FnMut(T) -> bool) -> Result<QuerySummary, Error> {
        let mut summary =
            QuerySummary { metrics: QueryMetrics::default(), partitions: Vec::new(), pages: 0, index_metrics: None };
        if self.options.max_item_count.is_none() && self.options.continuation.is_none() && !self.done {
            self.done = true;
            let (plan, compile_time_ns) = match self.plan.take() {
                Some(plan) => (plan, 0),
                None => cosmoql_executor::timed_plan(&*self.container, &self.sql, &self.options)
                    .map_err(|e| self.error(e))?,
            };
            if let Some(routed) = self.routed(&plan, compile_time_ns) {
                let (items, metrics) = routed?;
                summary.add(&metrics, Vec::new(), None);
                for item in items {
                    if !f(item) {
                        break;
                    }
                }
                return Ok(summary);
            }
            let throttle = self.container.throughput();
            let ids = match &throttle {
                Some(t) => self.container.admit_retrying(t, self.retry, || Ok(self.partitions_read(&plan)))?.0,
                None => Vec::new(),
            };
            let mut failure = None;
            let mut sink = |v: Output| match from_output::<T>(v) {
                Ok(item) => f(item),
                Err(e) => {
                    failure = Some(e);
                    false
                }
            };
            let mut out = cosmoql_executor::execute_plan_streaming(&*self.container, &plan, &self.options, &mut sink)
                .map_err(|e| self.error(e))?;
            out.metrics.compile_time_ns = compile_time_ns;
            if throttle.is_some() {
                self.consume(&ids, &out);
            }
            if let Some(e) = failure {
                return Err(e);
            }
            summary.add(&out.metrics, out.partitions, out.index_metrics);
            return Ok(summary);
        }
        while let Some(page) = self.next_page() {
            let page = page?;
            summary.add(&page.metrics, page.partitions, page.index_metrics);
            for item in page.items {
                if !f(item) {
                    return Ok(summary);
                }
            }
        }
        Ok(summary)
    }

    /// Every remaining result, page after page, with the metrics of all pages.
    pub fn drain(self) -> Result<QueryResults<T>, Error> {
        let mut items = Vec::new();
        let summary = self.for_each(|item| {
            items.push(item);
            true
        })?;
        Ok(QueryResults { items, metrics: summary.metrics, partitions: summary.partitions, pages: summary.pages })
    }

    /// Every remaining result, page after page (the blocking convenience).
    pub fn collect_all(self) -> Result<Vec<T>, Error> {
        Ok(self.drain()?.items)
    }
}

impl<T: DeserializeOwned + 'static> futures::Stream for QueryPager<T> {
    type Item = Result<FeedPage<T>, Error>;

    fn poll_next(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        // The store is in memory: a page is ready as soon as it is asked for.
        Poll::Ready(self.get_mut().next_page())
    }
}

impl<T> Unpin for QueryPager<T> {}
