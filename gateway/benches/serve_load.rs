//! The load of issue 23 on loopback: 64 clients mixing writes (7 in 10), point reads (2 in 10)
//! and queries (1 in 10) for 60 s through `cosmoql serve`, then the same workload through the
//! embedded API in the same run; prints requests per second, p50/p99 latency, 429s, errors,
//! acknowledged writes missing afterwards (must be 0) and peak memory.
//!
//! `cargo bench -p cosmoql-gateway --bench serve_load` (`COSMOQL_LOAD_SECONDS=N` for another
//! length). Figures go to docs/performance.md as ratios against the embedded run.

#[path = "../tests/support/client.rs"]
mod client;
#[path = "../tests/support/load.rs"]
mod load;

use std::time::Duration;

use cosmoql::{ContainerClient, ContainerProperties, CosmosClient, Provisioned};
use cosmoql_gateway::auth::EMULATOR_KEY;
use cosmoql_gateway::{RunningServer, ServerConfig};

fn container(account: &CosmosClient) -> ContainerClient {
    let db = account.create_database("load").expect("database");
    let properties = ContainerProperties::new("items", "/pk").expect("key").throughput(Provisioned::Manual(40_000.0));
    db.create_container(properties).expect("container")
}

fn print(what: &str, report: &load::Report, missing: usize) {
    println!(
        "{what:<9} {:>9.0} req/s  p50 {:>7.3} ms  p99 {:>7.3} ms  requests {:>8}  429s {:>6}  errors {:>3}  writes {:>8}  missing {missing}  peak RSS {:.0} MiB",
        report.rate(),
        report.quantile_ms(0.5),
        report.quantile_ms(0.99),
        report.requests,
        report.throttled,
        report.errors.len(),
        report.written.len(),
        load::peak_rss_mib(),
    );
}

fn main() {
    let seconds = std::env::var("COSMOQL_LOAD_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    let duration = Duration::from_secs(seconds);
    println!("64 clients, {seconds} s each run, 40,000 RU/s on 7 physical partitions");

    let account = CosmosClient::new();
    let items = container(&account);
    let config = ServerConfig { bind: "127.0.0.1:0".parse().expect("addr"), ..ServerConfig::default() };
    let server = RunningServer::start(account.clone(), config).expect("server");
    let report = load::over_http(server.addr(), EMULATOR_KEY, 64, duration);
    server.stop();
    print("gateway", &report, load::missing(&items, &report).len());

    let account = CosmosClient::new();
    let items = container(&account);
    let report = load::embedded(&items, 64, duration);
    print("embedded", &report, load::missing(&items, &report).len());
}
