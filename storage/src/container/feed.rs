//! Reading a partition's change feed: the latest version of each item changed (LSN order) and,
//! with a retention, every write and delete.

use super::*;

/// What [`Container::changes_in`] reads of one partition's change feed: items with their EPKs, and
/// the LSN read up to.
pub(crate) type PartitionChanges = (Vec<(StoredItem, Epk)>, u64);

impl Container {
    /// The LSN of the last write so far (0 before any).
    pub fn last_lsn(&self) -> u64 {
        self.next_lsn.load(Ordering::Relaxed).saturating_sub(1)
    }

    /// The change feed of physical partition `id` after LSN `from`, in `[lo, hi)`, last written
    /// at or after `min_ts`: at most `room` items with their EPKs, and the LSN read up to. A
    /// partition gone since (split) gives nothing and keeps `from`: the next read finds its
    /// children.
    pub(crate) fn changes_in(
        &self,
        id: u32,
        (lo, hi): (&Epk, &Epk),
        from: u64,
        min_ts: Option<u64>,
        room: usize,
    ) -> PartitionChanges {
        let map = self.partitions.read();
        let Some(p) = map.iter().find(|p| p.id == id) else { return (Vec::new(), from) };
        let data = p.data.read();
        if data.retired || room == 0 {
            return (Vec::new(), from);
        }
        let mut items = Vec::new();
        let mut upto = from;
        for (lsn, (epk, item_id)) in data.changes.range(from.saturating_add(1)..) {
            upto = *lsn;
            if epk < lo || epk >= hi {
                continue;
            }
            let Some(item) = existing(&data, epk, item_id) else { continue };
            if min_ts.is_some_and(|t| item.meta.ts < t) {
                continue;
            }
            items.push((item, epk.clone()));
            if items.len() == room {
                break;
            }
        }
        (items, upto)
    }

    /// The kept writes of physical partition `id` after LSN `from`, in `[lo, hi)`, at or after
    /// `min_ts`: at most `room`, and the LSN read up to (see [`Self::changes_in`]).
    pub(crate) fn history_in(
        &self,
        id: u32,
        (lo, hi): (&Epk, &Epk),
        from: u64,
        min_ts: Option<u64>,
        room: usize,
    ) -> (Vec<(u64, Change)>, u64) {
        let map = self.partitions.read();
        let Some(p) = map.iter().find(|p| p.id == id) else { return (Vec::new(), from) };
        let data = p.data.read();
        if data.retired || room == 0 {
            return (Vec::new(), from);
        }
        let mut out = Vec::new();
        let mut upto = from;
        for (lsn, change) in data.history.range(from.saturating_add(1)..) {
            upto = *lsn;
            if change.epk < *lo || change.epk >= *hi || min_ts.is_some_and(|t| change.ts < t) {
                continue;
            }
            out.push((*lsn, change.clone()));
            if out.len() == room {
                break;
            }
        }
        (out, upto)
    }
}
