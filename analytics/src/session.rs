//! Standard SQL over the mirrors: every container with an analytical store
//! (`analyticalStorageTtl` set) is a table `<database>.<container>` of a DataFusion session, and
//! `<container>` alone when no other database has a container of that name.
//! Each statement first syncs the mirrors (read-your-writes), then reads the snapshots it
//! registered, whatever is written meanwhile; or the mirrors sync only by hand, or on an
//! interval on a thread of their own ([`SyncPolicy`], [`Analytics::sync_every`]).
//!
//! Identifiers are not lower-cased (`enable_ident_normalization` off): JSON property names are
//! mostly camelCase, and `SELECT deviceId FROM db.telemetry` finds the column `deviceId` without
//! quotes; function names stay case-insensitive.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use cosmoql::{ContainerClient, CosmosClient};
use cosmoql_storage::{Container, Store};
use cosmoql_value::Value;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{MemorySchemaProvider, SchemaProvider};
use datafusion::common::TableReference;
use datafusion::error::DataFusionError;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::mirror::{Mirror, SyncReport};
use crate::persist;
use crate::schema::SchemaMode;
use crate::table::MirrorTable;

/// An error of the analytical store: the query's (a message from DataFusion's parser, planner
/// or executor, with where in the text when it says), or the store's.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalyticsError {
    pub message: String,
    /// The byte range of the query text the error points at, when known.
    pub span: Option<(usize, usize)>,
}

impl fmt::Display for AnalyticsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AnalyticsError {}

impl AnalyticsError {
    pub fn new(message: impl Into<String>) -> AnalyticsError {
        AnalyticsError { message: message.into(), span: None }
    }

    /// The error as the row engine's errors are shown: with the query's line and a caret under
    /// where it points, when it points somewhere.
    pub fn render(&self, sql: &str) -> String {
        match self.span {
            Some((start, end)) if end <= sql.len() && start < end => {
                cosmoql::parser::diagnostic::render(sql, cosmoql::parser::Span::new(start, end), &self.message)
            }
            _ => self.message.clone(),
        }
    }

    /// A DataFusion error about `sql`, pointing where its message says ("at Line: 1, Column: 8").
    fn from_datafusion(e: DataFusionError, sql: &str) -> AnalyticsError {
        let message = e.strip_backtrace();
        let at = position(&message)
            .and_then(|(line, column)| offset(sql, line, column))
            // The end of the text: its last word.
            .or_else(|| {
                message.contains("found: EOF").then(|| sql.trim_end().rfind(char::is_whitespace).map_or(0, |at| at + 1))
            })
            // An unknown column: its first mention.
            .or_else(|| unknown_field(&message).and_then(|name| word_at(sql, name)));
        let span = at.filter(|at| *at < sql.len() && sql.is_char_boundary(*at)).map(|at| {
            let end = sql[at..].find(|c: char| c.is_whitespace() || c == ',' || c == ')').map_or(sql.len(), |n| at + n);
            (at, end.max(at + sql[at..].chars().next().map_or(1, char::len_utf8)))
        });
        AnalyticsError { message, span }
    }
}

/// The last name of the table a planner message says it did not find (`table
/// 'datafusion.shop.plain' not found`: `plain`).
fn missing_table(message: &str) -> Option<&str> {
    let rest = &message[message.find("table '")? + "table '".len()..];
    let quoted = &rest[..rest.find('\'')?];
    rest[quoted.len()..].starts_with("' not found").then(|| quoted.rsplit('.').next().unwrap_or(quoted))
}

/// The line and column (both from 1) a parser message names.
fn position(message: &str) -> Option<(usize, usize)> {
    let at = message.find("Line: ")?;
    let rest = &message[at + 6..];
    let line: usize = rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?;
    let col_at = rest.find("Column: ")?;
    let column: usize = rest[col_at + 8..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?;
    Some((line, column))
}

/// The name in "No field named X." (DataFusion's unknown-column message).
fn unknown_field(message: &str) -> Option<&str> {
    let rest = &message[message.find("No field named ")? + 15..];
    let name = rest.split(|c: char| c == '.' || c.is_whitespace()).next()?;
    Some(name.trim_matches('"')).filter(|n| !n.is_empty())
}

/// Where `word` first stands as a word of its own in `text`.
fn word_at(text: &str, word: &str) -> Option<usize> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        !text[..at].chars().next_back().is_some_and(is_word)
            && !text[at + word.len()..].chars().next().is_some_and(is_word)
    })
}

/// The byte offset of a line and column (characters, both from 1) in `text`.
fn offset(text: &str, line: usize, column: usize) -> Option<usize> {
    let start: usize = text.split_inclusive('\n').take(line.checked_sub(1)?).map(str::len).sum();
    let line_text = text.get(start..)?;
    let at = line_text.char_indices().nth(column.checked_sub(1)?).map(|(i, _)| i)?;
    Some(start + at)
}

impl From<cosmoql_storage::StorageError> for AnalyticsError {
    fn from(e: cosmoql_storage::StorageError) -> Self {
        AnalyticsError::new(e.to_string())
    }
}

/// What a sync did to one container's mirror.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synced {
    pub database: String,
    pub container: String,
    pub report: SyncReport,
}

/// When the mirrors catch up with their containers (the third way, on an interval, is
/// [`Analytics::sync_every`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncPolicy {
    /// Before each statement, the mirrors it reads (read-your-writes): the default.
    OnQuery,
    /// Only when [`Analytics::sync`] is called (or an [`IntervalSync`] runs).
    Manual,
}

/// The thread [`Analytics::sync_every`] started: stopped (and waited for) when dropped.
#[derive(Debug)]
pub struct IntervalSync {
    stop: Arc<(Mutex<bool>, Condvar)>,
    last_error: Arc<Mutex<Option<String>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl IntervalSync {
    /// Why the last sync failed, if it did.
    pub fn last_error(&self) -> Option<String> {
        self.last_error.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for IntervalSync {
    fn drop(&mut self) {
        let (lock, wake) = &*self.stop;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Where the analytical store finds containers: an account's (every database's containers with
/// an analytical time to live, found again at each statement), or one container.
#[derive(Debug)]
enum Source {
    Account(Arc<Store>),
    Container { database: String, id: String, container: Arc<Container> },
}

/// The analytical store: a mirror per container with an analytical time to live, and a SQL
/// session over them.
#[derive(Debug)]
pub struct Analytics {
    sources: Vec<Source>,
    mode: SchemaMode,
    /// Whether each statement first syncs the mirrors it reads ([`SyncPolicy`]).
    on_query: AtomicBool,
    mirrors: Mutex<HashMap<(String, String), Arc<Mirror>>>,
    runtime: tokio::runtime::Runtime,
}

impl Analytics {
    /// An analytical store over nothing yet, with the schema representation `mode` (the
    /// service's is chosen once for an account; well-defined for the API for NoSQL by default).
    pub fn new(mode: SchemaMode) -> Result<Analytics, AnalyticsError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(std::thread::available_parallelism().map_or(2, |n| n.get()).min(8))
            .thread_name("cosmoql-analytics")
            .build()
            .map_err(|e| AnalyticsError::new(format!("the analytics runtime could not start: {e}")))?;
        Ok(Analytics {
            sources: Vec::new(),
            mode,
            on_query: AtomicBool::new(true),
            mirrors: Mutex::new(HashMap::new()),
            runtime,
        })
    }

    /// When the mirrors catch up with their containers (before each statement by default).
    pub fn with_sync_policy(self, policy: SyncPolicy) -> Self {
        self.on_query.store(policy == SyncPolicy::OnQuery, Ordering::Relaxed);
        self
    }

    /// When the mirrors catch up with their containers now.
    pub fn sync_policy(&self) -> SyncPolicy {
        if self.on_query.load(Ordering::Relaxed) {
            SyncPolicy::OnQuery
        } else {
            SyncPolicy::Manual
        }
    }

    /// Syncs every mirror every `period` on a thread of its own, from now until the handle is
    /// dropped (or the store is); statements then read the mirrors as the last sync left them
    /// (the policy becomes [`SyncPolicy::Manual`]). A sync that fails is tried again at the next
    /// period; [`IntervalSync::last_error`] says why. An error when the thread cannot start (the
    /// policy is then as it was).
    pub fn sync_every(self: &Arc<Self>, period: Duration) -> Result<IntervalSync, AnalyticsError> {
        let period = period.max(Duration::from_millis(1));
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let last_error = Arc::new(Mutex::new(None));
        let analytics = Arc::downgrade(self);
        let (stop_here, error_here) = (Arc::clone(&stop), Arc::clone(&last_error));
        let thread = std::thread::Builder::new().name("cosmoql-analytics-sync".into()).spawn(move || loop {
            let (lock, wake) = &*stop_here;
            let stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
            let (stopped, _) = wake.wait_timeout_while(stopped, period, |s| !*s).unwrap_or_else(|e| e.into_inner());
            if *stopped {
                return;
            }
            drop(stopped);
            let Some(analytics) = analytics.upgrade() else { return };
            let result = analytics.sync();
            *error_here.lock().unwrap_or_else(|e| e.into_inner()) = result.err().map(|e| e.message);
        });
        let thread = thread.map_err(|e| AnalyticsError::new(format!("the interval sync could not start: {e}")))?;
        self.on_query.store(false, Ordering::Relaxed);
        Ok(IntervalSync { stop, last_error, thread: Some(thread) })
    }

    /// Brings `mirror` up to date when statements sync first ([`SyncPolicy::OnQuery`]).
    pub fn catch_up(&self, mirror: &Mirror) -> Result<(), AnalyticsError> {
        if self.on_query.load(Ordering::Relaxed) {
            mirror.sync().map_err(|e| AnalyticsError::new(e.to_string()))?;
        }
        Ok(())
    }

    /// The schema representation of every mirror.
    pub fn mode(&self) -> SchemaMode {
        self.mode
    }

    /// Adds an account's containers with an analytical store, as `<database>.<container>` (those
    /// made or given an analytical time to live later are found at the next statement).
    pub fn with_account(mut self, client: &CosmosClient) -> Self {
        self.sources.push(Source::Account(Arc::clone(client.store())));
        self
    }

    /// Adds one container (a standalone one, say) as `<database>.<container>`, giving it an
    /// analytical time to live of `-1` (keep everything) if it has none.
    pub fn with_container(mut self, database: &str, client: &ContainerClient) -> Result<Self, AnalyticsError> {
        let container = Arc::clone(client.container());
        if container.analytical_ttl().is_none() {
            container.set_analytical_ttl(Some(-1))?;
        }
        self.sources.push(Source::Container {
            database: database.to_string(),
            id: container.id().to_string(),
            container,
        });
        Ok(self)
    }

    /// The container `database.container` of the sources, with the directory of the durable
    /// database that holds it, if one does.
    fn find(&self, database: &str, container: &str) -> Result<(Arc<Container>, Option<PathBuf>), AnalyticsError> {
        for source in &self.sources {
            match source {
                Source::Account(store) => {
                    if let Ok(c) = store.database(database).and_then(|d| d.container(container)) {
                        return Ok((c, store.durable().map(|d| d.dir().to_path_buf())));
                    }
                }
                Source::Container { database: d, id, container: c } if d == database && id == container => {
                    return Ok((Arc::clone(c), None));
                }
                Source::Container { .. } => {}
            }
        }
        Err(AnalyticsError::new(format!("no container `{container}` in database `{database}`")))
    }

    /// The mirror of a container with an analytical store (an error without one).
    pub fn mirror(&self, database: &str, container: &str) -> Result<Arc<Mirror>, AnalyticsError> {
        let (c, database_dir) = self.find(database, container)?;
        if c.analytical_ttl().is_none() {
            return Err(AnalyticsError::new(format!(
                "container `{container}` of database `{database}` has no analytical store: set its \
                 analyticalStorageTtl (-1 keeps every item)"
            )));
        }
        let mut mirrors = self.mirrors.lock().unwrap_or_else(|e| e.into_inner());
        let key = (database.to_string(), container.to_string());
        // A container deleted and made again under the same name is another container.
        if let Some(m) = mirrors.get(&key).filter(|m| Arc::ptr_eq(m.container(), &c)) {
            return Ok(Arc::clone(m));
        }
        let mut m = Mirror::new(Arc::clone(&c), self.mode);
        // A durable database's mirror is kept in its directory between processes.
        if let Some(dir) = database_dir {
            m = m.persisted_in(persist::mirror_dir(&dir, database, container));
        }
        let m = Arc::new(m);
        mirrors.insert(key, Arc::clone(&m));
        Ok(m)
    }

    /// The containers with an analytical store, as `(database, container)`, sorted.
    pub fn tables(&self) -> Vec<(String, String)> {
        self.containers(true)
    }

    /// The sources' containers with an analytical store (`with_store`) or without, as
    /// `(database, container)`, sorted.
    fn containers(&self, with_store: bool) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for source in &self.sources {
            match source {
                Source::Account(store) => {
                    for db in store.database_ids() {
                        let Ok(database) = store.database(&db) else { continue };
                        for id in database.container_ids() {
                            if database.container(&id).is_ok_and(|c| c.analytical_ttl().is_some() == with_store) {
                                out.push((db.clone(), id));
                            }
                        }
                    }
                }
                Source::Container { database, id, container } => {
                    if container.analytical_ttl().is_some() == with_store {
                        out.push((database.clone(), id.clone()));
                    }
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// `error`, saying so when the table it did not find is a container without an analytical
    /// store (the most likely slip: the container exists, its store was never turned on).
    fn with_hint(&self, mut error: AnalyticsError) -> AnalyticsError {
        let Some(name) = missing_table(&error.message) else { return error };
        if let Some((db, id)) = self.containers(false).into_iter().find(|(_, id)| id == name) {
            error.message.push_str(&format!(
                " (container `{id}` of database `{db}` has no analytical store: set its analyticalStorageTtl; -1 keeps \
                 every item)"
            ));
        }
        error
    }

    /// Brings every mirror up to date; what each sync did, as `(database, container, report)`.
    pub fn sync(&self) -> Result<Vec<Synced>, AnalyticsError> {
        let mut out = Vec::new();
        for (database, container) in self.tables() {
            let report = self.mirror(&database, &container)?.sync().map_err(|e| AnalyticsError::new(e.to_string()))?;
            out.push(Synced { database, container, report });
        }
        Ok(out)
    }

    /// A DataFusion session over fresh snapshots of every mirror (for joins, `EXPLAIN` and
    /// everything DataFusion plans; [`Self::sql`] runs one statement on one).
    pub fn context(&self) -> Result<SessionContext, AnalyticsError> {
        let ctx = new_context();
        let catalog = ctx
            .catalog("datafusion")
            .ok_or_else(|| AnalyticsError::new("DataFusion's default catalog is missing (a bug)"))?;
        let mut schemas: HashMap<String, Arc<MemorySchemaProvider>> = HashMap::new();
        let tables = self.tables();
        for (db, c) in &tables {
            let (db, c) = (db.clone(), c.clone());
            let mirror = self.mirror(&db, &c)?;
            self.catch_up(&mirror)?;
            let schema = schemas.entry(db.clone()).or_insert_with(|| {
                let s = Arc::new(MemorySchemaProvider::new());
                let _ = catalog.register_schema(&db, Arc::clone(&s) as Arc<dyn SchemaProvider>);
                s
            });
            let table = Arc::new(MirrorTable::new(mirror.snapshot(), mirror.container().partition_key().clone()));
            schema
                .register_table(c.clone(), Arc::clone(&table) as _)
                .map_err(|e| AnalyticsError::new(e.strip_backtrace()))?;
            // A container name no other database has is a table of its own name too.
            if tables.iter().filter(|(_, other)| *other == c).count() == 1 {
                ctx.register_table(TableReference::bare(c.as_str()), table)
                    .map_err(|e| AnalyticsError::new(e.strip_backtrace()))?;
            }
        }
        Ok(ctx)
    }

    /// A session with one table: `table` as `database.container` (the statement a Cosmos SQL
    /// query is routed to runs on the snapshot it was checked against).
    /// Its operators may hold `memory_limit` bytes at most (past it the statement fails with
    /// DataFusion's `ResourcesExhausted`).
    pub fn context_over(
        &self,
        database: &str,
        container: &str,
        table: Arc<MirrorTable>,
        memory_limit: usize,
    ) -> Result<SessionContext, AnalyticsError> {
        let runtime = RuntimeEnvBuilder::new()
            .with_memory_limit(memory_limit, 1.0)
            .build_arc()
            .map_err(|e| AnalyticsError::new(e.strip_backtrace()))?;
        let ctx = SessionContext::new_with_config_rt(config(), runtime);
        let catalog = ctx
            .catalog("datafusion")
            .ok_or_else(|| AnalyticsError::new("DataFusion's default catalog is missing (a bug)"))?;
        let schema = Arc::new(MemorySchemaProvider::new());
        let _ = catalog.register_schema(database, Arc::clone(&schema) as Arc<dyn SchemaProvider>);
        schema.register_table(container.to_string(), table).map_err(|e| AnalyticsError::new(e.strip_backtrace()))?;
        Ok(ctx)
    }

    /// The database, name and mirror of `container` when it is one of the sources' containers
    /// with an analytical store.
    pub fn mirror_of(&self, container: &Arc<Container>) -> Option<(String, String, Arc<Mirror>)> {
        let (database, id) = self
            .tables()
            .into_iter()
            .find(|(db, c)| self.find(db, c).is_ok_and(|(found, _)| Arc::ptr_eq(&found, container)))?;
        let mirror = self.mirror(&database, &id).ok()?;
        Some((database, id, mirror))
    }

    /// The inferred schema of a container's mirror, synced first, as [`crate::Schema::describe`]
    /// writes it.
    pub fn describe(&self, database: &str, container: &str) -> Result<String, AnalyticsError> {
        let mirror = self.mirror(database, container)?;
        self.catch_up(&mirror)?;
        Ok(mirror.schema().describe())
    }

    /// Runs one statement; its result's batches.
    pub fn sql_batches(&self, sql: &str) -> Result<Vec<RecordBatch>, AnalyticsError> {
        let ctx = self.context()?;
        self.runtime.block_on(async {
            let frame = ctx.sql(sql).await.map_err(|e| self.with_hint(AnalyticsError::from_datafusion(e, sql)))?;
            frame.collect().await.map_err(|e| AnalyticsError::from_datafusion(e, sql))
        })
    }

    /// Runs one statement; its rows as values (see `values.rs`).
    pub fn sql(&self, sql: &str) -> Result<Vec<Value>, AnalyticsError> {
        let batches = self.sql_batches(sql)?;
        crate::values::rows(&batches).map_err(|e| AnalyticsError::new(e.to_string()))
    }

    /// Runs `f` on the session's runtime (for callers that drive a [`SessionContext`] themselves).
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.runtime.block_on(f)
    }
}

/// A session as every statement gets: names as written (no lower-casing), with
/// `information_schema`.
fn new_context() -> SessionContext {
    SessionContext::new_with_config(config())
}

/// The configuration of every session.
fn config() -> SessionConfig {
    SessionConfig::new()
        .with_information_schema(true)
        .set_bool("datafusion.sql_parser.enable_ident_normalization", false)
}
