//! The compact binary encoding of stored documents.
//!
//! Items are kept in memory as [`Doc`]s: one immutable, reference-counted byte string per item,
//! about the size of the item's compact JSON (a tree of [`Value`]s costs ~5x that). A `Doc` is
//! decoded to a [`Value`] on demand ([`Doc::to_value`]), written back as JSON straight from the
//! bytes ([`Doc::to_json_string`]), and read lazily through the borrowed view [`DocRef`]
//! (`doc.root().get("a")?.index(2)?.as_f64()`), which jumps over the fields it does not need.
//!
//! # Format
//!
//! Self-describing, little-endian. One value is a tag byte followed by its payload:
//!
//! | tag | value | payload |
//! | --- | --- | --- |
//! | `0x00` | `null` | — |
//! | `0x01` / `0x02` | `false` / `true` | — |
//! | `0x03` | number | `f64`, 8 bytes |
//! | `0x04` / `0x05` / `0x06` | integral number | `i8` / `i16` / `i32` (1 / 2 / 4 bytes) |
//! | `0x07` | string | varint byte length, UTF-8 bytes |
//! | `0x08` | array | varint element count, varint payload byte length, elements |
//! | `0x09` | object | varint entry count, varint payload byte length, entries |
//! | `0x40..=0x7F` | short string | `tag - 0x40` (0..=63) UTF-8 bytes |
//! | `0x80..=0xFF` | small integer | none: the number is `tag - 0x80` (0..=127) |
//!
//! Tags `0x0A..=0x3F` are invalid. A varint is unsigned LEB128 (7 bits per byte, low group first,
//! high bit = "more bytes follow"); at most 10 bytes, and the value must fit in `u64` and `usize`.
//! An object entry is the key (varint byte length, UTF-8 bytes) followed by its value: that is
//! the portable form, on disk and on the wire ([`Doc::to_bytes`], [`Doc::from_bytes`]). In
//! memory a key's varint is twice its length (its bytes follow) or, for a name in the process's
//! table, twice the name's number plus one (nothing follows): see `names`.
//!
//! * **Numbers** are JavaScript doubles. The encoder uses the smallest integer form that gives back
//!   exactly the same `f64` (integral, not `-0`, within `i32`), and `f64` otherwise; NaN and ±∞
//!   (only reachable from a [`Value`], never from JSON text) are stored as `f64` and, as in
//!   `cosmoql_value`'s JSON output, omitted when written as JSON.
//! * **Containers** carry their payload byte length, so skipping any value is O(1): a field lookup
//!   ([`DocRef::get`]) is a linear scan over the keys that jumps over the values.
//! * **Objects** keep their key order. Keys are unique: when JSON text repeats a key, the entry keeps
//!   the position of the key's first occurrence and the value of its last one, exactly as
//!   [`cosmoql_value::parse_json`] (an `IndexMap` insert) does. [`Doc::from_bytes`] rejects
//!   duplicate keys.
//! * **Undefined** is never stored: an undefined field or array element is omitted (as JSON output
//!   does), and a top-level undefined cannot be encoded.
//! * Nesting is bounded by [`MAX_DEPTH`] containers, so that neither encoding, validation nor
//!   decoding can overflow the stack. serde_json's own recursion limit (127 levels) applies to JSON
//!   text, so every JSON document it accepts fits.
//!
//! The encoder always picks the shortest form (short string tags, small-integer tags, minimal
//! varints); the decoder accepts any valid form.
//!
//! # Trust
//!
//! A [`Doc`] is built either by the encoder or by [`Doc::from_bytes`] / [`DocRef::new`], which
//! validate everything (tags, bounds, UTF-8, counts, unique keys, depth). Accessors never panic even
//! on malformed bytes (see [`DocRef::trusted`]): they return `None`, stop iterating, or decode the
//! malformed part as `undefined`.
//!
//! # JSON input
//!
//! [`Doc::from_json_str`] reads JSON text directly into the binary form (no intermediate `Value`,
//! no per-field allocation; encoding goes into a reused per-thread buffer). A direct reader
//! (`json`) takes well-formed text in one pass, checking UTF-8 as it goes; what it gives up on
//! (an error, deep nesting, a number out of range) is read by serde_json with a `Visitor`, so every
//! error is serde_json's. Numbers are parsed exactly as [`cosmoql_value::parse_json`] parses them,
//! so `Doc::from_json_str(s)?.to_value() == parse_json(s)?` — structurally, key order and number
//! bits included.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use cosmoql_value::{format_number, Map, Value, ValueKind};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

mod decode;
mod encode;
mod json;
mod names;
mod read;
mod validate;
mod walk;
use self::decode::*;
pub(crate) use self::decode::{write_escaped, write_number};
pub use self::encode::*;
use self::names::{convert, push_key_in, read_key, write_key, Form};
pub use self::names::{MAX_NAMES, MAX_NAME_LEN};
pub(crate) use self::read::read_object_with;
pub use self::read::{ReadError, Scalar};
use self::validate::validate_all;
pub use self::walk::{Elements, Entries, Node, RawEntries};

/// Appends `s` as a JSON string literal, escaped as `cosmoql_value::to_json_string` escapes it.
pub fn write_json_string(out: &mut Vec<u8>, s: &str) {
    write_escaped(out, s.as_bytes());
}

/// Appends `n` as `cosmoql_value::to_json_string` writes it; `false`, with nothing appended, for
/// NaN and the infinities (JSON has no form for them).
pub fn write_json_number(out: &mut Vec<u8>, n: f64) -> bool {
    write_number(out, n)
}

/// The system properties Cosmos DB adds to every item, in the order it writes them. A stored
/// document holds none of them: they are computed from the item's metadata when it is read.
pub const SYSTEM_PROPERTIES: [&str; 5] = ["_rid", "_self", "_etag", "_attachments", "_ts"];

/// The deepest container nesting the format allows (the root container is depth 1).
pub const MAX_DEPTH: usize = 128;

/// Tag bytes.
mod tag {
    pub const NULL: u8 = 0x00;
    pub const FALSE: u8 = 0x01;
    pub const TRUE: u8 = 0x02;
    pub const F64: u8 = 0x03;
    pub const I8: u8 = 0x04;
    pub const I16: u8 = 0x05;
    pub const I32: u8 = 0x06;
    pub const STRING: u8 = 0x07;
    pub const ARRAY: u8 = 0x08;
    pub const OBJECT: u8 = 0x09;
    /// `0x40..=0x7F`: a string of `tag - 0x40` bytes.
    pub const SHORT_STRING: u8 = 0x40;
    pub const SHORT_STRING_LAST: u8 = 0x7F;
    pub const SHORT_STRING_MAX: usize = 63;
    /// `0x80..=0xFF`: the integer `tag - 0x80`.
    pub const SMALL_INT: u8 = 0x80;
    pub const SMALL_INT_MAX: i32 = 127;
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// What went wrong while encoding or validating a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DocErrorKind {
    /// The JSON text is not valid JSON (syntax error, unexpected end, trailing characters, invalid
    /// UTF-8).
    Json,
    /// An item must be a JSON object, and the value is something else.
    NotAnObject,
    /// A top-level `undefined` has no stored form.
    Undefined,
    /// Nested deeper than [`MAX_DEPTH`] (or serde_json's recursion limit for JSON text).
    TooDeep,
    /// The bytes are not a well-formed encoded value.
    Malformed,
    /// NaN or an infinity: JSON has no form for them, so no item can hold one.
    NonFinite,
}

/// An error while encoding a document (from JSON text or a [`Value`]) or validating its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocError {
    kind: DocErrorKind,
    message: String,
    line: usize,
    column: usize,
    offset: Option<usize>,
}

impl DocError {
    fn new(kind: DocErrorKind, message: impl Into<String>) -> DocError {
        DocError { kind, message: message.into(), line: 0, column: 0, offset: None }
    }

    fn not_an_object(kind: ValueKind) -> DocError {
        DocError::new(DocErrorKind::NotAnObject, format!("a document must be a JSON object, not {kind}"))
    }

    fn too_deep() -> DocError {
        DocError::new(DocErrorKind::TooDeep, format!("document nested deeper than {MAX_DEPTH} levels"))
    }

    fn malformed(offset: usize, what: &str) -> DocError {
        DocError {
            kind: DocErrorKind::Malformed,
            message: format!("malformed document bytes at offset {offset}: {what}"),
            line: 0,
            column: 0,
            offset: Some(offset),
        }
    }

    fn json(e: &serde_json::Error) -> DocError {
        let raw = e.to_string();
        let kind = if raw.starts_with("recursion limit exceeded") || raw.starts_with(TOO_DEEP_JSON) {
            DocErrorKind::TooDeep
        } else {
            DocErrorKind::Json
        };
        let what = cosmoql_value::json::json_error_reason(e);
        let (line, column) = (e.line(), e.column());
        let message = match (kind, line) {
            (DocErrorKind::TooDeep, _) => what,
            (_, 0) => format!("not valid JSON: {what}"),
            (_, 1) => format!("not valid JSON at column {column}: {what}"),
            _ => format!("not valid JSON at line {line}, column {column} of the document: {what}"),
        };
        DocError { kind, message, line, column, offset: None }
    }

    /// What kind of error this is.
    pub fn kind(&self) -> DocErrorKind {
        self.kind
    }

    /// 1-based line in the JSON text (0 when not from JSON text).
    pub fn line(&self) -> usize {
        self.line
    }

    /// 1-based column in the JSON text (0 when not from JSON text).
    pub fn column(&self) -> usize {
        self.column
    }

    /// Byte offset of a [`DocErrorKind::Malformed`] error in the validated bytes.
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }
}

impl fmt::Display for DocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DocError {}

const TOO_DEEP_JSON: &str = "document nested too deeply";

// ---------------------------------------------------------------------------------------------
// Low-level reading
// ---------------------------------------------------------------------------------------------

/// Reads a varint at `pos`: `(value, position after it)`.
#[inline(always)]
fn read_varint(b: &[u8], pos: usize) -> Option<(usize, usize)> {
    let first = *b.get(pos)?;
    if first < 0x80 {
        return Some((usize::from(first), pos + 1));
    }
    read_varint_long(b, pos, first)
}

/// [`read_varint`] for values of two bytes or more.
#[inline(never)]
fn read_varint_long(b: &[u8], pos: usize, first: u8) -> Option<(usize, usize)> {
    let mut result = u64::from(first & 0x7F);
    let mut shift = 7u32;
    let mut p = pos + 1;
    loop {
        let byte = *b.get(p)?;
        p += 1;
        if shift == 63 && byte > 1 {
            return None;
        }
        result |= u64::from(byte & 0x7F) << shift;
        if byte & 0x80 == 0 {
            return Some((usize::try_from(result).ok()?, p));
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// The decoded header of one value.
#[derive(Clone, Copy, Debug)]
enum Head<'a> {
    Null,
    Bool(bool),
    Number(f64),
    /// The string's bytes (not yet checked to be UTF-8).
    String(&'a [u8]),
    /// Element count and payload.
    Array(usize, &'a [u8]),
    /// Entry count and payload.
    Object(usize, &'a [u8]),
}

impl Head<'_> {
    fn kind(self) -> ValueKind {
        match self {
            Head::Null => ValueKind::Null,
            Head::Bool(_) => ValueKind::Boolean,
            Head::Number(_) => ValueKind::Number,
            Head::String(_) => ValueKind::String,
            Head::Array(..) => ValueKind::Array,
            Head::Object(..) => ValueKind::Object,
        }
    }
}

/// Parses the value at the start of `b`: its header and its total size in bytes. `None` if the
/// tag is invalid or the value runs past the end of `b`. O(1).
#[inline(always)]
fn head(b: &[u8]) -> Option<(Head<'_>, usize)> {
    let (&t, rest) = b.split_first()?;
    Some(match t {
        tag::NULL => (Head::Null, 1),
        tag::FALSE => (Head::Bool(false), 1),
        tag::TRUE => (Head::Bool(true), 1),
        tag::F64 => (Head::Number(f64::from_le_bytes(rest.get(..8)?.try_into().ok()?)), 9),
        tag::I8 => (Head::Number(f64::from(i8::from_le_bytes(rest.get(..1)?.try_into().ok()?))), 2),
        tag::I16 => (Head::Number(f64::from(i16::from_le_bytes(rest.get(..2)?.try_into().ok()?))), 3),
        tag::I32 => (Head::Number(f64::from(i32::from_le_bytes(rest.get(..4)?.try_into().ok()?))), 5),
        tag::STRING => {
            let (len, p) = read_varint(b, 1)?;
            let end = p.checked_add(len)?;
            (Head::String(b.get(p..end)?), end)
        }
        tag::ARRAY | tag::OBJECT => {
            let (count, p) = read_varint(b, 1)?;
            let (len, p) = read_varint(b, p)?;
            let end = p.checked_add(len)?;
            let payload = b.get(p..end)?;
            (if t == tag::ARRAY { Head::Array(count, payload) } else { Head::Object(count, payload) }, end)
        }
        tag::SHORT_STRING..=tag::SHORT_STRING_LAST => {
            let end = 1 + usize::from(t - tag::SHORT_STRING);
            (Head::String(b.get(1..end)?), end)
        }
        tag::SMALL_INT..=0xFF => (Head::Number(f64::from(t - tag::SMALL_INT)), 1),
        _ => return None,
    })
}

/// The total size of the value at the start of `b` (`None` if malformed or truncated). O(1), and
/// cheaper than [`head`] when only skipping.
#[inline(always)]
fn value_size(b: &[u8]) -> Option<usize> {
    let t = *b.first()?;
    let fixed = FIXED_SIZE[usize::from(t)];
    let size = match fixed {
        1.. => usize::from(fixed),
        _ if t == tag::STRING => {
            let (len, p) = read_varint(b, 1)?;
            p.checked_add(len)?
        }
        _ if t == tag::ARRAY || t == tag::OBJECT => {
            let (_, p) = read_varint(b, 1)?;
            let (len, p) = read_varint(b, p)?;
            p.checked_add(len)?
        }
        _ => return None,
    };
    (size <= b.len()).then_some(size)
}

/// Total size of a value by its tag, for tags whose size does not depend on the payload (0 for
/// the others: strings, containers and invalid tags).
static FIXED_SIZE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut t = 0;
    while t < 256 {
        let b = t as u8;
        table[t] = match b {
            tag::NULL | tag::FALSE | tag::TRUE | tag::SMALL_INT..=0xFF => 1,
            tag::F64 => 9,
            tag::I8 => 2,
            tag::I16 => 3,
            tag::I32 => 5,
            tag::SHORT_STRING..=tag::SHORT_STRING_LAST => 1 + b - tag::SHORT_STRING,
            _ => 0,
        };
        t += 1;
    }
    table
};

/// Splits the value at the start of `b` off: `(value, rest)`.
#[inline]
fn split_value(b: &[u8]) -> Option<(&[u8], &[u8])> {
    b.split_at_checked(value_size(b)?)
}

/// The key of the object entry at the start of `b` (in memory), and the bytes after it (the
/// entry's value first): for walks that learn the value's size as they read it.
#[inline]
fn split_key(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let (key, p) = read_key(b, 0, Form::Memory)?;
    Some((key, b.get(p..)?))
}

/// One object entry at the start of `b`: `(key bytes, value bytes, entry size)`.
#[inline]
fn split_entry(b: &[u8]) -> Option<(&[u8], &[u8], usize)> {
    let (key, rest) = split_key(b)?;
    let (value, _) = split_value(rest)?;
    Some((key, value, b.len() - rest.len() + value.len()))
}

/// The key of the entry starting at `start` in an encoder buffer written in `form`.
fn key_at(buf: &[u8], start: usize, form: Form) -> &[u8] {
    read_key(buf, start, form).map_or(&[], |(key, _)| key)
}

/// `true` if two of `keys` are equal.
fn has_duplicates<'k>(n: usize, key: impl Fn(usize) -> &'k [u8]) -> bool {
    if n < 2 {
        false
    } else if n <= 16 {
        // Keys are compared only when their lengths and first seven bytes agree (one word).
        let mut prints = [0u64; 16];
        for (i, print) in prints.iter_mut().enumerate().take(n) {
            let k = key(i);
            *print = key_print(k, k.len());
        }
        (1..n).any(|i| (0..i).any(|j| prints[j] == prints[i] && key(j) == key(i)))
    } else {
        let mut seen = HashSet::with_capacity(n);
        (0..n).any(|i| !seen.insert(key(i)))
    }
}

/// A key's first seven bytes and its length (in the top byte) in one word: equal keys have equal
/// prints. `from_key` starts with the key's `len` bytes; the bytes after them (the JSON text's
/// closing quote and on, for the direct reader) are read in one load and left out of the print.
#[inline]
fn key_print(from_key: &[u8], len: usize) -> u64 {
    let word = match from_key.first_chunk::<8>() {
        Some(first) => u64::from_le_bytes(*first),
        None => {
            let mut word = [0u8; 8];
            for (w, k) in word.iter_mut().zip(from_key) {
                *w = *k;
            }
            u64::from_le_bytes(word)
        }
    };
    let kept = len.min(7);
    (word & ((1u64 << (kept * 8)) - 1)) | ((len as u64 & 0xFF) << 56)
}

// ---------------------------------------------------------------------------------------------
// Doc
// ---------------------------------------------------------------------------------------------

/// One encoded document: an immutable, reference-counted byte string (`clone()` is a refcount
/// increment). See the [module docs](self) for the format: in memory its keys may be numbers in
/// the process's name table (`names`); [`Doc::to_bytes`] gives the portable form, for disk and
/// the wire.
///
/// `==` compares the bytes: equal documents with different key order (or number forms) are not
/// `==`; compare `to_value()`s for value equality.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Doc(Arc<[u8]>);

/// The in-memory encoding is followed by the portable encoding's length, [`Doc::len`]: 4 bytes,
/// little-endian (saturated: no document within any size limit comes near it).
const LEN_BYTES: usize = 4;

/// Seals a portable encoding (`portable`, exactly one value, from the encoder or validated) as a
/// document: its in-memory form built in `scratch`. `None` for malformed bytes.
fn seal_portable(portable: &[u8], scratch: &mut Vec<u8>) -> Option<Doc> {
    scratch.clear();
    scratch.reserve(portable.len() + LEN_BYTES);
    let (read, len) = convert(portable, Form::Portable, scratch, 0)?;
    if read != portable.len() {
        return None;
    }
    Some(seal_memory(scratch, len))
}

/// Seals `memory` (exactly one value in the in-memory form) as a document whose portable form
/// is `portable` bytes long.
fn seal_memory(memory: &mut Vec<u8>, portable: usize) -> Doc {
    let len = u32::try_from(portable).unwrap_or(u32::MAX);
    memory.extend_from_slice(&len.to_le_bytes());
    Doc(Arc::from(memory.as_slice()))
}

impl Doc {
    /// Encodes an item. The value must be an object; undefined fields (at any depth) are omitted.
    pub fn from_value(v: &Value) -> Result<Doc, DocError> {
        if !v.is_object() {
            return Err(DocError::not_an_object(v.kind()));
        }
        encode_value(v)
    }

    /// Encodes an item from JSON text, without building a `Value`. The text must be one JSON
    /// object (surrounding whitespace allowed). Duplicate keys keep their first position and last
    /// value, as [`cosmoql_value::parse_json`] does.
    pub fn from_json_str(text: &str) -> Result<Doc, DocError> {
        encode_json_bytes(text.as_bytes(), true)
    }

    /// Like [`Doc::from_json_str`], from UTF-8 bytes (e.g. one NDJSON line).
    pub fn from_json_slice(bytes: &[u8]) -> Result<Doc, DocError> {
        encode_json_bytes(bytes, true)
    }

    /// Takes the portable encoding ([`Doc::to_bytes`]) from an untrusted source (a file, the
    /// network): validates that the bytes are exactly one well-formed value of any type.
    pub fn from_bytes(bytes: &[u8]) -> Result<Doc, DocError> {
        validate_all(bytes, Form::Portable)?;
        with_writer(|w| seal_portable(bytes, &mut w.buf))
            .ok_or_else(|| DocError::malformed(0, "the document could not be read back"))
    }

    /// The portable encoding: every key spelled out, as the [module docs](self) describe it;
    /// what [`Doc::from_bytes`] reads. [`Doc::len`] bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        self.write_bytes(&mut out);
        out
    }

    /// Appends [`Doc::to_bytes`] to `out`.
    pub fn write_bytes(&self, out: &mut Vec<u8>) {
        let mark = out.len();
        // Only the encoder and validation make a `Doc`, and a name stays in the table once
        // there: the conversion cannot fail.
        let converted = convert(self.as_bytes(), Form::Memory, out, 0);
        debug_assert!(converted.is_some(), "a document that does not convert: {:?}", self.as_bytes());
        if converted.is_none() {
            out.truncate(mark);
        }
    }

    /// The in-memory encoding: its keys may be numbers in this process's name table, so these
    /// bytes mean nothing to another process ([`DocRef::new`] reads them back; store
    /// [`Doc::to_bytes`]).
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        self.0.get(..self.0.len().saturating_sub(LEN_BYTES)).unwrap_or_default()
    }

    /// The shared bytes (indexes point into them instead of copying strings): the in-memory
    /// encoding first, at the same offsets as [`Doc::as_bytes`].
    pub(crate) fn shared(&self) -> &Arc<[u8]> {
        &self.0
    }

    /// The size of the document in bytes: its portable encoding's ([`Doc::to_bytes`]), whatever
    /// its keys take in memory; what request charges and partition sizes count.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.last_chunk::<LEN_BYTES>().map_or(0, |b| u32::from_le_bytes(*b) as usize)
    }

    /// Always `false` for a valid document (every value takes at least one byte).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes this document holds in memory (its encoding and its length).
    pub fn memory_len(&self) -> usize {
        self.0.len()
    }

    /// The root value, to read lazily.
    #[inline]
    pub fn root(&self) -> DocRef<'_> {
        DocRef { bytes: self.as_bytes() }
    }

    /// `part` (a value read from this document) kept with the document's shared bytes; `None`
    /// when it does not lie in them.
    pub fn part(&self, part: DocRef<'_>) -> Option<DocPart> {
        let start = (part.bytes.as_ptr() as usize).checked_sub(self.0.as_ptr() as usize)?;
        let end = start.checked_add(part.bytes.len())?;
        (end <= self.as_bytes().len()).then(|| DocPart { doc: self.clone(), start, end })
    }

    /// Shortcut for `self.root().get(key)`.
    pub fn get(&self, key: &str) -> Option<DocRef<'_>> {
        self.root().get(key)
    }

    /// Decodes the whole document.
    pub fn to_value(&self) -> Value {
        self.root().to_value()
    }

    /// Compact JSON text, identical to `cosmoql_value::to_json_string(&self.to_value())` (Cosmos
    /// number formatting; NaN/±∞ omitted), written straight from the bytes. `None` only when the
    /// root has no JSON form (a non-finite number).
    pub fn to_json_string(&self) -> Option<String> {
        self.root().to_json_string()
    }

    /// Appends the compact JSON text (UTF-8) to `out`, e.g. a response body; see
    /// [`Doc::to_json_string`]. Returns `false`, and appends nothing, when the root has no JSON
    /// form.
    pub fn write_json(&self, out: &mut Vec<u8>) -> bool {
        self.root().write_json(out)
    }

    /// A new document with the given top-level fields set: a field already present is replaced
    /// in place, others are appended in the order given. Setting a field to `undefined` removes
    /// it. If a name is given twice, its last value is used (at the first name's position when
    /// appended). The other fields are copied as bytes, not decoded. Errors if the root is not an
    /// object or a value is nested too deeply.
    pub fn with_fields(&self, fields: &[(&str, &Value)]) -> Result<Doc, DocError> {
        let root = self.root();
        let Some((Head::Object(_, payload), _)) = head(root.bytes) else {
            return Err(DocError::not_an_object(root.kind()));
        };
        let last_value = |name: &[u8]| fields.iter().rev().find(|(k, _)| k.as_bytes() == name).map(|(_, v)| *v);
        // Built in the portable form (the values given are encoded so), then sealed.
        let mut buf = Vec::with_capacity(self.len() + 16 * fields.len() + 8);
        let start = begin_container(&mut buf, tag::OBJECT);
        let mut count = 0;
        let mut rest = payload;
        let malformed = |rest: &[u8]| DocError::malformed(root.bytes.len() - rest.len(), "bad object entry");
        while !rest.is_empty() {
            let Some((key, value, size)) = split_entry(rest) else {
                return Err(malformed(rest));
            };
            match last_value(key) {
                None => {
                    push_key_in(&mut buf, key, Form::Portable);
                    convert(value, Form::Memory, &mut buf, 1).ok_or_else(|| malformed(rest))?;
                    count += 1;
                }
                Some(v) => count += usize::from(push_field(&mut buf, key, v)?),
            }
            rest = rest.get(size..).unwrap_or_default();
        }
        for (i, (name, _)) in fields.iter().enumerate() {
            let first_mention = !fields[..i].iter().any(|(k, _)| k == name);
            if first_mention && root.get(name).is_none() {
                if let Some(v) = last_value(name.as_bytes()) {
                    count += usize::from(push_field(&mut buf, name.as_bytes(), v)?);
                }
            }
        }
        end_container(&mut buf, start, count);
        with_writer(|w| seal_portable(&buf, &mut w.buf)).ok_or_else(|| malformed(&[]))
    }
}

/// Appends an object entry (the portable form); writes nothing and returns `false` for an
/// undefined value.
fn push_field(buf: &mut Vec<u8>, key: &[u8], v: &Value) -> Result<bool, DocError> {
    if v.is_undefined() {
        return Ok(false);
    }
    push_varint(buf, key.len());
    buf.extend_from_slice(key);
    push_value(buf, v, 1)
}

impl fmt::Debug for Doc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_json_string() {
            Some(json) => write!(f, "Doc({json})"),
            None => write!(f, "Doc({:?})", self.to_value()),
        }
    }
}

impl AsRef<[u8]> for Doc {
    /// [`Doc::as_bytes`].
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

// ---------------------------------------------------------------------------------------------
// DocRef
// ---------------------------------------------------------------------------------------------

/// A borrowed view of one encoded value (a whole document or any part of it). Cheap to copy.
/// Reading a field or element does not decode anything else.
#[derive(Clone, Copy)]
pub struct DocRef<'a> {
    /// Exactly one encoded value (if well-formed).
    bytes: &'a [u8],
}

impl<'a> DocRef<'a> {
    /// A view of bytes in the in-memory encoding ([`Doc::as_bytes`]): validates that they are
    /// exactly one well-formed value whose key numbers the name table holds.
    pub fn new(bytes: &'a [u8]) -> Result<DocRef<'a>, DocError> {
        validate_all(bytes, Form::Memory)?;
        Ok(DocRef { bytes })
    }

    /// A view of bytes known to come from the encoder, without validating them (O(1)). If they are
    /// malformed nothing panics, but results are unspecified: lookups return `None`, iteration
    /// stops early, decoding yields `undefined` for the malformed parts and JSON output may be
    /// incomplete.
    pub fn trusted(bytes: &'a [u8]) -> DocRef<'a> {
        DocRef { bytes }
    }

    /// The encoded bytes of this value.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    #[inline]
    fn head(&self) -> Option<Head<'a>> {
        head(self.bytes).map(|(h, _)| h)
    }

    /// The JSON type (`Undefined` only for malformed bytes). From the tag and the value's size
    /// alone (what [`head`] would decode is not needed): the schema walks and column builds of the
    /// analytical store ask it of every value, several times.
    #[inline]
    pub fn kind(&self) -> ValueKind {
        let Some(&t) = self.bytes.first() else { return ValueKind::Undefined };
        let kind = match t {
            tag::NULL => ValueKind::Null,
            tag::FALSE | tag::TRUE => ValueKind::Boolean,
            tag::F64 | tag::I8 | tag::I16 | tag::I32 | tag::SMALL_INT..=0xFF => ValueKind::Number,
            tag::STRING | tag::SHORT_STRING..=tag::SHORT_STRING_LAST => ValueKind::String,
            tag::ARRAY => ValueKind::Array,
            tag::OBJECT => ValueKind::Object,
            _ => return ValueKind::Undefined,
        };
        // Whole, as `head` requires: its bytes all there.
        if value_size(self.bytes).is_some() {
            kind
        } else {
            ValueKind::Undefined
        }
    }

    /// A string's UTF-8 bytes as stored (checked when the document was made, not again), if this
    /// is one: for building many strings at once and checking them together.
    pub fn str_bytes(&self) -> Option<&'a [u8]> {
        match self.head()? {
            Head::String(s) => Some(s),
            _ => None,
        }
    }

    /// `true` for `null`.
    pub fn is_null(&self) -> bool {
        matches!(self.head(), Some(Head::Null))
    }

    /// `true` for booleans.
    pub fn is_bool(&self) -> bool {
        matches!(self.head(), Some(Head::Bool(_)))
    }

    /// `true` for numbers.
    pub fn is_number(&self) -> bool {
        matches!(self.head(), Some(Head::Number(_)))
    }

    /// `true` for strings.
    pub fn is_string(&self) -> bool {
        matches!(self.head(), Some(Head::String(_)))
    }

    /// `true` for arrays.
    pub fn is_array(&self) -> bool {
        matches!(self.head(), Some(Head::Array(..)))
    }

    /// `true` for objects.
    pub fn is_object(&self) -> bool {
        matches!(self.head(), Some(Head::Object(..)))
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self.head()? {
            Head::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The number, if this is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self.head()? {
            Head::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The string (borrowed from the document), if this is one.
    pub fn as_str(&self) -> Option<&'a str> {
        match self.head()? {
            Head::String(s) => std::str::from_utf8(s).ok(),
            _ => None,
        }
    }

    /// Number of elements of an array or entries of an object; 0 for anything else.
    pub fn len(&self) -> usize {
        match self.head() {
            Some(Head::Array(n, _) | Head::Object(n, _)) => n,
            _ => 0,
        }
    }

    /// `true` unless this is a non-empty array or object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Property `key` of an object (`None` if missing or not an object). Scans the keys, jumping
    /// over the values.
    pub fn get(&self, key: &str) -> Option<DocRef<'a>> {
        let Head::Object(_, payload) = self.head()? else { return None };
        let key = key.as_bytes();
        let mut pos = 0;
        while pos < payload.len() {
            let (k, kend) = read_key(payload, pos, Form::Memory)?;
            let value = payload.get(kend..)?;
            let size = value_size(value)?;
            if k == key {
                return value.get(..size).map(|bytes| DocRef { bytes });
            }
            pos = kend + size;
        }
        None
    }

    /// Element `i` of an array (`None` if out of bounds or not an array).
    pub fn index(&self, i: usize) -> Option<DocRef<'a>> {
        match self.head()? {
            Head::Array(n, _) if i >= n => None,
            Head::Array(..) => self.elements().nth(i),
            _ => None,
        }
    }

    /// Follows a path of property names: `path(&["a", "b"])` is `get("a")?.get("b")`. The empty
    /// path is this value.
    pub fn path(&self, keys: &[&str]) -> Option<DocRef<'a>> {
        keys.iter().try_fold(*self, |v, k| v.get(k))
    }

    /// The entries of an object, in order (empty for anything else).
    pub fn entries(&self) -> Entries<'a> {
        match self.head() {
            Some(Head::Object(_, payload)) => Entries::of(payload),
            _ => Entries::of(&[]),
        }
    }

    /// What this value is, with its contents, from one reading of its header: for walks that
    /// visit every value (an index entering an item). `None` for malformed bytes.
    pub fn node(&self) -> Option<Node<'a>> {
        Some(match self.head()? {
            Head::Null => Node::Null,
            Head::Bool(b) => Node::Bool(b),
            Head::Number(n) => Node::Number(n),
            Head::String(s) => Node::String(s),
            Head::Array(_, payload) => Node::Array(Elements { rest: payload }),
            Head::Object(_, payload) => Node::Object(RawEntries { rest: payload }),
        })
    }

    /// The elements of an array, in order (empty for anything else).
    pub fn elements(&self) -> Elements<'a> {
        match self.head() {
            Some(Head::Array(_, payload)) => Elements { rest: payload },
            _ => Elements { rest: &[] },
        }
    }

    /// Decodes this value completely.
    pub fn to_value(&self) -> Value {
        decode(self.bytes, 0, 0)
    }

    /// What this value holds, counted in one pass without decoding it: the measure of its
    /// decoded value's size (`None` for malformed bytes).
    pub fn shape(&self) -> Option<Shape> {
        let mut shape = Shape { finite: true, ..Shape::default() };
        decode::shape(self.bytes, 0, &mut shape).map(|_| shape)
    }

    /// [`DocRef::to_value`], an object with room for `room` more properties (an item's system
    /// properties) without growing.
    pub fn to_value_with_room(&self, room: usize) -> Value {
        decode(self.bytes, 0, room)
    }

    /// Compact JSON text, identical to `cosmoql_value::to_json_string(&self.to_value())`; `None`
    /// when this value has no JSON form (a non-finite number, or malformed bytes).
    pub fn to_json_string(&self) -> Option<String> {
        let mut out = Vec::with_capacity(self.bytes.len() + self.bytes.len() / 4 + 8);
        if self.write_json(&mut out) {
            String::from_utf8(out).ok()
        } else {
            None
        }
    }

    /// Appends the compact JSON text (UTF-8) to `out`; see [`DocRef::to_json_string`]. Returns
    /// `false`, and appends nothing, when the value has no JSON form. (Only for malformed bytes
    /// from [`DocRef::trusted`] can the output be invalid UTF-8.)
    pub fn write_json(&self, out: &mut Vec<u8>) -> bool {
        let mark = out.len();
        let written = write_json(out, self.bytes, 0);
        if !written {
            out.truncate(mark);
        }
        written
    }
}

impl fmt::Debug for DocRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_json_string() {
            Some(json) => write!(f, "DocRef({json})"),
            None => write!(f, "DocRef({:?})", self.to_value()),
        }
    }
}

/// A value inside a document, kept with the document's shared bytes: a query's result that is
/// part of an item (`SELECT VALUE c.location`), read or written from them ([`Doc::part`]).
#[derive(Debug, Clone)]
pub struct DocPart {
    doc: Doc,
    start: usize,
    end: usize,
}

impl DocPart {
    /// The value.
    pub fn root(&self) -> DocRef<'_> {
        DocRef { bytes: self.doc.0.get(self.start..self.end).unwrap_or_default() }
    }

    /// The bytes of the whole document it keeps alive (in memory: [`Doc::memory_len`]).
    pub fn doc_len(&self) -> usize {
        self.doc.memory_len()
    }
}

/// What a value holds ([`DocRef::shape`]): its objects, their entries and the bytes of their
/// keys, its arrays, its strings and their bytes, its other values (numbers, booleans, nulls),
/// and whether every number is finite (JSON can write it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shape {
    pub objects: u64,
    pub entries: u64,
    pub key_bytes: u64,
    pub arrays: u64,
    pub strings: u64,
    pub string_bytes: u64,
    pub scalars: u64,
    pub finite: bool,
}

/// Partition key values are read from the encoded item, without decoding it.
impl<'a> cosmoql_catalog::DocView<'a> for DocRef<'a> {
    fn get(&self, key: &str) -> Option<Self> {
        DocRef::get(self, key)
    }
    fn as_str(&self) -> Option<&'a str> {
        DocRef::as_str(self)
    }
    fn as_f64(&self) -> Option<f64> {
        DocRef::as_f64(self)
    }
    fn as_bool(&self) -> Option<bool> {
        DocRef::as_bool(self)
    }
    fn is_null(&self) -> bool {
        DocRef::is_null(self)
    }
    fn kind_name(&self) -> &'static str {
        self.kind().name()
    }
}

#[cfg(test)]
mod tests;
