//! The embedded API in one go: a client, a database, a container, typed items, etags, patch, a
//! transactional batch, and a query read as a stream of pages. `cargo run --example api_tour`.

use cosmoql::PatchOperation;
use cosmoql::{ContainerProperties, CosmosClient, PartitionKey, Query, QueryOptions, TransactionalBatch};
use futures::StreamExt;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct Order {
    id: String,
    customer: String,
    total: f64,
    #[serde(default)]
    items: Vec<String>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = CosmosClient::new();
    let db = client.create_database("shop")?;
    let orders = db.create_container(ContainerProperties::new("orders", "/customer")?)?;

    for (i, customer) in ["ana", "bo", "ana", "cy", "ana"].iter().enumerate() {
        let order =
            Order { id: format!("o{i}"), customer: customer.to_string(), total: 10.0 * (i + 1) as f64, items: vec![] };
        let created = orders.create_item(&order)?;
        println!("created {} ({} RU, etag {})", created.item.id, created.request_charge, created.etag);
    }

    let read = orders.read_item::<Order>(PartitionKey::from("ana"), "o0")?;
    let mut changed = read.item.clone();
    changed.total = 12.5;
    orders.replace_item(PartitionKey::from("ana"), "o0", &changed, Some(&read.etag))?;
    let stale = orders.replace_item(PartitionKey::from("ana"), "o0", &changed, Some(&read.etag));
    println!("replace with a stale etag: {}", stale.unwrap_err());

    let patched: cosmoql::ItemResponse<Order> = orders.patch_item(
        PartitionKey::from("ana"),
        "o2",
        &[PatchOperation::Add { path: "/items".into(), value: cosmoql::value::parse_json(r#"["pen"]"#)? }],
    )?;
    println!("patched o2: items = {:?}", patched.item.items);

    let batch = TransactionalBatch::new()
        .create_item(&Order { id: "o9".into(), customer: "bo".into(), total: 1.0, items: vec![] })?
        .create_item(&Order { id: "o1".into(), customer: "bo".into(), total: 2.0, items: vec![] })?;
    println!(
        "a batch with a duplicate id: {}",
        orders.execute_transactional_batch(PartitionKey::from("bo"), batch).unwrap_err()
    );

    let query =
        Query::from("SELECT * FROM c WHERE c.total >= @min ORDER BY c.total DESC").with_parameter("@min", 20)?;
    let options = QueryOptions { max_item_count: Some(2), ..QueryOptions::default() };
    let mut pages = orders.query_items::<Order>(query, options);
    futures::executor::block_on(async {
        let mut n = 0;
        while let Some(page) = pages.next().await {
            let page = page.expect("page");
            n += 1;
            let ids: Vec<_> = page.items.iter().map(|o| format!("{}={}", o.id, o.total)).collect();
            println!("page {n}: {} (continuation: {})", ids.join(", "), page.continuation.is_some());
        }
    });

    let per_customer: Vec<serde_json::Value> = orders.query_items_blocking(
        "SELECT c.customer, COUNT(1) AS orders, SUM(c.total) AS spent FROM c GROUP BY c.customer",
        QueryOptions::default(),
    )?;
    println!("per customer: {}", serde_json::to_string(&per_customer)?);
    Ok(())
}
