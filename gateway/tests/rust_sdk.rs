//! The official Rust SDK (`azure_data_cosmos`, its current release from crates.io) against
//! `cosmoql serve` on a real socket: the account, databases and containers, item operations with
//! etags, and queries, each result compared with the embedded engine's answer over the same
//! items.

use azure_data_cosmos::models::{ContainerProperties as SdkContainer, ThroughputProperties};
use azure_data_cosmos::options::CreateContainerOptions;
use azure_data_cosmos::{
    AccountEndpoint, AccountReference, CosmosClient as SdkClient, FeedScope, Query, RoutingStrategy,
};
use cosmoql::{ContainerClient, ContainerProperties, CosmosClient, QueryOptions, Value};
use cosmoql_gateway::auth::EMULATOR_KEY;
use cosmoql_gateway::{RangeMode, RunningServer, ServerConfig};
use futures::TryStreamExt;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Order {
    id: String,
    customer: String,
    total: f64,
}

fn server(ranges: RangeMode) -> RunningServer {
    let config = ServerConfig { bind: "127.0.0.1:0".parse().unwrap(), ranges, ..ServerConfig::default() };
    RunningServer::start(CosmosClient::new(), config).unwrap()
}

async fn sdk(server: &RunningServer) -> SdkClient {
    let endpoint: AccountEndpoint = server.endpoint().parse().unwrap();
    let account = AccountReference::with_authentication_key(
        endpoint,
        azure_core::credentials::Secret::from(EMULATOR_KEY.to_string()),
    );
    // Binary encoding stays on, the SDK's default: item bodies arrive in Cosmos binary JSON.
    SdkClient::builder().build(account, RoutingStrategy::ProximityTo("cosmoql".into())).await.unwrap()
}

fn orders() -> Vec<Order> {
    (0..60)
        .map(|i| Order { id: format!("o{i}"), customer: format!("c{}", i % 7), total: f64::from((i * 37) % 101) })
        .collect()
}

/// The embedded engine's answer over the same items.
fn expected(sql: &str) -> Vec<Value> {
    let c = ContainerClient::standalone(ContainerProperties::new("orders", "/customer").unwrap()).unwrap();
    for o in orders() {
        c.create_item(&o).unwrap();
    }
    c.query_items_blocking::<Value>(sql, QueryOptions::default()).unwrap()
}

/// A result without the system properties (they differ between two stores).
fn strip(v: &serde_json::Value) -> Value {
    without_system_properties(cosmoql::value::parse_json(&v.to_string()).unwrap())
}

fn without_system_properties(mut v: Value) -> Value {
    if let Some(map) = v.as_object_mut() {
        for p in ["_rid", "_self", "_etag", "_attachments", "_ts"] {
            map.shift_remove(p);
        }
    }
    v
}

/// Runs `sql` through the SDK over `scope` and compares with the embedded engine's answer to
/// `oracle` (`sql` when empty) over the same items.
async fn compare(items: &azure_data_cosmos::clients::ContainerClient, sql: &str, scope: FeedScope, oracle: &str) {
    let got: Vec<serde_json::Value> = items
        .query_items::<serde_json::Value>(Query::from(sql), scope, None)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut got: Vec<Value> = got.iter().map(strip).collect();
    let mut want: Vec<Value> =
        expected(if oracle.is_empty() { sql } else { oracle }).into_iter().map(without_system_properties).collect();
    if !sql.contains("ORDER BY") {
        let text = |v: &Value| cosmoql::value::to_json_string(v).unwrap_or_default();
        got.sort_by_key(text);
        want.sort_by_key(text);
    }
    assert_eq!(got, want, "{sql} (oracle: {oracle})");
}

/// A database `shop` with a container `orders` on 7 physical partitions holding [`orders`].
async fn load(client: &SdkClient) -> azure_data_cosmos::clients::ContainerClient {
    client.create_database("shop", None).await.unwrap();
    let db = client.database_client("shop");
    // 40,000 RU/s: the service starts such a container on ceil(40,000 / 6,000) = 7 physical
    // partitions, so cross-partition queries fan out.
    let options = CreateContainerOptions::default().with_throughput(ThroughputProperties::manual(40_000));
    db.create_container(SdkContainer::new("orders", "/customer".into()), Some(options)).await.unwrap();
    let items = db.container_client("orders", None).await.unwrap();
    for o in orders() {
        items.create_item(o.customer.clone(), &o.id, &o, None).await.unwrap();
    }
    items
}

#[tokio::test(flavor = "multi_thread")]
async fn with_one_range_the_rust_sdk_runs_aggregates_group_by_and_ordered_distinct() {
    // The SDK cannot merge aggregates or GROUP BY across ranges (it refuses such plans); with one
    // range listed it sends each query whole, and the engine answers it. (An unordered DISTINCT
    // without TOP it refuses itself, before sending anything, whatever the server.)
    let server = server(RangeMode::Single);
    let client = sdk(&server).await;
    let items = load(&client).await;
    assert_eq!(items.read_feed_ranges(None).await.unwrap().len(), 1);
    for sql in [
        "SELECT VALUE COUNT(1) FROM c",
        "SELECT VALUE AVG(c.total) FROM c WHERE c.total > 10",
        "SELECT c.customer, COUNT(1) AS n, MAX(c.total) AS highest FROM c GROUP BY c.customer",
        "SELECT DISTINCT VALUE c.customer FROM c ORDER BY c.customer",
        "SELECT * FROM c ORDER BY c.total DESC",
        "SELECT c.id FROM c ORDER BY c.total OFFSET 10 LIMIT 5",
    ] {
        compare(&items, sql, FeedScope::full_container(), "").await;
    }
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_rust_sdk_creates_reads_replaces_deletes_and_queries() {
    let server = server(RangeMode::Physical);
    let client = sdk(&server).await;
    let items = load(&client).await;
    let ranges = items.read_feed_ranges(None).await.unwrap();
    assert_eq!(ranges.len(), 7, "the container's physical partitions, as the SDK reads them");

    // A point read, a replace, a delete and the 404 after it.
    let read: Order = items.read_item("c3", "o3", None).await.unwrap().into_model().unwrap();
    assert_eq!(read, orders()[3]);
    let changed = Order { total: 1000.0, ..read };
    items.replace_item("c3", "o3", &changed, None).await.unwrap();
    let again: Order = items.read_item("c3", "o3", None).await.unwrap().into_model().unwrap();
    assert_eq!(again.total, 1000.0);
    items.replace_item("c3", "o3", &orders()[3], None).await.unwrap();
    items
        .create_item("zz", "gone", &Order { id: "gone".into(), customer: "zz".into(), total: 0.0 }, None)
        .await
        .unwrap();
    items.delete_item("zz", "gone", None).await.unwrap();
    let missing = items.read_item("zz", "gone", None).await.unwrap_err();
    assert!(format!("{missing:?}").contains("404") || format!("{missing}").contains("NotFound"), "{missing:?}");

    // Queries: one logical partition, and across partitions (the SDK plans and merges).
    for (sql, scope, oracle) in [
        (
            "SELECT * FROM c WHERE c.total > 50",
            FeedScope::partition("c2"),
            "SELECT * FROM c WHERE c.total > 50 AND c.customer = 'c2'",
        ),
        ("SELECT * FROM c WHERE c.total > 50", FeedScope::full_container(), ""),
        ("SELECT * FROM c ORDER BY c.total DESC", FeedScope::full_container(), ""),
        (
            "SELECT c.id FROM c WHERE c.customer IN ('c1', 'c4') ORDER BY c.id OFFSET 3 LIMIT 4",
            FeedScope::full_container(),
            "",
        ),
        ("SELECT TOP 5 c.id, c.total FROM c ORDER BY c.total", FeedScope::full_container(), ""),
        // The client's DISTINCT, ordered and unordered (which the SDK buffers only within a
        // finite window).
        ("SELECT DISTINCT VALUE c.customer FROM c ORDER BY c.customer", FeedScope::full_container(), ""),
        ("SELECT DISTINCT VALUE c.customer FROM c OFFSET 0 LIMIT 100", FeedScope::full_container(), ""),
    ] {
        compare(&items, sql, scope, oracle).await;
    }
    server.stop();
}

/// https (`--tls`): the SDK over TLS (ALPN h2) to a server with a self-signed certificate, which
/// it accepts for a loopback host when told to (`RequiredUnlessEmulator`, as for the emulator);
/// with the default (`Required`) it refuses the unknown issuer, as a client should.
#[tokio::test(flavor = "multi_thread")]
async fn the_rust_sdk_over_https() {
    let tls = cosmoql_gateway::tls::Tls::self_signed("127.0.0.1".parse().unwrap()).unwrap();
    assert!(tls.certificate_pem.starts_with("-----BEGIN CERTIFICATE-----"), "{}", tls.certificate_pem);
    let config = ServerConfig { bind: "127.0.0.1:0".parse().unwrap(), tls: Some(tls), ..ServerConfig::default() };
    let server = RunningServer::start(CosmosClient::new(), config).unwrap();
    assert!(server.endpoint().starts_with("https://127.0.0.1:"), "{}", server.endpoint());
    let account = || {
        AccountReference::with_authentication_key(
            server.endpoint().parse::<AccountEndpoint>().unwrap(),
            azure_core::credentials::Secret::from(EMULATOR_KEY.to_string()),
        )
    };
    let pool = azure_data_cosmos::options::ConnectionPoolOptions::builder()
        .with_server_certificate_validation(
            azure_data_cosmos::options::ServerCertificateValidation::RequiredUnlessEmulator,
        )
        .build()
        .unwrap();
    let runtime = azure_data_cosmos::CosmosRuntime::builder().with_connection_pool(pool).build().await.unwrap();
    let client = SdkClient::builder()
        .with_runtime(runtime)
        .build(account(), RoutingStrategy::ProximityTo("cosmoql".into()))
        .await
        .unwrap();
    let items = load(&client).await;
    compare(&items, "SELECT * FROM c WHERE c.total > 50", FeedScope::full_container(), "").await;
    compare(&items, "SELECT TOP 5 c.id, c.total FROM c ORDER BY c.total", FeedScope::full_container(), "").await;
    let strict = SdkClient::builder().build(account(), RoutingStrategy::ProximityTo("cosmoql".into())).await;
    let refused = match strict {
        Err(e) => format!("{e:?}"),
        Ok(client) => format!("{:?}", client.create_database("other", None).await.unwrap_err()),
    };
    assert!(refused.to_lowercase().contains("certificate"), "{refused}");
    server.stop();
}
