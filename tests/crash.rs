//! The crash harness: a child process writes to a database directory from several threads
//! (creates, upserts, replaces, patches, deletes, batches, indexing policy changes, with splits
//! underneath, and checkpoints started at random moments and slowed down so that most kills land
//! inside one) and is killed with SIGKILL at a random moment; then the database is opened again
//! (replaying a checkpoint cut short, when the kill cut one) and checked:
//! - every acknowledged write is there, and nothing else but possibly the one write each thread
//!   had in flight (each thread owns its keys, so the expected state is computed by a model);
//! - no batch is half-visible (a batch is one step of the model: all of it or none);
//! - the indexes equal a rebuild;
//! - the change feed holds every live item exactly once, the all-versions feed each item's last
//!   write, and a continuation taken before the kill resumes with no gap and no duplicate.
//!
//! `cargo test --test crash` runs 100 kills (`COSMOQL_CRASH_KILLS=1000` for the long form,
//! `COSMOQL_CRASH_SYNC=normal` for the relaxed sync mode).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use cosmoql::storage::{
    BatchOperation, ChangeFeedStart, ContainerSettings, DurableOptions, FeedRange, IndexingPolicy, PartitionKey,
    PartitionKeyDefinition, PatchOperation, Store, WriteOptions,
};
use cosmoql::Value;
use cosmoql_value::parse_json;

const THREADS: u64 = 4;
/// Writes per thread and round, at most.
const OPS_PER_ROUND: usize = 400;

/// SplitMix64: the same sequence in the child and in the parent's model.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Debug, Clone)]
enum Op {
    Create(String, String, i64),
    Upsert(String, String, i64),
    Replace(String, String, i64),
    Patch(String, String, i64),
    Delete(String, String),
    /// Upserts of two items and the create of a third, all or nothing.
    Batch(String, [String; 3], i64),
    /// An indexing policy change (thread 0 only): with or without the `/pad` path.
    Policy(bool),
}

/// The `n`th operation of thread `t` in round `seed`.
fn ops(seed: u64, t: u64) -> impl Iterator<Item = Op> {
    let mut rng = Rng(seed.wrapping_mul(1_000_003).wrapping_add(t));
    (0u64..).map(move |n| {
        let pk = format!("t{t}-{}", rng.below(6));
        let id = format!("i{}", rng.below(12));
        let v = rng.below(1_000_000) as i64;
        if t == 0 && n % 40 == 39 {
            return Op::Policy(n % 80 == 39);
        }
        match rng.below(12) {
            0..=2 => Op::Create(pk, id, v),
            3..=4 => Op::Upsert(pk, id, v),
            5..=6 => Op::Replace(pk, id, v),
            7..=8 => Op::Patch(pk, id, v),
            9..=10 => Op::Delete(pk, id),
            _ => {
                let ids = [format!("i{}", rng.below(12)), format!("i{}", rng.below(12)), format!("i{}", rng.below(12))];
                Op::Batch(pk, ids, v)
            }
        }
    })
}

/// What the items of one thread are: (pk, id) -> (v, patched value).
type Model = BTreeMap<(String, String), (i64, Option<i64>)>;

fn apply(model: &mut Model, op: &Op) {
    match op {
        Op::Create(pk, id, v) => {
            model.entry((pk.clone(), id.clone())).or_insert((*v, None));
        }
        Op::Upsert(pk, id, v) => {
            model.insert((pk.clone(), id.clone()), (*v, None));
        }
        Op::Replace(pk, id, v) => {
            if let Some(e) = model.get_mut(&(pk.clone(), id.clone())) {
                *e = (*v, None);
            }
        }
        Op::Patch(pk, id, v) => {
            if let Some(e) = model.get_mut(&(pk.clone(), id.clone())) {
                e.1 = Some(*v);
            }
        }
        Op::Delete(pk, id) => {
            model.remove(&(pk.clone(), id.clone()));
        }
        Op::Batch(pk, [a, b, c], v) => {
            let mut after = model.clone();
            after.insert((pk.clone(), a.clone()), (*v, None));
            after.insert((pk.clone(), b.clone()), (*v + 1, None));
            if after.contains_key(&(pk.clone(), c.clone())) {
                return; // the create fails: nothing of the batch happens
            }
            after.insert((pk.clone(), c.clone()), (*v + 2, None));
            *model = after;
        }
        Op::Policy(_) => {}
    }
}

fn item(pk: &str, id: &str, v: i64) -> Value {
    // Some bulk, so that checkpoints come often.
    parse_json(&format!(r#"{{"id":"{id}","pk":"{pk}","v":{v},"pad":"{}"}}"#, "x".repeat(200))).unwrap()
}

fn policy(with_pad: bool) -> IndexingPolicy {
    let json = if with_pad {
        r#"{"includedPaths":[{"path":"/*"}]}"#
    } else {
        r#"{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/pad/?"}]}"#
    };
    IndexingPolicy::from_json(&parse_json(json).unwrap()).unwrap()
}

/// Small checkpoints, slow in the child (`slow`), so that kills land in them too.
/// `COSMOQL_CRASH_SYNC=normal` runs the harness in the relaxed mode (a killed process loses
/// nothing there either: only a power loss may).
fn options(slow: bool) -> DurableOptions {
    let sync = match std::env::var("COSMOQL_CRASH_SYNC").as_deref() {
        Ok("normal") => cosmoql::storage::SyncMode::Normal,
        _ => cosmoql::storage::SyncMode::Full,
    };
    // Checkpoints copy slowly (0.3 ms a stretch), so that kills land inside them.
    let faults = cosmoql::storage::Faults::none();
    if slow {
        faults.checkpoint_step_micros.store(300, std::sync::atomic::Ordering::Relaxed);
    }
    DurableOptions { checkpoint_bytes: 256 << 10, sync, faults, ..DurableOptions::default() }
}

fn run(store: &Store, op: &Op) {
    let c = store.database("crash").unwrap().container("items").unwrap();
    let none = WriteOptions::default();
    let key = |pk: &str| PartitionKey::from_values(&[Value::from(pk)]).unwrap();
    // Failures (409 on a create of an existing item, 404 on a missing one) are outcomes too;
    // anything else is a bug.
    let check = |r: Result<(), cosmoql::StorageError>| {
        if let Err(e) = r {
            assert!(matches!(e.status_code(), 404 | 409), "{op:?}: {e}");
        }
    };
    match op {
        Op::Create(pk, id, v) => check(c.create(&item(pk, id, *v)).map(drop)),
        Op::Upsert(pk, id, v) => check(c.upsert(&item(pk, id, *v), &none).map(drop)),
        Op::Replace(pk, id, v) => check(c.replace(&key(pk), id, &item(pk, id, *v), &none).map(drop)),
        Op::Patch(pk, id, v) => check(
            c.patch(&key(pk), id, &[PatchOperation::Set { path: "/p".into(), value: Value::from(*v as f64) }], &none)
                .map(drop),
        ),
        Op::Delete(pk, id) => check(c.delete(&key(pk), id, &none).map(drop)),
        Op::Batch(pk, [a, b, cc], v) => {
            let batch = [
                BatchOperation::Upsert { item: item(pk, a, *v), if_match: None },
                BatchOperation::Upsert { item: item(pk, b, *v + 1), if_match: None },
                BatchOperation::Create { item: item(pk, cc, *v + 2) },
            ];
            check(c.execute_batch(&key(pk), &batch).map(drop).map_err(|e| e.error))
        }
        Op::Policy(with_pad) => {
            c.replace_indexing_policy(policy(*with_pad));
            c.persist_properties().unwrap();
            c.transform_indexes(usize::MAX);
        }
    }
}

/// The child: writes until it is killed, printing `ack <thread> <n>` once op `n` returned.
#[test]
#[ignore = "run by crash_harness in a child process"]
fn crash_child() {
    let dir = PathBuf::from(std::env::var("COSMOQL_CRASH_DIR").expect("COSMOQL_CRASH_DIR"));
    let seed: u64 = std::env::var("COSMOQL_CRASH_SEED").unwrap().parse().unwrap();
    let store = Store::open(&dir, options(true)).unwrap();
    println!("ready");
    std::io::stdout().flush().unwrap();
    std::thread::scope(|s| {
        s.spawn(|| std::thread::sleep(Duration::from_secs(600)));
        // Checkpoints at random moments too (besides those the log's growth starts), so that
        // kills land before, inside and after them.
        s.spawn(|| {
            let mut rng = Rng(seed ^ 0xC0FFEE);
            loop {
                std::thread::sleep(Duration::from_micros(rng.below(15_000)));
                store.checkpoint().unwrap();
            }
        });
        for t in 0..THREADS {
            let store = &store;
            s.spawn(move || {
                // A round's writes are bounded (the all-versions feed keeps every one of them);
                // then the child waits to be killed.
                for (n, op) in ops(seed, t).enumerate().take(OPS_PER_ROUND) {
                    run(store, &op);
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "ack {t} {n}").unwrap();
                    out.flush().unwrap();
                }
            });
        }
    });
}

fn actual(store: &Store) -> BTreeMap<u64, Model> {
    let c = store.database("crash").unwrap().container("items").unwrap();
    let mut out: BTreeMap<u64, Model> = (0..THREADS).map(|t| (t, Model::new())).collect();
    for (_, stored) in c.scan() {
        let v = c.materialize(&stored);
        let pk = v.get("pk").as_str().unwrap().to_string();
        let id = v.get("id").as_str().unwrap().to_string();
        let t: u64 = pk[1..pk.find('-').unwrap()].parse().unwrap();
        let p = v.get("p").as_f64().map(|p| p as i64);
        out.get_mut(&t).unwrap().insert((pk, id), (v.get("v").as_f64().unwrap() as i64, p));
    }
    out
}

/// Opens the database after a kill and checks it against the models; moves each model to the
/// state found (with or without the thread's write in flight). Returns how many log files were
/// replayed (more than one: the kill cut a checkpoint short).
/// `pk/id` of a stored item.
fn key_of(s: &cosmoql::storage::StoredItem) -> String {
    let field = |name: &str| s.doc.root().get(name).and_then(|v| v.as_str()).unwrap_or_default().to_string();
    format!("{}/{}", field("pk"), field("id"))
}

/// A change feed continuation from the previous round and the (item, LSN) versions read up to
/// it.
type FeedMark = Option<(String, BTreeMap<String, u64>)>;

fn verify(
    dir: &Path,
    seed: u64,
    acked: &BTreeMap<u64, usize>,
    models: &mut BTreeMap<u64, Model>,
    mark: &mut FeedMark,
    round: usize,
) -> u32 {
    let store = Store::open(dir, options(false)).unwrap_or_else(|e| panic!("round {round}: reopening failed: {e}"));
    let logs = store.durable().unwrap().recovery().logs;
    let found = actual(&store);
    for t in 0..THREADS {
        let done = acked.get(&t).copied().unwrap_or(0);
        let mut model = models[&t].clone();
        let mut sequence = ops(seed, t);
        for op in sequence.by_ref().take(done) {
            apply(&mut model, &op);
        }
        let with_in_flight = {
            let mut m = model.clone();
            apply(&mut m, &sequence.next().unwrap());
            m
        };
        let got = &found[&t];
        if *got == model {
            models.insert(t, model);
        } else if *got == with_in_flight {
            models.insert(t, with_in_flight);
        } else {
            let missing: Vec<_> = model.iter().filter(|(k, v)| got.get(*k) != Some(v)).take(5).collect();
            let extra: Vec<_> = got.iter().filter(|(k, v)| model.get(*k) != Some(v)).take(5).collect();
            panic!(
                "round {round} (seed {seed}), thread {t}: {done} writes acknowledged, the database differs: expected \
                 but not found {missing:?}; found but not expected {extra:?}"
            );
        }
    }
    let c = store.database("crash").unwrap().container("items").unwrap();
    c.check_indexes().unwrap_or_else(|e| panic!("round {round}: indexes differ from a rebuild: {e}"));
    let live: BTreeMap<String, u64> = c.scan().map(|(_, s)| (key_of(&s), s.meta.lsn)).collect();
    let feed = c.read_changes(&FeedRange::All, ChangeFeedStart::Beginning, None, usize::MAX).unwrap();
    let mut seen = BTreeMap::new();
    for (s, _) in &feed.items {
        let key = key_of(s);
        assert!(seen.insert(key.clone(), s.meta.lsn).is_none(), "round {round}: {key} twice in the change feed");
    }
    assert_eq!(seen, live, "round {round}: the change feed is not the live items, each once");
    // The previous round's continuation, taken before the kill, resumes after the restart with
    // every item written since (its latest version) and nothing it had already given.
    if let Some((token, delivered)) = mark.take() {
        let resumed = c.read_changes(&FeedRange::All, ChangeFeedStart::Beginning, Some(&token), usize::MAX).unwrap();
        let mut got = BTreeMap::new();
        for (s, _) in &resumed.items {
            let key = key_of(s);
            assert!(got.insert(key.clone(), s.meta.lsn).is_none(), "round {round}: {key} twice after resuming");
        }
        let expected: BTreeMap<String, u64> =
            live.iter().filter(|(k, lsn)| delivered.get(*k) != Some(*lsn)).map(|(k, l)| (k.clone(), *l)).collect();
        assert_eq!(got, expected, "round {round}: resuming the change feed after a crash (a gap or a duplicate)");
    }
    *mark = Some((feed.continuation.clone(), seen));
    let history = c.read_all_versions(&FeedRange::All, ChangeFeedStart::Beginning, None, usize::MAX).unwrap();
    let lsns: std::collections::BTreeSet<u64> = history.changes.iter().map(|(lsn, _)| *lsn).collect();
    assert_eq!(lsns.len(), history.changes.len(), "round {round}: an LSN twice in the all-versions feed");
    for (key, lsn) in &live {
        assert!(
            lsns.contains(lsn),
            "round {round}: the last write of {key} (LSN {lsn}) is not in the all-versions feed"
        );
    }
    logs
}

#[test]
fn crash_harness() {
    let kills: usize = std::env::var("COSMOQL_CRASH_KILLS").ok().and_then(|k| k.parse().ok()).unwrap_or(100);
    let dir = std::env::temp_dir().join(format!("cosmoql-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    {
        let store = Store::open(&dir, options(false)).unwrap();
        let db = store.create_database("crash").unwrap();
        let settings = ContainerSettings {
            split_max_items: 40,
            change_feed_retention: Some(24 * 3600),
            ..ContainerSettings::default()
        };
        db.create_container("items", PartitionKeyDefinition::hash("/pk").unwrap(), settings).unwrap();
    }
    let mut models: BTreeMap<u64, Model> = (0..THREADS).map(|t| (t, Model::new())).collect();
    let mut mark: FeedMark = None;
    let mut rng = Rng(std::process::id() as u64);
    let exe = std::env::current_exe().unwrap();
    let mut acked_total = 0;
    let mut chains = 0;
    for round in 0..kills {
        let seed = rng.next();
        let mut child = Command::new(&exe)
            .args(["--exact", "crash_child", "--ignored", "--nocapture", "--test-threads", "1"])
            .env("COSMOQL_CRASH_DIR", &dir)
            .env("COSMOQL_CRASH_SEED", seed.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut acked: BTreeMap<u64, usize> = BTreeMap::new();
            for line in stdout.lines().map_while(Result::ok) {
                // The test harness may have printed `test crash_child ... ` on the same line.
                if line.ends_with("ready") {
                    let _ = tx.send(());
                } else if let Some(rest) = line.strip_prefix("ack ") {
                    let mut parts = rest.split(' ').map(|p| p.parse::<usize>().unwrap());
                    let (t, n) = (parts.next().unwrap() as u64, parts.next().unwrap());
                    assert_eq!(acked.get(&t).copied().unwrap_or(0), n, "acks of a thread come in order");
                    acked.insert(t, n + 1);
                }
            }
            acked
        });
        // Killed at a random moment after it opened the database (some rounds right away).
        if rx.recv_timeout(Duration::from_secs(60)).is_err() {
            let _ = child.kill();
            let mut err = String::new();
            let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err);
            panic!("round {round}: the child did not open the database: {err}");
        }
        std::thread::sleep(Duration::from_micros(rng.below(40_000)));
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        let acked = reader.join().unwrap();
        let mut err = String::new();
        let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err);
        if status.success() || err.contains("panicked") {
            panic!("round {round}: the child ended by itself: {err}");
        }
        acked_total += acked.values().sum::<usize>();
        if verify(&dir, seed, &acked, &mut models, &mut mark, round) > 1 {
            chains += 1;
        }
    }
    assert!(acked_total > kills, "the children wrote something ({acked_total} acknowledged writes)");
    // Written past the test harness's capture, so `cargo test` shows it (CI reads it there).
    let _ = writeln!(
        std::io::stderr().lock(),
        "crash harness: {kills} kills, {acked_total} acknowledged writes, all there ({chains} reopenings replayed a \
         checkpoint the kill cut short)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
