//! The partition-key advisor with a recorded workload: the planner's own pruning says which
//! candidate keys keep the workload's queries on one logical partition.

use std::sync::Arc;

use cosmoql::storage::{Container, ContainerSettings, KeyChoice, PartitionKeyDefinition};
use cosmoql::value::parse_json;
use cosmoql::ContainerClient;

#[test]
fn a_date_key_with_a_hash_suffix_spreads_writes_and_keeps_date_and_vin_lookups_on_one_partition() {
    let container = Container::new("trips", PartitionKeyDefinition::hash("/id").unwrap(), ContainerSettings::default());
    for day in 1..=3 {
        for hour in 0..24 {
            for vehicle in 0..60 {
                let item = format!(
                    r#"{{"id":"{day}-{hour}-{vehicle}","vin":"VIN{vehicle:04}","date":"2026-11-0{day}","at":"2026-11-0{day}T{hour:02}:00:00Z"}}"#
                );
                container.create(&parse_json(&item).unwrap()).unwrap();
            }
        }
    }
    let client = ContainerClient::from_container(Arc::new(container));
    let workload = vec![
        ("SELECT * FROM c WHERE c.date = '2026-11-02' AND c.vin = 'VIN0007'".to_string(), 100.0),
        ("SELECT * FROM c WHERE c.vin = 'VIN0003' AND c.date = '2026-11-01'".to_string(), 50.0),
    ];
    let ranked = client.advise_partition_key_for(Some(10), &workload).unwrap();
    let find = |key: &KeyChoice| ranked.iter().position(|(c, _)| &c.key == key).unwrap();
    let suffix = find(&KeyChoice::HashSuffix("/date".into(), "/vin".into(), 40));
    let date = find(&KeyChoice::Path("/date".into()));
    let id = find(&KeyChoice::Path("/id".into()));
    // Every lookup names both the date and the VIN: the suffixed key pins one logical partition.
    assert_eq!(ranked[suffix].1, 1.0, "{:?}", ranked[suffix]);
    assert!(ranked[suffix].0.reasons[0].starts_with("100% of the workload's queries"));
    // The date alone pins them too, but sends every write of the day to one key.
    assert_eq!(ranked[date].1, 1.0);
    assert!(suffix < date, "{ranked:#?}");
    assert!(ranked[date].0.reasons.iter().any(|r| r.contains("hot writes")));
    // The id spreads writes but no lookup names it: every query fans out.
    assert_eq!(ranked[id].1, 0.0);
    assert!(suffix < id, "{:#?}", (&ranked[suffix], &ranked[id]));
    // What-if at 600 RU/s over 10 partitions: each hour the 60 vehicles write in the same second;
    // under the date they all hit one partition's 60 RU/s, under the suffix they spread.
    let date = client.what_if(&KeyChoice::Path("/date".into()), 600.0, 10).unwrap();
    let spread = client.what_if(&KeyChoice::HashSuffix("/date".into(), "/vin".into(), 40), 600.0, 10).unwrap();
    assert_eq!(date.writes, 3 * 24 * 60);
    assert!(date.throttle_rate() > 0.5, "{date:?}");
    assert!(spread.throttle_rate() < date.throttle_rate() / 2.0, "{spread:?} vs {date:?}");
}
