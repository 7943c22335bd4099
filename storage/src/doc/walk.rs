//! Walking a document without decoding it: an object's entries, an array's elements, one value's
//! header read once ([`DocRef::node`]).

use super::*;

/// Iterator over an object's entries: `(key, value)`. See [`DocRef::entries`].
#[derive(Clone, Debug)]
pub struct Entries<'a> {
    raw: RawEntries<'a>,
}

impl<'a> Entries<'a> {
    /// The entries of an object whose payload (after its header) is `payload`.
    pub(super) fn of(payload: &'a [u8]) -> Self {
        Entries { raw: RawEntries { rest: payload } }
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = (&'a str, DocRef<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let (k, v) = self.raw.next()?;
        match std::str::from_utf8(k) {
            Ok(k) => Some((k, v)),
            Err(_) => {
                self.raw.rest = &[];
                None
            }
        }
    }
}

/// Iterator over an object's entries with their keys as stored: UTF-8 bytes, not checked again
/// (a walk that compares or hashes keys needs no `str`). See [`DocRef::node`].
#[derive(Clone, Debug)]
pub struct RawEntries<'a> {
    pub(super) rest: &'a [u8],
}

impl<'a> Iterator for RawEntries<'a> {
    type Item = (&'a [u8], DocRef<'a>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        match split_entry(self.rest) {
            Some((k, v, size)) => {
                self.rest = self.rest.get(size..).unwrap_or(&[]);
                Some((k, DocRef { bytes: v }))
            }
            None => {
                self.rest = &[];
                None
            }
        }
    }
}

/// One value as a walk over a document sees it, its header decoded once. See [`DocRef::node`].
#[derive(Clone, Debug)]
pub enum Node<'a> {
    Null,
    Bool(bool),
    Number(f64),
    /// A string's UTF-8 bytes as stored (checked when the document was made, not again).
    String(&'a [u8]),
    Array(Elements<'a>),
    Object(RawEntries<'a>),
}

/// Iterator over an array's elements. See [`DocRef::elements`].
#[derive(Clone, Debug)]
pub struct Elements<'a> {
    pub(super) rest: &'a [u8],
}

impl<'a> Iterator for Elements<'a> {
    type Item = DocRef<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        match split_value(self.rest) {
            Some((v, rest)) => {
                self.rest = rest;
                Some(DocRef { bytes: v })
            }
            None => {
                self.rest = &[];
                None
            }
        }
    }

    fn nth(&mut self, n: usize) -> Option<Self::Item> {
        for _ in 0..n {
            self.next()?;
        }
        self.next()
    }
}
