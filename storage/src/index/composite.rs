//! Composite indexes: tuples of values in the declared orders.

use super::*;

/// One composite index: tuples of its paths' scalars, ordered as the policy declares (each
/// component ascending or descending), so that walking it forward gives that order and backward
/// gives the order with every direction inverted: the two orders the index serves.
#[derive(Debug)]
pub(super) struct CompositeIndex {
    pub(super) paths: Vec<Vec<IndexStep>>,
    pub(super) descending: Vec<bool>,
    pub(super) values: BTreeMap<Box<[CompositeKey]>, Postings>,
    pub(super) entries: usize,
    pub(super) pending: Vec<(Box<[CompositeKey]>, u64)>,
}

/// A component of a composite tuple, ordered ascending or descending. `last` marks a bound
/// after every key (never stored): `[a, last]` follows every tuple starting with `a`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CompositeKey {
    pub(super) key: IndexKey,
    pub(super) descending: bool,
    pub(super) last: bool,
}

impl CompositeKey {
    pub(super) fn new(key: IndexKey, descending: bool) -> Self {
        CompositeKey { key, descending, last: false }
    }

    /// A stored tuple's [`IndexKey::sort_prefix`]: its first component's, inverted when that
    /// component is descending.
    pub(super) fn tuple_prefix(tuple: &[CompositeKey]) -> u128 {
        match tuple.first() {
            Some(first) if first.descending => !first.key.sort_prefix(),
            Some(first) => first.key.sort_prefix(),
            None => 0,
        }
    }
}

impl Ord for CompositeKey {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.last, other.last) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ if self.descending => other.key.cmp(&self.key),
            _ => self.key.cmp(&other.key),
        }
    }
}

impl PartialOrd for CompositeKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

// `group_sorted` marks the keys it has taken in place: no room is added for the mark.
const _: () = assert!(size_of::<Option<IndexKey>>() == size_of::<IndexKey>());

/// Groups (key, sequence number) entries into a key map, sorting them first.
///
/// The sort moves small (`prefix`, position) pairs and compares the prefixes, a number whose
/// order agrees with the keys' (see [`IndexKey::sort_prefix`]); it compares the keys only where
/// the prefixes are equal and `prefix_is_key` does not say they hold the whole key. With no
/// tie-breaker, equal keys gather in one partition step of the sort, so a path of few distinct values (a type, a city, a device) costs about `n log k`
/// comparisons, not `n log n`. Each key's sequence numbers are then sorted as integers and made
/// distinct (an array may hold a value twice).
pub(super) fn group_sorted<K: Ord>(
    entries: Vec<(K, u64)>,
    prefix: impl Fn(&K) -> u128,
    prefix_is_key: impl Fn(u128) -> bool,
) -> (BTreeMap<K, Postings>, usize) {
    let mut order: Vec<(u128, usize)> = entries.iter().enumerate().map(|(i, (k, _))| (prefix(k), i)).collect();
    order.sort_unstable_by(|a, b| match a.0.cmp(&b.0) {
        Ordering::Equal if !prefix_is_key(a.0) => entries[a.1].0.cmp(&entries[b.1].0),
        order => order,
    });
    // In place (an `Option<IndexKey>` is as large as the key): a build's entries are its
    // largest buffer, and a second one would be fresh memory, faulted in and zeroed.
    let mut entries: Vec<(Option<K>, u64)> = entries.into_iter().map(|(k, s)| (Some(k), s)).collect();
    let mut count = 0;
    let mut grouped: Vec<(K, Postings)> = Vec::new();
    let mut seqs = Vec::new();
    let mut at = 0;
    while let Some(&(first_prefix, first)) = order.get(at) {
        let Some(key) = entries[first].0.take() else { break };
        seqs.clear();
        seqs.push(entries[first].1);
        at += 1;
        while let Some(&(p, i)) = order.get(at) {
            if p != first_prefix || !prefix_is_key(p) && entries[i].0.as_ref() != Some(&key) {
                break;
            }
            seqs.push(entries[i].1);
            at += 1;
        }
        seqs.sort_unstable();
        seqs.dedup();
        count += seqs.len();
        if let Some(postings) = Postings::from_sorted(&seqs) {
            grouped.push((key, postings));
        }
    }
    (grouped.into_iter().collect(), count)
}

impl CompositeIndex {
    pub(super) fn tuple(&self, item: &StoredItem, shared: &Arc<[u8]>) -> Option<Box<[CompositeKey]>> {
        self.paths
            .iter()
            .zip(&self.descending)
            .map(|(path, &descending)| {
                Some(CompositeKey::new(key_of_doc(&scalar_at(item, path)?, shared)?, descending))
            })
            .collect()
    }

    /// The items whose tuple starts with `equal` and has its next component in `range`.
    pub(super) fn probe(
        &self,
        equal: &[IndexKey],
        range: Option<&(Bound<IndexKey>, Bound<IndexKey>)>,
        work: &mut IndexWork,
    ) -> Vec<u64> {
        let k = equal.len();
        let component = |i: usize, key: IndexKey| CompositeKey::new(key, self.descending[i]);
        let mut start: Vec<CompositeKey> = equal.iter().enumerate().map(|(i, key)| component(i, key.clone())).collect();
        // Where the range starts in this index's order: its lower bound ascending, its upper
        // bound descending.
        let descending = self.descending.get(k).copied().unwrap_or(false);
        if let Some((lower, upper)) = range {
            let first = if descending { upper } else { lower };
            if let Bound::Included(key) | Bound::Excluded(key) = first {
                start.push(component(k, key.clone()));
            }
        }
        let start: Box<[CompositeKey]> = start.into();
        let mut out = Vec::new();
        for (tuple, postings) in self.values.range::<Box<[CompositeKey]>, _>((Bound::Included(start), Bound::Unbounded))
        {
            if tuple.len() < k || tuple[..k].iter().zip(equal).any(|(c, e)| c.key != *e) {
                break;
            }
            if let Some((lower, upper)) = range {
                let Some(key) = tuple.get(k).map(|c| &c.key) else { break };
                let below = match lower {
                    Bound::Included(l) => key < l,
                    Bound::Excluded(l) => key <= l,
                    Bound::Unbounded => false,
                };
                let above = match upper {
                    Bound::Included(u) => key > u,
                    Bound::Excluded(u) => key >= u,
                    Bound::Unbounded => false,
                };
                // Past the far end of the range: nothing further matches.
                if (descending && below) || (!descending && above) {
                    break;
                }
                if below || above {
                    continue;
                }
            }
            work.entries += postings.len() as u64;
            postings.extend_into(&mut out);
        }
        out
    }

    /// Whether this index orders by `keys` (paths with directions): `Some(false)` walking
    /// forward, `Some(true)` walking backward (every direction inverted), `None` if it cannot.
    pub(super) fn serves(&self, keys: &[(Vec<IndexStep>, bool)]) -> Option<bool> {
        if self.paths.len() != keys.len() || self.paths.iter().zip(keys).any(|(p, (k, _))| p != k) {
            return None;
        }
        if self.descending.iter().zip(keys).all(|(d, (_, k))| d == k) {
            Some(false)
        } else if self.descending.iter().zip(keys).all(|(d, (_, k))| d != k) {
            Some(true)
        } else {
            None
        }
    }
}
