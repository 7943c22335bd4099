//! Running a query text against a container: parse, compile, scan, execute, with metrics.

use std::collections::HashMap;

use cosmoql_storage::{Container, PartitionKey};
use cosmoql_value::Value;

use crate::error::{QueryError, QueryErrorKind};
use crate::functions::VectorPolicy;
use crate::query::{compile, CompileOptions, RunStats, Runner};

/// Options of one query request.
#[derive(Debug, Clone)]
pub struct QueryOptions {
    /// Values of `@parameters`, by name without the `@`.
    pub parameters: HashMap<String, Value>,
    /// Scope the query to one logical partition (the request's partition key).
    pub partition_key: Option<PartitionKey>,
    /// Whether a query without a partition key may read every physical partition.
    pub enable_cross_partition: bool,
    /// The container's vector embedding policy (for `VectorDistance`).
    pub vector_policies: Vec<VectorPolicy>,
}

impl Default for QueryOptions {
    fn default() -> Self {
        QueryOptions {
            parameters: HashMap::new(),
            partition_key: None,
            enable_cross_partition: true,
            vector_policies: Vec::new(),
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
    /// The most rows held at once (for sorting or grouping).
    pub peak_buffered_items: u64,
}

/// Parses, compiles and runs `sql` over `container`.
pub fn execute(container: &Container, sql: &str, options: &QueryOptions) -> Result<QueryOutput, QueryError> {
    let query = cosmoql_parser::parse(sql)
        .map_err(|e| QueryError::new(QueryErrorKind::Syntax, e.message.clone(), Some(e.span)))?;
    let compiled = compile(
        &query,
        &CompileOptions { parameters: options.parameters.clone(), vector_policies: options.vector_policies.clone() },
    )?;
    let partitions = container.partition_count();
    let storage = |e: cosmoql_storage::StorageError| QueryError::new(QueryErrorKind::Storage, e.to_string(), None);
    // Equalities on the item's own properties pin the logical partition (and the id) when the
    // request gives no partition key; the planner generalizes this (IN, OR, prefixes, synthetic
    // keys) in a later issue.
    let equalities = compiled.item_equalities();
    let pinned = |path: &[String]| {
        equalities.iter().find(|(p, v)| p.as_slice() == path && !matches!(v, Value::Array(_) | Value::Object(_)))
    };
    let definition = container.partition_key();
    let key = match &options.partition_key {
        Some(key) => Some(key.clone()),
        None if !definition.is_none() => definition
            .paths()
            .iter()
            .map(|p| pinned(p.segments()).map(|(_, v)| v.clone()))
            .collect::<Option<Vec<_>>>()
            .and_then(|values| PartitionKey::from_values(&values).ok()),
        None => None,
    };
    let id = pinned(&["id".to_string()]).and_then(|(_, v)| v.as_str().map(str::to_string));
    let (mut input, touched): (Box<dyn Iterator<Item = _>>, usize) = match (&key, id) {
        (Some(key), Some(id)) => match container.read_stored(key, &id) {
            Ok(item) => (Box::new(std::iter::once(item)), 1),
            Err(e) if e.kind == cosmoql_storage::ErrorKind::NotFound => (Box::new(std::iter::empty()), 1),
            Err(e) => return Err(storage(e)),
        },
        (Some(key), None) => (Box::new(container.scan_partition_key(key).map_err(storage)?.into_iter()), 1),
        (None, _) => {
            if !options.enable_cross_partition && partitions > 1 && compiled.reads_items() {
                return Err(QueryError::new(
                    QueryErrorKind::Storage,
                    "400 Bad Request: the query needs to read several partitions but cross-partition queries are disabled; give a partition key",
                    None,
                ));
            }
            (Box::new(container.scan()), partitions)
        }
    };
    let mut stats = RunStats::default();
    let items = Runner::new(container).run(&compiled, &mut input, &mut stats)?;
    let metrics = QueryMetrics {
        partitions_touched: if compiled.reads_items() { touched } else { 0 },
        physical_partitions: partitions,
        retrieved_document_count: stats.retrieved,
        output_document_count: items.len() as u64,
        request_charge: 2.5 + 0.05 * stats.retrieved as f64 + 0.01 * items.len() as f64,
        peak_buffered_items: stats.peak_buffered,
    };
    Ok(QueryOutput { items, metrics })
}
