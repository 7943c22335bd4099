//! The Parquet export: a file per physical partition in a hive layout, zstd, the schema mode in
//! the metadata; read back with DataFusion, the files give the live mirror's results.

use std::fs::File;
use std::path::PathBuf;

use cosmoql::value::{parse_json, to_json_string, Value};
use cosmoql::{ContainerClient, ContainerProperties};
use cosmoql_analytics::{parquet, values, Analytics, SchemaMode};
use datafusion::arrow::datatypes::DataType;
use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
use datafusion::prelude::{ParquetReadOptions, SessionContext};

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn fixture() -> ContainerClient {
    let mut properties = ContainerProperties::new("c", "/k").unwrap();
    properties.settings.initial_partitions = 3;
    let client = ContainerClient::standalone(properties).unwrap();
    for i in 0..300 {
        let item = format!(
            r#"{{"id":"{i}","k":"k{}","n":{},"x":{},"name":"n{}","ok":{},"tags":["a{}","b"],"at":{{"city":"c{}","z":{}}},"empty":{{}}}}"#,
            i % 17,
            i % 11,
            i as f64 / 4.0,
            i % 5,
            i % 2 == 0,
            i % 3,
            i % 4,
            i % 6,
        );
        client.create_item(&parse_json(&item).unwrap()).unwrap();
    }
    // A value of another type than its column's: null in the mirror and in the files alike.
    client.create_item(&parse_json(r#"{"id":"odd","k":"k1","n":"eleven"}"#).unwrap()).unwrap();
    client
}

#[test]
fn the_files_give_the_live_mirrors_results() {
    let client = fixture();
    let analytics = Analytics::new(SchemaMode::WellDefined).unwrap().with_container("db", &client).unwrap();
    let out = scratch("parquet-export");
    let files = parquet::export(&analytics, &out).unwrap();
    assert_eq!(files.len(), 3, "a file per physical partition");
    assert_eq!(files.iter().map(|f| f.rows).sum::<usize>(), 301);
    for f in &files {
        let expected = out.join("db").join("c").join(format!("pkrange={}", f.range)).join("part-0.parquet");
        assert_eq!(f.path, expected);
        let reader = SerializedFileReader::new(File::open(&f.path).unwrap()).unwrap();
        let meta = reader.metadata();
        let kv = meta.file_metadata().key_value_metadata().unwrap();
        let get = |k: &str| kv.iter().find(|e| e.key == k).and_then(|e| e.value.clone());
        assert_eq!(get("cosmoql.schema_mode").as_deref(), Some("well-defined"));
        assert_eq!(get("cosmoql.container").as_deref(), Some("db.c"));
        assert_eq!(get("cosmoql.columns_left_out").as_deref(), Some("empty"), "a struct without fields");
        let compression = meta.row_group(0).column(0).compression();
        assert!(format!("{compression:?}").starts_with("ZSTD"), "{compression:?}");
    }

    let ctx = SessionContext::new_with_config(
        datafusion::prelude::SessionConfig::new().set_bool("datafusion.sql_parser.enable_ident_normalization", false),
    );
    let options = ParquetReadOptions::default().table_partition_cols(vec![("pkrange".to_string(), DataType::Utf8)]);
    let dir = out.join("db").join("c");
    analytics.block_on(ctx.register_parquet("files", dir.to_str().unwrap(), options)).unwrap();
    let on_files = |sql: &str| {
        let batches = analytics.block_on(async { ctx.sql(sql).await.unwrap().collect().await.unwrap() });
        values::rows(&batches).unwrap()
    };
    let text = |rows: Vec<Value>| rows.iter().map(|r| to_json_string(r).unwrap()).collect::<Vec<_>>();
    for query in [
        "SELECT _rid, _ts, _etag, id, k, n, x, name, ok, tags, at FROM {t} ORDER BY _rid",
        "SELECT k, COUNT(*) AS c, SUM(n) AS s, AVG(x) AS a FROM {t} GROUP BY k ORDER BY k",
        "SELECT at.city AS city, COUNT(DISTINCT name) AS d FROM {t} WHERE ok GROUP BY at.city ORDER BY city",
        "SELECT COUNT(*) AS c FROM {t} WHERE array_has(tags, 'a1') AND n IS NOT NULL",
    ] {
        let live = analytics.sql(&query.replace("{t}", "c")).unwrap();
        let files = on_files(&query.replace("{t}", "files"));
        assert_eq!(text(files), text(live), "{query}");
    }
    // The range id comes back from the path, each row from its partition's file.
    let ranges = on_files("SELECT pkrange, COUNT(*) AS c FROM files GROUP BY pkrange ORDER BY pkrange");
    let expected: Vec<Value> = client
        .container()
        .partitions()
        .iter()
        .map(|p| parse_json(&format!(r#"{{"pkrange":"{}","c":{}}}"#, p.id, p.items)).unwrap())
        .collect();
    assert_eq!(ranges, expected);
}
