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
        // `"hhhhhhhh-0000-0000-0000-llllllllllll"`: the sequence number's top 16 bits in 8 hex
        // digits and its low 48 bits in 12, written in place (a format! was most of an item's
        // system properties).
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut text = *b"\"00000000-0000-0000-0000-000000000000\"";
        let (high, low) = (self.lsn >> 48, self.lsn & 0xFFFF_FFFF_FFFF);
        for i in 0..8 {
            text[8 - i] = HEX[((high >> (4 * i)) & 0xF) as usize];
        }
        for i in 0..12 {
            text[36 - i] = HEX[((low >> (4 * i)) & 0xF) as usize];
        }
        // ASCII by construction.
        std::str::from_utf8(&text).map(str::to_owned).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::ItemMeta;

    #[test]
    fn etags_are_the_sequence_number_in_hex() {
        for lsn in [0, 1, 0xabc, 0xFFFF_FFFF_FFFF, 0x0001_0000_0000_0000, 0x1234_5678_9abc_def0, u64::MAX] {
            let meta = ItemMeta { seq: 1, lsn, ts: 0, ttl: None };
            let expected = format!("\"{:08x}-0000-0000-0000-{:012x}\"", lsn >> 48, lsn & 0xFFFF_FFFF_FFFF);
            assert_eq!(meta.etag(), expected);
        }
    }
}
