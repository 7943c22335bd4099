//! Whole items as a query returns them (`SELECT * ... WHERE c.metricValue > 99`, about 1% of the
//! shared telemetry items): collected as `Value`s (decoded), as `JsonText` (written from the
//! stored bytes), as `serde_json::Value` and as a typed struct (read from the stored bytes), and
//! as the typed struct through a `Value` and a `serde_json::Value` (how it was read before).
//!
//! The baselines, measured in the same run: `serde_json` parsing the same items' NDJSON lines
//! into a `serde_json::Value` and into the typed struct (what reading them from JSON text costs),
//! and the same query returning only `c.id` (the filter's own cost).
//!
//! Then 1,000 point reads (`read_item`) handed over the same ways.
//!
//! `cargo bench --bench results`; `COSMOQL_BENCH_ITEMS` sets the item count (default 200,000).

use std::hint::black_box;
use std::time::Duration;

#[allow(dead_code)] // Not every helper is used here.
mod support;
use support::{data, items_or};

use cosmoql::value::Value;
use cosmoql::{ContainerProperties, CosmosClient, ImportOptions, JsonText, QueryOptions};
use criterion::{Criterion, Throughput};
use serde::Deserialize;

const QUERY: &str = "SELECT * FROM c WHERE c.metricValue > 99";

#[derive(Debug, Deserialize)]
#[allow(dead_code)] // Read to be measured.
struct Reading {
    id: String,
    #[serde(rename = "deviceId")]
    device_id: String,
    #[serde(rename = "readingTime")]
    reading_time: String,
    #[serde(rename = "metricType")]
    metric_type: String,
    #[serde(rename = "metricValue")]
    metric_value: f64,
    tags: Vec<String>,
    location: Location,
    _ts: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Location {
    city: String,
}

fn main() {
    let n = items_or(200_000);
    let bytes = data(n);
    let client = CosmosClient::new();
    let db = client.create_database("bench").expect("database");
    let container =
        db.create_container(ContainerProperties::new("telemetry", "/deviceId").expect("key")).expect("container");
    container.import(&bytes[..], ImportOptions { fail_fast: true, ..ImportOptions::default() }).expect("import");
    // The same items' JSON lines, for the baselines.
    let lines: Vec<&[u8]> = bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .filter(|l| serde_json::from_slice::<Reading>(l).is_ok_and(|r| r.metric_value > 99.0))
        .collect();
    let results = container.query_pages::<Value>(QUERY, QueryOptions::default()).collect_all().expect("query").len();
    assert_eq!(results, lines.len(), "the query returns the items the baselines parse");

    let mut criterion = Criterion::default().configure_from_args().warm_up_time(Duration::from_secs(1));
    let mut group = criterion.benchmark_group(format!("{results} whole items of {n}"));
    group.throughput(Throughput::Elements(results as u64));
    let run = |sql: &str| {
        let sql = sql.to_string();
        let container = &container;
        move |kind: &str| -> usize {
            let options = QueryOptions::default();
            match kind {
                "value" => container.query_pages::<Value>(sql.as_str(), options).collect_all().expect("query").len(),
                "text" => container.query_pages::<JsonText>(sql.as_str(), options).collect_all().expect("query").len(),
                "json" => container
                    .query_pages::<serde_json::Value>(sql.as_str(), options)
                    .collect_all()
                    .expect("query")
                    .len(),
                _ => container.query_pages::<Reading>(sql.as_str(), options).collect_all().expect("query").len(),
            }
        }
    };
    let star = run(QUERY);
    for kind in ["value", "text", "json", "typed"] {
        group.bench_function(format!("query as {kind}"), |b| b.iter(|| black_box(star(kind))));
    }
    // How typed results were read before they were read from the bytes: through the value.
    group.bench_function("query as typed, through Value and serde_json::Value", |b| {
        b.iter(|| {
            let values = container.query_pages::<Value>(QUERY, QueryOptions::default()).collect_all().expect("query");
            let typed: Vec<Reading> = values
                .into_iter()
                .map(|v| serde_json::from_value(v.to_serde_json().expect("json")).expect("typed"))
                .collect();
            black_box(typed.len())
        })
    });
    let ids = run("SELECT VALUE c.id FROM c WHERE c.metricValue > 99");
    group.bench_function("baseline: the query returning c.id", |b| b.iter(|| black_box(ids("value"))));
    group.bench_function("baseline: serde_json parses the lines into serde_json::Value", |b| {
        b.iter(|| {
            lines.iter().map(|l| serde_json::from_slice::<serde_json::Value>(l).expect("json")).collect::<Vec<_>>()
        })
    });
    group.bench_function("baseline: serde_json parses the lines into the struct", |b| {
        b.iter(|| lines.iter().map(|l| serde_json::from_slice::<Reading>(l).expect("json")).collect::<Vec<_>>())
    });
    group.finish();

    // Point reads of 1,000 items, each handed over as each type.
    let keys: Vec<(cosmoql::PartitionKey, String)> = bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .step_by((n / 1000).max(1))
        .take(1000)
        .map(|l| {
            let r: serde_json::Value = serde_json::from_slice(l).expect("json");
            let device = r["deviceId"].as_str().expect("key").to_string();
            (cosmoql::PartitionKey::from(device.as_str()), r["id"].as_str().expect("id").to_string())
        })
        .collect();
    let mut reads = criterion.benchmark_group(format!("{} point reads of {n}", keys.len()));
    reads.throughput(Throughput::Elements(keys.len() as u64));
    reads.bench_function("as value", |b| {
        b.iter(|| {
            keys.iter()
                .map(|(k, id)| container.read_item::<Value>(k.clone(), id).expect("read").item)
                .collect::<Vec<_>>()
        })
    });
    reads.bench_function("as text", |b| {
        b.iter(|| {
            keys.iter()
                .map(|(k, id)| container.read_item::<JsonText>(k.clone(), id).expect("read").item)
                .collect::<Vec<_>>()
        })
    });
    reads.bench_function("as typed", |b| {
        b.iter(|| {
            keys.iter()
                .map(|(k, id)| container.read_item::<Reading>(k.clone(), id).expect("read").item)
                .collect::<Vec<_>>()
        })
    });
    reads.bench_function("as typed, through Value and serde_json::Value", |b| {
        b.iter(|| {
            keys.iter()
                .map(|(k, id)| {
                    let v = container.read_item::<Value>(k.clone(), id).expect("read").item;
                    serde_json::from_value::<Reading>(v.to_serde_json().expect("json")).expect("typed")
                })
                .collect::<Vec<_>>()
        })
    });
    reads.finish();
    criterion.final_summary();
}
