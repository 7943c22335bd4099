//! A logical partition's ids: each live item's slot position, found by the id its item holds.
//! The table keeps positions and 32 bits of each id's hash, not the ids (the items hold them):
//! a copy of every id with its table entry was about 100 bytes an item, a tenth of a million
//! telemetry items' memory.

use std::hash::BuildHasher;

use super::Slot;

/// Slot positions by the ids of their items (see the module's note).
#[derive(Debug, Default)]
pub(super) struct IdTable {
    /// (position, the id's 32-bit hash): a growing table rehashes from the stored hashes,
    /// without reading the items.
    table: hashbrown::HashTable<(u32, u32)>,
    hasher: foldhash::fast::RandomState,
}

/// A table hash from 32 bits: the multiplication spreads them over the 64 (the table takes its
/// control bits from the top and its bucket from the bottom).
fn spread(h: u32) -> u64 {
    u64::from(h).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The id of the live item at `at`.
fn id_at(slots: &[Slot], at: u32) -> Option<&str> {
    match slots.get(at as usize)? {
        Slot::Live(item) => item.doc.root().get("id")?.as_str(),
        Slot::Dead(_) => None,
    }
}

impl IdTable {
    fn hash(&self, id: &str) -> u32 {
        self.hasher.hash_one(id) as u32
    }

    pub(super) fn len(&self) -> usize {
        self.table.len()
    }

    /// The position among `slots` of the live item whose id is `id`.
    pub(super) fn find(&self, id: &str, slots: &[Slot]) -> Option<u32> {
        let h = self.hash(id);
        self.table.find(spread(h), |&(at, eh)| eh == h && id_at(slots, at) == Some(id)).map(|&(at, _)| at)
    }

    /// Enters `id` at `at` (the item is in `slots[at]`, and no other live item has this id).
    pub(super) fn insert(&mut self, id: &str, at: u32) {
        let h = self.hash(id);
        self.table.insert_unique(spread(h), (at, h), |&(_, h)| spread(h));
    }

    /// Removes `id`; its position, if it was there.
    pub(super) fn remove(&mut self, id: &str, slots: &[Slot]) -> Option<u32> {
        let h = self.hash(id);
        let entry = self.table.find_entry(spread(h), |&(at, eh)| eh == h && id_at(slots, at) == Some(id)).ok()?;
        Some(entry.remove().0 .0)
    }

    /// Every position, to renumber them.
    pub(super) fn positions_mut(&mut self) -> impl Iterator<Item = &mut u32> {
        self.table.iter_mut().map(|(at, _)| at)
    }

    /// Enters every live item of `slots` again (after they were reordered).
    pub(super) fn rebuild(&mut self, slots: &[Slot]) {
        self.table.clear();
        for at in 0..slots.len() as u32 {
            if let Some(id) = id_at(slots, at) {
                self.insert(id, at);
            }
        }
    }
}
