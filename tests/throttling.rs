//! Provisioned throughput through the embedded API: a hot logical partition is throttled (429,
//! substatus 3200, a retry-after, nothing changed) while the other partitions keep serving, and
//! the client retries as the SDKs do. Time is a manual clock: no test sleeps.

use std::sync::Arc;
use std::time::Duration;

use cosmoql::storage::{Clock, Container, ContainerSettings, ManualClock, PartitionKey, PartitionKeyDefinition};
use cosmoql::value::{parse_json, Value};
use cosmoql::{ContainerClient, RetryOptions};

fn client(partitions: usize, ru_per_second: f64) -> (ContainerClient, Arc<ManualClock>) {
    let settings = ContainerSettings { initial_partitions: partitions, ..ContainerSettings::default() };
    let container = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings);
    let client = ContainerClient::from_container(Arc::new(container));
    let clock = Arc::new(ManualClock::default());
    client.set_throughput(Some(ru_per_second), clock.clone()).unwrap();
    (client, clock)
}

fn item(pk: &str, id: usize) -> Value {
    parse_json(&format!(r#"{{"id":"{id}","pk":"{pk}","payload":"{}"}}"#, "x".repeat(500))).unwrap()
}

/// A key in another physical partition than `pk`'s.
fn elsewhere(client: &ContainerClient, pk: &str) -> String {
    let hot = client.container().partition_of_key(&PartitionKey::from(pk)).unwrap();
    (0..100)
        .map(|i| format!("k{i}"))
        .find(|k| client.container().partition_of_key(&PartitionKey::from(k.as_str())).unwrap() != hot)
        .unwrap()
}

#[test]
fn a_hot_partition_is_throttled_while_the_others_serve() {
    // 4 partitions at 400 RU/s: 100 RU/s each; a create here costs 5 RU.
    let (client, _clock) = client(4, 400.0);
    let client = client.with_retry_options(RetryOptions { max_attempts: 1, max_wait: Duration::ZERO });
    let mut created = 0;
    let refused = loop {
        match client.create_item::<Value>(&item("hot", created)) {
            Ok(r) => {
                assert_eq!(r.request_charge, 5.0);
                created += 1;
            }
            Err(e) => break e,
        }
    };
    assert_eq!(created, 20, "100 RU/s admits 20 creates of 5 RU in the same instant");
    assert_eq!((refused.status(), refused.substatus()), (Some(429), 3200));
    assert!(refused.to_string().contains("Request rate is large"), "{refused}");
    assert!(refused.retry_after_ms().is_some_and(|ms| ms > 0));
    // The refused create changed nothing.
    assert!(client.read_item::<Value>(PartitionKey::from("hot"), &created.to_string()).is_err());
    // Another partition serves at once.
    let cold = elsewhere(&client, "hot");
    client.create_item::<Value>(&item(&cold, 0)).unwrap();
    let usage = client.container().throughput().unwrap().usage();
    assert_eq!(usage.iter().map(|(_, u)| u.throttled).sum::<u64>(), 2, "{usage:?}");
}

#[test]
fn the_client_retries_like_the_sdks_and_reports_it() {
    let (client, clock) = client(1, 100.0);
    for i in 0..20 {
        client.create_item::<Value>(&item("p", i)).unwrap();
    }
    // The bucket is full: the next create waits for the refusal's retry-after, then runs.
    let before = clock.now();
    let r = client.create_item::<Value>(&item("p", 20)).unwrap();
    assert_eq!(r.retries, 1);
    assert!(clock.now() > before);
    // A debt larger than the cumulative wait allowed: the client gives up with the 429.
    let patient = client.with_retry_options(RetryOptions { max_attempts: 9, max_wait: Duration::from_millis(10) });
    let big = parse_json(&format!(r#"{{"id":"big","pk":"p","payload":"{}"}}"#, "y".repeat(1_000_000))).unwrap();
    clock.advance(Duration::from_secs(10));
    patient.create_item::<Value>(&big).unwrap();
    let refused = patient.create_item::<Value>(&item("p", 21)).unwrap_err();
    assert_eq!(refused.status(), Some(429));
}

#[test]
fn queries_are_admitted_by_every_partition_they_read_and_consume_their_charge() {
    let (client, clock) = client(4, 400.0);
    let strict = client.with_retry_options(RetryOptions { max_attempts: 1, max_wait: Duration::ZERO });
    let cold = elsewhere(&strict, "hot");
    strict.create_item::<Value>(&item(&cold, 0)).unwrap();
    clock.advance(Duration::from_secs(1));
    let mut n = 0;
    while strict.create_item::<Value>(&item("hot", n)).is_ok() {
        n += 1;
    }
    let options = cosmoql::QueryOptions::default;
    // A query pinned to the cold key's partition runs; one reading the hot partition does not.
    let cold_rows: Vec<Value> =
        strict.query_items_blocking(format!("SELECT * FROM c WHERE c.pk = '{cold}'").as_str(), options()).unwrap();
    assert_eq!(cold_rows.len(), 1);
    let refused = strict.query_items_blocking::<Value>("SELECT * FROM c", options()).unwrap_err();
    assert_eq!((refused.status(), refused.substatus()), (Some(429), 3200));
    // With retries it waits the hot partition's debt out, then runs, and its charge is consumed;
    // the page says how many times it was refused.
    let page = client.query_items::<Value>("SELECT * FROM c", options()).next_page().unwrap().unwrap();
    assert!(page.retries >= 1, "{}", page.retries);
    clock.advance(Duration::from_secs(60));
    while strict.create_item::<Value>(&item("hot", n)).is_ok() {
        n += 1;
    }
    let before = client.container().throughput().unwrap().usage();
    let all: Vec<Value> = client.query_items_blocking("SELECT * FROM c", options()).unwrap();
    assert_eq!(all.len(), n + 1);
    let after = client.container().throughput().unwrap().usage();
    let consumed = |u: &[(u32, cosmoql::storage::PartitionUsage)]| u.iter().map(|(_, p)| p.consumed).sum::<f64>();
    assert!(consumed(&after) > consumed(&before) + 4.0 * 2.3);
}

#[test]
fn the_skew_report_flags_the_hot_partition_and_its_throttling() {
    let (client, _clock) = client(4, 400.0);
    let strict = client.with_retry_options(RetryOptions { max_attempts: 1, max_wait: Duration::ZERO });
    let cold = elsewhere(&strict, "hot");
    strict.create_item::<Value>(&item(&cold, 0)).unwrap();
    let mut n = 0;
    let mut refused = 0;
    while refused < 6 {
        match strict.create_item::<Value>(&item("hot", n)) {
            Ok(_) => n += 1,
            Err(_) => refused += 1,
        }
    }
    let report = client.skew_report();
    let hot = client.container().partition_of_key(&PartitionKey::from("hot")).unwrap();
    let row = report.partitions.iter().find(|p| p.id == hot).unwrap();
    assert_eq!((row.items, row.throttled, row.peak_normalized_ru), (n as u64, 6, 100.0));
    assert_eq!(report.budget, Some(100.0));
    let top = &report.top_keys_by_ru[0];
    assert!(top.key.contains("hot") && top.write > 0.0 && top.read == 0.0, "{:?}", report.top_keys_by_ru);
    // Reads and queries scoped to the key are accounted apart.
    client.read_item::<Value>(PartitionKey::from("hot"), "0").unwrap();
    let scoped = cosmoql::QueryOptions { partition_key: Some(PartitionKey::from("hot")), ..Default::default() };
    client.query_items_blocking::<Value>("SELECT * FROM c", scoped).unwrap();
    let report = client.skew_report();
    let top = report.top_keys_by_ru.iter().find(|k| k.key.contains("hot")).unwrap();
    assert_eq!(top.read, 1.0);
    assert!(top.query >= 2.8, "{top:?}");
    assert!(report.to_string().contains("(read 1.00, write "), "{report}");
    assert!(report.top_keys_by_size[0].key.contains("hot"));
    let flags = report.flags.join("\n");
    assert!(flags.contains(&format!("hot partition {hot}")), "{flags}");
    assert!(flags.contains(&format!("partition {hot} throttled")), "{flags}");
    assert!(report.ru.max_over_mean > 3.0);
    // The same as JSON and as a table.
    let json = cosmoql::value::to_json_string(&report.to_json()).unwrap();
    assert!(json.contains("\"peakNormalizedRuPercent\":100"), "{json}");
    assert!(report.to_string().contains("flag: hot partition"));
}
