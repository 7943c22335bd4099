//! Index metrics (PopulateIndexMetrics) in the service's V2 JSON. The expected texts are the
//! emulator's answers recorded in the .NET SDK's baselines
//! (`IndexMetricsParserBaselineTest.IndexUtilizationParse.xml` and
//! `...IndexUtilizationClientSideExistenceTest.xml`, Azure/azure-cosmos-dotnet-v3).

use cosmoql::storage::{Container, ContainerSettings, IndexingPolicy, PartitionKeyDefinition};
use cosmoql::value::{parse_json, to_json_string};
use cosmoql::{execute, QueryOptions};

fn container() -> Container {
    let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), ContainerSettings::default());
    for i in 0..20 {
        let doc = format!(r#"{{"id":"{i}","pk":"p{}","name":"Abc{i}","statement":"The quick brown fox {i}"}}"#, i % 3);
        c.create(&parse_json(&doc).unwrap()).unwrap();
    }
    c
}

fn metrics(c: &Container, sql: &str) -> String {
    let options = QueryOptions { populate_index_metrics: true, ..QueryOptions::default() };
    let out = execute(c, sql, &options).unwrap();
    to_json_string(&out.index_metrics.expect("asked for")).unwrap()
}

const NONE: &str = r#""PotentialIndexes":{"SingleIndexes":[],"CompositeIndexes":[]}}"#;

#[test]
fn the_emulators_recorded_answers() {
    let c = container();
    let cases = [
        (
            r#"SELECT * FROM c WHERE c.id = "1""#,
            format!(r#"{{"UtilizedIndexes":{{"SingleIndexes":[{{"IndexSpec":"/id/?"}}],"CompositeIndexes":[]}},{NONE}"#),
        ),
        (
            r#"SELECT * FROM c WHERE c.id = "1" and c.name = "Abc""#,
            format!(
                r#"{{"UtilizedIndexes":{{"SingleIndexes":[{{"IndexSpec":"/name/?"}},{{"IndexSpec":"/id/?"}}],"CompositeIndexes":[]}},{NONE}"#
            ),
        ),
        (
            r#"SELECT * FROM c WHERE c.id = "1" and c.name > "Abc""#,
            r#"{"UtilizedIndexes":{"SingleIndexes":[{"IndexSpec":"/name/?"},{"IndexSpec":"/id/?"}],"CompositeIndexes":[]},"PotentialIndexes":{"SingleIndexes":[],"CompositeIndexes":[{"IndexSpecs":["/id ASC","/name ASC"],"IndexImpactScore":"High"}]}}"#.to_string(),
        ),
        (
            r#"SELECT * FROM c WHERE c.id > "1" and c.name > "Abc""#,
            format!(
                r#"{{"UtilizedIndexes":{{"SingleIndexes":[{{"IndexSpec":"/name/?"}},{{"IndexSpec":"/id/?"}}],"CompositeIndexes":[]}},{NONE}"#
            ),
        ),
        (
            r#"SELECT * FROM c WHERE c.id = "1" and c.name = "Abc" ORDER BY c.id ASC"#,
            format!(r#"{{"UtilizedIndexes":{{"SingleIndexes":[{{"IndexSpec":"/name/?"}}],"CompositeIndexes":[]}},{NONE}"#),
        ),
        (
            r#"SELECT 'Input full string' AS test, c.id, c.statement FROM c WHERE STARTSWITH(c.statement, 'The quick brown fox', false)"#,
            format!(r#"{{"UtilizedIndexes":{{"SingleIndexes":[{{"IndexSpec":"/statement/?"}}],"CompositeIndexes":[]}},{NONE}"#),
        ),
    ];
    for (sql, expected) in cases {
        assert_eq!(metrics(&c, sql), expected, "{sql}");
    }
}

#[test]
fn excluded_paths_are_potential_indexes_and_a_composite_the_policy_has_is_not_suggested() {
    let c = container();
    let policy = r#"{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/name/?"}],
        "compositeIndexes":[[{"path":"/id"},{"path":"/statement"}]]}"#;
    c.replace_indexing_policy(IndexingPolicy::from_json(&parse_json(policy).unwrap()).unwrap());
    assert_eq!(
        metrics(&c, r#"SELECT * FROM c WHERE c.name = "Abc1" AND UPPER(c.id) = "1""#),
        r#"{"UtilizedIndexes":{"SingleIndexes":[],"CompositeIndexes":[]},"PotentialIndexes":{"SingleIndexes":[{"IndexSpec":"/name/?","IndexImpactScore":"High"}],"CompositeIndexes":[]}}"#
    );
    // The policy has the composite: it is not suggested, and it serves the query (that the
    // service then lists it as utilized, not the single indexes, is inferred: no recorded answer
    // covers it).
    assert_eq!(
        metrics(&c, r#"SELECT * FROM c WHERE c.id = "1" AND c.statement > "T""#),
        format!(
            r#"{{"UtilizedIndexes":{{"SingleIndexes":[],"CompositeIndexes":[{{"IndexSpecs":["/id ASC","/statement ASC"]}}]}},{NONE}"#
        )
    );
    // Filter and ORDER BY: the composite (filter path, ORDER BY path) is suggested.
    assert_eq!(
        metrics(&c, r#"SELECT * FROM c WHERE c.pk = "p1" ORDER BY c.statement DESC"#),
        r#"{"UtilizedIndexes":{"SingleIndexes":[{"IndexSpec":"/pk/?"},{"IndexSpec":"/statement/?"}],"CompositeIndexes":[]},"PotentialIndexes":{"SingleIndexes":[],"CompositeIndexes":[{"IndexSpecs":["/pk ASC","/statement DESC"],"IndexImpactScore":"High"}]}}"#
    );
}

/// An ORDER BY on several paths uses the composite index that serves it; the utilized composite
/// lists its paths in the query's directions (inferred: the recorded baselines have no utilized
/// composite, only the `IndexSpecs` shape of potential ones).
#[test]
fn a_composite_index_serving_order_by_is_utilized() {
    let c = container();
    let policy = r#"{"compositeIndexes":[[{"path":"/pk"},{"path":"/name","order":"descending"}]]}"#;
    c.replace_indexing_policy(IndexingPolicy::from_json(&parse_json(policy).unwrap()).unwrap());
    c.transform_indexes(usize::MAX);
    assert_eq!(
        metrics(&c, "SELECT * FROM c ORDER BY c.pk DESC, c.name ASC"),
        format!(
            r#"{{"UtilizedIndexes":{{"SingleIndexes":[],"CompositeIndexes":[{{"IndexSpecs":["/pk DESC","/name ASC"]}}]}},{NONE}"#
        )
    );
}

/// Equality on a composite index's leading path and a range on the next seek the composite: it
/// is utilized, and only the item it finds is read.
#[test]
fn a_composite_index_serving_equality_and_range_is_utilized() {
    let c = container();
    let policy = r#"{"compositeIndexes":[[{"path":"/name"},{"path":"/id","order":"descending"}]]}"#;
    c.replace_indexing_policy(IndexingPolicy::from_json(&parse_json(policy).unwrap()).unwrap());
    c.transform_indexes(usize::MAX);
    let sql = r#"SELECT * FROM c WHERE c.id > "0" AND c.name = "Abc1""#;
    assert_eq!(
        metrics(&c, sql),
        format!(
            r#"{{"UtilizedIndexes":{{"SingleIndexes":[],"CompositeIndexes":[{{"IndexSpecs":["/name ASC","/id DESC"]}}]}},{NONE}"#
        )
    );
    let out = execute(&c, sql, &QueryOptions::default()).unwrap();
    assert_eq!((out.items.len(), out.metrics.retrieved_document_count), (1, 1));
}
