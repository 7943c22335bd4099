//! One way to read a JSON value whatever holds it: a decoded [`Value`], or a stored document's
//! bytes ([`DocRef`]), so that the schema inference and the columns read items where they are
//! stored, without decoding them into values first.

use cosmoql_storage::DocRef;
use cosmoql_value::{Value, ValueKind};

/// A JSON value to read (cheap to copy: a reference).
pub trait View<'a>: Copy {
    type Entries: Iterator<Item = (&'a str, Self)>;
    type Elements: Iterator<Item = Self>;
    fn kind(self) -> ValueKind;
    fn as_bool(self) -> Option<bool>;
    fn as_f64(self) -> Option<f64>;
    fn as_str(self) -> Option<&'a str>;
    /// A string's UTF-8 bytes, not checked again (a column of strings checks them all at once).
    fn str_bytes(self) -> Option<&'a [u8]> {
        self.as_str().map(str::as_bytes)
    }
    /// An object's properties, in order (nothing for another kind).
    fn entries(self) -> Self::Entries;
    /// An array's elements, in order (nothing for another kind).
    fn elements(self) -> Self::Elements;
    /// How many elements an array has (0 for another kind).
    fn element_count(self) -> usize {
        self.elements().count()
    }
    /// Reads a byte of each cache line the value is stored in (nothing for a value in memory
    /// already): what [`read_ahead`] calls.
    fn warm(self) -> u8 {
        0
    }
}

/// Items a walk reads ahead of itself ([`read_ahead`]): 256 telemetry items are about 64 KiB,
/// well within a core's second-level cache.
const AHEAD: usize = 256;

/// Calls `each` on every one of `items` in order, reading the stored bytes of the next
/// [`AHEAD`] items (`doc` gives an item's) before it walks each group of [`AHEAD`]. Items lie
/// all over memory: walked one at a time, each first read waits for memory; read ahead, many are
/// on their way at once, and the walk finds them in the cache. Reading a whole batch ahead (8,192
/// items) did not pay: the first items were out of the cache again by the time the walk came to
/// them (2026-11-28, `docs/performance.md`).
pub fn read_ahead<'a, T, V: View<'a>>(items: &[T], doc: impl Fn(&T) -> V, mut each: impl FnMut(&T)) {
    let warm = |group: &[T]| std::hint::black_box(group.iter().fold(0u8, |sum, item| sum ^ doc(item).warm()));
    warm(&items[..items.len().min(AHEAD)]);
    for (g, group) in items.chunks(AHEAD).enumerate() {
        if let Some(next) = items.get((g + 1) * AHEAD..) {
            warm(&next[..next.len().min(AHEAD)]);
        }
        group.iter().for_each(&mut each);
    }
}

impl<'a> View<'a> for &'a Value {
    type Entries = Box<dyn Iterator<Item = (&'a str, &'a Value)> + 'a>;
    type Elements = std::slice::Iter<'a, Value>;

    fn kind(self) -> ValueKind {
        Value::kind(self)
    }
    fn as_bool(self) -> Option<bool> {
        Value::as_bool(self)
    }
    fn as_f64(self) -> Option<f64> {
        Value::as_f64(self)
    }
    fn as_str(self) -> Option<&'a str> {
        Value::as_str(self)
    }
    fn entries(self) -> Self::Entries {
        match self {
            Value::Object(map) => Box::new(map.iter().map(|(k, v)| (k.as_str(), v))),
            _ => Box::new(std::iter::empty()),
        }
    }
    fn elements(self) -> Self::Elements {
        match self {
            Value::Array(items) => items.iter(),
            _ => [].iter(),
        }
    }
    fn element_count(self) -> usize {
        match self {
            Value::Array(items) => items.len(),
            _ => 0,
        }
    }
}

impl<'a> View<'a> for DocRef<'a> {
    type Entries = cosmoql_storage::doc::Entries<'a>;
    type Elements = cosmoql_storage::doc::Elements<'a>;

    fn kind(self) -> ValueKind {
        DocRef::kind(&self)
    }
    fn as_bool(self) -> Option<bool> {
        DocRef::as_bool(&self)
    }
    fn as_f64(self) -> Option<f64> {
        DocRef::as_f64(&self)
    }
    fn as_str(self) -> Option<&'a str> {
        DocRef::as_str(&self)
    }
    fn str_bytes(self) -> Option<&'a [u8]> {
        DocRef::str_bytes(&self)
    }
    fn entries(self) -> Self::Entries {
        DocRef::entries(&self)
    }
    fn elements(self) -> Self::Elements {
        DocRef::elements(&self)
    }
    fn warm(self) -> u8 {
        let bytes = self.as_bytes();
        bytes.iter().step_by(64).chain(bytes.last()).fold(0, |sum, b| sum ^ b)
    }
}
