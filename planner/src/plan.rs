//! The plan of one query: the bound query, the partitions it targets and why, how it runs across
//! partitions (what each partition runs and how the client merges), and how its pages resume.
//!
//! [`plan`] is the only place a strategy is chosen. The executor runs a [`Plan`], EXPLAIN prints
//! it (its `Display`), and every page of a paged query runs the same plan, so what EXPLAIN shows
//! is what runs.

use std::collections::HashMap;
use std::fmt;

use cosmoql_catalog::{
    CatalogError, Epk, HashVersion, IndexStep, IndexingPolicy, PartitionKey, PartitionKeyDefinition,
};
use cosmoql_parser::{Query, SortDirection};
use cosmoql_value::Value;

use crate::access::{self, Access};
use crate::bind::{bind, BindContext};
use crate::bound::BoundQuery;
use crate::choices::{SCAN_SHARE, SEEK_THEN_SORT};
use crate::error::PlanError;
use crate::policy::VectorPolicy;
use crate::prune::{pinned_id, point_answers_filter, prune, Pruning, Targets};
use crate::rules::{self, Limits, LIMITS};

/// What planning needs besides the query text.
#[derive(Debug, Clone, Copy)]
pub struct PlanContext<'a> {
    /// Values of `@parameters`, by name without `@`.
    pub parameters: &'a HashMap<String, Value>,
    /// The container's vector embedding policy (for `VectorDistance`).
    pub vector_policies: &'a [VectorPolicy],
    /// The container's partition key definition.
    pub partition_key: &'a PartitionKeyDefinition,
    /// The request's partition key: the query reads that logical partition only.
    pub request_partition_key: Option<&'a PartitionKey>,
    /// The request names one feed range (a partition key range id or an EPK span: what the
    /// SDKs' query pipelines send per range). The service runs such a request on one partition,
    /// where aggregates compose as in one logical partition: the SDKs' rewritten per-range
    /// queries (`SELECT VALUE [{"item": COUNT(1)}]`) depend on it.
    pub request_feed_range: bool,
    /// The query engine limits to enforce.
    pub limits: &'a Limits,
    /// The container's indexing policy (ORDER BY needs the index).
    pub indexing_policy: &'a IndexingPolicy,
    /// The names of the container's user-defined functions.
    pub udfs: &'a [String],
}

impl<'a> PlanContext<'a> {
    /// A context with the service's default limits.
    pub fn new(
        parameters: &'a HashMap<String, Value>,
        partition_key: &'a PartitionKeyDefinition,
        indexing_policy: &'a IndexingPolicy,
    ) -> Self {
        PlanContext {
            parameters,
            vector_policies: &[],
            partition_key,
            request_partition_key: None,
            request_feed_range: false,
            limits: &LIMITS,
            indexing_policy,
            udfs: &[],
        }
    }
}

/// Which partitions a query reads, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionTargets {
    /// What pruning (or the request's key) found.
    pub pruning: Pruning,
    /// The EPK ranges to read, sorted and disjoint (a key is the range `[epk, epk.successor())`).
    pub ranges: Vec<(Epk, Epk)>,
    /// One key and an `id` equality: read that item instead of scanning.
    pub point: Option<PointRead>,
}

/// A point read: the query pins one partition key and the id.
#[derive(Debug, Clone, PartialEq)]
pub struct PointRead {
    pub key: PartitionKey,
    pub id: String,
    /// The item read satisfies the whole WHERE clause (`prune::point_answers_filter`): it is
    /// not filtered again.
    pub answers_filter: bool,
}

/// How a query runs across partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// The query reads no items (`SELECT 1`, `SELECT VALUE [1, 2]`): it runs once, on the client.
    NoItems,
    /// Every target partition streams its items to the client in EPK order, where the whole query
    /// runs in one pass: ranking needs statistics over all rows; a FROM subquery's DISTINCT, TOP
    /// or aggregates need every item in one place.
    OnePass(OnePassReason),
    /// Each partition filters and projects (DISTINCT within the partition first); the client
    /// concatenates partitions in EPK order.
    Concatenate,
    /// Each partition sorts its rows, or reads them in the order of a range index (keeping
    /// OFFSET and LIMIT rows when there is a limit); the client merges them k ways, ties broken by
    /// the items' creation order.
    MergeSorted,
    /// Each partition computes partial groups and aggregates; the client merges them in scan
    /// order and finishes them.
    MergeGroups,
}

/// Why a query runs in one pass on the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnePassReason {
    /// `ORDER BY RANK`: scores need statistics over all rows.
    Rank,
    /// `FROM (SELECT ...)`: the subquery needs every item.
    FromSubquery,
}

/// How the next page of a paged query starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paging {
    /// Results come in scan order: resume after the scan position (EPK, creation sequence, JOIN
    /// expansion) of the last result returned.
    ByPosition,
    /// ORDER BY: resume after the last result's sort keys and scan position; each partition skips
    /// the rows at or before them.
    BySortKeys,
    /// Aggregates, DISTINCT, ranking, FROM subqueries: the first page computes every result and
    /// the executor holds those after the page for the next pages (one snapshot, linear); when
    /// they were let go (too many, idle too long), a page runs the plan again and skips the
    /// results already returned (exact when nothing was written between pages).
    Replay,
}

/// The plan of one query.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The query text.
    pub sql: String,
    /// The query as parsed (for printing).
    pub syntax: Query,
    /// The query as bound.
    pub query: BoundQuery,
    /// The partitions it reads.
    pub targets: PartitionTargets,
    pub strategy: Strategy,
    pub paging: Paging,
    /// What the indexes do for it: per predicate, the items to read, ORDER BY.
    pub access: Access,
}

/// Parses, checks, binds and plans `sql`.
pub fn plan(sql: &str, context: &PlanContext<'_>) -> Result<Plan, PlanError> {
    rules::check_text(sql, context.limits)?;
    let syntax = cosmoql_parser::parse(sql).map_err(|e| PlanError::syntax(e, sql))?;
    rules::check_limits(&syntax, context.limits)?;
    let query = bind(
        &syntax,
        BindContext { parameters: context.parameters, vector_policies: context.vector_policies, udfs: context.udfs },
    )?;
    let strategy = if !query.reads_items {
        Strategy::NoItems
    } else if query.rank.is_some() {
        Strategy::OnePass(OnePassReason::Rank)
    } else if query.reads_through_subquery() {
        Strategy::OnePass(OnePassReason::FromSubquery)
    } else if query.is_aggregate() {
        Strategy::MergeGroups
    } else if !query.order_by.is_empty() {
        Strategy::MergeSorted
    } else {
        Strategy::Concatenate
    };
    // An aggregate without GROUP BY may be ordered by anything, and its ORDER BY needs no index:
    // one result, the order changes nothing. The service's query plan drops it (the .NET SDK's
    // QueryPlanBaselineTests.Aggregates.xml, "Aggregate With JOIN": `OrderBy` empty), and the
    // JavaScript SDK's aggregateQuery.spec.ts runs `... ORDER BY r.key, r.field` on a container
    // with no composite index and gets the average.
    if strategy == Strategy::MergeSorted {
        rules::check_order_by_indexes(&query.order_by, context.indexing_policy)?;
    }
    // Also when the aggregate reads through a FROM subquery: the .NET SDK's LINQ baselines record
    // `SELECT VALUE (COUNT(v0) > 0) FROM (SELECT VALUE root FROM root) AS v0` refused so
    // (LinqAggregateFunctionBaselineTests.TestAny).
    let merged_aggregate = strategy == Strategy::MergeGroups
        || (strategy == Strategy::OnePass(OnePassReason::FromSubquery) && query.is_aggregate());
    if merged_aggregate && context.request_partition_key.is_none() && !context.request_feed_range {
        rules::check_cross_partition_aggregates(&syntax)?;
    }
    let paging = match strategy {
        Strategy::Concatenate if !query.distinct => Paging::ByPosition,
        Strategy::MergeSorted if !query.distinct => Paging::BySortKeys,
        _ => Paging::Replay,
    };
    let targets = targets(&syntax, &query, context)
        .map_err(|e| PlanError::partition_key(e.message.clone(), e.status_code(), 0))?;
    let pinned = pinned_key_paths(&syntax, &query, &targets, context);
    let access = match strategy {
        Strategy::NoItems | Strategy::OnePass(OnePassReason::FromSubquery) => Access::default(),
        Strategy::MergeSorted => access::choose(&query, context.indexing_policy, &pinned),
        _ => Access { order: None, ..access::choose(&query, context.indexing_policy, &pinned) },
    };
    let mut query = query;
    // Every conjunct only pins the key's logical partitions (no index probe is left, see
    // `pinned_key_paths`): every item the targets hold satisfies the WHERE clause, whichever way
    // a partition reads them, so its rows are not filtered again (a query pinned to one device
    // and ordered by time does not evaluate `c.deviceId = @dev` on each row it reads).
    if access.filter.is_none() && access.exact_filter {
        query.filter = None;
    }
    Ok(Plan { sql: sql.to_string(), syntax, query, targets, strategy, paging, access })
}

/// The key's paths whose conjuncts the targets answer: when the targets are exactly the logical
/// partitions the WHERE clause pins, each item read holds one of those keys, so a conjunct on the
/// key's paths holds for it. Not when the request's key scopes the query to another set of keys
/// than the clause's (`WHERE c.pk = 'b'` under the request's key `a` finds nothing), nor with V1
/// hashing (an EPK holds a string key's first 100 bytes only: keys alike up to there share a
/// logical partition).
fn pinned_key_paths(
    syntax: &Query,
    query: &BoundQuery,
    targets: &PartitionTargets,
    context: &PlanContext<'_>,
) -> Vec<Vec<IndexStep>> {
    let definition = context.partition_key;
    let Targets::Keys(keys) = &targets.pruning.targets else { return Vec::new() };
    if definition.version() != HashVersion::V2 {
        return Vec::new();
    }
    if context.request_partition_key.is_some() {
        let clause = prune(query, syntax.where_clause.as_ref().map(|w| w.to_string()).as_deref(), definition);
        if !matches!(&clause.targets, Targets::Keys(pinned) if pinned == keys) {
            return Vec::new();
        }
    }
    definition.paths().iter().map(|p| p.segments().iter().map(|s| IndexStep::Key(s.clone())).collect()).collect()
}

/// The request's partition key, or what the WHERE clause pins, as EPK ranges; with one key and an
/// id equality, the point read.
fn targets(syntax: &Query, query: &BoundQuery, context: &PlanContext<'_>) -> Result<PartitionTargets, CatalogError> {
    let definition = context.partition_key;
    let pruning = match context.request_partition_key {
        Some(key) => {
            definition.check_key(key)?;
            Pruning {
                targets: Targets::Keys(vec![key.clone()]),
                reason: "the request's partition key pins 1 key".into(),
            }
        }
        None => prune(query, syntax.where_clause.as_ref().map(|w| w.to_string()).as_deref(), definition),
    };
    let (ranges, point) = match &pruning.targets {
        Targets::All => (vec![(Epk::min(), Epk::max())], None),
        Targets::Ranges(ranges) => (ranges.clone(), None),
        Targets::Keys(keys) => {
            let mut ranges = keys
                .iter()
                .map(|key| {
                    let epk = definition.epk(key)?;
                    let next = epk.successor();
                    Ok((epk, next))
                })
                .collect::<Result<Vec<_>, CatalogError>>()?;
            ranges.sort();
            ranges.dedup();
            let point = match (keys.as_slice(), pinned_id(query)) {
                ([key], Some(id)) => Some(PointRead {
                    answers_filter: point_answers_filter(query, definition, key, &id),
                    key: key.clone(),
                    id,
                }),
                _ => None,
            };
            (ranges, point)
        }
    };
    Ok(PartitionTargets { pruning, ranges, point })
}

impl Plan {
    /// Whether the results of several ranges, each running the query as written, concatenated
    /// are the query's results: no ORDER BY, aggregate, GROUP BY, DISTINCT, TOP, OFFSET/LIMIT or
    /// one-pass operator to merge (what lets a client that fans out per range run it unchanged).
    pub fn concatenates(&self) -> bool {
        self.strategy == Strategy::Concatenate
            && !self.query.distinct
            && self.syntax.select.top.is_none()
            && self.syntax.offset_limit.is_none()
    }

    /// Whether the query reads items (and so targets partitions).
    pub fn reads_items(&self) -> bool {
        self.strategy != Strategy::NoItems
    }

    /// The ORDER BY items as the query wrote them.
    fn order_text(&self) -> String {
        self.syntax
            .order_by
            .iter()
            .map(|o| match o.direction {
                Some(SortDirection::Desc) => format!("{} DESC", o.expr),
                _ => o.expr.to_string(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The conjuncts of a WHERE clause as written.
fn syntax_conjuncts(e: &cosmoql_parser::Expr) -> Vec<&cosmoql_parser::Expr> {
    let mut out = Vec::new();
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match &e.kind {
            cosmoql_parser::ExprKind::Binary { op: cosmoql_parser::BinaryOp::And, left, right } => {
                stack.push(right);
                stack.push(left);
            }
            _ => out.push(e),
        }
    }
    out
}

/// EXPLAIN: the query, the targets and why, what each partition runs, the merge on the client
/// and how pages resume.
impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = &self.query;
        let syntax = &self.syntax;
        writeln!(f, "query       {syntax}")?;
        if !self.reads_items() {
            writeln!(f, "targets     none: the query reads no items")?;
        } else {
            writeln!(f, "targets     {}", self.targets.pruning.reason)?;
        }
        let order = self.order_text();
        let mut merge: Vec<String> = Vec::new();
        if self.reads_items() {
            writeln!(f, "per partition")?;
            let ranges = self.targets.ranges.len();
            match (&self.targets.point, &self.access.filter, &self.access.order) {
                (Some(p), _, _) => {
                    writeln!(f, "  read      point read of id {:?} in logical partition {}", p.id, p.key)?
                }
                (None, Some(_), None) => {
                    writeln!(f, "  read      the items the indexes find in {ranges} EPK range(s), in scan order")?
                }
                (None, Some(_), Some(o)) if self.access.has_seek() => {
                    writeln!(f, "  read      the items the indexes find in {ranges} EPK range(s), in scan order")?;
                    writeln!(
                        f,
                        "  or walk   {ranges} EPK range(s) in the order of {} where the seek finds more than {} \
                         items in a partition",
                        o.describe(),
                        thousands(SEEK_THEN_SORT as u64)
                    )?
                }
                (None, _, Some(o)) => {
                    writeln!(f, "  read      {ranges} EPK range(s) in the order of {}", o.describe())?
                }
                (None, None, None) => writeln!(f, "  scan      {ranges} EPK range(s)")?,
            }
            if !self.access.is_scan()
                && self.targets.point.is_none()
                && !self.targets.ranges.is_empty()
                && !matches!(self.targets.pruning.targets, Targets::All)
            {
                writeln!(
                    f,
                    "  or scan   the targeted logical partitions when they hold fewer than 1 in {SCAN_SHARE} of \
                     their physical partition's items (its indexes cover all of them)"
                )?;
            }
            if self.strategy != Strategy::OnePass(OnePassReason::FromSubquery) {
                if let Some(w) = &syntax.where_clause {
                    let texts = syntax_conjuncts(w);
                    let same = texts.len() == self.access.predicates.len();
                    for (i, p) in self.access.predicates.iter().enumerate() {
                        let text = if same { texts[i].to_string() } else { format!("predicate {}", i + 1) };
                        match &p.path {
                            Some(path) => writeln!(f, "  index     {text}: {} on {path}", p.strategy)?,
                            None => writeln!(f, "  index     {text}: {}", p.strategy)?,
                        }
                    }
                    if self.query.filter.is_none() {
                        writeln!(f, "  filter    none: the targets hold exactly the rows of {w}")?;
                    } else if self.targets.point.as_ref().is_some_and(|p| p.answers_filter) {
                        writeln!(f, "  filter    none: the item read satisfies {w}")?;
                    } else {
                        writeln!(f, "  filter    {w}")?;
                    }
                }
            }
        }
        match self.strategy {
            Strategy::NoItems => merge.push("evaluate the query once".to_string()),
            Strategy::OnePass(reason) => {
                writeln!(f, "  stream    items to the client in EPK order")?;
                merge.push(match reason {
                    OnePassReason::Rank => "rank every row (the scores need statistics over all rows)".to_string(),
                    OnePassReason::FromSubquery => {
                        "run the FROM subquery over all items, then the outer query".to_string()
                    }
                });
            }
            Strategy::MergeGroups => {
                let by = if syntax.group_by.is_empty() {
                    "one group".to_string()
                } else {
                    syntax.group_by.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", ")
                };
                if self.access.count_only {
                    writeln!(
                        f,
                        "  count     index entries, reading no item (the indexes find exactly the items the filter keeps)"
                    )?;
                } else if let Some(path) = &self.access.min_max {
                    writeln!(
                        f,
                        "  min/max   the first and last keys of the index on {} among the items the filter finds, reading no item (when every \
                         item has a scalar there; else aggregate the items)",
                        access::policy_path(path)
                    )?;
                } else {
                    writeln!(f, "  group     by {by}: partial aggregates (AVG as sum and count)")?;
                }
                merge.push("merge partial groups in scan order and finish the aggregates".to_string());
                if !order.is_empty() {
                    merge.push(format!("order groups by {order}"));
                }
            }
            Strategy::MergeSorted => {
                let keep = q.rows_needed().map_or("all rows".to_string(), |n| format!("the first {n} rows"));
                match &self.access.order {
                    Some(o) if self.access.has_seek() => writeln!(
                        f,
                        "  order     sort what the index seek finds when it finds at most 10000 items, else \
                         {order} from {} (stop after {keep})",
                        o.index_name()
                    )?,
                    Some(o) => writeln!(
                        f,
                        "  order     {order} from {} (stop after {keep}; a partition with an item \
                         the index does not order sorts instead)",
                        o.index_name()
                    )?,
                    None => writeln!(f, "  sort      {order} (keep {keep}, as references to stored items)")?,
                }
                if self.access.skip_on_keys {
                    merge.push(format!(
                        "k-way merge of the partitions' index keys on {order} (every item is a row): read only \
                         the items of the rows returned"
                    ));
                }
                let ties = if q.order_by.first().is_some_and(|k| k.descending) {
                    "ties by creation order, latest first (the first key is descending)"
                } else {
                    "ties by creation order"
                };
                merge.push(format!("k-way merge on {order}, {ties}; project each row returned"));
            }
            Strategy::Concatenate => {
                let keep = q.rows_needed().map_or(String::new(), |n| format!(" (stop after {n} results)"));
                if let (Some(path), false) = (&self.access.distinct_keys, self.access.distinct_indexed) {
                    writeln!(
                        f,
                        "  distinct  read the items; the distinct values of {} in ascending order",
                        access::policy_path(path).trim_end_matches("/?")
                    )?;
                } else if let Some(path) = &self.access.distinct_keys {
                    writeln!(
                        f,
                        "  distinct  the keys of the index on {}, in ascending order, reading no item (when every \
                         item has a scalar there; else read the items and sort the distinct values)",
                        access::policy_path(path)
                    )?;
                }
                writeln!(f, "  project   {}{keep}", syntax.select.projection_text())?;
                if q.distinct {
                    writeln!(f, "  distinct  within the partition")?;
                }
                merge.push(
                    "concatenate partitions in EPK order (later ones run ahead into bounded buffers)".to_string(),
                );
            }
        }
        if q.distinct {
            merge.push("DISTINCT".to_string());
        }
        if let Some(ol) = &syntax.offset_limit {
            if self.access.skip_on_keys {
                merge.push(format!(
                    "OFFSET {} skipped by merging the partitions' index keys, reading no item; LIMIT {}",
                    ol.offset, ol.limit
                ));
            } else {
                merge.push(format!("OFFSET {} (skipped rows are not kept) LIMIT {}", ol.offset, ol.limit));
            }
        }
        if let Some(top) = &syntax.select.top {
            merge.push(format!("TOP {top}"));
        }
        writeln!(f, "merge (client)")?;
        for m in merge {
            writeln!(f, "  {m}")?;
        }
        write!(
            f,
            "pages       {}",
            match self.paging {
                Paging::ByPosition => "resume after the scan position of the last result",
                Paging::BySortKeys => "resume after the sort keys and scan position of the last result",
                Paging::Replay => "the results after the page are held for the next pages",
            }
        )
    }
}

/// `10000` as `10,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
