//! The cross-partition executor: pruning touches only the partitions that can hold matches (and
//! gives the same results as a fan-out), the buffer bound holds, and producers stop once a page is
//! complete.

use cosmoql::storage::{
    Container, ContainerSettings, PartitionKeyDefinition, PartitionKeyPath, SyntheticKey, SyntheticKind,
};
use cosmoql::value::{parse_json, Value};
use cosmoql::{execute, QueryOptions};

fn fill(c: &Container, n: usize, doc: impl Fn(usize) -> String) {
    for i in 0..n {
        c.create(&parse_json(&doc(i)).unwrap()).unwrap();
    }
}

fn many(def: PartitionKeyDefinition) -> Container {
    Container::new("c", def, ContainerSettings { initial_partitions: 16, ..ContainerSettings::default() })
}

fn one(def: PartitionKeyDefinition) -> Container {
    Container::new("c", def, ContainerSettings { split_max_items: usize::MAX, ..ContainerSettings::default() })
}

/// Runs `sql` on both containers; returns partitions touched on the partitioned one.
fn touched(partitioned: &Container, serial: &Container, sql: &str, options: &QueryOptions) -> usize {
    let a = execute(partitioned, sql, options).unwrap_or_else(|e| panic!("{}", e.render(sql)));
    let b = execute(serial, sql, options).unwrap();
    let strip = |v: &[Value]| -> Vec<Value> { v.iter().map(|x| x.get("id").clone()).collect() };
    assert_eq!(strip(&a.items), strip(&b.items), "{sql}");
    assert!(!a.items.is_empty(), "{sql} should match something");
    a.metrics.partitions_touched
}

#[test]
fn pruning_touches_only_partitions_that_can_hold_matches() {
    let def = || PartitionKeyDefinition::hash("/pk").unwrap();
    let (p, s) = (many(def()), one(def()));
    let doc = |i: usize| format!(r#"{{"id":"{i}","pk":"k{}","n":{i}}}"#, i % 40);
    fill(&p, 800, doc);
    fill(&s, 800, doc);
    let none = QueryOptions::default();
    assert_eq!(touched(&p, &s, "SELECT * FROM c WHERE c.pk = 'k7'", &none), 1);
    assert_eq!(
        touched(
            &p,
            &s,
            "SELECT * FROM c WHERE c.n > 10 AND c.pk = @k",
            &none.clone().parameter("k", Value::from("k3"))
        ),
        1
    );
    let two = touched(&p, &s, "SELECT * FROM c WHERE c.pk IN ('k1', 'k2')", &none);
    assert!((1..=2).contains(&two), "{two}");
    let or = touched(&p, &s, "SELECT * FROM c WHERE c.pk = 'k1' OR c.pk = 'k9' OR c.pk = 'k30'", &none);
    assert!((1..=3).contains(&or), "{or}");
    assert_eq!(touched(&p, &s, "SELECT * FROM c WHERE c.n = 5", &none), p.partitions().len());

    // Hierarchical prefix: only partitions overlapping the tenant's EPK range.
    let def = || PartitionKeyDefinition::hierarchical(&["/tenant", "/user"]).unwrap();
    let (p, s) = (many(def()), one(def()));
    let doc = |i: usize| format!(r#"{{"id":"{i}","tenant":"t{}","user":"u{}"}}"#, i % 8, i % 50);
    fill(&p, 800, doc);
    fill(&s, 800, doc);
    let prefix = touched(&p, &s, "SELECT * FROM c WHERE c.tenant = 't3'", &none);
    assert!(prefix <= 2, "a prefix covers a narrow EPK range: {prefix}");
    assert_eq!(touched(&p, &s, "SELECT * FROM c WHERE c.tenant = 't3' AND c.user = 'u11'", &none), 1);

    // Synthetic keys: the query names the parts, the planner computes the key(s).
    let hash = || {
        PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::HashSuffix {
            base: PartitionKeyPath::parse("/date").unwrap(),
            source: PartitionKeyPath::parse("/vin").unwrap(),
            buckets: 10,
        }))
        .unwrap()
    };
    let (p, s) = (many(hash()), one(hash()));
    let doc = |i: usize| format!(r#"{{"id":"{i}","date":"2024-06-0{}","vin":"VIN{}"}}"#, i % 5, i % 37);
    fill(&p, 800, doc);
    fill(&s, 800, doc);
    assert_eq!(touched(&p, &s, "SELECT * FROM c WHERE c.date = '2024-06-01' AND c.vin = 'VIN6'", &none), 1);
    let base_only = touched(&p, &s, "SELECT * FROM c WHERE c.date = '2024-06-01'", &none);
    assert!(base_only <= 10, "a base alone gives its 10 candidate keys: {base_only}");

    let random = || {
        PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::RandomSuffix {
            base: PartitionKeyPath::parse("/date").unwrap(),
            buckets: 4,
            seed: 1,
        }))
        .unwrap()
    };
    let (p, s) = (many(random()), one(random()));
    fill(&p, 400, doc);
    fill(&s, 400, doc);
    let base = touched(&p, &s, "SELECT * FROM c WHERE c.date = '2024-06-02'", &none);
    assert!(base <= 4, "{base}");
}

#[test]
fn the_buffer_bound_holds_and_producers_stop_early() {
    let def = || PartitionKeyDefinition::hash("/pk").unwrap();
    let p = many(def());
    fill(&p, 6000, |i| format!(r#"{{"id":"{i}","pk":"k{}","n":{i}}}"#, i % 97));
    for dop in [1, 2, 8] {
        for bound in [1usize, 25, 200] {
            let options = QueryOptions {
                max_degree_of_parallelism: dop,
                max_buffered_item_count: Some(bound),
                ..QueryOptions::default()
            };
            let out = execute(&p, "SELECT VALUE c.n FROM c", &options).unwrap();
            assert_eq!(out.items.len(), 6000);
            // At most the bound, plus one page (100 results) of the partition being drained.
            let peak = out.metrics.peak_buffered_items as usize;
            assert!(peak <= bound.max(1) + 100, "dop {dop}, bound {bound}: peak {peak}");
        }
    }
    // Unbounded, producers run ahead further.
    let free = execute(
        &p,
        "SELECT VALUE c.n FROM c",
        &QueryOptions { max_degree_of_parallelism: 8, ..QueryOptions::default() },
    )
    .unwrap();
    assert_eq!(free.items.len(), 6000);

    // A page of 5 results stops every producer: far fewer items are read than the container holds.
    let first =
        execute(&p, "SELECT VALUE c.n FROM c", &QueryOptions { max_item_count: Some(5), ..QueryOptions::default() })
            .unwrap();
    assert_eq!(first.items.len(), 5);
    assert!(first.continuation.is_some());
    assert!(first.metrics.retrieved_document_count < 3000, "{}", first.metrics.retrieved_document_count);
    // TOP stops them too.
    let top = execute(&p, "SELECT TOP 3 VALUE c.n FROM c", &QueryOptions::default()).unwrap();
    assert_eq!(top.items.len(), 3);
    assert!(top.metrics.retrieved_document_count < 3000);
}

#[test]
fn cross_partition_queries_can_be_disabled() {
    let p = many(PartitionKeyDefinition::hash("/pk").unwrap());
    fill(&p, 100, |i| format!(r#"{{"id":"{i}","pk":"k{}"}}"#, i % 10));
    let options = QueryOptions { enable_cross_partition: false, ..QueryOptions::default() };
    let err = execute(&p, "SELECT * FROM c", &options).unwrap_err();
    assert!(err.to_string().contains("cross-partition queries are disabled"), "{err}");
    assert_eq!(execute(&p, "SELECT * FROM c WHERE c.pk = 'k1'", &options).unwrap().items.len(), 10);
}

#[test]
fn a_cancel_flag_stops_the_query() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let p = many(PartitionKeyDefinition::hash("/pk").unwrap());
    // Items with long arrays, so a self-join is slow.
    let arr: Vec<String> = (0..150).map(|i| i.to_string()).collect();
    fill(&p, 300, |i| format!(r#"{{"id":"{i}","pk":"k{}","a":[{}]}}"#, i % 10, arr.join(",")));
    let flag = Arc::new(AtomicBool::new(true));
    let options = QueryOptions { cancel: Some(Arc::clone(&flag)), ..QueryOptions::default() };
    let err = execute(&p, "SELECT VALUE COUNT(1) FROM c", &options).unwrap_err();
    assert_eq!(err.kind, cosmoql::executor::QueryErrorKind::Cancelled);

    // Cancelled while it runs: it stops long before it would finish.
    flag.store(false, Ordering::SeqCst);
    let setter = {
        let flag = Arc::clone(&flag);
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            flag.store(true, Ordering::SeqCst);
        })
    };
    let started = std::time::Instant::now();
    let slow = "SELECT VALUE COUNT(1) FROM c JOIN x IN c.a JOIN y IN c.a JOIN z IN c.a";
    let err = execute(&p, slow, &options).unwrap_err();
    setter.join().unwrap();
    assert_eq!(err.kind, cosmoql::executor::QueryErrorKind::Cancelled);
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
}

#[test]
fn pages_without_order_resume_from_their_scan_position() {
    let p = many(PartitionKeyDefinition::hash("/pk").unwrap());
    fill(&p, 6000, |i| format!(r#"{{"id":"{i}","pk":"k{}","n":{i}}}"#, i % 97));
    let mut options =
        QueryOptions { max_item_count: Some(100), max_degree_of_parallelism: 1, ..QueryOptions::default() };
    let mut seen = Vec::new();
    let mut pages = 0;
    loop {
        let page = execute(&p, "SELECT VALUE c.n FROM c WHERE c.n >= 0", &options).unwrap();
        pages += 1;
        // A late page reads about one page of items, not everything before it.
        assert!(
            page.metrics.retrieved_document_count <= 400,
            "page {pages} read {}",
            page.metrics.retrieved_document_count
        );
        seen.extend(page.items);
        match page.continuation {
            Some(t) => options.continuation = Some(t),
            None => break,
        }
    }
    assert_eq!(pages, 60);
    let all = execute(&p, "SELECT VALUE c.n FROM c WHERE c.n >= 0", &QueryOptions::default()).unwrap().items;
    assert_eq!(seen, all);
}
