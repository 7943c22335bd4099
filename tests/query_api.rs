//! The embedded query API: results, metrics, partition scoping.

use cosmoql::storage::{Container, ContainerSettings, IndexingPolicy, PartitionKey, PartitionKeyDefinition};
use cosmoql::value::{parse_json, Value};
use cosmoql::{execute, QueryOptions};

fn container() -> Container {
    let c = Container::new(
        "c",
        PartitionKeyDefinition::hash("/pk").unwrap(),
        ContainerSettings { initial_partitions: 4, ..ContainerSettings::default() },
    );
    for i in 0..200 {
        c.create(&parse_json(&format!(r#"{{"id":"{i}","pk":"k{}","n":{i}}}"#, i % 10)).unwrap()).unwrap();
    }
    c
}

#[test]
fn equality_on_the_key_reads_one_logical_partition() {
    let c = container();
    let all = execute(&c, "SELECT VALUE c.n FROM c WHERE c.n >= 0", &QueryOptions::default()).unwrap();
    assert_eq!(all.items.len(), 200);
    assert_eq!(all.metrics.retrieved_document_count, 200);
    assert_eq!(all.metrics.partitions_touched, 4);

    let one = execute(&c, "SELECT VALUE c.n FROM c WHERE c.pk = 'k3' AND c.n > 100", &QueryOptions::default()).unwrap();
    assert_eq!(one.items, (103..200).step_by(10).map(|n| Value::from(n as f64)).collect::<Vec<_>>());
    // The range index on /n finds the 10 matching items of the partition: only they are read.
    assert_eq!(one.metrics.retrieved_document_count, 10);
    assert_eq!(one.metrics.partitions_touched, 1);

    // Key and id: a point read.
    let point = execute(
        &c,
        "SELECT * FROM c WHERE c.id = @id AND c.pk = @pk",
        &QueryOptions::default().parameter("@id", Value::from("13")).parameter("pk", Value::from("k3")),
    )
    .unwrap();
    assert_eq!(point.items.len(), 1);
    assert_eq!(point.metrics.retrieved_document_count, 1);
    // A point read of a missing id returns nothing.
    let none = execute(&c, "SELECT * FROM c WHERE c.id = '14' AND c.pk = 'k3'", &QueryOptions::default()).unwrap();
    assert!(none.items.is_empty());
    // An equality under OR does not pin partitions; the union of two index seeks finds the items.
    let or = execute(&c, "SELECT VALUE c.n FROM c WHERE c.pk = 'k3' OR c.n = 5", &QueryOptions::default()).unwrap();
    assert_eq!(or.items.len(), 21);
    assert_eq!(or.metrics.partitions_touched, 4);
    assert_eq!(or.metrics.retrieved_document_count, 21);
    // Without indexes, every item is read.
    c.replace_indexing_policy(
        IndexingPolicy::from_json(&parse_json(r#"{"indexingMode":"none","automatic":false}"#).unwrap()).unwrap(),
    );
    let scanned =
        execute(&c, "SELECT VALUE c.n FROM c WHERE c.pk = 'k3' OR c.n = 5", &QueryOptions::default()).unwrap();
    assert_eq!((scanned.items, scanned.metrics.retrieved_document_count), (or.items, 200));
}

#[test]
fn the_request_partition_key_scopes_the_query() {
    let c = container();
    let options = QueryOptions { partition_key: Some(PartitionKey::from("k1")), ..QueryOptions::default() };
    let out = execute(&c, "SELECT VALUE COUNT(1) FROM c", &options).unwrap();
    assert_eq!(out.items, vec![Value::from(20.0)]);
    let disabled = QueryOptions { enable_cross_partition: false, ..QueryOptions::default() };
    let err = execute(&c, "SELECT * FROM c", &disabled).unwrap_err();
    assert!(err.to_string().contains("cross-partition"), "{err}");
    // Pinned by the filter, the query needs no cross-partition permission.
    assert_eq!(execute(&c, "SELECT * FROM c WHERE c.pk = 'k2'", &disabled).unwrap().items.len(), 20);
}

/// A request's partition key scopes the query; a WHERE clause naming another key (or another
/// value of the key) still filters, also where the indexes would count or find the rows: no row
/// of the request's partition has the other key (the service answers 0 and no items).
#[test]
fn a_filter_on_another_key_than_the_requests_finds_nothing() {
    let c = container();
    let options = QueryOptions { partition_key: Some(PartitionKey::from("k1")), ..QueryOptions::default() };
    for sql in [
        "SELECT VALUE COUNT(1) FROM c WHERE c.pk = 'k2'",
        "SELECT VALUE COUNT(1) FROM c WHERE c.pk = 'k2' AND c.n > 10",
        "SELECT VALUE COUNT(1) FROM c WHERE c.pk IN ('k2', 'k3')",
    ] {
        assert_eq!(execute(&c, sql, &options).unwrap().items, vec![Value::from(0.0)], "{sql}");
    }
    for sql in [
        "SELECT * FROM c WHERE c.pk = 'k2'",
        "SELECT * FROM c WHERE c.pk = 'k2' AND c.n > 10",
        "SELECT TOP 3 * FROM c WHERE c.pk = 'k2' ORDER BY c.n DESC",
        "SELECT * FROM c WHERE c.pk = 'k2' ORDER BY c.n OFFSET 1 LIMIT 2",
    ] {
        assert!(execute(&c, sql, &options).unwrap().items.is_empty(), "{sql}");
    }
    // The same key as the request's: its rows.
    let same = "SELECT VALUE COUNT(1) FROM c WHERE c.pk = 'k1' AND c.n > 10";
    assert_eq!(execute(&c, same, &options).unwrap().items, vec![Value::from(19.0)]);
}

/// With V1 hashing a string key's EPK holds its first 100 bytes only: two keys alike up to there
/// share a logical partition, so an equality on the key is not answered by the targets alone.
#[test]
fn v1_keys_alike_in_their_first_100_bytes_are_still_told_apart() {
    let definition =
        PartitionKeyDefinition::hash("/pk").unwrap().with_version(cosmoql::storage::HashVersion::V1).unwrap();
    let c = Container::new("c", definition, ContainerSettings::default());
    let long = "x".repeat(100);
    for (i, tail) in ["a", "a", "b"].iter().enumerate() {
        c.create(&parse_json(&format!(r#"{{"id":"{i}","pk":"{long}{tail}","n":{i}}}"#)).unwrap()).unwrap();
    }
    let key = format!("{long}a");
    let options = QueryOptions::default().parameter("@k", Value::from(key.as_str()));
    for (sql, want) in [
        ("SELECT VALUE COUNT(1) FROM c WHERE c.pk = @k", vec![Value::from(2.0)]),
        ("SELECT VALUE COUNT(1) FROM c WHERE c.pk = @k AND c.n >= 0", vec![Value::from(2.0)]),
        ("SELECT VALUE c.n FROM c WHERE c.pk = @k ORDER BY c.n DESC", vec![Value::from(1.0), Value::from(0.0)]),
        ("SELECT TOP 1 VALUE c.n FROM c WHERE c.pk = @k ORDER BY c.n DESC", vec![Value::from(1.0)]),
    ] {
        assert_eq!(execute(&c, sql, &options).unwrap().items, want, "{sql}");
    }
}

#[test]
fn errors_render_with_line_and_column() {
    let c = container();
    let sql = "SELECT c.n\nFROM c\nWHERE LOWER(c.pk, 1) = 'x'";
    let err = execute(&c, sql, &QueryOptions::default()).unwrap_err();
    assert_eq!(
        err.render(sql),
        "line 3, column 7: The LOWER function requires 1 argument(s).\nWHERE LOWER(c.pk, 1) = 'x'\n      ^^^^^^^^^^^^^^"
    );
    let err = execute(&c, "SELECT FROM c", &QueryOptions::default()).unwrap_err();
    let rendered = err.render("SELECT FROM c");
    assert!(rendered.starts_with("line 1, column 8: Syntax error, incorrect syntax near 'FROM'."), "{rendered}");
    assert!(rendered.contains("\nhint: expected"), "{rendered}");
}

#[test]
fn the_client_reports_memory_and_the_transformation_of_a_replaced_policy() {
    let client = cosmoql::ContainerClient::from_container(std::sync::Arc::new(container()));
    let memory = client.memory();
    assert_eq!(memory.items, 200);
    assert!(memory.data_bytes_per_item() > 0 && memory.index_bytes_per_item() > 0, "{memory:?}");
    // id, pk, n and _ts of every item.
    assert!(memory.index.entries >= 800, "{memory:?}");
    let excluded = r#"{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/n/?"}]}"#;
    client.replace_indexing_policy(IndexingPolicy::from_json(&parse_json(excluded).unwrap()).unwrap()).unwrap();
    // The transformation runs in the background; it ends, and /n leaves the indexes.
    let started = std::time::Instant::now();
    while client.index_transformation_progress() < 100 {
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "the transformation does not end");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(client.memory().index.entries, memory.index.entries - 200);
}

#[test]
fn cached_plans_follow_parameters_and_the_indexing_policy() {
    let c = container();
    let q = "SELECT VALUE c.n FROM c WHERE c.n = @n ORDER BY c.n";
    for n in [3.0, 4.0, 3.0] {
        let out = execute(&c, q, &QueryOptions::default().parameter("n", Value::from(n))).unwrap();
        assert_eq!(out.items, vec![Value::from(n)]);
    }
    // A plan made under the old policy is not reused under the new one.
    let excluded = r#"{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/n/?"}]}"#;
    c.replace_indexing_policy(IndexingPolicy::from_json(&parse_json(excluded).unwrap()).unwrap());
    let err = execute(&c, q, &QueryOptions::default().parameter("n", Value::from(3.0))).unwrap_err();
    assert_eq!(err.status, 400, "{}", err.message);
    assert!(err.message.contains("excluded"), "{}", err.message);
    // Another container with the same text plans on its own.
    let other = container();
    assert_eq!(execute(&other, q, &QueryOptions::default().parameter("n", Value::from(3.0))).unwrap().items.len(), 1);
}

/// FullTextScore ranks with the container's statistics; `_FullTextScore` (what the service's
/// hybrid search plans send each range) with the statistics it is given. Given what the plans'
/// statistics query gathers, they order alike.
#[test]
fn full_text_ranking_and_the_internal_score_under_gathered_statistics_agree() {
    let c = Container::new("t", PartitionKeyDefinition::hash("/pk").unwrap(), ContainerSettings::default());
    let texts = [
        "red bike red",
        "blue bike",
        "red car in the red barn",
        "green tree",
        "a bike for the red fox",
        "bike bike bike",
        "the quick red bike",
        "nothing here at all",
        "red",
        "red bike blue bike bike",
    ];
    for (i, t) in texts.iter().enumerate() {
        c.create(&parse_json(&format!(r#"{{"id":"{i}","pk":"a","text":"{t}"}}"#)).unwrap()).unwrap();
    }
    c.create(&parse_json(r#"{"id":"no-text","pk":"a","n":1}"#).unwrap()).unwrap();
    // In one logical partition, as the plans' per-range requests are (their aggregates compose).
    let options = QueryOptions { partition_key: Some(PartitionKey::from("a")), ..QueryOptions::default() };
    let run = |sql: &str| execute(&c, sql, &options).unwrap().items;
    let stats = run(
        r#"SELECT COUNT(1) AS documentCount, [{"totalWordCount": SUM(_FullTextWordCount(c.text)), "hitCounts": [COUNTIF(FullTextContains(c.text, "red")), COUNTIF(FullTextContains(c.text, "red bike"))]}] AS fullTextStatistics FROM c"#,
    );
    let stats = &stats[0];
    let n = stats.get("documentCount").as_f64().unwrap();
    let statistics = stats.get("fullTextStatistics").index(0);
    let words = statistics.get("totalWordCount").as_f64().unwrap();
    let hits = cosmoql::value::to_json_string(statistics.get("hitCounts")).unwrap();
    assert_eq!((n, words, hits.as_str()), (11.0, 36.0, "[6,3]"));
    let ranked = run(r#"SELECT VALUE c.id FROM c ORDER BY RANK FullTextScore(c.text, "red", "red bike")"#);
    let scored = run(&format!(
        r#"SELECT VALUE c.id FROM c ORDER BY _FullTextScore(c.text, ["red", "red bike"], {n}, {words}, {hits}) DESC"#
    ));
    // The rows without the terms score 0 (and the one without text nothing): their order among
    // themselves is each ordering's own tie order; the rows that hold a term agree.
    assert_eq!(ranked[..6], scored[..6], "{ranked:?}\n{scored:?}");
    assert_eq!(ranked.len(), 11);
}
