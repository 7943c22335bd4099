//! The analytical store beyond one machine (issue 25): the Parquet layout `cosmoql
//! export-parquet` writes (`<dir>/<database>/<container>/pkrange=<id>/part-0.parquet`), registered
//! in a session of [Ballista](https://datafusion.apache.org/ballista/), DataFusion's distributed
//! engine (the same major version as `cosmoql-analytics`). A client plans a statement; the
//! scheduler splits it into stages; executors read the files and exchange shuffles over Arrow
//! Flight.
//!
//! Each container is a table `<database>.<container>`, and a table of its own name when no other
//! database has a container of that name, as in `cosmoql analyze`; the partition key range is a
//! column `pkrange`. Names keep their case (`metricValue`), as in `cosmoql analyze`. Results come
//! back as cosmoql values, so numbers print as the row engine prints them.
//!
//! The executors open the files by the paths the client registered: on a real cluster the
//! directory must be at the same path on every executor (a shared volume), see `README.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::BallistaCodec;
use cosmoql::value::Value;
use cosmoql_analytics::values;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{MemorySchemaProvider, SchemaProvider};
use datafusion::common::TableReference;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};

/// A container's files in the layout: its table names and its directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutTable {
    pub database: String,
    pub container: String,
    /// `<dir>/<database>/<container>`, holding a `pkrange=<id>` directory per physical partition.
    pub dir: PathBuf,
    /// How many `pkrange=<id>` directories it holds.
    pub partitions: usize,
}

fn io(what: &str, path: &Path, e: std::io::Error) -> DataFusionError {
    DataFusionError::Execution(format!("cannot {what} {}: {e}", path.display()))
}

fn dirs(path: &Path) -> Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(path).map_err(|e| io("read", path, e))? {
        let entry = entry.map_err(|e| io("read", path, e))?;
        if entry.file_type().map_err(|e| io("read", &entry.path(), e))?.is_dir() {
            out.push((entry.file_name().to_string_lossy().into_owned(), entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// The containers of the layout under `dir`: every `<database>/<container>` directory holding
/// `pkrange=<id>` directories, in name order. A directory without any is not a container; a
/// layout without containers is an error (the wrong directory, most likely).
pub fn layout(dir: &Path) -> Result<Vec<LayoutTable>> {
    let mut tables = Vec::new();
    for (database, db_dir) in dirs(dir)? {
        for (container, c_dir) in dirs(&db_dir)? {
            let partitions = dirs(&c_dir)?.iter().filter(|(name, _)| name.starts_with("pkrange=")).count();
            if partitions > 0 {
                tables.push(LayoutTable { database: database.clone(), container, dir: c_dir, partitions });
            }
        }
    }
    if tables.is_empty() {
        return Err(DataFusionError::Plan(format!(
            "{} holds no container files (expected <database>/<container>/pkrange=<id>/*.parquet, as \
             `cosmoql export-parquet --out DIR` writes them)",
            dir.display()
        )));
    }
    Ok(tables)
}

/// The session configuration of `cosmoql analyze` on Ballista's: identifiers keep their case.
pub fn config() -> SessionConfig {
    SessionConfig::new_with_ballista().set_bool("datafusion.sql_parser.enable_ident_normalization", false)
}

/// A session planning on this client and running on the Ballista scheduler at `url`
/// (`df://host:port`, the port 50050 when left out).
pub async fn connect(url: &str) -> Result<SessionContext> {
    let state = SessionStateBuilder::new().with_default_features().with_config(config()).build();
    SessionContext::remote_with_state(url, state).await
}

/// Starts a Ballista scheduler and `executors` executors of `slots` task slots each in this
/// process, every one on its own loopback port (the executors serve their shuffle output over
/// Arrow Flight, as on a cluster); the scheduler's `df://` address for [`connect`]. They run on
/// the current tokio runtime until it ends.
pub async fn start_loopback(executors: usize, slots: usize) -> Result<String> {
    let failed =
        |what: &str, e: &dyn std::fmt::Display| DataFusionError::Execution(format!("cannot start {what}: {e}"));
    let addr = ballista_scheduler::standalone::new_standalone_scheduler()
        .await
        .map_err(|e| failed("a Ballista scheduler", &e))?;
    let url = format!("http://localhost:{}", addr.port());
    // The scheduler serves from a task of its own: wait for it, for 10 s at most.
    let mut attempts = 0;
    let scheduler = loop {
        match SchedulerGrpcClient::connect(url.clone()).await {
            Ok(client) => break client,
            Err(e) if attempts == 100 => return Err(failed("a Ballista scheduler", &e)),
            Err(_) => {
                attempts += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    for _ in 0..executors {
        ballista_executor::new_standalone_executor(scheduler.clone(), slots.max(1), BallistaCodec::default())
            .await
            .map_err(|e| failed("a Ballista executor", &e))?;
    }
    Ok(format!("df://localhost:{}", addr.port()))
}

/// Registers every container of the layout under `dir` in `ctx` (see the module's naming); the
/// tables registered.
pub async fn register_layout(ctx: &SessionContext, dir: &Path) -> Result<Vec<LayoutTable>> {
    let dir = dir.canonicalize().map_err(|e| io("open", dir, e))?;
    let tables = layout(&dir)?;
    let catalog = ctx
        .catalog("datafusion")
        .ok_or_else(|| DataFusionError::Internal("DataFusion's default catalog is missing".into()))?;
    let mut by_name: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &tables {
        *by_name.entry(t.container.as_str()).or_default() += 1;
    }
    for t in &tables {
        if catalog.schema(&t.database).is_none() {
            catalog.register_schema(&t.database, Arc::new(MemorySchemaProvider::new()) as Arc<dyn SchemaProvider>)?;
        }
        let path = t.dir.to_str().ok_or_else(|| {
            DataFusionError::Plan(format!("{} is not a UTF-8 path, which a Ballista plan needs", t.dir.display()))
        })?;
        let options = || {
            ParquetReadOptions::default()
                .table_partition_cols(vec![("pkrange".to_string(), DataType::Utf8)])
                .parquet_pruning(true)
        };
        ctx.register_parquet(TableReference::partial(t.database.as_str(), t.container.as_str()), path, options())
            .await?;
        if by_name[t.container.as_str()] == 1 {
            ctx.register_parquet(TableReference::bare(t.container.as_str()), path, options()).await?;
        }
    }
    Ok(tables)
}

/// Runs one statement; its result's record batches.
pub async fn sql_batches(ctx: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>> {
    ctx.sql(sql).await?.collect().await
}

/// Runs one statement; its rows as cosmoql values (objects named by the result's columns).
pub async fn sql(ctx: &SessionContext, sql: &str) -> Result<Vec<Value>> {
    let batches = sql_batches(ctx, sql).await?;
    values::rows(&batches).map_err(|e| DataFusionError::ArrowError(Box::new(e), None))
}
