//! Replays every query case of the shared conformance corpus (results recorded from the real
//! Cosmos DB service) and compares the results.
//!
//! The corpus is `tests/conformance` (copied from `../shared/conformance` by
//! `scripts/sync-conformance.sh`; `$COSMOQL_CONFORMANCE_DIR` names another copy); without it the
//! runner fails. Cases that are
//! known to fail are listed below with their cause: the test fails when an unlisted case fails,
//! and also when a listed case starts passing, so the list cannot rot.

use std::path::{Path, PathBuf};

use cosmoql::executor::VectorPolicy;
use cosmoql::planner::{bind, BindContext};
use cosmoql::storage::{CompositePath, IndexingPolicy};
use cosmoql::storage::{Container, ContainerSettings, PartitionKeyDefinition};
use cosmoql::testing::strip_system;
use cosmoql::value::{parse_json, Value};
use cosmoql::{execute, QueryOptions};

/// Cases that fail today, and why.
const KNOWN_FAILURES: &[(&str, &str)] = &[
    (
        "functions-string/contains-all-cs",
        "the documented result contradicts itself: case1 (lower-case needles \"have\", \"nice\", \"day!\" in \
         \"Have a nice day!\") is true, which needs case-insensitive matching, while case2 (\"HAVE\", \"NICE\", \
         \"DAY!\") is false, which needs case-sensitive matching; the page defines CONTAINS_ALL_CS as \
         CONTAINS(s, x, false) AND ..., which gives case1 false. Not a CI-validated sample.",
    ),
    (
        "functions-spatial/st-distance",
        "the service's algorithm is not public, and it is not the geodesic: Karney's exact WGS-84 geodesics give \
         3345.26974 m and 1907438.342 m against the documented 3345.269817 m and 1907438.421 m (2e-8 and 4e-8 \
         relative). Measured on 2026-11-26: the long distance is the great-elliptic arc (the ellipse cut by the \
         plane through the centre and both points) on a = 6378137, b = 6356752.314 (rounded), to 5e-14; the short \
         one is matched to 2e-13 by a one-point midpoint rule along the chord between the unit normals, which \
         overestimates long arcs by 7e-3, so the service switches methods at a length these two cases do not \
         pin down. The case has no float_tolerance.",
    ),
    (
        "functions-spatial/st-area",
        "as ST_DISTANCE: 735970287.9 m2 on the WGS-84 ellipsoid with geodesic edges against the documented \
         735970283.05 m2 (7e-9 relative); great-elliptic edges on b = 6356752.314 come to 6e-12 but not to the \
         last digit. The case has no float_tolerance.",
    ),
];

/// The corpus folder; a test failure when it is missing (a clone must check every case).
fn corpus() -> PathBuf {
    let dir = match std::env::var_os("COSMOQL_CONFORMANCE_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance"),
    };
    assert!(
        dir.join("docs").is_dir() && dir.join("engine/cases").is_dir(),
        "the conformance corpus is missing at {} (restore tests/conformance, or run scripts/sync-conformance.sh)",
        dir.display()
    );
    dir
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

/// Equality of results: numbers by value (within `tolerance` for non-integers), objects ignoring
/// key order, arrays in order.
fn same(a: &Value, b: &Value, tolerance: f64) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || (tolerance > 0.0 && (x - y).abs() <= tolerance * x.abs().max(y.abs()).max(1.0))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same(p, q, tolerance))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w, tolerance)))
        }
        _ => a == b,
    }
}

fn results_match(actual: &[Value], expected: &[Value], ordered: bool, tolerance: f64) -> bool {
    if actual.len() != expected.len() {
        return false;
    }
    if ordered {
        return actual.iter().zip(expected).all(|(a, e)| same(a, e, tolerance));
    }
    let mut unused: Vec<&Value> = expected.iter().collect();
    actual.iter().all(|a| match unused.iter().position(|e| same(a, e, tolerance)) {
        Some(i) => {
            unused.swap_remove(i);
            true
        }
        None => false,
    })
}

/// Runs one case at 1, 3 and 16 physical partitions, and page by page (page size 1) at 3.
fn run_case(file: &Path, case: &Value) -> Result<(), String> {
    for (partitions, page) in [(1, None), (3, None), (16, None), (3, Some(1))] {
        run_case_with(file, case, partitions, page).map_err(|e| {
            format!("at {partitions} partition(s){}: {e}", page.map_or(String::new(), |p| format!(", page size {p}")))
        })?;
    }
    Ok(())
}

/// The case's indexing policy: its container's, or the default. The documentation's ORDER BY
/// examples on several properties assume the composite index such a query needs (the service
/// refuses it otherwise, and the ORDER BY page says so): those get that index.
fn indexing_policy(case: &Value, sql: &str, options: &QueryOptions) -> Result<IndexingPolicy, String> {
    let mut policy = match case.get("container").get("indexingPolicy") {
        Value::Undefined => IndexingPolicy::default(),
        p => IndexingPolicy::from_json(p).map_err(|e| format!("bad indexing policy: {e}"))?,
    };
    let Ok(query) = cosmoql::parse(sql) else { return Ok(policy) };
    let context = BindContext { parameters: &options.parameters, vector_policies: &options.vector_policies, udfs: &[] };
    let Ok(bound) = bind(&query, context) else { return Ok(policy) };
    if bound.order_by.len() > 1 && case.get("container").get("indexingPolicy").is_undefined() {
        let paths: Option<Vec<CompositePath>> = bound
            .order_by
            .iter()
            .map(|k| {
                k.path.clone().map(|segments| CompositePath {
                    text: cosmoql::planner::access::policy_path(&segments).trim_end_matches("/?").to_string(),
                    segments,
                    descending: k.descending,
                })
            })
            .collect();
        if let Some(paths) = paths {
            policy.composite.push(paths);
        }
    }
    Ok(policy)
}

/// Runs one case; `Err` holds a description of the failure.
fn run_case_with(file: &Path, case: &Value, partitions: usize, page: Option<usize>) -> Result<(), String> {
    let (container, options, sql) = load(file, case, partitions)?;
    container.replace_indexing_policy(indexing_policy(case, &sql, &options)?);
    container.transform_indexes(usize::MAX);
    let actual = run_query(&container, &sql, options, page)?;
    let expected = case.get("expected").as_array().unwrap_or(&[]).to_vec();
    let ordered = case.get("ordered") == &Value::Bool(true);
    let tolerance = case.get("float_tolerance").as_f64().unwrap_or(0.0);
    if results_match(&actual, &expected, ordered, tolerance) {
        Ok(())
    } else {
        Err(format!("expected {}\n     got {}", show(&expected), show(&actual)))
    }
}

fn show(v: &[Value]) -> String {
    cosmoql::value::to_json_string(&Value::array(v.iter().cloned())).unwrap_or_default()
}

/// A container at `partitions` physical partitions holding the case's documents (indexed under
/// the default policy), the query's options and its text.
fn load(file: &Path, case: &Value, partitions: usize) -> Result<(Container, QueryOptions, String), String> {
    let key = match case.get("partition_key") {
        Value::String(p) => PartitionKeyDefinition::hash(p),
        Value::Array(paths) => {
            let paths: Vec<&str> = paths.iter().filter_map(|p| p.as_str()).collect();
            PartitionKeyDefinition::from_paths(&paths)
        }
        _ => Ok(PartitionKeyDefinition::none()),
    }
    .map_err(|e| format!("bad partition key: {e}"))?;
    let documents = documents(file, case)?;
    let container =
        Container::new("c", key, ContainerSettings { initial_partitions: partitions, ..ContainerSettings::default() });
    for (i, doc) in documents.as_array().unwrap_or(&[]).iter().enumerate() {
        let mut doc = doc.clone();
        if let Some(map) = doc.as_object_mut() {
            match map.get("id") {
                Some(Value::String(_)) => {}
                Some(other) => {
                    let text = cosmoql::value::to_json_string(other).unwrap_or_default();
                    map.insert("id".into(), Value::from(text));
                }
                None => {
                    map.insert("id".into(), Value::from(format!("generated-{i}")));
                }
            }
        }
        container.create(&doc).map_err(|e| format!("loading document {i}: {e}"))?;
    }
    let mut options = QueryOptions {
        vector_policies: match case.get("container") {
            Value::Undefined => Vec::new(),
            properties => VectorPolicy::from_container_properties(properties).unwrap_or_else(|e| panic!("{e}")),
        },
        ..QueryOptions::default()
    };
    for p in case.get("parameters").as_array().unwrap_or(&[]) {
        options = options.parameter(p.get("name").as_str().unwrap_or(""), p.get("value").clone());
    }
    let sql = case.get("query").as_str().ok_or("no query")?.to_string();
    Ok((container, options, sql))
}

fn documents(file: &Path, case: &Value) -> Result<Value, String> {
    match case.get("documents_file").as_str() {
        Some(rel) => {
            let path = file.parent().unwrap_or(Path::new(".")).join(rel);
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            parse_json(&text).map_err(|e| format!("{}: {e}", path.display()))
        }
        None => Ok(case.get("documents").clone()),
    }
}

/// Every page of the query's results, system properties stripped; `Err` holds the rendered error.
fn run_query(
    container: &Container,
    sql: &str,
    mut options: QueryOptions,
    page: Option<usize>,
) -> Result<Vec<Value>, String> {
    options.max_item_count = page;
    let mut actual: Vec<Value> = Vec::new();
    loop {
        let output = execute(container, sql, &options).map_err(|e| format!("query failed: {}", e.render(sql)))?;
        actual.extend(output.items.iter().map(strip_system));
        match output.continuation {
            Some(token) => options.continuation = Some(token),
            None => break,
        }
    }
    Ok(actual)
}

#[test]
fn conformance_cases_match_the_service() {
    let dir = corpus();
    let mut files = Vec::new();
    json_files(&dir.join("docs"), &mut files);
    json_files(&dir.join("engine/cases"), &mut files);
    let (mut passed, mut failed) = (0, 0);
    let mut unexpected = Vec::new();
    let mut now_passing = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable case");
        let case = parse_json(&text).expect("case JSON");
        let Some(name) = case.get("name").as_str().map(str::to_string) else { continue };
        let known = KNOWN_FAILURES.iter().find(|(n, _)| *n == name);
        match run_case(file, &case) {
            Ok(()) => {
                passed += 1;
                if known.is_some() {
                    now_passing.push(name);
                }
            }
            Err(why) => {
                failed += 1;
                if known.is_none() {
                    let sql = case.get("query").as_str().unwrap_or("");
                    unexpected.push(format!(
                        "{name}: {}\n  query: {}\n  {why}",
                        file.display(),
                        sql.replace('\n', " ")
                    ));
                }
            }
        }
    }
    // Written past the test harness's capture, so `cargo test` shows it (CI reads it there).
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr().lock(),
        format_args!(
            "conformance: {passed} passed, {failed} failed ({} known failures listed)\n",
            KNOWN_FAILURES.len()
        ),
    );
    for u in &unexpected {
        println!("FAILED {u}");
    }
    let total = passed + failed;
    assert!(total >= 380, "expected the whole corpus, found {total} cases");
    assert!(unexpected.is_empty(), "{} unexpected failures (see above)", unexpected.len());
    assert!(now_passing.is_empty(), "listed as known failures but passing now: {now_passing:?}");
    assert!(passed as f64 >= 0.97 * total as f64, "only {passed} of {total} pass");
}

/// A small deterministic generator (xorshift64*), so a failing policy can be reproduced.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, items: &'a [String]) -> Option<&'a String> {
        (!items.is_empty()).then(|| &items[self.below(items.len())])
    }
}

/// The property paths the documents hold, as a policy writes them (`/a/b`, `/tags/[]`, `/"a b"`).
fn document_paths(documents: &Value) -> Vec<String> {
    fn segment(key: &str) -> String {
        if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            format!("/{key}")
        } else {
            format!("/\"{}\"", key.replace('"', "\\\""))
        }
    }
    let mut out = std::collections::BTreeSet::new();
    let mut stack: Vec<(String, &Value, usize)> =
        documents.as_array().unwrap_or(&[]).iter().map(|d| (String::new(), d, 0)).collect();
    while let Some((prefix, value, depth)) = stack.pop() {
        if depth > 3 {
            continue;
        }
        match value {
            Value::Object(map) => {
                for (k, v) in map.iter() {
                    let path = format!("{prefix}{}", segment(k));
                    out.insert(path.clone());
                    stack.push((path, v, depth + 1));
                }
            }
            Value::Array(items) => {
                let path = format!("{prefix}/[]");
                out.insert(path.clone());
                for v in items.iter().take(4) {
                    stack.push((path.clone(), v, depth + 1));
                }
            }
            _ => {}
        }
    }
    out.into_iter().collect()
}

/// A random policy over the documents' paths: everything but a few excluded paths, or only a few
/// included paths, with random composite indexes and, half the time, the case's own composites.
fn random_policy(rng: &mut Rng, paths: &[String], base: &IndexingPolicy) -> Value {
    let some_paths = |rng: &mut Rng| -> Vec<Value> {
        let mut out = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let Some(p) = rng.pick(paths).cloned() else { break };
            let suffix = if rng.below(2) == 0 { "/?" } else { "/*" };
            let mut entry = cosmoql::value::Map::default();
            entry.insert("path".into(), Value::from(p + suffix));
            out.push(Value::Object(entry.into()));
        }
        out
    };
    let root = parse_json(r#"[{"path": "/*"}]"#).unwrap();
    let (included, excluded) =
        if rng.below(2) == 0 { (root, Value::array(some_paths(rng))) } else { (Value::array(some_paths(rng)), root) };
    let mut composites: Vec<Value> = Vec::new();
    if rng.below(2) == 0 {
        composites.extend(base.to_json().get("compositeIndexes").as_array().unwrap_or(&[]).iter().cloned());
    }
    for _ in 0..rng.below(3) {
        let (Some(a), Some(b)) = (rng.pick(paths).cloned(), rng.pick(paths).cloned()) else { break };
        if a == b || a.contains("[]") || b.contains("[]") {
            continue;
        }
        let order = |rng: &mut Rng| if rng.below(2) == 0 { "ascending" } else { "descending" };
        let text = format!(
            "[{{\"path\": {}, \"order\": \"{}\"}}, {{\"path\": {}, \"order\": \"{}\"}}]",
            cosmoql::value::to_json_string(&Value::from(a)).unwrap(),
            order(rng),
            cosmoql::value::to_json_string(&Value::from(b)).unwrap(),
            order(rng)
        );
        composites.push(parse_json(&text).unwrap());
    }
    let mut policy = cosmoql::value::Map::default();
    policy.insert("indexingMode".into(), Value::from("consistent"));
    policy.insert("includedPaths".into(), included);
    policy.insert("excludedPaths".into(), excluded);
    policy.insert("compositeIndexes".into(), Value::array(composites));
    Value::Object(policy.into())
}

/// Whether an error is one the service gives for lack of an index (a policy may cause it).
fn is_index_error(error: &str) -> bool {
    error.contains("The order by query does not have a corresponding composite index")
        || error.contains("The index path corresponding to the specified order-by item is excluded.")
}

/// Every case gives the same results under its own policy, under indexing mode none and under
/// random include/exclude/composite policies (some only part-way through their transformation,
/// some read page by page), or fails for lack of an index as the service does.
#[test]
fn conformance_cases_agree_under_every_policy() {
    let dir = corpus();
    let mut files = Vec::new();
    json_files(&dir.join("docs"), &mut files);
    json_files(&dir.join("engine/cases"), &mut files);
    let mut rng = Rng(0x5eed_c0ff_ee00_0001);
    let (mut runs, mut refused) = (0, 0);
    let mut disagreements = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable case");
        let case = parse_json(&text).expect("case JSON");
        let Some(name) = case.get("name").as_str().map(str::to_string) else { continue };
        let Ok((container, options, sql)) = load(file, &case, 3) else { continue };
        let Ok(base) = indexing_policy(&case, &sql, &options) else { continue };
        container.replace_indexing_policy(base.clone());
        container.transform_indexes(usize::MAX);
        let baseline = run_query(&container, &sql, options.clone(), None);
        let ordered = case.get("ordered") == &Value::Bool(true);
        let tolerance = case.get("float_tolerance").as_f64().unwrap_or(0.0).max(1e-9);
        let paths = documents(file, &case).map(|d| document_paths(&d)).unwrap_or_default();
        let mut variants =
            vec![("mode none".to_string(), parse_json(r#"{"indexingMode": "none", "automatic": false}"#).unwrap())];
        for _ in 0..4 {
            let p = random_policy(&mut rng, &paths, &base);
            variants.push((cosmoql::value::to_json_string(&p).unwrap(), p));
        }
        for (i, (label, json)) in variants.iter().enumerate() {
            let policy = IndexingPolicy::from_json(json).unwrap_or_else(|e| panic!("{name}: policy {label}: {e}"));
            container.replace_indexing_policy(policy);
            if i % 2 == 1 {
                container.transform_indexes(usize::MAX);
            } else {
                container.transform_indexes(1);
            }
            let page = (i == 2).then_some(2);
            let got = run_query(&container, &sql, options.clone(), page);
            runs += 1;
            let agrees = match (&baseline, &got) {
                (Ok(a), Ok(b)) => results_match(b, a, ordered, tolerance),
                (_, Err(e)) if is_index_error(e) => {
                    refused += 1;
                    true
                }
                (Err(a), Err(b)) => a == b,
                _ => false,
            };
            if !agrees {
                let render = |r: &Result<Vec<Value>, String>| match r {
                    Ok(v) => show(v),
                    Err(e) => e.clone(),
                };
                disagreements.push(format!(
                    "{name}\n  query: {}\n  policy {label}\n  own policy: {}\n  this one:   {}",
                    sql.replace('\n', " "),
                    render(&baseline),
                    render(&got)
                ));
            }
        }
    }
    println!("{runs} runs under other policies, {refused} refused for lack of an index");
    for d in &disagreements {
        println!("DISAGREES {d}");
    }
    assert!(runs >= 5 * 380, "expected the whole corpus, ran {runs}");
    assert!(disagreements.is_empty(), "{} disagreements (see above)", disagreements.len());
}
