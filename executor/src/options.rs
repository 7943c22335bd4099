//! The options of one query request (the SDKs' `QueryRequestOptions` / `FeedOptions`).

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use cosmoql_planner::VectorPolicy;
use cosmoql_storage::{Epk, PartitionKey};
use cosmoql_value::Value;

use crate::cost;

/// Options of one query request.
#[derive(Debug, Clone)]
pub struct QueryOptions {
    /// Values of `@parameters`, by name without the `@`.
    pub parameters: HashMap<String, Value>,
    /// Scope the query to one logical partition (the request's partition key).
    pub partition_key: Option<PartitionKey>,
    /// Scope the query to the items whose EPK is in `[min, max)`: a feed range (the service's
    /// `x-ms-documentdb-partitionkeyrangeid`, or `x-ms-start-epk`/`x-ms-end-epk` for a
    /// hierarchical key's prefix). The query runs as it would, over those items only.
    pub epk_range: Option<(Epk, Epk)>,
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
    pub cancel: Option<Arc<AtomicBool>>,
    /// Bytes the operators that hold rows (a sort without a limit, GROUP BY, DISTINCT, ranking)
    /// may hold at once; `None`: [`crate::memory::DEFAULT_MEMORY_BUDGET`] (1 GiB). Past it, the query fails
    /// with a `Resource` error.
    pub memory_budget: Option<u64>,
    /// Return the index metrics (the service's PopulateIndexMetrics): which indexes the query
    /// used and which would serve it better.
    pub populate_index_metrics: bool,
    /// The read consistency: Strong and Bounded Staleness reads cost twice (see [`cost`]).
    pub consistency: cost::Consistency,
    /// Runs the container's user-defined functions (`udf.name(...)`); its names are what such
    /// calls bind to. `None`: the container has none (the facade fills it in).
    pub udfs: Option<Arc<dyn crate::eval::UdfHost>>,
}

impl Default for QueryOptions {
    fn default() -> Self {
        QueryOptions {
            parameters: HashMap::new(),
            partition_key: None,
            epk_range: None,
            enable_cross_partition: true,
            vector_policies: Vec::new(),
            max_degree_of_parallelism: -1,
            max_buffered_item_count: None,
            max_item_count: None,
            continuation: None,
            cancel: None,
            memory_budget: None,
            populate_index_metrics: false,
            consistency: cost::Consistency::Session,
            udfs: None,
        }
    }
}

impl QueryOptions {
    /// The EPK ranges `plan` reads under these options: its targets, cut to the feed range.
    pub fn scoped_ranges(&self, plan: &cosmoql_planner::Plan) -> Vec<(Epk, Epk)> {
        let Some((lo, hi)) = &self.epk_range else { return plan.targets.ranges.clone() };
        plan.targets
            .ranges
            .iter()
            .filter_map(|(min, max)| {
                let from = if min > lo { min } else { lo };
                let to = if max < hi { max } else { hi };
                (from < to).then(|| (from.clone(), to.clone()))
            })
            .collect()
    }

    /// Adds a parameter (`name` with or without the leading `@`).
    pub fn parameter(mut self, name: &str, value: Value) -> Self {
        self.parameters.insert(name.trim_start_matches('@').to_string(), value);
        self
    }
}
