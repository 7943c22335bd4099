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
        self.read_log(
            id,
            from,
            room,
            |data| data.changes(),
            |data, _, (epk, seq)| {
                if **epk < *lo || **epk >= *hi {
                    return None;
                }
                let item = data.logical.get(&**epk)?.get_seq(*seq)?;
                min_ts.is_none_or(|t| item.meta.ts >= t).then(|| (item.clone(), Epk::clone(epk)))
            },
        )
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
        self.read_log(
            id,
            from,
            room,
            |data| &data.history,
            |_, lsn, change| {
                let inside = change.epk >= *lo && change.epk < *hi && min_ts.is_none_or(|t| change.ts >= t);
                inside.then(|| (lsn, change.clone()))
            },
        )
    }

    /// The one loop of the change feed's readers: the entries of physical partition `id`'s log
    /// (`log`) after LSN `from` that `keep` keeps, at most `room`, and the LSN read up to. A
    /// partition gone since (split, retired) gives nothing and keeps `from`.
    fn read_log<E, T>(
        &self,
        id: u32,
        from: u64,
        room: usize,
        log: impl Fn(&PartitionData) -> &BTreeMap<u64, E>,
        mut keep: impl FnMut(&PartitionData, u64, &E) -> Option<T>,
    ) -> (Vec<T>, u64) {
        let map = self.partitions.read();
        let Some(p) = map.iter().find(|p| p.id == id) else { return (Vec::new(), from) };
        let data = p.data.read();
        if data.retired || room == 0 {
            return (Vec::new(), from);
        }
        let mut out = Vec::new();
        let mut upto = from;
        for (lsn, entry) in log(&data).range(from.saturating_add(1)..) {
            upto = *lsn;
            if let Some(kept) = keep(&data, *lsn, entry) {
                out.push(kept);
                if out.len() == room {
                    break;
                }
            }
        }
        (out, upto)
    }
}
