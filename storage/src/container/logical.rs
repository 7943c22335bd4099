//! A logical partition: the items of one partition key value in creation order (slots by id and by
//! sequence), their unique-key values, and compaction.

use super::*;

/// A slot of a logical partition's item list.
#[derive(Debug)]
pub(super) enum Slot {
    Live(StoredItem),
    /// A deleted item's place, kept until the next compaction so positions stay put.
    Dead(u64),
}

impl Slot {
    pub(super) fn seq(&self) -> u64 {
        match self {
            Slot::Live(item) => item.meta.seq,
            Slot::Dead(seq) => *seq,
        }
    }
}

/// The items of one partition key value, in creation order: a slot vector (cache-friendly scans,
/// one lookup per point read) indexed by id.
#[derive(Debug)]
pub(super) struct LogicalPartition {
    pub(super) key: PartitionKey,
    /// Its EPK, shared with the change feed's entries.
    pub(super) epk: Arc<Epk>,
    /// Item ids to slot positions (the ids themselves are the items').
    pub(super) ids: IdTable,
    /// Items by increasing creation sequence number (assigned under the partition's write lock).
    pub(super) slots: Vec<Slot>,
    pub(super) bytes: u64,
    /// Under a unique key policy: each item's unique values (see `Container::unique_values`) to
    /// its id.
    pub(super) unique: HashMap<String, Arc<str>, foldhash::fast::RandomState>,
    /// Its items in the order of their values at paths queries walked (built by a read, under the
    /// partition's read lock; writes hold the write lock and reach them without locking).
    pub(super) orders: Mutex<LocalOrders>,
}

impl LogicalPartition {
    pub(super) fn new(key: PartitionKey, epk: &Epk) -> Self {
        LogicalPartition {
            key,
            epk: Arc::new(epk.clone()),
            ids: IdTable::default(),
            slots: Vec::new(),
            bytes: 0,
            unique: HashMap::default(),
            orders: Mutex::default(),
        }
    }

    /// A 409 if another item than `id` holds one of `values`.
    pub(super) fn check_unique(&self, id: &str, values: &[String]) -> Result<()> {
        if values.iter().any(|v| self.unique.get(v).is_some_and(|owner| &**owner != id)) {
            return Err(StorageError::conflict("Unique index constraint violation."));
        }
        Ok(())
    }

    pub(super) fn unindex_unique(&mut self, values: &[String]) {
        for v in values {
            self.unique.remove(v);
        }
    }

    pub(super) fn index_unique(&mut self, id: &Arc<str>, values: Vec<String>) {
        for v in values {
            self.unique.insert(v, Arc::clone(id));
        }
    }

    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.ids.len() == 0
    }

    pub(super) fn get(&self, id: &str) -> Option<&StoredItem> {
        match self.slots.get(self.ids.find(id, &self.slots)? as usize)? {
            Slot::Live(item) => Some(item),
            Slot::Dead(_) => None,
        }
    }

    /// The live item with this sequence number (items are in sequence order).
    pub(super) fn get_seq(&self, seq: u64) -> Option<&StoredItem> {
        let at = seq_position(&self.slots, seq).ok()?;
        match &self.slots[at] {
            Slot::Live(item) => Some(item),
            Slot::Dead(_) => None,
        }
    }

    pub(super) fn contains(&self, id: &str) -> bool {
        self.ids.find(id, &self.slots).is_some()
    }

    /// Appends a new item whose id is `id` (its sequence number is the largest so far).
    pub(super) fn push(&mut self, id: &str, item: StoredItem) {
        self.bytes += item.doc.len() as u64;
        self.orders.get_mut().added(&item);
        self.ids.insert(id, self.slots.len() as u32);
        self.slots.push(Slot::Live(item));
    }

    /// Replaces a live item; returns the old one.
    pub(super) fn replace(&mut self, id: &str, item: StoredItem) -> Option<StoredItem> {
        let at = self.ids.find(id, &self.slots)?;
        let slot = self.slots.get_mut(at as usize)?;
        let Slot::Live(old) = slot else { return None };
        self.bytes = self.bytes - old.doc.len() as u64 + item.doc.len() as u64;
        let orders = self.orders.get_mut();
        orders.removed(old);
        orders.added(&item);
        Some(std::mem::replace(old, item))
    }

    /// Removes a live item; returns its id and the item.
    pub(super) fn remove(&mut self, id: &str) -> Option<(Arc<str>, StoredItem)> {
        let index = self.ids.remove(id, &self.slots)?;
        let id = Arc::from(id);
        let slot = self.slots.get_mut(index as usize)?;
        let seq = slot.seq();
        let Slot::Live(old) = std::mem::replace(slot, Slot::Dead(seq)) else { return None };
        self.bytes -= old.doc.len() as u64;
        self.orders.get_mut().removed(&old);
        let dead = self.slots.len() - self.ids.len();
        if dead > 32 && dead > self.ids.len() {
            self.compact();
        }
        Some((id, old))
    }

    /// Puts the items back in sequence order (and drops dead slots). Replaying a log can put
    /// them out of order: a write logged while a checkpoint was copying comes before the copy of
    /// the items created before it. Returns a sequence number two items share, if any (a
    /// damaged log: scans go by them).
    pub(super) fn sort_by_seq(&mut self) -> Option<u64> {
        if self.slots.windows(2).all(|w| w[0].seq() < w[1].seq()) {
            return None;
        }
        let mut live: Vec<StoredItem> = std::mem::take(&mut self.slots)
            .into_iter()
            .filter_map(|s| match s {
                Slot::Live(item) => Some(item),
                Slot::Dead(_) => None,
            })
            .collect();
        live.sort_by_key(|item| item.meta.seq);
        let shared = live.windows(2).find(|w| w[0].meta.seq == w[1].meta.seq).map(|w| w[0].meta.seq);
        self.slots = live.into_iter().map(Slot::Live).collect();
        self.ids.rebuild(&self.slots);
        shared
    }

    /// Drops dead slots and renumbers positions.
    pub(super) fn compact(&mut self) {
        let mut new_index = Vec::with_capacity(self.slots.len());
        let mut next = 0u32;
        for slot in &self.slots {
            new_index.push(next);
            if matches!(slot, Slot::Live(_)) {
                next += 1;
            }
        }
        self.slots.retain(|s| matches!(s, Slot::Live(_)));
        for index in self.ids.positions_mut() {
            *index = new_index[*index as usize];
        }
    }

    /// Puts back an item removed earlier (a rolled-back delete), at its place in creation order.
    pub(super) fn restore(&mut self, id: &str, item: StoredItem) {
        let seq = item.meta.seq;
        self.bytes += item.doc.len() as u64;
        self.orders.get_mut().added(&item);
        let pos = self.slots.partition_point(|s| s.seq() < seq);
        if matches!(self.slots.get(pos), Some(Slot::Dead(s)) if *s == seq) {
            self.slots[pos] = Slot::Live(item);
        } else {
            self.slots.insert(pos, Slot::Live(item));
            for index in self.ids.positions_mut() {
                if *index as usize >= pos {
                    *index += 1;
                }
            }
        }
        self.ids.insert(id, pos as u32);
    }

    /// Live items whose sequence number is at least `from`, in creation order.
    pub(super) fn iter_from(&self, from: u64) -> impl Iterator<Item = &StoredItem> + Clone {
        let start = self.slots.partition_point(|s| s.seq() < from);
        self.slots[start..].iter().filter_map(|s| match s {
            Slot::Live(item) => Some(item),
            Slot::Dead(_) => None,
        })
    }
}

/// Where `seq` is among slots in sequence order, as `binary_search` answers (`Err`: where it would
/// go). Sequence numbers grow by about the same step through a logical partition (items of many
/// keys interleave as they are written), so a few guesses in proportion to the ends' numbers land
/// on it or next to it: a handful of slots read where a binary search reads ten for a thousand
/// items, each likely a cache miss (a range query fetches its results this way). Past a few
/// guesses (numbers that cluster) a binary search finishes.
fn seq_position(slots: &[Slot], seq: u64) -> Result<usize, usize> {
    // The answer is in lo..=hi.
    let (mut lo, mut hi) = (0usize, slots.len());
    for _ in 0..4 {
        if hi - lo < 8 {
            break;
        }
        let (first, last) = (slots[lo].seq(), slots[hi - 1].seq());
        if seq <= first {
            return if seq == first { Ok(lo) } else { Err(lo) };
        }
        if seq >= last {
            return if seq == last { Ok(hi - 1) } else { Err(hi) };
        }
        // first < seq < last, so the span is not zero and the guess falls inside.
        let span = u128::from(last - first);
        let offset = u128::from(seq - first) * (hi - 1 - lo) as u128 / span;
        let guess = (lo + offset as usize).clamp(lo + 1, hi - 2);
        match slots[guess].seq().cmp(&seq) {
            std::cmp::Ordering::Equal => return Ok(guess),
            std::cmp::Ordering::Less => lo = guess + 1,
            std::cmp::Ordering::Greater => hi = guess,
        }
    }
    slots[lo..hi].binary_search_by(|s| s.seq().cmp(&seq)).map(|i| lo + i).map_err(|i| lo + i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn slots(seqs: &[u64]) -> Vec<Slot> {
        seqs.iter().map(|s| Slot::Dead(*s)).collect()
    }

    proptest! {
        /// The guesses find what a binary search finds: every present number, and where each
        /// absent one would go, for steps even, clustered, or repeated (a damaged log).
        #[test]
        fn seq_position_answers_as_binary_search(
            steps in prop::collection::vec(prop_oneof![Just(0u64), 1u64..4, 1u64..1000, Just(1u64 << 40)], 0..300),
            start in 0u64..10,
        ) {
            let mut seqs = Vec::with_capacity(steps.len());
            let mut at = start;
            for s in steps {
                at += s;
                seqs.push(at);
            }
            let slots = slots(&seqs);
            let repeated = seqs.windows(2).any(|w| w[0] == w[1]);
            for probe in seqs.iter().flat_map(|s| [s.saturating_sub(1), *s, s + 1]).chain([0, u64::MAX]) {
                let got = seq_position(&slots, probe);
                match seqs.binary_search(&probe) {
                    Ok(_) => {
                        let at = got.expect("a present number is found");
                        prop_assert_eq!(seqs[at], probe);
                    }
                    Err(want) => prop_assert_eq!(got, Err(want)),
                }
                if !repeated {
                    prop_assert_eq!(got, seqs.binary_search(&probe));
                }
            }
        }
    }
}
