//! 64 clients on `cosmoql serve` at once, mixing writes, point reads and queries over kept-alive
//! connections: nothing fails but documented 429s, and every acknowledged write is there
//! afterwards. (A short run: `benches/serve_load.rs` runs it for a minute and reports latency
//! and rate beside the embedded API's.)

#[path = "support/client.rs"]
mod client;
#[path = "support/load.rs"]
mod load;

use std::time::Duration;

use cosmoql::{ContainerProperties, CosmosClient, Provisioned};
use cosmoql_gateway::auth::EMULATOR_KEY;
use cosmoql_gateway::{RunningServer, ServerConfig};

#[test]
fn sixty_four_clients_lose_nothing_and_see_no_error_but_throttling() {
    let account = CosmosClient::new();
    let db = account.create_database("load").unwrap();
    let properties = ContainerProperties::new("items", "/pk").unwrap().throughput(Provisioned::Manual(40_000.0));
    let container = db.create_container(properties).unwrap();
    let config = ServerConfig { bind: "127.0.0.1:0".parse().unwrap(), ..ServerConfig::default() };
    let server = RunningServer::start(account.clone(), config).unwrap();
    let report = load::over_http(server.addr(), EMULATOR_KEY, 64, Duration::from_secs(3));
    server.stop();
    println!(
        "load: 64 clients, 3 s: {} requests ({:.0}/s), p50 {:.2} ms, p99 {:.2} ms, {} throttled",
        report.requests,
        report.rate(),
        report.quantile_ms(0.5),
        report.quantile_ms(0.99),
        report.throttled
    );
    assert!(report.errors.is_empty(), "{} errors, first: {:?}", report.errors.len(), report.errors.first());
    assert!(report.written.len() > 64, "{} writes acknowledged", report.written.len());
    assert_eq!(load::missing(&container, &report), Vec::<(String, String)>::new());
    assert_eq!(container.item_count(), report.written.len());
    // The same workload through the embedded API, for the same promise.
    let account = CosmosClient::new();
    let db = account.create_database("load").unwrap();
    let properties = ContainerProperties::new("items", "/pk").unwrap().throughput(Provisioned::Manual(40_000.0));
    let container = db.create_container(properties).unwrap();
    let report = load::embedded(&container, 64, Duration::from_secs(1));
    assert!(report.errors.is_empty(), "{} errors, first: {:?}", report.errors.len(), report.errors.first());
    assert_eq!(load::missing(&container, &report), Vec::<(String, String)>::new());
    println!("load: peak RSS of the test process {:.0} MiB", load::peak_rss_mib());
}
