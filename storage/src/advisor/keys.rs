//! Candidate keys, and where one puts the sample's items: each item's logical partition, each
//! logical partition's bytes, and the physical partitions formed as splits form them (the keys
//! in EPK order cut into ranges of about equal bytes, never inside a logical partition).

use std::collections::HashMap;
use std::fmt;

use super::sample::{Column, Sample, NONE};
use cosmoql_catalog::epk::{string_hash_v2, undefined_hash_v2};
use cosmoql_catalog::partition_key::{hash_bucket, PartitionKey, PartitionKeyDefinition};

/// A candidate key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum KeyChoice {
    /// One path (`/deviceId`).
    Path(String),
    /// A synthetic key: the values of two paths joined with `-` (`/deviceId-/date`).
    Concat(String, String),
    /// A hierarchical key of two or three paths (`[/tenantId, /userId]`).
    Hierarchical(Vec<String>),
    /// A base path's value, a dot and `hash(source) % buckets + 1` (`SyntheticKind::HashSuffix`).
    HashSuffix(String, String, u32),
    /// A base path's value, a dot and a random number from 1 to `buckets`, drawn at each write
    /// (`SyntheticKind::RandomSuffix`): writes spread, but a read by the base value fans out.
    RandomSuffix(String, u32),
}

impl KeyChoice {
    /// The item paths the key's value comes from.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            KeyChoice::Path(a) | KeyChoice::RandomSuffix(a, _) => vec![a],
            KeyChoice::HashSuffix(a, source, _) => vec![a, source],
            KeyChoice::Concat(a, b) => vec![a, b],
            KeyChoice::Hierarchical(levels) => levels.iter().map(String::as_str).collect(),
        }
    }

    /// Whether the store builds the key from the paths' text (a synthetic key): then an item
    /// that lacks one of them, or holds null there, cannot be written.
    pub fn is_synthetic(&self) -> bool {
        matches!(self, KeyChoice::Concat(..) | KeyChoice::HashSuffix(..) | KeyChoice::RandomSuffix(..))
    }

    /// The definition whose EPKs order the key's values: one hashed path for a path or a
    /// synthetic key (its value is a string), the levels of a hierarchical one.
    pub(super) fn definition(&self) -> Option<PartitionKeyDefinition> {
        match self {
            KeyChoice::Hierarchical(levels) if levels.len() <= 3 => {
                PartitionKeyDefinition::from_paths(&self.paths()).ok()
            }
            KeyChoice::Hierarchical(_) => None,
            _ => PartitionKeyDefinition::hash("/k").ok(),
        }
    }
}

impl fmt::Display for KeyChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyChoice::Path(p) => write!(f, "{p}"),
            KeyChoice::Concat(a, b) => write!(f, "{a} + \"-\" + {b} (synthetic)"),
            KeyChoice::Hierarchical(levels) => write!(f, "[{}] (hierarchical)", levels.join(", ")),
            KeyChoice::RandomSuffix(p, n) => write!(f, "{p} + \".\" + random(1..{n}) (synthetic)"),
            KeyChoice::HashSuffix(p, source, n) => {
                write!(f, "{p} + \".\" + hash({source}) % {n} + 1 (synthetic)")
            }
        }
    }
}

/// A fixed scramble of `n` (SplitMix64's finalizer): stands for a random draw, repeatably.
pub(super) fn scramble(n: u64) -> u64 {
    let mut z = n.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A logical partition's place in EPK order: its key's V2 hash, one per level of a hierarchical
/// key (a one-level key uses the first), compared as numbers.
pub(super) type Place = [u128; 3];

/// The place of a key in `definition`'s EPK order (the EPK's 16-byte hashes as numbers).
pub(super) fn place_of(definition: &PartitionKeyDefinition, key: &PartitionKey) -> Option<Place> {
    let epk = definition.epk(key).ok()?;
    let mut place = [0u128; 3];
    for (level, chunk) in epk.as_bytes().chunks(16).take(3).enumerate() {
        let mut bytes = [0u8; 16];
        bytes[..chunk.len()].copy_from_slice(chunk);
        place[level] = u128::from_be_bytes(bytes);
    }
    Some(place)
}

/// Where a candidate key puts the sample's items.
#[derive(Debug)]
pub(super) struct Layout {
    /// Each item's logical partition (a dense number).
    pub key_of_item: Vec<u32>,
    /// Each logical partition's bytes.
    pub key_bytes: Vec<u64>,
    /// Each logical partition's physical partition.
    pub group_of_key: Vec<u32>,
    /// Each physical partition's bytes.
    pub per_partition: Vec<u64>,
    /// Where each physical partition's EPK range starts (the place of its first key), in order:
    /// a key not in the sample goes to the last partition starting at or before its place.
    pub starts: Vec<Place>,
    /// Items the store would refuse under the key (a synthetic key's path missing or null):
    /// they are counted in one logical partition of their own, and the key is ruled out.
    pub refused: usize,
    /// The first path such an item lacks.
    pub refused_path: Option<String>,
}

impl Layout {
    /// The physical partition of item `i`.
    pub fn slot(&self, i: usize) -> usize {
        self.group_of_key[self.key_of_item[i] as usize] as usize
    }

    /// The physical partition whose EPK range holds `place`.
    pub fn slot_of_place(&self, place: &Place) -> usize {
        self.starts.partition_point(|start| start <= place).saturating_sub(1)
    }
}

/// A value id of `column`'s item `i`, or [`NONE`].
fn id(column: &Column, i: usize) -> u64 {
    u64::from(column.ids[i])
}

/// Numbers each item's key (a tuple of value ids, packed) densely, first seen first; returns the
/// numbers and, per number, the packed tuple.
fn dense(n: usize, packed: impl Fn(usize) -> u128) -> (Vec<u32>, Vec<u128>) {
    let mut of: HashMap<u128, u32, foldhash::fast::RandomState> = HashMap::default();
    let mut reps = Vec::new();
    let ids = (0..n)
        .map(|i| {
            let p = packed(i);
            *of.entry(p).or_insert_with(|| {
                reps.push(p);
                (reps.len() - 1) as u32
            })
        })
        .collect();
    (ids, reps)
}

/// A bucket number's digits, without allocating.
fn digits(n: u64, buf: &mut [u8; 20]) -> &str {
    let mut at = buf.len();
    let mut n = n;
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[at..]).unwrap_or("0")
}

/// Where `key` puts the items of `sample` over `p` physical partitions; `None` when one of its
/// paths is not a common one, or it has more levels than a hierarchical key may. An item without
/// a path of a path or hierarchical key lands in the undefined key's logical partition, as the
/// store puts it; one without a path of a synthetic key (or with null there) would be refused.
///
/// Each logical partition's place in EPK order is its key's V2 hash (one per level of a
/// hierarchical key), computed from the values' text without building the key; two tuples of
/// values that make one key (`"a-b" + "c"` and `"a" + "b-c"`) are one logical partition.
pub(super) fn layout(key: &KeyChoice, sample: &Sample, p: usize) -> Option<Layout> {
    key.definition()?;
    let columns: Vec<&Column> = key.paths().iter().map(|path| sample.columns.get(*path)).collect::<Option<_>>()?;
    let n = sample.n;
    let p = p.max(1);
    // A value's text where it can be part of a synthetic key.
    let part = |c: usize, id: u64| -> Option<&str> {
        let id = usize::try_from(id).ok()?;
        columns[c].joinable.get(id).filter(|ok| **ok).map(|_| columns[c].values[id].as_str())
    };
    let undefined = undefined_hash_v2();
    let level_hash = |c: usize, id: u64| columns[c].hashes.get(id as usize).copied().unwrap_or(undefined);
    // Each item's key as value ids (and, for the suffixes, the bucket), packed.
    let (tuple_of_item, reps) = match key {
        KeyChoice::Path(_) => dense(n, |i| u128::from(id(columns[0], i))),
        KeyChoice::Concat(..) => dense(n, |i| u128::from(id(columns[0], i)) << 64 | u128::from(id(columns[1], i))),
        KeyChoice::Hierarchical(levels) => {
            dense(n, |i| (0..levels.len()).fold(0u128, |acc, level| acc << 32 | u128::from(columns[level].ids[i])))
        }
        // A random draw at each write: the sample's draws are a fixed scramble of the item's
        // place in the sample, so the measure is repeatable.
        KeyChoice::RandomSuffix(_, buckets) => {
            let buckets = u64::from((*buckets).max(1));
            dense(n, |i| u128::from(id(columns[0], i)) << 64 | u128::from(scramble(i as u64) % buckets + 1))
        }
        KeyChoice::HashSuffix(_, _, buckets) => {
            // The bucket of each distinct source value, once (none for null).
            let source: Vec<u64> = (0..columns[1].values.len())
                .map(|v| part(1, v as u64).map_or(u64::from(NONE), |t| u64::from(hash_bucket(t, *buckets))))
                .collect();
            dense(n, |i| {
                let bucket = source.get(columns[1].ids[i] as usize).copied().unwrap_or(u64::from(NONE));
                u128::from(id(columns[0], i)) << 64 | u128::from(bucket)
            })
        }
    };
    // Each tuple's place; `None` for one the store would refuse.
    let mut buf = [0u8; 20];
    let mut place_of_tuple = |r: u128| -> Option<Place> {
        let (high, low) = ((r >> 64) as u64, r as u64);
        Some(match key {
            KeyChoice::Path(_) => [level_hash(0, low), 0, 0],
            KeyChoice::Concat(..) => [string_hash_v2(&[part(0, high)?, "-", part(1, low)?]), 0, 0],
            KeyChoice::Hierarchical(levels) => {
                let mut out = [0u128; 3];
                for (level, slot) in out.iter_mut().enumerate().take(levels.len()) {
                    let id = (r >> (32 * (levels.len() - 1 - level))) as u32;
                    *slot = level_hash(level, u64::from(id));
                }
                out
            }
            KeyChoice::RandomSuffix(..) | KeyChoice::HashSuffix(..) => {
                let base = part(0, high)?;
                if low == u64::from(NONE) {
                    return None;
                }
                [string_hash_v2(&[base, ".", digits(low, &mut buf)]), 0, 0]
            }
        })
    };
    // Tuples with one place are one logical partition (two value pairs can join into one text:
    // `"a-b" + "c"` and `"a" + "b-c"`; other keys' places differ when their values do); the
    // refused ones share a last one.
    let merge = matches!(key, KeyChoice::Concat(..));
    let mut key_of_place: HashMap<u128, u32, foldhash::fast::RandomState> = HashMap::default();
    let mut places: Vec<Place> = Vec::with_capacity(reps.len());
    let mut refused_key = None;
    let key_of_tuple: Vec<u32> = reps
        .iter()
        .map(|r| match place_of_tuple(*r) {
            Some(place) if merge => *key_of_place.entry(place[0]).or_insert_with(|| {
                places.push(place);
                (places.len() - 1) as u32
            }),
            Some(place) => {
                places.push(place);
                (places.len() - 1) as u32
            }
            None => *refused_key.get_or_insert(u32::MAX),
        })
        .collect();
    let placed = places.len();
    let key_of_item: Vec<u32> = tuple_of_item
        .iter()
        .map(|t| match key_of_tuple[*t as usize] {
            u32::MAX => placed as u32,
            k => k,
        })
        .collect();
    let keys = placed + usize::from(refused_key.is_some());
    let mut key_bytes = vec![0u64; keys];
    for (i, k) in key_of_item.iter().enumerate() {
        key_bytes[*k as usize] += sample.bytes[i];
    }
    let refused = key_of_item.iter().filter(|k| **k as usize == placed).count();
    let refused_path = (refused > 0)
        .then(|| {
            let lacking = |c: usize| (0..n).any(|i| part(c, id(columns[c], i)).is_none());
            (0..columns.len()).find(|c| lacking(*c)).map(|c| key.paths()[c].to_string())
        })
        .flatten();
    // The placed keys in EPK order, cut into `p` ranges of about equal bytes; the refused items
    // stay with the first partition (they are never written).
    let sorted = epk_order(&places);
    let total: u64 = key_bytes[..placed].iter().sum();
    let target = total as f64 / p as f64;
    let mut group_of_key = vec![0u32; keys];
    let mut per_partition = vec![0u64; p];
    let mut starts: Vec<Place> = Vec::new();
    let mut group = 0;
    for k in sorted {
        let bytes = key_bytes[k as usize];
        if per_partition[group] > 0 && per_partition[group] as f64 + bytes as f64 / 2.0 > target && group + 1 < p {
            group += 1;
        }
        if starts.len() == group {
            starts.push(places[k as usize]);
        }
        per_partition[group] += bytes;
        group_of_key[k as usize] = group as u32;
    }
    Some(Layout { key_of_item, key_bytes, group_of_key, per_partition, starts, refused, refused_path })
}

/// The keys' numbers in the order of their places (ties by number). Hashes are uniform: the keys
/// are dealt into 65,536 bins by the 16 bits under the top two (which a V2 hash always clears),
/// and only each bin is sorted; places with those bits set are sorted whole.
fn epk_order(order: &[Place]) -> Vec<u32> {
    let by = |a: &u32, b: &u32| order[*a as usize].cmp(&order[*b as usize]).then(a.cmp(b));
    if order.len() < 4096 || order.iter().any(|p| p[0] >> 126 != 0) {
        let mut sorted: Vec<u32> = (0..order.len() as u32).collect();
        sorted.sort_unstable_by(by);
        return sorted;
    }
    let bin = |k: usize| (order[k][0] >> 110) as usize;
    let bins = 1usize << 16;
    let mut starts = vec![0usize; bins + 1];
    for k in 0..order.len() {
        starts[bin(k) + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    let mut sorted = vec![0u32; order.len()];
    let mut next = starts.clone();
    for k in 0..order.len() {
        let b = bin(k);
        sorted[next[b]] = k as u32;
        next[b] += 1;
    }
    for b in 0..bins {
        let bin = &mut sorted[starts[b]..starts[b + 1]];
        if bin.len() > 1 {
            bin.sort_unstable_by(by);
        }
    }
    sorted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binned_order_is_the_full_sort() {
        for n in [10usize, 5000, 70_000] {
            // Hash-like numbers (the top two bits clear, as V2's), with repeats (ties go by key
            // number) and a hierarchical second level; then some with the top bits set.
            let order: Vec<Place> = (0..n as u64)
                .map(|i| {
                    let h = (u128::from(scramble(i % (n as u64 - 3))) << 64 | u128::from(scramble(i))) >> 2;
                    [h & !(u128::MAX >> 10) | u128::from(i % 7), u128::from(scramble(i + 1)), 0]
                })
                .collect();
            let mut full: Vec<u32> = (0..n as u32).collect();
            full.sort_by(|a, b| order[*a as usize].cmp(&order[*b as usize]).then(a.cmp(b)));
            assert_eq!(epk_order(&order), full, "{n} keys");
            let order: Vec<Place> =
                order.iter().enumerate().map(|(i, p)| [p[0] | (i as u128 % 4) << 126, p[1], 0]).collect();
            let mut full: Vec<u32> = (0..n as u32).collect();
            full.sort_by(|a, b| order[*a as usize].cmp(&order[*b as usize]).then(a.cmp(b)));
            assert_eq!(epk_order(&order), full, "{n} keys, top bits set");
        }
    }
}
