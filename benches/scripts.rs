//! Server-side JavaScript (issue 26): invocations per second of an empty stored procedure and of
//! one that creates 100 items, beside the same 100 creates as a transactional batch and as 100
//! single writes (peers measured in the same run); and a query calling a UDF on each of 1,000
//! items beside the same query with a built-in expression.
//!
//! `cargo bench --bench scripts` (figures in `docs/performance.md`).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use cosmoql::storage::{BatchOperation, Container, ContainerSettings, PartitionKeyDefinition};
use cosmoql::value::{parse_json, Value};
use cosmoql::{ContainerClient, PartitionKey, ProcedureOptions, QueryOptions};

fn client() -> (Arc<Container>, ContainerClient) {
    let c = Arc::new(Container::new(
        "bench",
        PartitionKeyDefinition::hash("/pk").expect("key"),
        ContainerSettings { initial_partitions: 4, ..ContainerSettings::default() },
    ));
    (Arc::clone(&c), ContainerClient::from_container(c))
}

fn key(n: usize) -> PartitionKey {
    PartitionKey::from_values(&[Value::from(format!("p{n}"))]).expect("key")
}

/// The median time of one run of `f` (given a new number each run), over `rounds` rounds of
/// `batch` runs each, in seconds.
fn time(mut f: impl FnMut(usize), batch: usize, rounds: usize) -> f64 {
    let mut samples = Vec::with_capacity(rounds);
    let mut n = 0;
    f(usize::MAX); // warm up
    for _ in 0..rounds {
        let started = Instant::now();
        for _ in 0..batch {
            f(n);
            n += 1;
        }
        samples.push(started.elapsed().as_secs_f64() / batch as f64);
    }
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn line(what: &str, seconds: f64, peer: Option<(&str, f64)>) {
    let per_second = 1.0 / seconds;
    match peer {
        Some((name, p)) => {
            println!("{what:<52} {:>10.1} us {per_second:>10.0}/s   {:.2}x {name}", seconds * 1e6, seconds / p)
        }
        None => println!("{what:<52} {:>10.1} us {per_second:>10.0}/s", seconds * 1e6),
    }
}

fn main() {
    let rounds = 15;
    let (container, c) = client();
    let options = ProcedureOptions::default();
    c.create_stored_procedure("empty", "function () { }").expect("create");
    c.create_stored_procedure(
        "create100",
        "function (pk) { var coll = getContext().getCollection(), link = coll.getSelfLink(); \
         for (var i = 0; i < 100; i++) coll.createDocument(link, {id: 'i' + i, pk: pk, n: i}); }",
    )
    .expect("create");

    println!("stored procedures ({rounds} rounds, medians)");
    let empty = time(
        |_| {
            black_box(c.execute_stored_procedure("empty", &key(0), &[], &options).expect("run"));
        },
        200,
        rounds,
    );
    line("an empty procedure", empty, None);

    // Each run in a logical partition of its own (the 100 ids are the same in each).
    let mut base = 1_000_000;
    let by_procedure = time(
        |n| {
            let pk = Value::from(format!("p{}", base + n));
            let pk_key = PartitionKey::from_values(std::slice::from_ref(&pk)).expect("key");
            black_box(c.execute_stored_procedure("create100", &pk_key, &[pk], &options).expect("run"));
        },
        20,
        rounds,
    );
    base += 1_000_000;
    let by_batch = time(
        |n| {
            let pk = format!("p{}", base + n);
            let key = PartitionKey::from_values(&[Value::from(pk.as_str())]).expect("key");
            let ops: Vec<BatchOperation> = (0..100)
                .map(|i| BatchOperation::Create {
                    item: parse_json(&format!(r#"{{"id":"i{i}","pk":"{pk}","n":{i}}}"#)).expect("json"),
                })
                .collect();
            black_box(container.execute_batch(&key, &ops).expect("batch"));
        },
        20,
        rounds,
    );
    base += 1_000_000;
    let by_writes = time(
        |n| {
            let pk = format!("p{}", base + n);
            for i in 0..100 {
                let item = parse_json(&format!(r#"{{"id":"i{i}","pk":"{pk}","n":{i}}}"#)).expect("json");
                black_box(c.create_item(&item).expect("create"));
            }
        },
        20,
        rounds,
    );
    line("a procedure creating 100 items", by_procedure, Some(("a batch of the 100", by_batch)));
    line("  the same 100 creates, one transactional batch", by_batch, None);
    line("  the same 100 creates, one create_item each", by_writes, None);
    println!("  the procedure against 100 single writes: {:.2}x", by_procedure / by_writes);

    // A UDF on each of 1,000 items, beside a built-in expression.
    let (_, q) = client();
    for i in 0..1000 {
        q.create_item(&parse_json(&format!(r#"{{"id":"{i}","pk":"k{}","n":{i}}}"#, i % 10)).expect("json"))
            .expect("create");
    }
    q.create_user_defined_function("double", "function (x) { return 2 * x; }").expect("udf");
    let run = |sql: &str| {
        let options = QueryOptions { max_degree_of_parallelism: 0, ..QueryOptions::default() };
        black_box(q.query_pages::<Value>(sql, options).collect_all().expect("query"));
    };
    let udf = time(|_| run("SELECT VALUE udf.double(c.n) FROM c"), 3, rounds);
    let builtin = time(|_| run("SELECT VALUE 2 * c.n FROM c"), 3, rounds);
    println!("queries over 1,000 items");
    line("SELECT VALUE udf.double(c.n) FROM c", udf, Some(("the built-in", builtin)));
    line("SELECT VALUE 2 * c.n FROM c", builtin, None);
    println!("  a UDF call costs {:.1} us", (udf - builtin) / 1000.0 * 1e6);
}
