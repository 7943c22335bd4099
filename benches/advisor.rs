//! The partition-key advisor on the telemetry workload (100,000 items by default,
//! `COSMOQL_BENCH_ITEMS`): reading the sample, ranking every candidate, and the what-if replay of
//! the ten best, without and with a recorded workload's queries. Each is also given against a
//! full scan of the same items in the same run (`SELECT VALUE COUNT(1) FROM c WHERE UPPER(c.unit) = 'KM/H'`
//! reads every item), so a figure means the same on a busy machine.
//!
//! cargo bench --bench advisor [-- --rank-only]

use std::sync::Arc;
use std::time::{Duration, Instant};

use cosmoql::storage::{Container, ContainerSettings, ImportOptions, PartitionKeyDefinition};
use cosmoql::{ContainerClient, QueryOptions, Workload};

#[path = "support/mod.rs"]
#[allow(dead_code)]
mod support;

/// The median of `runs` timings of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let n = support::items_or(100_000);
    let data = support::data(n);
    let container = Container::new(
        "telemetry",
        PartitionKeyDefinition::hash("/deviceId").expect("key"),
        ContainerSettings::for_expected_items(n),
    );
    container.import(&data[..], ImportOptions::default(), |_| {}).expect("import");
    let client = ContainerClient::from_container(Arc::new(container));
    let scan = median(5, || {
        let _ = client
            .query_items_blocking::<cosmoql::Value>(
                "SELECT VALUE COUNT(1) FROM c WHERE UPPER(c.unit) = 'KM/H'",
                QueryOptions::default(),
            )
            .expect("scan");
    });
    let runs = 3;
    let read = median(runs, || drop(client.key_advisor()));
    let advisor = client.key_advisor();
    let partitions = advisor.partitions(None);
    let rank = median(runs, || drop(advisor.rank(None, &|_, _| {})));
    let ranked = advisor.rank(None, &|_, _| {});
    let top: Vec<_> = ranked.iter().take(10).map(|c| c.key.clone()).collect();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let line = |what: &str, d: Duration| println!("  {what:<33} {:>9.1} ms  {:>7.1} scans", ms(d), ms(d) / ms(scan));
    println!("advisor on {n} items ({} candidates, {partitions} partitions), medians of {runs}:", ranked.len());
    println!("  full scan (the yardstick)         {:>9.1} ms", ms(scan));
    line("read the sample", read);
    line("rank every candidate", rank);
    line("read + rank (cosmoql advise)", read + rank);
    if std::env::args().any(|a| a == "--rank-only") {
        return;
    }
    let what_if = median(runs, || {
        for key in &top {
            let _ = advisor.what_if(key, 600.0, partitions, None).expect("what-if");
        }
    });
    let workload = Workload::of_queries(&[
        ("SELECT * FROM c WHERE c.deviceId = 'dev-00042'".to_string(), 50.0),
        ("SELECT VALUE COUNT(1) FROM c WHERE c.metricType = 'Speed'".to_string(), 2.5),
    ]);
    let with_queries = median(runs, || {
        for key in &top {
            let _ = advisor.what_if(key, 600.0, partitions, Some(&workload)).expect("what-if");
        }
    });
    line("what-if, 10 keys, writes only", what_if);
    line("what-if, 10 keys, with queries", with_queries);
}
