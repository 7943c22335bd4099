//! `cosmoql`: the command-line tool.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

/// mimalloc: docs/performance.md ("The allocator, a cheaper filter per entry, less per query")
/// has what it changed.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[macro_use]
mod output;
mod advise_cmd;
mod analytics_cmd;
mod analyze_cmd;
mod commands;
mod container_cmd;
mod demo;
mod formats;
mod help;
mod import_cmd;
mod items;
mod open;
mod printer;
mod progress;
mod query_cmd;
mod render;
mod repl;
mod reports;
mod run;
mod scripts_cmd;
mod serve_cmd;
mod session;
mod statements;
mod test_cmd;
mod text;
mod usage;
use cosmoql::{CosmosClient, HashVersion, PartitionKeyKind};

/// Azure Cosmos DB for NoSQL-style SQL over a partitioned JSON document store.
///
/// Without a command, `cosmoql` opens the interactive REPL on a demo database in memory
/// (`telemetry`: 100,000 generated IoT readings keyed on /deviceId; `families`: nested documents
/// keyed on /lastName); `cosmoql DIR` opens the database kept in the directory DIR instead (a
/// new one is created by its first write; every change is durable). With `-c SQL`, a FILE or
/// statements piped on standard input it runs them and exits: results on standard output (JSON
/// when it is not a terminal), errors on standard error, exit status 1 if any statement failed
/// (`.exit N` ends with status N). The interactive REPL exits 0 (or N) whatever failed before. sqlite3's single-dash
/// spellings (`-csv`, `-json`, `-markdown`, `-box`, `-noheader`, `-init FILE`, `-bail`) work too.
#[derive(Debug, Parser)]
#[command(name = "cosmoql", version, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    repl: ReplArgs,
}

/// Options of the REPL (no command).
#[derive(Debug, clap::Args)]
struct ReplArgs {
    /// Run these statements (SQL ended by `;`, or `.commands` on their own lines) and exit.
    #[arg(short = 'c', long = "command", value_name = "SQL")]
    commands: Vec<String>,
    /// Start with an empty database instead of the demo data.
    #[arg(long)]
    empty: bool,
    /// Print results as JSON (the default when standard output is not a terminal).
    #[arg(long, group = "format")]
    json: bool,
    /// How results are printed: table (box), ascii, line, markdown, csv, tsv, json, ndjson (also
    /// `.mode` in the REPL). Default: table on a terminal, json otherwise.
    #[arg(long, value_name = "MODE", group = "format", value_parser = parse_mode)]
    mode: Option<formats::Mode>,
    /// Same as --mode csv.
    #[arg(long, group = "format")]
    csv: bool,
    /// Same as --mode tsv.
    #[arg(long, group = "format")]
    tsv: bool,
    /// Same as --mode markdown.
    #[arg(long, group = "format")]
    markdown: bool,
    /// Same as --mode ndjson.
    #[arg(long, group = "format")]
    ndjson: bool,
    /// Same as --mode line (one `name = value` line per property).
    #[arg(long, group = "format")]
    line: bool,
    /// Tables, CSV, TSV and Markdown without their header line (`.headers off`).
    #[arg(long = "no-header")]
    no_header: bool,
    /// Run this file's statements first (instead of ~/.cosmoqlrc, which runs when it exists).
    #[arg(long, value_name = "FILE")]
    init: Option<PathBuf>,
    /// Stop at the first statement that fails (exit status 1).
    #[arg(long)]
    bail: bool,
    /// A database directory to open (a new one is created by its first write; changes are
    /// durable), then, or alone, a file of statements to run (`-` for standard input) and exit.
    /// A single path that is an existing file, `-`, or ends in `.sql` is the file; otherwise it
    /// is the database. Without a database the REPL works in memory on the demo data.
    #[arg(value_name = "DIR|FILE.sql", num_args = 0..=2)]
    paths: Vec<PathBuf>,
    /// With a database directory that has no container yet: load the demo data into it.
    #[arg(long)]
    demo: bool,
    /// The container to start in (a database with several needs one for statements run
    /// without a `.use`).
    #[arg(long = "use", value_name = "CONTAINER")]
    use_container: Option<String>,
    /// Bytes a query's sorts without LIMIT, groups, DISTINCT and ranking may hold at once (also
    /// `.set budget`); past it the query fails with a clear error. Results returned are not counted.
    #[arg(long = "memory-budget", value_name = "BYTES", default_value_t = cosmoql::DEFAULT_MEMORY_BUDGET)]
    memory_budget: u64,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Load JSON array or NDJSON files into an in-memory container (or, with `--db DIR --into
    /// NAME`, a database directory's container) and report what was imported (exit 0 only when
    /// every line was; 1 when any was skipped or failed),
    /// skipped (not a JSON object, with its line number) and failed (rejected by the store);
    /// optionally export the container again, under another partition key with `--rekey`.
    Import(import_cmd::ImportArgs),
    /// Create, upsert, replace, read, delete or patch one item of a database directory's
    /// container (`--db DIR [--use NAME]`): the item as JSON on standard output, the service's
    /// status and request charge on standard error; a refusal (404, 409, ...) exits 1.
    #[command(subcommand_required = true)]
    Item(items::ItemArgs),
    /// Run one query over items loaded from files (or a database directory's container: --db
    /// DIR [--use NAME]; the other commands below take them too); print the results as one JSON array on
    /// standard output (exit 0), or the rendered error on standard error (exit 1).
    ///
    /// With `--metrics`, the last line of standard error is one JSON object with
    /// partitionsTouched, physicalPartitions, retrievedDocumentCount, indexEntriesRead,
    /// outputDocumentCount, requestCharge, peakBufferedItems, pages, partitions, indexMetrics
    /// (the service's PopulateIndexMetrics JSON: indexes used, indexes that would help) and
    /// queryMetrics (the service's x-ms-documentdb-query-metrics string).
    Query(query_cmd::QueryArgs),
    /// Run one statement of standard SQL (DataFusion's dialect: joins, window functions, ...) on
    /// the analytical store, the columnar mirror of the items: loaded files are the table `c`,
    /// a database directory's containers with an analytical store are `<database>.<container>`
    /// (`--enable` gives them one). Prints the rows as one JSON array (exit 0), or the rendered
    /// error (exit 1); `--schema` prints the inferred schema and what it left out.
    Analyze(analyze_cmd::AnalyzeArgs),
    /// Write the analytical store as Parquet (zstd), one file per physical partition in a hive
    /// layout: OUT/<database>/<container>/pkrange=<id>/part-0.parquet, the schema mode in the
    /// files' metadata; DataFusion, DuckDB and pyarrow read it back. Prints a line a file.
    ExportParquet(analyze_cmd::ExportParquetArgs),
    /// Load items from files and report how they spread over the physical partitions: items,
    /// bytes and logical partitions per partition, spread measures, the heaviest logical
    /// partitions and flags (a key near its cap, uneven key space); `--json` for one JSON object.
    Skew(query_cmd::SkewArgs),
    /// Load items from files and print the container's change feed (or `--pk`'s logical
    /// partition's): each changed item once in its latest version, or with `--all-versions`
    /// every create, replace and delete; one per line, the continuation on standard error.
    Changes(query_cmd::ChangesArgs),
    /// Load items from files and rank candidate partition keys (paths, synthetic concatenations,
    /// hierarchical pairs, hash suffixes) by how they would spread storage and writes over the
    /// physical partitions, with the reasons (few keys, a logical partition over its cap, hot
    /// writes on a key derived from time).
    Advise(advise_cmd::AdviseArgs),
    /// Load the data once, run the query once to warm up and then `--repeat` times (each run
    /// fetches every result as the JSON text `query` writes), and print one JSON line:
    /// loadSeconds, items, results, minSeconds, medianSeconds, maxSeconds, peakRssBytes.
    Bench(query_cmd::BenchArgs),
    /// Print a query's plan: the target partitions and why, what each partition runs, and the
    /// merge stages on the client; `--analyze` also runs it and prints its metrics.
    Explain(query_cmd::ExplainArgs),
    /// Parse a query and print it in normalized form (exit 0), or print the syntax error (exit 1).
    ///
    /// The normalized form has upper-case keywords, one space between tokens and only the
    /// parentheses the precedence rules need; parsing it again gives the same syntax tree.
    Parse {
        /// The query text, or `-` to read it from standard input.
        sql: String,
        /// Print the syntax tree (with byte spans) instead of the normalized SQL.
        #[arg(long)]
        ast: bool,
    },
    /// Print the effective partition key (EPK) of a partition key value as uppercase hex (exit 0),
    /// or print why the value cannot be hashed (exit 1).
    ///
    /// The key is a JSON array with one component per partition key path: strings, numbers,
    /// booleans and null, e.g. '["tenant1", 42]'. Objects, arrays, NaN and Infinity are not
    /// partition key values. An undefined component (the path is missing from the document) has
    /// no JSON form; write the bare word `undefined` for it, e.g. '["tenant1", undefined]'.
    /// `-0` hashes like `0`. `[]` prints an empty line: the empty key's EPK is the minimum, "".
    Epk {
        /// The key components as a JSON array, e.g. '["redmond"]' or '["tenant1", "user1"]'.
        key: String,
        /// Hash version of the partition key definition: 2 (MurmurHash3 x64 128, the default for
        /// new containers) or 1 (legacy MurmurHash3 x86 32 plus the binary-encoded values).
        #[arg(long = "version", value_name = "1|2", default_value = "2")]
        hash_version: VersionArg,
        /// Partition key kind. Default: `hash` for one component; for several, `multihash`
        /// (hierarchical key, up to 3 components, one 16-byte hash each) with version 2 and `hash`
        /// (all components hashed together) with version 1, which has no hierarchical keys.
        #[arg(long, value_enum)]
        kind: Option<KindArg>,
    },
    /// Serve the Cosmos DB REST API (what the official SDKs speak) on http: in memory, or on a
    /// database directory. Prints `listening on URL` and the connection string once it accepts
    /// requests; Ctrl-C or SIGTERM stops it after the requests in flight.
    Serve(serve_cmd::ServeArgs),
    /// Open a database directory whose log has a damaged record (opening it otherwise refuses,
    /// naming the file and offset): keep every intact record before the damage, set the rest of
    /// the file aside as `wal-NNNNNN.log.damaged-at-OFFSET`, write a clean checkpoint, and say
    /// what was kept. A sound database is left as it is.
    Recover {
        /// The database directory.
        dir: PathBuf,
    },
    /// Run a query suite folder (`fixtures.json` and `*.sql` files of annotated queries, see
    /// `cosmoql::testing`) on the embedded engine, or with `--endpoint URL --key KEY` on any
    /// Cosmos DB endpoint (the service, an emulator, `cosmoql serve`): print a diff of every
    /// mismatch, then `N passed, M failed`; exit 1 if any case failed. `--bless` writes the
    /// actual results (the endpoint's, with --endpoint) as the expectations.
    Test(test_cmd::TestArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum VersionArg {
    #[value(name = "1")]
    V1,
    #[value(name = "2")]
    V2,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum KindArg {
    Hash,
    Multihash,
}

/// sqlite3's single-dash spellings (`-csv`, `-json`, `-init FILE`, `-bail`, ...) as our flags:
/// without this `-csv` would read as `-c sv`.
fn sqlite_style(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out = Vec::new();
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let word = arg.to_str().unwrap_or_default();
        let long = match word {
            "-csv" | "-tsv" | "-json" | "-ndjson" | "-markdown" | "-line" | "-init" | "-bail" => {
                Some(format!("-{word}"))
            }
            "-table" | "-box" | "-ascii" => Some(format!("--mode={}", &word[1..])),
            "-noheader" => Some("--no-header".to_string()),
            "-header" => Some(String::new()),
            // The rest of a `-c` statement is its own (`-c "-csv"` is SQL, not a flag).
            "-c" | "--command" => {
                out.push(arg);
                if let Some(sql) = args.next() {
                    out.push(sql);
                }
                continue;
            }
            _ => None,
        };
        match long {
            Some(flag) if flag.is_empty() => {} // headers are on by default
            Some(flag) => out.push(flag.into()),
            None => out.push(arg),
        }
    }
    out
}

fn main() -> ExitCode {
    // Past the file size limit (`ulimit -f`), the kernel's SIGXFSZ would end the process with no
    // word; handled, the write fails with EFBIG ("File too large") and is reported as any other
    // write error, naming the file, with nothing acknowledged that is not written.
    let _ = signal_hook::flag::register(
        signal_hook::consts::SIGXFSZ,
        std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
    );
    let args = sqlite_style(std::env::args_os());
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::UnknownArgument => {
            match usage::unknown_option(&Cli::command(), &args, &e) {
                Some(message) => {
                    errln!("error: {message}");
                    return ExitCode::from(2);
                }
                None => e.exit(),
            }
        }
        Err(e) => e.exit(),
    };
    let code = run(cli);
    // A failed write to standard output is an error (a closed pipe is the reader's choice).
    match output::failure() {
        Some(output::Failure::Failed(message)) => {
            errln!("error: {message}");
            ExitCode::FAILURE
        }
        _ => code,
    }
}

fn run(cli: Cli) -> ExitCode {
    let Some(command) = cli.command else { return run_repl(&cli.repl) };
    match command {
        Command::Parse { sql, ast } => parse(&sql, ast),
        Command::Epk { key, hash_version, kind } => epk_command(&key, hash_version, kind),
        Command::Import(args) => report(import_cmd::run(&args)),
        Command::Query(args) => report(query_cmd::run_query(&args)),
        Command::Analyze(args) => report(analyze_cmd::run(&args)),
        Command::ExportParquet(args) => report(analyze_cmd::run_export(&args)),
        Command::Item(args) => report(items::run_command(&args)),
        Command::Skew(args) => report(query_cmd::run_skew(&args)),
        Command::Changes(args) => report(query_cmd::run_changes(&args)),
        Command::Advise(args) => report(advise_cmd::run(&args)),
        Command::Bench(args) => report(query_cmd::run_bench(&args)),
        Command::Explain(args) => report(query_cmd::run_explain(&args)),
        Command::Recover { dir } => report(recover(&dir)),
        Command::Serve(args) => report(serve_cmd::run(&args)),
        Command::Test(args) => match test_cmd::run(&args) {
            Ok((ok, rendered)) => {
                out!("{rendered}");
                if ok {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                }
            }
            Err(e) => report(Err(e)),
        },
    }
}

/// The REPL, or a non-interactive run of `-c` statements, a file, or piped standard input.
fn run_repl(args: &ReplArgs) -> ExitCode {
    // A mistyped command is a usage error, as clap's are (status 2).
    let (dir, file) = match classify_paths(&args.paths) {
        Ok(paths) => paths,
        Err(msg) => {
            report(Err(msg));
            return ExitCode::from(2);
        }
    };
    // Typing at a terminal and reading the answers on it; with either side redirected the
    // statements run as a script (`cosmoql > out.json` takes what is typed until Ctrl-D).
    let interactive =
        args.commands.is_empty() && file.is_none() && std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let colored = text::colors_for(std::io::stdout().is_terminal());
    let demo = if dir.is_some() { args.demo } else { !args.empty };
    let options =
        open::OpenOptions { dir: dir.as_deref(), demo, container: args.use_container.as_deref(), interactive };
    let opened = match open::open(options) {
        Ok(opened) => opened,
        Err(msg) => return report(Err(msg)),
    };
    let banner =
        std::iter::once(opened.banner.clone()).chain(opened.notes.iter().cloned()).collect::<Vec<_>>().join("\n");
    // Said once, before any statement (the next error would otherwise mislead); the REPL's
    // banner says it.
    if !interactive {
        if let Some(dir) = &opened.pending {
            errln!("{} does not exist yet: a new database, created by its first write", dir.display());
        }
        for note in &opened.notes {
            errln!("{note}");
        }
    }
    let mut session = session::Session::new(opened, interactive, colored);
    session.options.memory_budget = Some(args.memory_budget);
    let flagged = [
        (args.json, formats::Mode::Json),
        (args.csv, formats::Mode::Csv),
        (args.tsv, formats::Mode::Tsv),
        (args.markdown, formats::Mode::Markdown),
        (args.ndjson, formats::Mode::Ndjson),
        (args.line, formats::Mode::Line),
    ]
    .into_iter()
    .find_map(|(on, mode)| on.then_some(mode))
    .or(args.mode);
    if let Some(mode) = flagged {
        session.mode = mode;
    } else if !interactive && colored {
        session.mode = formats::Mode::Table;
    }
    session.display.headers = !args.no_header;
    session.bail = args.bail;
    // The init file: --init FILE, else ~/.cosmoqlrc when there is one (as sqlite3's ~/.sqliterc).
    let init = match &args.init {
        Some(path) => Some(path.clone()),
        None => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cosmoqlrc")).filter(|p| p.is_file()),
    };
    if let Some(path) = init {
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => return report(Err(format!("cannot read the init file {}: {e}", path.display()))),
        };
        session.source = Some(path.display().to_string());
        let outcome = session.run_input(&text);
        session.source = None;
        if outcome.quit {
            return ExitCode::from(outcome.exit_code.unwrap_or(u8::from(outcome.failed)));
        }
    }
    if interactive {
        let place = match &dir {
            Some(d) => format!("in {}", d.display()),
            None => "in memory".to_string(),
        };
        return ExitCode::from(repl::run(session, &banner, &place));
    }
    let mut failed = false;
    // `-c "SELECT 1"` needs no `;`: the end of the text ends the statement.
    // Each input with the name its errors are given (a file's).
    let mut inputs: Vec<(Option<String>, String)> = args.commands.iter().map(|c| (None, c.clone())).collect();
    match &file {
        Some(path) if path.as_os_str() == "-" => {}
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => inputs.push((Some(path.display().to_string()), text)),
            Err(e) => return report(Err(format!("cannot read {}: {e}", path.display()))),
        },
        None => {}
    }
    let read_stdin =
        file.as_ref().is_some_and(|p| p.as_os_str() == "-") || (args.commands.is_empty() && file.is_none());
    if read_stdin {
        let mut text = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            return report(Err(format!("cannot read standard input: {e}")));
        }
        inputs.push((None, text));
    }
    for (source, input) in &inputs {
        session.source = source.clone();
        let outcome = session.run_input(input);
        failed |= outcome.failed;
        if outcome.quit {
            if let Some(code) = outcome.exit_code {
                return ExitCode::from(code);
            }
            break;
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn parse_mode(name: &str) -> Result<formats::Mode, String> {
    formats::Mode::parse(name).ok_or_else(|| format!("one of {}", formats::Mode::NAMES))
}

/// The REPL's paths: `(database directory, statements file)`.
fn classify_paths(paths: &[PathBuf]) -> Result<(Option<PathBuf>, Option<PathBuf>), String> {
    match paths {
        [] => Ok((None, None)),
        [one] => {
            let is_file =
                one.as_os_str() == "-" || one.is_file() || one.extension().is_some_and(|e| e == "sql" || e == "cql");
            if !is_file && !one.exists() {
                usage::check_not_a_command(&Cli::command(), one)?;
            }
            Ok(if is_file { (None, Some(one.clone())) } else { (Some(one.clone()), None) })
        }
        [dir, file] => {
            if !dir.exists() {
                usage::check_not_a_command(&Cli::command(), dir)?;
            }
            if dir.is_file() {
                return Err(format!(
                    "{} is a file, not a database directory (the database comes first: cosmoql DIR FILE.sql)",
                    dir.display()
                ));
            }
            Ok((Some(dir.clone()), Some(file.clone())))
        }
        _ => Err("at most two paths: a database directory and a file of statements".to_string()),
    }
}

/// `cosmoql recover`.
fn recover(dir: &std::path::Path) -> Result<(), String> {
    if !dir.join("CURRENT").is_file() {
        // The logs without CURRENT: replay starts at the oldest.
        match CosmosClient::restore_current(dir).map_err(open::message)? {
            Some(log) => outln!("CURRENT was missing: it now names {log}, the oldest log"),
            None => {
                return Err(format!(
                    "{} is not a cosmoql database directory (it has no CURRENT file and no log)",
                    dir.display()
                ))
            }
        }
    }
    let options = cosmoql::DurableOptions { recover: true, ..Default::default() };
    let account = CosmosClient::open_with(dir, options).map_err(open::message)?;
    let recovery = account.recovery().unwrap_or_default();
    match &recovery.set_aside {
        Some(aside) => {
            account.checkpoint().map_err(open::message)?;
            outln!(
                "kept {} intact log record{}; the damaged rest is set aside in {}",
                recovery.records,
                if recovery.records == 1 { "" } else { "s" },
                aside.display()
            );
        }
        None => outln!("the log is sound ({} records): nothing to recover", recovery.records),
    }
    if let Some(torn) = &recovery.torn_aside {
        outln!(
            "a last record cut short by a crash ({} bytes, never acknowledged) was copied to {} and cut off",
            recovery.torn_bytes,
            torn.display()
        );
    }
    Ok(())
}

/// Exit 0 on success; print the error and exit 1 otherwise.
fn report(result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            let _ = writeln!(output::stderr(), "error: {}", text::printable(&msg));
            ExitCode::FAILURE
        }
    }
}

fn epk_command(key: &str, version: VersionArg, kind: Option<KindArg>) -> ExitCode {
    let components = match statements::key_components(key) {
        Ok(c) => c,
        Err(msg) => {
            let _ = writeln!(output::stderr(), "error: {msg}");
            return ExitCode::FAILURE;
        }
    };
    let version = match version {
        VersionArg::V1 => HashVersion::V1,
        VersionArg::V2 => HashVersion::V2,
    };
    let kind = match kind {
        Some(KindArg::Hash) => PartitionKeyKind::Hash,
        Some(KindArg::Multihash) => PartitionKeyKind::MultiHash,
        None if components.len() > 1 && version == HashVersion::V2 => PartitionKeyKind::MultiHash,
        None => PartitionKeyKind::Hash,
    };
    match cosmoql::effective_partition_key(&components, kind, version) {
        Ok(e) => {
            let _ = writeln!(output::stdout(), "{e}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            let _ = writeln!(output::stderr(), "error: {err}");
            ExitCode::FAILURE
        }
    }
}

fn parse(sql: &str, ast: bool) -> ExitCode {
    let text = if sql == "-" {
        let mut buf = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut buf) {
            errln!("error: cannot read the query from standard input: {e}");
            return ExitCode::FAILURE;
        }
        buf
    } else {
        sql.to_string()
    };
    match cosmoql::parse(&text) {
        Ok(query) => {
            let out = if ast { format!("{query:#?}") } else { query.to_string() };
            // A closed pipe (`cosmoql parse ... | head`) is not an error worth a panic.
            let _ = writeln!(output::stdout(), "{out}");
            ExitCode::SUCCESS
        }
        Err(err) => report(Err(err.to_string())),
    }
}
