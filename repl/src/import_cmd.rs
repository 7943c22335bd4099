//! `cosmoql import`: load JSON or NDJSON files into an in-memory container, report what happened,
//! and optionally write the container out again (under another partition key).

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::time::Instant;

use crate::progress::{file_bar, Counting};
use cosmoql::{
    ContainerClient, ContainerProperties, ContainerSettings, CosmosClient, ImportOptions, ImportSummary,
    PartitionKeyDefinition,
};

/// Options of `cosmoql import`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// JSON array or NDJSON files to load (`-` for standard input).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The container's partition key path (repeat for a hierarchical key; none: no key).
    #[arg(long = "partition-key", value_name = "PATH")]
    partition_key: Vec<String>,
    /// Physical partitions to start with (default: 1 per 10,000 items, guessing 300 bytes of file
    /// an item; a container without a key has one).
    #[arg(long, value_name = "N")]
    partitions: Option<usize>,
    /// Stop at the first bad line or rejected item (exit 1) instead of reporting it and going on.
    #[arg(long)]
    fail_fast: bool,
    /// Write each item as an upsert: an item whose partition key and id exist is replaced instead
    /// of failing with 409. An import into --db that was interrupted (Ctrl-C, a kill, a full disk)
    /// keeps what it wrote; run it again with --upsert and every item of the files is there once.
    #[arg(long)]
    upsert: bool,
    /// Write the container to this NDJSON file afterwards (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    export: Option<PathBuf>,
    /// Before exporting, copy the items into a container keyed on this path (repeatable): the way
    /// to change a container's partition key.
    #[arg(long = "rekey", value_name = "PATH", requires = "export")]
    rekey: Vec<String>,
    /// Import into this database directory (created if missing) instead of memory: the items are
    /// durable when the command ends (`cosmoql DIR` opens it in the REPL).
    #[arg(long, value_name = "DIR", requires = "into")]
    db: Option<PathBuf>,
    /// With `--db`: the container to import into (created with `--partition-key` if missing).
    #[arg(long, value_name = "CONTAINER", requires = "db")]
    into: Option<String>,
}

fn definition(paths: &[String]) -> Result<PartitionKeyDefinition, String> {
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    PartitionKeyDefinition::from_paths(&refs).map_err(|e| e.to_string())
}

pub fn run(args: &ImportArgs) -> Result<(), String> {
    let key = definition(&args.partition_key)?;
    let total_bytes: u64 = args.files.iter().filter_map(|f| std::fs::metadata(f).ok()).map(|m| m.len()).sum();
    let settings = match args.partitions {
        Some(n) => ContainerSettings { initial_partitions: n, ..ContainerSettings::default() },
        // About 300 bytes an item, as a guess for the initial layout; splits do the rest.
        None => ContainerSettings::for_expected_items(usize::try_from(total_bytes / 300).unwrap_or(usize::MAX)),
    };
    settings.validate().map_err(|e| format!("--partitions: {}", e.message))?;
    // Kept open until the end: the account holds the directory's lock.
    let mut _account = None;
    let container = match (&args.db, &args.into) {
        (Some(dir), Some(name)) => {
            let account = CosmosClient::open(dir).map_err(crate::open::message)?;
            let db = crate::open::first_database(&account)?;
            let container = match db.container_client(name) {
                Ok(c) if args.partition_key.is_empty() || c.partition_key_definition() == &key => c,
                Ok(c) => {
                    return Err(format!(
                        "container `{name}` exists with another partition key ({}): leave --partition-key out to import into it",
                        crate::reports::describe_key(c.partition_key_definition())
                    ))
                }
                Err(_) => {
                    if key.is_none() {
                        errln!(
                            "note: creating container `{name}` without a partition key (--partition-key /path gives it one)"
                        );
                    }
                    db.create_container(ContainerProperties::with_key(name, key).settings(settings))
                        .map_err(|e| e.to_string())?
                }
            };
            _account = Some(account);
            container
        }
        _ => ContainerClient::standalone(ContainerProperties::with_key("imported", key).settings(settings))
            .map_err(|e| e.to_string())?,
    };
    let started = Instant::now();
    let mut total = ImportSummary::default();
    for file in &args.files {
        let bar = file_bar(std::fs::metadata(file).map(|m| m.len()).unwrap_or(0), &file.display().to_string());
        let input: Box<dyn Read + Send> = if file.as_os_str() == "-" {
            Box::new(io::stdin())
        } else {
            Box::new(File::open(file).map_err(|e| format!("cannot open {}: {e}", file.display()))?)
        };
        let reader = BufReader::with_capacity(1 << 20, Counting { inner: input, bar: bar.clone() });
        let options = ImportOptions { fail_fast: args.fail_fast, upsert: args.upsert };
        let result = container.import(reader, options);
        bar.finish_and_clear();
        let summary = match result {
            Ok(summary) => summary,
            Err(e) => return Err(format!("{}: {e}", file.display())),
        };
        for problem in &summary.problems {
            errln!("{}: {}", file.display(), crate::text::printable(&problem.to_string()));
        }
        let reported = summary.problems.len() as u64;
        if summary.skipped + summary.failed > reported {
            errln!("{}: ... and {} more problems", file.display(), summary.skipped + summary.failed - reported);
        }
        total.imported += summary.imported;
        total.replaced += summary.replaced;
        total.skipped += summary.skipped;
        total.failed += summary.failed;
        total.conflicts += summary.conflicts;
    }
    let ImportSummary { imported, skipped, failed, .. } = total;
    let seconds = started.elapsed().as_secs_f64();
    let parts = container.partitions();
    let mut out = crate::output::stdout();
    let plural = |n: u64, one: &str| crate::reports::plural(n, one, &format!("{one}s"));
    let _ = writeln!(
        out,
        "imported {}{}, skipped {skipped}, failed {failed} ({}, {:.2} s, {:.0} items/s)",
        plural(imported, "item"),
        replaced(total.replaced),
        plural(args.files.len() as u64, "file"),
        seconds,
        imported as f64 / seconds.max(1e-9)
    );
    let _ = writeln!(
        out,
        "{}, {}, {}",
        plural(parts.len() as u64, "physical partition"),
        plural(parts.iter().map(|p| p.logical_partitions).sum::<usize>() as u64, "logical partition"),
        plural(container.split_count(), "split")
    );
    if let Some(path) = &args.export {
        let source = if args.rekey.is_empty() {
            container
        } else {
            let target = ContainerClient::standalone(
                ContainerProperties::with_key("rekeyed", definition(&args.rekey)?)
                    .settings(ContainerSettings::for_expected_items(imported as usize)),
            )
            .map_err(|e| e.to_string())?;
            container.copy_into(&target).map_err(|e| e.to_string())?;
            target
        };
        let written = if path.as_os_str() == "-" {
            source.export_ndjson(BufWriter::new(crate::output::stdout()))
        } else {
            let file = File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            source.export_ndjson(BufWriter::new(file))
        }
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        errln!("exported {written} items to {}", path.display());
    }
    match incomplete(&total, "--upsert") {
        Some(message) => Err(message),
        None => Ok(()),
    }
}

/// The one rule of `cosmoql import` and the REPL's `.import`: an import succeeds only when every
/// line is in the container (a script can rely on the exit status); otherwise, what was not, and
/// when items exist already, how `upsert` (the option spelled `upsert`) replaces them.
pub fn incomplete(summary: &ImportSummary, upsert: &str) -> Option<String> {
    let ImportSummary { imported, skipped, failed, conflicts, .. } = *summary;
    let not_imported = skipped + failed;
    (not_imported > 0).then(|| {
        let mut message = format!(
            "{not_imported} of {} lines not imported ({skipped} skipped, {failed} failed)",
            imported + not_imported
        );
        if conflicts > 0 {
            message.push_str(&format!(
                "; {conflicts} of them exist already (an earlier import stopped part-way?): {upsert} replaces them"
            ));
        }
        message
    })
}

/// ` (N replaced)` after an import's count when an upsert replaced items, else nothing.
pub fn replaced(n: u64) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(" ({n} replaced)")
    }
}
