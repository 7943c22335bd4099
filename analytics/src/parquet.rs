//! The analytical store as Parquet: one file per physical partition, in a hive layout
//! (`<out>/<database>/<container>/pkrange=<id>/part-0.parquet`), zstd-compressed, with the
//! schema mode and the container in the files' key-value metadata. DataFusion, DuckDB
//! (`read_parquet('<out>/<db>/<c>/*/*.parquet', hive_partitioning = true)`) and pyarrow
//! (`pq.read_table(dir, partitioning="hive")`) read it back, the range id as a column
//! `pkrange`.
//!
//! Parquet holds no struct without fields: a column whose type has one (a property only ever
//! `{}`) is left out of the files, and named in the metadata (`cosmoql.columns_left_out`).
//!
//! Strings are written as `Utf8`, not as the mirror's `Utf8View`: Parquet stores both alike, but
//! the Arrow schema embedded in the files would otherwise name `string_view`, which readers before
//! pyarrow 16 (and other engines) do not know.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::{Compression, ZstdLevel};
use datafusion::parquet::file::metadata::KeyValue;
use datafusion::parquet::file::properties::WriterProperties;

use crate::session::{Analytics, AnalyticsError};

/// A file written by [`export`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    pub database: String,
    pub container: String,
    /// The physical partition (partition key range) id.
    pub range: u32,
    pub path: PathBuf,
    pub rows: usize,
}

/// Whether Parquet can hold a column of type `ty` (no struct without fields, at any depth).
fn writable(ty: &DataType) -> bool {
    match ty {
        DataType::Struct(fields) => !fields.is_empty() && fields.iter().all(|f| writable(f.data_type())),
        DataType::List(f) | DataType::LargeList(f) => writable(f.data_type()),
        _ => true,
    }
}

/// `ty` with its string views, at any depth, as `Utf8`.
fn without_views(ty: &DataType) -> DataType {
    let field = |f: &Field| Arc::new(f.clone().with_data_type(without_views(f.data_type())));
    match ty {
        DataType::Utf8View => DataType::Utf8,
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(|f| field(f)).collect()),
        DataType::List(f) => DataType::List(field(f)),
        DataType::LargeList(f) => DataType::LargeList(field(f)),
        other => other.clone(),
    }
}

/// Writes every container with an analytical store under `out`, synced first; the files written.
pub fn export(analytics: &Analytics, out: &Path) -> Result<Vec<Exported>, AnalyticsError> {
    let io = |what: &str, path: &Path, e: &dyn std::fmt::Display| {
        AnalyticsError::new(format!("cannot {what} {}: {e}", path.display()))
    };
    let mut written = Vec::new();
    for (database, container) in analytics.tables() {
        let mirror = analytics.mirror(&database, &container)?;
        mirror.sync().map_err(|e| AnalyticsError::new(e.to_string()))?;
        let snapshot = mirror.snapshot();
        let schema = &snapshot.schema;
        let keep: Vec<usize> = (0..schema.fields().len()).filter(|&i| writable(schema.field(i).data_type())).collect();
        let left_out: Vec<&str> =
            (0..schema.fields().len()).filter(|i| !keep.contains(i)).map(|i| schema.field(i).name().as_str()).collect();
        let projected = schema.project(&keep).map_err(|e| AnalyticsError::new(e.to_string()))?;
        let fields: Vec<Field> = projected
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_data_type(without_views(f.data_type())))
            .collect();
        let projected = Arc::new(Schema::new_with_metadata(fields, projected.metadata().clone()));
        let mode = schema.metadata().get("cosmoql.schema_mode").cloned().unwrap_or_default();
        let mut metadata = vec![
            KeyValue::new("cosmoql.schema_mode".into(), mode),
            KeyValue::new("cosmoql.container".into(), format!("{database}.{container}")),
        ];
        if !left_out.is_empty() {
            metadata.push(KeyValue::new("cosmoql.columns_left_out".into(), left_out.join(",")));
        }
        let level = ZstdLevel::try_new(3).map_err(|e| AnalyticsError::new(e.to_string()))?;
        let properties = WriterProperties::builder()
            .set_compression(Compression::ZSTD(level))
            .set_key_value_metadata(Some(metadata))
            .build();
        for p in &snapshot.partitions {
            let dir = out.join(&database).join(&container).join(format!("pkrange={}", p.id));
            std::fs::create_dir_all(&dir).map_err(|e| io("create", &dir, &e))?;
            let path = dir.join("part-0.parquet");
            let file = File::create(&path).map_err(|e| io("create", &path, &e))?;
            let mut writer = ArrowWriter::try_new(file, Arc::clone(&projected), Some(properties.clone()))
                .map_err(|e| io("write", &path, &e))?;
            let mut rows = 0;
            for batch in &p.batches {
                let batch: RecordBatch = batch.project(&keep).map_err(|e| io("write", &path, &e))?;
                let columns = batch
                    .columns()
                    .iter()
                    .zip(projected.fields())
                    .map(|(c, f)| cast(c, f.data_type()))
                    .collect::<Result<Vec<ArrayRef>, _>>()
                    .map_err(|e| io("write", &path, &e))?;
                let batch =
                    RecordBatch::try_new(Arc::clone(&projected), columns).map_err(|e| io("write", &path, &e))?;
                rows += batch.num_rows();
                writer.write(&batch).map_err(|e| io("write", &path, &e))?;
            }
            writer.close().map_err(|e| io("write", &path, &e))?;
            written.push(Exported {
                database: database.clone(),
                container: container.clone(),
                range: p.id,
                path,
                rows,
            });
        }
    }
    Ok(written)
}
