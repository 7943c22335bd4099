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
//! An object entry is the key (varint byte length, UTF-8 bytes) followed by its value.
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
//! [`Doc::from_json_str`] deserializes JSON text directly into the binary form with a serde
//! `Visitor` (no intermediate `Value`, no per-field allocation: strings without escapes are
//! borrowed from the input, and encoding goes into a reused per-thread buffer). Numbers are parsed
//! by serde_json exactly as [`cosmoql_value::parse_json`] parses them, so
//! `Doc::from_json_str(s)?.to_value() == parse_json(s)?` — structurally, key order and number bits
//! included.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use cosmoql_value::{format_number, Map, Value, ValueKind};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

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
#[inline]
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

/// One object entry at the start of `b`: `(key bytes, value bytes, entry size)`.
#[inline]
fn split_entry(b: &[u8]) -> Option<(&[u8], &[u8], usize)> {
    let (klen, p) = read_varint(b, 0)?;
    let kend = p.checked_add(klen)?;
    let key = b.get(p..kend)?;
    let (value, _) = split_value(b.get(kend..)?)?;
    Some((key, value, kend + value.len()))
}

/// The key of the entry starting at `start` in an encoder buffer.
fn key_at(buf: &[u8], start: usize) -> &[u8] {
    match read_varint(buf, start) {
        Some((len, p)) => buf.get(p..p.saturating_add(len)).unwrap_or(&[]),
        None => &[],
    }
}

/// `true` if two of `keys` are equal.
fn has_duplicates<'k>(n: usize, key: impl Fn(usize) -> &'k [u8]) -> bool {
    if n < 2 {
        false
    } else if n <= 16 {
        (1..n).any(|i| {
            let ki = key(i);
            (0..i).any(|j| key(j) == ki)
        })
    } else {
        let mut seen = HashSet::with_capacity(n);
        (0..n).any(|i| !seen.insert(key(i)))
    }
}

// ---------------------------------------------------------------------------------------------
// Low-level writing
// ---------------------------------------------------------------------------------------------

/// Bytes reserved for a container header before its children are written: the minimum (one
/// byte each for count and length); the children are shifted right when the header is longer.
const HEADER_GUESS: usize = 2;

#[inline]
fn push_varint(buf: &mut Vec<u8>, v: usize) {
    let mut v = v as u64;
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Writes a varint into `out` at `pos`; returns the position after it. `out` must have room
/// (10 bytes per varint).
fn put_varint(out: &mut [u8; 20], mut pos: usize, v: usize) -> usize {
    let mut v = v as u64;
    while v >= 0x80 && pos < out.len() {
        out[pos] = (v as u8) | 0x80;
        v >>= 7;
        pos += 1;
    }
    if pos < out.len() {
        out[pos] = v as u8;
        pos += 1;
    }
    pos
}

#[inline]
fn push_string(buf: &mut Vec<u8>, s: &str) {
    let len = s.len();
    if len <= tag::SHORT_STRING_MAX {
        buf.push(tag::SHORT_STRING + len as u8);
    } else {
        buf.push(tag::STRING);
        push_varint(buf, len);
    }
    buf.extend_from_slice(s.as_bytes());
}

#[inline]
fn push_key(buf: &mut Vec<u8>, k: &str) {
    push_varint(buf, k.len());
    buf.extend_from_slice(k.as_bytes());
}

#[inline]
fn push_number(buf: &mut Vec<u8>, n: f64) {
    // Integral, not -0, within i32: the conversion is exact and gives back the same f64.
    if n.fract() == 0.0 && (-2_147_483_648.0..=2_147_483_647.0).contains(&n) && !(n == 0.0 && n.is_sign_negative()) {
        let i = n as i32;
        if (0..=tag::SMALL_INT_MAX).contains(&i) {
            buf.push(tag::SMALL_INT + i as u8);
        } else if let Ok(i) = i8::try_from(i) {
            buf.push(tag::I8);
            buf.extend_from_slice(&i.to_le_bytes());
        } else if let Ok(i) = i16::try_from(i) {
            buf.push(tag::I16);
            buf.extend_from_slice(&i.to_le_bytes());
        } else {
            buf.push(tag::I32);
            buf.extend_from_slice(&i.to_le_bytes());
        }
    } else {
        buf.push(tag::F64);
        buf.extend_from_slice(&n.to_le_bytes());
    }
}

/// Starts a container: writes the tag and reserves [`HEADER_GUESS`] bytes. Returns its start.
#[inline]
fn begin_container(buf: &mut Vec<u8>, t: u8) -> usize {
    let start = buf.len();
    buf.push(t);
    buf.extend_from_slice(&[0; HEADER_GUESS]);
    start
}

/// Finishes the container begun at `start` once its `count` children follow the reserved header.
#[inline]
fn end_container(buf: &mut Vec<u8>, start: usize, count: usize) {
    let payload_start = start + 1 + HEADER_GUESS;
    let old_end = buf.len();
    let mut header = [0u8; 20];
    let h = put_varint(&mut header, 0, count);
    let h = put_varint(&mut header, h, old_end.saturating_sub(payload_start));
    if h > HEADER_GUESS {
        let d = h - HEADER_GUESS;
        buf.resize(old_end + d, 0);
        buf.copy_within(payload_start..old_end, payload_start + d);
    }
    if let Some(slot) = buf.get_mut(start + 1..start + 1 + h) {
        slot.copy_from_slice(&header[..h]);
    }
}

/// Rewrites the entries of an object (at `starts`, up to the end of `buf`) so that each key
/// appears once, at its first position, with its last value. Returns the new entry count.
fn dedupe_entries(buf: &mut Vec<u8>, starts: &[usize]) -> usize {
    let Some(&first) = starts.first() else { return 0 };
    let end = buf.len();
    let mut scratch = Vec::with_capacity(end - first);
    {
        let b: &[u8] = buf;
        // (entry holding the key, entry holding the value), in first-occurrence order.
        let mut order: Vec<(usize, usize)> = Vec::with_capacity(starts.len());
        let mut index: HashMap<&[u8], usize> = HashMap::with_capacity(starts.len());
        for (i, &start) in starts.iter().enumerate() {
            let k = key_at(b, start);
            match index.get(k) {
                Some(&slot) => order[slot].1 = i,
                None => {
                    index.insert(k, order.len());
                    order.push((i, i));
                }
            }
        }
        let entry = |i: usize| -> (usize, usize, usize) {
            let s = starts[i];
            let e = starts.get(i + 1).copied().unwrap_or(end);
            let kend = match read_varint(b, s) {
                Some((len, p)) => (p + len).min(e),
                None => e,
            };
            (s, kend, e)
        };
        for &(ki, vi) in &order {
            let (ks, kend, _) = entry(ki);
            let (_, vs, ve) = entry(vi);
            scratch.extend_from_slice(&b[ks..kend]);
            scratch.extend_from_slice(&b[vs..ve]);
        }
        buf.truncate(first);
        buf.extend_from_slice(&scratch);
        order.len()
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding from JSON text
// ---------------------------------------------------------------------------------------------

/// Reusable encoder state: the output buffer and the stack of object entry starts (used to find
/// and resolve duplicate keys).
#[derive(Debug, Default)]
struct Writer {
    buf: Vec<u8>,
    entries: Vec<usize>,
}

thread_local! {
    static WRITER: RefCell<Writer> = RefCell::new(Writer::default());
}

/// Runs `f` with this thread's reusable writer (cleared), or a fresh one if it is busy.
fn with_writer<R>(f: impl FnOnce(&mut Writer) -> R) -> R {
    WRITER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut w) => {
            w.buf.clear();
            w.entries.clear();
            let r = f(&mut w);
            if w.buf.capacity() > 1 << 20 {
                w.buf = Vec::new();
            }
            r
        }
        Err(_) => f(&mut Writer::default()),
    })
}

/// Deserializes one JSON value into the writer. `depth` = number of enclosing containers.
struct ValueSeed<'w> {
    w: &'w mut Writer,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    // Number conversions exactly as cosmoql_value's `ValueVisitor`.
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<(), E> {
        self.w.buf.push(if b { tag::TRUE } else { tag::FALSE });
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<(), E> {
        push_number(&mut self.w.buf, n as f64);
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<(), E> {
        push_number(&mut self.w.buf, n as f64);
        Ok(())
    }

    fn visit_i128<E: de::Error>(self, n: i128) -> Result<(), E> {
        push_number(&mut self.w.buf, n as f64);
        Ok(())
    }

    fn visit_u128<E: de::Error>(self, n: u128) -> Result<(), E> {
        push_number(&mut self.w.buf, n as f64);
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<(), E> {
        push_number(&mut self.w.buf, n);
        Ok(())
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        push_string(&mut self.w.buf, s);
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.w.buf.push(tag::NULL);
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.w.buf.push(tag::NULL);
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        if self.depth >= MAX_DEPTH {
            return Err(de::Error::custom(TOO_DEEP_JSON));
        }
        let w = self.w;
        let start = begin_container(&mut w.buf, tag::ARRAY);
        let mut count = 0;
        while seq.next_element_seed(ValueSeed { w: &mut *w, depth: self.depth + 1 })?.is_some() {
            count += 1;
        }
        end_container(&mut w.buf, start, count);
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if self.depth >= MAX_DEPTH {
            return Err(de::Error::custom(TOO_DEEP_JSON));
        }
        let w = self.w;
        let start = begin_container(&mut w.buf, tag::OBJECT);
        let base = w.entries.len();
        loop {
            let entry_start = w.buf.len();
            if map.next_key_seed(KeySeed { w: &mut *w })?.is_none() {
                break;
            }
            w.entries.push(entry_start);
            map.next_value_seed(ValueSeed { w: &mut *w, depth: self.depth + 1 })?;
        }
        let mut count = w.entries.len() - base;
        {
            let Writer { buf, entries } = &mut *w;
            let starts = &entries[base..];
            if has_duplicates(starts.len(), |i| key_at(buf, starts[i])) {
                count = dedupe_entries(buf, starts);
            }
        }
        w.entries.truncate(base);
        end_container(&mut w.buf, start, count);
        Ok(())
    }
}

/// Deserializes one object key into the writer.
struct KeySeed<'w> {
    w: &'w mut Writer,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        push_key(&mut self.w.buf, s);
        Ok(())
    }
}

fn encode_json_with<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
    require_object: bool,
) -> Result<Doc, DocError> {
    with_writer(|w| {
        ValueSeed { w: &mut *w, depth: 0 }.deserialize(&mut de).map_err(|e| DocError::json(&e))?;
        de.end().map_err(|e| DocError::json(&e))?;
        if require_object && w.buf.first() != Some(&tag::OBJECT) {
            let kind = head(&w.buf).map_or(ValueKind::Undefined, |(h, _)| h.kind());
            return Err(DocError::not_an_object(kind));
        }
        Ok(Doc(Arc::from(w.buf.as_slice())))
    })
}

/// Encodes one JSON text of any type (object, array, scalar). Items use [`Doc::from_json_str`],
/// which requires an object.
pub fn encode_json_str(text: &str) -> Result<Doc, DocError> {
    encode_json_with(serde_json::Deserializer::from_str(text), false)
}

/// Like [`encode_json_str`], from UTF-8 bytes.
pub fn encode_json_slice(bytes: &[u8]) -> Result<Doc, DocError> {
    encode_json_with(serde_json::Deserializer::from_slice(bytes), false)
}

// ---------------------------------------------------------------------------------------------
// Encoding from Value
// ---------------------------------------------------------------------------------------------

/// Appends `v`; returns `false` (writing nothing) for undefined. `depth` = enclosing containers.
fn push_value(buf: &mut Vec<u8>, v: &Value, depth: usize) -> Result<bool, DocError> {
    match v {
        Value::Undefined => return Ok(false),
        Value::Null => buf.push(tag::NULL),
        Value::Bool(b) => buf.push(if *b { tag::TRUE } else { tag::FALSE }),
        Value::Number(n) if !n.is_finite() => {
            return Err(DocError::new(
                DocErrorKind::NonFinite,
                format!("{} cannot be stored: JSON has no form for NaN or infinities", format_number(*n)),
            ))
        }
        Value::Number(n) => push_number(buf, *n),
        Value::String(s) => push_string(buf, s),
        Value::Array(a) => {
            if depth >= MAX_DEPTH {
                return Err(DocError::too_deep());
            }
            let start = begin_container(buf, tag::ARRAY);
            let mut count = 0;
            for e in a.iter() {
                if push_value(buf, e, depth + 1)? {
                    count += 1;
                }
            }
            end_container(buf, start, count);
        }
        Value::Object(o) => {
            if depth >= MAX_DEPTH {
                return Err(DocError::too_deep());
            }
            let start = begin_container(buf, tag::OBJECT);
            let mut count = 0;
            for (k, e) in o.iter() {
                if e.is_undefined() {
                    continue;
                }
                push_key(buf, k);
                push_value(buf, e, depth + 1)?;
                count += 1;
            }
            end_container(buf, start, count);
        }
    }
    Ok(true)
}

/// Appends the encoding of `v` (any type) to `out`. Undefined fields and elements are omitted; a
/// top-level undefined is an error (and writes nothing).
pub fn encode_value_into(out: &mut Vec<u8>, v: &Value) -> Result<(), DocError> {
    let mark = out.len();
    match push_value(out, v, 0) {
        Ok(true) => Ok(()),
        Ok(false) => Err(DocError::new(DocErrorKind::Undefined, "undefined has no stored form")),
        Err(e) => {
            out.truncate(mark);
            Err(e)
        }
    }
}

/// Encodes a value of any type. Items use [`Doc::from_value`], which requires an object.
pub fn encode_value(v: &Value) -> Result<Doc, DocError> {
    with_writer(|w| {
        encode_value_into(&mut w.buf, v)?;
        Ok(Doc(Arc::from(w.buf.as_slice())))
    })
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

/// Checks the value at the start of `b` (found at `offset` in the whole input) completely;
/// returns its size. `depth` = enclosing containers.
fn validate(b: &[u8], offset: usize, depth: usize) -> Result<usize, DocError> {
    let (h, size) = head(b).ok_or_else(|| {
        DocError::malformed(offset, if b.is_empty() { "missing value" } else { "invalid tag or truncated value" })
    })?;
    match h {
        Head::Null | Head::Bool(_) | Head::Number(_) => {}
        Head::String(s) => {
            if std::str::from_utf8(s).is_err() {
                return Err(DocError::malformed(offset, "string is not UTF-8"));
            }
        }
        Head::Array(count, payload) | Head::Object(count, payload) => {
            if depth >= MAX_DEPTH {
                return Err(DocError::malformed(offset, "nested too deeply"));
            }
            let is_object = matches!(h, Head::Object(..));
            let payload_offset = offset + (size - payload.len());
            let mut keys: Vec<&[u8]> = Vec::new();
            let mut pos = 0;
            let mut n = 0usize;
            while pos < payload.len() {
                let at = payload_offset + pos;
                if is_object {
                    let (klen, p) =
                        read_varint(payload, pos).ok_or_else(|| DocError::malformed(at, "bad key length"))?;
                    let key = p
                        .checked_add(klen)
                        .and_then(|end| payload.get(p..end))
                        .ok_or_else(|| DocError::malformed(at, "key runs past its object"))?;
                    if std::str::from_utf8(key).is_err() {
                        return Err(DocError::malformed(at, "key is not UTF-8"));
                    }
                    keys.push(key);
                    pos = p + klen;
                }
                let rest = payload.get(pos..).unwrap_or(&[]);
                pos += validate(rest, payload_offset + pos, depth + 1)?;
                n += 1;
            }
            if n != count {
                return Err(DocError::malformed(offset, "element count does not match the contents"));
            }
            if has_duplicates(keys.len(), |i| keys[i]) {
                return Err(DocError::malformed(offset, "duplicate object key"));
            }
        }
    }
    Ok(size)
}

/// Validates that `bytes` is exactly one well-formed encoded value.
fn validate_all(bytes: &[u8]) -> Result<(), DocError> {
    let size = validate(bytes, 0, 0)?;
    if size != bytes.len() {
        return Err(DocError::malformed(size, "trailing bytes after the value"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Doc
// ---------------------------------------------------------------------------------------------

/// One encoded document: an immutable, reference-counted byte string (`clone()` is a refcount
/// increment). See the [module docs](self) for the format.
///
/// `==` compares the bytes: equal documents with different key order (or number forms) are not
/// `==`; compare `to_value()`s for value equality.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Doc(Arc<[u8]>);

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
        encode_json_with(serde_json::Deserializer::from_str(text), true)
    }

    /// Like [`Doc::from_json_str`], from UTF-8 bytes (e.g. one NDJSON line).
    pub fn from_json_slice(bytes: &[u8]) -> Result<Doc, DocError> {
        encode_json_with(serde_json::Deserializer::from_slice(bytes), true)
    }

    /// Takes encoded bytes from an untrusted source (a file, the network): validates that they
    /// are exactly one well-formed value of any type.
    pub fn from_bytes(bytes: &[u8]) -> Result<Doc, DocError> {
        validate_all(bytes)?;
        Ok(Doc(Arc::from(bytes)))
    }

    /// The encoded bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The shared bytes (indexes point into them instead of copying strings).
    pub(crate) fn shared(&self) -> &Arc<[u8]> {
        &self.0
    }

    /// Size of the encoding in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always `false` for a valid document (every value takes at least one byte).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The root value, to read lazily.
    pub fn root(&self) -> DocRef<'_> {
        DocRef { bytes: &self.0 }
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
        let mut buf = Vec::with_capacity(self.len() + 16 * fields.len() + 8);
        let start = begin_container(&mut buf, tag::OBJECT);
        let mut count = 0;
        let mut rest = payload;
        while !rest.is_empty() {
            let Some((key, _, size)) = split_entry(rest) else {
                return Err(DocError::malformed(self.len() - rest.len(), "bad object entry"));
            };
            let (entry, tail) = rest.split_at(size);
            rest = tail;
            match last_value(key) {
                None => {
                    buf.extend_from_slice(entry);
                    count += 1;
                }
                Some(v) => count += usize::from(push_field(&mut buf, key, v)?),
            }
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
        Ok(Doc(Arc::from(buf)))
    }
}

/// Appends an object entry; writes nothing and returns `false` for an undefined value.
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
    fn as_ref(&self) -> &[u8] {
        &self.0
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
    /// A view of untrusted bytes: validates that they are exactly one well-formed value.
    pub fn new(bytes: &'a [u8]) -> Result<DocRef<'a>, DocError> {
        validate_all(bytes)?;
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

    /// The JSON type (`Undefined` only for malformed bytes).
    pub fn kind(&self) -> ValueKind {
        self.head().map_or(ValueKind::Undefined, Head::kind)
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
            let (klen, p) = read_varint(payload, pos)?;
            let kend = p.checked_add(klen)?;
            let value = payload.get(kend..)?;
            let size = value_size(value)?;
            if payload.get(p..kend)? == key {
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
            Some(Head::Object(_, payload)) => Entries { rest: payload },
            _ => Entries { rest: &[] },
        }
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
        decode(self.bytes, 0)
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

/// Iterator over an object's entries: `(key, value)`. See [`DocRef::entries`].
#[derive(Clone, Debug)]
pub struct Entries<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Entries<'a> {
    type Item = (&'a str, DocRef<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let parsed = split_entry(self.rest).and_then(|(k, v, size)| Some((std::str::from_utf8(k).ok()?, v, size)));
        match parsed {
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

/// Iterator over an array's elements. See [`DocRef::elements`].
#[derive(Clone, Debug)]
pub struct Elements<'a> {
    rest: &'a [u8],
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

// ---------------------------------------------------------------------------------------------
// Decoding and JSON output
// ---------------------------------------------------------------------------------------------

/// Decodes the value at the start of `b`; `undefined` for malformed parts. `depth` = enclosing
/// containers.
fn decode(b: &[u8], depth: usize) -> Value {
    let Some((h, _)) = head(b) else { return Value::Undefined };
    match h {
        Head::Null => Value::Null,
        Head::Bool(v) => Value::Bool(v),
        Head::Number(n) => Value::Number(n),
        Head::String(s) => match std::str::from_utf8(s) {
            Ok(s) => Value::String(Arc::from(s)),
            Err(_) => Value::Undefined,
        },
        Head::Array(n, payload) => {
            if depth >= MAX_DEPTH {
                return Value::Undefined;
            }
            let mut items = Vec::with_capacity(n.min(payload.len()));
            for e in (Elements { rest: payload }) {
                let v = decode(e.bytes, depth + 1);
                if v.is_defined() {
                    items.push(v);
                }
            }
            Value::Array(Arc::new(items))
        }
        Head::Object(n, payload) => {
            if depth >= MAX_DEPTH {
                return Value::Undefined;
            }
            let mut map = Map::with_capacity(n.min(payload.len() / 2));
            for (k, e) in (Entries { rest: payload }) {
                let v = decode(e.bytes, depth + 1);
                if v.is_defined() {
                    map.insert(k.to_owned(), v);
                }
            }
            Value::Object(Arc::new(map))
        }
    }
}

/// Writes the JSON of the value at the start of `b`; `false` if it has no JSON form (then `out`
/// may hold a partial write, which the caller truncates). Strings and keys are copied as bytes
/// (UTF-8 is checked once over the whole output by [`DocRef::to_json_string`]).
fn write_json(out: &mut Vec<u8>, b: &[u8], depth: usize) -> bool {
    let Some((h, _)) = head(b) else { return false };
    match h {
        Head::Null => out.extend_from_slice(b"null"),
        Head::Bool(v) => out.extend_from_slice(if v { b"true" } else { b"false" }),
        Head::Number(n) => return write_number(out, n),
        Head::String(s) => write_escaped(out, s),
        Head::Array(_, payload) => {
            if depth >= MAX_DEPTH {
                return false;
            }
            out.push(b'[');
            let mut first = true;
            let mut rest = payload;
            while let Some((e, tail)) = split_value(rest) {
                rest = tail;
                let mark = out.len();
                if !first {
                    out.push(b',');
                }
                if write_json(out, e, depth + 1) {
                    first = false;
                } else {
                    out.truncate(mark);
                }
            }
            out.push(b']');
        }
        Head::Object(_, payload) => {
            if depth >= MAX_DEPTH {
                return false;
            }
            out.push(b'{');
            let mut first = true;
            let mut rest = payload;
            while let Some((k, e, size)) = split_entry(rest) {
                rest = rest.get(size..).unwrap_or_default();
                let mark = out.len();
                if !first {
                    out.push(b',');
                }
                write_escaped(out, k);
                out.push(b':');
                if write_json(out, e, depth + 1) {
                    first = false;
                } else {
                    out.truncate(mark);
                }
            }
            out.push(b'}');
        }
    }
    true
}

/// Writes a number as `cosmoql_value::to_json_string` does: integral values below 2^63 in
/// magnitude as integers (serde's `serialize_i64`), others with [`format_number`]; `false` for
/// NaN/±∞.
fn write_number(out: &mut Vec<u8>, n: f64) -> bool {
    // Safe integers (|n| <= 2^53) print digit for digit, as JavaScript does; larger ones use the
    // shortest round-trip form JavaScript uses (2^60 -> 1152921504606847000).
    const LIMIT: f64 = 9_007_199_254_740_993.0;
    if !n.is_finite() {
        return false;
    }
    if n.fract() == 0.0 && (-LIMIT..LIMIT).contains(&n) {
        write_i64(out, n as i64);
    } else {
        out.extend_from_slice(format_number(n).as_bytes());
    }
    true
}

fn write_i64(out: &mut Vec<u8>, i: i64) {
    let mut digits = [0u8; 20];
    let mut pos = digits.len();
    let mut u = i.unsigned_abs();
    loop {
        pos -= 1;
        digits[pos] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 || pos == 0 {
            break;
        }
    }
    if i < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[pos..]);
}

/// For each byte: the character after the backslash if it must be escaped in JSON (`u` for
/// `\u00XX`), else 0. The same set and spelling as serde_json.
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0A] = b'n';
    table[0x0C] = b'f';
    table[0x0D] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Writes a JSON string literal, escaped exactly as serde_json does.
fn write_escaped(out: &mut Vec<u8>, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let mut start = 0;
    for (i, &b) in s.iter().enumerate() {
        let esc = ESCAPE[usize::from(b)];
        if esc == 0 {
            continue;
        }
        out.extend_from_slice(s.get(start..i).unwrap_or_default());
        if esc == b'u' {
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xF)]]);
        } else {
            out.extend_from_slice(&[b'\\', esc]);
        }
        start = i + 1;
    }
    out.extend_from_slice(s.get(start..).unwrap_or_default());
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use cosmoql_value::{parse_json, to_json_string};

    fn v(json: &str) -> Value {
        parse_json(json).unwrap_or_else(|e| panic!("bad test json {json}: {e}"))
    }

    fn enc(json: &str) -> Doc {
        encode_json_str(json).unwrap_or_else(|e| panic!("cannot encode {json}: {e}"))
    }

    /// Structural equality: kinds, number bits, key order.
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => x.to_bits() == y.to_bits(),
            (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| same(a, b)),
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len() && x.iter().zip(y.iter()).all(|((ka, a), (kb, b))| ka == kb && same(a, b))
            }
            _ => a == b && a.kind() == b.kind(),
        }
    }

    /// Encodes `json` both ways and checks decoding, JSON output and validation.
    fn round_trip(json: &str) -> Doc {
        let expected = v(json);
        let d = enc(json);
        let from_value = encode_value(&expected).unwrap_or_else(|e| panic!("{json}: {e}"));
        assert_eq!(d, from_value, "JSON and Value encodings differ for {json}");
        let back = d.to_value();
        assert!(same(&back, &expected), "{json}: decoded {back:?}");
        assert_eq!(d.to_json_string(), to_json_string(&expected), "{json}");
        assert!(DocRef::new(d.as_bytes()).is_ok(), "{json}: encoder output does not validate");
        d
    }

    #[test]
    fn scalars_use_their_tags() {
        assert_eq!(round_trip("null").as_bytes(), [tag::NULL]);
        assert_eq!(round_trip("false").as_bytes(), [tag::FALSE]);
        assert_eq!(round_trip("true").as_bytes(), [tag::TRUE]);
        assert_eq!(round_trip("0").as_bytes(), [0x80]);
        assert_eq!(round_trip("127").as_bytes(), [0xFF]);
        assert_eq!(round_trip("128").as_bytes(), [tag::I16, 128, 0]);
        assert_eq!(round_trip("-1").as_bytes(), [tag::I8, 0xFF]);
        assert_eq!(round_trip("-128").as_bytes(), [tag::I8, 0x80]);
        assert_eq!(round_trip("-129").as_bytes(), [tag::I16, 0x7F, 0xFF]);
        assert_eq!(round_trip("32768").as_bytes(), [tag::I32, 0, 0x80, 0, 0]);
        assert_eq!(round_trip("2147483647").as_bytes(), [tag::I32, 0xFF, 0xFF, 0xFF, 0x7F]);
        assert_eq!(round_trip("-2147483648").as_bytes(), [tag::I32, 0, 0, 0, 0x80]);
        assert_eq!(round_trip("2147483648").as_bytes()[0], tag::F64);
        assert_eq!(round_trip("1.5").as_bytes(), [&[tag::F64][..], &1.5f64.to_le_bytes()].concat());
        assert_eq!(round_trip("5.0").as_bytes(), [0x85], "integral floats are small ints");
        let neg_zero = round_trip("-0.0");
        assert_eq!(neg_zero.as_bytes(), [&[tag::F64][..], &(-0.0f64).to_le_bytes()].concat());
        assert!(neg_zero.root().as_f64().is_some_and(|n| n == 0.0 && n.is_sign_negative()));
        round_trip("-0");
        round_trip("1e300");
        round_trip("-5e-324");
        round_trip("9007199254740993");
        round_trip("18446744073709551616");
        round_trip("13.475000000000001");
        assert_eq!(round_trip(r#""""#).as_bytes(), [0x40]);
        assert_eq!(round_trip(r#""ab""#).as_bytes(), [0x42, b'a', b'b']);
        let s63 = format!("\"{}\"", "x".repeat(63));
        assert_eq!(round_trip(&s63).as_bytes()[0], 0x7F);
        let s64 = format!("\"{}\"", "x".repeat(64));
        assert_eq!(&round_trip(&s64).as_bytes()[..2], [tag::STRING, 64]);
    }

    #[test]
    fn non_finite_numbers_are_not_stored() {
        // JSON has no form for them: an item holding one would read back without it.
        for v in [
            Value::array([Value::from(1), Value::from(f64::NAN)]),
            Value::from(f64::INFINITY),
            Value::object([("a", Value::object([("b", Value::from(f64::NEG_INFINITY))]))]),
        ] {
            let err = encode_value(&v).unwrap_err();
            assert_eq!(err.kind(), DocErrorKind::NonFinite, "{err}");
        }
        let err = Doc::from_value(&Value::object([("a", Value::from(f64::NAN)), ("b", Value::from(2))])).unwrap_err();
        assert!(err.to_string().contains("NaN"), "{err}");
    }

    #[test]
    fn long_strings_use_multi_byte_varints() {
        for n in [127, 128, 300, 16_383, 16_384, 70_000] {
            let s = "é".repeat(n / 2) + &"a".repeat(n % 2);
            let d = encode_value(&Value::from(s.as_str())).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(d.root().as_str(), Some(s.as_str()));
            assert_eq!(
                d.len(),
                1 + s.len()
                    + if s.len() < 128 {
                        1
                    } else if s.len() < 16_384 {
                        2
                    } else {
                        3
                    }
            );
            // The same as a key and inside a big container (multi-byte container lengths).
            let json = format!(r#"{{"{s}":[{q},{q}],"z":1}}"#, q = format!("\"{s}\""));
            let d = round_trip(&json);
            assert_eq!(d.root().get(&s).and_then(|a| a.index(1)).and_then(|x| x.as_str()), Some(s.as_str()));
            assert_eq!(d.get("z").and_then(|x| x.as_f64()), Some(1.0));
        }
    }

    #[test]
    fn containers_nested_and_empty() {
        assert_eq!(round_trip("[]").as_bytes(), [tag::ARRAY, 0, 0]);
        assert_eq!(round_trip("{}").as_bytes(), [tag::OBJECT, 0, 0]);
        assert_eq!(round_trip(r#"{"a":1}"#).as_bytes(), [tag::OBJECT, 1, 3, 1, b'a', 0x81]);
        round_trip("[[],{},[[]],{\"a\":{}}]");
        let d = round_trip(r#"{"a":[1,[2,{"b":[3,null,true,"x"]}]],"c":{"d":{"e":-1.25}}}"#);
        let r = d.root();
        assert_eq!(r.len(), 2);
        assert_eq!(r.path(&["c", "d", "e"]).and_then(|x| x.as_f64()), Some(-1.25));
        assert_eq!(r.path(&[]).map(|x| x.kind()), Some(ValueKind::Object));
        assert!(r.path(&["c", "x", "e"]).is_none());
        let a = r.get("a").unwrap_or(r);
        assert_eq!(a.kind(), ValueKind::Array);
        assert_eq!(a.len(), 2);
        let inner = a.index(1).and_then(|x| x.index(1)).and_then(|x| x.get("b"));
        assert_eq!(inner.map(|x| x.len()), Some(4));
        assert_eq!(inner.and_then(|x| x.index(0)).and_then(|x| x.as_f64()), Some(3.0));
        assert!(inner.and_then(|x| x.index(1)).is_some_and(|x| x.is_null()));
        assert_eq!(inner.and_then(|x| x.index(2)).and_then(|x| x.as_bool()), Some(true));
        assert_eq!(inner.and_then(|x| x.index(3)).and_then(|x| x.as_str()), Some("x"));
        assert!(inner.and_then(|x| x.index(4)).is_none());
        assert!(a.get("b").is_none(), "get on an array");
        assert!(r.index(0).is_none(), "index on an object");
        assert!(r.get("zz").is_none());
        let elems: Vec<ValueKind> = a.elements().map(|x| x.kind()).collect();
        assert_eq!(elems, [ValueKind::Number, ValueKind::Array]);
        assert_eq!(a.entries().count(), 0);
        assert_eq!(r.elements().count(), 0);
        // A deep container whose header needs multi-byte lengths.
        let big = format!("[{}]", vec!["{\"k\":\"vvvvvvvvvv\"}"; 500].join(","));
        let d = round_trip(&big);
        assert_eq!(d.root().len(), 500);
        assert_eq!(d.root().index(499).and_then(|o| o.get("k")).and_then(|s| s.as_str()), Some("vvvvvvvvvv"));
    }

    #[test]
    fn key_order_and_duplicates() {
        let d = round_trip(r#"{"z":1,"a":2,"m":3}"#);
        let keys: Vec<&str> = d.root().entries().map(|(k, _)| k).collect();
        assert_eq!(keys, ["z", "a", "m"]);
        // Last value at the first position, as parse_json.
        let d = round_trip(r#"{"a":1,"b":2,"a":{"x":[1,2]},"c":3,"b":"s"}"#);
        assert_eq!(d.to_json_string().as_deref(), Some(r#"{"a":{"x":[1,2]},"b":"s","c":3}"#));
        assert_eq!(d.root().len(), 3);
        // Duplicates in a nested object, and many keys (hash-set path).
        round_trip(r#"{"o":{"k":1,"k":2,"k":3},"p":[{"a":1,"a":null}]}"#);
        let many: Vec<String> = (0..40).map(|i| format!("\"k{}\":{i}", i % 25)).collect();
        let d = round_trip(&format!("{{{}}}", many.join(",")));
        assert_eq!(d.root().len(), 25);
        assert_eq!(d.get("k3").and_then(|x| x.as_f64()), Some(28.0));
        // A duplicated key whose first value was a container.
        round_trip(r#"{"a":[1,2,3],"a":[]}"#);
    }

    #[test]
    fn unicode_and_escapes() {
        let d = round_trip(
            r#"{"ключ":"значение","emoji 🎉":"\ud83d\ude00","ctl":"a\u0001\b\f\n\r\t\"\\/\u007f","":"empty"}"#,
        );
        assert_eq!(d.get("ключ").and_then(|x| x.as_str()), Some("значение"));
        assert_eq!(d.get("emoji 🎉").and_then(|x| x.as_str()), Some("😀"));
        assert_eq!(d.get("").and_then(|x| x.as_str()), Some("empty"));
        let entries: Vec<(&str, Value)> = d.root().entries().map(|(k, x)| (k, x.to_value())).collect();
        assert_eq!(entries.len(), 4);
        assert_eq!(entries[2].1, Value::from("a\u{1}\u{8}\u{c}\n\r\t\"\\/\u{7f}"));
    }

    #[test]
    fn items_must_be_objects() {
        for text in ["[1]", "1", "\"s\"", "null", "true"] {
            let err = Doc::from_json_str(text).err();
            assert_eq!(err.as_ref().map(DocError::kind), Some(DocErrorKind::NotAnObject), "{text}");
            assert!(err.is_some_and(|e| e.to_string().contains("must be a JSON object")));
            assert!(Doc::from_value(&v(text)).is_err());
        }
        assert_eq!(Doc::from_value(&Value::Undefined).err().map(|e| e.kind()), Some(DocErrorKind::NotAnObject));
        assert_eq!(encode_value(&Value::Undefined).err().map(|e| e.kind()), Some(DocErrorKind::Undefined));
        assert!(Doc::from_json_str(" {\"a\":1}\n").is_ok());
        assert!(Doc::from_json_slice(b"{\"a\":[true]}").is_ok());
    }

    #[test]
    fn json_errors_have_positions() {
        let err = Doc::from_json_str("{\n  \"a\": ?}").err();
        assert_eq!(err.as_ref().map(|e| (e.kind(), e.line(), e.column())), Some((DocErrorKind::Json, 2, 8)));
        for bad in ["", "{", "[1,]", "{\"a\":1} x", "{\"a\" 1}", "{\"a\":NaN}", "{\"a\":01}", "{\"a\":\"\\ud800\"x}"] {
            assert!(Doc::from_json_str(bad).is_err(), "{bad:?}");
            assert!(parse_json(bad).is_err(), "{bad:?}");
        }
        assert!(Doc::from_json_slice(b"{\"a\":\"\xff\"}").is_err());
        // Deep nesting is an error, not a stack overflow; what serde_json accepts fits.
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(encode_json_str(&deep).err().map(|e| e.kind()), Some(DocErrorKind::TooDeep));
        let ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
        assert!(parse_json(&ok).is_ok());
        round_trip(&ok);
        let mut deep_value = Value::from(1);
        for _ in 0..MAX_DEPTH + 1 {
            deep_value = Value::array([deep_value]);
        }
        assert_eq!(encode_value(&deep_value).err().map(|e| e.kind()), Some(DocErrorKind::TooDeep));
    }

    #[test]
    fn undefined_is_omitted() {
        let val = Value::object([
            ("a", Value::Undefined),
            ("b", Value::array([Value::Undefined, Value::from(1), Value::Undefined])),
            ("c", Value::object([("x", Value::Undefined)])),
        ]);
        let d = Doc::from_value(&val).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.to_json_string().as_deref(), Some(r#"{"b":[1],"c":{}}"#));
        assert!(same(&d.to_value(), &v(r#"{"b":[1],"c":{}}"#)));
        assert!(d.get("a").is_none());
    }

    #[test]
    fn with_fields_replaces_and_appends() {
        let d = Doc::from_json_str(r#"{"id":"x","pk":"p","n":[1,2],"_ts":5}"#).unwrap_or_else(|e| panic!("{e}"));
        let ts = Value::from(1_717_000_000);
        let rid = Value::from("AAAA==");
        let etag = Value::from("\"0000\"");
        let d2 = d.with_fields(&[("_rid", &rid), ("_ts", &ts), ("_etag", &etag)]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            d2.to_json_string().as_deref(),
            Some(r#"{"id":"x","pk":"p","n":[1,2],"_ts":1717000000,"_rid":"AAAA==","_etag":"\"0000\""}"#)
        );
        assert_eq!(d2.root().len(), 6);
        assert!(DocRef::new(d2.as_bytes()).is_ok());
        // Replace a field with a container, remove one with undefined, name given twice.
        let obj = Value::object([("deep", Value::array([1, 2, 3]))]);
        let d3 = d2
            .with_fields(&[("pk", &obj), ("n", &Value::Undefined), ("new", &Value::Null), ("new", &Value::from(7))])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            d3.to_json_string().as_deref(),
            Some(r#"{"id":"x","pk":{"deep":[1,2,3]},"_ts":1717000000,"_rid":"AAAA==","_etag":"\"0000\"","new":7}"#)
        );
        assert_eq!(d3.root().len(), 6);
        assert!(DocRef::new(d3.as_bytes()).is_ok());
        // Nothing to do; non-object root.
        assert_eq!(d.with_fields(&[]).ok(), Some(d.clone()));
        assert_eq!(d.with_fields(&[("zz", &Value::Undefined)]).ok(), Some(d.clone()));
        let arr = encode_json_str("[1]").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(arr.with_fields(&[("a", &ts)]).err().map(|e| e.kind()), Some(DocErrorKind::NotAnObject));
        // A header that grows past one byte.
        let long = Value::from("y".repeat(200));
        let d4 = d.with_fields(&[("long", &long)]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d4.get("long").and_then(|x| x.as_str()).map(str::len), Some(200));
        assert!(DocRef::new(d4.as_bytes()).is_ok());
    }

    #[test]
    fn to_json_matches_value_crate() {
        for json in [
            r#"{"a":1.0,"b":-0.0,"c":1e21,"d":1e-7,"e":123456789012345680000,"f":0.1,"g":1152921504606846976}"#,
            r#"[9007199254740993,-9223372036854775808,9223372036854775807,1.7976931348623157e308,5e-324]"#,
            r#"{"s":"\u0000\u001f\u0020 \"quoted\" back\\slash","t":"tab\there","u":"✓"}"#,
        ] {
            round_trip(json);
        }
        let d = enc(r#"{"a":[1,2.5,"x"]}"#);
        let mut out = b"prefix:".to_vec();
        assert!(d.write_json(&mut out));
        assert_eq!(out, br#"prefix:{"a":[1,2.5,"x"]}"#);
        assert!(!encode_value(&Value::from(f64::NAN)).is_ok_and(|d| d.write_json(&mut out)));
        assert_eq!(out, br#"prefix:{"a":[1,2.5,"x"]}"#);
        assert_eq!(format!("{d:?}"), r#"Doc({"a":[1,2.5,"x"]})"#);
    }

    #[test]
    fn validation_rejects_malformed_bytes() {
        let good = enc(r#"{"a":[1,"x"],"b":{"c":null}}"#);
        let bytes = good.as_bytes();
        assert!(Doc::from_bytes(bytes).is_ok_and(|d| d == good));
        // Every truncation is rejected, and accessors on it do not panic.
        for cut in 0..bytes.len() {
            let part = &bytes[..cut];
            assert!(DocRef::new(part).is_err(), "prefix of {cut} bytes accepted");
            let r = DocRef::trusted(part);
            let _ = (r.to_value(), r.to_json_string(), r.get("a"), r.get("b"), r.len(), r.kind());
        }
        let cases: &[(&[u8], &str)] = &[
            (&[], "missing value"),
            (&[0x0A], "invalid tag"),
            (&[0x00, 0x00], "trailing"),
            (&[0x41, 0xFF], "UTF-8"),
            (&[tag::ARRAY, 2, 1, 0x80], "count"),
            (&[tag::OBJECT, 1, 3, 1, 0xFF, 0x80], "key is not UTF-8"),
            (&[tag::OBJECT, 2, 6, 1, b'a', 0x80, 1, b'a', 0x81], "duplicate"),
            (&[tag::STRING, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F], "invalid tag or truncated"),
        ];
        for (b, what) in cases {
            let err = Doc::from_bytes(b).err();
            assert_eq!(err.as_ref().map(DocError::kind), Some(DocErrorKind::Malformed), "{b:?}");
            assert!(err.is_some_and(|e| e.to_string().contains(what)), "{b:?}: expected {what}");
        }
        // Non-canonical but valid forms are accepted.
        assert!(Doc::from_bytes(&[tag::I32, 1, 0, 0, 0]).is_ok_and(|d| d.root().as_f64() == Some(1.0)));
        assert!(Doc::from_bytes(&[tag::STRING, 0x81, 0x00, b'a']).is_ok_and(|d| d.root().as_str() == Some("a")));
        // Too deep.
        let mut deep = Vec::new();
        for _ in 0..=MAX_DEPTH {
            deep.extend_from_slice(&[tag::ARRAY, 1, 0]);
        }
        assert!(Doc::from_bytes(&deep).is_err());
        let r = DocRef::trusted(&deep);
        let _ = (r.to_value(), r.to_json_string());
    }

    #[test]
    fn varints() {
        for n in [0usize, 1, 127, 128, 255, 16_383, 16_384, 1 << 35, usize::MAX] {
            let mut b = Vec::new();
            push_varint(&mut b, n);
            assert_eq!(read_varint(&b, 0), Some((n, b.len())), "{n}");
            let mut arr = [0u8; 20];
            let len = put_varint(&mut arr, 0, n);
            assert_eq!(&arr[..len], &b[..]);
        }
        assert_eq!(read_varint(&[0x80; 11], 0), None);
        assert_eq!(read_varint(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], 0), None);
        assert_eq!(read_varint(&[0x80], 0), None);
    }

    #[test]
    fn telemetry_doc_size() {
        let json = r#"{"id":"847e7a93-b52a-4037-accb-00000000c350","deviceId":"dev-00299","readingTime":"2024-06-03T17:21:09.412Z","date":"2024-06-03","metricType":"Temperature","unit":"celsius","metricValue":73.123456,"tags":["critical","outdoor"],"location":{"city":"Seattle","zip":"98101"}}"#;
        let d = Doc::from_json_str(json).unwrap_or_else(|e| panic!("{e}"));
        assert!(d.len() < json.len(), "{} >= {}", d.len(), json.len());
        assert_eq!(d.to_json_string().as_deref(), Some(json));
        assert_eq!(d.get("location").and_then(|l| l.get("zip")).and_then(|z| z.as_str()), Some("98101"));
    }
}
