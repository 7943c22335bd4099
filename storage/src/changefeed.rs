//! The change feed, latest-version mode: every item created or replaced, once, in its latest
//! version, in the order of its partition's writes (each write's LSN is taken under its physical
//! partition's write lock, so a partition's LSNs are in commit order).
//!
//! A read covers a feed range (the whole container, an EPK range, or one logical partition's
//! key) and returns a page and a continuation. The continuation keeps, for each piece of the range
//! a physical partition owned when the page was read, the LSN read up to. A partition that split
//! since hands its cursor to both children (their items all came from it, and later writes get
//! later LSNs), so a continuation resumes across splits with no change missed or repeated.
//!
//! # Continuation format (version 1)
//!
//! `cf1.` followed by the lowercase hex of a JSON object:
//! `{"range": ["<min EPK hex>", "<max EPK hex>"], "t": <min _ts or absent>, "at": [["<min>", "<max>", <lsn>], ...]}`.

use cosmoql_value::{parse_json, to_json_string, Map, Value};

use crate::container::{Change, Container};
use crate::error::{Result, StorageError};
use crate::item::StoredItem;
use cosmoql_catalog::epk::Epk;
use cosmoql_catalog::partition_key::PartitionKey;

const PREFIX: &str = "cf1.";

/// Where a change feed starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeFeedStart {
    /// Every item's latest version.
    Beginning,
    /// Only what is written from now on.
    Now,
    /// What was last written at or after this time (Unix seconds, as `_ts`).
    Time(u64),
}

/// The part of a container a change feed reads.
#[derive(Debug, Clone, PartialEq)]
pub enum FeedRange {
    /// The whole container.
    All,
    /// An EPK range `[min, max)` (for example a physical partition's, to spread the reading).
    Epk(Epk, Epk),
    /// One logical partition (or, for a hierarchical key, a key prefix).
    Key(PartitionKey),
}

/// One page of a change feed.
#[derive(Debug, Clone)]
pub struct ChangePage {
    /// The changed items, each in its latest version, with its system properties and `_lsn`.
    pub items: Vec<(StoredItem, Epk)>,
    /// Where the next read resumes (always given: a change feed never ends).
    pub continuation: String,
}

/// One page of the all-versions-and-deletes change feed.
#[derive(Debug, Clone)]
pub struct HistoryPage {
    /// Every create, replace and delete after the continuation, with its LSN, in the order of
    /// its partition's writes.
    pub changes: Vec<(u64, Change)>,
    pub continuation: String,
}

/// What a continuation says: the feed range, the `_ts` floor of a feed started at a time, and
/// the LSN each piece of the range was read up to.
#[derive(Debug, Clone, PartialEq)]
struct Cursor {
    range: (Epk, Epk),
    min_ts: Option<u64>,
    at: Vec<(Epk, Epk, u64)>,
}

impl Cursor {
    /// The LSN a piece `[min, max)` was read up to: the lowest of the recorded pieces overlapping
    /// it (a child of a split partition takes its parent's).
    /// The pieces are in order and apart ([`Cursor::decode`] checks), so the overlapping ones
    /// are found by a binary search.
    fn lsn_for(&self, min: &Epk, max: &Epk) -> u64 {
        let first = self.at.partition_point(|(_, b, _)| b <= min);
        self.at[first..].iter().take_while(|(a, _, _)| a < max).map(|(_, _, lsn)| *lsn).min().unwrap_or(0)
    }

    /// The cursor of `bounds`, a part of its range: the pieces that overlap it, cut to it.
    fn narrowed(self, bounds: &(Epk, Epk)) -> Cursor {
        if self.range == *bounds {
            return self;
        }
        let at = self
            .at
            .into_iter()
            .filter(|(a, b, _)| a < &bounds.1 && &bounds.0 < b)
            .map(|(a, b, lsn)| {
                let a = if a > bounds.0 { a } else { bounds.0.clone() };
                let b = if b < bounds.1 { b } else { bounds.1.clone() };
                (a, b, lsn)
            })
            .collect();
        Cursor { range: bounds.clone(), min_ts: self.min_ts, at }
    }

    fn encode(&self) -> String {
        let mut object = Map::default();
        object.insert(
            "range".into(),
            Value::from(vec![Value::from(self.range.0.to_hex()), Value::from(self.range.1.to_hex())]),
        );
        if let Some(t) = self.min_ts {
            object.insert("t".into(), Value::from(t as f64));
        }
        let at: Vec<Value> = self
            .at
            .iter()
            .map(|(a, b, lsn)| {
                Value::from(vec![Value::from(a.to_hex()), Value::from(b.to_hex()), Value::from(*lsn as f64)])
            })
            .collect();
        object.insert("at".into(), Value::from(at));
        let json = to_json_string(&Value::from(object)).unwrap_or_default();
        let hex: String = json.bytes().map(|b| format!("{b:02x}")).collect();
        format!("{PREFIX}{hex}")
    }

    fn decode(text: &str) -> Result<Cursor> {
        let bad =
            || StorageError::bad_request("invalid change feed continuation: it is not a cosmoql change feed token");
        let hex = text.strip_prefix(PREFIX).ok_or_else(bad)?;
        if hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let bytes: Vec<u8> =
            (0..hex.len()).step_by(2).filter_map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok()).collect();
        let object = parse_json(&String::from_utf8(bytes).map_err(|_| bad())?).map_err(|_| bad())?;
        let epk = |v: &Value| v.as_str().and_then(|s| Epk::from_hex(s).ok()).ok_or_else(bad);
        let count = |v: &Value| {
            v.as_f64().filter(|n| *n >= 0.0 && n.fract() == 0.0 && *n <= 9_007_199_254_740_992.0).map(|n| n as u64)
        };
        let range = match object.get("range") {
            Value::Array(r) if r.len() == 2 => (epk(&r[0])?, epk(&r[1])?),
            _ => return Err(bad()),
        };
        let min_ts = match object.get("t") {
            Value::Undefined => None,
            v => Some(count(v).ok_or_else(bad)?),
        };
        let at = match object.get("at") {
            Value::Array(pieces) => pieces
                .iter()
                .map(|p| match p {
                    Value::Array(p) if p.len() == 3 => Ok((epk(&p[0])?, epk(&p[1])?, count(&p[2]).ok_or_else(bad)?)),
                    _ => Err(bad()),
                })
                .collect::<Result<Vec<_>>>()?,
            _ => return Err(bad()),
        };
        // Each piece inside the range, not empty, after the one before it.
        let mut floor = &range.0;
        for (a, b, _) in &at {
            if a < floor || a >= b || b > &range.1 {
                return Err(StorageError::bad_request(
                    "invalid change feed continuation: its pieces are not in order inside its feed range",
                ));
            }
            floor = b;
        }
        Ok(Cursor { range, min_ts, at })
    }
}

impl Container {
    /// The EPK range a feed range covers.
    fn feed_epk_range(&self, range: &FeedRange) -> Result<(Epk, Epk)> {
        match range {
            FeedRange::All => Ok((Epk::min(), Epk::max())),
            FeedRange::Epk(min, max) if min < max => Ok((min.clone(), max.clone())),
            FeedRange::Epk(..) => Err(StorageError::bad_request("a feed range's minimum must be below its maximum")),
            FeedRange::Key(key) => Ok(self.partition_key().epk_range(key)?),
        }
    }

    /// The feed ranges of the physical partitions now, to read a change feed in parallel.
    pub fn feed_ranges(&self) -> Vec<FeedRange> {
        self.partitions().into_iter().map(|p| FeedRange::Epk(p.min, p.max)).collect()
    }

    /// Reads a page of at most `max_items` changes of `range` (latest-version mode), from `start`
    /// or from `continuation` (a token of an earlier page of the same range).
    pub fn read_changes(
        &self,
        range: &FeedRange,
        start: ChangeFeedStart,
        continuation: Option<&str>,
        max_items: usize,
    ) -> Result<ChangePage> {
        let (items, continuation) =
            self.read_feed(range, start, continuation, max_items, |id, piece, from, t, room| {
                self.changes_in(id, piece, from, t, room)
            })?;
        Ok(ChangePage { items, continuation })
    }

    /// Reads a page of at most `max_items` writes of `range` in all-versions-and-deletes mode:
    /// every create, replace and delete (a delete by time to live marked so) within the
    /// container's change feed retention. 400 when the container keeps no history
    /// (`changeFeedPolicy`).
    pub fn read_all_versions(
        &self,
        range: &FeedRange,
        start: ChangeFeedStart,
        continuation: Option<&str>,
        max_items: usize,
    ) -> Result<HistoryPage> {
        if self.settings().change_feed_retention.is_none() {
            return Err(StorageError::bad_request(
                "the all versions and deletes change feed mode needs a change feed policy with a retention \
                 (changeFeedPolicy.retentionDuration)",
            ));
        }
        let (changes, continuation) =
            self.read_feed(range, start, continuation, max_items, |id, piece, from, t, room| {
                self.history_in(id, piece, from, t, room)
            })?;
        Ok(HistoryPage { changes, continuation })
    }

    /// A page of either mode: `read(partition, piece, after LSN, min _ts, room)` reads one
    /// partition's piece.
    fn read_feed<T>(
        &self,
        range: &FeedRange,
        start: ChangeFeedStart,
        continuation: Option<&str>,
        max_items: usize,
        read: impl Fn(u32, (&Epk, &Epk), u64, Option<u64>, usize) -> (Vec<T>, u64),
    ) -> Result<(Vec<T>, String)> {
        self.expire();
        let bounds = self.feed_epk_range(range)?;
        let cursor = match continuation {
            Some(text) => {
                let cursor = Cursor::decode(text)?;
                // A token of a wider range resumes any part of it, each piece at its LSN: a client
                // that read a range before it split reads each child on from the parent's token
                // (the SDKs do, as against the service).
                if bounds.0 < cursor.range.0 || cursor.range.1 < bounds.1 {
                    return Err(StorageError::bad_request(
                        "invalid change feed continuation: it belongs to another feed range",
                    ));
                }
                cursor.narrowed(&bounds)
            }
            None => {
                let (lsn, min_ts) = match start {
                    ChangeFeedStart::Beginning => (0, None),
                    ChangeFeedStart::Now => (self.last_lsn(), None),
                    ChangeFeedStart::Time(t) => (0, Some(t)),
                };
                Cursor { range: bounds.clone(), min_ts, at: vec![(bounds.0.clone(), bounds.1.clone(), lsn)] }
            }
        };
        let partitions = self.partitions_overlapping(std::slice::from_ref(&bounds));
        // A token records one piece per partition it read, and partitions only split: more
        // pieces than the range has partitions now is not a token this container gave.
        if cursor.at.len() > partitions.len() {
            return Err(StorageError::bad_request(format!(
                "invalid change feed continuation: it has {} pieces and its feed range has {} partitions",
                cursor.at.len(),
                partitions.len()
            )));
        }
        let max_items = max_items.max(1);
        let mut items = Vec::new();
        let mut at = Vec::new();
        for (id, pmin, pmax) in partitions {
            let lo = if pmin > bounds.0 { pmin } else { bounds.0.clone() };
            let hi = if pmax < bounds.1 { pmax } else { bounds.1.clone() };
            let from = cursor.lsn_for(&lo, &hi);
            let room = max_items - items.len();
            let (got, upto) = read(id, (&lo, &hi), from, cursor.min_ts, room);
            items.extend(got);
            at.push((lo, hi, upto));
        }
        let next = Cursor { range: bounds, min_ts: cursor.min_ts, at };
        Ok((items, next.encode()))
    }
}
