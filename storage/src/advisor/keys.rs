//! Candidate keys, and where one puts the sample's items: each item's logical partition, each
//! logical partition's bytes, and the physical partitions formed as splits form them (the keys
//! in EPK order cut into ranges of about equal bytes, never inside a logical partition).

use std::collections::HashMap;
use std::fmt;

use cosmoql_value::Value;

use super::sample::{Column, Sample, NONE};
use crate::epk::{string_hash_v2, undefined_hash_v2};
use crate::partition_key::{hash_bucket, PartitionKey};

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
    /// Each logical partition's key as the store writes it (`["a-b"]`), when asked for.
    pub key_text: Vec<String>,
}

impl Layout {
    /// The physical partition of item `i`.
    pub fn slot(&self, i: usize) -> usize {
        self.group_of_key[self.key_of_item[i] as usize] as usize
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

/// [`dense`] for a key on one path: its value ids are dense already (those in use, in order of
/// first use, and the undefined key last seen).
fn dense_ids(column: &Column) -> (Vec<u32>, Vec<u128>) {
    let mut of = vec![u32::MAX; column.values.len() + 1];
    let mut reps = Vec::new();
    let ids = column
        .ids
        .iter()
        .map(|id| {
            let slot = &mut of[(*id as usize).min(column.values.len())];
            if *slot == u32::MAX {
                *slot = reps.len() as u32;
                reps.push(u128::from(*id));
            }
            *slot
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
/// paths is not a common one. An item without a key path lands in the undefined key's logical
/// partition, as the store puts it. With `texts`, each key's text is kept (the what-if maps
/// query keys to partitions by it).
///
/// Each logical partition's place in EPK order is its key's V2 hash (one per level of a
/// hierarchical key), computed from the values' text without building the key.
pub(super) fn layout(key: &KeyChoice, sample: &Sample, p: usize, texts: bool) -> Option<Layout> {
    let columns: Vec<&Column> = key.paths().iter().map(|path| sample.columns.get(*path)).collect::<Option<_>>()?;
    let n = sample.n;
    let text = |c: usize, id: u64| -> Option<&str> {
        (id != u64::from(NONE)).then(|| columns[c].values[id as usize].as_str())
    };
    let hash = |parts: Option<&[&str]>| parts.map_or_else(undefined_hash_v2, string_hash_v2);
    // A value of a key path alone: its column knows its hash.
    let undefined = undefined_hash_v2();
    let level_hash = |c: usize, id: u64| columns[c].hashes.get(id as usize).copied().unwrap_or(undefined);
    let mut buf = [0u8; 20];
    // Each item's key as value ids (and, for the suffixes, the bucket), packed; then, per
    // distinct key, its place in EPK order and (when asked) its text.
    let (key_of_item, reps) = match key {
        KeyChoice::Path(_) => dense_ids(columns[0]),
        KeyChoice::Concat(..) => dense(n, |i| u128::from(id(columns[0], i)) << 64 | u128::from(id(columns[1], i))),
        KeyChoice::Hierarchical(levels) => {
            dense(n, |i| (0..levels.len()).fold(0u128, |acc, level| acc << 32 | u128::from(columns[level].ids[i])))
        }
        // A random draw at each write: the sample's draws are a fixed scramble of the item's
        // place in the sample, so the measure is repeatable.
        KeyChoice::RandomSuffix(_, buckets) => {
            dense(n, |i| u128::from(id(columns[0], i)) << 64 | u128::from(scramble(i as u64) % u64::from(*buckets) + 1))
        }
        KeyChoice::HashSuffix(_, _, buckets) => {
            // The bucket of each distinct source value, once.
            let source: Vec<u64> = columns[1].values.iter().map(|v| u64::from(hash_bucket(v, *buckets))).collect();
            dense(n, |i| {
                let bucket = source.get(columns[1].ids[i] as usize).copied().unwrap_or(u64::from(NONE));
                u128::from(id(columns[0], i)) << 64 | u128::from(bucket)
            })
        }
    };
    let order_of = |r: u128, buf: &mut [u8; 20]| -> [u128; 3] {
        let (high, low) = ((r >> 64) as u64, r as u64);
        match key {
            KeyChoice::Path(_) => [level_hash(0, low), 0, 0],
            KeyChoice::Concat(..) => {
                let parts = text(0, high).zip(text(1, low)).map(|(a, b)| [a, "-", b]);
                [hash(parts.as_ref().map(|p| &p[..])), 0, 0]
            }
            KeyChoice::Hierarchical(levels) => {
                let mut out = [0u128; 3];
                for (level, slot) in out.iter_mut().enumerate().take(levels.len()) {
                    let id = (r >> (32 * (levels.len() - 1 - level))) as u32;
                    *slot = level_hash(level, u64::from(id));
                }
                out
            }
            KeyChoice::RandomSuffix(..) | KeyChoice::HashSuffix(..) => {
                let parts = match (text(0, high), low != u64::from(NONE)) {
                    (Some(a), true) => Some([a, ".", digits(low, buf)]),
                    _ => None,
                };
                [hash(parts.as_ref().map(|p| &p[..])), 0, 0]
            }
        }
    };
    let order: Vec<[u128; 3]> = reps.iter().map(|r| order_of(*r, &mut buf)).collect();
    let key_text = if texts {
        reps.iter()
            .map(|r| {
                let (high, low) = ((*r >> 64) as u64, *r as u64);
                let k = match key {
                    KeyChoice::Path(_) => text(0, low).map(PartitionKey::from),
                    KeyChoice::Concat(..) => {
                        text(0, high).zip(text(1, low)).map(|(a, b)| PartitionKey::from(format!("{a}-{b}")))
                    }
                    KeyChoice::Hierarchical(levels) => {
                        let values: Vec<Value> = (0..levels.len())
                            .map(|level| {
                                let id = (*r >> (32 * (levels.len() - 1 - level))) as u32;
                                text(level, u64::from(id)).map_or(Value::Undefined, Value::from)
                            })
                            .collect();
                        PartitionKey::from_values(&values).ok()
                    }
                    KeyChoice::RandomSuffix(..) | KeyChoice::HashSuffix(..) => text(0, high)
                        .filter(|_| low != u64::from(NONE))
                        .map(|a| PartitionKey::from(format!("{a}.{low}"))),
                };
                k.unwrap_or_else(PartitionKey::undefined).to_string()
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut key_bytes = vec![0u64; reps.len()];
    for (i, k) in key_of_item.iter().enumerate() {
        key_bytes[*k as usize] += sample.bytes[i];
    }
    // The keys in EPK order, cut into `p` ranges of about equal bytes.
    let sorted = epk_order(&order);
    let total: u64 = key_bytes.iter().sum();
    let target = total as f64 / p as f64;
    let mut group_of_key = vec![0u32; reps.len()];
    let mut per_partition = vec![0u64; p];
    let mut group = 0;
    for k in sorted {
        let bytes = key_bytes[k as usize];
        if per_partition[group] > 0 && per_partition[group] as f64 + bytes as f64 / 2.0 > target && group + 1 < p {
            group += 1;
        }
        per_partition[group] += bytes;
        group_of_key[k as usize] = group as u32;
    }
    Some(Layout { key_of_item, key_bytes, group_of_key, per_partition, key_text })
}

/// The keys' numbers in the order of `order` (ties by number). Hashes are uniform: the keys are
/// dealt into 65,536 bins by their first 16 bits, and only each bin is sorted.
fn epk_order(order: &[[u128; 3]]) -> Vec<u32> {
    let by = |a: &u32, b: &u32| order[*a as usize].cmp(&order[*b as usize]).then(a.cmp(b));
    if order.len() < 4096 {
        let mut sorted: Vec<u32> = (0..order.len() as u32).collect();
        sorted.sort_unstable_by(by);
        return sorted;
    }
    let bin = |k: usize| (order[k][0] >> 112) as usize;
    let mut starts = vec![0usize; (1 << 16) + 1];
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
    for b in 0..1 << 16 {
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
            // Hash-like numbers, with repeats (ties go by key number) and a hierarchical second level.
            let order: Vec<[u128; 3]> = (0..n as u64)
                .map(|i| {
                    let h = u128::from(scramble(i % (n as u64 - 3))) << 64 | u128::from(scramble(i));
                    [h & !(u128::MAX >> 8) | u128::from(i % 7), u128::from(scramble(i + 1)), 0]
                })
                .collect();
            let mut full: Vec<u32> = (0..n as u32).collect();
            full.sort_by(|a, b| order[*a as usize].cmp(&order[*b as usize]).then(a.cmp(b)));
            assert_eq!(epk_order(&order), full, "{n} keys");
        }
    }
}
