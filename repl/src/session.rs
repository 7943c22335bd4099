//! A REPL session: the store, the current container, the settings, and what runs a statement (a
//! query, `EXPLAIN [ANALYZE] ...` or a `.command`). Used by the interactive loop and by the
//! non-interactive runs (`-c`, a file, piped statements).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use cosmoql::executor::QueryOptions;
use cosmoql::storage::{
    Container, ContainerSettings, Database, ImportOptions, IndexingPolicy, PartitionKey, PartitionKeyDefinition,
    PartitionKeyPath, Store, SyntheticKey, SyntheticKind,
};
use cosmoql::value::{format_number, parse_json, to_json_string, Value};
use cosmoql::ContainerClient;
use indicatif::{ProgressBar, ProgressStyle};

use crate::import_cmd::Counting;
use crate::render::{self, color};

/// Set by the Ctrl-C handler (interactive sessions only) while a query runs.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

pub use crate::formats::Mode;
use crate::formats::{Columns, Display};

/// Names the completer offers: containers and property paths seen in the current container.
#[derive(Debug, Default)]
pub struct Vocabulary {
    pub containers: Vec<String>,
    /// Paths like `location.city`, from a sample of the current container's items.
    pub paths: Vec<String>,
}

/// What a run of one input did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Outcome {
    pub failed: bool,
    pub quit: bool,
    /// `.exit N`: the exit status asked for.
    pub exit_code: Option<u8>,
}

/// The REPL's state.
#[derive(Debug)]
pub struct Session {
    _store: Arc<Store>,
    db: Arc<Database>,
    current: Option<String>,
    pub mode: Mode,
    pub metrics: bool,
    pub timing: bool,
    /// Colours and the pretty forms (terminal output).
    pub colored: bool,
    /// Messages (not results) go to stdout when interactive, to stderr otherwise.
    pub interactive: bool,
    pub options: QueryOptions,
    page_size: Option<usize>,
    params: BTreeMap<String, Value>,
    max_rows: usize,
    pub vocabulary: Arc<RwLock<Vocabulary>>,
    /// Per container: where `.changes` resumes.
    changes: BTreeMap<String, String>,
    /// The file being run, named in its errors (whose line numbers are the file's).
    pub source: Option<String>,
    /// Headers, and how null and undefined show, in the text modes.
    pub display: Display,
    /// `.once FILE`: results go back to standard output after the next statement (2: `.once`
    /// itself just ran, 1: the next statement is running, 0: no `.once`).
    once: u8,
    /// `.read` files being run, one inside the other.
    reading: usize,
    /// `--bail`: stop at the first statement that fails.
    pub bail: bool,
    /// `.pager on|off`: long tables go through `$PAGER` (interactive sessions on a terminal).
    pub pager: bool,
}

/// `.read` files may read others up to this depth.
const MAX_READ_DEPTH: usize = 16;

/// The lines of [`HELP`] about `command` (its line and the lines continuing it).
fn help_for(command: &str) -> Option<String> {
    let mut lines = HELP.lines().skip_while(|l| {
        let l = l.trim_start();
        !(l.starts_with(command) && l[command.len()..].starts_with([' ', ',', '|']))
    });
    let first = lines.next()?;
    let indent = first.len() - first.trim_start().len();
    let mut out = vec![first.to_string()];
    out.extend(lines.take_while(|l| l.len() - l.trim_start().len() > indent + 10).map(str::to_string));
    Some(out.join("\n"))
}

/// The text of `.help`.
pub const HELP: &str = "\
Statements end with `;` or an empty line. A query runs on the current container (the name after
FROM is an alias, as in Cosmos DB). Ctrl-C clears the line or cancels a running query; Ctrl-D quits.

  SELECT ...;                       run a query
  EXPLAIN [ANALYZE] SELECT ...;     the plan (targets and why, per-partition work, merges)
  .explain SQL                      same as EXPLAIN
  .containers                       list containers (items, partitions, key)
  .use NAME                         switch the current container
  .create NAME /path [/path2 ...]   new container, keyed on one path or hierarchical (2-3 paths)
  .create NAME                      new container without a partition key
  .create NAME --concat /a,/b [SEP] synthetic key: values of /a and /b joined with SEP (default -)
  .create NAME --random /a N [SEED] synthetic key: value of /a, a dot and a random bucket 1..N
  .create NAME --hash /a /b N       synthetic key: value of /a, a dot and hash(/b) % N + 1
                                    (synthetic keys are written to the item's `partitionKey`)
  .drop NAME                        delete a container
  .import FILE                      load a JSON array or NDJSON file into the current container
                                    (Ctrl-C stops it; what was imported stays)
  .export FILE                      write the current container as NDJSON
  .policy [JSON]                    show or replace the current container's indexing policy
                                    (ORDER BY on several paths needs a composite index); a
                                    replacement rebuilds the indexes in the background
  .stats                            data and index memory per item, items and bytes per physical
                                    partition, largest logical partitions, and the skew
  .advise [WORKLOAD]                candidate partition keys for the current container, ranked by
                                    how they spread storage and writes, with the reasons; with a
                                    workload file (as `cosmoql advise --workload`), also by the
                                    queries they keep on one partition and the writes' load
  .throughput [RU | autoscale MAX | off]
                                    show or provision the current container's throughput (the
                                    service's minimums and steps; more than 10,000 RU/s per
                                    partition splits partitions); also `burst on|off`,
                                    `redistribute ID=RU...` and `even`
  .changes [now | reset] [N]        the current container's change feed: what was created or
                                    replaced since the last `.changes` (all of it the first time),
                                    each item once in its latest version, N at a time (20)
  .skew                             per physical partition: items, bytes, logical partitions, RU,
                                    peak RU % of its budget, 429s; spread measures, heaviest
                                    keys and flags (hot partition, 429 rate, key near its cap)
  .mode MODE                        result format: table (box), ascii, line, markdown, csv, tsv,
                                    json, ndjson
  .headers on|off                   header lines in tables, CSV, TSV, Markdown
  .nullvalue TEXT                   how null shows in the text modes (default null)
  .undefinedvalue TEXT              how a missing property shows (default: empty)
  .set maxdop N                     producers at once (-1 one per core, 0/1 serial)
  .set maxbuffered N|off            bound on results buffered by the cross-partition merge
  .set pagesize N|off               fetch in pages of N through continuation tokens
  .set pk JSON|off                  scope queries to one logical partition, e.g. .set pk \"dev-00042\"
  .set crosspartition on|off        allow queries that read several physical partitions
  .set maxrows N                    rows a table shows (default 100; the others are counted, not kept)
  .set budget BYTES|off             memory a query's sorts, groups and DISTINCT may hold (default 1 GiB)
  .set                              show the settings
  .param @name JSON                 bind a parameter for later queries, e.g. .param @d \"dev-00001\"
  .param @name                      remove it
  .params                           list the parameters
  .metrics on|off                   after each query: its charge, partitions, documents and sizes,
                                    index use, times, and the indexes that would help
  .timing on|off                    time of each query (also .timer)
  .pager on|off                     tables and lines longer than the screen through $PAGER (less)
  .output [FILE]                    results to FILE from now on (none: back to the screen)
  .once FILE                        the next statement's results to FILE
  .read FILE                        run the statements of FILE
  .help [COMMAND]                   this text, or one command's
  .quit [N]                         leave, with exit status N if given (also .exit, Ctrl-D)";

impl Session {
    /// A session over `store`'s database `db`, using `current` if given.
    pub fn new(
        store: Arc<Store>,
        db: Arc<Database>,
        current: Option<String>,
        interactive: bool,
        colored: bool,
    ) -> Self {
        let session = Session {
            _store: store,
            db,
            current,
            mode: if interactive { Mode::Table } else { Mode::Json },
            metrics: false,
            timing: interactive,
            colored,
            interactive,
            options: QueryOptions::default(),
            page_size: None,
            params: BTreeMap::new(),
            max_rows: 100,
            vocabulary: Arc::new(RwLock::new(Vocabulary::default())),
            changes: BTreeMap::new(),
            source: None,
            display: Display::default(),
            once: 0,
            reading: 0,
            bail: false,
            pager: interactive,
        };
        session.refresh_vocabulary();
        session
    }

    pub fn current(&self) -> Option<&str> {
        self.current.as_deref()
    }

    fn container(&self) -> Result<Arc<Container>, String> {
        let name = self.current.as_deref().ok_or("no container in use: .create NAME /key, then .use NAME")?;
        self.db.container(name).map_err(|e| e.to_string())
    }

    /// The container a query runs on: the current one, or, for a query without FROM (`SELECT
    /// 1 + 1`) and no container in use, an empty one.
    fn query_container(&self, sql: &str) -> Result<Arc<Container>, String> {
        match self.container() {
            Ok(c) => Ok(c),
            // A syntax error is reported as one, whatever the container.
            Err(msg) => match cosmoql::parse(sql) {
                Ok(q) if q.from.is_some() => Err(msg),
                _ => Ok(Arc::new(Container::new("none", PartitionKeyDefinition::none(), ContainerSettings::default()))),
            },
        }
    }

    /// Re-reads container names and samples property paths of the current container.
    pub fn refresh_vocabulary(&self) {
        let mut paths = std::collections::BTreeSet::new();
        if let Ok(c) = self.container() {
            for item in c.scan().items().take(200) {
                collect_paths(&item.doc.to_value(), "", 0, &mut paths);
            }
        }
        if let Ok(mut v) = self.vocabulary.write() {
            v.containers = self.db.container_ids();
            v.paths = paths.into_iter().collect();
        }
    }

    fn say(&self, text: &str) {
        let text = render::printable(text);
        if self.interactive {
            let _ = writeln!(crate::output::stdout(), "{text}");
        } else {
            let _ = writeln!(io::stderr(), "{text}");
        }
    }

    fn error(&self, text: &str) {
        let text = render::printable(text);
        let text = match &self.source {
            Some(file) => format!("{file}: {text}"),
            None => text.to_string(),
        };
        let mut err = io::stderr().lock();
        if self.colored {
            let _ = writeln!(err, "{}error:{} {text}", color::RED, color::RESET);
        } else {
            let _ = writeln!(err, "error: {text}");
        }
    }

    /// Runs every statement of `text` (SQL ended by `;` or an empty line, `.commands` one a line).
    pub fn run_input(&mut self, text: &str) -> Outcome {
        let mut outcome = Outcome::default();
        for statement in split_statements(text) {
            let ok = match statement {
                Statement::Command(line) => match self.command(&line) {
                    Ok(Flow::Continue) => true,
                    Ok(Flow::Quit(code)) => {
                        outcome.quit = true;
                        outcome.exit_code = code;
                        return outcome;
                    }
                    Err(msg) => {
                        self.error(&msg);
                        false
                    }
                },
                Statement::Sql(sql) => self.sql(&sql),
            };
            outcome.failed |= !ok;
            match self.once {
                2 => self.once = 1,
                1 => {
                    self.once = 0;
                    if let Err(msg) = crate::output::redirect(None) {
                        self.error(&msg);
                        outcome.failed = true;
                    }
                }
                _ => {}
            }
            if !ok && self.bail {
                outcome.quit = true;
                return outcome;
            }
            // Output that cannot be written ends the run: quietly for a closed pipe, with an
            // error (reported once, by `main`) otherwise.
            if let Some(failure) = crate::output::failure() {
                outcome.failed |= failure != crate::output::Failure::Closed;
                outcome.quit = true;
                return outcome;
            }
        }
        outcome
    }

    /// The screen's rows when long results should go through the pager.
    fn pager_rows(&self) -> Option<usize> {
        if !(self.pager && self.interactive) || crate::output::redirected() {
            return None;
        }
        crate::output::terminal_rows()
    }

    fn query_options(&self) -> QueryOptions {
        let mut options = self.options.clone();
        options.populate_index_metrics = self.metrics;
        options.parameters = self.params.iter().map(|(k, v)| (k.clone(), v.clone())).collect::<HashMap<_, _>>();
        options
    }

    /// A SQL statement: a query, or `EXPLAIN [ANALYZE] query`.
    fn sql(&mut self, sql: &str) -> bool {
        let (explain_mode, query) = strip_explain(sql);
        let result = match explain_mode {
            Some(analyze) => self.explain(query, analyze),
            None => self.query(query),
        };
        match result {
            Ok(()) => true,
            Err(msg) => {
                self.error(&msg);
                false
            }
        }
    }

    fn explain(&mut self, sql: &str, analyze: bool) -> Result<(), String> {
        let client = ContainerClient::from_container(self.query_container(sql)?);
        let (sql, page_size) = (sql.to_string(), self.page_size);
        let explained = self.on_worker(self.query_options(), move |mut options| {
            options.max_item_count = page_size;
            client.explain(sql.as_str(), options, analyze).map_err(|e| e.to_string())
        })?;
        let _ = writeln!(crate::output::stdout(), "{explained}");
        Ok(())
    }

    fn query(&mut self, sql: &str) -> Result<(), String> {
        let container = self.query_container(sql)?;
        let started = Instant::now();
        let client = ContainerClient::from_container(container);
        let star = cosmoql::parse(sql)
            .map(|q| matches!(q.select.projection, cosmoql::parser::ast::Projection::Star(_)))
            .unwrap_or(false);
        let mut printer = Printer {
            mode: self.mode,
            pretty: self.colored || self.interactive,
            // A file (`.output`) gets no colours.
            colored: self.colored && !crate::output::redirected(),
            star,
            max_rows: self.max_rows,
            display: self.display.clone(),
            kept: Vec::new(),
            columns: None,
            warned: false,
            total: 0,
            buf: Vec::new(),
            cancel: None,
            page_rows: self.pager_rows(),
        };
        let (sql, page_size) = (sql.to_string(), self.page_size);
        // Results are printed as they come (a table keeps its first `maxrows` rows and counts the
        // rest), on the query's thread: no result set is held whole.
        let (summary, results, long) = self.on_worker(self.query_options(), move |mut options| {
            options.max_item_count = page_size;
            // After Ctrl-C nothing more is printed, even what the engine had already produced.
            printer.cancel = options.cancel.clone();
            match client.query_pages::<Value>(sql.as_str(), options).for_each(|item| printer.push(item)) {
                Ok(summary) => {
                    let results = printer.total;
                    let long = printer.finish();
                    Ok((summary, results, long))
                }
                Err(e) => {
                    printer.abort();
                    Err(e.to_string())
                }
            }
        })?;
        let elapsed = started.elapsed();
        if let Some(text) = long {
            // On this thread, so Ctrl-C in the pager never races a prompt.
            crate::output::page(&text);
        }
        let pages = summary.pages;
        let mut lines = Vec::new();
        if self.metrics {
            lines.extend(query_stats(&summary.metrics, summary.index_metrics.as_ref(), results, pages));
        }
        if self.timing {
            lines.push(format!("{:.1} ms", elapsed.as_secs_f64() * 1000.0));
        }
        for text in lines {
            if self.colored {
                self.say(&format!("{}{text}{}", color::DIM, color::RESET));
            } else {
                self.say(&text);
            }
        }
        Ok(())
    }

    /// Runs `work` on a worker thread, so Ctrl-C can give the prompt back: the query's cancel flag
    /// (set in the options `work` gets) stops every producer at its next item.
    fn on_worker<R: Send + 'static>(
        &self,
        options: QueryOptions,
        work: impl FnOnce(QueryOptions) -> Result<R, String> + Send + 'static,
    ) -> Result<R, String> {
        INTERRUPTED.store(false, Ordering::SeqCst);
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let mut options = options;
        options.cancel = Some(Arc::clone(&cancel));
        std::thread::Builder::new()
            .name("query".into())
            .stack_size(16 << 20)
            .spawn(move || {
                let _ = tx.send(work(options));
            })
            .map_err(|e| format!("cannot start the query: {e}"))?;
        loop {
            match rx.recv_timeout(Duration::from_millis(25)) {
                Ok(result) => return result,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if INTERRUPTED.swap(false, Ordering::SeqCst) {
                        cancel.store(true, Ordering::SeqCst);
                        return Err("query cancelled (Ctrl-C)".into());
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err("the query thread stopped unexpectedly".into()),
            }
        }
    }

    // ---- commands ------------------------------------------------------------------------------

    fn command(&mut self, line: &str) -> Result<Flow, String> {
        let line = line.trim().trim_end_matches(';').trim_end();
        let (name, rest) = match line.find(char::is_whitespace) {
            Some(i) => (&line[..i], line[i..].trim()),
            None => (line, ""),
        };
        let args: Vec<&str> = rest.split_whitespace().collect();
        match name {
            ".quit" | ".exit" | ".q" => {
                return match args.as_slice() {
                    [] => Ok(Flow::Quit(None)),
                    [n] => n
                        .parse::<u8>()
                        .map(|n| Flow::Quit(Some(n)))
                        .map_err(|_| format!("{name} takes an exit status from 0 to 255, not `{n}`")),
                    _ => Err(format!("usage: {name} [STATUS]")),
                };
            }
            ".help" | ".h" | ".?" => match args[..] {
                [] => {
                    let _ = writeln!(crate::output::stdout(), "{HELP}");
                }
                [topic] => {
                    let topic = if topic.starts_with('.') { topic.to_string() } else { format!(".{topic}") };
                    let text = help_for(&topic).ok_or_else(|| format!("no command {topic} (.help lists them)"))?;
                    let _ = writeln!(crate::output::stdout(), "{text}");
                }
                _ => return Err("usage: .help [COMMAND]".into()),
            },
            ".output" | ".once" => {
                let path = unquote(rest);
                if path.is_empty() {
                    if name == ".once" {
                        return Err("usage: .once FILE".into());
                    }
                    crate::output::redirect(None)?;
                } else {
                    crate::output::redirect(Some(&path))?;
                    self.once = if name == ".once" { 2 } else { 0 };
                }
            }
            ".read" => {
                let path = unquote(rest);
                if path.is_empty() {
                    return Err("usage: .read FILE".into());
                }
                if self.reading >= MAX_READ_DEPTH {
                    return Err(format!(".read nested deeper than {MAX_READ_DEPTH} files (a file that reads itself?)"));
                }
                let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
                let outer = self.source.replace(path.clone());
                self.reading += 1;
                let outcome = self.run_input(&text);
                self.reading -= 1;
                self.source = outer;
                if outcome.quit {
                    return Ok(Flow::Quit(outcome.exit_code));
                }
                if outcome.failed {
                    return Err(format!("{path}: a statement failed"));
                }
            }
            ".containers" | ".tables" => self.containers(),
            ".use" => {
                let [name] = args[..] else { return Err("usage: .use NAME".into()) };
                self.db.container(name).map_err(|e| e.to_string())?;
                self.current = Some(name.to_string());
                self.refresh_vocabulary();
                self.say(&format!("using {name}"));
            }
            ".create" => {
                // A quoted path segment may hold spaces: `.create t /"a b"`.
                let words = words(rest);
                self.create(&words.iter().map(String::as_str).collect::<Vec<_>>())?
            }
            ".drop" => {
                let [name] = args[..] else { return Err("usage: .drop NAME".into()) };
                self.db.delete_container(name).map_err(|e| e.to_string())?;
                if self.current.as_deref() == Some(name) {
                    self.current = None;
                }
                self.refresh_vocabulary();
                self.say(&format!("dropped {name}"));
            }
            ".import" => {
                if rest.is_empty() {
                    return Err("usage: .import FILE".into());
                }
                self.import(rest)?;
            }
            ".export" => {
                if rest.is_empty() {
                    return Err("usage: .export FILE".into());
                }
                let container = self.container()?;
                let file = File::create(rest).map_err(|e| format!("cannot create {rest}: {e}"))?;
                let n =
                    container.export_ndjson(BufWriter::new(file)).map_err(|e| format!("cannot write {rest}: {e}"))?;
                self.say(&format!("exported {n} items to {rest}"));
            }
            ".explain" => {
                if rest.is_empty() {
                    return Err("usage: .explain SQL".into());
                }
                let (analyze, sql) = match rest.split_once(char::is_whitespace) {
                    Some((w, sql)) if w.eq_ignore_ascii_case("analyze") => (true, sql),
                    _ => (false, rest),
                };
                self.explain(sql, analyze)?;
            }
            ".stats" => self.stats()?,
            ".changes" => self.changes(rest)?,
            ".skew" => self.skew()?,
            ".throughput" => self.throughput(rest)?,
            ".advise" => {
                let container = self.container()?;
                let client = ContainerClient::from_container(container);
                let ranked = if rest.is_empty() {
                    client.advise_partition_key(None)
                } else {
                    let workload = cosmoql::read_workload(std::path::Path::new(rest))?;
                    let ranked = client.advise_partition_key_for(None, &workload).map_err(|e| e.to_string())?;
                    ranked.into_iter().map(|(c, _)| c).collect()
                };
                let mut out = crate::output::stdout();
                let _ = write!(out, "{}", cosmoql::storage::advisor::render(&ranked, 10));
            }
            ".policy" => {
                let container = self.container()?;
                if rest.is_empty() {
                    let text = to_json_string(&container.indexing_policy().to_json()).unwrap_or_default();
                    let _ = writeln!(crate::output::stdout(), "{}", render::printable(&text));
                    let progress = container.index_transformation_progress();
                    if progress < 100 {
                        self.say(&format!(
                            "index transformation {progress}% (partitions not yet transformed answer by scanning)"
                        ));
                    }
                } else {
                    let json = parse_json(rest).map_err(|e| format!("the policy is not JSON: {e}"))?;
                    let policy = IndexingPolicy::from_json(&json).map_err(|e| e.to_string())?;
                    container.replace_indexing_policy(policy);
                    container.persist_properties().map_err(|e| e.to_string())?;
                    // The transformation runs in the background; `.policy` shows how far it is.
                    let background = Arc::clone(&container);
                    std::thread::spawn(move || background.transform_indexes(usize::MAX));
                    self.say(
                        "indexing policy replaced; indexes are rebuilt in the background (.policy shows progress)",
                    );
                }
            }
            ".mode" => match args[..] {
                [name] => {
                    self.mode =
                        Mode::parse(name).ok_or_else(|| format!("unknown mode `{name}`: one of {}", Mode::NAMES))?
                }
                [] => self.say(self.mode.name()),
                _ => return Err(format!("usage: .mode {}", Mode::NAMES)),
            },
            ".headers" => self.display.headers = on_off(&args, ".headers")?,
            ".nullvalue" => self.display.null = unquote(rest),
            ".undefinedvalue" => self.display.undefined = unquote(rest),
            ".set" => self.set(&args, rest)?,
            ".metrics" => self.metrics = on_off(&args, ".metrics")?,
            ".timing" | ".timer" => self.timing = on_off(&args, name)?,
            ".pager" => self.pager = on_off(&args, ".pager")?,
            ".param" => {
                let (pname, json) = match rest.split_once(char::is_whitespace) {
                    Some((n, j)) => (n, j.trim()),
                    None => (rest, ""),
                };
                let pname = pname.trim_start_matches('@');
                if pname.is_empty() {
                    return Err("usage: .param @name JSON".into());
                }
                if json.is_empty() {
                    if self.params.remove(pname).is_none() {
                        return Err(format!("no parameter @{pname}"));
                    }
                } else {
                    let value = parse_json(json).map_err(|e| {
                        let hint = quote_hint(json)
                            .map(|q| format!("; a string is quoted: .param @{pname} {q}"))
                            .unwrap_or_default();
                        format!("the value of @{pname}, `{json}`, is {e}{hint}")
                    })?;
                    self.params.insert(pname.to_string(), value);
                }
            }
            ".params" => {
                if self.params.is_empty() {
                    self.say("no parameters (.param @name JSON)");
                }
                for (k, v) in &self.params {
                    let _ = writeln!(crate::output::stdout(), "@{k} = {}", to_json_string(v).unwrap_or_default());
                }
            }
            other => return Err(format!("unknown command {other}; .help lists the commands")),
        }
        Ok(Flow::Continue)
    }

    fn containers(&self) {
        let mut out = crate::output::stdout();
        for id in self.db.container_ids() {
            let Ok(c) = self.db.container(&id) else { continue };
            let mark = if self.current.as_deref() == Some(id.as_str()) { "*" } else { " " };
            let _ = writeln!(
                out,
                "{mark} {id:<16} {:>8} items  {:>3} partitions  key {}",
                c.item_count(),
                c.partition_count(),
                describe_key(c.partition_key())
            );
        }
    }

    fn create(&mut self, args: &[&str]) -> Result<(), String> {
        let usage = "usage: .create NAME [/path ...] | NAME --concat /a,/b [SEP] | NAME --random /a N [SEED] | NAME --hash /a /b N";
        let (&name, rest) = args.split_first().ok_or(usage)?;
        let path = |p: &str| PartitionKeyPath::parse(p).map_err(|e| e.to_string());
        let number = |t: &str, what: &str| t.parse::<u32>().map_err(|_| format!("{what} must be a number, not {t}"));
        let definition = match rest {
            ["--concat", paths, more @ ..] => {
                let sep = match more {
                    [] => "-".to_string(),
                    [s] => s.to_string(),
                    _ => return Err(usage.into()),
                };
                let paths = paths.split(',').map(path).collect::<Result<Vec<_>, _>>()?;
                PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::Concat { paths, separator: sep }))
            }
            ["--random", base, buckets, more @ ..] => {
                let seed = match more {
                    [] => 42,
                    [s] => s.parse::<u64>().map_err(|_| format!("the seed must be a number, not {s}"))?,
                    _ => return Err(usage.into()),
                };
                PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::RandomSuffix {
                    base: path(base)?,
                    buckets: number(buckets, "the bucket count")?,
                    seed,
                }))
            }
            ["--hash", base, source, buckets] => {
                PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::HashSuffix {
                    base: path(base)?,
                    source: path(source)?,
                    buckets: number(buckets, "the bucket count")?,
                }))
            }
            paths if paths.iter().all(|p| p.starts_with('/')) => PartitionKeyDefinition::from_paths(paths),
            _ => return Err(usage.into()),
        }
        .map_err(|e| e.to_string())?;
        let described = describe_key(&definition);
        self.db.create_container(name, definition, ContainerSettings::default()).map_err(|e| e.to_string())?;
        self.current = Some(name.to_string());
        self.refresh_vocabulary();
        self.say(&format!("created {name} (key {described}); using it"));
        Ok(())
    }

    fn import(&mut self, path: &str) -> Result<(), String> {
        let container = self.container()?;
        let file = File::open(path).map_err(|e| format!("cannot open {path}: {e}"))?;
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let bar = ProgressBar::new(len);
        bar.set_style(
            ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
                .map_err(|e| e.to_string())?
                .progress_chars("=> "),
        );
        bar.set_message(path.to_string());
        let started = Instant::now();
        let reader = BufReader::with_capacity(1 << 20, Counting { inner: file, bar: bar.clone() });
        // Ctrl-C (the handler sets INTERRUPTED) stops the import between batches.
        INTERRUPTED.store(false, Ordering::SeqCst);
        let result = container.import_until(reader, ImportOptions::default(), &INTERRUPTED, |_| {});
        bar.finish_and_clear();
        let summary = match result {
            Ok(summary) => summary,
            Err(e) if INTERRUPTED.swap(false, Ordering::SeqCst) => {
                self.refresh_vocabulary();
                return Err(format!(
                    "{path}: import cancelled (Ctrl-C) after {}; they stay in {} ({} in all)",
                    plural(e.summary.imported, "item", "items"),
                    container.id(),
                    plural(container.item_count() as u64, "item", "items")
                ));
            }
            Err(e) => return Err(format!("{path}: {e}")),
        };
        for problem in summary.problems.iter().take(10) {
            let _ = writeln!(io::stderr(), "{path}: {}", render::printable(&problem.to_string()));
        }
        if summary.skipped + summary.failed > 10 {
            let _ = writeln!(io::stderr(), "{path}: ... and {} more problems", summary.skipped + summary.failed - 10);
        }
        self.refresh_vocabulary();
        self.say(&format!(
            "imported {} into {}, skipped {}, failed {} ({:.2} s); {}, {}",
            plural(summary.imported, "item", "items"),
            container.id(),
            summary.skipped,
            summary.failed,
            started.elapsed().as_secs_f64(),
            plural(container.item_count() as u64, "item", "items"),
            plural(container.partition_count() as u64, "physical partition", "physical partitions")
        ));
        Ok(())
    }

    fn set(&mut self, args: &[&str], rest: &str) -> Result<(), String> {
        let positive = |t: &str, what: &str| -> Result<Option<usize>, String> {
            if t == "off" {
                return Ok(None);
            }
            match t.parse::<usize>() {
                Ok(n) if n > 0 => Ok(Some(n)),
                _ => Err(format!("{what} must be a positive number or off")),
            }
        };
        match args {
            [] => {
                let mut out = crate::output::stdout();
                let _ = writeln!(out, "maxdop          {}", self.options.max_degree_of_parallelism);
                let _ = writeln!(out, "maxbuffered     {}", opt(self.options.max_buffered_item_count));
                let _ = writeln!(out, "pagesize        {}", opt(self.page_size));
                let pk = self.options.partition_key.as_ref().map_or("off".to_string(), |k| k.to_string());
                let _ = writeln!(out, "pk              {pk}");
                let _ = writeln!(
                    out,
                    "crosspartition  {}",
                    if self.options.enable_cross_partition { "on" } else { "off" }
                );
                let _ = writeln!(out, "maxrows         {}", self.max_rows);
                let budget = self.options.memory_budget.unwrap_or(cosmoql::executor::DEFAULT_MEMORY_BUDGET);
                let _ = writeln!(out, "budget          {budget}");
                let _ = writeln!(out, "mode            {}", self.mode.name());
                let _ = writeln!(out, "headers         {}", if self.display.headers { "on" } else { "off" });
                let _ = writeln!(out, "nullvalue       {:?}", self.display.null);
                let _ = writeln!(out, "undefinedvalue  {:?}", self.display.undefined);
                let _ = writeln!(out, "metrics         {}", if self.metrics { "on" } else { "off" });
                let _ = writeln!(out, "timing          {}", if self.timing { "on" } else { "off" });
            }
            ["maxdop", n] => {
                let n: i32 = n.parse().map_err(|_| "maxdop must be -1, 0 or a positive number".to_string())?;
                if n < -1 {
                    return Err("maxdop must be -1, 0 or a positive number".into());
                }
                self.options.max_degree_of_parallelism = n;
            }
            ["maxbuffered", n] => self.options.max_buffered_item_count = positive(n, "maxbuffered")?,
            ["pagesize", n] => self.page_size = positive(n, "pagesize")?,
            ["maxrows", n] => self.max_rows = positive(n, "maxrows")?.unwrap_or(usize::MAX),
            ["budget", n] => self.options.memory_budget = positive(n, "budget")?.map(|b| b as u64),
            ["crosspartition", _] => self.options.enable_cross_partition = on_off(&args[1..], ".set crosspartition")?,
            ["pk", "off"] => self.options.partition_key = None,
            ["pk", ..] => {
                let json = rest["pk".len()..].trim();
                self.options.partition_key = Some(PartitionKey::parse_json(json).map_err(|e| format!("pk: {e}"))?);
            }
            _ => return Err(
                "usage: .set maxdop N | maxbuffered N|off | pagesize N|off | pk JSON|off | crosspartition on|off | maxrows N | budget BYTES|off"
                    .into(),
            ),
        }
        Ok(())
    }

    /// `.throughput [off | N | autoscale N | burst on|off | redistribute ID=RU... | even]`.
    fn throughput(&self, args: &str) -> Result<(), String> {
        use cosmoql::storage::Provisioned;
        let client = ContainerClient::from_container(self.container()?);
        let words: Vec<&str> = args.split_whitespace().collect();
        let number = |w: &str| w.parse::<f64>().map_err(|_| format!("`{w}` is not a number of RU/s"));
        let err = |e: cosmoql::Error| e.to_string();
        match words.as_slice() {
            [] => {}
            ["off"] => {
                client.container().set_throughput(None);
                client.container().persist_properties().map_err(|e| e.to_string())?;
            }
            ["autoscale", max] => {
                drop(client.replace_throughput(Provisioned::Autoscale { max: number(max)? }).map_err(err)?)
            }
            ["burst", on @ ("on" | "off")] => client.set_burst_capacity(*on == "on").map_err(err)?,
            ["even"] => drop(client.reset_throughput_distribution().map_err(err)?),
            ["redistribute", targets @ ..] if !targets.is_empty() => {
                let mut list = Vec::new();
                for t in targets {
                    let (id, ru) = t.split_once('=').ok_or(format!("`{t}`: write PARTITION=RU, e.g. 0=4000"))?;
                    let id = id.parse::<u32>().map_err(|_| format!("`{id}` is not a partition id"))?;
                    list.push((id, number(ru)?));
                }
                drop(client.redistribute_throughput(&list).map_err(err)?);
            }
            [ru] => drop(client.replace_throughput(Provisioned::Manual(number(ru)?)).map_err(err)?),
            _ => {
                return Err(
                    "usage: .throughput [off | RU | autoscale MAX | burst on|off | redistribute ID=RU... | even]"
                        .into(),
                )
            }
        }
        let mut out = crate::output::stdout();
        match client.read_throughput() {
            None => {
                let _ = writeln!(out, "no provisioned throughput: requests are never throttled");
            }
            Some(t) => {
                let _ = writeln!(
                    out,
                    "{}{}{}; minimum {} RU/s, up to {} RU/s without splits",
                    t.provisioned,
                    if t.shared { ", shared by the database's containers" } else { "" },
                    if t.burst { ", burst capacity on" } else { "" },
                    t.minimum,
                    t.instant_maximum
                );
                let per: Vec<String> = t.per_partition.iter().map(|(id, ru)| format!("{id}: {ru:.0}")).collect();
                let policy = if t.custom_distribution { "custom" } else { "even" };
                let _ = writeln!(out, "{} physical partitions ({policy}), RU/s each: {}", t.partitions, per.join(", "));
            }
        }
        Ok(())
    }

    /// `.changes [now | reset] [N]`: the current container's change feed since the last
    /// `.changes` (from the beginning the first time): each changed item once, in its latest
    /// version, at most N (default 20) at a time.
    fn changes(&mut self, args: &str) -> Result<(), String> {
        use cosmoql::storage::{ChangeFeedStart, FeedRange};
        let container = self.container()?;
        let name = container.id().to_string();
        let client = ContainerClient::from_container(container);
        let mut max = 20;
        for word in args.split_whitespace() {
            match word {
                "reset" => {
                    self.changes.remove(&name);
                    self.say("the change feed of this container starts from the beginning again");
                    return Ok(());
                }
                "now" => {
                    let page = client
                        .read_change_feed::<Value>(&FeedRange::All, ChangeFeedStart::Now, None, 1)
                        .map_err(|e| e.to_string())?;
                    self.changes.insert(name, page.continuation);
                    self.say("the change feed of this container starts now: `.changes` shows what is written next");
                    return Ok(());
                }
                n => max = n.parse::<usize>().map_err(|_| format!("usage: .changes [now | reset] [N], not `{n}`"))?,
            }
        }
        let token = self.changes.get(&name).cloned();
        let page = client
            .read_change_feed::<Value>(&FeedRange::All, ChangeFeedStart::Beginning, token.as_deref(), max)
            .map_err(|e| e.to_string())?;
        let mut out = crate::output::stdout();
        for item in &page.items {
            let _ = writeln!(out, "{}", render::printable(&to_json_string(item).unwrap_or_default()));
        }
        let n = page.items.len();
        self.changes.insert(name, page.continuation);
        self.say(&match n {
            0 => "no changes since the last `.changes`".to_string(),
            1 => "1 change".to_string(),
            n if n == max => format!("{n} changes (more may follow: `.changes` again)"),
            n => format!("{n} changes"),
        });
        Ok(())
    }

    fn skew(&self) -> Result<(), String> {
        let container = self.container()?;
        let report = cosmoql::storage::SkewReport::of(&container, 10);
        let mut out = crate::output::stdout();
        let _ = write!(out, "{report}");
        Ok(())
    }

    fn stats(&self) -> Result<(), String> {
        let container = self.container()?;
        let parts = container.partitions();
        let total_items: usize = parts.iter().map(|p| p.items).sum();
        let total_bytes: u64 = parts.iter().map(|p| p.bytes).sum();
        let max_items = parts.iter().map(|p| p.items).max().unwrap_or(0).max(1);
        let max_bytes = parts.iter().map(|p| p.bytes).max().unwrap_or(0).max(1);
        let mut out = crate::output::stdout();
        let _ = writeln!(
            out,
            "{}: {} items, {} in {} physical partitions ({} splits), key {}",
            container.id(),
            total_items,
            render::bytes(total_bytes),
            parts.len(),
            container.split_count(),
            describe_key(container.partition_key())
        );
        let index = container.index_stats();
        let per_item = |bytes: u64| if total_items == 0 { 0 } else { bytes / total_items as u64 };
        let _ = writeln!(
            out,
            "memory: data {} ({} B per item), indexes {} ({} B per item, {} entries, {} keys){}",
            render::bytes(total_bytes),
            per_item(total_bytes),
            render::bytes(index.bytes),
            per_item(index.bytes),
            index.entries,
            index.keys,
            match container.index_transformation_progress() {
                100 => String::new(),
                p => format!(", index transformation {p}%"),
            }
        );
        let _ = writeln!(out, "\n  {:<19} {:<32}  bytes", "physical partition", "items");
        for p in &parts {
            let _ = writeln!(
                out,
                "  {:>3} ({:>5} logical) {} {:>7}  {} {:>9}",
                p.id,
                p.logical_partitions,
                render::bar(p.items as f64 / max_items as f64, 24),
                p.items,
                render::bar(p.bytes as f64 / max_bytes as f64, 16),
                render::bytes(p.bytes)
            );
        }
        // Logical partition sizes: one scan of the container.
        let mut logical: HashMap<String, (u64, u64)> = HashMap::new();
        let definition = container.partition_key();
        for item in container.scan().items() {
            let key = definition.key_of(item.doc.root()).map(|k| k.to_string()).unwrap_or_else(|_| "?".into());
            let e = logical.entry(key).or_default();
            e.0 += 1;
            e.1 += item.doc.len() as u64;
        }
        let mut largest: Vec<(String, (u64, u64))> = logical.into_iter().collect();
        largest.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then_with(|| a.0.cmp(&b.0)));
        let _ = writeln!(out, "\nlargest logical partitions ({} in all)", largest.len());
        let top = largest.first().map_or(1, |l| l.1 .0).max(1);
        for (key, (items, bytes)) in largest.iter().take(10) {
            let _ = writeln!(
                out,
                "  {:<24} {} {:>7} items {:>9}",
                truncate(&render::printable(key), 24),
                render::bar(*items as f64 / top as f64, 24),
                items,
                render::bytes(*bytes)
            );
        }
        if total_items > 0 && parts.len() > 1 {
            let hottest = parts.iter().max_by_key(|p| p.items).expect("at least one partition");
            let share = hottest.items as f64 / total_items as f64;
            let even = 1.0 / parts.len() as f64;
            let _ = writeln!(
                out,
                "\nskew: partition {} holds {:.0}% of the items (an even spread would be {:.0}%, {:.1}x)",
                hottest.id,
                share * 100.0,
                even * 100.0,
                share / even
            );
        }
        if let Some((key, (items, _))) = largest.first() {
            if total_items > 0 {
                let _ = writeln!(
                    out,
                    "skew: logical partition {} holds {:.1}% of the items (the mean is {:.1} items)",
                    render::printable(key),
                    *items as f64 * 100.0 / total_items as f64,
                    total_items as f64 / largest.len().max(1) as f64
                );
            }
        }
        Ok(())
    }
}

/// Prints a statement's results as they come. The drawn modes keep the first `max_rows` rows
/// (the others are counted); the others write result by result, in bounded chunks (CSV and TSV
/// take their columns from the first results, up to [`COLUMNS_FROM`]).
struct Printer {
    mode: Mode,
    /// Pretty JSON (a terminal, or an interactive session), else one compact array.
    pretty: bool,
    colored: bool,
    /// `SELECT *`: tables leave the system properties out.
    star: bool,
    max_rows: usize,
    display: Display,
    kept: Vec<Value>,
    /// CSV and TSV: the columns, once the header is written.
    columns: Option<Columns>,
    /// A result had properties after the columns were fixed (said once).
    warned: bool,
    total: usize,
    buf: Vec<u8>,
    /// The query's cancel flag: once set, nothing more is printed.
    cancel: Option<Arc<AtomicBool>>,
    /// The screen's rows, when a drawn result taller than them goes to the pager.
    page_rows: Option<usize>,
}

/// CSV and TSV take their columns from this many first results.
const COLUMNS_FROM: usize = 1000;

impl Printer {
    /// Takes one result; false once standard output has failed or the query was cancelled (the
    /// query stops).
    fn push(&mut self, item: Value) -> bool {
        if self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)) {
            return false;
        }
        // Every mode shows what the JSON holds: undefined and non-finite numbers (1/0) have no
        // JSON form, so a property with one is left out and a result that is one is dropped.
        let Some(item) = cosmoql::value::json::json_visible(&item) else { return true };
        self.total += 1;
        match self.mode {
            mode if mode.is_drawn() => {
                if self.kept.len() < self.max_rows {
                    self.kept.push(item);
                }
            }
            Mode::Csv | Mode::Tsv => {
                if self.columns.is_none() {
                    self.kept.push(item);
                    if self.kept.len() < COLUMNS_FROM {
                        return true;
                    }
                    self.start_delimited();
                } else {
                    self.delimited_row(&item);
                }
            }
            Mode::Ndjson => {
                if let Some(text) = to_json_string(&item) {
                    self.buf.extend_from_slice(text.as_bytes());
                    self.buf.push(b'\n');
                }
            }
            _ => {
                let text = if self.pretty {
                    render::json_pretty(&item, self.colored)
                } else {
                    to_json_string(&item).unwrap_or_default()
                };
                if text.is_empty() {
                    // No JSON form (the engine refuses such results): never an empty element.
                    self.total -= 1;
                    return true;
                }
                self.buf.extend_from_slice(match (self.total, self.pretty) {
                    (1, true) => b"[\n",
                    (1, false) => b"[",
                    (_, true) => b",\n",
                    (_, false) => b",",
                });
                if self.pretty {
                    for (i, line) in text.lines().enumerate() {
                        if i > 0 {
                            self.buf.push(b'\n');
                        }
                        self.buf.extend_from_slice(b"  ");
                        self.buf.extend_from_slice(line.as_bytes());
                    }
                } else {
                    self.buf.extend_from_slice(text.as_bytes());
                }
            }
        }
        if self.buf.len() >= 1 << 16 {
            return self.flush();
        }
        true
    }

    /// CSV/TSV: fixes the columns from the results kept so far, writes the header and them.
    fn start_delimited(&mut self) {
        let columns = Columns::of(&self.kept, self.star);
        if self.display.headers {
            let header = crate::formats::delimited(&columns.names, self.mode);
            self.buf.extend_from_slice(header.as_bytes());
        }
        self.columns = Some(columns);
        for item in std::mem::take(&mut self.kept) {
            self.delimited_row(&item);
        }
    }

    fn delimited_row(&mut self, item: &Value) {
        let Some(columns) = &self.columns else { return };
        if !self.warned && columns.misses(item) {
            self.warned = true;
            let _ = writeln!(
                io::stderr(),
                "warning: a result has properties the first {COLUMNS_FROM} did not: {} leaves them out (.mode json \
                 shows them)",
                self.mode.name()
            );
        }
        let fields: Vec<String> =
            columns.row(item).into_iter().map(|v| crate::formats::text_of(v, &self.display)).collect();
        self.buf.extend_from_slice(crate::formats::delimited(&fields, self.mode).as_bytes());
    }

    fn flush(&mut self) -> bool {
        let ok = crate::output::stdout().write_all(&self.buf).is_ok();
        self.buf.clear();
        ok
    }

    /// The query failed: a JSON array already begun is closed (what was printed stays JSON), a
    /// table is not drawn.
    fn abort(mut self) {
        if self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)) {
            return;
        }
        if self.mode == Mode::Json && self.total > 0 {
            self.buf.extend_from_slice(if self.pretty { b"\n]\n" } else { b"]\n" });
        }
        self.flush();
    }

    /// Writes the rest; a drawn result taller than the screen is returned instead, for the pager.
    fn finish(mut self) -> Option<String> {
        let shown = &self.kept[..self.kept.len().min(self.max_rows)];
        match self.mode {
            Mode::Table | Mode::Ascii => {
                // On a terminal the table fits its width (COLUMNS when it does not say).
                let options = render::TableOptions {
                    hide_system: self.star,
                    max_rows: self.max_rows,
                    colored: self.colored,
                    max_width: crate::output::terminal_columns(),
                    ascii: self.mode == Mode::Ascii,
                    display: self.display.clone(),
                };
                let text = render::table_of(&self.kept, self.total, &options);
                if self.page_rows.is_some_and(|rows| text.lines().count() >= rows) {
                    self.flush();
                    return Some(text);
                }
                self.buf.extend_from_slice(text.as_bytes());
            }
            Mode::Line | Mode::Markdown => {
                let columns = Columns::of(shown, self.star);
                let mut text = if self.mode == Mode::Line {
                    crate::formats::line_mode(shown, &columns, &self.display)
                } else {
                    crate::formats::markdown(shown, &columns, &self.display)
                };
                if self.total > shown.len() {
                    text.push_str(&format!("({} rows, the first {} shown)\n", self.total, shown.len()));
                }
                if self.page_rows.is_some_and(|rows| text.lines().count() >= rows) {
                    self.flush();
                    return Some(text);
                }
                self.buf.extend_from_slice(text.as_bytes());
            }
            Mode::Csv | Mode::Tsv => {
                if self.columns.is_none() && !self.kept.is_empty() {
                    self.start_delimited();
                }
            }
            Mode::Ndjson => {}
            Mode::Json => self.buf.extend_from_slice(match (self.total, self.pretty) {
                (0, _) => b"[]\n",
                (_, true) => b"\n]\n",
                (_, false) => b"]\n",
            }),
        }
        self.flush();
        None
    }
}

/// The query's statistics as the Data Explorer's "Query Stats" shows them: charge, partitions,
/// documents retrieved and output with their sizes, index entries, the time of each phase, and
/// the indexes used and those that would help.
fn query_stats(
    m: &cosmoql::executor::QueryMetrics,
    index: Option<&Value>,
    results: usize,
    pages: usize,
) -> Vec<String> {
    let ms = |ns: u64| format!("{:.2} ms", ns as f64 / 1e6);
    let ratio = if m.retrieved_document_count == 0 {
        1.0
    } else {
        (m.output_document_count as f64 / m.retrieved_document_count as f64).min(1.0)
    };
    let mut out = vec![
        format!("request charge      {} RU", format_number((m.request_charge * 100.0).round() / 100.0)),
        format!(
            "partitions          {} of {} read",
            m.partitions_touched,
            plural(m.physical_partitions as u64, "physical partition", "physical partitions")
        ),
        format!(
            "retrieved           {} ({} bytes)",
            plural(m.retrieved_document_count, "document", "documents"),
            m.retrieved_document_size
        ),
        format!(
            "output              {} ({} bytes){}",
            plural(results as u64, "result", "results"),
            m.output_document_size,
            if pages > 1 { format!(" in {pages} pages") } else { String::new() }
        ),
        format!(
            "index               {} read, utilization {:.0}%",
            plural(m.index_entries_read, "entry", "entries"),
            ratio * 100.0
        ),
        format!(
            "time                compile {}, execution {}, total {}",
            ms(m.compile_time_ns),
            ms(m.execution_time_ns),
            ms(m.compile_time_ns.saturating_add(m.execution_time_ns))
        ),
    ];
    if let Some(index) = index {
        let specs = |kind: &str| -> Vec<String> {
            let mut found = Vec::new();
            for single in index.get(kind).get("SingleIndexes").as_array().into_iter().flat_map(|a| a.iter()) {
                if let Some(spec) = single.get("IndexSpec").as_str() {
                    found.push(spec.to_string());
                }
            }
            for composite in index.get(kind).get("CompositeIndexes").as_array().into_iter().flat_map(|a| a.iter()) {
                let parts: Vec<&str> = composite
                    .get("IndexSpecs")
                    .as_array()
                    .into_iter()
                    .flat_map(|a| a.iter())
                    .filter_map(Value::as_str)
                    .collect();
                let impact =
                    composite.get("IndexImpactScore").as_str().map(|s| format!(" ({s} impact)")).unwrap_or_default();
                found.push(format!("({}){impact}", parts.join(", ")));
            }
            found
        };
        let used = specs("UtilizedIndexes");
        let potential = specs("PotentialIndexes");
        out.push(format!("indexes used        {}", if used.is_empty() { "none".into() } else { used.join(", ") }));
        if !potential.is_empty() {
            out.push(format!("indexes that help   {}", potential.join(", ")));
        }
    }
    out
}

/// `.nullvalue "TEXT"` and `.nullvalue TEXT` alike.
fn unquote(text: &str) -> String {
    let t = text.trim();
    t.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(t).to_string()
}

/// Splits a command's arguments at whitespace outside double quotes; the quotes stay in the words
/// (a partition key path keeps its quoted segments: `/"a b"/c`).
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut escaped = false;
    for c in text.chars() {
        if c.is_whitespace() && !quoted {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            continue;
        }
        if quoted && c == '\\' && !escaped {
            escaped = true;
            word.push(c);
            continue;
        }
        if c == '"' && !escaped {
            quoted = !quoted;
        }
        escaped = false;
        word.push(c);
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

fn opt(v: Option<usize>) -> String {
    v.map_or("off".to_string(), |n| n.to_string())
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max - 1).collect();
        s.push('…');
        s
    }
}

fn on_off(args: &[&str], what: &str) -> Result<bool, String> {
    match args {
        ["on"] => Ok(true),
        ["off"] => Ok(false),
        _ => Err(format!("usage: {what} on|off")),
    }
}

/// A partition key definition in words: `/deviceId`, `/a, /b (hierarchical)`, `none`, synthetic.
pub fn describe_key(d: &PartitionKeyDefinition) -> String {
    if d.is_none() {
        return "none".into();
    }
    if let Some(s) = d.synthetic_key() {
        let what = match &s.kind {
            SyntheticKind::Concat { paths, separator } => format!(
                "concat({}) with {separator:?}",
                paths.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", ")
            ),
            SyntheticKind::RandomSuffix { base, buckets, .. } => format!("{base} + random suffix 1..{buckets}"),
            SyntheticKind::HashSuffix { base, source, buckets } => format!("{base} + hash({source}) % {buckets} + 1"),
        };
        return format!("/{} (synthetic: {what})", s.property);
    }
    let paths: Vec<String> = d.paths().iter().map(|p| p.to_string()).collect();
    if paths.len() > 1 {
        format!("{} (hierarchical)", paths.join(", "))
    } else {
        paths.join(", ")
    }
}

fn collect_paths(v: &Value, prefix: &str, depth: usize, out: &mut std::collections::BTreeSet<String>) {
    if depth > 4 {
        return;
    }
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter() {
                let simple = !k.is_empty()
                    && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !k.starts_with(|c: char| c.is_ascii_digit());
                if !simple {
                    continue;
                }
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                out.insert(path.clone());
                collect_paths(child, &path, depth + 1, out);
            }
        }
        Value::Array(items) => {
            for item in items.iter().take(3) {
                // Paths through arrays: `children[0].firstName`.
                collect_paths(item, &format!("{prefix}[0]"), depth + 1, out);
            }
        }
        _ => {}
    }
}

enum Flow {
    Continue,
    /// Leave, with the exit status asked for (`.exit N`).
    Quit(Option<u8>),
}

/// `EXPLAIN [ANALYZE] rest` -> (Some(analyze), rest); anything else -> (None, text).
pub fn strip_explain(sql: &str) -> (Option<bool>, &str) {
    let t = sql.trim_start();
    let word = |s: &str, w: &str| -> Option<usize> {
        let head = s.get(..w.len())?;
        let after = s[w.len()..].chars().next();
        (head.eq_ignore_ascii_case(w) && after.is_none_or(char::is_whitespace)).then_some(w.len())
    };
    match word(t, "explain") {
        Some(n) => {
            let rest = t[n..].trim_start();
            match word(rest, "analyze") {
                Some(m) => (Some(true), rest[m..].trim_start()),
                None => (Some(false), rest),
            }
        }
        None => (None, sql),
    }
}

/// One statement of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Statement {
    /// A `.command` line.
    Command(String),
    /// SQL, without its `;`.
    Sql(String),
}

/// Splits input into statements: a line starting with `.` and a letter is a command (and ends
/// a statement left open); SQL runs to a `;` outside string literals and comments, or to an empty line.
pub fn split_statements(text: &str) -> Vec<Statement> {
    let mut out = Vec::new();
    let mut current = String::new();
    // Where the statement under way starts in `text` (0-based line and character column): its
    // SQL is padded to sit there, so an error's `line L, column C` is the file's.
    let mut start: Option<(usize, usize)> = None;
    let flush = |current: &mut String, start: &mut Option<(usize, usize)>, out: &mut Vec<Statement>| {
        let sql = current.trim();
        if !sql.is_empty() {
            let (line, column) = start.unwrap_or((0, 0));
            out.push(Statement::Sql(format!("{}{}{sql}", "\n".repeat(line), " ".repeat(column))));
        }
        current.clear();
        *start = None;
    };
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('.') && trimmed[1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '?') {
            // A command line also ends a statement left without `;`.
            flush(&mut current, &mut start, &mut out);
            out.push(Statement::Command(line.trim().to_string()));
            continue;
        }
        if line.trim().is_empty() {
            flush(&mut current, &mut start, &mut out);
            continue;
        }
        let mut quotes = Quotes::default();
        let mut chars = line.chars().enumerate().peekable();
        while let Some((j, c)) = chars.next() {
            if start.is_none() && !c.is_whitespace() && c != ';' {
                start = Some((i, j));
            }
            if quotes.inside(c) {
                current.push(c);
                continue;
            }
            match c {
                '\'' | '"' => {
                    quotes.open = Some(c);
                    current.push(c);
                }
                '-' if chars.peek().map(|(_, c)| *c) == Some('-') => {
                    // A comment runs to the end of the line.
                    if current.trim().is_empty() {
                        start = None;
                    }
                    break;
                }
                ';' => flush(&mut current, &mut start, &mut out),
                _ => current.push(c),
            }
        }
        current.push('\n');
    }
    flush(&mut current, &mut start, &mut out);
    out
}

/// Whether the REPL buffer holds a complete statement: it ends with `;` (outside strings), ends
/// with an empty line, or is a `.command` or blank.
pub fn is_complete(buffer: &str) -> bool {
    let t = buffer.trim();
    if t.is_empty() || t.starts_with('.') || buffer.ends_with("\n\n") || buffer.ends_with('\n') {
        return true;
    }
    let mut quotes = Quotes::default();
    let mut last_significant = ' ';
    for line in buffer.lines() {
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if quotes.inside(c) {
                last_significant = c;
                continue;
            }
            match c {
                '\'' | '"' => quotes.open = Some(c),
                '-' if chars.peek() == Some(&'-') => break,
                c if c.is_whitespace() => continue,
                _ => {}
            }
            last_significant = c;
        }
    }
    quotes.open.is_none() && last_significant == ';'
}

/// Where a scan of SQL text stands in string literals (`'...'` or `"..."`, with backslash escapes).
#[derive(Default)]
struct Quotes {
    /// The quote of the literal the scan is in.
    open: Option<char>,
    escaped: bool,
}

impl Quotes {
    /// Whether `c` belongs to a string literal opened before it (its closing quote included),
    /// moving past it if so.
    fn inside(&mut self, c: char) -> bool {
        let Some(q) = self.open else { return false };
        if self.escaped {
            self.escaped = false;
        } else if c == '\\' {
            self.escaped = true;
        } else if c == q {
            self.open = None;
        }
        true
    }
}

/// The container names a new session's store starts with, and the store itself.
/// What [`open_store`] gives: the store, its database, the container to start in, a banner.
pub type OpenedStore = (Arc<Store>, Arc<Database>, Option<String>, String);

/// The session's store: in memory (`dir` is `None`; the demo data unless `demo` is false), or the
/// database directory `dir`, opened or created (the demo data loaded into it with `demo` when it
/// has no container yet). The REPL works in one database: the directory's first, or `demo`.
pub fn open_store(dir: Option<&std::path::Path>, demo: bool) -> Result<OpenedStore, String> {
    let started = Instant::now();
    let (store, where_) = match dir {
        None => (Arc::new(Store::new()), "demo database".to_string()),
        Some(dir) => (
            Store::open(dir, cosmoql::DurableOptions::default()).map_err(|e| e.message)?,
            format!("database {}", dir.display()),
        ),
    };
    let db = match store.database_ids().first() {
        Some(id) => store.database(id).map_err(|e| e.to_string())?,
        None => store.create_database("demo").map_err(|e| e.to_string())?,
    };
    let describe = |containers: &[Arc<Container>]| -> Vec<String> {
        containers
            .iter()
            .map(|c| {
                let n = c.partition_count();
                format!(
                    "{} ({}, key {}, {})",
                    c.id(),
                    plural(c.item_count() as u64, "item", "items"),
                    describe_key(c.partition_key()),
                    plural(n as u64, "physical partition", "physical partitions")
                )
            })
            .collect()
    };
    let existing: Vec<Arc<Container>> = db.container_ids().iter().filter_map(|id| db.container(id).ok()).collect();
    if !existing.is_empty() {
        let current = existing.first().map(|c| c.id().to_string());
        let banner =
            format!("{where_} opened in {:.2} s: {}", started.elapsed().as_secs_f64(), describe(&existing).join(", "));
        return Ok((store, db, current, banner));
    }
    if !demo {
        let what = if dir.is_some() { format!("new {where_}") } else { "empty database".to_string() };
        return Ok((store, db, None, format!("{what}: .create NAME /key, then .import FILE")));
    }
    let containers = crate::demo::load(&db)?;
    let banner =
        format!("{where_} loaded in {:.2} s: {}", started.elapsed().as_secs_f64(), describe(&containers).join(", "));
    Ok((store, db, Some("telemetry".to_string()), banner))
}

/// For a value that is not JSON but reads as a bare word (`dev-1`), the quoted string it
/// probably meant (`"dev-1"`).
pub fn quote_hint(text: &str) -> Option<String> {
    let t = text.trim();
    let bare = !t.is_empty() && !t.starts_with(['"', '\'', '{', '[']) && !t.contains(char::is_whitespace);
    bare.then(|| to_json_string(&Value::from(t)).unwrap_or_default())
}

/// `1 item`, `2 items`.
fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_split_at_semicolons_and_empty_lines() {
        let s = split_statements("select 1; select ';' from c\n.mode json\nselect\n2\n\nselect 3 -- ; no\n;");
        // Each statement is padded to where it starts in the text (errors then name the text's
        // lines and columns).
        assert_eq!(
            s,
            vec![
                Statement::Sql("select 1".into()),
                Statement::Sql(format!("{}select ';' from c", " ".repeat(10))),
                Statement::Command(".mode json".into()),
                Statement::Sql("\n\nselect\n2".into()),
                Statement::Sql("\n\n\n\n\nselect 3".into()),
            ]
        );
    }

    #[test]
    fn completeness() {
        assert!(is_complete("select 1;"));
        assert!(is_complete("select 1\n"));
        assert!(is_complete(".help"));
        assert!(!is_complete("select 1"));
        assert!(!is_complete("select ';"));
        assert!(is_complete("select ';';  "));
    }

    #[test]
    fn command_words_keep_quoted_segments() {
        assert_eq!(words(r#"t /"a b"/c  /d"#), vec![r#"t"#, r#"/"a b"/c"#, "/d"]);
        assert_eq!(words(r#"t /"a \" b""#), vec!["t", r#"/"a \" b""#]);
    }

    #[test]
    fn explain_prefix() {
        assert_eq!(strip_explain("EXPLAIN ANALYZE select 1"), (Some(true), "select 1"));
        assert_eq!(strip_explain("explain select 1"), (Some(false), "select 1"));
        assert_eq!(strip_explain("explainer"), (None, "explainer"));
    }
}
