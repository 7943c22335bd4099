//! The analytical store's differential suite through Ballista (issue 25): a scheduler and two
//! executors on loopback ports, the uniform fixture exported as Parquet at 1, 3 and 16 physical
//! partitions (writes, replaces, deletes and splits in between, as `differential.rs` runs them),
//! each standard-SQL statement run by the executors and equal to its Cosmos SQL twin on the row
//! engine.

#[path = "../../analytics/tests/fixture/mod.rs"]
mod fixture;
#[path = "../../analytics/tests/pairs/mod.rs"]
mod pairs;

use std::path::PathBuf;

use cosmoql::value::Value;
use cosmoql_analytics::{parquet, Analytics, SchemaMode};
use fixture::{filled, through_splits_and_writes};
use pairs::{assert_agree, PAIRS};

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap()
}

#[test]
fn the_differential_suite_runs_on_a_loopback_scheduler_and_executors() {
    let rt = runtime();
    let url = rt.block_on(cosmoql_ballista::start_loopback(2, 2)).unwrap();
    assert!(url.starts_with("df://localhost:"), "{url}");

    let client = filled(1, 1500);
    let analytics = Analytics::new(SchemaMode::WellDefined).unwrap().with_container("db", &client).unwrap();
    let mut stages = 0;
    through_splits_and_writes(
        &client,
        || {},
        |stage| {
            stages += 1;
            let out = scratch(&format!("ballista-{}", stage.replace(' ', "-")));
            let files = parquet::export(&analytics, &out).unwrap();
            assert_eq!(files.len(), client.container().partition_count(), "{stage}: a file a physical partition");

            let ctx = rt.block_on(cosmoql_ballista::connect(&url)).unwrap();
            let tables = rt.block_on(cosmoql_ballista::register_layout(&ctx, &out)).unwrap();
            assert_eq!(tables.len(), 1);
            assert_eq!((tables[0].database.as_str(), tables[0].container.as_str()), ("db", "c"));
            assert_eq!(tables[0].partitions, files.len());

            // The statements run on the cluster: the client's plan is Ballista's.
            let plan = rt
                .block_on(async { ctx.sql("SELECT COUNT(*) FROM db.c").await?.create_physical_plan().await })
                .unwrap();
            assert_eq!(plan.name(), "DistributedQueryExec", "{stage}");

            // The statements at once: the cluster runs them as concurrent jobs.
            let results = rt.block_on(async {
                let mut jobs = tokio::task::JoinSet::new();
                for (at, (sql, _, _)) in PAIRS.iter().enumerate() {
                    let ctx = ctx.clone();
                    jobs.spawn(async move { (at, cosmoql_ballista::sql(&ctx, sql).await.map_err(|e| e.to_string())) });
                }
                let mut results: Vec<Option<Result<Vec<Value>, String>>> = (0..PAIRS.len()).map(|_| None).collect();
                while let Some(done) = jobs.join_next().await {
                    let (at, result) = done.unwrap();
                    results[at] = Some(result);
                }
                results
            });
            assert_agree("ballista", stage, &client, results.into_iter().map(Option::unwrap).collect());
        },
    );
    assert_eq!(stages, 3);
}

#[test]
fn the_qualified_name_the_range_column_and_a_join_run_on_the_cluster() {
    let rt = runtime();
    let url = rt.block_on(cosmoql_ballista::start_loopback(1, 2)).unwrap();
    let client = filled(4, 400);
    let analytics = Analytics::new(SchemaMode::WellDefined).unwrap().with_container("db", &client).unwrap();
    let out = scratch("ballista-names");
    parquet::export(&analytics, &out).unwrap();
    let ctx = rt.block_on(cosmoql_ballista::connect(&url)).unwrap();
    rt.block_on(cosmoql_ballista::register_layout(&ctx, &out)).unwrap();
    let run = |sql: &str| {
        let rows = rt.block_on(cosmoql_ballista::sql(&ctx, sql)).unwrap();
        rows.iter().map(|r| cosmoql::value::to_json_string(r).unwrap()).collect::<Vec<_>>()
    };
    let live = |sql: &str| {
        analytics.sql(sql).unwrap().iter().map(|r| cosmoql::value::to_json_string(r).unwrap()).collect::<Vec<_>>()
    };
    // Every physical partition's rows, by the range column of the layout.
    let ranges = run("SELECT pkrange, COUNT(*) AS n FROM db.c GROUP BY pkrange ORDER BY pkrange");
    let expected: Vec<String> = client
        .container()
        .partitions()
        .iter()
        .map(|p| format!(r#"{{"pkrange":"{}","n":{}}}"#, p.id, p.items))
        .collect();
    assert_eq!(ranges, expected);
    // A self-join and a window function: shuffles between the stages, the live mirror's results.
    let join =
        "SELECT a.site AS site, COUNT(*) AS n FROM db.c a JOIN db.c b ON a.deviceId = b.deviceId AND a.id <> b.id \
                WHERE a.count < 5 AND b.count < 5 GROUP BY a.site ORDER BY site";
    assert_eq!(run(join), live(join));
    let window = "SELECT id, ROW_NUMBER() OVER (PARTITION BY deviceId ORDER BY ts DESC) AS r FROM c \
                  WHERE deviceId IN ('dev-1', 'dev-2') ORDER BY id";
    assert_eq!(run(window), live(window));
}

#[test]
fn a_directory_without_the_layout_and_an_unknown_table_are_errors() {
    let rt = runtime();
    let url = rt.block_on(cosmoql_ballista::start_loopback(1, 1)).unwrap();
    let ctx = rt.block_on(cosmoql_ballista::connect(&url)).unwrap();
    let empty = scratch("ballista-empty");
    std::fs::create_dir_all(empty.join("db").join("not-a-container")).unwrap();
    let e = rt.block_on(cosmoql_ballista::register_layout(&ctx, &empty)).unwrap_err().to_string();
    assert!(e.contains("holds no container files") && e.contains("cosmoql export-parquet"), "{e}");
    let missing = rt.block_on(cosmoql_ballista::register_layout(&ctx, &empty.join("nowhere"))).unwrap_err().to_string();
    assert!(missing.contains("cannot open"), "{missing}");
    let e = rt.block_on(cosmoql_ballista::sql(&ctx, "SELECT * FROM db.nothing")).unwrap_err().to_string();
    assert!(e.contains("nothing") && e.contains("not found"), "{e}");
}

#[test]
fn the_binary_runs_statements_on_a_standalone_cluster() {
    let client = filled(3, 300);
    let analytics = Analytics::new(SchemaMode::WellDefined).unwrap().with_container("db", &client).unwrap();
    let out = scratch("ballista-binary");
    parquet::export(&analytics, &out).unwrap();
    let bin = env!("CARGO_BIN_EXE_cosmoql-ballista");
    let run = |args: &[&str]| std::process::Command::new(bin).args(args).output().unwrap();
    let dir = out.to_str().unwrap();
    let ok = run(&[
        "--standalone",
        "--parquet",
        dir,
        "SELECT COUNT(*) AS n FROM c",
        "SELECT site, COUNT(*) AS n FROM db.c GROUP BY site ORDER BY site LIMIT 2",
    ]);
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    assert_eq!(stdout, "{\"n\":300}\n{\"site\":\"east\",\"n\":60}\n{\"site\":\"lab\",\"n\":60}\n");

    let bad = run(&["--standalone", "--parquet", dir, "SELECT nope FROM c"]);
    assert_eq!(bad.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.starts_with("error: SELECT nope FROM c\n") && stderr.contains("nope"), "{stderr}");

    let usage = run(&["--parquet", dir]);
    assert_eq!(usage.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&usage.stderr), "error: no SQL statement given (see --help)\n");
    let help = run(&["--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("--scheduler URL"));
}
