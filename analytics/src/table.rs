//! A mirror snapshot as a DataFusion table. A filter that pins the partition key to values
//! (`pk = literal`, `pk IN (literals)`, under AND) reads only the mirror partitions that can hold
//! them: the literal is hashed to its EPK as the container hashes keys. The filter still runs
//! above the scan (a partition holds many keys), so pruning never changes a result. A mirror
//! partition is a DataFusion partition: EXPLAIN's `DataSourceExec: partitions=N` line says how
//! many are read.

use std::sync::Arc;

use async_trait::async_trait;
use cosmoql_catalog::epk::Epk;
use cosmoql_catalog::epk::PartitionKeyKind;
use cosmoql_catalog::partition_key::{PartitionKey, PartitionKeyDefinition};
use cosmoql_value::Value;
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::ScalarValue;
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::datasource::TableType;
use datafusion::error::Result;
use datafusion::logical_expr::utils::split_conjunction;
use datafusion::logical_expr::{BinaryExpr, Expr, Operator, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;

use crate::mirror::Snapshot;

/// One snapshot of a container's mirror, as a table.
#[derive(Debug)]
pub struct MirrorTable {
    snapshot: Arc<Snapshot>,
    key: PartitionKeyDefinition,
    /// The column holding the partition key (a key of one top-level path), as the schema names it.
    key_column: Option<String>,
}

impl MirrorTable {
    pub fn new(snapshot: Arc<Snapshot>, key: PartitionKeyDefinition) -> MirrorTable {
        let key_column = match (key.kind(), key.paths()) {
            (PartitionKeyKind::Hash, [path]) if path.segments().len() == 1 && key.synthetic_key().is_none() => {
                let name = &path.segments()[0];
                snapshot.schema.fields().iter().find(|f| f.name().eq_ignore_ascii_case(name)).map(|f| f.name().clone())
            }
            _ => None,
        };
        MirrorTable { snapshot, key, key_column }
    }

    /// The key values a filter pins, when it pins the key column to literals of the column's
    /// type family.
    fn pinned(&self, filter: &Expr) -> Option<Vec<Value>> {
        let column = self.key_column.as_deref()?;
        let ty = self.snapshot.schema.field_with_name(column).ok()?.data_type().clone();
        let is_key = |e: &Expr| matches!(e, Expr::Column(c) if c.name == column);
        match filter {
            Expr::BinaryExpr(BinaryExpr { left, op: Operator::Eq, right }) => {
                let literal = if is_key(left) {
                    right
                } else if is_key(right) {
                    left
                } else {
                    return None;
                };
                Some(vec![literal_value(literal, &ty)?])
            }
            Expr::InList(list) if !list.negated && is_key(&list.expr) => {
                list.list.iter().map(|e| literal_value(e, &ty)).collect()
            }
            _ => None,
        }
    }

    /// The EPKs of every key the filters pin (all of them hold under AND: the smallest set
    /// wins); `None` when no filter pins the key.
    fn pinned_epks(&self, filters: &[Expr]) -> Option<Vec<Epk>> {
        let mut best: Option<Vec<Epk>> = None;
        for filter in filters.iter().flat_map(split_conjunction) {
            let Some(values) = self.pinned(filter) else { continue };
            let epks: Option<Vec<Epk>> = values
                .into_iter()
                .map(|v| PartitionKey::from_values(&[v]).ok().and_then(|k| self.key.epk(&k).ok()))
                .collect();
            let Some(epks) = epks else { continue };
            if best.as_ref().is_none_or(|b| epks.len() < b.len()) {
                best = Some(epks);
            }
        }
        best
    }
}

/// A literal as the value a key would hold, when its type belongs to the column's family (a
/// string literal against a number column is converted by the query, not pruned here).
fn literal_value(e: &Expr, column: &DataType) -> Option<Value> {
    let Expr::Literal(scalar, _) = e else { return None };
    let strings = matches!(column, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8);
    let numbers = column.is_numeric();
    match scalar {
        ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)) | ScalarValue::LargeUtf8(Some(s)) if strings => {
            Some(Value::from(s.as_str()))
        }
        ScalarValue::Boolean(Some(b)) if *column == DataType::Boolean => Some(Value::Bool(*b)),
        ScalarValue::Int64(Some(n)) if numbers => Some(Value::Number(*n as f64)),
        ScalarValue::Int32(Some(n)) if numbers => Some(Value::Number(f64::from(*n))),
        ScalarValue::Float64(Some(n)) if numbers => Some(Value::Number(*n)),
        _ => None,
    }
}

#[async_trait]
impl TableProvider for MirrorTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.snapshot.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| {
                if split_conjunction(f).into_iter().any(|f| self.pinned(f).is_some()) {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let epks = self.pinned_epks(filters);
        let partitions: Vec<Vec<_>> = self
            .snapshot
            .partitions
            .iter()
            .filter(|p| epks.as_ref().is_none_or(|epks| epks.iter().any(|e| p.min <= *e && *e < p.max)))
            .map(|p| p.batches.clone())
            .collect();
        // DataFusion wants at least one partition, even of no batches.
        let partitions = if partitions.is_empty() { vec![Vec::new()] } else { partitions };
        Ok(MemorySourceConfig::try_new_exec(&partitions, self.schema(), projection.cloned())?)
    }
}
