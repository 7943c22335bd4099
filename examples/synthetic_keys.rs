//! Synthetic partition keys (the Cosmos DB guidance scenario): writes keyed by date pile into one
//! hot partition; a random suffix or a hash(VIN) suffix spreads them; a query on date and VIN still
//! reaches exactly one partition. `cargo run --example synthetic_keys`.

use cosmoql::{Container, ContainerSettings, PartitionKeyDefinition, QueryOptions};
use cosmoql::{PartitionKeyPath, SyntheticKey, SyntheticKind};

const VINS: usize = 200;

fn load(name: &str, key: PartitionKeyDefinition) -> Container {
    let settings =
        ContainerSettings { initial_partitions: 8, split_max_items: usize::MAX, ..ContainerSettings::default() };
    let c = Container::new(name, key, settings);
    // One day of telemetry from 200 vehicles: every write has the same date.
    for i in 0..4_000 {
        let doc =
            format!(r#"{{"id":"t{i}","date":"2018-08-09","vin":"VIN{:05}","speed":{}}}"#, i % VINS, (i * 7) % 120);
        c.create(&cosmoql::value::parse_json(&doc).expect("JSON")).expect("write");
    }
    c
}

fn show(c: &Container) {
    let parts = c.partitions();
    let total: usize = parts.iter().map(|p| p.items).sum();
    let busiest = parts.iter().map(|p| p.items).max().unwrap_or(0);
    let bars: Vec<String> = parts.iter().map(|p| format!("{:>5}", p.items)).collect();
    println!(
        "  {:<14} items per physical partition: {}  (busiest holds {:.0}%)",
        c.id(),
        bars.join(" "),
        100.0 * busiest as f64 / total.max(1) as f64
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let date = PartitionKeyDefinition::hash("/date")?;
    let random = PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::RandomSuffix {
        base: PartitionKeyPath::parse("/date")?,
        buckets: 16,
        seed: 42,
    }))?;
    let hashed = PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::HashSuffix {
        base: PartitionKeyPath::parse("/date")?,
        source: PartitionKeyPath::parse("/vin")?,
        buckets: 16,
    }))?;
    println!("4,000 writes on 2018-08-09 from {VINS} vehicles, 8 physical partitions:");
    let by_date = load("date", date);
    let by_random = load("date.random", random);
    let by_hash = load("date.hash(vin)", hashed);
    for c in [&by_date, &by_random, &by_hash] {
        show(c);
    }

    println!(
        "\nThe key is filled in on write: {}",
        by_hash.scan().items().next().map(|i| i.doc.to_json_string().unwrap_or_default()).unwrap_or_default()
    );

    let sql = "SELECT VALUE AVG(c.speed) FROM c WHERE c.date = '2018-08-09' AND c.vin = 'VIN00042'";
    println!("\n{sql}");
    for c in [&by_date, &by_random, &by_hash] {
        let out = cosmoql::execute(c, sql, &QueryOptions::default())?;
        println!(
            "  {:<14} -> {:<8} partitions touched: {} of {}, items read: {}",
            c.id(),
            out.items.first().map(|v| v.to_string()).unwrap_or_default(),
            out.metrics.partitions_touched,
            out.metrics.physical_partitions,
            out.metrics.retrieved_document_count
        );
    }
    println!("\nOn date alone, the suffix keys fan out to their 16 candidate keys only:");
    let sql = "SELECT VALUE COUNT(1) FROM c WHERE c.date = '2018-08-09'";
    for c in [&by_random, &by_hash] {
        let explained = cosmoql::explain(c, sql, &QueryOptions::default())?;
        let targets = &explained.plan.targets.pruning.reason;
        println!("  {:<14} {targets}; {} physical partitions", c.id(), explained.partitions.len());
    }
    Ok(())
}
