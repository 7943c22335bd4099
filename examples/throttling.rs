//! Provisioned throughput: a container with 400 RU/s over 4 physical partitions gives each 100
//! RU/s. Writing to one logical partition as fast as possible throttles its physical partition
//! (429, substatus 3200, with how long to wait) while the others keep serving; the client retries
//! throttled requests like the SDKs do and says how many retries a request took.
//! `cargo run --example throttling`.

use std::sync::Arc;
use std::time::Duration;

use cosmoql::{ContainerClient, ContainerProperties, PartitionKey, RetryOptions, SystemClock, Value};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut properties = ContainerProperties::new("orders", "/customer")?;
    properties.settings.initial_partitions = 4;
    let client = ContainerClient::standalone(properties)?;
    client.set_throughput(Some(400.0), Arc::new(SystemClock::default()))?;

    // No retries: the hot partition answers 429 once its second's budget is spent.
    let impatient = client.with_retry_options(RetryOptions { max_attempts: 1, max_wait: Duration::ZERO });
    let order = |customer: &str, n: usize| -> Result<Value, cosmoql::value::JsonError> {
        cosmoql::value::parse_json(&format!(r#"{{"id":"o{n}","customer":"{customer}","total":{n}}}"#))
    };
    let mut written = 0;
    let refused = loop {
        match impatient.create_item::<Value>(&order("hot", written)?) {
            Ok(_) => written += 1,
            Err(e) => break e,
        }
    };
    println!(
        "customer 'hot': {written} orders written, then {} (substatus {}, retry after {} ms): {refused}",
        refused.status().unwrap_or(0),
        refused.substatus(),
        refused.retry_after_ms().unwrap_or(0)
    );

    // Another customer whose orders live in another physical partition is served at once.
    let hot = client.physical_partition_of(&PartitionKey::from("hot"))?;
    let cold = (0..100)
        .map(|i| format!("customer-{i}"))
        .find(|c| client.physical_partition_of(&PartitionKey::from(c.as_str())).ok() != Some(hot))
        .ok_or("no customer in another partition")?;
    let served = impatient.create_item::<Value>(&order(&cold, 0)?)?;
    println!("customer '{cold}' (another partition): written, {} RU", served.request_charge);

    // The default client retries: it waits what the 429 says, then writes.
    let patient = client.create_item::<Value>(&order("hot", written)?)?;
    println!("customer 'hot' with retries: written after {} retries, {} RU", patient.retries, patient.request_charge);
    for p in client.skew_report().partitions {
        println!("partition {}: {:.2} RU consumed, {} requests throttled", p.id, p.ru_consumed, p.throttled);
    }
    Ok(())
}
