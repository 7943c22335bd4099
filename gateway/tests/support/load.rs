//! The mixed workload of the load test and benchmark: `clients` clients for `duration`, each
//! writing items (7 requests in 10), reading back one it wrote (2 in 10) and querying (1 in 10:
//! a cross-partition ORDER BY TOP 10 and a key-scoped COUNT, by turns); every acknowledged write
//! is remembered, to be checked afterwards. The same workload runs through the REST gateway
//! (one kept-alive connection per client) and through the embedded API (one thread per client).

use std::time::{Duration, Instant};

use cosmoql::{ContainerClient, PartitionKey, QueryOptions, Value};

use super::client::Client;

/// Logical partitions the clients write to.
pub const KEYS: usize = 16;

/// What one run did.
#[derive(Debug, Default)]
pub struct Report {
    /// Requests answered (throttled ones included).
    pub requests: u64,
    /// Requests refused with 429.
    pub throttled: u64,
    /// Anything else that went wrong (status, error text).
    pub errors: Vec<String>,
    /// Each request's latency, in microseconds, sorted.
    pub latencies_us: Vec<u64>,
    /// The run's wall time.
    pub elapsed: Duration,
    /// The (key, id) of every acknowledged write.
    pub written: Vec<(String, String)>,
}

impl Report {
    /// The `q`-quantile latency in milliseconds.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        if self.latencies_us.is_empty() {
            return 0.0;
        }
        let i = ((self.latencies_us.len() - 1) as f64 * q).round() as usize;
        self.latencies_us[i] as f64 / 1000.0
    }

    /// Requests per second.
    pub fn rate(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    fn merge(&mut self, other: Report) {
        self.requests += other.requests;
        self.throttled += other.throttled;
        self.errors.extend(other.errors);
        self.latencies_us.extend(other.latencies_us);
        self.written.extend(other.written);
    }
}

/// One step of client `client`'s sequence: what its `n`-th request does.
enum Step {
    Write { key: String, id: String, body: String },
    Read { key: String, id: String },
    OrderedTop,
    KeyCount { key: String },
}

fn step(client: usize, n: usize, written: &[(String, String)]) -> Step {
    let key = format!("k{}", (client + n) % KEYS);
    match n % 10 {
        0..=6 => {
            let id = format!("c{client}-{n}");
            let body = format!(r#"{{"id":"{id}","pk":"{key}","n":{n},"client":{client},"pad":"{}"}}"#, "x".repeat(200));
            Step::Write { key, id, body }
        }
        7 | 8 => match written.last() {
            Some((key, id)) => Step::Read { key: key.clone(), id: id.clone() },
            None => Step::OrderedTop,
        },
        _ if n % 20 == 9 => Step::OrderedTop,
        _ => Step::KeyCount { key },
    }
}

const ORDERED_TOP: &str = "SELECT TOP 10 c.id, c.n FROM c WHERE c.n > 100 ORDER BY c.n DESC";
const KEY_COUNT: &str = "SELECT VALUE COUNT(1) FROM c";

/// The workload over the REST API at `addr` (database `load`, container `items`, which must
/// exist).
pub fn over_http(addr: std::net::SocketAddr, key: &str, clients: usize, duration: Duration) -> Report {
    let started = Instant::now();
    let reports: Vec<Report> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                scope.spawn(move || {
                    let mut report = Report::default();
                    let mut client = match Client::connect(addr, key) {
                        Ok(client) => client,
                        Err(e) => {
                            report.errors.push(format!("connect: {e}"));
                            return report;
                        }
                    };
                    let docs = "/dbs/load/colls/items/docs";
                    let query = [("x-ms-documentdb-isquery", "True"), ("content-type", "application/query+json")];
                    let mut n = 0;
                    while started.elapsed() < duration {
                        let at = Instant::now();
                        let s = step(c, n, &report.written);
                        let result = match &s {
                            Step::Write { key, body, .. } => {
                                let header = format!(r#"["{key}"]"#);
                                client.call("POST", docs, &[("x-ms-documentdb-partitionkey", &header)], body.as_bytes())
                            }
                            Step::Read { key, id } => {
                                let header = format!(r#"["{key}"]"#);
                                client.call(
                                    "GET",
                                    &format!("{docs}/{id}"),
                                    &[("x-ms-documentdb-partitionkey", &header)],
                                    b"",
                                )
                            }
                            Step::OrderedTop => {
                                let body = serde_json::json!({ "query": ORDERED_TOP }).to_string();
                                client.call("POST", docs, &query, body.as_bytes())
                            }
                            Step::KeyCount { key } => {
                                let body = serde_json::json!({ "query": KEY_COUNT }).to_string();
                                let header = format!(r#"["{key}"]"#);
                                let headers = [query[0], query[1], ("x-ms-documentdb-partitionkey", header.as_str())];
                                client.call("POST", docs, &headers, body.as_bytes())
                            }
                        };
                        report.latencies_us.push(at.elapsed().as_micros() as u64);
                        report.requests += 1;
                        match result {
                            Ok(r) if r.status == 429 => report.throttled += 1,
                            Ok(r) if r.status < 300 => {
                                if let Step::Write { key, id, .. } = s {
                                    report.written.push((key, id));
                                }
                            }
                            Ok(r) => report.errors.push(format!("{} {}", r.status, String::from_utf8_lossy(&r.body))),
                            Err(e) => {
                                report.errors.push(format!("i/o: {e}"));
                                break;
                            }
                        }
                        n += 1;
                    }
                    report
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
    });
    finish(reports, started)
}

/// The same workload through the embedded API.
pub fn embedded(container: &ContainerClient, clients: usize, duration: Duration) -> Report {
    let started = Instant::now();
    let reports: Vec<Report> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                scope.spawn(move || {
                    let mut report = Report::default();
                    let mut n = 0;
                    while started.elapsed() < duration {
                        let at = Instant::now();
                        let s = step(c, n, &report.written);
                        let result = match &s {
                            Step::Write { body, .. } => container
                                .create_item(&cosmoql::value::parse_json(body).unwrap_or(Value::Null))
                                .map(drop),
                            Step::Read { key, id } => {
                                container.read_item::<Value>(PartitionKey::from(key.as_str()), id).map(drop)
                            }
                            Step::OrderedTop => {
                                container.query_items_blocking::<Value>(ORDERED_TOP, QueryOptions::default()).map(drop)
                            }
                            Step::KeyCount { key } => {
                                let options = QueryOptions {
                                    partition_key: Some(PartitionKey::from(key.as_str())),
                                    ..QueryOptions::default()
                                };
                                container.query_items_blocking::<Value>(KEY_COUNT, options).map(drop)
                            }
                        };
                        report.latencies_us.push(at.elapsed().as_micros() as u64);
                        report.requests += 1;
                        match result {
                            Ok(()) => {
                                if let Step::Write { key, id, .. } = s {
                                    report.written.push((key, id));
                                }
                            }
                            Err(e) if e.status() == Some(429) => report.throttled += 1,
                            Err(e) => report.errors.push(e.to_string()),
                        }
                        n += 1;
                    }
                    report
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
    });
    finish(reports, started)
}

fn finish(reports: Vec<Report>, started: Instant) -> Report {
    let mut total = Report::default();
    for r in reports {
        total.merge(r);
    }
    total.elapsed = started.elapsed();
    total.latencies_us.sort_unstable();
    total
}

/// The acknowledged writes `report` holds that `container` lacks.
pub fn missing(container: &ContainerClient, report: &Report) -> Vec<(String, String)> {
    let mut present = std::collections::HashSet::new();
    for k in 0..KEYS {
        let key = format!("k{k}");
        let options = QueryOptions { partition_key: Some(PartitionKey::from(key.as_str())), ..QueryOptions::default() };
        let ids: Vec<String> = container.query_items_blocking("SELECT VALUE c.id FROM c", options).unwrap_or_default();
        present.extend(ids.into_iter().map(|id| (key.clone(), id)));
    }
    report.written.iter().filter(|w| !present.contains(*w)).cloned().collect()
}

/// The process's peak resident memory so far, in MiB (Linux; 0 elsewhere).
pub fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<f64>().ok()))
        .map_or(0.0, |kb| kb / 1024.0)
}
