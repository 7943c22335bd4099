//! A multi-tenant container: the tenant as the partition key, against a hierarchical tenant/user
//! key. A big tenant fills one logical partition under the first; the second spreads it over its
//! users while a query on the tenant alone still touches only the partitions of its EPK prefix.
//! `cargo run --example multi_tenant`.

use cosmoql::{Container, ContainerSettings, PartitionKeyDefinition, QueryOptions};

fn load(key: PartitionKeyDefinition) -> Container {
    let settings = ContainerSettings { initial_partitions: 4, split_max_items: 1_500, ..ContainerSettings::default() };
    let c = Container::new("events", key, settings);
    for i in 0..6_000 {
        // Tenant "acme" is big: half of all events.
        let tenant = if i % 2 == 0 { "acme".to_string() } else { format!("t{}", i % 25) };
        let doc = format!(r#"{{"id":"e{i}","tenant":"{tenant}","user":"u{}","kind":"click"}}"#, i % 300);
        c.create(&cosmoql::value::parse_json(&doc).expect("JSON")).expect("write");
    }
    c
}

fn report(name: &str, c: &Container) -> Result<(), Box<dyn std::error::Error>> {
    let parts = c.partitions();
    let largest_logical = parts.iter().map(|p| p.logical_partitions).max().unwrap_or(0);
    println!(
        "{name}: {} physical partitions (items {:?}), {} logical partitions (up to {largest_logical} in one physical partition)",
        parts.len(),
        parts.iter().map(|p| p.items).collect::<Vec<_>>(),
        parts.iter().map(|p| p.logical_partitions).sum::<usize>(),
    );
    for sql in [
        "SELECT VALUE COUNT(1) FROM c WHERE c.tenant = 'acme'",
        "SELECT VALUE COUNT(1) FROM c WHERE c.tenant = 'acme' AND c.user = 'u42'",
    ] {
        let out = cosmoql::execute(c, sql, &QueryOptions::default())?;
        println!(
            "  {sql}\n    -> {} (partitions touched {} of {}, items read {})",
            out.items[0],
            out.metrics.partitions_touched,
            out.metrics.physical_partitions,
            out.metrics.retrieved_document_count
        );
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let by_tenant = load(PartitionKeyDefinition::hash("/tenant")?);
    report("key /tenant", &by_tenant)?;
    println!("  (acme's 3,000 events are one logical partition: it can never split, and its writes all go to one physical partition)\n");
    let hierarchical = load(PartitionKeyDefinition::hierarchical(&["/tenant", "/user"])?);
    report("key /tenant/user", &hierarchical)?;
    println!("  (acme is spread over its users; a tenant query reads the physical partitions of its EPK prefix only)");
    Ok(())
}
