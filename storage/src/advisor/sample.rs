//! The advisor's items as columns: every scalar path's values interned once (a number per item),
//! which paths nearly every item has, which hold times and which measured numbers, and each
//! item's time, hour and second. Every candidate key is then measured on small integers, never
//! on the items' text again.

use std::collections::{BTreeSet, HashMap};
use std::hash::BuildHasher;

use cosmoql_value::{Value, ValueKind};

use crate::doc::DocRef;

/// An item that lacks the path.
pub(super) const NONE: u32 = u32::MAX;

/// One path's values: an id per item ([`NONE`] where the item lacks it) and the distinct
/// values as text (numbers, booleans and null as JSON; a string `"5"` and the number `5` are two
/// values).
#[derive(Debug)]
pub(super) struct Column {
    pub ids: Vec<u32>,
    pub values: Vec<String>,
    /// Each value's V2 hash as a key component ([`cosmoql_catalog::epk::component_hash_v2`]): a key on the
    /// path, or a level of a hierarchical one, is placed in EPK order without hashing again.
    pub hashes: Vec<u128>,
    /// Whether each value can be part of a synthetic key (null cannot: the store refuses it).
    pub joinable: Vec<bool>,
}

impl Column {
    /// Distinct values among the items that have the path.
    pub fn cardinality(&self) -> usize {
        self.values.len()
    }
}

/// The items, parsed.
#[derive(Debug)]
pub(super) struct Sample {
    pub n: usize,
    /// Each item's size as JSON.
    pub bytes: Vec<u64>,
    /// The paths nearly every item (95%) has, sorted, with their columns.
    pub common: Vec<String>,
    pub columns: HashMap<String, Column>,
    /// Common paths whose values are ISO times or dates.
    pub time_paths: BTreeSet<String>,
    /// Common paths holding measured numbers (mostly not whole): values, not identifiers.
    pub measured: BTreeSet<String>,
    /// Each item's time in seconds since 1970, from its finest time path.
    pub stamp: Vec<Option<i64>>,
    /// The items of each clock hour (of the finest time path), and of each second that has
    /// two or more.
    pub hours: Vec<Vec<u32>>,
    pub busy_seconds: Vec<Vec<u32>>,
}

/// A column being read: its values interned, the items that have it.
#[derive(Default)]
struct Building {
    /// `(item, value id)` in item order.
    entries: Vec<(u32, u32)>,
    /// The first value id of each value hash, and for each value id the next of the same hash
    /// (the values are kept once, in `values`).
    first: Map<u64, u32>,
    same_hash: Vec<u32>,
    values: Vec<String>,
    hashes: Vec<u128>,
    joinable: Vec<bool>,
    /// Each value's kind (see [`Scalar::tag`]): values of two kinds with one text differ.
    tags: Vec<u8>,
    /// Items whose value looks like a time, and whose value is a number with a fraction.
    times: usize,
    fractional: usize,
    /// The values' lengths summed (the finest time path has the longest).
    length: usize,
}

/// A value that looks like an ISO date or timestamp (`2026-11-23`, `2026-11-23T10:00:00Z`).
pub(super) fn is_time(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit)
}

/// Seconds since 1970 of an ISO time (`2026-11-23`, `2026-11-23T10:20:30Z`); `None` otherwise.
pub(super) fn seconds(text: &str) -> Option<i64> {
    let num = |r: std::ops::Range<usize>| text.get(r).and_then(|t| t.parse::<i64>().ok());
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = if text.len() >= 19 { (num(11..13)?, num(14..16)?, num(17..19)?) } else { (0, 0, 0) };
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + mi * 60 + se)
}

/// A leaf of an item.
#[derive(Debug, Clone, Copy)]
enum Scalar<'a> {
    Str(&'a str),
    Num(f64),
    Bool(bool),
    Null,
}

impl Scalar<'_> {
    fn tag(self) -> u8 {
        match self {
            Scalar::Str(_) => 0,
            Scalar::Num(_) => 1,
            Scalar::Bool(_) => 2,
            Scalar::Null => 3,
        }
    }

    /// Calls `f` with the value's text: a string as it is, the rest as JSON (as a synthetic key
    /// writes them).
    fn with_text<R>(self, f: impl FnOnce(&str) -> R) -> R {
        match self {
            Scalar::Str(s) => f(s),
            Scalar::Num(n) => cosmoql_value::json::with_number_text(n, f),
            Scalar::Bool(b) => f(if b { "true" } else { "false" }),
            Scalar::Null => f("null"),
        }
    }

    /// The value's V2 hash as a key component.
    fn hash(self) -> u128 {
        use cosmoql_catalog::epk::{component_hash_v2, string_hash_v2, PartitionKeyComponent as C};
        match self {
            Scalar::Str(s) => string_hash_v2(&[s]),
            Scalar::Num(n) => component_hash_v2(&C::Number(n)),
            Scalar::Bool(b) => component_hash_v2(&C::Bool(b)),
            Scalar::Null => component_hash_v2(&C::Null),
        }
    }
}

/// Objects are walked this deep (the item is depth 0); arrays are not walked.
const MAX_DEPTH: usize = 3;

type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Reads items into columns, one at a time (from [`Value`]s or from stored documents).
#[derive(Default)]
pub(super) struct Builder {
    items: usize,
    bytes: Vec<u64>,
    /// Each path's column being built.
    index: Map<String, usize>,
    building: Vec<Building>,
    /// The path of the leaf being read (`/a/b`).
    path: String,
    /// Reused for JSON text.
    buffer: Vec<u8>,
    /// Hashes the values (seeded at random: no input can be made to collide).
    hasher: foldhash::fast::RandomState,
}

impl Builder {
    /// Adds an item given as a value.
    pub fn value(&mut self, item: &Value) {
        self.buffer.clear();
        let json = cosmoql_value::json::write_json(&mut self.buffer, item).unwrap_or(false);
        self.bytes.push(if json { self.buffer.len() as u64 } else { 0 });
        self.walk_value(item, 0);
        self.items += 1;
    }

    /// Adds a stored item.
    pub fn doc(&mut self, doc: &crate::doc::Doc) {
        self.buffer.clear();
        let json = doc.write_json(&mut self.buffer);
        self.bytes.push(if json { self.buffer.len() as u64 } else { 0 });
        self.walk_doc(doc.root(), 0);
        self.items += 1;
    }

    /// Enters property `key` of an object at `depth`: false for the item's system properties.
    fn enter(&mut self, key: &str, depth: usize) -> Option<usize> {
        if depth == 0 && crate::doc::SYSTEM_PROPERTIES.contains(&key) {
            return None;
        }
        let len = self.path.len();
        self.path.push('/');
        self.path.push_str(key);
        Some(len)
    }

    fn walk_value(&mut self, v: &Value, depth: usize) {
        let Value::Object(map) = v else { return };
        for (k, child) in map.iter() {
            let Some(len) = self.enter(k, depth) else { continue };
            match child {
                Value::Object(_) if depth < MAX_DEPTH => self.walk_value(child, depth + 1),
                Value::String(s) => self.leaf(Scalar::Str(s)),
                Value::Number(n) => self.leaf(Scalar::Num(*n)),
                Value::Bool(b) => self.leaf(Scalar::Bool(*b)),
                Value::Null => self.leaf(Scalar::Null),
                _ => {}
            }
            self.path.truncate(len);
        }
    }

    fn walk_doc(&mut self, doc: DocRef<'_>, depth: usize) {
        for (k, child) in doc.entries() {
            let Some(len) = self.enter(k, depth) else { continue };
            match child.kind() {
                ValueKind::Object if depth < MAX_DEPTH => self.walk_doc(child, depth + 1),
                ValueKind::String => self.leaf(Scalar::Str(child.as_str().unwrap_or_default())),
                ValueKind::Number => self.leaf(Scalar::Num(child.as_f64().unwrap_or_default())),
                ValueKind::Boolean => self.leaf(Scalar::Bool(child.as_bool() == Some(true))),
                ValueKind::Null => self.leaf(Scalar::Null),
                _ => {}
            }
            self.path.truncate(len);
        }
    }

    /// The current item's value at the current path.
    fn leaf(&mut self, value: Scalar<'_>) {
        let at = match self.index.get(self.path.as_str()) {
            Some(at) => *at,
            None => {
                self.index.insert(self.path.clone(), self.building.len());
                self.building.push(Building::default());
                self.building.len() - 1
            }
        };
        let (item, hasher) = (self.items as u32, &self.hasher);
        let b = &mut self.building[at];
        value.with_text(|text| {
            let tag = value.tag();
            let hash = hasher.hash_one((tag, text));
            let mut found = b.first.get(&hash).copied().unwrap_or(NONE);
            while found != NONE && (b.tags[found as usize] != tag || b.values[found as usize] != text) {
                found = b.same_hash[found as usize];
            }
            let id = if found != NONE {
                found
            } else {
                let id = b.values.len() as u32;
                b.same_hash.push(b.first.insert(hash, id).unwrap_or(NONE));
                b.values.push(text.to_string());
                b.hashes.push(value.hash());
                b.joinable.push(!matches!(value, Scalar::Null));
                b.tags.push(tag);
                id
            };
            b.entries.push((item, id));
            b.length += text.len();
            if matches!(value, Scalar::Str(_)) && is_time(text) {
                b.times += 1;
            }
            let numeric = text.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.');
            if numeric && text.parse::<f64>().is_ok_and(|x| x.fract() != 0.0) {
                b.fractional += 1;
            }
        });
    }

    pub fn finish(mut self) -> Sample {
        let n = self.items;
        let nearly_all = |count: usize| count * 100 >= n * 95;
        let mut common = Vec::new();
        let mut columns = HashMap::new();
        let mut time_paths = BTreeSet::new();
        let mut measured = BTreeSet::new();
        let mut lengths = Vec::new();
        let mut paths: Vec<(&String, &usize)> = self.index.iter().collect();
        paths.sort();
        for (path, at) in paths {
            let b = std::mem::take(&mut self.building[*at]);
            if !nearly_all(b.entries.len()) {
                continue;
            }
            common.push(path.clone());
            if nearly_all(b.times) {
                time_paths.insert(path.clone());
                lengths.push((path.clone(), b.length));
            }
            if b.fractional * 2 >= n {
                measured.insert(path.clone());
            }
            let mut ids = vec![NONE; n];
            for (item, id) in b.entries {
                ids[item as usize] = id;
            }
            columns.insert(path.clone(), Column { ids, values: b.values, hashes: b.hashes, joinable: b.joinable });
        }
        let mut sample = Sample {
            n,
            bytes: self.bytes,
            common,
            columns,
            time_paths,
            measured,
            stamp: vec![None; n],
            hours: Vec::new(),
            busy_seconds: Vec::new(),
        };
        // The finest time path (the longest values) stamps each write; the last of equals.
        let finest = lengths.iter().max_by_key(|(_, length)| *length).map(|(p, _)| p.clone());
        if let Some(column) = finest.and_then(|p| sample.columns.get(&p)) {
            (sample.stamp, sample.hours, sample.busy_seconds) = stamps(column);
        }
        sample
    }
}

impl Sample {
    pub fn of(items: &[Value]) -> Sample {
        let mut builder = Builder::default();
        for item in items {
            builder.value(item);
        }
        builder.finish()
    }
}

/// Each item's time from `column` (in seconds), the items of each hour, and of each second that
/// has two or more.
type Stamps = (Vec<Option<i64>>, Vec<Vec<u32>>, Vec<Vec<u32>>);

/// The [`Stamps`] of `column`, the finest time path.
fn stamps(column: &Column) -> Stamps {
    // Per distinct value: its seconds, and its hour and second as written.
    let mut hour_of: HashMap<&str, u32> = HashMap::new();
    let mut second_of: HashMap<&str, u32> = HashMap::new();
    let prefix = |text: &str, chars: usize| text.char_indices().nth(chars).map_or(text.len(), |(at, _)| at);
    let per_value: Vec<(Option<i64>, u32, u32)> = column
        .values
        .iter()
        .map(|text| {
            let hour = text.get(..prefix(text, 13)).unwrap_or(text);
            let next = hour_of.len() as u32;
            let hour = *hour_of.entry(hour).or_insert(next);
            let second = if text.len() >= 19 {
                let next = second_of.len() as u32;
                *second_of.entry(text.get(..prefix(text, 19)).unwrap_or(text)).or_insert(next)
            } else {
                NONE
            };
            (seconds(text), hour, second)
        })
        .collect();
    let mut stamp = vec![None; column.ids.len()];
    let mut hours = vec![Vec::new(); hour_of.len()];
    let mut seconds = vec![Vec::new(); second_of.len()];
    for (i, id) in column.ids.iter().enumerate() {
        let Some((at, hour, second)) = per_value.get(*id as usize) else { continue };
        stamp[i] = *at;
        hours[*hour as usize].push(i as u32);
        if *second != NONE {
            seconds[*second as usize].push(i as u32);
        }
    }
    (stamp, hours, seconds.into_iter().filter(|items| items.len() >= 2).collect())
}
