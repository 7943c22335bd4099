//! Building a partition's index in bulk (an import, an index transformation, a split's
//! children): every item's entries are collected, then sorted and loaded into full nodes, several
//! times faster than entering the items one by one, and smaller.

use super::*;

/// The items a bulk build enters before it reserves room for every path's entries, in
/// proportion (see `PathNode::reserve_pending`).
const SAMPLE_ITEMS: usize = 64;

/// How much more than its estimate a bulk build reserves.
const RESERVE_SLACK: f64 = 1.1;

/// How many times its entries so far a bulk build makes room for, after `sample_bytes` of its
/// `total_bytes` of items brought `entries`: in proportion to the bytes, but with room for at most
/// one entry per 8 bytes of items in all (about 5 bytes for each of theirs; telemetry items need
/// one per 16).
fn reserve_factor(entries: usize, sample_bytes: usize, total_bytes: usize) -> f64 {
    let factor = total_bytes as f64 / sample_bytes.max(1) as f64;
    let predicted = entries as f64 * factor * RESERVE_SLACK;
    let cap = (total_bytes / 8) as f64;
    if predicted > cap {
        factor * cap / predicted
    } else {
        factor
    }
}

impl PathNode {
    /// Makes room in every node's collected entries for `factor` times as many (a bulk build's
    /// estimate from its first items), [`RESERVE_SLACK`] more for the estimate's error.
    fn reserve_pending(&mut self, factor: f64) {
        let more = (self.pending.len() as f64 * factor * RESERVE_SLACK) as usize;
        self.pending.reserve(more.saturating_sub(self.pending.len()));
        for child in self.keys.values_mut() {
            child.reserve_pending(factor);
        }
        if let Some(e) = &mut self.element {
            e.reserve_pending(factor);
        }
    }

    /// The entries collected so far, in this node and below.
    fn pending_entries(&self) -> usize {
        self.pending.len()
            + self.keys.values().map(PathNode::pending_entries).sum::<usize>()
            + self.element.as_ref().map_or(0, |e| e.pending_entries())
    }

    /// Sorts the collected entries into `values` (a bulk load: full nodes, no searches).
    fn finish_build(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        let (values, entries) = group_sorted(pending, IndexKey::sort_prefix, IndexKey::prefix_is_key);
        self.values = values;
        self.entries = entries;
        for child in self.keys.values_mut() {
            child.finish_build();
        }
        if let Some(e) = &mut self.element {
            e.finish_build();
        }
    }
}

impl PartitionIndex {
    /// Builds the index of many items at once: their entries are collected, sorted, and loaded
    /// into full nodes (several times faster than entering the items one by one, and smaller).
    pub fn build<'a, I>(policy: Arc<IndexingPolicy>, items: I) -> Self
    where
        I: IntoIterator<Item = (&'a Epk, &'a StoredItem)>,
        I::IntoIter: Clone,
    {
        let mut index = PartitionIndex::new(policy);
        let items = items.into_iter();
        index.locations.reserve(items.size_hint().0);
        let total_bytes: usize = items.clone().map(|(_, item)| item.doc.len()).sum();
        let mut sample_bytes = 0;
        for (n, (epk, item)) in items.enumerate() {
            index.locate(epk, item.meta.seq);
            index.apply(item, Change::Collect);
            if n < SAMPLE_ITEMS {
                sample_bytes += item.doc.len();
            }
            if n + 1 == SAMPLE_ITEMS && total_bytes > 2 * sample_bytes {
                // Each path's entries in the first items, per byte of them, tell how many the
                // rest will bring: room for them now saves the copies of growing vectors. The
                // room is capped by the items' bytes (`reserve_factor`), so first items unlike
                // the rest cannot make a build hold much more than its items.
                index.root.reserve_pending(reserve_factor(index.root.pending_entries(), sample_bytes, total_bytes));
            }
        }
        index.root.finish_build();
        for c in &mut index.composites {
            let (values, entries) =
                group_sorted(std::mem::take(&mut c.pending), |t| CompositeKey::tuple_prefix(t), |_| false);
            c.values = values;
            c.entries = entries;
        }
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn a_bulk_build_reserves_in_proportion_within_its_cap() {
        // Telemetry-like: 12 entries an item of 200 bytes, 1,000,000 items: room for all of them.
        let factor = reserve_factor(256 * 12, 256 * 200, 1_000_000 * 200);
        assert!((factor - 1_000_000.0 / 256.0).abs() < 1e-6);
        // First items unlike the rest (each 100 small numbers, then items of one long string):
        // the room stays under one entry per 8 bytes of items.
        for (entries, sample_bytes, total_bytes) in [(25_600, 256 * 110, 500_000_000), (1, 1, 1 << 40), (10, 0, 1000)] {
            let factor = reserve_factor(entries, sample_bytes, total_bytes);
            assert!(entries as f64 * factor * RESERVE_SLACK <= (total_bytes / 8) as f64 + 1.0, "{entries} {factor}");
        }
    }
}
