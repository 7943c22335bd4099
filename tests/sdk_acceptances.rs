//! Accept what the service accepts: every query the official SDKs' suites and baselines ran
//! successfully against Azure Cosmos DB or its emulator (`tests/data/sdk_accepted_queries.tsv`,
//! its header says where each came from) runs here on a container set up as the test's was
//! (partition key, composite indexes, request partition key, parameters), and none is rejected.
//! The service's rejections recorded in the same suites (`tests/data/sdk_rejected_queries.tsv`)
//! are rejected here too, with the recorded message where the baseline kept one.
//!
//! The conformance corpus (`tests/conformance.rs`) already runs every expected-results case of
//! its own; together they are the check that no rejection rule in `planner/src/rules.rs`
//! refuses a query the service runs.

use cosmoql::executor::explain;
use cosmoql::storage::{Container, ContainerSettings, IndexingPolicy, PartitionKey, PartitionKeyDefinition};
use cosmoql::value::{parse_json, to_json_string, Value};
use cosmoql::{execute, QueryError, QueryOptions};

/// Accepted by the service and refused here, each with why. Only internal functions whose
/// behaviour nothing published describes belong here.
const UNSUPPORTED: &[(&str, &str)] = &[(
    "SELECT * FROM c WHERE _TRY_ARRAY_CONTAINS([1, 2, 3], c.a)",
    "an internal function of the service's compiler (SqlFunctionCallScalarExpression.Names.InternalTryArrayContains \
     in the .NET SDK), seen only in a query-plan baseline: what it returns is not published",
)];

/// The ORDER BY message of a query whose container's composite indexes the source did not
/// record (the .NET query-plan baselines compile queries without a container): the service's
/// compiler accepts those, and only a container without the index refuses them at run time.
const NO_COMPOSITE_INDEX: &str =
    "The order by query does not have a corresponding composite index that it can be served from.";

struct Case<'a> {
    source: &'a str,
    partition_key: &'a str,
    composite: &'a str,
    request_key: &'a str,
    parameters: &'a str,
    sql: &'a str,
}

fn cases(text: &str) -> Vec<Case<'_>> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 6, "a row has six columns: {l}");
            Case { source: f[0], partition_key: f[1], composite: f[2], request_key: f[3], parameters: f[4], sql: f[5] }
        })
        .collect()
}

/// `/a asc,/b desc;/c asc,/d asc` as an indexing policy's `compositeIndexes`.
fn policy(composite: &str) -> IndexingPolicy {
    let indexes: Vec<String> = composite
        .split(';')
        .map(|index| {
            let paths: Vec<String> = index
                .split(',')
                .map(|p| {
                    let (path, order) = p.trim().rsplit_once(' ').unwrap_or((p.trim(), "asc"));
                    let order = if order == "desc" { "descending" } else { "ascending" };
                    format!(
                        r#"{{"path": {}, "order": "{order}"}}"#,
                        to_json_string(&Value::from(path)).unwrap_or_default()
                    )
                })
                .collect();
            format!("[{}]", paths.join(", "))
        })
        .collect();
    let json = format!(r#"{{"compositeIndexes": [{}]}}"#, indexes.join(", "));
    IndexingPolicy::from_json(&parse_json(&json).unwrap()).unwrap_or_else(|e| panic!("{composite}: {e}"))
}

fn container(case: &Case<'_>) -> Container {
    let key = match case.partition_key {
        "none" | "unknown" => PartitionKeyDefinition::none(),
        // The .NET query-plan baselines compute plans for key paths no container may have
        // (`/key[0]`, "Partition Key Is Array Element"): the query then runs without a key.
        paths => PartitionKeyDefinition::from_paths(&paths.split(',').collect::<Vec<_>>())
            .unwrap_or_else(|_| PartitionKeyDefinition::none()),
    };
    let c = Container::new("c", key, ContainerSettings { initial_partitions: 2, ..ContainerSettings::default() });
    if !matches!(case.composite, "-" | "?") {
        c.replace_indexing_policy(policy(case.composite));
    }
    c
}

fn options(case: &Case<'_>) -> QueryOptions {
    let mut options = QueryOptions::default();
    if case.request_key != "-" {
        let v = parse_json(case.request_key).unwrap();
        let parts = match v {
            Value::Array(parts) => parts.iter().cloned().collect(),
            one => vec![one],
        };
        options.partition_key = Some(PartitionKey::from_values(&parts).unwrap());
    }
    if case.parameters != "-" {
        let Value::Object(map) = parse_json(case.parameters).unwrap() else { panic!("{}: parameters", case.source) };
        for (name, value) in map.iter() {
            options = options.parameter(name, value.clone());
        }
    }
    options
}

/// What this engine answers to `sql`, as the source's service did: the .NET query-plan baselines
/// record the service's compiler, which plans a query and never runs it (`SELECT VALUE ACOS(42)`
/// compiles; its NaN result is refused when it runs), so those are planned; the rest run.
fn answer_here(c: &Container, source: &str, sql: &str, options: &QueryOptions) -> Result<(), QueryError> {
    if source.contains("QueryPlanBaselineTests") {
        explain(c, sql, options).map(drop)
    } else {
        execute(c, sql, options).map(drop)
    }
}

#[test]
fn every_query_the_sdk_suites_ran_on_the_service_runs_here() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sdk_accepted_queries.tsv")).unwrap();
    let cases = cases(&text);
    assert!(cases.len() > 1000, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let c = container(case);
        if let Err(e) = answer_here(&c, case.source, case.sql, &options(case)) {
            if UNSUPPORTED.iter().any(|(sql, _)| *sql == case.sql) {
                continue;
            }
            if case.composite == "?" && e.message == NO_COMPOSITE_INDEX {
                continue;
            }
            failures.push(format!("{}\n  {}\n  {}", case.source, case.sql, e.render(case.sql).replace('\n', "\n  ")));
        }
    }
    assert!(failures.is_empty(), "{} of {} rejected:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// The composite indexes of the .NET LINQ baselines' "Family" container.
const FAMILY_INDEXES: &str =
    "/FamilyId asc,/Int asc;/FamilyId asc,/Int desc;/FamilyId asc,/Int asc,/IsRegistered desc;/Int asc,/IsRegistered desc;/IsRegistered asc,/Int desc";

/// The service's message in a recorded answer: `{"errors":[{..."message":"M"}]}`,
/// `{"Errors":["M"]}`, `[note] M`, or `None` where only the status was kept.
fn recorded_message(answer: &str) -> Option<String> {
    if let Some(at) = answer.find("\"message\":\"") {
        let rest = &answer[at + 11..];
        return rest.find("\"}").map(|end| rest[..end].replace("\\\"", "\"").replace("\\u0027", "'"));
    }
    if let Some(at) = answer.find("\"Errors\":[\"") {
        let rest = &answer[at + 11..];
        return rest.find("\"]").map(|end| rest[..end].to_string());
    }
    if let Some(rest) = answer.strip_prefix('[') {
        return rest.split_once("] ").map(|(_, m)| m.to_string());
    }
    None
}

#[test]
fn every_query_the_sdk_suites_saw_the_service_refuse_is_refused_here() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sdk_rejected_queries.tsv")).unwrap();
    let rows: Vec<(&str, &str, &str)> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 3, "a row has three columns: {l}");
            (f[0], f[1], f[2])
        })
        .collect();
    assert!(rows.len() > 150, "{} rows", rows.len());
    let mut failures = Vec::new();
    for (source, answer, sql) in &rows {
        let (partition_key, composite) = if source.starts_with("js:") {
            ("/_partitionKey", "/key asc,/field asc")
        } else if source.contains("QueryPlanBaselineTests") {
            ("none", "-")
        } else {
            ("/Pk", FAMILY_INDEXES)
        };
        let case = Case { source, partition_key, composite, request_key: "-", parameters: "-", sql };
        let c = container(&case);
        match (answer_here(&c, source, sql, &QueryOptions::default()), recorded_message(answer)) {
            (Ok(()), _) => failures.push(format!("{source}\n  {sql}\n  runs here; the service said {answer}")),
            // Syntax errors: the service's message, code and place.
            (Err(e), Some(message)) if message.starts_with("Syntax error") => {
                let start =
                    answer.split("\"start\":").nth(1).and_then(|r| r.split(',').next()).and_then(|n| n.parse().ok());
                if e.message != message || e.code != Some("SC1001") || e.span.map(|s| s.range().start) != start {
                    failures.push(format!(
                        "{source}\n  {sql}\n  here: {:?} {} at {:?}\n  service: {answer}",
                        e.code, e.message, e.span
                    ))
                }
            }
            (Err(e), Some(message)) if e.message != message => {
                failures.push(format!("{source}\n  {sql}\n  here: {}\n  service: {message}", e.message))
            }
            (Err(e), _) if e.status != 400 => {
                failures.push(format!("{source}\n  {sql}\n  here status {}: {}", e.status, e.message))
            }
            (Err(_), _) => {}
        }
    }
    assert!(failures.is_empty(), "{} of {}:\n{}", failures.len(), rows.len(), failures.join("\n"));
}
