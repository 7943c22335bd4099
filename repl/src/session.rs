//! A REPL session: the store, the current container, the settings, and what runs a statement (a
//! query, `EXPLAIN [ANALYZE] ...` or a `.command`). Used by the interactive loop and by the
//! non-interactive runs (`-c`, a file, piped statements).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use cosmoql::executor::QueryOptions;
use cosmoql::storage::{
    Container, ContainerSettings, Database, ImportOptions, IndexingPolicy, PartitionKey, PartitionKeyDefinition, Store,
};
use cosmoql::value::{parse_json, to_json_string, Value};
use cosmoql::ContainerClient;

use crate::printer::{query_stats, PrintOptions, Printer};
use crate::progress::Counting;
use crate::reports::{describe_key, plural};
use crate::statements::{quote_hint, split_statements, strip_explain, unquote, words, Statement};
use crate::text::{self, color};

/// Set by the Ctrl-C handler (interactive sessions only) while a query runs.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

use crate::formats::Display;
pub use crate::formats::Mode;

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
    /// A database directory created at the first write (see [`crate::open::Opened::pending`]).
    pending: Option<std::path::PathBuf>,
    current: Option<String>,
    pub mode: Mode,
    pub metrics: bool,
    pub timing: bool,
    /// Colours and the pretty forms (terminal output).
    pub colored: bool,
    /// Colours on standard error (errors, and a script's messages): when it is a terminal.
    colored_errors: bool,
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
    /// `.once FILE`: results go back to standard output after the next statement that prints
    /// some (a query, or an item command).
    once: bool,
    /// `.read` files being run, one inside the other.
    reading: usize,
    /// `--bail`: stop at the first statement that fails.
    pub bail: bool,
    /// `.pager on|off`: long tables go through `$PAGER` (interactive sessions on a terminal).
    pub pager: bool,
}

/// `.read` files may read others up to this depth.
const MAX_READ_DEPTH: usize = 16;

impl Session {
    /// A session over the database `opened` gives.
    pub fn new(opened: crate::open::Opened, interactive: bool, colored: bool) -> Self {
        let crate::open::Opened { store, db, pending, current, .. } = opened;
        let session = Session {
            _store: store,
            db,
            pending,
            current,
            mode: if interactive { Mode::Table } else { Mode::Json },
            metrics: false,
            timing: interactive,
            colored,
            colored_errors: text::colors_for(io::stderr().is_terminal()),
            interactive,
            options: QueryOptions::default(),
            page_size: None,
            params: BTreeMap::new(),
            max_rows: 100,
            vocabulary: Arc::new(RwLock::new(Vocabulary::default())),
            changes: BTreeMap::new(),
            source: None,
            display: Display::default(),
            once: false,
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
        let Some(name) = self.current.as_deref() else {
            let names = self.db.container_ids();
            return Err(match (&self.pending, names.as_slice()) {
                (Some(dir), _) => format!(
                    "no container: {} is a new database, not created yet (.create NAME /key creates it; a typo \
                     in its name?)",
                    dir.display()
                ),
                (None, []) => "no container in use: .create NAME /key, then .import FILE".to_string(),
                (None, names) => format!(
                    "no container in use: this database has {} ({}): choose one with .use NAME (or --use NAME)",
                    names.len(),
                    names.join(", ")
                ),
            });
        };
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

    /// A message (not a result): on standard output when interactive, else on standard error.
    fn say(&self, text: &str) {
        self.say_styled(text, None);
    }

    /// A side note (times, charges, statistics): dim on a terminal.
    fn note(&self, text: &str) {
        self.say_styled(text, Some(color::DIM));
    }

    /// [`Self::say`] in `style` where the message goes to a terminal that takes colours. The
    /// text is made printable first, so the style's own escape sequence is never escaped with
    /// it. Messages are not results: an interactive session shows them on the screen even
    /// while results go to a file (`.output`, `.once`).
    fn say_styled(&self, text: &str, style: Option<&str>) {
        let text = text::printable(text);
        let colored = if self.interactive { self.colored } else { self.colored_errors };
        let text = match style {
            Some(style) if colored => format!("{style}{text}{}", color::RESET),
            _ => text.into_owned(),
        };
        if self.interactive {
            let _ = writeln!(crate::output::screen(), "{text}");
        } else {
            let _ = writeln!(crate::output::stderr(), "{text}");
        }
    }

    fn error(&self, text: &str) {
        let text = text::printable(text);
        let text = match &self.source {
            Some(file) => format!("{file}: {text}"),
            None => text.to_string(),
        };
        let mut err = crate::output::stderr();
        if self.colored_errors {
            let _ = writeln!(err, "{}error:{} {text}", color::RED, color::RESET);
        } else {
            let _ = writeln!(err, "error: {text}");
        }
    }

    /// Runs every statement of `text` (SQL ended by `;` or an empty line, `.commands` one a line).
    pub fn run_input(&mut self, text: &str) -> Outcome {
        let mut outcome = Outcome::default();
        for statement in split_statements(text) {
            let printed = match &statement {
                Statement::Sql { .. } => true,
                Statement::Command(line) => crate::items::is_item_command(line),
            };
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
                Statement::Sql { sql, line, column } => self.sql(&sql, line, column),
            };
            outcome.failed |= !ok;
            // `.once FILE`: the next statement that prints results goes to FILE.
            if self.once && printed {
                self.once = false;
                if let Err(msg) = crate::output::redirect(None) {
                    self.error(&msg);
                    outcome.failed = true;
                }
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

    /// How results print now: the session's mode and display settings.
    fn print_options(&self, star: bool) -> PrintOptions {
        PrintOptions {
            mode: self.mode,
            pretty: self.colored || self.interactive,
            // A file (`.output`) gets no colours.
            colored: self.colored && !crate::output::redirected(),
            star,
            max_rows: self.max_rows,
            display: self.display.clone(),
            page_rows: self.pager_rows(),
        }
    }

    fn query_options(&self) -> QueryOptions {
        let mut options = self.options.clone();
        options.populate_index_metrics = self.metrics;
        options.parameters = self.params.iter().map(|(k, v)| (k.clone(), v.clone())).collect::<HashMap<_, _>>();
        options
    }

    /// A SQL statement: a query, or `EXPLAIN [ANALYZE] query`.
    /// A SQL statement that starts on the input's 0-based `line`.
    fn sql(&mut self, sql: &str, line: usize, column: usize) -> bool {
        let (explain_mode, query) = strip_explain(sql);
        let result = match explain_mode {
            Some(analyze) => self.explain(query, analyze),
            None => self.query(query),
        };
        match result {
            Ok(()) => true,
            Err(msg) => {
                let msg = crate::statements::shift_position(&msg, line, column);
                // `INSERT ...`, `DROP ...`: what does it here.
                match crate::statements::shell_hint(query) {
                    Some(hint) => self.error(&format!("{msg}\n{hint}")),
                    None => self.error(&msg),
                }
                false
            }
        }
    }

    /// `FROM families` while `telemetry` is in use runs on telemetry: said once the query ran.
    fn note_alias(&self, query: &cosmoql::parser::ast::Query) {
        let Some(current) = self.current.as_deref() else { return };
        if let Some(other) = crate::statements::other_container(query, current, &self.db.container_ids()) {
            self.say(&format!(
                "note: this ran on {current}: the name after FROM is an alias in Cosmos DB, not a container \
                 (.use {other} to query {other})"
            ));
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
        let parsed = cosmoql::parse(sql).ok();
        let star =
            parsed.as_ref().is_some_and(|q| matches!(q.select.projection, cosmoql::parser::ast::Projection::Star(_)));
        let mut printer = Printer::new(self.print_options(star));
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
        if let Some(query) = &parsed {
            self.note_alias(query);
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
            self.note(&text);
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
                    let _ = writeln!(crate::output::stdout(), "{}", crate::help::HELP);
                }
                [topic] => {
                    let topic = if topic.starts_with('.') { topic.to_string() } else { format!(".{topic}") };
                    let text = crate::help::help_for(&topic)
                        .ok_or_else(|| format!("no command {topic} (.help lists them)"))?;
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
                    self.once = name == ".once";
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
                if self.db.container(name).is_err() {
                    let names = self.db.container_ids();
                    let still = match &self.current {
                        Some(current) => format!("; still using {current}"),
                        None => String::new(),
                    };
                    return Err(match names.as_slice() {
                        [] => format!("no container `{name}`: the database has none yet (.create NAME /key){still}"),
                        _ => format!("no container `{name}` (the database has {}){still}", names.join(", ")),
                    });
                }
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
                let (upsert, file) = match rest.strip_prefix("--upsert") {
                    Some(file) if file.is_empty() || file.starts_with(char::is_whitespace) => (true, file),
                    _ => (false, rest),
                };
                let file = unquote(file);
                if file.is_empty() {
                    return Err("usage: .import [--upsert] FILE".into());
                }
                self.import(&file, upsert)?;
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
                let client = ContainerClient::from_container(self.container()?);
                let workload = match rest {
                    "" => None,
                    path => Some(cosmoql::read_workload(std::path::Path::new(path))?),
                };
                let advisor = client.key_advisor();
                let partitions = advisor.partitions(None);
                let ranked =
                    crate::advise_cmd::rank(&advisor, partitions, workload.as_ref()).map_err(|e| match rest {
                        "" => e.to_string(),
                        path => crate::advise_cmd::workload_error(std::path::Path::new(path), &e),
                    })?;
                let ranked: Vec<_> = ranked.into_iter().map(|(c, _)| c).collect();
                self.say(&crate::advise_cmd::header(&client, &advisor, partitions));
                let mut out = crate::output::stdout();
                let _ = write!(out, "{}", cosmoql::storage::advisor::render(&ranked, 10));
            }
            ".policy" => {
                let container = self.container()?;
                if rest.is_empty() {
                    let text = to_json_string(&container.indexing_policy().to_json()).unwrap_or_default();
                    let _ = writeln!(crate::output::stdout(), "{}", text::printable(&text));
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
                    self.mode = Mode::parse(name).ok_or_else(|| {
                        let closest = Mode::NAMES
                            .split('|')
                            .map(|m| (crate::usage::edit_distance(name, m), m))
                            .min()
                            .filter(|(d, _)| *d <= 2)
                            .map(|(_, m)| format!(" (did you mean {m}?)"))
                            .unwrap_or_default();
                        format!("unknown mode `{name}`{closest}: one of {}", Mode::NAMES)
                    })?
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
            other => match crate::items::parse(other, rest) {
                Some(op) => self.item(op?)?,
                None => {
                    let known = crate::help::commands();
                    let closest = known.into_iter().map(|w| (crate::usage::edit_distance(other, w), w)).min();
                    return Err(match closest {
                        Some((d, w)) if d <= 2 => format!("unknown command {other}: did you mean {w}?"),
                        _ => format!("unknown command {other}; .help lists the commands"),
                    });
                }
            },
        }
        Ok(Flow::Continue)
    }

    /// `.insert`, `.get`, ...: one item operation on the current container; the items it
    /// returns print as a query's results do, then its status and charge.
    fn item(&mut self, op: crate::items::ItemOp) -> Result<(), String> {
        let client = ContainerClient::from_container(self.container()?);
        let writes = !matches!(op, crate::items::ItemOp::Get { .. });
        let answer = crate::items::run(&client, op)?;
        if !answer.items.is_empty() {
            // Items carry their system properties: tables leave them out, as for `SELECT *`.
            let mut printer = Printer::new(self.print_options(true));
            for item in answer.items {
                printer.push(item);
            }
            if let Some(text) = printer.finish() {
                crate::output::page(&text);
            }
        }
        if let Some(note) = &answer.note {
            self.say(note);
        }
        self.note(&crate::items::status_line(answer.status, answer.charge));
        if writes {
            self.refresh_vocabulary();
        }
        Ok(())
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
        let definition = crate::container_cmd::key_definition(rest).map_err(|e| format!("{e}\n{usage}"))?;
        let described = describe_key(&definition);
        // A new database directory comes to be with its first container: once the container is
        // known to be a valid one (made in memory first), so a refused name creates nothing.
        if self.pending.is_some() {
            self.db
                .create_container(name, definition.clone(), ContainerSettings::default())
                .map_err(|e| e.to_string())?;
        }
        if let Some(dir) = self.pending.take() {
            match crate::open::create(&dir) {
                Ok((store, db)) => {
                    self._store = store;
                    self.db = db;
                    self.say(&format!("created the database directory {}", dir.display()));
                }
                Err(e) => {
                    self.pending = Some(dir);
                    return Err(e);
                }
            }
        }
        self.db.create_container(name, definition, ContainerSettings::default()).map_err(|e| e.to_string())?;
        self.current = Some(name.to_string());
        self.refresh_vocabulary();
        self.say(&format!("created {name} (key {described}); using it"));
        Ok(())
    }

    fn import(&mut self, path: &str, upsert: bool) -> Result<(), String> {
        let container = self.container()?;
        let file = File::open(path).map_err(|e| format!("cannot open {path}: {e}"))?;
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let bar = crate::progress::file_bar(len, path);
        let started = Instant::now();
        let reader = BufReader::with_capacity(1 << 20, Counting { inner: file, bar: bar.clone() });
        // Ctrl-C (the handler sets INTERRUPTED) stops the import between batches.
        INTERRUPTED.store(false, Ordering::SeqCst);
        let options = ImportOptions { upsert, ..ImportOptions::default() };
        let result = container.import_until(reader, options, &INTERRUPTED, |_| {});
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
            let _ = writeln!(crate::output::stderr(), "{path}: {}", text::printable(&problem.to_string()));
        }
        if summary.skipped + summary.failed > 10 {
            let _ = writeln!(
                crate::output::stderr(),
                "{path}: ... and {} more problems",
                summary.skipped + summary.failed - 10
            );
        }
        self.refresh_vocabulary();
        self.say(&format!(
            "imported {}{} into {}, skipped {}, failed {} ({:.2} s); {}, {}",
            plural(summary.imported, "item", "items"),
            crate::import_cmd::replaced(summary.replaced),
            container.id(),
            summary.skipped,
            summary.failed,
            started.elapsed().as_secs_f64(),
            plural(container.item_count() as u64, "item", "items"),
            plural(container.partition_count() as u64, "physical partition", "physical partitions")
        ));
        match crate::import_cmd::incomplete(&summary, ".import --upsert FILE") {
            Some(message) => Err(format!("{path}: {message}")),
            None => Ok(()),
        }
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
                self.options.partition_key = Some(PartitionKey::parse_json(json).map_err(|e| {
                    let hint = quote_hint(json).map(|q| format!("; a string is quoted: .set pk {q}")).unwrap_or_default();
                    format!("pk: {e}{hint}")
                })?);
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
        let client = ContainerClient::from_container(self.container()?);
        let text = crate::container_cmd::throughput(&client, args)?;
        let _ = write!(crate::output::stdout(), "{text}");
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
            let _ = writeln!(out, "{}", text::printable(&to_json_string(item).unwrap_or_default()));
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
        let text = crate::reports::stats(&*self.container()?);
        let _ = write!(crate::output::stdout(), "{text}");
        Ok(())
    }
}

fn opt(v: Option<usize>) -> String {
    v.map_or("off".to_string(), |n| n.to_string())
}

fn on_off(args: &[&str], what: &str) -> Result<bool, String> {
    match args {
        ["on"] => Ok(true),
        ["off"] => Ok(false),
        _ => Err(format!("usage: {what} on|off")),
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
