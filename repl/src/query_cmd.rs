//! `cosmoql query` and `cosmoql bench`: load data into an in-memory container, run one query.
//! Both are contracts that scripts and test harnesses rely on (see `--help`).

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

use cosmoql::value::{parse_json, Value};
use cosmoql::{
    ChangeFeedStart, ContainerClient, ContainerProperties, ContainerSettings, CosmosClient, FeedRange, ImportOptions,
    IndexingPolicy, JsonText, PartitionKey, PartitionKeyDefinition, QueryOptions, QueryResults, VectorPolicy,
};

/// Where the items come from: files loaded into a container in memory, or a database
/// directory's container.
#[derive(Debug, clap::Args)]
pub struct DataArgs {
    /// A JSON array or NDJSON file of items to load (repeatable).
    #[arg(long = "data", value_name = "FILE")]
    data: Vec<PathBuf>,
    /// Use a container of this database directory instead of loading files (`--use` names it
    /// when the database has several).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["data", "container", "partition_key", "partitions"])]
    db: Option<PathBuf>,
    /// With `--db`: the container.
    #[arg(long = "use", value_name = "CONTAINER", requires = "db")]
    use_container: Option<String>,
    /// The container's partition key path (repeat for a hierarchical key; none: no key).
    #[arg(long = "partition-key", value_name = "PATH")]
    partition_key: Vec<String>,
    /// Container properties in Cosmos DB's JSON form (`id`, `partitionKey`, `indexingPolicy`,
    /// `vectorEmbeddingPolicy`, ...); `--partition-key` overrides its key.
    #[arg(long, value_name = "FILE")]
    container: Option<PathBuf>,
    /// Physical partitions to start with (default: 1 per 10,000 items, guessing 300 bytes of file
    /// an item; a container without a key has one).
    #[arg(long, value_name = "N")]
    partitions: Option<usize>,
}

/// How a query runs: its parameters, its partition key, the cross-partition executor's bounds.
#[derive(Debug, clap::Args)]
pub struct QueryFlags {
    /// Bind a parameter: `--param @x=5`, `--param name='"text"'` (the value is JSON).
    #[arg(long = "param", value_name = "NAME=JSON")]
    params: Vec<String>,
    /// Scope the query to one logical partition: the key as JSON (`"dev-1"`, `["acme", 2]`).
    #[arg(long, value_name = "JSON")]
    pk: Option<String>,
    /// Producers running at once in a cross-partition query: 0 or 1 one at a time, -1 one per
    /// core (the default), n at most n.
    #[arg(long = "max-dop", value_name = "N", allow_hyphen_values = true)]
    max_dop: Option<i32>,
    /// Bound on results produced but not yet returned (at least one page per running producer).
    #[arg(long = "max-buffered", value_name = "N")]
    max_buffered: Option<usize>,
    /// Fetch the results in pages of N, each resumed from the previous page's continuation token
    /// (the output is the same; `--metrics` adds the page count).
    #[arg(long = "page-size", value_name = "N")]
    page_size: Option<usize>,
    /// Refuse a query that would read more than one physical partition.
    #[arg(long = "no-cross-partition")]
    no_cross_partition: bool,
    /// Run every query on the row engine, even an aggregate the container's analytical store
    /// (`analyticalStorageTtl`) answers exactly, which otherwise runs there (EXPLAIN says where
    /// and why).
    #[arg(long = "row-engine")]
    row_engine: bool,
    /// Bytes a query's sorts without LIMIT, groups, DISTINCT and ranking may hold at once; past
    /// it the query fails with a clear error. Results returned are not counted (they stream); those
    /// held for the next pages are.
    #[arg(long = "memory-budget", value_name = "BYTES", default_value_t = cosmoql::DEFAULT_MEMORY_BUDGET)]
    memory_budget: u64,
}

/// Options of `cosmoql query`.
#[derive(Debug, clap::Args)]
pub struct QueryArgs {
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    flags: QueryFlags,
    /// Print execution metrics as one JSON object on the last line of standard error.
    #[arg(long)]
    metrics: bool,
    /// The query.
    sql: String,
}

/// Options of `cosmoql explain`.
#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    flags: QueryFlags,
    /// Also run the query and print its metrics (EXPLAIN ANALYZE).
    #[arg(long)]
    analyze: bool,
    /// The query.
    sql: String,
}

/// `cosmoql explain`: the plan (targets and why, per-partition work, merge stages); with
/// `--analyze`, also what running it did.
pub fn run_explain(args: &ExplainArgs) -> Result<(), String> {
    let loaded = load_routed(&args.data, &args.flags)?;
    let options = query_options(&args.flags, &loaded)?;
    let explained = loaded.client.explain(args.sql.as_str(), options, args.analyze).map_err(|e| e.to_string())?;
    outln!("{explained}");
    Ok(())
}

/// Options of `cosmoql skew`.
#[derive(Debug, clap::Args)]
pub struct SkewArgs {
    #[command(flatten)]
    data: DataArgs,
    /// Print the report as one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// `cosmoql skew`: how the loaded items spread over the physical partitions, the heaviest
/// logical partitions and what looks wrong.
pub fn run_skew(args: &SkewArgs) -> Result<(), String> {
    let loaded = load(&args.data)?;
    let report = loaded.client.skew_report();
    if args.json {
        outln!("{}", cosmoql::value::to_json_string(&report.to_json()).unwrap_or_default());
    } else {
        outln!("{}", report.to_string().trim_end());
    }
    Ok(())
}

/// Options of `cosmoql changes`.
#[derive(Debug, clap::Args)]
pub struct ChangesArgs {
    #[command(flatten)]
    data: DataArgs,
    /// Only this logical partition's changes: the key as JSON (`"dev-1"`, `["acme", 2]`).
    #[arg(long, value_name = "JSON")]
    pk: Option<String>,
    /// Where the feed starts: `beginning`, `now`, or a time in Unix seconds (as `_ts`).
    #[arg(long, default_value = "beginning", value_name = "WHEN")]
    from: String,
    /// Resume after an earlier page (its continuation is printed on standard error).
    #[arg(long, value_name = "TOKEN")]
    continuation: Option<String>,
    /// Changes per page.
    #[arg(long = "max-items", default_value_t = 100, value_name = "N")]
    max_items: usize,
    /// Read page after page until the feed has nothing more (default: one page).
    #[arg(long)]
    all: bool,
    /// All versions and deletes (the container needs a retention: `--container` with a
    /// `changeFeedPolicy`); default: each changed item once, in its latest version.
    #[arg(long = "all-versions")]
    all_versions: bool,
}

/// `cosmoql changes`: the loaded container's change feed (the whole container, or `--pk`'s
/// logical partition), one change per line; the continuation on standard error.
pub fn run_changes(args: &ChangesArgs) -> Result<(), String> {
    let loaded = load(&args.data)?;
    let start = match args.from.as_str() {
        "beginning" => ChangeFeedStart::Beginning,
        "now" => ChangeFeedStart::Now,
        t => ChangeFeedStart::Time(
            t.parse::<u64>().map_err(|_| format!("--from: `{t}` is not beginning, now or a Unix time in seconds"))?,
        ),
    };
    let range = match &args.pk {
        Some(pk) => FeedRange::Key(PartitionKey::parse_json(pk).map_err(|e| format!("--pk: {e}"))?),
        None => FeedRange::All,
    };
    let mut token = args.continuation.clone();
    let mut total = 0usize;
    loop {
        let page = if args.all_versions {
            loaded.client.read_change_feed_all_versions(&range, start, token.as_deref(), args.max_items)
        } else {
            loaded.client.read_change_feed::<Value>(&range, start, token.as_deref(), args.max_items)
        }
        .map_err(|e| e.to_string())?;
        for change in &page.items {
            outln!("{}", cosmoql::value::to_json_string(change).unwrap_or_default());
        }
        total += page.items.len();
        token = Some(page.continuation);
        if !args.all || page.items.is_empty() {
            break;
        }
    }
    let noun = if total == 1 { "change" } else { "changes" };
    errln!("{total} {noun}; continuation: {}", token.unwrap_or_default());
    Ok(())
}

/// Options of `cosmoql bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    flags: QueryFlags,
    /// Timed runs after one warm-up run.
    #[arg(long, default_value_t = 10, value_name = "R")]
    repeat: usize,
    /// Time a statement of standard SQL on the analytical store (`cosmoql analyze`'s) instead of
    /// a Cosmos SQL query; the line adds mirrorSeconds and mirrorBytes, the first sync's build
    /// of the mirror and what it holds.
    #[arg(long)]
    analytics: bool,
    /// The query.
    sql: String,
}

/// A loaded container and the query options the arguments give.
pub struct Loaded {
    /// A database directory's account, kept open (its lock held) while the command runs.
    account: Option<CosmosClient>,
    pub client: ContainerClient,
    /// `--container`'s properties.
    properties: Option<Value>,
    /// With `--db`: the database's containers.
    containers: Vec<String>,
    load_seconds: f64,
}

impl Loaded {
    /// With `--db`: the database directory's account.
    pub fn account(&self) -> Option<&CosmosClient> {
        self.account.as_ref()
    }
}

impl DataArgs {
    /// `--use`'s container.
    pub fn use_container(&self) -> Option<&str> {
        self.use_container.as_deref()
    }
}

pub fn load(args: &DataArgs) -> Result<Loaded, String> {
    load_with(args, false)
}

/// [`load`] for the analytical store, whose statements name their containers: a database
/// directory of several containers needs no `--use` (the first is the loaded one).
pub fn load_any(args: &DataArgs) -> Result<Loaded, String> {
    load_with(args, true)
}

fn load_with(args: &DataArgs, any: bool) -> Result<Loaded, String> {
    let started = Instant::now();
    let properties = match &args.container {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            Some(parse_json(&text).map_err(|e| format!("{}: invalid JSON: {e}", path.display()))?)
        }
        None => None,
    };
    let key = if !args.partition_key.is_empty() || properties.is_none() {
        let refs: Vec<&str> = args.partition_key.iter().map(String::as_str).collect();
        PartitionKeyDefinition::from_paths(&refs).map_err(|e| e.to_string())?
    } else {
        let props = properties.as_ref().map(|p| p.get("partitionKey")).unwrap_or(&Value::Undefined);
        PartitionKeyDefinition::from_json(props).map_err(|e| e.to_string())?
    };
    let total_bytes: u64 = args.data.iter().filter_map(|f| std::fs::metadata(f).ok()).map(|m| m.len()).sum();
    let settings = match args.partitions {
        Some(n) => ContainerSettings { initial_partitions: n, ..ContainerSettings::default() },
        None => ContainerSettings::for_expected_items(usize::try_from(total_bytes / 300).unwrap_or(usize::MAX)),
    };
    settings.validate().map_err(|e| format!("--partitions: {}", e.message))?;
    let (account, client) = match &args.db {
        Some(dir) => {
            let (account, client) = open_container(dir, args.use_container.as_deref(), any)?;
            (Some(account), client)
        }
        None => {
            let mut container = ContainerProperties::with_key("c", key).settings(settings);
            if let Some(policy) = properties.as_ref().map(|p| p.get("indexingPolicy")).filter(|p| !p.is_undefined()) {
                let policy = IndexingPolicy::from_json(policy)
                    .map_err(|e| format!("--container: indexingPolicy: {}", e.message))?;
                container = container.indexing_policy(policy);
            }
            let attl = properties.as_ref().map(|p| p.get("analyticalStorageTtl")).unwrap_or(&Value::Undefined);
            if !attl.is_undefined() {
                let ttl = attl
                    .as_f64()
                    .filter(|t| t.fract() == 0.0 && t.abs() < 1e15)
                    .ok_or("--container: analyticalStorageTtl is an integer: 0, -1 or 1 to 2147483647".to_string())?;
                container = container.analytical_storage_ttl(Some(ttl as i64));
            }
            let client = ContainerClient::standalone(container).map_err(|e| e.to_string())?;
            for path in &args.data {
                let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
                client
                    .import(
                        BufReader::with_capacity(1 << 20, file),
                        ImportOptions { fail_fast: true, ..ImportOptions::default() },
                    )
                    .map_err(|e| format!("{}: {}", path.display(), e.message))?;
            }
            (None, client)
        }
    };
    let containers = account.as_ref().map(container_ids).unwrap_or_default();
    Ok(Loaded { account, client, properties, containers, load_seconds: started.elapsed().as_secs_f64() })
}

/// [`load`], with the client routing the Cosmos SQL aggregates the container's analytical store
/// answers exactly there (when it has one, and without `--row-engine`).
fn load_routed(data: &DataArgs, flags: &QueryFlags) -> Result<Loaded, String> {
    let mut loaded = load(data)?;
    if !flags.row_engine && loaded.client.container().analytical_ttl().is_some() {
        let analytics = analytics_for(&loaded, data, cosmoql_analytics::SchemaMode::WellDefined, false)?;
        let route = cosmoql_analytics::AnalyticalRoute::new(std::sync::Arc::new(analytics));
        loaded.client = loaded.client.with_route(std::sync::Arc::new(route));
    }
    Ok(loaded)
}

/// The query options `flags` (and `--container`'s vector policies) give.
fn query_options(args: &QueryFlags, loaded: &Loaded) -> Result<QueryOptions, String> {
    for (flag, value) in [("--max-buffered", args.max_buffered), ("--page-size", args.page_size)] {
        if value == Some(0) {
            return Err(format!("{flag} must be at least 1"));
        }
    }
    if args.max_dop.is_some_and(|d| d < -1) {
        return Err("--max-dop must be -1, 0 or a positive number".to_string());
    }
    let mut options = QueryOptions {
        enable_cross_partition: !args.no_cross_partition,
        max_degree_of_parallelism: args.max_dop.unwrap_or(-1),
        max_buffered_item_count: args.max_buffered,
        max_item_count: args.page_size,
        memory_budget: Some(args.memory_budget),
        vector_policies: match &loaded.properties {
            Some(p) => VectorPolicy::from_container_properties(p).map_err(|e| format!("--container: {e}"))?,
            None => Vec::new(),
        },
        ..QueryOptions::default()
    };
    options.parameters = parameters(&args.params)?;
    if let Some(pk) = &args.pk {
        options.partition_key = Some(PartitionKey::parse_json(pk).map_err(|e| format!("--pk: {e}"))?);
    }
    Ok(options)
}

/// The ids of every container of every database of `account`.
fn container_ids(account: &CosmosClient) -> Vec<String> {
    account.database_ids().iter().flat_map(|d| account.database_client(d).container_ids().unwrap_or_default()).collect()
}

/// A database directory's container: `name`, or the only one there is (with `any`, the first of
/// several); with the account, which holds the directory's lock while it is kept.
pub fn open_container(
    dir: &std::path::Path,
    name: Option<&str>,
    any: bool,
) -> Result<(CosmosClient, ContainerClient), String> {
    if !dir.exists() {
        return Err(format!(
            "{} does not exist (cosmoql import --db, or cosmoql DIR, creates a database)",
            dir.display()
        ));
    }
    if !dir.join("CURRENT").is_file() {
        return Err(format!("{} is not a cosmoql database directory (cosmoql import --db creates one)", dir.display()));
    }
    let account = CosmosClient::open(dir).map_err(crate::open::message)?;
    for note in crate::open::recovery_notes(&account) {
        errln!("{note}");
    }
    let mut found = Vec::new();
    for db in account.database_ids() {
        let db = account.database_client(&db);
        for id in db.container_ids().map_err(|e| e.to_string())? {
            if name.is_none_or(|n| n == id) {
                found.push(db.container_client(&id).map_err(|e| e.to_string())?);
            }
        }
    }
    match (found.len(), name) {
        (1, _) => {
            let container = found.remove(0);
            Ok((account, container))
        }
        (2.., None) if any => {
            let container = found.remove(0);
            Ok((account, container))
        }
        (0, Some(n)) => Err(match container_ids(&account).as_slice() {
            [] => format!("no container `{n}` in {}: it has none", dir.display()),
            names => format!("no container `{n}` in {} (it has {})", dir.display(), names.join(", ")),
        }),
        (0, None) => Err(format!("{} has no container", dir.display())),
        (_, _) => Err(format!(
            "{} has several containers ({}): name one with --use",
            dir.display(),
            found.iter().map(|c| c.id().to_string()).collect::<Vec<_>>().join(", ")
        )),
    }
}

fn parameters(params: &[String]) -> Result<HashMap<String, Value>, String> {
    let mut out = HashMap::new();
    for p in params {
        let (name, json) = p.split_once('=').ok_or_else(|| format!("--param `{p}`: expected NAME=JSON"))?;
        let name = name.trim().trim_start_matches('@');
        if name.is_empty() {
            return Err(format!("--param `{p}`: the name is empty"));
        }
        let value = parse_json(json).map_err(|e| {
            let hint = crate::statements::quote_hint(json)
                .map(|q| format!("; a string is quoted: --param @{name}='{q}'"))
                .unwrap_or_default();
            format!("--param @{name}: `{json}` is {e}{hint}")
        })?;
        if out.insert(name.to_string(), value).is_some() {
            return Err(format!("--param @{name} is given twice"));
        }
    }
    Ok(out)
}

/// Runs the query to the end, page by page when a page size is set; metrics add up over pages.
/// Every result as the JSON text `cosmoql query` writes (items returned whole are written from
/// their stored bytes, as a client's driver hands back a row store's text).
fn run_all(loaded: &Loaded, options: &QueryOptions, sql: &str) -> Result<QueryResults<JsonText>, String> {
    loaded.client.query_pages::<JsonText>(sql, options.clone()).drain().map_err(|e| e.to_string())
}

/// `cosmoql query`: results as one JSON array on stdout, written as they are produced (a page at
/// a time with `--page-size`), so no result set is held in memory.
pub fn run_query(args: &QueryArgs) -> Result<(), String> {
    let loaded = load_routed(&args.data, &args.flags)?;
    let options = query_options(&args.flags, &loaded)?;
    let mut out = BufWriter::new(crate::output::stdout());
    let mut opened = false;
    let mut write = |item: &JsonText| -> io::Result<()> {
        // Results are JSON (the engine refuses NaN and infinities; a value without a JSON form
        // fails the query, never written as an empty element); whole items are written from
        // their stored bytes.
        out.write_all(if opened { b"," } else { b"[" })?;
        opened = true;
        out.write_all(item.as_str().as_bytes())
    };
    // A write that fails stops the query (the failure is reported by `main`).
    let options = QueryOptions { populate_index_metrics: args.metrics, ..options };
    let result =
        loaded.client.query_pages::<JsonText>(args.sql.as_str(), options).for_each(|item| write(&item).is_ok());
    // The array is closed even when the query fails midway, so standard output stays JSON; the
    // error goes to standard error and the exit status is 1.
    if result.is_ok() || opened {
        let _ = out.write_all(if opened { b"]\n" } else { b"[]\n" });
    }
    let _ = out.flush();
    drop(out);
    let output = result.map_err(|e| e.to_string())?;
    note_alias(&loaded, &args.sql);
    let pages = output.pages;
    if args.metrics {
        let m = &output.metrics;
        let partitions: Vec<String> = output
            .partitions
            .iter()
            .map(|p| {
                format!(
                    "{{\"id\":{},\"retrievedDocumentCount\":{},\"indexEntriesRead\":{},\"timeMs\":{}}}",
                    p.partition,
                    p.retrieved_document_count,
                    p.index_entries,
                    cosmoql::value::format_number((p.time_ms * 1000.0).round() / 1000.0)
                )
            })
            .collect();
        errln!(
            "{{\"partitionsTouched\":{},\"physicalPartitions\":{},\"retrievedDocumentCount\":{},\"indexEntriesRead\":{},\"outputDocumentCount\":{},\"requestCharge\":{},\"peakBufferedItems\":{},\"pages\":{},\"partitions\":[{}],\"indexMetrics\":{},\"queryMetrics\":\"{}\"}}",
            m.partitions_touched,
            m.physical_partitions,
            m.retrieved_document_count,
            m.index_entries_read,
            m.output_document_count,
            cosmoql::value::format_number((m.request_charge * 100.0).round() / 100.0),
            m.peak_buffered_items,
            pages,
            partitions.join(","),
            output.index_metrics.as_ref().and_then(cosmoql::value::to_json_string).unwrap_or_else(|| "null".into()),
            m.to_header_string()
        );
    }
    Ok(())
}

/// `FROM telemetry` on `--use families`: the query ran on families (the name after FROM is an
/// alias in Cosmos DB); said on standard error.
fn note_alias(loaded: &Loaded, sql: &str) {
    let Ok(query) = cosmoql::parse(sql) else { return };
    let current = loaded.client.id();
    if let Some(other) = crate::statements::other_container(&query, current, &loaded.containers) {
        errln!(
            "note: this ran on {current}: the name after FROM is an alias in Cosmos DB, not a container (--use \
             {other} to query {other})"
        );
    }
}

/// Resident set size (Linux), for `peakRssBytes`.
fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// `cosmoql bench`: load once, one warm-up, `repeat` timed runs, one JSON line of timings.
pub fn run_bench(args: &BenchArgs) -> Result<(), String> {
    if args.repeat == 0 {
        return Err("--repeat must be at least 1".to_string());
    }
    let loaded = if args.analytics { load(&args.data)? } else { load_routed(&args.data, &args.flags)? };
    let options = query_options(&args.flags, &loaded)?;
    let mut mirror_seconds = None;
    let analytics = if args.analytics {
        let mode = cosmoql_analytics::SchemaMode::WellDefined;
        let analytics = analytics_for(&loaded, &args.data, mode, false)?;
        let started = Instant::now();
        let synced = analytics.sync().map_err(|e| e.to_string())?;
        let seconds = started.elapsed().as_secs_f64();
        let bytes: usize =
            synced.iter().map(|s| analytics.mirror(&s.database, &s.container).map_or(0, |m| m.memory_bytes())).sum();
        mirror_seconds = Some((seconds, bytes));
        Some(analytics)
    } else {
        None
    };
    let run = || -> Result<usize, String> {
        match &analytics {
            Some(a) => Ok(std::hint::black_box(a.sql(&args.sql).map_err(|e| e.render(&args.sql))?).len()),
            None => Ok(std::hint::black_box(run_all(&loaded, &options, &args.sql)?).items.len()),
        }
    };
    let results = run()?;
    let mut times = Vec::with_capacity(args.repeat);
    for _ in 0..args.repeat {
        let started = Instant::now();
        run()?;
        times.push(started.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let median = if times.len() % 2 == 1 {
        times[times.len() / 2]
    } else {
        (times[times.len() / 2 - 1] + times[times.len() / 2]) / 2.0
    };
    let mirror =
        mirror_seconds.map(|(s, bytes)| format!("\"mirrorSeconds\":{s},\"mirrorBytes\":{bytes},")).unwrap_or_default();
    outln!(
        "{{\"loadSeconds\":{},{mirror}\"items\":{},\"results\":{},\"minSeconds\":{},\"medianSeconds\":{},\"maxSeconds\":{},\"peakRssBytes\":{}}}",
        loaded.load_seconds,
        loaded.client.item_count(),
        results,
        times[0],
        median,
        times[times.len() - 1],
        peak_rss()
    );
    Ok(())
}

/// The analytical store over what `data` loaded (enabling it where asked).
pub fn analytics_for(
    loaded: &Loaded,
    data: &DataArgs,
    mode: cosmoql_analytics::SchemaMode,
    enable: bool,
) -> Result<cosmoql_analytics::Analytics, String> {
    let analytics = cosmoql_analytics::Analytics::new(mode).map_err(|e| e.to_string())?;
    let analytics = match loaded.account() {
        Some(account) => {
            if enable {
                let only = data.use_container();
                for db in account.database_ids() {
                    let db = account.database_client(&db);
                    for id in db.container_ids().map_err(|e| e.to_string())? {
                        if only.is_none_or(|o| o == id) {
                            let c = db.container_client(&id).map_err(|e| e.to_string())?;
                            if c.read_properties().get("analyticalStorageTtl").is_undefined() {
                                c.replace_analytical_storage_ttl(Some(-1)).map_err(|e| e.to_string())?;
                            }
                        }
                    }
                }
            }
            analytics.with_account(account)
        }
        None => analytics.with_container("db", &loaded.client).map_err(|e| e.to_string())?,
    };
    if analytics.tables().is_empty() {
        return Err("no container has an analytical store (give one an analyticalStorageTtl: --enable, or \
                    .analytics enable in the REPL)"
            .into());
    }
    Ok(analytics)
}
