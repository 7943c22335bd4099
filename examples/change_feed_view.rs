//! A materialized view kept in sync by the change feed: each device's latest reading, in a second
//! container, maintained by an embedded change-feed processor (leases and checkpoints in a third
//! container) as readings are written.
//!
//! `cargo run --example change_feed_view`

use cosmoql::PartitionKey;
use cosmoql::{ChangeFeedProcessor, ContainerProperties, CosmosClient, Value};

fn reading(id: usize, device: &str, at: &str, celsius: f64) -> Value {
    cosmoql::value::parse_json(&format!(
        r#"{{"id":"r{id}","deviceId":"{device}","readingTime":"{at}","celsius":{celsius}}}"#
    ))
    .unwrap_or(Value::Null)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let account = CosmosClient::new();
    let db = account.create_database("iot")?;
    let readings = db.create_container(ContainerProperties::new("readings", "/deviceId")?)?;
    let latest = db.create_container(ContainerProperties::new("latest", "/deviceId")?)?;
    let leases = db.create_container(ContainerProperties::new("leases", "/id")?)?;
    let processor = ChangeFeedProcessor::new(&readings, &leases, "latest-view", "instance-1");

    // Keeps, per device, the reading with the latest time (a reading may arrive late).
    let update = |changes: &[Value]| -> Result<(), String> {
        for r in changes {
            let device = r.get("deviceId").as_str().ok_or("a reading without a device")?;
            let at = r.get("readingTime").as_str().ok_or("a reading without a time")?;
            let newer = match latest.read_item::<Value>(PartitionKey::from(device), device) {
                Ok(current) => current.item.get("readingTime").as_str().is_none_or(|t| t < at),
                Err(e) if e.status() == Some(404) => true,
                Err(e) => return Err(e.to_string()),
            };
            if newer {
                let view = Value::object([
                    ("id".to_string(), Value::from(device)),
                    ("deviceId".to_string(), Value::from(device)),
                    ("readingTime".to_string(), Value::from(at)),
                    ("celsius".to_string(), r.get("celsius").clone()),
                ]);
                latest.upsert_item::<Value>(&view).map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    };

    let batches = [
        vec![("dev-1", "2026-11-24T10:00:00Z", 20.5), ("dev-2", "2026-11-24T10:00:00Z", 18.0)],
        vec![("dev-1", "2026-11-24T10:05:00Z", 21.0), ("dev-3", "2026-11-24T10:05:00Z", 25.5)],
        // A late reading for dev-2: older than what the view holds, so it stays.
        vec![("dev-2", "2026-11-24T09:55:00Z", 17.0), ("dev-2", "2026-11-24T10:10:00Z", 18.5)],
    ];
    let mut id = 0;
    for batch in batches {
        for (device, at, celsius) in batch {
            readings.create_item::<Value>(&reading(id, device, at, celsius))?;
            id += 1;
        }
        let lag: u64 = processor.estimate_lag()?.iter().map(|l| l.pending).sum();
        let handled = processor.run_once(update)?;
        println!("{lag} changes pending, {handled} handled");
    }
    let mut view: Vec<Value> = latest.query_items_blocking(
        "SELECT c.deviceId, c.readingTime, c.celsius FROM c ORDER BY c.deviceId",
        cosmoql::QueryOptions::default(),
    )?;
    view.sort_by(|a, b| a.get("deviceId").as_str().cmp(&b.get("deviceId").as_str()));
    for row in &view {
        println!("{}", cosmoql::value::to_json_string(row).unwrap_or_default());
    }
    assert_eq!(view.len(), 3);
    assert_eq!(view[1].get("celsius"), &Value::from(18.5));
    assert_eq!(processor.estimate_lag()?.iter().map(|l| l.pending).sum::<u64>(), 0);
    Ok(())
}
