//! A REPL session: the account, the current container, the settings, and running one query or
//! EXPLAIN on a worker thread that Ctrl-C can cancel. Used by the interactive loop and by the
//! non-interactive runs (`-c`, a file, piped statements); statements are split and dispatched in
//! `run.rs`, dot-commands are `commands.rs`'s.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use cosmoql::value::Value;
use cosmoql::{
    ContainerClient, ContainerProperties, CosmosClient, DatabaseClient, JsonText, PartitionKeyDefinition, QueryOptions,
};

use crate::printer::{query_stats, PrintOptions, Printer};
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
    /// The account (a database directory's holds its lock while the session lasts).
    pub(crate) _client: CosmosClient,
    pub(crate) db: DatabaseClient,
    /// A database directory created at the first write (see [`crate::open::Opened::pending`]).
    pub(crate) pending: Option<std::path::PathBuf>,
    pub(crate) current: Option<String>,
    pub mode: Mode,
    pub metrics: bool,
    pub timing: bool,
    /// Colours and the pretty forms (terminal output).
    pub colored: bool,
    /// Colours on standard error (errors, and a script's messages): when it is a terminal.
    pub(crate) colored_errors: bool,
    /// Messages (not results) go to stdout when interactive, to stderr otherwise.
    pub interactive: bool,
    pub options: QueryOptions,
    pub(crate) page_size: Option<usize>,
    pub(crate) params: BTreeMap<String, Value>,
    pub(crate) max_rows: usize,
    pub vocabulary: Arc<RwLock<Vocabulary>>,
    /// Per container: where `.changes` resumes.
    pub(crate) changes: BTreeMap<String, String>,
    /// The file being run, named in its errors (whose line numbers are the file's).
    pub source: Option<String>,
    /// Headers, and how null and undefined show, in the text modes.
    pub display: Display,
    /// `.once FILE`: results go back to standard output after the next statement that prints
    /// some (a query, or an item command).
    pub(crate) once: bool,
    /// `.read` files being run, one inside the other.
    pub(crate) reading: usize,
    /// `--bail`: stop at the first statement that fails.
    pub bail: bool,
    /// `.pager on|off`: long tables go through `$PAGER` (interactive sessions on a terminal).
    pub pager: bool,
    /// `.analytics on`: statements are standard SQL on the analytical store.
    pub(crate) analytics_mode: bool,
    /// The analytical store over the session's account, made at its first use.
    pub(crate) analytics: std::sync::Mutex<Option<Arc<cosmoql_analytics::Analytics>>>,
    /// `.analytics route on|off`: Cosmos SQL aggregates that a container's analytical store
    /// answers exactly run there (on by default).
    pub(crate) routing: bool,
}

impl Session {
    /// A session over the database `opened` gives.
    pub fn new(opened: crate::open::Opened, interactive: bool, colored: bool) -> Self {
        let crate::open::Opened { client, db, pending, current, .. } = opened;
        let session = Session {
            _client: client,
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
            analytics_mode: false,
            analytics: std::sync::Mutex::new(None),
            routing: true,
        };
        session.refresh_vocabulary();
        session
    }

    pub fn current(&self) -> Option<&str> {
        self.current.as_deref()
    }

    pub(crate) fn container(&self) -> Result<ContainerClient, String> {
        let Some(name) = self.current.as_deref() else {
            let names = self.container_ids();
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
        let client = self.db.container_client(name).map_err(|e| e.to_string())?;
        self.routed(client)
    }

    /// The ids of the database's containers.
    pub(crate) fn container_ids(&self) -> Vec<String> {
        self.db.container_ids().unwrap_or_default()
    }

    /// The container a query runs on: the current one, or, for a query without FROM (`SELECT
    /// 1 + 1`) and no container in use, an empty one.
    pub(crate) fn query_container(&self, sql: &str) -> Result<ContainerClient, String> {
        match self.container() {
            Ok(c) => Ok(c),
            // A syntax error is reported as one, whatever the container.
            Err(msg) => match cosmoql::parse(sql) {
                Ok(q) if q.from.is_some() => Err(msg),
                _ => ContainerClient::standalone(ContainerProperties::with_key("none", PartitionKeyDefinition::none()))
                    .map_err(|e| e.to_string()),
            },
        }
    }

    /// Re-reads container names and samples property paths of the current container.
    pub fn refresh_vocabulary(&self) {
        let mut paths = std::collections::BTreeSet::new();
        if let Ok(c) = self.container() {
            for item in c.sample_items(200) {
                collect_paths(&item, "", 0, &mut paths);
            }
        }
        if let Ok(mut v) = self.vocabulary.write() {
            v.containers = self.container_ids();
            v.paths = paths.into_iter().collect();
        }
    }

    /// A message (not a result): on standard output when interactive, else on standard error.
    pub(crate) fn say(&self, text: &str) {
        self.say_styled(text, None);
    }

    /// A side note (times, charges, statistics): dim on a terminal.
    pub(crate) fn note(&self, text: &str) {
        self.say_styled(text, Some(color::DIM));
    }

    /// [`Self::say`] in `style` where the message goes to a terminal that takes colours. The
    /// text is made printable first, so the style's own escape sequence is never escaped with
    /// it. Messages are not results: an interactive session shows them on the screen even
    /// while results go to a file (`.output`, `.once`).
    pub(crate) fn say_styled(&self, text: &str, style: Option<&str>) {
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

    pub(crate) fn error(&self, text: &str) {
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

    /// The screen's rows when long results should go through the pager.
    pub(crate) fn pager_rows(&self) -> Option<usize> {
        if !(self.pager && self.interactive) || crate::output::redirected() {
            return None;
        }
        crate::output::terminal_rows()
    }

    /// How results print now: the session's mode and display settings.
    pub(crate) fn print_options(&self, star: bool) -> PrintOptions {
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

    pub(crate) fn query_options(&self) -> QueryOptions {
        let mut options = self.options.clone();
        options.populate_index_metrics = self.metrics;
        options.parameters = self.params.iter().map(|(k, v)| (k.clone(), v.clone())).collect::<HashMap<_, _>>();
        options
    }

    /// `FROM families` while `telemetry` is in use runs on telemetry: said once the query ran.
    pub(crate) fn note_alias(&self, query: &cosmoql::parser::ast::Query) {
        let Some(current) = self.current.as_deref() else { return };
        if let Some(other) = crate::statements::other_container(query, current, &self.container_ids()) {
            self.say(&format!(
                "note: this ran on {current}: the name after FROM is an alias in Cosmos DB, not a container \
                 (.use {other} to query {other})"
            ));
        }
    }

    pub(crate) fn explain(&mut self, sql: &str, analyze: bool) -> Result<(), String> {
        let client = self.query_container(sql)?;
        let (sql, page_size) = (sql.to_string(), self.page_size);
        let explained = self.on_worker(self.query_options(), move |mut options| {
            options.max_item_count = page_size;
            client.explain(sql.as_str(), options, analyze).map_err(|e| e.to_string())
        })?;
        let _ = writeln!(crate::output::stdout(), "{explained}");
        Ok(())
    }

    pub(crate) fn query(&mut self, sql: &str) -> Result<(), String> {
        let client = self.query_container(sql)?;
        let started = Instant::now();
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
            // The modes that write compact JSON take it as text: whole items from their bytes.
            let done = if printer.takes_text() {
                client.query_pages::<JsonText>(sql.as_str(), options).for_each(|text| printer.push_text(text))
            } else {
                client.query_pages::<Value>(sql.as_str(), options).for_each(|item| printer.push(item))
            };
            match done {
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
    pub(crate) fn on_worker<R: Send + 'static>(
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
