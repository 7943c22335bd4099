//! A logical partition's items in the order of their value at one path: built when a query
//! pinned to the logical partition first walks that order, and kept in step with every write to
//! the logical partition after that. A one-partition `ORDER BY` then reads its own entries only,
//! where the physical partition's range index interleaves every logical partition's (at
//! 1,000,000 telemetry items Q3 read 421 of those entries for its 10 rows).

use super::*;
use crate::index::item_key;

/// The most paths whose order one logical partition keeps; building another drops the oldest.
const MAX_ORDERS: usize = 4;

/// The orders a logical partition keeps (none until a query asks for one).
#[derive(Debug, Default)]
pub(super) struct LocalOrders {
    orders: Vec<LocalOrder>,
}

/// Every item's (key at `path`, sequence number), ascending: the range index's order for these
/// items, forward for ascending walks and backward for descending ones ([`crate::index::tie_order`]).
#[derive(Debug)]
struct LocalOrder {
    path: Vec<IndexStep>,
    entries: Vec<(IndexKey, u64)>,
}

impl LocalOrders {
    /// An item entered the logical partition. An order whose path the item holds no scalar at
    /// can no longer give every item: it is dropped (the query sorts instead, as the index's
    /// check of the physical partition would make it do anyway).
    pub(super) fn added(&mut self, item: &StoredItem) {
        let seq = item.meta.seq;
        self.orders.retain_mut(|order| match item_key(item, &order.path) {
            Some(key) => {
                let at = order.entries.partition_point(|(k, s)| (k, *s) < (&key, seq));
                order.entries.insert(at, (key, seq));
                true
            }
            None => false,
        });
    }

    /// An item left the logical partition (the same bytes and metadata it was added with).
    pub(super) fn removed(&mut self, item: &StoredItem) {
        let seq = item.meta.seq;
        self.orders.retain_mut(|order| {
            let Some(key) = item_key(item, &order.path) else { return false };
            match order.entries.binary_search_by(|(k, s)| (k, *s).cmp(&(&key, seq))) {
                Ok(at) => {
                    order.entries.remove(at);
                    true
                }
                // Not there: the order no longer mirrors the items; build it again when asked.
                Err(_) => false,
            }
        });
    }

    /// Bytes held (for memory reports).
    pub(super) fn heap_bytes(&self) -> usize {
        self.orders.iter().map(|o| o.entries.capacity() * size_of::<(IndexKey, u64)>()).sum()
    }

    /// Up to `limit` (key, sequence number) entries of `items` (the logical partition's live
    /// items) in the order of their keys at `path`, descending if `descending` (sequence numbers
    /// in the same direction), strictly after `after`. The order is built from `items` the
    /// first time. `None` when an item has no scalar at the path.
    pub(super) fn walk<'i>(
        &mut self,
        path: &[IndexStep],
        descending: bool,
        after: Option<&(IndexKey, u64)>,
        limit: usize,
        items: impl Iterator<Item = &'i StoredItem>,
    ) -> Option<Vec<(IndexKey, u64)>> {
        let at = match self.orders.iter().position(|o| o.path == path) {
            Some(at) => at,
            None => {
                let mut entries =
                    items.map(|item| Some((item_key(item, path)?, item.meta.seq))).collect::<Option<Vec<_>>>()?;
                entries.sort_unstable();
                if self.orders.len() == MAX_ORDERS {
                    self.orders.remove(0);
                }
                self.orders.push(LocalOrder { path: path.to_vec(), entries });
                self.orders.len() - 1
            }
        };
        let entries = &self.orders[at].entries;
        let after = after.map(|(k, s)| (k, *s));
        Some(if descending {
            let end = after.map_or(entries.len(), |a| entries.partition_point(|(k, s)| (k, *s) < a));
            entries[..end].iter().rev().take(limit).cloned().collect()
        } else {
            let start = after.map_or(0, |a| entries.partition_point(|(k, s)| (k, *s) <= a));
            entries[start..].iter().take(limit).cloned().collect()
        })
    }
}
