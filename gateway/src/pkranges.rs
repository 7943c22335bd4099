//! Partition key ranges, `GET .../pkranges`: cosmoql's physical partitions as the service lists
//! its ranges, with the incremental feed's contract (`../shared/research/gateway-python.md` §4):
//! the ranges tile `["", "FF")` in upper-case hex EPKs; the reply's etag names the set; a request
//! with `If-None-Match` of the current etag gets a 304 (the Python SDK's drain loop stops only
//! on a 304: a server that always answers 200 hangs it); a range that replaced others after a
//! split lists them in `parents`, so a client drops the retired ones.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use cosmoql::rid::Rid;
use cosmoql::store::PartitionInfo;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::wire::{now_seconds, Reply, Request};

/// Every range the gateway has listed per container (by container rid): what a range that
/// replaced some lists as its parents.
#[derive(Debug, Default)]
pub struct RangeHistory {
    seen: Mutex<HashMap<String, Listed>>,
}

/// The ranges listed of one container: id to EPK bounds.
type Listed = BTreeMap<u32, (String, String)>;

/// A container's ranges as the reply lists them.
#[derive(Debug, Clone, PartialEq)]
pub struct Range {
    /// The range id (the physical partition's id).
    pub id: u32,
    /// The lowest EPK it holds, upper-case hex (`""` for the first).
    pub min: String,
    /// The EPK past its last (`"FF"` for the last).
    pub max: String,
    /// The ranges it replaced.
    pub parents: Vec<u32>,
}

impl RangeHistory {
    /// `partitions` as ranges, recording them; parents are the ranges listed before that are gone
    /// now and covered the range.
    pub fn ranges(&self, container_rid: &str, partitions: &[PartitionInfo]) -> Vec<Range> {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let history = seen.entry(container_rid.to_string()).or_default();
        let current: Vec<Range> = partitions
            .iter()
            .map(|p| Range {
                id: p.id,
                min: p.min.to_hex().to_uppercase(),
                max: p.max.to_hex().to_uppercase(),
                parents: vec![],
            })
            .collect();
        let ranges = current
            .iter()
            .map(|r| {
                let parents = history
                    .iter()
                    .filter(|(id, (min, max))| {
                        !current.iter().any(|c| c.id == **id) && covers(min, max, &r.min, &r.max)
                    })
                    .map(|(id, _)| *id)
                    .collect();
                Range { parents, ..r.clone() }
            })
            .collect();
        for r in &current {
            history.insert(r.id, (r.min.clone(), r.max.clone()));
        }
        ranges
    }
}

impl RangeHistory {
    /// The EPK span (upper-case hex bounds) of range `id`: a current partition's, or a range
    /// listed before and retired since (split: its span is its children's union).
    pub fn span(&self, container_rid: &str, id: u32, partitions: &[PartitionInfo]) -> Option<(String, String)> {
        if let Some(p) = partitions.iter().find(|p| p.id == id) {
            return Some((p.min.to_hex().to_uppercase(), p.max.to_hex().to_uppercase()));
        }
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.get(container_rid).and_then(|listed| listed.get(&id)).cloned()
    }
}

/// Whether `[min, max)` holds `[lo, hi)` (hex EPKs compare as text, `""` lowest, `"FF"` highest).
fn covers(min: &str, max: &str, lo: &str, hi: &str) -> bool {
    min <= lo && hi <= max
}

/// The etag of a set of ranges: it changes exactly when the set does.
pub fn ranges_etag(ranges: &[Range]) -> String {
    let mut hasher = Sha256::new();
    for r in ranges {
        hasher.update(format!("{}:{}:{};", r.id, r.min, r.max));
    }
    let hex: String = hasher.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("\"{hex}\"")
}

/// The reply to `GET .../pkranges` for the container with rid `coll_rid` and these ranges.
pub fn reply(coll_rid: &str, ranges: &[Range], request: &Request) -> Reply {
    let etag = ranges_etag(ranges);
    if request.header("if-none-match").is_some_and(|tag| tag == etag) {
        return Reply::empty(304).with("etag", etag).with("x-ms-request-charge", "1");
    }
    let Some(Rid::Collection { database, collection }) = Rid::parse(coll_rid) else {
        return Reply::error(request.bad_request("The collection's resource id does not parse."));
    };
    let db_rid = Rid::Database { database }.encode().unwrap_or_default();
    let fraction = 1.0 / ranges.len().max(1) as f64;
    let docs: Vec<serde_json::Value> = ranges
        .iter()
        .map(|r| {
            let rid =
                Rid::PartitionKeyRange { database, collection, range: u64::from(r.id) }.encode().unwrap_or_default();
            json!({
                "id": r.id.to_string(),
                "minInclusive": r.min,
                "maxExclusive": r.max,
                "ridPrefix": r.id,
                "throughputFraction": fraction,
                "status": "online",
                "parents": r.parents.iter().map(u32::to_string).collect::<Vec<_>>(),
                "_rid": rid,
                "_self": format!("dbs/{db_rid}/colls/{coll_rid}/pkranges/{rid}/"),
                "_etag": etag,
                "_ts": now_seconds(),
            })
        })
        .collect();
    let count = docs.len();
    Reply::json(200, &json!({"_rid": coll_rid, "PartitionKeyRanges": docs, "_count": count}))
        .with("etag", etag)
        .with("x-ms-item-count", count.to_string())
        .with("x-ms-request-charge", "1")
}
