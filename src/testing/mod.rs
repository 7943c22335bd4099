//! Snapshot-tested query suites, and fixtures for snapshot tests in Rust.
//!
//! Two ways to pin down what queries return over known data:
//!
//! * **Query suites**: a folder with fixtures and `.sql` files of annotated queries and their
//!   expected results, run by [`run_suite`] (and by `cosmoql test DIR [--bless]`), or on another
//!   [`SuiteTarget`] by [`run_suite_on`] (`cosmoql test DIR --endpoint URL` runs it on a Cosmos DB
//!   endpoint).
//! * **Fixtures in Rust**: [`Fixture::load`] loads the same fixtures and [`Fixture::query`] returns
//!   a query's results as a `serde_json::Value`, ready for `insta::assert_json_snapshot!`.
//!
//! ```
//! use cosmoql::testing::Fixture;
//!
//! let fixture = Fixture::load(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/suite"))?;
//! let names = fixture.query("SELECT VALUE p.name FROM p WHERE p.city = 'Lisbon' ORDER BY p.name")?;
//! assert_eq!(names, serde_json::json!(["Ana", "Rui"]));
//!
//! // Options: another container, parameters, physical partitions, paging, MaxDOP.
//! let n = fixture
//!     .sql("SELECT VALUE COUNT(1) FROM o WHERE o.total > @min")
//!     .container("orders")
//!     .param("@min", 20)
//!     .partitions(4)
//!     .page_size(1)
//!     .run()?;
//! assert_eq!(n, serde_json::json!([3]));
//! # Ok::<(), cosmoql::testing::Error>(())
//! ```
//!
//! With insta (a snapshot file under `tests/snapshots/`):
//!
//! ```no_run
//! # fn main() -> Result<(), cosmoql::testing::Error> {
//! let fixture = cosmoql::testing::Fixture::load("tests/fixtures")?;
//! insta::assert_json_snapshot!(fixture.query("SELECT c.id, c.name FROM c ORDER BY c.id")?);
//! # Ok(())
//! # }
//! ```
//!
//! # Fixtures
//!
//! `fixtures.json` in the suite folder lists the containers, each in Cosmos DB's container
//! properties form plus where its items come from:
//!
//! ```json
//! [
//!   {"id": "people", "partitionKey": {"paths": ["/city"], "kind": "Hash"}, "data": "people.json"},
//!   {"id": "orders", "partitionKey": {"paths": ["/tenant", "/user"], "kind": "MultiHash"},
//!    "partitions": 4, "items": [{"id": "1", "tenant": "a", "user": "u"}]}
//! ]
//! ```
//!
//! * `partitionKey` is read by [`PartitionKeyDefinition::from_json`] (`paths`, `kind`, `version`,
//!   `syntheticKey`); leave it out for a container without a partition key.
//! * `data` is a file relative to the suite folder holding a JSON array or NDJSON; `items` gives
//!   the items inline. Both may be given; neither gives an empty container.
//! * `partitions` is the number of physical partitions (default 1); a case's `-- @partitions N`
//!   overrides it.
//! * `vectorEmbeddingPolicy` (optional) is used by `VectorDistance`.
//! * `indexingPolicy` (optional, the service's JSON): ORDER BY on several paths needs a composite
//!   index, as on the service.
//! * `userDefinedFunctions` (optional): the container's UDFs, called as `udf.<id>(...)`, each as
//!   the service's resource (`{"id": "tax", "body": "function (x) { ... }"}`) or with its
//!   JavaScript in a file relative to the suite folder (`{"id": "tax", "file": "tax.js"}`).
//!
//! Without `fixtures.json` a suite has one empty container `c` with no partition key.
//!
//! # `.sql` files
//!
//! Every `*.sql` file directly in the suite folder is run, in name order. A file is a list of cases:
//!
//! ```sql
//! -- Comments and options before the first case apply to every case of the file.
//! -- @container people
//!
//! -- @name adults by name
//! -- @param @min = 18
//! SELECT VALUE p.name FROM p
//! WHERE p.age >= @min
//! ORDER BY p.name
//! -- @expect
//! ["Ana", "Rui"]
//!
//! -- @name a bad function
//! SELECT VALUE NOPE(1) FROM p
//! -- @error bind 'NOPE' is not a recognized built-in function name.
//! ```
//!
//! * `-- @name <name>` starts a case. Option lines come next (anywhere before the expectation):
//!   * `-- @container <id>`: the container to query (default: the first in `fixtures.json`);
//!   * `-- @partitions N`: load the container with N physical partitions for this case;
//!   * `-- @param @x = <JSON>`: bind a parameter (repeat for more);
//!   * `-- @order any`: compare the results as a multiset. The default, `-- @order exact`, compares
//!     them in order, with or without ORDER BY: the engine's order is deterministic (EPK order,
//!     whatever the parallelism), so exact is the stricter check;
//!   * `-- @maxdop N`: MaxDegreeOfParallelism (default -1, one producer per core);
//!   * `-- @pagesize N`: fetch pages of N results through continuation tokens and concatenate them;
//!   * `-- @pk <JSON>`: scope the query to one logical partition (`"Lisbon"`, `["acme", 2024]`).
//! * Every other line up to the expectation is the query (ordinary `--` comments included; blank
//!   lines around it are trimmed).
//! * The expectation is either `-- @expect` followed by a JSON array of results (system properties
//!   `_rid`, `_self`, `_etag`, `_attachments`, `_ts` are left out of the comparison) up to the next
//!   `-- @name`, or `-- @error <kind> [text]`: the query fails with an error of that kind (`syntax`,
//!   `bind`, `eval`, `storage`, `resource` or `internal`) whose rendered form (`line L, column C: message`, the
//!   query line and a caret) contains `text`. Put comments before a case's query, not after its
//!   expectation: blessing replaces the expectation block.
//!
//! A case fails when the results (or the error) differ; its report shows the query, the options and
//! a line diff of the expected (`-`) and actual (`+`) results as pretty JSON. The report ends with
//! the line `N passed, M failed`.
//!
//! **Blessing** ([`RunOptions::bless`], `cosmoql test DIR --bless`) rewrites the expectation of
//! every failing case with the actual result, leaving names, options, queries, comments and passing
//! cases byte for byte as they were, so blessing twice changes nothing. Results are written as a
//! JSON array on one line when it fits in 100 columns, otherwise one result per line. A case
//! without an expectation fails and is blessed like any other.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cosmoql_executor::{QueryError, QueryErrorKind, QueryOptions, VectorPolicy};
use cosmoql_storage::{
    Container, ContainerSettings, ImportOptions, IndexingPolicy, PartitionKey, PartitionKeyDefinition,
    MAX_INITIAL_PARTITIONS, SYSTEM_PROPERTIES,
};
use cosmoql_value::{parse_json, to_json_string, to_json_string_pretty, Value};

mod fixture_scripts;
mod suite_file;
use suite_file::{parse_suite_file, Case, Expect};

/// The fixture file of a suite folder.
pub const FIXTURES_FILE: &str = "fixtures.json";

/// Results written on one line up to this width.
const ONE_LINE: usize = 100;

/// An error of the testing helpers: a fixture that does not load, or a query that fails.
#[derive(Debug)]
pub enum Error {
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: std::io::Error,
    },
    /// A bad fixture file, data file or container reference.
    Fixture {
        /// The fixture file, data file or suite folder.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The query failed.
    Query {
        /// The query text.
        sql: String,
        /// Its error.
        error: QueryError,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, error } => write!(f, "{}: {error}", path.display()),
            Error::Fixture { path, message } => write!(f, "{}: {message}", path.display()),
            Error::Query { sql, error } => write!(f, "{} error: {}", kind_name(error.kind), error.render(sql)),
        }
    }
}

impl std::error::Error for Error {}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |error| Error::Io { path: path.to_path_buf(), error }
}

/// The name of an error kind as `-- @error` spells it.
pub fn kind_name(kind: QueryErrorKind) -> &'static str {
    match kind {
        QueryErrorKind::Syntax => "syntax",
        QueryErrorKind::Bind => "bind",
        QueryErrorKind::Eval => "eval",
        QueryErrorKind::Storage => "storage",
        QueryErrorKind::Resource => "resource",
        QueryErrorKind::Cancelled => "cancelled",
        QueryErrorKind::Internal => "internal",
    }
}

fn parse_kind(name: &str) -> Option<QueryErrorKind> {
    Some(match name.to_ascii_lowercase().as_str() {
        "syntax" => QueryErrorKind::Syntax,
        "bind" => QueryErrorKind::Bind,
        "eval" => QueryErrorKind::Eval,
        "storage" => QueryErrorKind::Storage,
        "resource" => QueryErrorKind::Resource,
        "cancelled" => QueryErrorKind::Cancelled,
        "internal" => QueryErrorKind::Internal,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

/// One container of a fixture.
#[derive(Debug, Clone)]
pub struct ContainerSpec {
    /// The container id.
    pub id: String,
    /// Its partition key definition.
    pub partition_key: PartitionKeyDefinition,
    /// Physical partitions when a case does not say.
    pub partitions: usize,
    /// Its vector embedding policy.
    pub vector_policies: Vec<VectorPolicy>,
    /// Its indexing policy (`indexingPolicy`, the service's JSON; default when absent).
    pub indexing_policy: IndexingPolicy,
    /// Its user-defined functions: (id, JavaScript body).
    pub udfs: Vec<(String, String)>,
    /// Its items: JSON array or NDJSON documents, imported as they are.
    sources: Vec<(PathBuf, Arc<Vec<u8>>)>,
}

impl ContainerSpec {
    /// Its items, as its sources hold them (a JSON array or NDJSON each).
    pub fn items(&self) -> Result<Vec<Value>, Error> {
        let mut items = Vec::new();
        for (path, bytes) in &self.sources {
            let bad = |message: String| Error::Fixture { path: path.clone(), message };
            let text = std::str::from_utf8(bytes).map_err(|e| bad(format!("not UTF-8: {e}")))?;
            match parse_json(text) {
                Ok(Value::Array(list)) => items.extend(list.iter().cloned()),
                Ok(one @ Value::Object(_)) => items.push(one),
                _ => {
                    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                        items.push(parse_json(line).map_err(|e| bad(format!("line {}: {e}", n + 1)))?);
                    }
                }
            }
        }
        Ok(items)
    }
}

/// Containers with known data, loaded on demand once per partition count.
#[derive(Debug)]
pub struct Fixture {
    dir: PathBuf,
    containers: Vec<ContainerSpec>,
    loaded: Mutex<HashMap<(usize, usize), Arc<Container>>>,
}

impl Fixture {
    /// Loads `DIR/fixtures.json` (see the [module docs](self)); without it, one empty container `c`.
    pub fn load(dir: impl AsRef<Path>) -> Result<Fixture, Error> {
        let dir = dir.as_ref();
        let path = dir.join(FIXTURES_FILE);
        if !path.exists() {
            if !dir.is_dir() {
                return Err(Error::Fixture { path: dir.to_path_buf(), message: "not a directory".into() });
            }
            return Fixture::from_json("[{\"id\": \"c\"}]", dir);
        }
        let text = std::fs::read_to_string(&path).map_err(io_error(&path))?;
        Fixture::from_json(&text, dir).map_err(|e| match e {
            Error::Fixture { path: p, message } if p == dir => Error::Fixture { path, message },
            other => other,
        })
    }

    /// A fixture from the text of a fixture file; `data` files are relative to `dir`.
    pub fn from_json(text: &str, dir: impl AsRef<Path>) -> Result<Fixture, Error> {
        let dir = dir.as_ref().to_path_buf();
        let bad = |message: String| Error::Fixture { path: dir.clone(), message };
        let value = parse_json(text).map_err(|e| bad(format!("not JSON: {e}")))?;
        let entries = match &value {
            Value::Array(a) => a.to_vec(),
            Value::Object(_) => vec![value.clone()],
            _ => return Err(bad("expected an array of containers".into())),
        };
        let mut containers: Vec<ContainerSpec> = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            let Some(id) = entry.get("id").as_str() else {
                return Err(bad(format!("container {} has no \"id\"", i + 1)));
            };
            if containers.iter().any(|c| c.id == id) {
                return Err(bad(format!("container \"{id}\" is listed twice")));
            }
            let partition_key = PartitionKeyDefinition::from_json(entry.get("partitionKey"))
                .map_err(|e| bad(format!("container \"{id}\": {e}")))?;
            let partitions = match entry.get("partitions") {
                Value::Undefined | Value::Null => 1,
                v => match v.as_f64() {
                    Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= MAX_INITIAL_PARTITIONS as f64 => n as usize,
                    _ => {
                        return Err(bad(format!(
                            "container \"{id}\": \"partitions\" must be an integer from 1 to {MAX_INITIAL_PARTITIONS}"
                        )))
                    }
                },
            };
            let mut sources = Vec::new();
            match entry.get("data") {
                Value::Undefined | Value::Null => {}
                Value::String(file) => {
                    let path = dir.join(&**file);
                    let bytes = std::fs::read(&path).map_err(io_error(&path))?;
                    sources.push((path, Arc::new(bytes)));
                }
                _ => return Err(bad(format!("container \"{id}\": \"data\" must be a file name"))),
            }
            match entry.get("items") {
                Value::Undefined | Value::Null => {}
                items @ Value::Array(_) => {
                    let text = to_json_string(items).unwrap_or_default();
                    sources
                        .push((dir.join(format!("{FIXTURES_FILE} (items of \"{id}\")")), Arc::new(text.into_bytes())));
                }
                _ => return Err(bad(format!("container \"{id}\": \"items\" must be an array"))),
            }
            containers.push(ContainerSpec {
                id: id.to_string(),
                partition_key,
                partitions,
                vector_policies: VectorPolicy::from_container_properties(entry)
                    .map_err(|e| bad(format!("container \"{id}\": {e}")))?,
                indexing_policy: match entry.get("indexingPolicy") {
                    Value::Undefined | Value::Null => IndexingPolicy::default(),
                    p => IndexingPolicy::from_json(p)
                        .map_err(|e| bad(format!("container \"{id}\": indexingPolicy: {}", e.message)))?,
                },
                udfs: fixture_scripts::udfs_of(entry.get("userDefinedFunctions"), &dir)
                    .map_err(|e| bad(format!("container \"{id}\": {e}")))?,
                sources,
            });
        }
        if containers.is_empty() {
            return Err(bad("no containers".into()));
        }
        Ok(Fixture { dir, containers, loaded: Mutex::new(HashMap::new()) })
    }

    /// The suite folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The containers, in fixture order.
    pub fn containers(&self) -> &[ContainerSpec] {
        &self.containers
    }

    fn spec(&self, id: Option<&str>) -> Result<(usize, &ContainerSpec), Error> {
        match id {
            None => Ok((0, &self.containers[0])),
            Some(id) => self.containers.iter().enumerate().find(|(_, c)| c.id == id).ok_or_else(|| {
                let known: Vec<&str> = self.containers.iter().map(|c| c.id.as_str()).collect();
                Error::Fixture {
                    path: self.dir.join(FIXTURES_FILE),
                    message: format!("no container \"{id}\" (the fixture has {})", known.join(", ")),
                }
            }),
        }
    }

    /// The container `id` (default: the first) loaded with `partitions` physical partitions
    /// (default: the fixture's). Loaded once and shared by later calls.
    pub fn container(&self, id: Option<&str>, partitions: Option<usize>) -> Result<Arc<Container>, Error> {
        let (index, spec) = self.spec(id)?;
        let partitions = partitions.unwrap_or(spec.partitions);
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = loaded.get(&(index, partitions)) {
            return Ok(Arc::clone(c));
        }
        let settings = ContainerSettings { initial_partitions: partitions, ..ContainerSettings::default() };
        settings.validate().map_err(|e| Error::Fixture {
            path: self.dir.join(FIXTURES_FILE),
            message: format!("container \"{}\": partitions: {}", spec.id, e.message),
        })?;
        let container = Container::new(spec.id.clone(), spec.partition_key.clone(), settings);
        container.replace_indexing_policy(spec.indexing_policy.clone());
        for (path, bytes) in &spec.sources {
            container.import(bytes.as_slice(), ImportOptions { fail_fast: true, ..ImportOptions::default() }, |_| {}).map_err(|e| {
                Error::Fixture { path: path.clone(), message: format!("container \"{}\": {e}", spec.id) }
            })?;
        }
        fixture_scripts::register(&container, &spec.udfs).map_err(|e| Error::Fixture {
            path: self.dir.join(FIXTURES_FILE),
            message: format!("container \"{}\": userDefinedFunctions: {e}", spec.id),
        })?;
        let container = Arc::new(container);
        loaded.insert((index, partitions), Arc::clone(&container));
        Ok(container)
    }

    /// Runs `sql` over the first container and returns its results as a JSON array, system
    /// properties left out.
    pub fn query(&self, sql: &str) -> Result<serde_json::Value, Error> {
        self.sql(sql).run()
    }

    /// A query with options; finish it with [`FixtureQuery::run`].
    pub fn sql(&self, sql: &str) -> FixtureQuery<'_> {
        FixtureQuery { fixture: self, sql: sql.to_string(), settings: Settings::default() }
    }

    /// Runs a query: `Err` for fixture problems, `Ok(Err)` for query errors.
    fn run_settings(&self, settings: &Settings, sql: &str) -> Result<Result<Vec<Value>, QueryError>, Error> {
        let (_, spec) = self.spec(settings.container.as_deref())?;
        let container = self.container(settings.container.as_deref(), settings.partitions)?;
        let mut options = QueryOptions { vector_policies: spec.vector_policies.clone(), ..QueryOptions::default() };
        for (name, value) in &settings.parameters {
            options = options.parameter(name, value.clone());
        }
        if let Some(dop) = settings.max_dop {
            options.max_degree_of_parallelism = dop;
        }
        options.partition_key = settings.partition_key.clone();
        options.max_item_count = settings.page_size;
        let client = crate::ContainerClient::from_container(container);
        match client.query_pages::<Value>(sql, options).drain() {
            Ok(results) => Ok(Ok(results.items.iter().map(strip_system).collect())),
            Err(crate::Error::Query { error, .. }) => Ok(Err(error)),
            Err(other) => Ok(Err(QueryError::internal(format!("a query failed outside the query engine: {other}")))),
        }
    }
}

/// A value without system properties (at any depth).
pub fn strip_system(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::object(
            m.iter()
                .filter(|(k, _)| !SYSTEM_PROPERTIES.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), strip_system(v))),
        ),
        Value::Array(a) => Value::array(a.iter().map(strip_system)),
        other => other.clone(),
    }
}

/// Options of one query over a [`Fixture`], the same as a suite case's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// The container (default: the fixture's first).
    pub container: Option<String>,
    /// Physical partitions (default: the container's in the fixture).
    pub partitions: Option<usize>,
    /// Parameters, each name with its `@`.
    pub parameters: Vec<(String, Value)>,
    /// MaxDegreeOfParallelism.
    pub max_dop: Option<i32>,
    /// Results per page (continuations between them).
    pub page_size: Option<usize>,
    /// The request's partition key.
    pub partition_key: Option<PartitionKey>,
}

/// Where a suite's queries run: the embedded engine over the fixture ([`Fixture`] itself, what
/// [`run_suite`] uses), or anything else that answers a query under a case's settings (a Cosmos
/// DB endpoint: `cosmoql test --endpoint`).
pub trait SuiteTarget {
    /// Runs `sql` under `settings` over the fixture's data: the results without system
    /// properties, `Ok(Err)` for a query the target refuses, `Err` for a problem of the fixture
    /// or the target itself.
    fn run(&self, fixture: &Fixture, settings: &Settings, sql: &str) -> Result<Result<Vec<Value>, QueryError>, Error>;

    /// Called once the suite has run (a remote target deletes what it created).
    fn finish(&self) -> Result<(), Error> {
        Ok(())
    }
}

impl SuiteTarget for Fixture {
    fn run(&self, fixture: &Fixture, settings: &Settings, sql: &str) -> Result<Result<Vec<Value>, QueryError>, Error> {
        fixture.run_settings(settings, sql)
    }
}

impl Settings {
    fn set_parameter(&mut self, name: &str, value: Value) {
        let name = format!("@{}", name.trim_start_matches('@'));
        match self.parameters.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.parameters.push((name, value)),
        }
    }
}

/// A query over a [`Fixture`] with options (from [`Fixture::sql`]).
#[derive(Debug)]
pub struct FixtureQuery<'f> {
    fixture: &'f Fixture,
    sql: String,
    settings: Settings,
}

impl FixtureQuery<'_> {
    /// Runs on the container `id` (default: the first of the fixture).
    pub fn container(mut self, id: &str) -> Self {
        self.settings.container = Some(id.to_string());
        self
    }

    /// Loads the container with `n` physical partitions.
    pub fn partitions(mut self, n: usize) -> Self {
        self.settings.partitions = Some(n);
        self
    }

    /// Binds a parameter (`name` with or without the `@`).
    pub fn param(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.settings.set_parameter(name, value.into());
        self
    }

    /// MaxDegreeOfParallelism.
    pub fn max_dop(mut self, n: i32) -> Self {
        self.settings.max_dop = Some(n);
        self
    }

    /// Fetches pages of `n` results through continuation tokens.
    pub fn page_size(mut self, n: usize) -> Self {
        self.settings.page_size = Some(n.max(1));
        self
    }

    /// Scopes the query to one logical partition.
    pub fn partition_key(mut self, key: PartitionKey) -> Self {
        self.settings.partition_key = Some(key);
        self
    }

    /// The results as document values, system properties left out.
    pub fn rows(&self) -> Result<Vec<Value>, Error> {
        self.fixture
            .run_settings(&self.settings, &self.sql)?
            .map_err(|error| Error::Query { sql: self.sql.clone(), error })
    }

    /// The results as a JSON array, system properties left out.
    pub fn run(&self) -> Result<serde_json::Value, Error> {
        Ok(serde_json::Value::Array(self.rows()?.iter().filter_map(Value::to_serde_json).collect()))
    }
}

// ---------------------------------------------------------------------------------------------
// Running suites
// ---------------------------------------------------------------------------------------------

/// How to run a suite.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Rewrite the expectation of every failing case with the actual result.
    pub bless: bool,
}

/// What happened to one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The results (or the error) are as expected.
    Passed,
    /// They differ, or the case is malformed.
    Failed,
    /// It failed and its expectation was rewritten with the actual result.
    Blessed,
}

/// One case's outcome.
#[derive(Debug, Clone)]
pub struct CaseReport {
    /// The `.sql` file.
    pub file: PathBuf,
    /// 1-based line of its `-- @name` (or of the problem, for a file that does not parse).
    pub line: usize,
    /// The case name (`(file)` for a problem of the file itself).
    pub name: String,
    /// Passed, failed or blessed.
    pub status: Status,
    /// For a failed or blessed case: the query, its options and the diff.
    pub details: String,
}

/// The outcome of a suite run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Every case, in file and line order.
    pub cases: Vec<CaseReport>,
    /// Files rewritten by blessing.
    pub blessed_files: Vec<PathBuf>,
}

impl Report {
    /// Cases that passed (blessed cases included: their file now holds their result).
    pub fn passed(&self) -> usize {
        self.cases.iter().filter(|c| c.status != Status::Failed).count()
    }

    /// Cases that failed.
    pub fn failed(&self) -> usize {
        self.cases.iter().filter(|c| c.status == Status::Failed).count()
    }

    /// Cases rewritten by blessing.
    pub fn blessed(&self) -> usize {
        self.cases.iter().filter(|c| c.status == Status::Blessed).count()
    }

    /// `true` when no case failed.
    pub fn is_ok(&self) -> bool {
        self.failed() == 0
    }

    /// `N passed, M failed`.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed(), self.failed())
    }

    /// Every failure in full, the blessed cases, then the summary line.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for c in self.cases.iter().filter(|c| c.status == Status::Failed) {
            out.push_str(&format!("FAIL {}:{}: {}\n{}\n", c.file.display(), c.line, c.name, c.details));
        }
        for c in self.cases.iter().filter(|c| c.status == Status::Blessed) {
            out.push_str(&format!("blessed {}:{}: {}\n", c.file.display(), c.line, c.name));
        }
        if !self.blessed_files.is_empty() {
            out.push_str(&format!("{} case(s) blessed in {} file(s)\n", self.blessed(), self.blessed_files.len()));
        }
        out.push_str(&self.summary());
        out.push('\n');
        out
    }
}

/// Runs every `*.sql` file of the suite folder `dir` (see the [module docs](self) for the format).
/// `Err` only when the folder or its fixture cannot be read; failing cases are in the report.
pub fn run_suite(dir: impl AsRef<Path>, options: &RunOptions) -> Result<Report, Error> {
    let dir = dir.as_ref();
    let fixture = Fixture::load(dir)?;
    run_suite_on(&fixture, &fixture, options)
}

/// Runs the suite of `fixture`'s folder on `target`; blessing writes what the target answered.
pub fn run_suite_on(fixture: &Fixture, target: &dyn SuiteTarget, options: &RunOptions) -> Result<Report, Error> {
    let report = run_files(fixture, target, options);
    let finished = target.finish();
    let report = report?;
    finished?;
    Ok(report)
}

fn run_files(fixture: &Fixture, target: &dyn SuiteTarget, options: &RunOptions) -> Result<Report, Error> {
    let dir = fixture.dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io_error(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "sql"))
        .collect();
    files.sort();
    let mut report = Report::default();
    for path in files {
        run_file_on(fixture, target, &path, options, &mut report)?;
    }
    Ok(report)
}

/// Runs one `.sql` file over `fixture`, adding its cases to `report`.
pub fn run_file(fixture: &Fixture, path: &Path, options: &RunOptions, report: &mut Report) -> Result<(), Error> {
    run_file_on(fixture, fixture, path, options, report)
}

/// Runs one `.sql` file of `fixture`'s suite on `target`, adding its cases to `report`.
pub fn run_file_on(
    fixture: &Fixture,
    target: &dyn SuiteTarget,
    path: &Path,
    options: &RunOptions,
    report: &mut Report,
) -> Result<(), Error> {
    let text = std::fs::read_to_string(path).map_err(io_error(path))?;
    let file = parse_suite_file(&text);
    for (line, problem) in &file.problems {
        report.cases.push(CaseReport {
            file: path.to_path_buf(),
            line: *line,
            name: "(file)".into(),
            status: Status::Failed,
            details: format!("  {problem}\n"),
        });
    }
    let mut edits: Vec<((usize, usize), Vec<String>)> = Vec::new();
    for case in &file.cases {
        let (status, details, replacement) = run_case(fixture, target, case, options.bless);
        if let Some(lines) = replacement {
            edits.push((case.span, lines));
        }
        report.cases.push(CaseReport {
            file: path.to_path_buf(),
            line: case.line,
            name: case.name.clone(),
            status,
            details,
        });
    }
    if !edits.is_empty() {
        let mut lines = file.lines.clone();
        for ((start, end), replacement) in edits.into_iter().rev() {
            let end = end.min(lines.len());
            let start = start.min(end);
            lines.splice(start..end, replacement);
        }
        let mut new_text = lines.join("\n");
        if file.trailing_newline || file.lines.is_empty() {
            new_text.push('\n');
        }
        if new_text != text {
            std::fs::write(path, new_text).map_err(io_error(path))?;
            report.blessed_files.push(path.to_path_buf());
        }
    }
    Ok(())
}

/// Runs a case: its status, the failure details and, when blessing a failure, the new
/// expectation lines.
fn run_case(
    fixture: &Fixture,
    target: &dyn SuiteTarget,
    case: &Case,
    bless: bool,
) -> (Status, String, Option<Vec<String>>) {
    let mut details = format!("query:\n{}\n", indent(&case.sql, "  "));
    let options = describe_settings(case);
    if !options.is_empty() {
        details.push_str(&format!("options: {options}\n"));
    }
    if !case.problems.is_empty() {
        for p in &case.problems {
            details.push_str(&format!("  {p}\n"));
        }
        return (Status::Failed, details, None);
    }
    let result = match target.run(fixture, &case.settings, &case.sql) {
        Ok(result) => result,
        Err(e) => {
            details.push_str(&format!("  {e}\n"));
            return (Status::Failed, details, None);
        }
    };
    let mismatch = match (&case.expect, &result) {
        (Expect::Missing, _) => {
            Some("no expected result (`-- @expect` or `-- @error`; --bless writes it)\n".to_string())
        }
        (Expect::Rows { text, line }, Ok(actual)) => match parse_json(text) {
            Ok(Value::Array(expected)) => compare_rows(&expected, actual, case.order_any),
            Ok(_) | Err(_) if text.trim().is_empty() => Some(format!("line {line}: no JSON after `-- @expect`\n")),
            Ok(_) => Some(format!("line {line}: the expected result is not a JSON array\n")),
            Err(e) => Some(format!("line {line}: the expected result is not JSON: {e}\n")),
        },
        (Expect::Rows { text, .. }, Err(error)) => Some(format!(
            "expected results:\n{}\ngot a {} error:\n{}\n",
            indent(text.trim_end(), "  "),
            kind_name(error.kind),
            indent(&error.render(&case.sql), "  ")
        )),
        (Expect::Error { kind, text }, Ok(actual)) => Some(format!(
            "expected {}\ngot results:\n{}\n",
            describe_error(*kind, text),
            indent(&pretty_rows(actual), "  ")
        )),
        (Expect::Error { kind, text }, Err(error)) => {
            let rendered = error.render(&case.sql);
            // An error without a location (from an endpoint whose answer has none) matches on
            // the message: the expectation's `line L, column C: ` is not compared.
            let text = match error.span {
                None => without_location(text),
                Some(_) => text.as_str(),
            };
            if error.kind == *kind && rendered.contains(text) {
                None
            } else {
                Some(format!(
                    "expected {}\ngot a {} error:\n{}\n",
                    describe_error(*kind, text),
                    kind_name(error.kind),
                    indent(&rendered, "  ")
                ))
            }
        }
    };
    let Some(mismatch) = mismatch else { return (Status::Passed, String::new(), None) };
    details.push_str(&mismatch);
    if !bless {
        return (Status::Failed, details, None);
    }
    let lines = match &result {
        Ok(actual) => {
            let mut lines = vec!["-- @expect".to_string()];
            lines.extend(format_rows(actual).lines().map(str::to_string));
            lines
        }
        Err(error) => {
            let rendered = error.render(&case.sql);
            let first = rendered.lines().next().unwrap_or("").trim();
            vec![format!("-- @error {} {first}", kind_name(error.kind)).trim_end().to_string()]
        }
    };
    (Status::Blessed, details, Some(lines))
}

/// `text` without a leading `line L, column C: `.
fn without_location(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("line ") else { return text };
    let Some((numbers, message)) = rest.split_once(": ") else { return text };
    let shape = numbers.split_once(", column ");
    match shape {
        Some((l, c)) if l.bytes().all(|b| b.is_ascii_digit()) && c.bytes().all(|b| b.is_ascii_digit()) => message,
        _ => text,
    }
}

fn describe_error(kind: QueryErrorKind, text: &str) -> String {
    if text.is_empty() {
        format!("a {} error", kind_name(kind))
    } else {
        format!("a {} error containing {text:?}", kind_name(kind))
    }
}

fn describe_settings(case: &Case) -> String {
    let s = &case.settings;
    let mut parts = Vec::new();
    if let Some(c) = &s.container {
        parts.push(format!("container {c}"));
    }
    if let Some(n) = s.partitions {
        parts.push(format!("partitions {n}"));
    }
    for (name, value) in &s.parameters {
        parts.push(format!("{name} = {}", to_json_string(value).unwrap_or_else(|| "undefined".into())));
    }
    if case.order_any {
        parts.push("order any".into());
    }
    if let Some(n) = s.max_dop {
        parts.push(format!("maxdop {n}"));
    }
    if let Some(n) = s.page_size {
        parts.push(format!("pagesize {n}"));
    }
    if let Some(pk) = &s.partition_key {
        parts.push(format!("pk {pk}"));
    }
    parts.join(", ")
}

fn compare_rows(expected: &[Value], actual: &[Value], order_any: bool) -> Option<String> {
    if order_any {
        let mut e = expected.to_vec();
        let mut a = actual.to_vec();
        e.sort();
        a.sort();
        if e == a {
            return None;
        }
        return Some(format!(
            "expected (-) vs actual (+), compared as a multiset (both sorted):\n{}",
            diff(&pretty_rows(&e), &pretty_rows(&a))
        ));
    }
    if expected == actual {
        return None;
    }
    let mut note = String::new();
    let (mut e, mut a) = (expected.to_vec(), actual.to_vec());
    e.sort();
    a.sort();
    if e == a {
        note = " (the same results in another order; `-- @order any` compares as a multiset)".into();
    }
    Some(format!("expected (-) vs actual (+){note}:\n{}", diff(&pretty_rows(expected), &pretty_rows(actual))))
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines().map(|l| format!("{prefix}{l}")).collect::<Vec<_>>().join("\n")
}

/// Results as pretty JSON (two-space indent), for diffs.
fn pretty_rows(rows: &[Value]) -> String {
    to_json_string_pretty(&Value::array(rows.iter().cloned())).unwrap_or_else(|| "undefined".into())
}

/// A line diff of two texts: changed lines with `-` (only in `expected`) and `+` (only in
/// `actual`), three lines of context around each change, `...` between distant changes. Empty
/// when the texts are equal.
pub fn diff(expected: &str, actual: &str) -> String {
    let mut e = expected.to_string();
    let mut a = actual.to_string();
    for t in [&mut e, &mut a] {
        if !t.ends_with('\n') {
            t.push('\n');
        }
    }
    let d = similar::TextDiff::from_lines(&e, &a);
    let mut out = String::new();
    for (i, group) in d.grouped_ops(3).iter().enumerate() {
        if i > 0 {
            out.push_str("  ...\n");
        }
        for op in group {
            for change in d.iter_changes(op) {
                let sign = match change.tag() {
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                    similar::ChangeTag::Equal => ' ',
                };
                out.push(sign);
                out.push(' ');
                out.push_str(change.value().trim_end_matches(['\n', '\r']));
                out.push('\n');
            }
        }
    }
    out
}

/// JSON with a space after `,` and `:` on one line: `{"a": 1, "b": [1, 2]}`.
fn spaced(v: &Value) -> Option<String> {
    Some(match v {
        Value::Array(items) => {
            format!("[{}]", items.iter().filter_map(spaced).collect::<Vec<_>>().join(", "))
        }
        Value::Object(m) => {
            let entries: Vec<String> = m
                .iter()
                .filter_map(|(k, v)| Some(format!("{}: {}", to_json_string(&Value::from(k.as_str()))?, spaced(v)?)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        other => to_json_string(other)?,
    })
}

/// Results as blessing writes them: one line when short, else one result per line (results too
/// long for a line pretty-printed).
pub fn format_rows(rows: &[Value]) -> String {
    let items: Vec<String> = rows.iter().filter_map(spaced).collect();
    let one_line = format!("[{}]", items.join(", "));
    if one_line.len() <= ONE_LINE {
        return one_line;
    }
    let mut out = String::from("[\n");
    let kept: Vec<&Value> = rows.iter().filter(|r| spaced(r).is_some()).collect();
    for (i, (row, text)) in kept.iter().zip(&items).enumerate() {
        let text = if text.len() + 2 <= ONE_LINE {
            text.clone()
        } else {
            to_json_string_pretty(row).unwrap_or_else(|| text.clone())
        };
        out.push_str(&indent(&text, "  "));
        if i + 1 < items.len() {
            out.push(',');
        }
        out.push('\n');
    }
    out.push(']');
    out
}
