//! What the analytical store (the `analytics` crate's columnar mirror) reads of a container: its
//! analytical time to live, and a physical partition's changes and live items, each read under
//! the partition's read lock so that what it returns is one moment of the partition.

use super::*;

/// What changed in one physical partition since an LSN ([`Container::partition_delta`]).
#[derive(Debug, Clone)]
pub struct PartitionDelta {
    /// The items written after the LSN, each in its latest version, with its logical
    /// partition's EPK, in position order (EPK, then creation sequence): the order a mirror
    /// partition files them in. Their LSNs (`meta.lsn`) give the order they were written in.
    pub changes: Vec<(StoredItem, Epk)>,
    /// The LSN read up to (the given one when nothing changed).
    pub lsn: u64,
    /// The partition's live items at that moment: a mirror that held every live item before and
    /// took `changes` holds more than this exactly when items were deleted.
    pub items: usize,
}

impl Container {
    /// The analytical store's time to live (`analyticalStorageTtl`): `None` (or `0`, the same)
    /// when the container has no analytical store, `-1` to keep every item written, `n` to keep
    /// an item `n` seconds after its last write. Apart from the transactional time to live: an
    /// item expired from the container stays in the analytical store for as long as this says.
    pub fn analytical_ttl(&self) -> Option<i64> {
        *self.analytical_ttl.read()
    }

    /// Sets the analytical time to live (400 for a value other than `0`, `-1` or 1 to
    /// 2,147,483,647; `0` turns the analytical store off, as `None`), durably in a durable store.
    pub fn set_analytical_ttl(&self, ttl: Option<i64>) -> Result<()> {
        *self.analytical_ttl.write() = checked_analytical_ttl(ttl)?;
        self.persist_properties()
    }

    /// When an item written with `meta` expires from the container (Unix seconds), under the
    /// current default time to live; `None` when it never does.
    pub fn item_expiry(&self, meta: &ItemMeta) -> Option<u64> {
        self.expires_at(meta)
    }

    /// The items of physical partition `id` written after LSN `from`, the LSN read up to and the
    /// partition's live item count, all of one moment; `None` when the partition is gone (split:
    /// its children hold its items).
    ///
    /// From LSN 0 (a mirror's first build) every live item is a change: they are read off the
    /// logical partitions, in position order already, and the change feed's map by LSN is not
    /// needed (nor built, when nothing read the change feed yet: its first incremental read
    /// builds it). Past LSN 0, the map gives the changes, sorted into position order here.
    pub fn partition_delta(&self, id: u32, from: u64) -> Option<PartitionDelta> {
        self.expire();
        let map = self.partitions.read();
        let p = map.iter().find(|p| p.id == id)?;
        let data = p.data.read();
        if data.retired {
            return None;
        }
        let mut lsn = from;
        let mut changes = Vec::new();
        if from == 0 {
            changes.reserve_exact(data.items);
            for lp in data.logical.values() {
                for item in lp.iter_from(0) {
                    lsn = lsn.max(item.meta.lsn);
                    changes.push((item.clone(), Epk::clone(&lp.epk)));
                }
            }
        } else {
            for (at, (epk, seq)) in data.changes().range(from.saturating_add(1)..) {
                lsn = *at;
                if let Some(item) = data.logical.get(&**epk).and_then(|lp| lp.get_seq(*seq)) {
                    changes.push((item.clone(), Epk::clone(epk)));
                }
            }
            changes.sort_unstable_by(|(a, at), (b, bt)| at.cmp(bt).then(a.meta.seq.cmp(&b.meta.seq)));
        }
        Some(PartitionDelta { changes, lsn, items: data.items })
    }

    /// The positions (logical partition EPK, creation sequence) of physical partition `id`'s live
    /// items, in scan order; `None` when the partition is gone.
    pub fn partition_positions(&self, id: u32) -> Option<Vec<ItemPosition>> {
        let map = self.partitions.read();
        let p = map.iter().find(|p| p.id == id)?;
        let data = p.data.read();
        if data.retired {
            return None;
        }
        let mut out = Vec::with_capacity(data.items);
        for (epk, lp) in &data.logical {
            out.extend(lp.iter_from(0).map(|item| ItemPosition { epk: epk.clone(), seq: item.meta.seq }));
        }
        Some(out)
    }
}
