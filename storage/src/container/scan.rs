//! Scans: every item in EPK and creation order, a chunk of items under the partition's lock at a
//! time, resumable from an item position.

use super::*;

/// Where an item is in scan order: its logical partition's EPK, then its creation sequence.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ItemPosition {
    pub epk: Epk,
    pub seq: u64,
}

impl ItemPosition {
    /// The position before every item of `[epk, ...)`.
    pub fn start_of(epk: Epk) -> Self {
        ItemPosition { epk, seq: 0 }
    }

    /// The position right after this one.
    pub fn next(&self) -> Self {
        ItemPosition { epk: self.epk.clone(), seq: self.seq + 1 }
    }
}

/// Items with their positions, in scan order (see [`Container::scan_range`]). It reads a chunk of
/// items under a partition's read lock at a time, so writers are never blocked for long.
#[derive(Debug)]
pub struct Scan<'a> {
    container: &'a Container,
    cursor: Option<(Epk, u64)>,
    end: Epk,
    buffer: std::vec::IntoIter<(ItemPosition, StoredItem)>,
}

impl<'a> Scan<'a> {
    /// The items alone, without their positions.
    pub fn items(self) -> impl Iterator<Item = StoredItem> + 'a {
        self.map(|(_, item)| item)
    }
}

impl Iterator for Scan<'_> {
    type Item = (ItemPosition, StoredItem);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(entry) = self.buffer.next() {
                return Some(entry);
            }
            let cursor = self.cursor.take()?;
            if cursor.0 >= self.end {
                return None;
            }
            let (items, next) = self.container.scan_chunk_with(&cursor, &self.end, SCAN_CHUNK, |epk, item| {
                (ItemPosition { epk: epk.clone(), seq: item.meta.seq }, item.clone())
            });
            self.cursor = next;
            self.buffer = items.into_iter();
        }
    }
}

impl Container {
    /// Every item, in scan order: by the EPK of its logical partition, then by creation.
    pub fn scan(&self) -> Scan<'_> {
        self.expire();
        self.scan_range(Epk::min(), Epk::max())
    }

    /// The items whose EPK is in `[min, max)`, in scan order. Each item is seen exactly once even
    /// when partitions split during the scan; items written during the scan may or may not be seen.
    pub fn scan_range(&self, min: Epk, max: Epk) -> Scan<'_> {
        self.scan_from(ItemPosition::start_of(min), max)
    }

    /// Like [`Container::scan_range`], starting at `from` (the items at or after that position).
    /// Positions do not depend on how the EPK space is split into physical partitions, so a scan
    /// can resume from one across splits.
    pub fn scan_from(&self, from: ItemPosition, max: Epk) -> Scan<'_> {
        Scan { container: self, cursor: Some((from.epk, from.seq)), end: max, buffer: Vec::new().into_iter() }
    }

    /// The items of one logical partition, in creation order.
    pub fn scan_partition_key(&self, key: &PartitionKey) -> Result<Vec<StoredItem>> {
        self.expire();
        let epk = self.key_epk(key)?;
        Ok(self.read_partition(&epk, |data| {
            data.logical.get(&epk).map(|lp| lp.iter_from(0).cloned().collect()).unwrap_or_default()
        }))
    }

    /// Fills up to `limit` entries (made by `f` from each item and its logical partition's EPK)
    /// from `cursor` on; returns them and the next cursor (`None` at the end of the range).
    pub(super) fn scan_chunk_with<T>(
        &self,
        cursor: &(Epk, u64),
        end: &Epk,
        limit: usize,
        f: impl Fn(&Epk, &StoredItem) -> T,
    ) -> (Vec<T>, Option<(Epk, u64)>) {
        let map = self.partitions.read();
        let p = &map[Self::index_for(&map, &cursor.0)];
        let data = p.data.read();
        let stop = if p.max < *end { &p.max } else { end };
        let mut out = Vec::new();
        let range = (Bound::Included(&cursor.0), Bound::Excluded(stop));
        for (epk, lp) in data.logical.range::<Epk, _>(range) {
            let from = if *epk == cursor.0 { cursor.1 } else { 0 };
            for item in lp.iter_from(from) {
                if out.len() == limit {
                    return (out, Some((epk.clone(), item.meta.seq)));
                }
                out.push(f(epk, item));
            }
        }
        let next = if *stop < *end { Some((stop.clone(), 0)) } else { None };
        (out, next)
    }
}
