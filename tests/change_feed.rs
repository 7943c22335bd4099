//! The change feed in latest-version mode: every item created or replaced comes once, in its
//! latest version, in its partition's write order; it starts at the beginning, now or a point in
//! time, reads the whole container, an EPK range or one logical partition, and a continuation
//! resumes with nothing missed or repeated, also when partitions split between pages.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use cosmoql::storage::{
    ChangeFeedStart, Container, ContainerSettings, FeedRange, ManualClock, PartitionKey, PartitionKeyDefinition,
    WriteOptions,
};
use cosmoql::value::{parse_json, Value};
use cosmoql::ContainerClient;
use proptest::prelude::*;

fn client(partitions: usize) -> (ContainerClient, Arc<ManualClock>) {
    let settings = ContainerSettings {
        initial_partitions: partitions,
        change_feed_retention: Some(1_000_000),
        ..ContainerSettings::default()
    };
    let container = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings);
    let clock = Arc::new(ManualClock::default());
    container.set_clock(clock.clone());
    (ContainerClient::from_container(Arc::new(container)), clock)
}

fn item(id: usize, pk: &str, v: usize) -> Value {
    parse_json(&format!(r#"{{"id":"{id}","pk":"{pk}","v":{v}}}"#)).unwrap()
}

/// Reads pages of `page` until one comes back empty; the items as (id, v, _lsn), and the last
/// continuation.
fn drain(
    c: &ContainerClient,
    range: &FeedRange,
    start: ChangeFeedStart,
    mut token: Option<String>,
    page: usize,
) -> (Vec<(String, i64, u64)>, String) {
    let mut out = Vec::new();
    loop {
        let p = c.read_change_feed::<Value>(range, start, token.as_deref(), page).unwrap();
        token = Some(p.continuation);
        if p.items.is_empty() {
            return (out, token.unwrap_or_default());
        }
        for v in p.items {
            out.push((
                v.get("id").as_str().unwrap().to_string(),
                v.get("v").as_f64().unwrap() as i64,
                v.get("_lsn").as_f64().unwrap() as u64,
            ));
        }
    }
}

#[test]
fn each_item_comes_once_in_its_latest_version() {
    let (c, clock) = client(3);
    for i in 0..20 {
        c.create_item::<Value>(&item(i, &format!("k{}", i % 5), 0)).unwrap();
    }
    c.upsert_item::<Value>(&item(3, "k3", 1)).unwrap();
    c.upsert_item::<Value>(&item(3, "k3", 2)).unwrap();
    c.delete_item(PartitionKey::from("k4"), "4").unwrap();
    let (all, token) = drain(&c, &FeedRange::All, ChangeFeedStart::Beginning, None, 7);
    assert_eq!(all.len(), 19, "{all:?}");
    assert_eq!(all.iter().filter(|(id, _, _)| id == "3").collect::<Vec<_>>().len(), 1);
    assert!(all.iter().any(|(id, v, _)| id == "3" && *v == 2));
    assert!(!all.iter().any(|(id, _, _)| id == "4"), "a delete is not a change in latest-version mode");
    // Within each partition, in write order.
    let container = c.container();
    let mut last: BTreeMap<u32, u64> = BTreeMap::new();
    for (id, _, lsn) in &all {
        let p =
            container.partition_of_key(&PartitionKey::from(format!("k{}", id.parse::<usize>().unwrap() % 5))).unwrap();
        assert!(last.insert(p, *lsn).is_none_or(|before| before < *lsn));
    }
    // The continuation then gives only what is written later.
    clock.advance(Duration::from_secs(60));
    c.upsert_item::<Value>(&item(7, "k2", 9)).unwrap();
    c.create_item::<Value>(&item(99, "k0", 0)).unwrap();
    let (later, _) = drain(&c, &FeedRange::All, ChangeFeedStart::Beginning, Some(token), 100);
    assert_eq!(later.iter().map(|(id, v, _)| (id.as_str(), *v)).collect::<Vec<_>>().len(), 2);
    // From now: nothing until the next write; from a point in time: what was written since.
    let (now, token) = drain(&c, &FeedRange::All, ChangeFeedStart::Now, None, 10);
    assert!(now.is_empty());
    c.upsert_item::<Value>(&item(1, "k1", 5)).unwrap();
    assert_eq!(drain(&c, &FeedRange::All, ChangeFeedStart::Now, Some(token), 10).0.len(), 1);
    let since = drain(&c, &FeedRange::All, ChangeFeedStart::Time(ManualClock::EPOCH + 60), None, 10).0;
    let mut ids: Vec<&str> = since.iter().map(|(id, _, _)| id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, ["1", "7", "99"]);
    // One logical partition's feed.
    let k2 = drain(&c, &FeedRange::Key(PartitionKey::from("k2")), ChangeFeedStart::Beginning, None, 2).0;
    assert_eq!(k2.len(), 4);
    // A token of one range resumes a part of it (what the SDKs do after a split), never another
    // range or a wider one.
    let k1 = FeedRange::Key(PartitionKey::from("k1"));
    let token = c.read_change_feed::<Value>(&FeedRange::All, ChangeFeedStart::Beginning, None, 1).unwrap().continuation;
    let narrowed = drain(&c, &k1, ChangeFeedStart::Beginning, Some(token), 10).0;
    assert_eq!(narrowed.len(), drain(&c, &k1, ChangeFeedStart::Beginning, None, 10).0.len());
    let token = c.read_change_feed::<Value>(&k1, ChangeFeedStart::Beginning, None, 1).unwrap().continuation;
    for other in [FeedRange::All, FeedRange::Key(PartitionKey::from("k2"))] {
        let e = c.read_change_feed::<Value>(&other, ChangeFeedStart::Beginning, Some(&token), 1).unwrap_err();
        assert_eq!(e.status(), Some(400));
    }
    // Feed ranges: one per physical partition, together the whole feed.
    let mut parts = 0;
    for range in c.container().feed_ranges() {
        parts += drain(&c, &range, ChangeFeedStart::Beginning, None, 3).0.len();
    }
    assert_eq!(parts, 20);
}

#[derive(Debug, Clone)]
enum Step {
    Write(usize, usize),
    Delete(usize),
    Read(usize),
    Split(usize),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        prop_oneof![
            4 => (0usize..40, 0usize..1000).prop_map(|(id, v)| Step::Write(id, v)),
            1 => (0usize..40).prop_map(Step::Delete),
            3 => (1usize..8).prop_map(Step::Read),
            1 => (0usize..8).prop_map(Step::Split),
        ],
        1..120,
    )
}

/// Applies a write, delete or split step; whether it wrote a change (a delete of an item that
/// is not there does not). Reads are the caller's.
fn apply(c: &ContainerClient, step: &Step) -> bool {
    match step {
        Step::Write(id, v) => {
            c.upsert_item::<Value>(&item(*id, &format!("k{}", id % 13), *v)).unwrap();
            true
        }
        Step::Delete(id) => c
            .container()
            .delete(&PartitionKey::from(format!("k{}", id % 13)), &id.to_string(), &WriteOptions::default())
            .is_ok(),
        Step::Split(n) => {
            let ids = c.container().partition_ids();
            let _ = c.container().split_partition_evenly(ids[n % ids.len()]);
            false
        }
        Step::Read(_) => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The map a partition's feed is read from is built from its items on the first read and
    /// kept by the writes after it: the same writes (and splits) give the same feed whether it
    /// was read before them (kept up write by write, rolled-back batches included) or only after
    /// them (built from the items then).
    #[test]
    fn a_feed_read_first_after_the_writes_is_the_feed_kept_through_them(steps in steps()) {
        let (kept, _) = client(1);
        let (built, _) = client(1);
        for c in [&kept, &built] {
            c.create_item(&item(999, "k0", 0)).unwrap();
        }
        prop_assert_eq!(drain(&kept, &FeedRange::All, ChangeFeedStart::Beginning, None, 100).0.len(), 1);
        for c in [&kept, &built] {
            for step in &steps {
                match step {
                    // A batch that fails on its last operation: its upsert and delete are taken back.
                    Step::Read(n) => {
                        let batch = cosmoql::TransactionalBatch::new()
                            .upsert_item(&item(*n, "k0", 1000 + n))
                            .unwrap()
                            .delete_item("999")
                            .create_item(&item(500, "k0", 0))
                            .unwrap()
                            .create_item(&item(500, "k0", 0))
                            .unwrap();
                        prop_assert!(c.execute_transactional_batch(PartitionKey::from("k0"), batch).is_err());
                    }
                    step => {
                        apply(c, step);
                    }
                }
            }
        }
        let feed = |c: &ContainerClient| {
            let mut all = drain(c, &FeedRange::All, ChangeFeedStart::Beginning, None, 7).0;
            all.sort();
            all
        };
        prop_assert_eq!(feed(&kept), feed(&built));
    }

    /// Reading pages while writing, deleting and splitting: no change is delivered twice, and
    /// after a final drain every live item has been delivered in its latest version.
    #[test]
    fn continuations_survive_splits_without_gap_or_duplicate(steps in steps()) {
        let (c, _) = client(1);
        let mut token: Option<String> = None;
        let mut delivered: HashSet<(String, u64)> = HashSet::new();
        let mut latest: BTreeMap<String, (i64, u64)> = BTreeMap::new();
        let mut writes = 0usize;
        let read = |c: &ContainerClient, token: &mut Option<String>, page: usize, delivered: &mut HashSet<(String, u64)>, latest: &mut BTreeMap<String, (i64, u64)>| {
            let p = c.read_change_feed::<Value>(&FeedRange::All, ChangeFeedStart::Beginning, token.as_deref(), page).unwrap();
            *token = Some(p.continuation);
            for v in &p.items {
                let id = v.get("id").as_str().unwrap().to_string();
                let lsn = v.get("_lsn").as_f64().unwrap() as u64;
                assert!(delivered.insert((id.clone(), lsn)), "delivered twice: {id} at {lsn}");
                latest.insert(id, (v.get("v").as_f64().unwrap() as i64, lsn));
            }
            p.items.len()
        };
        for step in &steps {
            match step {
                Step::Read(page) => {
                    read(&c, &mut token, *page, &mut delivered, &mut latest);
                }
                step => writes += usize::from(apply(&c, step)),
            }
        }
        while read(&c, &mut token, 5, &mut delivered, &mut latest) > 0 {}
        // Every write is in the all-versions feed once, whatever split since.
        let mut history = HashSet::new();
        let mut token: Option<String> = None;
        loop {
            let page = c.read_change_feed_all_versions(&FeedRange::All, ChangeFeedStart::Beginning, token.as_deref(), 7).unwrap();
            token = Some(page.continuation);
            if page.items.is_empty() {
                break;
            }
            for v in &page.items {
                prop_assert!(history.insert(v.get("metadata").get("lsn").as_f64().unwrap() as u64));
            }
        }
        prop_assert_eq!(history.len(), writes);
        let live: Vec<Value> = c.query_items_blocking("SELECT * FROM c", cosmoql::QueryOptions::default()).unwrap();
        for v in live {
            let id = v.get("id").as_str().unwrap().to_string();
            let expected = v.get("v").as_f64().unwrap() as i64;
            prop_assert_eq!(latest.get(&id).map(|l| l.0), Some(expected), "{} not delivered in its latest version", id);
        }
    }
}

#[test]
fn the_processor_delivers_at_least_once_and_shares_its_leases() {
    use cosmoql::{ChangeFeedProcessor, ContainerProperties, CosmosClient};
    let clock = Arc::new(ManualClock::default());
    let account = CosmosClient::new().with_clock(clock.clone());
    let db = account.create_database("db").unwrap();
    let settings = ContainerSettings { initial_partitions: 4, ..ContainerSettings::default() };
    let monitored = db.create_container(ContainerProperties::new("m", "/pk").unwrap().settings(settings)).unwrap();
    let leases = db.create_container(ContainerProperties::new("leases", "/id").unwrap()).unwrap();
    for i in 0..40 {
        monitored.create_item::<Value>(&item(i, &format!("k{}", i % 9), 0)).unwrap();
    }
    let a = ChangeFeedProcessor::new(&monitored, &leases, "p", "a").max_items(1000);
    let b = ChangeFeedProcessor::new(&monitored, &leases, "p", "b").max_items(1000);
    // A failing handler checkpoints nothing: everything comes again.
    let mut seen = Vec::new();
    assert_eq!(a.run_once(|_| Err("not now".into())).unwrap(), 0);
    assert_eq!(a.estimate_lag().unwrap().iter().map(|l| l.pending).sum::<u64>(), 40);
    let handled = a
        .run_once(|changes| {
            seen.extend(changes.iter().map(|c| c.get("id").as_str().unwrap().to_string()));
            Ok(())
        })
        .unwrap();
    assert_eq!((handled, seen.len()), (40, 40));
    let lag = a.estimate_lag().unwrap();
    assert_eq!(lag.len(), 4);
    assert!(lag.iter().all(|l| l.pending == 0 && l.owner.as_deref() == Some("a")), "{lag:?}");
    // B finds every lease held; once A stops renewing, B takes them over from A's checkpoints.
    monitored.upsert_item::<Value>(&item(3, "k3", 1)).unwrap();
    assert_eq!(b.run_once(|_| Ok(())).unwrap(), 0);
    clock.advance(Duration::from_secs(cosmoql::LEASE_EXPIRY_SECONDS));
    // The monitored container splits meanwhile: the leases' ranges still cover it.
    let ids = monitored.container().partition_ids();
    monitored.container().split_partition_evenly(ids[0]).unwrap();
    monitored.create_item::<Value>(&item(77, "k5", 0)).unwrap();
    let mut later = Vec::new();
    let handled = b
        .run_once(|changes| {
            later.extend(changes.iter().map(|c| c.get("id").as_str().unwrap().to_string()));
            Ok(())
        })
        .unwrap();
    later.sort();
    assert_eq!((handled, later), (2, vec!["3".to_string(), "77".to_string()]));
    assert!(b.estimate_lag().unwrap().iter().all(|l| l.owner.as_deref() == Some("b")));
}

#[test]
fn all_versions_and_deletes_keeps_every_write_within_the_retention() {
    use cosmoql::{ContainerProperties, CosmosClient, TransactionalBatch};
    let clock = Arc::new(ManualClock::default());
    let account = CosmosClient::new().with_clock(clock.clone());
    let db = account.create_database("db").unwrap();
    let c = db
        .create_container(
            ContainerProperties::new("c", "/pk")
                .unwrap()
                .default_ttl(Some(-1))
                .change_feed_retention(Some(Duration::from_secs(600))),
        )
        .unwrap();
    let start = c.read_change_feed_all_versions(&FeedRange::All, ChangeFeedStart::Now, None, 10).unwrap().continuation;
    c.create_item::<Value>(&item(1, "k", 0)).unwrap();
    c.upsert_item::<Value>(&item(1, "k", 1)).unwrap();
    c.create_item::<Value>(&parse_json(r#"{"id":"2","pk":"k","ttl":5}"#).unwrap()).unwrap();
    c.delete_item(PartitionKey::from("k"), "1").unwrap();
    // A batch that fails leaves nothing in the feed.
    let batch = TransactionalBatch::new().create_item(&item(3, "k", 0)).unwrap().create_item(&item(3, "k", 0)).unwrap();
    assert!(c.execute_transactional_batch(PartitionKey::from("k"), batch).is_err());
    clock.advance(Duration::from_secs(5));
    let page = c.read_change_feed_all_versions(&FeedRange::All, ChangeFeedStart::Now, Some(&start), 100).unwrap();
    let ops: Vec<(String, String, bool)> = page
        .items
        .iter()
        .map(|v| {
            let m = v.get("metadata");
            (
                m.get("operationType").as_str().unwrap().to_string(),
                m.get("id").as_str().unwrap().to_string(),
                m.get("timeToLiveExpired") == &Value::from(true),
            )
        })
        .collect();
    let expect = |op: &str, id: &str, ttl: bool| (op.to_string(), id.to_string(), ttl);
    assert_eq!(
        ops,
        vec![
            expect("create", "1", false),
            expect("replace", "1", false),
            expect("create", "2", false),
            expect("delete", "1", false),
            expect("delete", "2", true),
        ]
    );
    // A replace and a delete name the version before them; a delete has no current image.
    let replace = page.items[1].get("metadata");
    assert_eq!(replace.get("previousImageLSN"), page.items[0].get("metadata").get("lsn"));
    assert_eq!(page.items[1].get("current").get("v"), &Value::from(1.0));
    assert_eq!(page.items[3].get("current"), &Value::Undefined);
    assert_eq!(page.items[3].get("metadata").get("partitionKey"), &Value::from(vec![Value::from("k")]));
    // Past the retention the oldest writes are gone.
    clock.advance(Duration::from_secs(3600));
    c.create_item::<Value>(&item(4, "k", 0)).unwrap();
    let all = c.read_change_feed_all_versions(&FeedRange::All, ChangeFeedStart::Beginning, None, 100).unwrap();
    assert_eq!(all.items.len(), 1);
    // Without a retention the mode is refused.
    let plain = db.create_container(ContainerProperties::new("plain", "/pk").unwrap()).unwrap();
    let e = plain.read_change_feed_all_versions(&FeedRange::All, ChangeFeedStart::Now, None, 1).unwrap_err();
    assert_eq!(e.status(), Some(400));
    assert_eq!(c.container().properties().get("changeFeedPolicy").get("retentionDuration"), &Value::from(10.0));
}

/// The JSON inside a change feed token, and a token made of JSON.
fn token_json(token: &str) -> Value {
    let hex = token.strip_prefix("cf1.").unwrap();
    let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    parse_json(std::str::from_utf8(&bytes).unwrap()).unwrap()
}

fn token_of(json: &Value) -> String {
    let text = cosmoql::value::to_json_string(json).unwrap();
    format!("cf1.{}", text.bytes().map(|b| format!("{b:02x}")).collect::<String>())
}

/// Issue 21, point 12: a forged token of 200,000 pieces (4.8 MB) made every read compare each
/// partition with every piece (13 s a read on 10,000 partitions). A token has at most one piece
/// per partition of its range, in order inside it; anything else is the service's 400.
#[test]
fn forged_tokens_with_too_many_or_disordered_pieces_are_refused() {
    let (c, _) = client(4);
    for i in 0..20 {
        c.create_item(&item(i, &format!("k{i}"), 0)).unwrap();
    }
    let page = c.read_change_feed::<Value>(&FeedRange::All, ChangeFeedStart::Beginning, None, 5).unwrap();
    let json = token_json(&page.continuation);
    let at = json.get("at").as_array().unwrap().to_vec();
    assert_eq!(at.len(), 4, "one piece per partition: {json:?}");
    let read = |pieces: Vec<Value>| {
        let mut forged = json.clone();
        forged.as_object_mut().unwrap().insert("at".into(), Value::from(pieces));
        c.read_change_feed::<Value>(&FeedRange::All, ChangeFeedStart::Beginning, Some(&token_of(&forged)), 5)
    };
    // The real pieces resume.
    assert_eq!(read(at.clone()).unwrap().items.len(), 5);
    // 200,000 pieces in order: refused at once, saying why.
    let piece = |a: String, b: String| Value::array([Value::from(a), Value::from(b), Value::from(0)]);
    let many: Vec<Value> = (0..200_000u32).map(|i| piece(format!("{i:08X}"), format!("{:08X}", i + 1))).collect();
    let e = read(many).unwrap_err();
    assert_eq!(e.status(), Some(400));
    assert!(e.to_string().contains("it has 200000 pieces and its feed range has 4 partitions"), "{e}");
    // Out of order, overlapping, empty or outside the range.
    for pieces in [
        vec![at[1].clone(), at[0].clone()],
        vec![piece("10".into(), "30".into()), piece("20".into(), "40".into())],
        vec![piece("10".into(), "10".into())],
        vec![piece("10".into(), "FFFF".into())],
    ] {
        let e = read(pieces.clone()).unwrap_err();
        assert_eq!(e.status(), Some(400), "{pieces:?}");
        assert!(e.to_string().contains("not in order inside its feed range"), "{e}");
    }
}

/// A token of a range resumes any part of it: after a split, each child's feed read on from the
/// parent's token holds exactly the changes since, once (what the SDKs do with a token from
/// before a split); a token never widens to a range it was not read for.
#[test]
fn a_parent_token_resumes_each_child_after_a_split() {
    let (c, _) = client(1);
    for i in 0..40 {
        c.upsert_item(&item(i, &format!("k{}", i % 9), 0)).unwrap();
    }
    let (all, token) = drain(&c, &FeedRange::All, ChangeFeedStart::Beginning, None, 7);
    assert_eq!(all.len(), 40);
    let id = c.container().partitions()[0].id;
    c.container().split_partition_evenly(id).unwrap();
    let children = c.container().feed_ranges();
    assert_eq!(children.len(), 2);
    for i in [3, 17, 40, 41] {
        c.upsert_item(&item(i, &format!("k{}", i % 9), 1)).unwrap();
    }
    let mut later: Vec<String> = Vec::new();
    let mut child_tokens = Vec::new();
    for child in &children {
        let (got, next) = drain(&c, child, ChangeFeedStart::Beginning, Some(token.clone()), 2);
        later.extend(got.into_iter().map(|(id, v, _)| format!("{id}:{v}")));
        child_tokens.push(next);
    }
    later.sort();
    assert_eq!(later, ["17:1", "3:1", "40:1", "41:1"]);
    // A child's token is not the parent's, nor its sibling's.
    for (range, token) in [(&FeedRange::All, &child_tokens[0]), (&children[1], &child_tokens[0])] {
        let e = c.read_change_feed::<Value>(range, ChangeFeedStart::Beginning, Some(token), 5).unwrap_err();
        assert!(e.to_string().contains("belongs to another feed range"), "{e}");
    }
}

/// A batch rolled back (its last operation fails) leaves the feed as it was: the items it
/// replaced and deleted come back in their versions before it, once each, at their LSNs.
#[test]
fn a_rolled_back_batch_leaves_the_feed_as_it_was() {
    let (c, _) = client(2);
    for i in 0..6 {
        c.create_item(&item(i, "a", i)).unwrap();
    }
    c.create_item(&item(9, "b", 9)).unwrap();
    let before = drain(&c, &FeedRange::All, ChangeFeedStart::Beginning, None, 100).0;
    let batch = cosmoql::TransactionalBatch::new()
        .replace_item("1", &item(1, "a", 100))
        .unwrap()
        .delete_item("2")
        .upsert_item(&item(7, "a", 7))
        .unwrap()
        .create_item(&item(3, "a", 3))
        .unwrap();
    assert!(c.execute_transactional_batch(PartitionKey::from("a"), batch).is_err());
    let after = drain(&c, &FeedRange::All, ChangeFeedStart::Beginning, None, 100).0;
    assert_eq!(after, before);
    let ids: Vec<&str> = after.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(ids.len(), 7, "{ids:?}");
}
