//! The embedded store: containers, item operations, optimistic concurrency, patch, a transactional
//! batch, a synthetic partition key and splits. `cargo run --example store`.

use cosmoql::store::{BatchOperation, WriteOptions};
use cosmoql::value::parse_json;
use cosmoql::{ContainerSettings, PartitionKey, PartitionKeyDefinition, Store, Value};
use cosmoql::{PartitionKeyPath, PatchOperation, SyntheticKey, SyntheticKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let store = Store::new();
    let db = store.create_database("iot")?;

    // A container keyed on /deviceId that splits a physical partition past 1,000 items.
    let settings = ContainerSettings { split_max_items: 1_000, ..ContainerSettings::default() };
    let readings = db.create_container("readings", PartitionKeyDefinition::hash("/deviceId")?, settings)?;
    for i in 0..5_000 {
        let item = parse_json(&format!(r#"{{"id":"r{i}","deviceId":"dev-{}","value":{}}}"#, i % 50, i % 100))?;
        readings.create(&item)?;
    }
    println!(
        "{} items in {} physical partitions after {} splits",
        readings.item_count(),
        readings.partitions().len(),
        readings.split_count()
    );

    // Point read, then a replace guarded by the etag we read.
    let key = PartitionKey::from("dev-7");
    let read = readings.read(&key, "r7")?;
    println!("read r7 ({} RU): {}", cosmoql::store::response_charge(&read), read.item);
    let mut changed = read.item.clone();
    if let Some(map) = changed.as_object_mut() {
        map.insert("value".into(), Value::from(1000.0));
    }
    readings.replace(&key, "r7", &changed, &WriteOptions::if_match(read.etag.clone()))?;
    let stale = readings.replace(&key, "r7", &changed, &WriteOptions::if_match(read.etag));
    println!("replace with a stale etag: {}", stale.unwrap_err());

    // Patch: increment a counter and append to an array.
    let patched = readings.patch(
        &key,
        "r7",
        &[
            PatchOperation::Increment { path: "/value".into(), by: 1.0 },
            PatchOperation::Add { path: "/notes".into(), value: parse_json(r#"["checked"]"#)? },
        ],
        &WriteOptions::default(),
    )?;
    println!("patched: value={} notes={}", patched.item.get("value"), patched.item.get("notes"));

    // A transactional batch on one logical partition: all or nothing.
    let failed = readings.execute_batch(
        &key,
        &[
            BatchOperation::Create { item: parse_json(r#"{"id":"b1","deviceId":"dev-7"}"#)? },
            BatchOperation::Create { item: parse_json(r#"{"id":"r7","deviceId":"dev-7"}"#)? },
        ],
    );
    println!("batch with a duplicate: {}", failed.unwrap_err());
    println!("b1 exists after the failed batch: {}", readings.read(&key, "b1").is_ok());

    // A synthetic key: date plus hash(vin) % 10 + 1, filled in on write.
    let synthetic = SyntheticKey::new(SyntheticKind::HashSuffix {
        base: PartitionKeyPath::parse("/date")?,
        source: PartitionKeyPath::parse("/vin")?,
        buckets: 10,
    });
    let trips =
        db.create_container("trips", PartitionKeyDefinition::synthetic(synthetic)?, ContainerSettings::default())?;
    let trip = trips.create(&parse_json(r#"{"id":"t1","date":"2018-08-09","vin":"1HGCM82633A004352"}"#)?)?;
    println!("synthetic key written: {}", trip.item.get("partitionKey"));
    // The key is computable from the date and the VIN, so the read is a point read.
    let keys = trips
        .partition_key()
        .synthetic_key()
        .map(|k| k.keys_from_parts(&[Value::from("2018-08-09"), Value::from("1HGCM82633A004352")]))
        .transpose()?
        .unwrap_or_default();
    let found = trips.read(&PartitionKey::from(keys[0].as_str()), "t1")?;
    println!("read back through the computed key: {}", found.item.get("id"));
    Ok(())
}
