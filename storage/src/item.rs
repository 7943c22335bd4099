//! An item as the store keeps it: its encoded document and its system metadata.

use crate::doc::Doc;

/// An item as stored: its encoded properties and its system metadata. Cloning is cheap (the
/// document bytes are shared).
#[derive(Debug, Clone)]
pub struct StoredItem {
    /// The user's properties (including a synthetic key), without system properties.
    pub doc: Doc,
    pub meta: ItemMeta,
}

/// System metadata of a stored item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemMeta {
    /// Creation sequence number in the container: the item's order inside its logical partition
    /// and the source of its `_rid`.
    pub seq: u64,
    /// Sequence number of the last write (the source of `_etag`).
    pub lsn: u64,
    /// Seconds since the Unix epoch of the last write (`_ts`).
    pub ts: u64,
    /// The item's own time to live (its `ttl` property, when an integer).
    pub ttl: Option<i64>,
}

impl ItemMeta {
    /// The `_etag` value.
    pub fn etag(&self) -> String {
        format!("\"{:08x}-0000-0000-0000-{:012x}\"", self.lsn >> 48, self.lsn & 0xFFFF_FFFF_FFFF)
    }
}
