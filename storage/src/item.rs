//! An item as the store keeps it (its encoded document and its system metadata) and as it is
//! returned whole: with the system properties its container gives it ([`ItemNames`],
//! [`WholeItem`]), decoded into a [`Value`] or written as JSON straight from the stored bytes.

use std::sync::Arc;

use cosmoql_catalog::rid::{collection_id, Rid, RidText};
use cosmoql_value::Value;

use serde::de::DeserializeOwned;

use crate::doc::{read_object_with, write_escaped, write_number, Doc, ReadError, Scalar, SYSTEM_PROPERTIES};

/// An item as stored: its encoded properties and its system metadata. Cloning is cheap (the
/// document bytes are shared).
#[derive(Debug, Clone)]
pub struct StoredItem {
    /// The user's properties (including a synthetic key), without system properties.
    pub doc: Doc,
    pub meta: ItemMeta,
}

// An item is 48 bytes where it is kept (`container/logical.rs`): 16 for its document, 32 for
// its metadata.
const _: () = assert!(size_of::<StoredItem>() == 48);

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
    /// The item's own time to live (its `ttl` property, when `-1` or 1 to 2,147,483,647
    /// seconds: 32 bits keep an item's metadata in 32 bytes).
    pub ttl: Option<i32>,
}

impl ItemMeta {
    /// The length of every `_etag` (quotes included).
    pub const ETAG_LEN: usize = 38;

    /// The `_etag` value.
    pub fn etag(&self) -> String {
        // ASCII by construction.
        std::str::from_utf8(&self.etag_text()).map(str::to_owned).unwrap_or_default()
    }

    /// The `_etag` value's text, on the stack: `"hhhhhhhh-0000-0000-0000-llllllllllll"` (quotes
    /// included), the sequence number's top 16 bits in 8 hex digits and its low 48 bits in 12.
    pub fn etag_text(&self) -> [u8; Self::ETAG_LEN] {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut text = *b"\"00000000-0000-0000-0000-000000000000\"";
        let (high, low) = (self.lsn >> 48, self.lsn & 0xFFFF_FFFF_FFFF);
        for i in 0..8 {
            text[8 - i] = HEX[((high >> (4 * i)) & 0xF) as usize];
        }
        for i in 0..12 {
            text[36 - i] = HEX[((low >> (4 * i)) & 0xF) as usize];
        }
        text
    }
}

/// What an item's system properties take from its container: the rids that make up `_rid` and
/// `_self`. One per container, shared by the [`WholeItem`]s it returns.
#[derive(Debug)]
pub struct ItemNames {
    database_rid: u32,
    collection: u32,
    /// `dbs/<db rid>/colls/<container rid>/docs/`, the prefix of every item's `_self`.
    self_prefix: String,
}

impl ItemNames {
    /// The names of the container numbered `rid` in the database numbered `database_rid`.
    pub fn new(database_rid: u32, rid: u32) -> ItemNames {
        let collection = collection_id(rid);
        let text = |rid: Rid| rid.encode().unwrap_or_default();
        let self_prefix = format!(
            "dbs/{}/colls/{}/docs/",
            text(Rid::Database { database: database_rid }),
            text(Rid::Collection { database: database_rid, collection })
        );
        ItemNames { database_rid, collection, self_prefix }
    }

    /// The `_rid` of the item created `seq`-th (in range by construction: items are numbered
    /// below [`cosmoql_catalog::rid::MAX_CHILD`]).
    pub fn item_rid(&self, seq: u64) -> String {
        self.rid_text(seq).as_str().to_owned()
    }

    /// [`ItemNames::item_rid`] on the stack.
    pub fn rid_text(&self, seq: u64) -> RidText {
        let rid = Rid::Document { database: self.database_rid, collection: self.collection, document: seq };
        rid.text().unwrap_or(RidText::EMPTY)
    }

    /// One system property of an item (`_rid`, `_self`, `_etag`, `_attachments`, `_ts`);
    /// `Undefined` for any other name.
    pub fn system_property(&self, item: &StoredItem, name: &str) -> Value {
        match name {
            "_rid" => Value::from(self.item_rid(item.meta.seq)),
            "_self" => Value::from(self.self_link(&self.item_rid(item.meta.seq))),
            "_etag" => Value::from(item.meta.etag()),
            "_attachments" => Value::from(ATTACHMENTS),
            "_ts" => Value::from(item.meta.ts as f64),
            _ => Value::Undefined,
        }
    }

    /// An item's system properties in the service's order ([`SYSTEM_PROPERTIES`]), the rid
    /// encoded once for `_rid` and `_self`: what a decoded item ends with and what a typed read
    /// is handed after the item's own properties.
    fn system_properties(&self, item: &StoredItem) -> Vec<(&'static str, Scalar)> {
        let rid = self.item_rid(item.meta.seq);
        let self_link = self.self_link(&rid);
        vec![
            ("_rid", Scalar::Text(rid)),
            ("_self", Scalar::Text(self_link)),
            ("_etag", Scalar::Text(item.meta.etag())),
            ("_attachments", Scalar::Text(ATTACHMENTS.to_string())),
            ("_ts", Scalar::Number(item.meta.ts as f64)),
        ]
    }

    fn self_link(&self, rid: &str) -> String {
        let mut text = String::with_capacity(self.self_prefix.len() + rid.len() + 1);
        text.push_str(&self.self_prefix);
        text.push_str(rid);
        text.push('/');
        text
    }

    /// The item with its system properties, as Cosmos DB returns it.
    pub fn materialize(&self, item: &StoredItem) -> Value {
        let mut value = item.doc.root().to_value_with_room(SYSTEM_PROPERTIES.len());
        if let Some(map) = value.as_object_mut() {
            // A stored item holds no system property (`Container::prepare` drops them), so these
            // go at the end, in the service's order.
            for (name, value) in self.system_properties(item) {
                map.insert(name.into(), value.into_value());
            }
        }
        value
    }

    /// Appends the compact JSON text of [`ItemNames::materialize`] to `out`, written from the
    /// stored bytes (the same text `cosmoql_value::to_json_string` gives for the value). `false`,
    /// with nothing appended, when the item has no JSON form (malformed bytes).
    pub fn write_json(&self, item: &StoredItem, out: &mut Vec<u8>) -> bool {
        let mark = out.len();
        if !item.doc.root().is_object() || !item.doc.write_json(out) || out.pop() != Some(b'}') {
            out.truncate(mark);
            return false;
        }
        // After the user's properties (`{` alone when there are none), in the service's order.
        // Nothing in the names, the rid's text (base64), the `_self` prefix, the etag's
        // hexadecimal digits or `attachments/` is escaped but the etag's own quotes.
        if out.len() > mark + 1 {
            out.push(b',');
        }
        let rid = self.rid_text(item.meta.seq);
        let rid = rid.as_str().as_bytes();
        out.extend_from_slice(b"\"_rid\":\"");
        out.extend_from_slice(rid);
        out.extend_from_slice(b"\",\"_self\":\"");
        out.extend_from_slice(self.self_prefix.as_bytes());
        out.extend_from_slice(rid);
        out.extend_from_slice(b"/\",\"_etag\":");
        let etag = item.meta.etag_text();
        match etag.strip_prefix(b"\"").and_then(|e| e.strip_suffix(b"\"")) {
            Some(digits) => {
                out.extend_from_slice(b"\"\\\"");
                out.extend_from_slice(digits);
                out.extend_from_slice(b"\\\"\"");
            }
            None => write_escaped(out, &etag),
        }
        out.extend_from_slice(b",\"_attachments\":\"");
        out.extend_from_slice(ATTACHMENTS.as_bytes());
        out.extend_from_slice(b"\",\"_ts\":");
        write_number(out, item.meta.ts as f64);
        out.push(b'}');
        true
    }

    /// Reads the item with its system properties as `T`, straight from its stored bytes: what
    /// `serde_json::from_value(materialize(item).to_serde_json())` gives, without building either
    /// value.
    pub fn read<T: DeserializeOwned>(&self, item: &StoredItem) -> Result<T, ReadError> {
        read_object_with(&item.doc, self.system_properties(item))
    }

    /// The five system properties' lengths in bytes, as strings (`_rid`, `_self`, `_etag`,
    /// `_attachments`) without quotes; `_ts` is a number.
    pub fn system_string_lengths(&self, item: &StoredItem) -> [usize; 4] {
        let rid = Rid::Document { database: self.database_rid, collection: self.collection, document: item.meta.seq };
        let rid = rid.text_len();
        [rid, self.self_prefix.len() + rid + 1, ItemMeta::ETAG_LEN, ATTACHMENTS.len()]
    }
}

/// The value of every item's `_attachments`.
const ATTACHMENTS: &str = "attachments/";

/// A stored item returned whole (`SELECT *`, `SELECT VALUE c`): its properties and the system
/// properties its container gives it, decoded into a [`Value`] only when asked for, or written as
/// JSON from the stored bytes. Cloning is cheap (the bytes and the names are shared).
#[derive(Debug, Clone)]
pub struct WholeItem {
    pub item: StoredItem,
    pub names: Arc<ItemNames>,
}

impl WholeItem {
    /// The item with its system properties, as Cosmos DB returns it.
    pub fn to_value(&self) -> Value {
        self.names.materialize(&self.item)
    }

    /// The item as `T`, read from its stored bytes; see [`ItemNames::read`].
    pub fn read<T: DeserializeOwned>(&self) -> Result<T, ReadError> {
        self.names.read(&self.item)
    }

    /// Appends the compact JSON text of [`WholeItem::to_value`] to `out`; see
    /// [`ItemNames::write_json`].
    pub fn write_json(&self, out: &mut Vec<u8>) -> bool {
        self.names.write_json(&self.item, out)
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
            assert_eq!(meta.etag().len(), ItemMeta::ETAG_LEN);
        }
    }
}
