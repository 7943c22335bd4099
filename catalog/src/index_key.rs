//! Index keys: the values an index orders (null, booleans, numbers, strings, in that order), with
//! short strings held in the key and longer ones inside shared bytes (an item's encoding).

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use cosmoql_value::Value;

use crate::padded::cmp_padded;

/// A scalar as an index key (see the module docs for the order).
#[derive(Clone)]
pub enum IndexKey {
    Null,
    Bool(bool),
    /// Finite, with `-0` stored as `0`.
    Number(f64),
    /// A string of up to `SHORT` (30) bytes, held in the key (comparisons touch no other memory).
    Short(ShortStr),
    /// A longer string, inside shared bytes.
    Long(SharedStr),
}

/// The longest string held inside a key: 30 bytes make a key 32 bytes, the size of a longer
/// string's reference (a 36-byte UUID is one), where 38 made every key 40 (an index's B-tree
/// nodes hold keys inline: 3.2 million keys for 1,000,000 telemetry items).
const SHORT: usize = 30;

const _: () = assert!(size_of::<IndexKey>() == 32);

/// A short string's bytes.
#[derive(Debug, Clone, Copy)]
pub struct ShortStr {
    len: u8,
    bytes: [u8; SHORT],
}

impl ShortStr {
    /// The order of the strings' bytes, without a call to `memcmp`: the zero-padded buffers
    /// compared eight bytes at a time as big-endian words (which order as their bytes do), up to
    /// the longer string's end, then the lengths (a string and the same followed by NULs differ
    /// only there).
    fn cmp_bytes(&self, other: &ShortStr) -> Ordering {
        let end = usize::from(self.len.max(other.len));
        cmp_padded(&self.bytes, &other.bytes, end).then(self.len.cmp(&other.len))
    }
}

/// A string inside shared bytes: an item's encoding, or a query's own copy.
#[derive(Clone)]
pub struct SharedStr {
    bytes: Arc<[u8]>,
    start: u32,
    len: u32,
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl SharedStr {
    fn new(s: &[u8]) -> Self {
        SharedStr { bytes: Arc::from(s), start: 0, len: s.len() as u32 }
    }

    /// The UTF-8 bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[self.start as usize..(self.start + self.len) as usize]
    }

    /// The string (the bytes are UTF-8: they come from a `str`).
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }
}

impl IndexKey {
    /// The key of a scalar value; `None` for undefined, arrays, objects and non-finite numbers.
    pub fn from_value(v: &Value) -> Option<IndexKey> {
        match v {
            Value::Null => Some(IndexKey::Null),
            Value::Bool(b) => Some(IndexKey::Bool(*b)),
            Value::Number(n) => IndexKey::number(*n),
            Value::String(s) => Some(IndexKey::string(s)),
            _ => None,
        }
    }

    /// A number key (`None` for NaN and infinities, which no item holds).
    pub fn number(n: f64) -> Option<IndexKey> {
        n.is_finite().then_some(IndexKey::Number(if n == 0.0 { 0.0 } else { n }))
    }

    /// A string key.
    pub fn string(s: &str) -> IndexKey {
        IndexKey::short(s.as_bytes()).unwrap_or_else(|| IndexKey::Long(SharedStr::new(s.as_bytes())))
    }

    fn short(s: &[u8]) -> Option<IndexKey> {
        (s.len() <= SHORT).then(|| {
            let mut bytes = [0; SHORT];
            bytes[..s.len()].copy_from_slice(s);
            IndexKey::Short(ShortStr { len: s.len() as u8, bytes })
        })
    }

    /// A number that orders keys as far as it can tell them apart: `a < b` gives
    /// `a.sort_prefix() <= b.sort_prefix()`, so a sort may compare these and compare the keys
    /// only when they are equal, and not even then when [`IndexKey::prefix_is_key`] says the
    /// prefix holds the whole key. The order's rank in the top byte, then a number's bits
    /// (ordered as `f64::total_cmp` orders them) or a string's first 14 bytes (zeros after its
    /// end) and its length up to 15 in the last byte.
    pub fn sort_prefix(&self) -> u128 {
        let rank = u128::from(self.rank()) << 120;
        match self {
            IndexKey::Number(n) => {
                let bits = n.to_bits();
                let ordered = if bits >> 63 == 1 { !bits } else { bits | 1 << 63 };
                rank | u128::from(ordered) << 56
            }
            IndexKey::Short(_) | IndexKey::Long(_) => {
                let bytes = self.str_bytes().unwrap_or_default();
                let mut first = [0u8; 16];
                let n = bytes.len().min(14);
                first[1..=n].copy_from_slice(&bytes[..n]);
                first[15] = bytes.len().min(15) as u8;
                rank | u128::from_be_bytes(first)
            }
            IndexKey::Null | IndexKey::Bool(_) => rank,
        }
    }

    /// Whether keys with this [`IndexKey::sort_prefix`] are all equal: true but for strings of
    /// 15 bytes or more.
    pub fn prefix_is_key(prefix: u128) -> bool {
        (prefix >> 120) as u8 != 4 || prefix & 0xff < 15
    }

    /// A string key's UTF-8 bytes.
    pub fn str_bytes(&self) -> Option<&[u8]> {
        match self {
            IndexKey::Short(s) => Some(&s.bytes[..usize::from(s.len)]),
            IndexKey::Long(s) => Some(s.as_bytes()),
            _ => None,
        }
    }

    /// The key of a string inside `shared` (an item's encoding), sharing those bytes when the
    /// string is too long to hold in the key; a string from elsewhere is copied. `s` is the
    /// string's UTF-8 bytes, as the item holds them (checked when the item was encoded).
    pub fn string_in(shared: &Arc<[u8]>, s: &[u8]) -> IndexKey {
        if let Some(key) = IndexKey::short(s) {
            return key;
        }
        let start = (s.as_ptr() as usize).wrapping_sub(shared.as_ptr() as usize);
        if start <= shared.len() && s.len() <= shared.len() - start {
            IndexKey::Long(SharedStr { bytes: Arc::clone(shared), start: start as u32, len: s.len() as u32 })
        } else {
            IndexKey::Long(SharedStr::new(s))
        }
    }

    /// The value this key stands for.
    pub fn to_value(&self) -> Value {
        match self {
            IndexKey::Null => Value::Null,
            IndexKey::Bool(b) => Value::Bool(*b),
            IndexKey::Number(n) => Value::Number(*n),
            IndexKey::Short(_) | IndexKey::Long(_) => {
                Value::from(std::str::from_utf8(self.str_bytes().unwrap_or_default()).unwrap_or_default())
            }
        }
    }

    fn rank(&self) -> u8 {
        match self {
            IndexKey::Null => 0,
            IndexKey::Bool(false) => 1,
            IndexKey::Bool(true) => 2,
            IndexKey::Number(_) => 3,
            IndexKey::Short(_) | IndexKey::Long(_) => 4,
        }
    }
}

impl Ord for IndexKey {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (IndexKey::Number(a), IndexKey::Number(b)) => a.total_cmp(b),
            (IndexKey::Short(a), IndexKey::Short(b)) => a.cmp_bytes(b),
            _ => match (self.str_bytes(), other.str_bytes()) {
                (Some(a), Some(b)) => a.cmp(b),
                _ => self.rank().cmp(&other.rank()),
            },
        }
    }
}

impl PartialOrd for IndexKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for IndexKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for IndexKey {}

impl fmt::Debug for IndexKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_value())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_strings_order_as_their_bytes() {
        let texts =
            ["", "\0", "a", "a\0", "a\0\0", "ab", "abcdefgh", "abcdefgh\0", "abcdefghi", "abcdefgg", "é", "\u{7f}"];
        let mut all: Vec<String> = texts.iter().map(|s| s.to_string()).collect();
        // Past 30 bytes a key refers to the string: short against long too.
        for n in [7, 8, 9, 15, 16, 17, 23, 24, 25, 29, 30, 31, 37, 38, 39] {
            all.push("x".repeat(n));
            all.push(format!("{}y", "x".repeat(n - 1)));
            all.push(format!("{}\0", "x".repeat(n - 1)));
        }
        for a in &all {
            for b in &all {
                let (ka, kb) = (IndexKey::string(a), IndexKey::string(b));
                assert_eq!(ka.cmp(&kb), a.as_bytes().cmp(b.as_bytes()), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn sort_prefix_agrees_with_the_order() {
        let mut keys = vec![IndexKey::Null, IndexKey::Bool(false), IndexKey::Bool(true)];
        for n in [f64::MIN, -1e300, -2.5, -1.0, -f64::MIN_POSITIVE, 0.0, 5e-324, 1.0, 1.5, 2.0, 1e300, f64::MAX] {
            keys.extend(IndexKey::number(n));
        }
        for s in [
            "",
            "\0",
            "\0\0",
            "a",
            "a\0",
            "ab",
            "abcdefghijklm",
            "abcdefghijklmn",
            "abcdefghijklmn\0",
            "abcdefghijklmno",
            "abcdefghijklmnop",
            "abcdefghijklmnoa",
            "abcdefghijklmz",
            "b",
            "é",
            "z",
        ] {
            keys.push(IndexKey::string(s));
        }
        keys.push(IndexKey::string(&"x".repeat(60)));
        keys.push(IndexKey::string(&format!("{}y", "x".repeat(60))));
        for a in &keys {
            for b in &keys {
                let (pa, pb) = (a.sort_prefix(), b.sort_prefix());
                match a.cmp(b) {
                    Ordering::Less => assert!(pa <= pb, "{a:?} < {b:?} but prefixes {pa:x} > {pb:x}"),
                    Ordering::Equal => assert_eq!(pa, pb, "{a:?} = {b:?}"),
                    Ordering::Greater => assert!(pa >= pb, "{a:?} > {b:?} but prefixes {pa:x} < {pb:x}"),
                }
                if pa < pb {
                    assert!(a < b, "{a:?} {b:?}");
                }
                if pa == pb && IndexKey::prefix_is_key(pa) {
                    assert_eq!(a, b, "equal prefixes {pa:x} that hold the whole key");
                }
            }
        }
        // Numbers and short strings are told apart by the prefix alone.
        assert!(IndexKey::number(-1.0).unwrap().sort_prefix() < IndexKey::number(-0.5).unwrap().sort_prefix());
        assert!(IndexKey::string("ab").sort_prefix() < IndexKey::string("ac").sort_prefix());
    }
}
