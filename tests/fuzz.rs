//! Fuzzing on stable Rust: proptest harnesses that mutate a corpus seeded from the repository's
//! query suites and feed the result to every input surface a user reaches. cargo-fuzz needs a
//! nightly toolchain; these run everywhere, in CI briefly and for as long as asked otherwise.
//!
//! | target | checks |
//! | --- | --- |
//! | `parser_and_printer` | any text parses or fails cleanly; what parses prints and parses back to the same tree |
//! | `queries` | any text plans and runs over a small fixture (random MaxDOP, page size, splits) to an answer or a clean error: no panic, no internal error, pages that end |
//! | `imports` | any bytes import as a JSON array or NDJSON to counted items and problems |
//! | `continuation_tokens` | any token is refused cleanly or resumes the query it came from |
//! | `keys_and_properties` | any JSON as a partition key definition, a partition key, container properties or a vector policy |
//! | `patches` | any patch operations apply atomically or not at all |
//! | `database_logs` | a database directory whose log records were tampered with (bytes changed, cut, added, records dropped or repeated, checksums made to match) opens or is refused cleanly, and what opens can be read and written |
//!
//! Cases per target: `COSMOQL_FUZZ_CASES` (default 64, what `.ci/run` runs). A long run:
//! `COSMOQL_FUZZ_CASES=200000 cargo test --release --test fuzz -- --nocapture` (about an hour on
//! 2 cores). A failing input is written to `tests/fuzz.proptest-regressions` and replayed on
//! every later run; keep it, and add a named test for the bug it found.

use std::sync::OnceLock;

use cosmoql::executor::VectorPolicy;
use cosmoql::storage::{
    Container, ContainerSettings, DurableOptions, ImportOptions, PartitionKey, PartitionKeyDefinition, PatchOperation,
    Store, WriteOptions,
};
use cosmoql::value::{parse_json, to_json_string, Value};
use cosmoql::{execute, QueryErrorKind, QueryOptions};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};

fn config() -> Config {
    let cases = std::env::var("COSMOQL_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64);
    Config {
        cases,
        max_shrink_iters: 2000,
        // Failures are kept next to this file (tests/fuzz.proptest-regressions) and replayed first.
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..Config::default()
    }
}

/// Queries of the repository's suites (tests/suites, examples/suite) and a few of every clause.
fn seeds() -> &'static [String] {
    static SEEDS: OnceLock<Vec<String>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut out: Vec<String> = [
            "SELECT * FROM c WHERE c.pk = 'a' AND c.id = '1'",
            "SELECT TOP 3 c.id, c.n FROM c WHERE c.n > 1 ORDER BY c.n DESC",
            "SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags WHERE t IN ('x', 'y')",
            "SELECT c.g, SUM(c.n) AS s, MAKESET(c.pk) AS k FROM c GROUP BY c.g",
            "SELECT DISTINCT VALUE c.g FROM c OFFSET 1 LIMIT 2",
            "SELECT VALUE {a: c.n ?? 0, b: [c.tags[0], -(-c.n)], c: c.n > 1 ? 'big' : 'small'} FROM c",
            "SELECT VALUE x FROM (SELECT VALUE c.n FROM c WHERE IS_NUMBER(c.n)) x WHERE x BETWEEN 1 AND 3",
            "SELECT VALUE ARRAY(SELECT VALUE t FROM t IN c.tags WHERE t LIKE 'x%') FROM c",
            "SELECT VALUE c.id FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags) ORDER BY c['id']",
            "SELECT VALUE [UPPER(c.s), SUBSTRING(c.s, 1, 2), ARRAY_SLICE(c.tags, -1), ROUND(c.n * 1.5)] FROM c",
            "SELECT c.id FROM c ORDER BY RANK RRF(FullTextScore(c.s, 'x'), VectorDistance(c.v, [1, 0]))",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for dir in ["tests/suites", "examples/suite"] {
            let Ok(entries) = std::fs::read_dir(format!("{root}/{dir}")) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.extension().is_none_or(|e| e != "sql") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                for case in text.split("-- @name").skip(1) {
                    let query: Vec<&str> = case
                        .lines()
                        .skip(1)
                        .take_while(|l| !l.starts_with("-- @expect") && !l.starts_with("-- @error"))
                        .filter(|l| !l.starts_with("-- @"))
                        .collect();
                    let query = query.join("\n").trim().to_string();
                    if !query.is_empty() {
                        out.push(query);
                    }
                }
            }
        }
        out
    })
}

/// Pieces a mutation inserts: tokens of the language and awkward bytes.
const PIECES: &[&str] = &[
    "SELECT",
    "VALUE",
    "FROM",
    "WHERE",
    "JOIN",
    "IN",
    "ORDER BY",
    "GROUP BY",
    "TOP",
    "OFFSET",
    "LIMIT",
    "DISTINCT",
    "RANK",
    "AND",
    "OR",
    "NOT",
    "EXISTS(",
    "ARRAY(",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    "@p",
    "-",
    "--",
    "'",
    "\"",
    "\\",
    "udf.",
    "c",
    "c.n",
    "t",
    "x",
    "1e308",
    "-9223372036854775808",
    "18446744073709551615",
    "NaN",
    "Infinity",
    "undefined",
    "null",
    "?",
    ":",
    "??",
    "||",
    "COUNT(1)",
    "MAKELIST(c.n)",
    "\u{1b}",
    "\u{feff}",
    "😀",
    "\0",
    "\n",
];

/// One edit of a text.
#[derive(Debug, Clone)]
enum Edit {
    Insert { at: usize, piece: usize },
    Delete { at: usize, len: usize },
    Splice { at: usize, other: usize, from: usize },
    Byte { at: usize, byte: u8 },
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let edit = prop_oneof![
        (any::<usize>(), 0..PIECES.len()).prop_map(|(at, piece)| Edit::Insert { at, piece }),
        (any::<usize>(), 1usize..12).prop_map(|(at, len)| Edit::Delete { at, len }),
        (any::<usize>(), any::<usize>(), any::<usize>()).prop_map(|(at, other, from)| Edit::Splice { at, other, from }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Edit::Byte { at, byte }),
    ];
    prop::collection::vec(edit, 0..6)
}

fn floor(s: &str, at: usize) -> usize {
    let mut at = at % (s.len() + 1);
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A seed with the edits applied.
fn mutate(seed: usize, edits: &[Edit]) -> String {
    let seeds = seeds();
    let mut text = seeds[seed % seeds.len()].clone();
    for e in edits {
        match e {
            Edit::Insert { at, piece } => {
                let at = floor(&text, *at);
                text.insert_str(at, PIECES[*piece]);
            }
            Edit::Delete { at, len } => {
                let start = floor(&text, *at);
                let end = floor(&text, start + len);
                if end > start {
                    text.replace_range(start..end, "");
                }
            }
            Edit::Splice { at, other, from } => {
                let other = &seeds[other % seeds.len()];
                let from = floor(other, *from);
                let at = floor(&text, *at);
                text.truncate(at);
                text.push_str(&other[from..]);
            }
            Edit::Byte { at, byte } => {
                let mut bytes = std::mem::take(&mut text).into_bytes();
                if !bytes.is_empty() {
                    let at = at % bytes.len();
                    bytes[at] = *byte;
                }
                text = String::from_utf8_lossy(&bytes).into_owned();
            }
        }
    }
    text
}

/// The fixture the queries run over: a few items of mixed shapes, small arrays (so JOINs stay
/// small), over `partitions` physical partitions.
fn pick(values: Vec<&'static str>) -> impl Strategy<Value = String> {
    prop::sample::select(values).prop_map(str::to_string)
}

/// An argument for [`function_arguments`]: extreme values of every type, properties of the
/// fixture's items, and calls nested in one another.
fn argument() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        pick(vec![
            "0",
            "-1",
            "1",
            "2.5",
            "-0.5",
            "1e308",
            "-1e308",
            "5e-324",
            "4294967296",
            "9007199254740993",
            "-9223372036854775808",
            "18446744073709551616",
            "true",
            "null",
            "undefined",
            "c.nope",
        ]),
        pick(vec!["''", "'a'", "'😀x'", "'\\u0000'", "'2026-11-26T10:00:00.0000000Z'", "'P1D'"]),
        pick(vec![
            "'(a?)(a?)(a?)(a?)(a?)(a?)(a?)(a?)aaaaaaaa'",
            "'(a|aa)*b'",
            "'['",
            "'\\\\'",
            "'a{1000}{1000}'",
            "'(?i)X'",
            "'.*.*.*.*.*y'",
            "'(a*)*$'",
            "'x{4294967295}'",
            "'i'",
            "'imsx'",
            "'q'",
        ]),
        pick(vec![
            "[]",
            "[1, 2, 3]",
            "[[1], {\"a\": 1}, 'x', null]",
            "{}",
            "{\"a\": [1, {\"b\": 2}]}",
            "c",
            "c.s",
            "c.n",
            "c.tags",
            "c.v",
            "c.nested",
            "c.id",
        ]),
        (pick(vec!["'a'", "'ab'", "'😀'", "' '"]), prop::sample::select(vec![0u32, 1, 1000, 100_000, 1_000_000]))
            .prop_map(|(s, n)| format!("REPLICATE({s}, {n})")),
        prop::sample::select(vec![0usize, 1, 100, 2000]).prop_map(|n| format!("[{}]", vec!["1"; n].join(","))),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        (0usize..cosmoql::planner::functions::SIGNATURES.len(), prop::collection::vec(inner, 0..4)).prop_map(
            |(f, mut args)| {
                // As many arguments as the function takes (padded with 1s), so the call runs.
                let signature = &cosmoql::planner::functions::SIGNATURES[f];
                args.truncate(signature.max_args.unwrap_or(usize::MAX));
                while args.len() < signature.min_args {
                    args.push("1".to_string());
                }
                format!("{}({})", signature.name, args.join(", "))
            },
        )
    })
}

fn fixture(partitions: usize) -> Container {
    let c = Container::new(
        "c",
        PartitionKeyDefinition::hash("/pk").unwrap(),
        ContainerSettings { initial_partitions: partitions, ..ContainerSettings::default() },
    );
    let docs = [
        r#"{"id":"1","pk":"a","n":1,"g":"x","s":"xyz","tags":["x","y"],"v":[1,0]}"#,
        r#"{"id":"2","pk":"a","n":2.5,"g":"y","s":"","tags":[],"v":[0,1]}"#,
        r#"{"id":"3","pk":"b","n":"3","g":"x","tags":["x"],"nested":{"a":[1,{"b":null}]}}"#,
        r#"{"id":"4","pk":"c","g":null,"s":"x😀y","tags":["z","x"],"v":[]}"#,
        r#"{"id":"5","pk":"b","n":-0,"g":true,"s":"abc","tags":"no"}"#,
    ];
    for d in docs {
        c.create(&parse_json(d).unwrap()).unwrap();
    }
    c
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn parser_and_printer(seed in any::<usize>(), edits in edits()) {
        let text = mutate(seed, &edits);
        if let Ok(query) = cosmoql::parse(&text) {
            let printed = query.to_string();
            let again = cosmoql::parse(&printed);
            prop_assert!(again.is_ok(), "{:?} printed as {:?}, which does not parse: {:?}", text, printed, again.err());
            prop_assert_eq!(again.unwrap(), query, "{:?} printed as {:?}", text, printed);
        }
    }

    #[test]
    fn queries(
        seed in any::<usize>(),
        edits in edits(),
        partitions in 1usize..5,
        page in prop::option::of(1usize..4),
        dop in prop_oneof![Just(1), Just(3), Just(-1)],
        param in prop_oneof![Just(Value::from(1)), Just(Value::from("x")), Just(Value::Null)],
    ) {
        let text = mutate(seed, &edits);
        let c = fixture(partitions);
        let mut options = QueryOptions {
            max_item_count: page,
            max_degree_of_parallelism: dop,
            memory_budget: Some(8 << 20),
            ..QueryOptions::default()
        }
        .parameter("@p", param);
        for pages in 1.. {
            match execute(&c, &text, &options) {
                Ok(out) => {
                    prop_assert!(pages < 1000, "{:?}: a page loop", text);
                    match out.continuation {
                        Some(t) => options.continuation = Some(t),
                        None => break,
                    }
                }
                Err(e) => {
                    prop_assert!(e.kind != QueryErrorKind::Internal, "{:?}: {}", text, e);
                    // Errors render against the text without panicking.
                    let _ = e.render(&text);
                    break;
                }
            }
        }
    }

    #[test]
    fn imports(
        docs in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..8),
        seed in any::<usize>(),
        edits in edits(),
        array in any::<bool>(),
        bom in any::<bool>(),
    ) {
        // Valid-looking documents with mutated text and raw bytes between them.
        let mut text: Vec<u8> = if bom { b"\xEF\xBB\xBF".to_vec() } else { Vec::new() };
        let doc = format!(r#"{{"id":"{}","pk":{}}}"#, mutate(seed, &edits).replace('"', "'"), seed % 3);
        let parts: Vec<Vec<u8>> = docs.into_iter().chain([doc.into_bytes()]).collect();
        if array {
            text.push(b'[');
            text.extend(parts.join(&b","[..]));
            text.push(b']');
        } else {
            text.extend(parts.join(&b"\n"[..]));
        }
        let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), ContainerSettings::default());
        match c.import(text.as_slice(), ImportOptions::default(), |_| {}) {
            Ok(summary) => prop_assert_eq!(summary.imported, c.item_count() as u64),
            Err(e) => prop_assert!(!e.message.is_empty()),
        }
    }

    #[test]
    fn continuation_tokens(
        token in prop_oneof![
            ".*",
            "cq3\\.[0-9a-f]{0,80}(\\.[0-9a-f]{0,34})?",
            (any::<usize>(), 0usize..40, any::<u8>()).prop_map(|(cut, at, byte)| (cut, at, byte)).prop_map(|(cut, at, byte)| {
                // A real token, cut or with one hex digit changed.
                let c = fixture(2);
                let options = QueryOptions { max_item_count: Some(2), ..QueryOptions::default() };
                let t = execute(&c, "SELECT c.id FROM c ORDER BY c.n", &options).unwrap().continuation.unwrap();
                let mut bytes = t.into_bytes();
                let at = 4 + at % (bytes.len() - 4);
                bytes[at] = b"0123456789abcdef"[usize::from(byte) % 16];
                bytes.truncate(4 + cut % (bytes.len() - 3));
                String::from_utf8(bytes).unwrap()
            }),
        ],
    ) {
        let c = fixture(2);
        let options = QueryOptions { max_item_count: Some(2), continuation: Some(token), ..QueryOptions::default() };
        for sql in ["SELECT c.id FROM c ORDER BY c.n", "SELECT c.id FROM c", "SELECT VALUE COUNT(1) FROM c"] {
            if let Err(e) = execute(&c, sql, &options) {
                prop_assert!(e.kind != QueryErrorKind::Internal, "{}", e);
            }
        }
    }

    /// Every system function with arguments of extreme sizes, counts and values (long strings
    /// and arrays, huge and tiny numbers, hostile regular expressions, nested calls): an answer
    /// or a user error, never a panic, an abort or an internal error.
    #[test]
    fn function_arguments(
        function in 0usize..cosmoql::planner::functions::SIGNATURES.len(),
        extra in 0usize..4,
        args in prop::collection::vec(argument(), 6),
    ) {
        let signature = &cosmoql::planner::functions::SIGNATURES[function];
        // As many arguments as it takes, or (one time in four) one too many.
        let count = (signature.min_args + extra).min(signature.max_args.unwrap_or(usize::MAX).saturating_add(usize::from(extra == 3)));
        let call = format!("{}({})", signature.name, args[..count.min(args.len())].join(", "));
        let c = fixture(2);
        let options = QueryOptions { memory_budget: Some(8 << 20), ..QueryOptions::default() };
        for sql in [format!("SELECT VALUE {call} FROM c"), format!("SELECT VALUE LENGTH(ToString({call})) FROM c")] {
            if let Err(e) = execute(&c, &sql, &options) {
                prop_assert!(e.kind != QueryErrorKind::Internal, "{}: {}", sql, e);
                let _ = e.render(&sql);
            }
        }
    }

    #[test]
    fn keys_and_properties(seed in any::<usize>(), edits in edits(), n in any::<u32>()) {
        let pieces = [
            r#"{"paths": ["/a"], "kind": "Hash", "version": 2}"#,
            r#"{"paths": ["/a", "/b", "/c"], "kind": "MultiHash"}"#,
            r#"{"paths": ["/\"a b\""], "kind": "Hash", "version": 1}"#,
            r#"{"id": "c", "vectorEmbeddingPolicy": {"vectorEmbeddings": [{"path": "/v", "dimensions": 3}]}}"#,
            r#"["a", 1, true, null, {}]"#,
        ];
        // A JSON text, mutated: the parts around the mutation stay JSON-shaped more often than not.
        let mut text = pieces[seed % pieces.len()].to_string();
        let query = mutate(seed, &edits);
        let at = floor(&text, n as usize);
        text.insert_str(at, &query[..floor(&query, (n >> 8) as usize % 6)]);
        if let Ok(v) = parse_json(&text) {
            let _ = PartitionKeyDefinition::from_json(&v);
            let _ = VectorPolicy::from_container_properties(&v);
            if let Value::Array(parts) = &v {
                let _ = PartitionKey::from_values(parts);
            }
            let _ = PartitionKey::parse_json(&text);
            let _ = ContainerSettings { initial_partitions: n as usize, ..ContainerSettings::default() }.validate();
        }
    }

    #[test]
    fn patches(ops in prop::collection::vec((0usize..6, 0usize..8, any::<i32>(), any::<bool>()), 1..6)) {
        let paths = ["/n", "/tags/0", "/tags/-", "/nested/a/1/b", "/id", "/pk", "/new/deep", "/tags/99"];
        let values = [Value::from(1e308), Value::Null, Value::from("x"), Value::from(vec![Value::from(1)])];
        let operations: Vec<PatchOperation> = ops
            .iter()
            .filter_map(|(op, path, n, flag)| {
                let value = if *flag { values[n.unsigned_abs() as usize % values.len()].clone() } else { Value::from(*n) };
                let json = Value::object([
                    ("op", Value::from(["add", "set", "replace", "remove", "incr", "move"][*op])),
                    ("path", Value::from(paths[*path])),
                    ("value", value),
                ]);
                PatchOperation::from_json(&json).ok()
            })
            .collect();
        let c = fixture(1);
        let key = PartitionKey::from("b");
        let before = to_json_string(&c.read(&key, "3").unwrap().item);
        if c.patch(&key, "3", &operations, &WriteOptions::default()).is_err() {
            // All or nothing.
            prop_assert_eq!(to_json_string(&c.read(&key, "3").unwrap().item), before);
        }
    }

    #[test]
    fn database_logs(mutations in prop::collection::vec((any::<usize>(), 0usize..6, any::<usize>(), any::<u8>()), 1..4)) {
        let mut frames = log_seed().clone();
        for (frame, kind, at, byte) in mutations {
            let f = frame % frames.len();
            match kind {
                0 => {
                    let len = frames[f].len();
                    if len > 0 {
                        frames[f][at % len] = byte;
                    }
                }
                1 => {
                    let len = frames[f].len();
                    frames[f].truncate(at % (len + 1));
                }
                2 => {
                    let len = frames[f].len();
                    frames[f].insert(at % (len + 1), byte);
                }
                3 => {
                    // A length or count field made huge.
                    let len = frames[f].len();
                    if len >= 4 {
                        let i = at % (len - 3);
                        frames[f][i..i + 4].copy_from_slice(&u32::MAX.to_le_bytes());
                    }
                }
                4 => {
                    frames.remove(f);
                    if frames.is_empty() {
                        return Ok(());
                    }
                }
                _ => {
                    let copy = frames[f].clone();
                    frames.insert(at % (frames.len() + 1), copy);
                }
            }
        }
        let dir = test_dir("fuzz-log");
        write_log(&dir, &frames);
        let opened = std::panic::catch_unwind(|| {
            let Ok(store) = Store::open(&dir, DurableOptions::default()) else { return };
            for db in store.database_ids() {
                let db = store.database(&db).unwrap();
                for id in db.container_ids() {
                    let c = db.container(&id).unwrap();
                    let _ = c.check_indexes();
                    let _ = c.scan().count();
                    let _ = c.create(&parse_json(r#"{"id":"fuzz","k":"fuzz","pk":"fuzz"}"#).unwrap());
                }
            }
        });
        let _ = std::fs::remove_dir_all(&dir);
        prop_assert!(opened.is_ok(), "a tampered log made opening or using the database panic");
    }
}

/// The records of a database's log that holds every kind (databases, containers with policies,
/// unique keys and a change feed retention, writes, a batch, deletes, splits, a checkpoint and
/// writes after it).
fn log_seed() -> &'static Vec<Vec<u8>> {
    static SEED: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEED.get_or_init(|| {
        let dir = test_dir("fuzz-log-seed");
        let _ = std::fs::remove_dir_all(&dir);
        let log = {
            let store = Store::open(&dir, DurableOptions::default()).unwrap();
            let db = store.create_database("d").unwrap();
            let settings = ContainerSettings {
                split_max_items: 8,
                change_feed_retention: Some(3600),
                unique_keys: vec![cosmoql::storage::UniqueKey::new(&["/u"]).unwrap()],
                ..ContainerSettings::default()
            };
            let c = db.create_container("c", PartitionKeyDefinition::hash("/k").unwrap(), settings).unwrap();
            let plain = db.create_container("p", PartitionKeyDefinition::none(), ContainerSettings::default()).unwrap();
            let none = WriteOptions::default();
            for i in 0..30 {
                c.create(&parse_json(&format!(r#"{{"id":"{i}","k":"k{}","u":"u{i}","n":{i}}}"#, i % 5)).unwrap())
                    .unwrap();
            }
            store.checkpoint().unwrap();
            plain.create(&parse_json(r#"{"id":"x","a":[1,{"b":null}]}"#).unwrap()).unwrap();
            let key = PartitionKey::from("k1");
            c.upsert(&parse_json(r#"{"id":"1","k":"k1","u":"v1"}"#).unwrap(), &none).unwrap();
            c.delete(&key, "6", &none).unwrap();
            c.execute_batch(
                &key,
                &[
                    cosmoql::storage::BatchOperation::Create { item: parse_json(r#"{"id":"b","k":"k1"}"#).unwrap() },
                    cosmoql::storage::BatchOperation::Delete { id: "11".into(), if_match: None },
                ],
            )
            .unwrap();
            c.set_default_ttl(Some(-1)).unwrap();
            c.persist_properties().unwrap();
            store.create_database("gone").unwrap();
            store.delete_database("gone").unwrap();
            store.durable().unwrap().log_file().0
        };
        let mut frames = Vec::new();
        cosmoql::storage::wal::read_frames(&log, |_, payload| {
            frames.push(payload.to_vec());
            Ok::<(), ()>(())
        })
        .unwrap()
        .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        frames
    })
}

/// A directory of this test process under the target directory.
fn test_dir(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()))
}

/// A database directory whose log holds `frames` (each with a matching checksum).
fn write_log(dir: &std::path::Path, frames: &[Vec<u8>]) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let mut bytes = cosmoql::storage::wal::MAGIC.to_vec();
    for f in frames {
        bytes.extend_from_slice(&cosmoql::storage::wal::encode_frame(f));
    }
    std::fs::write(dir.join("wal-000001.log"), bytes).unwrap();
    std::fs::write(dir.join("CURRENT"), "wal-000001.log\n").unwrap();
}

/// Found by `database_logs`: a container number of u32::MAX in the log overflowed the next
/// number at opening.
#[test]
fn a_log_with_the_largest_container_number_is_refused() {
    let mut frames = log_seed().clone();
    // CREATE_CONTAINER: the tag, the database id ("d", 4 + 1 bytes), the container's number.
    let create = frames.iter_mut().find(|f| f[0] == 4).unwrap();
    create[6..10].copy_from_slice(&u32::MAX.to_le_bytes());
    let dir = test_dir("fuzz-handle");
    write_log(&dir, &frames);
    let err = Store::open(&dir, DurableOptions::default()).unwrap_err();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(err.message.contains("out of range"), "{}", err.message);
}

/// A log written before databases and containers kept their creation time and containers their
/// analytical time to live (a database record ends before the time; a container record before
/// its kept properties; a properties record before the analytical time to live) opens as it did
/// then: the same items, and creation times taken at opening.
#[test]
fn a_log_from_before_creation_times_opens() {
    let mut frames = log_seed().clone();
    let mut trimmed = 0;
    for f in frames.iter_mut() {
        match f[0] {
            // CREATE_DATABASE: its creation time is the last 8 bytes.
            1 => f.truncate(f.len() - 8),
            // CREATE_CONTAINER: an empty kept-properties string (its length, 0), the time, then
            // no analytical time to live (0).
            4 => {
                assert_eq!(&f[f.len() - 13..f.len() - 9], &[0, 0, 0, 0]);
                assert_eq!(f[f.len() - 1], 0);
                f.truncate(f.len() - 13);
            }
            // CONTAINER_PROPERTIES: no analytical time to live (0), last.
            6 => {
                assert_eq!(f[f.len() - 1], 0);
                f.truncate(f.len() - 1);
            }
            _ => continue,
        }
        trimmed += 1;
    }
    assert!(trimmed >= 4, "{trimmed} records trimmed");
    let items = |dir: &std::path::Path| {
        let store = Store::open(dir, DurableOptions::default()).unwrap();
        let db = store.database("d").unwrap();
        let c = db.container("c").unwrap();
        assert!(c.properties().get("_ts").as_f64().unwrap() > 1.7e9);
        assert!(db.properties().get("_ts").as_f64().unwrap() > 1.7e9);
        let mut ids: Vec<String> = c.scan().map(|(_, item)| to_json_string(&c.materialize(&item)).unwrap()).collect();
        ids.sort();
        ids
    };
    let dir = test_dir("fuzz-before-creation-times");
    write_log(&dir, &frames);
    let old = items(&dir);
    write_log(&dir, log_seed());
    let new = items(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(old, new);
    assert!(old.len() > 20);
}
