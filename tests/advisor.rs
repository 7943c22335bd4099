//! The partition-key advisor with a recorded workload: the planner's own pruning says which
//! candidate keys keep the workload's queries on one logical partition.

use std::sync::Arc;

use cosmoql::storage::{Container, ContainerSettings, KeyChoice, PartitionKeyDefinition};
use cosmoql::value::parse_json;
use cosmoql::{ContainerClient, Workload};

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
    let ranked = client.advise_partition_key_for(Some(10), &Workload::of_queries(&workload)).unwrap();
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
    // A random suffix spreads the writes too (about as evenly as the hash suffix), but a lookup by date
    // and VIN cannot know the suffix: it reads all 40 of the date's logical partitions.
    let random = find(&KeyChoice::RandomSuffix("/date".into(), 40));
    assert_eq!(ranked[random].1, 0.0);
    assert!(ranked[random].0.write_concentration.is_some_and(|c| c < 0.25), "{:?}", ranked[random]);
    assert!(suffix < random && random < date, "{ranked:#?}");
    // What-if at 600 RU/s over 10 partitions: each hour the 60 vehicles write in the same second;
    // under the date they all hit one partition's 60 RU/s, under the suffix they spread.
    let date = client.what_if(&KeyChoice::Path("/date".into()), 600.0, 10).unwrap();
    let spread = client.what_if(&KeyChoice::HashSuffix("/date".into(), "/vin".into(), 40), 600.0, 10).unwrap();
    assert_eq!(date.writes, 3 * 24 * 60);
    assert!(date.throttle_rate() > 0.5, "{date:?}");
    // With the workload's queries replayed too: lookups of ten vehicles on one day, one a second
    // each, all land on the day's partition under the date (about 29 RU/s against its 20),
    // spread under the suffix.
    let lookups = Workload::of_queries(
        &(0..10)
            .map(|v| (format!("SELECT * FROM c WHERE c.date = '2026-11-02' AND c.vin = 'VIN{v:04}'"), 1.0))
            .collect::<Vec<_>>(),
    );
    let by_date = client.what_if_workload(&KeyChoice::Path("/date".into()), 200.0, 10, &lookups).unwrap().unwrap();
    let by_suffix = client
        .what_if_workload(&KeyChoice::HashSuffix("/date".into(), "/vin".into(), 40), 200.0, 10, &lookups)
        .unwrap()
        .unwrap();
    assert_eq!(by_date.queries, by_suffix.queries);
    assert!(by_date.queries > 1_000_000, "{by_date:?}");
    let rate = |w: &cosmoql::storage::advisor::WhatIf| w.queries_throttled as f64 / w.queries as f64;
    assert!(rate(&by_date) > 0.2, "{by_date:?}");
    assert!(rate(&by_suffix) < rate(&by_date) / 3.0, "{by_suffix:?} vs {by_date:?}");
    assert!(spread.throttle_rate() < date.throttle_rate() / 2.0, "{spread:?} vs {date:?}");
}

/// Devices reporting readings, with a status that changes.
fn readings() -> ContainerClient {
    let container =
        Container::new("readings", PartitionKeyDefinition::hash("/id").unwrap(), ContainerSettings::default());
    for hour in 0..24 {
        for device in 0..200 {
            let item = format!(
                r#"{{"id":"{hour}-{device}","deviceId":"dev-{device:03}","status":"s{}","at":"2026-11-01T{hour:02}:00:00Z","pad":"{}"}}"#,
                device % 7,
                "x".repeat(400)
            );
            container.create(&parse_json(&item).unwrap()).unwrap();
        }
    }
    ContainerClient::from_container(Arc::new(container))
}

#[test]
fn a_workload_file_names_queries_creates_and_changed_paths() {
    let json = parse_json(
        r#"[{"query":"SELECT * FROM c WHERE c.deviceId = 'dev-001'","rate":20},
            {"write":"create","rate":300},
            {"write":"patch","paths":["/status"],"rate":4},
            {"query":"SELECT VALUE COUNT(1) FROM c"}]"#,
    )
    .unwrap();
    let w = Workload::from_json(&json).unwrap();
    assert_eq!(w.queries.len(), 2);
    assert_eq!((w.queries[1].1, w.creates), (1.0, 300.0));
    assert_eq!(w.changes, vec![("/status".to_string(), 4.0)]);
    for (bad, says) in [
        (r#"{"query":"x"}"#, "a workload is a JSON array"),
        (r#"[{"write":"delete"}]"#, "entry 1: unknown write \"delete\""),
        (r#"[{"write":"patch","rate":2}]"#, "entry 1: a \"patch\" write lists the \"paths\""),
        (r#"[{"query":"SELECT 1","rate":-1}]"#, "entry 1: \"rate\" must be a number"),
        (r#"[{"write":"patch","paths":["status"]}]"#, "entry 1: each path is a string starting with /"),
        (r#"[{"nothing":1}]"#, "entry 1: expected"),
    ] {
        let e = Workload::from_json(&parse_json(bad).unwrap()).unwrap_err();
        assert!(e.starts_with(says), "{bad}: {e}");
    }
}

#[test]
fn write_rates_rule_out_a_key_one_partition_cannot_serve_and_changing_paths_are_penalized() {
    let client = readings();
    let workload = Workload {
        queries: vec![("SELECT * FROM c WHERE c.status = 's1'".to_string(), 10.0)],
        creates: 5000.0,
        changes: vec![("/status".to_string(), 50.0)],
    };
    let ranked = client.advise_partition_key_for(Some(10), &workload).unwrap();
    let find = |key: &KeyChoice| ranked.iter().find(|(c, _)| &c.key == key).unwrap();
    // Every hour's 200 readings share one timestamp: under /at, 5,000 creates/s land on one
    // partition, 25,000 RU/s, which no physical partition serves.
    let at = &find(&KeyChoice::Path("/at".into())).0;
    assert!(at.penalty.is_infinite(), "{at:?}");
    // Measured per second: all of each second's writes on one partition.
    assert_eq!(at.write_concentration_per_second, Some(1.0));
    assert!(at.reasons.iter().any(|r| r.contains("more than the 10,000 RU/s a physical partition serves")), "{at:?}");
    // Under /deviceId they spread: the load is a reason, not a verdict.
    let device = &find(&KeyChoice::Path("/deviceId".into())).0;
    assert!(device.penalty.is_finite(), "{device:?}");
    assert!(device.write_concentration_per_second.is_some_and(|c| c < 0.25), "{device:?}");
    assert!(
        device.reasons.iter().any(|r| r.starts_with("at 5000 creates/s the busiest partition takes")),
        "{device:?}"
    );
    // /status is what the query filters on, but the workload changes it.
    let (status, share) = find(&KeyChoice::Path("/status".into()));
    assert_eq!(*share, 1.0);
    assert!(status.reasons.iter().any(|r| r.starts_with("the workload changes /status (50 writes/s)")), "{status:?}");
    let without_changes = Workload { changes: Vec::new(), ..workload.clone() };
    let unchanged = client.advise_partition_key_for(Some(10), &without_changes).unwrap();
    let before = unchanged.iter().find(|(c, _)| c.key == KeyChoice::Path("/status".into())).unwrap();
    assert_eq!(status.penalty, before.0.penalty + 5.0);
    // The ranking as JSON: ruled-out candidates have a null penalty.
    let json = cosmoql::ranking_json(&ranked.iter().map(|(c, s)| (c.clone(), Some(*s))).collect::<Vec<_>>());
    let list = json.get("candidates");
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), ranked.len());
    assert_eq!(list[0].get("rank").as_f64(), Some(1.0));
    let ruled = list.iter().find(|c| c.get("key").as_str() == Some("/at")).unwrap();
    assert_eq!((ruled.get("penalty"), ruled.get("ruledOut")), (&cosmoql::Value::Null, &cosmoql::Value::from(true)));
    assert_eq!(ruled.get("paths").as_array().map(|p| p.len()), Some(1));
}
