//! Provisioned throughput through the embedded API, with the service's rules: partitions at
//! creation, the documented minimums and steps, splits when the offer outgrows the partitions,
//! redistribution, burst capacity, and a database's throughput shared by its containers. Time is
//! a manual clock: no test sleeps.

use std::sync::Arc;
use std::time::Duration;

use cosmoql::storage::{ManualClock, PartitionKey, Provisioned};
use cosmoql::value::{parse_json, Value};
use cosmoql::{ContainerClient, ContainerProperties, CosmosClient, RetryOptions};

fn account() -> (CosmosClient, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::default());
    (CosmosClient::new().with_clock(clock.clone()), clock)
}

fn item(pk: &str, id: usize) -> Value {
    parse_json(&format!(r#"{{"id":"{id}","pk":"{pk}","payload":"{}"}}"#, "x".repeat(500))).unwrap()
}

fn strict(client: &ContainerClient) -> ContainerClient {
    client.with_retry_options(RetryOptions { max_attempts: 1, max_wait: Duration::ZERO })
}

/// Creates in `pk` until one is refused; how many were admitted.
fn fill(client: &ContainerClient, pk: &str, from: usize) -> usize {
    let strict = strict(client);
    let mut n = 0;
    while strict.create_item::<Value>(&item(pk, from + n)).is_ok() {
        n += 1;
    }
    n
}

#[test]
fn a_container_starts_with_a_partition_per_6000_manual_or_10000_autoscale_ru() {
    let (account, _) = account();
    let db = account.create_database("db").unwrap();
    let manual =
        db.create_container(ContainerProperties::new("m", "/pk").unwrap().throughput(Provisioned::Manual(18_000.0)));
    let manual = manual.unwrap();
    let t = manual.read_throughput().unwrap();
    assert_eq!((t.partitions, t.provisioned, t.minimum), (3, Provisioned::Manual(18_000.0), 400.0));
    assert_eq!(t.per_partition.iter().map(|(_, ru)| *ru).collect::<Vec<_>>(), vec![6000.0; 3]);
    assert_eq!(t.instant_maximum, 30_000.0);
    let auto = db
        .create_container(
            ContainerProperties::new("a", "/pk").unwrap().throughput(Provisioned::Autoscale { max: 250_000.0 }),
        )
        .unwrap();
    assert_eq!(auto.read_throughput().unwrap().partitions, 25);
    // The service's steps and floor, in its words.
    for (bad, says) in [
        (Provisioned::Manual(300.0), "between 400 and 1000000 inclusive in increments of 100"),
        (Provisioned::Manual(450.0), "in increments of 100"),
        (Provisioned::Autoscale { max: 1500.0 }, "autoscale max throughput values between 1000 and"),
        (Provisioned::Manual(2_000_000.0), "between 400 and 1000000"),
    ] {
        let e = db.create_container(ContainerProperties::new("bad", "/pk").unwrap().throughput(bad)).unwrap_err();
        assert_eq!(e.status(), Some(400));
        assert!(e.to_string().contains(says), "{e}");
    }
}

#[test]
fn raising_the_offer_past_10000_per_partition_splits_and_the_floor_follows_the_highest_ever() {
    let (account, _) = account();
    let db = account.create_database("db").unwrap();
    let c = db
        .create_container(ContainerProperties::new("c", "/pk").unwrap().throughput(Provisioned::Manual(30_000.0)))
        .unwrap();
    // 30,000 RU/s manual starts with 5 partitions; raise to 45,000 at once (5 x 10,000 = 50,000).
    assert_eq!(c.read_throughput().unwrap().partitions, 5);
    for i in 0..200 {
        c.create_item::<Value>(&item(&format!("k{}", i % 40), i)).unwrap();
    }
    let t = c.replace_throughput(Provisioned::Manual(45_000.0)).unwrap();
    assert_eq!((t.partitions, t.per_partition[0].1), (5, 9000.0));
    // 80,000 needs 8 partitions: three split, widest key range first, nothing lost.
    let t = c.replace_throughput(Provisioned::Manual(80_000.0)).unwrap();
    assert_eq!((t.partitions, t.per_partition[0].1, t.instant_maximum), (8, 10_000.0, 80_000.0));
    let all: Vec<Value> = c.query_items_blocking("SELECT * FROM c", cosmoql::QueryOptions::default()).unwrap();
    assert_eq!(all.len(), 200);
    c.read_item::<Value>(PartitionKey::from("k7"), "7").unwrap();
    // The floor is now a hundredth of the highest ever: 800 RU/s.
    assert_eq!(t.minimum, 800.0);
    let e = c.replace_throughput(Provisioned::Manual(700.0)).unwrap_err();
    assert!(e.to_string().contains("between 800 and 1000000"), "{e}");
    let t = c.replace_throughput(Provisioned::Manual(800.0)).unwrap();
    assert_eq!((t.partitions, t.per_partition[0].1), (8, 100.0), "lowering never merges partitions");
    // To autoscale: the floor is a tenth of the highest ever.
    let e = c.replace_throughput(Provisioned::Autoscale { max: 4000.0 }).unwrap_err();
    assert!(e.to_string().contains("between 8000 and"), "{e}");
    c.replace_throughput(Provisioned::Autoscale { max: 8000.0 }).unwrap();
}

#[test]
fn an_offer_change_recomputes_the_budgets_at_once() {
    let (account, _) = account();
    let db = account.create_database("db").unwrap();
    let c = db
        .create_container(ContainerProperties::new("c", "/pk").unwrap().throughput(Provisioned::Manual(400.0)))
        .unwrap();
    // 400 RU/s on one partition: 80 creates of 5 RU in one instant.
    assert_eq!(fill(&c, "p", 0), 80);
    c.replace_throughput(Provisioned::Manual(1000.0)).unwrap();
    assert_eq!(fill(&c, "p", 80), 120, "the 1,000 RU/s budget admits 600 RU more");
}

#[test]
fn redistributed_throughput_serves_a_hot_partition_more() {
    let (account, clock) = account();
    let db = account.create_database("db").unwrap();
    let c = db
        .create_container(ContainerProperties::new("c", "/pk").unwrap().throughput(Provisioned::Manual(12_000.0)))
        .unwrap();
    let ids: Vec<u32> = c.read_throughput().unwrap().per_partition.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids.len(), 2);
    let hot = c.container().partition_of_key(&PartitionKey::from("hot")).unwrap();
    let cold = *ids.iter().find(|id| **id != hot).unwrap();
    // Even: 6,000 each, 1,200 creates of 5 RU at once.
    assert_eq!(fill(&c, "hot", 0), 1200);
    clock.advance(Duration::from_secs(5));
    // Give the hot partition 9,000 and the cold one 3,000: the offer stays 12,000.
    let t = c.redistribute_throughput(&[(hot, 9000.0), (cold, 3000.0)]).unwrap();
    assert!(t.custom_distribution);
    assert_eq!(t.provisioned, Provisioned::Manual(12_000.0));
    assert_eq!(fill(&c, "hot", 1200), 1800);
    // While custom, the offer changes only by redistributing.
    let e = c.replace_throughput(Provisioned::Manual(20_000.0)).unwrap_err();
    assert!(e.to_string().contains("reset it to an even split first"), "{e}");
    // A target over 10,000 splits the partition: its children take half each.
    let t = c.redistribute_throughput(&[(hot, 16_000.0)]).unwrap();
    assert_eq!(t.partitions, 3);
    assert_eq!(t.provisioned, Provisioned::Manual(19_000.0));
    let mut budgets: Vec<f64> = t.per_partition.iter().map(|(_, ru)| *ru).collect();
    budgets.sort_by(f64::total_cmp);
    assert_eq!(budgets, vec![3000.0, 8000.0, 8000.0]);
    let t = c.reset_throughput_distribution().unwrap();
    assert!(!t.custom_distribution);
    assert!(t.per_partition.iter().all(|(_, ru)| (*ru - 19_000.0 / 3.0).abs() < 1e-9));
    c.replace_throughput(Provisioned::Manual(20_000.0)).unwrap();
}

#[test]
fn burst_capacity_absorbs_a_spike_after_idle_time() {
    let (account, clock) = account();
    let db = account.create_database("db").unwrap();
    let c = db
        .create_container(ContainerProperties::new("c", "/pk").unwrap().throughput(Provisioned::Manual(400.0)))
        .unwrap();
    c.set_burst_capacity(true).unwrap();
    c.create_item::<Value>(&item("p", 0)).unwrap();
    clock.advance(Duration::from_secs(300));
    // Idle for 5 minutes at 400 RU/s: the partition may take 3,000 RU in a second, not 400.
    assert_eq!(fill(&c, "p", 1), 600);
    assert!(c.read_throughput().unwrap().burst);
    assert!(c.skew_report().throughput.unwrap().contains("burst capacity on"));
}

#[test]
fn a_database_shares_its_throughput_among_its_containers() {
    let (account, clock) = account();
    let db = account.create_database("shared").unwrap();
    let t = db.replace_throughput(Provisioned::Manual(400.0)).unwrap();
    assert!(t.shared);
    assert_eq!((t.partitions, t.minimum), (1, 400.0));
    let a = db.create_container(ContainerProperties::new("a", "/pk").unwrap()).unwrap();
    let b = db.create_container(ContainerProperties::new("b", "/pk").unwrap()).unwrap();
    let own = db
        .create_container(ContainerProperties::new("own", "/pk").unwrap().throughput(Provisioned::Manual(400.0)))
        .unwrap();
    assert!(a.read_throughput().unwrap().shared);
    // A and B draw on the same 400 RU/s: once A used it, B is throttled too; the container with
    // its own throughput is not.
    assert_eq!(fill(&a, "x", 0), 80);
    assert_eq!(fill(&b, "y", 0), 0);
    assert_eq!(fill(&own, "z", 0), 80);
    clock.advance(Duration::from_secs(1));
    assert_eq!(fill(&b, "y", 0), 80);
    assert!(a.skew_report().throughput.unwrap().contains("shared with the database"));
    // At most 25 containers share it; more need their own.
    for i in 2..25 {
        db.create_container(ContainerProperties::new(&format!("c{i}"), "/pk").unwrap()).unwrap();
    }
    let e = db.create_container(ContainerProperties::new("c25", "/pk").unwrap()).unwrap_err();
    assert!(e.to_string().contains("already has 25 containers sharing its throughput"), "{e}");
    db.create_container(ContainerProperties::new("c25", "/pk").unwrap().throughput(Provisioned::Manual(400.0)))
        .unwrap();
    // More throughput, more shared partitions: one per 10,000 RU/s.
    let t = db.replace_throughput(Provisioned::Manual(25_000.0)).unwrap();
    assert_eq!(t.partitions, 3);
    let e = db.replace_throughput(Provisioned::Manual(200.0)).unwrap_err();
    assert!(e.to_string().contains("between 400 and"), "{e}");
}

/// Issue 21, point 14: a refused redistribution split a partition anyway and reset the shares,
/// and an accepted one that split a partition re-evened the others over the new count (30,000
/// RU/s on 3 partitions, 12,500 for one of them, came to 27,500 in all). Every target is checked
/// first; the partitions not targeted keep their shares; the budgets always sum to the offer.
#[test]
fn redistribution_checks_first_and_the_budgets_sum_to_the_offer() {
    let (account, _) = account();
    let db = account.create_database("db").unwrap();
    let c = db
        .create_container(ContainerProperties::new("c", "/pk").unwrap().throughput(Provisioned::Manual(18_000.0)))
        .unwrap();
    let before = c.read_throughput().unwrap();
    let ids: Vec<u32> = before.per_partition.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids.len(), 3);
    // Refused, for the second target: nothing changes, the first target's split included.
    for bad in [
        vec![(ids[0], 12_500.0), (999, 5_000.0)],
        vec![(ids[0], 12_500.0), (ids[1], 20_001.0)],
        vec![(ids[0], 12_500.0), (ids[1], f64::NAN)],
        vec![(ids[0], 12_500.0), (ids[0], 5_000.0)],
    ] {
        let e = c.redistribute_throughput(&bad).unwrap_err();
        assert!(e.to_string().contains("physical partition"), "{e}");
        let now = c.read_throughput().unwrap();
        assert_eq!(
            (now.partitions, now.provisioned, now.custom_distribution),
            (3, before.provisioned, false),
            "{bad:?}"
        );
        assert_eq!(now.per_partition, before.per_partition, "{bad:?}");
    }
    // Accepted: the target splits its partition, the two others keep 6,000 each.
    let t = c.redistribute_throughput(&[(ids[0], 12_500.0)]).unwrap();
    assert_eq!(t.partitions, 4);
    assert_eq!(t.provisioned, Provisioned::Manual(24_500.0));
    let mut budgets: Vec<f64> = t.per_partition.iter().map(|(_, ru)| *ru).collect();
    budgets.sort_by(f64::total_cmp);
    assert_eq!(budgets, vec![6_000.0, 6_000.0, 6_250.0, 6_250.0]);
    // Again, with a split: 6,250 + 6,250 + 4,000 + 8,000 + 8,000.
    let t = c.redistribute_throughput(&[(ids[1], 4_000.0), (ids[2], 16_000.0)]).unwrap();
    assert_eq!(t.partitions, 5);
    assert_eq!(t.provisioned, Provisioned::Manual(32_500.0));
    let sum: f64 = t.per_partition.iter().map(|(_, ru)| ru).sum();
    assert_eq!(sum, 32_500.0);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

    /// Any sequence of redistributions (accepted or refused), resets and offer changes: the
    /// partition budgets sum to the offer after each, and a refused redistribution changes
    /// nothing.
    #[test]
    fn budgets_always_sum_to_the_offer(
        steps in proptest::collection::vec(
            (0u8..4, proptest::collection::vec((0usize..6, 0u32..25_000), 1..4)),
            1..8,
        ),
    ) {
        let (account, _) = account();
        let db = account.create_database("db").unwrap();
        let c = db
            .create_container(ContainerProperties::new("c", "/pk").unwrap().throughput(Provisioned::Manual(30_000.0)))
            .unwrap();
        for (kind, targets) in steps {
            let before = c.read_throughput().unwrap();
            let ids: Vec<u32> = before.per_partition.iter().map(|(id, _)| *id).collect();
            match kind {
                0 => {
                    c.reset_throughput_distribution().unwrap();
                }
                1 if !before.custom_distribution => {
                    let _ = c.replace_throughput(Provisioned::Manual(f64::from(targets[0].1 / 100 * 100 + 400)));
                }
                _ => {
                    // Indexes past the partitions name no partition.
                    let targets: Vec<(u32, f64)> = targets
                        .iter()
                        .map(|(i, ru)| (ids.get(*i).copied().unwrap_or(10_000 + *i as u32), f64::from(*ru)))
                        .collect();
                    if c.redistribute_throughput(&targets).is_err() {
                        let now = c.read_throughput().unwrap();
                        proptest::prop_assert_eq!(&now.per_partition, &before.per_partition);
                        proptest::prop_assert_eq!(now.provisioned, before.provisioned);
                    }
                }
            }
            let now = c.read_throughput().unwrap();
            let sum: f64 = now.per_partition.iter().map(|(_, ru)| ru).sum();
            let offer = match now.provisioned {
                Provisioned::Manual(ru) => ru,
                Provisioned::Autoscale { max } => max,
            };
            proptest::prop_assert!((sum - offer).abs() < 1e-6 * offer.max(1.0), "{sum} != {offer}: {now:?}");
            proptest::prop_assert_eq!(now.per_partition.len(), now.partitions);
        }
    }
}
