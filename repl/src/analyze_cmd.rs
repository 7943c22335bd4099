//! `cosmoql analyze`: standard SQL (DataFusion's dialect) on the analytical store, the columnar
//! mirror of a container: items loaded from files (the table `c`, also `db.c`), or a database
//! directory's containers with an analytical store (`<database>.<container>`, and `<container>`
//! when its name is unique).

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use cosmoql_analytics::SchemaMode;

use crate::query_cmd::{analytics_for, load_any, DataArgs};

/// How the analytical store represents values of different types in one property.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ModeArg {
    /// One type a property, the first non-null value's; values of other types are not kept.
    WellDefined,
    /// Every value kept, under a child named for its type (`string`, `num`, `bool`, ...).
    FullFidelity,
}

impl ModeArg {
    pub fn mode(self) -> SchemaMode {
        match self {
            ModeArg::WellDefined => SchemaMode::WellDefined,
            ModeArg::FullFidelity => SchemaMode::FullFidelity,
        }
    }
}

/// What `analyze` and `export-parquet` read: the loaded items or database directory, the schema
/// representation, and whether to give a directory's containers an analytical store first.
#[derive(Debug, clap::Args)]
pub struct StoreArgs {
    #[command(flatten)]
    data: DataArgs,
    /// The schema representation (the service's default for the API for NoSQL: well-defined).
    #[arg(long = "schema-mode", value_enum, default_value = "well-defined")]
    mode: ModeArg,
    /// With `--db`: first give the `--use` container (without `--use`: every container) an
    /// analytical store (`analyticalStorageTtl` -1), durably. Loaded files always have one.
    #[arg(long)]
    enable: bool,
}

impl StoreArgs {
    /// The loaded items and the analytical store over them.
    fn open(&self) -> Result<(crate::query_cmd::Loaded, cosmoql_analytics::Analytics), String> {
        let loaded = load_any(&self.data)?;
        let analytics = analytics_for(&loaded, &self.data, self.mode.mode(), self.enable)?;
        Ok((loaded, analytics))
    }
}

/// Options of `cosmoql analyze`.
#[derive(Debug, clap::Args)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Print each table's inferred schema and what it left out, instead of running a statement.
    #[arg(long, conflicts_with = "sql")]
    schema: bool,
    /// The statement, in standard SQL (DataFusion's dialect).
    #[arg(required_unless_present = "schema")]
    sql: Option<String>,
}

/// `cosmoql analyze`: the statement's rows as one JSON array (as `query` prints results), or the
/// rendered error.
pub fn run(args: &AnalyzeArgs) -> Result<(), String> {
    let (_loaded, analytics) = args.store.open()?;
    if args.schema {
        for (db, c) in analytics.tables() {
            let schema = analytics.describe(&db, &c).map_err(|e| e.to_string())?;
            outln!("{db}.{c}:");
            outln!("{}", schema.trim_end());
        }
        return Ok(());
    }
    let sql = args.sql.as_deref().unwrap_or_default();
    let rows = analytics.sql(sql).map_err(|e| e.render(sql))?;
    let mut out = BufWriter::new(crate::output::stdout());
    let mut text = String::from("[");
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&cosmoql::value::to_json_string(row).unwrap_or_else(|| "null".into()));
    }
    text.push_str("]\n");
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(|e| e.to_string())
}

/// Options of `cosmoql export-parquet`.
#[derive(Debug, clap::Args)]
pub struct ExportParquetArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// The folder the files go to (made if missing): `<out>/<database>/<container>/pkrange=<id>/part-0.parquet`.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

/// `cosmoql export-parquet`: the analytical store as Parquet files, one a physical partition;
/// prints a line a file (its path and rows).
pub fn run_export(args: &ExportParquetArgs) -> Result<(), String> {
    let (_loaded, analytics) = args.store.open()?;
    let files = cosmoql_analytics::parquet::export(&analytics, &args.out).map_err(|e| e.to_string())?;
    let rows: usize = files.iter().map(|f| f.rows).sum();
    for f in &files {
        outln!("{}  {} rows", f.path.display(), f.rows);
    }
    errln!("wrote {} rows in {} files under {}", rows, files.len(), args.out.display());
    Ok(())
}
