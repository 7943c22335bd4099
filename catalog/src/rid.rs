//! Resource ids (`_rid`) in the service's layout, so the SDKs that parse them accept the ones the
//! gateway mints. Facts from the .NET SDK's copy of the parser
//! (`Microsoft.Azure.Cosmos/src/Pagination/ResourceIdentifier.cs` in azure-cosmos-dotnet-v3) and
//! the Python SDK's `_base.IsNameBased`:
//!
//! - a database rid is 4 bytes (its id, little-endian); a collection's is the database's 4 bytes
//!   and 4 of its own, whose first byte has its high bit set (else the parser reads a user); a
//!   document's is the collection's 8 bytes and a little-endian 64-bit counter whose top nibble
//!   is the child's type: 0 for a document, 5 for a partition key range;
//! - the text is standard padded base64 with `/` written `-`; a length that is not a multiple of
//!   4, or a collection rid of 12 bytes, does not parse;
//! - the Python SDK takes a link for rid-based when its database segment is 8 characters that
//!   decode to 4 bytes (and then signs it lower-cased: see [`crate::auth`]).
//!
//! The .NET SDK reads rids at run time: a document's in ORDER BY continuations and ReadMany, a
//! collection's in its caches and session tokens.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

/// The type nibble of a collection child (the top 4 bits of its counter's last byte).
const DOCUMENT: u8 = 0x0;
const PARTITION_KEY_RANGE: u8 = 0x5;

/// The most a child counter may reach: 60 bits (the top nibble is the type).
pub const MAX_CHILD: u64 = (1 << 60) - 1;

/// What a rid names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rid {
    /// A database.
    Database { database: u32 },
    /// A collection (container) of a database.
    Collection { database: u32, collection: u32 },
    /// A document of a collection.
    Document { database: u32, collection: u32, document: u64 },
    /// A partition key range of a collection.
    PartitionKeyRange { database: u32, collection: u32, range: u64 },
}

/// How many collections a database may number: their ids keep 24 bits of `n`.
pub const MAX_COLLECTIONS: u32 = 1 << 24;

/// The id of the `n`-th collection, with the bit the parser reads a collection by: unique for
/// `n` below [`MAX_COLLECTIONS`].
pub fn collection_id(n: u32) -> u32 {
    (n << 8) | 0x80
}

/// A rid's text form, held on the stack ([`Rid::text`]).
#[derive(Debug, Clone, Copy)]
pub struct RidText {
    text: [u8; 24],
    len: usize,
}

impl RidText {
    /// No text (what a rid out of range is written as).
    pub const EMPTY: RidText = RidText { text: [0; 24], len: 0 };

    /// The text.
    pub fn as_str(&self) -> &str {
        // Base64 by construction.
        std::str::from_utf8(&self.text[..self.len]).unwrap_or_default()
    }
}

impl Rid {
    /// The bytes, as the service lays them out; `None` for a collection id without its marker
    /// bit or a child counter past [`MAX_CHILD`].
    pub fn to_bytes(self) -> Option<Vec<u8>> {
        self.laid_out().map(|(bytes, n)| bytes[..n].to_vec())
    }

    /// [`Rid::to_bytes`] on the stack: at most 16 bytes, and how many.
    fn laid_out(self) -> Option<([u8; 16], usize)> {
        let mut out = [0u8; 16];
        let (database, collection, child) = match self {
            Rid::Database { database } => {
                out[..4].copy_from_slice(&database.to_le_bytes());
                return Some((out, 4));
            }
            Rid::Collection { database, collection } => (database, collection, None),
            Rid::Document { database, collection, document } => (database, collection, Some((document, DOCUMENT))),
            Rid::PartitionKeyRange { database, collection, range } => {
                (database, collection, Some((range, PARTITION_KEY_RANGE)))
            }
        };
        // A collection's 8 bytes, the prefix of its children's.
        if collection & 0x80 == 0 {
            return None;
        }
        out[..4].copy_from_slice(&database.to_le_bytes());
        out[4..8].copy_from_slice(&collection.to_le_bytes());
        match child {
            None => Some((out, 8)),
            Some((counter, _)) if counter > MAX_CHILD => None,
            Some((counter, kind)) => {
                out[8..].copy_from_slice(&(counter | u64::from(kind) << 60).to_le_bytes());
                Some((out, 16))
            }
        }
    }

    /// The text form (padded base64, `/` written `-`); `None` as for [`Rid::to_bytes`].
    pub fn encode(self) -> Option<String> {
        self.text().map(|t| t.as_str().to_owned())
    }

    /// The length of [`Rid::encode`]'s text, without encoding it (0 when it has none).
    pub fn text_len(self) -> usize {
        self.laid_out().map_or(0, |(_, n)| n.div_ceil(3) * 4)
    }

    /// [`Rid::encode`] on the stack: base64 letters, digits, `+`, `-` and `=` (nothing JSON
    /// escapes).
    pub fn text(self) -> Option<RidText> {
        let (bytes, n) = self.laid_out()?;
        // At most 16 bytes: 24 characters of padded base64.
        let mut text = [0u8; 24];
        let len = encode_rid(bytes.get(..n)?, &mut text)?;
        Some(RidText { text, len })
    }

    /// Reads a rid of a database, collection, document or partition key range; `None` for text
    /// the .NET parser refuses, and for the kinds the gateway never mints (users, offers, ...).
    pub fn parse(text: &str) -> Option<Rid> {
        if text.is_empty() || !text.len().is_multiple_of(4) || text.len() > 28 {
            return None;
        }
        let bytes = STANDARD.decode(text.replace('-', "/")).ok()?;
        let word = |at: usize| bytes.get(at..at + 4).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes);
        let database = word(0)?;
        if bytes.len() == 4 {
            return Some(Rid::Database { database });
        }
        let collection = word(4)?;
        if collection & 0x80 == 0 {
            return None;
        }
        match bytes.len() {
            8 => Some(Rid::Collection { database, collection }),
            16 => {
                let raw = u64::from_le_bytes(bytes[8..16].try_into().ok()?);
                let (kind, counter) = ((raw >> 60) as u8, raw & MAX_CHILD);
                match kind {
                    DOCUMENT => Some(Rid::Document { database, collection, document: counter }),
                    PARTITION_KEY_RANGE => Some(Rid::PartitionKeyRange { database, collection, range: counter }),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// Whether the Python SDK takes `link` for rid-based (`_base.IsNameBased` negated): its database
/// The rid alphabet: standard base64 with `-` for `/`.
const RID_ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+-";

/// Writes `bytes` as padded base64 in the rid alphabet into `out`; its length, `None` when it
/// does not fit. (Every item written whole prints two rids, `_rid` and `_self`'s: a loop over
/// at most 16 bytes instead of the general encoder and a pass replacing `/`.)
fn encode_rid(bytes: &[u8], out: &mut [u8]) -> Option<usize> {
    let mut len = 0;
    for chunk in bytes.chunks(3) {
        let byte = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let v = byte(0) << 16 | byte(1) << 8 | byte(2);
        let quad = out.get_mut(len..len + 4)?;
        for (i, c) in quad.iter_mut().enumerate() {
            *c = if i <= chunk.len() { RID_ALPHABET[(v >> (18 - 6 * i)) as usize & 63] } else { b'=' };
        }
        len += 4;
    }
    Some(len)
}

/// segment is 8 characters of base64 (with `-` for `/`) that decode to 4 bytes.
pub fn python_reads_as_rid(link: &str) -> bool {
    let mut parts = link.strip_prefix('/').unwrap_or(link).split('/');
    let is_dbs = parts.next().is_some_and(|p| p.eq_ignore_ascii_case("dbs"));
    let database = parts.next().unwrap_or_default();
    is_dbs && database.len() == 8 && STANDARD.decode(database.replace('-', "/")).is_ok_and(|b| b.len() == 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdks_own_examples_parse_and_mint_back() {
        // RestFeedResponseParser.cs: `_self` dbs/qHVdAA==/colls/qHVdAImeKAQ=/docs/qHVdAImeKAQBAAAAAAAAAA==/
        let (database, collection) = (0x005d_75a8, 0x0428_9e89);
        for (text, rid) in [
            ("qHVdAA==", Rid::Database { database }),
            ("qHVdAImeKAQ=", Rid::Collection { database, collection }),
            ("qHVdAImeKAQBAAAAAAAAAA==", Rid::Document { database, collection, document: 1 }),
            // PartitionKeyRangeCacheTest.cs: a range of collection 3FIlAOzjvyg=.
            (
                "3FIlAOzjvygCAAAAAAAAUA==",
                Rid::PartitionKeyRange { database: 0x0025_52dc, collection: 0x28bf_e3ec, range: 2 },
            ),
        ] {
            assert_eq!(Rid::parse(text), Some(rid), "{text}");
            assert_eq!(rid.encode().as_deref(), Some(text));
            assert_eq!(rid.text_len(), text.len());
        }
    }

    #[test]
    fn minted_rids_parse_and_text_the_parser_refuses_does_not() {
        let database = 0x00ff_ffff;
        let rid = Rid::Document { database, collection: collection_id(7), document: MAX_CHILD };
        let text = rid.encode().unwrap();
        assert!(text.starts_with("----"), "{text}");
        assert_eq!(Rid::parse(&text), Some(rid));
        assert_eq!(Rid::Document { database, collection: collection_id(7), document: MAX_CHILD + 1 }.encode(), None);
        // A collection id without its marker bit reads as a user's: not minted, not parsed.
        assert_eq!(Rid::Collection { database, collection: 0x100 }.encode(), None);
        for bad in [
            "",
            "qHVdAA",
            "qHVdAImeKAQBAAAA",
            "qHVdAAAAAAA=",
            "qHVdAImeKAQBAAAAAAAAEA==",
            "not a rid!",
            "qHVdAA==".repeat(4).as_str(),
        ] {
            assert_eq!(Rid::parse(bad), None, "{bad}");
        }
        assert!((0..1000).map(collection_id).all(|c| c & 0x80 != 0));
    }

    /// The rid encoder writes what the general base64 encoder writes, `/` as `-`, for every
    /// length a rid has and any bytes.
    #[test]
    fn rid_text_is_base64_with_a_dash_for_the_slash() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for round in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let bytes: Vec<u8> = (0..16).map(|i| (state.rotate_left(i * 5) as u8) ^ (round as u8)).collect();
            for n in 0..=16 {
                let mut out = [0u8; 24];
                let len = encode_rid(&bytes[..n], &mut out).unwrap();
                assert_eq!(&out[..len], STANDARD.encode(&bytes[..n]).replace('/', "-").as_bytes(), "{:?}", &bytes[..n]);
            }
        }
        assert_eq!(encode_rid(&[0xFF; 16], &mut [0u8; 23]), None);
    }

    #[test]
    fn python_reads_a_link_as_rid_based_by_its_database_segment() {
        assert!(python_reads_as_rid("dbs/qHVdAA==/colls/qHVdAImeKAQ="));
        assert!(python_reads_as_rid("/dbs/----AA=="));
        assert!(!python_reads_as_rid("dbs/shop/colls/orders"));
        assert!(!python_reads_as_rid("dbs/testdb01"));
        assert!(!python_reads_as_rid("colls/qHVdAA=="));
        assert!(!python_reads_as_rid(""));
    }
}
