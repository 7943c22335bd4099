//! The decoder: walks a binary JSON body and builds a [`serde_json::Value`].
//!
//! The walk is iterative: open containers live on an explicit stack (at most
//! [`MAX_DEPTH`] of them) rather than on the call stack, so deep input costs
//! heap proportional to its size and never a stack overflow, whatever the
//! build profile or thread. [`Reader`] keeps a cursor and an `end` that no
//! read may pass: the end of the body, or the end of the innermost sized
//! container, so a child can never spill out of its parent. Every read goes
//! through [`Reader::take`], which compares the wanted size with what is left
//! before touching the bytes.

use serde_json::{Map, Value};

use super::format::{self, Form, Framing, NumberType, PREAMBLE};
use super::{DecodeError, ErrorKind};

/// Most containers that may be open at once. A value inside the innermost of
/// 256 nested containers is accepted; a 257th container is an error.
pub const MAX_DEPTH: usize = 256;

/// Text produced by string references may reach this many times the body
/// size in total...
const REFERENCE_TEXT_FACTOR: usize = 16;
/// ...but never less than this, which is above the largest Cosmos DB item.
const REFERENCE_TEXT_FLOOR: usize = 16 * 1024 * 1024;

type Result<T> = std::result::Result<T, DecodeError>;

/// Decodes a whole body: preamble, one value, nothing after it.
pub(crate) fn decode_document(body: &[u8]) -> Result<Value> {
    match body.first() {
        None => return Err(DecodeError::new(0, ErrorKind::Empty)),
        Some(&first) if first != PREAMBLE => {
            return Err(DecodeError::new(0, ErrorKind::MissingPreamble { found: first }))
        }
        Some(_) => {}
    }
    let mut reader = Reader::new(body);
    let value = reader.tree()?;
    let left = body.len().saturating_sub(reader.pos);
    if left > 0 {
        return Err(DecodeError::new(reader.pos, ErrorKind::TrailingBytes { count: left }));
    }
    Ok(value)
}

struct Reader<'a> {
    buf: &'a [u8],
    /// Offset of the next unread byte; never greater than `end`.
    pos: usize,
    /// No read may go past this offset.
    end: usize,
    /// Offsets where a plain string (the only valid reference target) began.
    plain_strings: OffsetSet,
    /// Total text that string references may still produce.
    reference_text_left: usize,
    reference_text_limit: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        let limit = buf.len().saturating_mul(REFERENCE_TEXT_FACTOR).max(REFERENCE_TEXT_FLOOR);
        Reader {
            buf,
            pos: 1, // just past the preamble
            end: buf.len(),
            plain_strings: OffsetSet::new(buf.len()),
            reference_text_left: limit,
            reference_text_limit: limit,
        }
    }

    // ----- primitive reads ------------------------------------------------

    /// Takes the next `count` bytes, or fails without moving if fewer remain.
    fn take(&mut self, count: usize) -> Result<&'a [u8]> {
        let start = self.pos;
        let end = self.end_of(count)?;
        let bytes = self
            .buf
            .get(start..end)
            .ok_or_else(|| DecodeError::new(start, ErrorKind::Malformed("read past the buffer")))?;
        self.pos = end;
        Ok(bytes)
    }

    fn byte(&mut self) -> Result<u8> {
        let at = self.pos;
        match self.take(1)? {
            [b] => Ok(*b),
            _ => Err(DecodeError::new(at, ErrorKind::Malformed("short read"))),
        }
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N]> {
        let at = self.pos;
        self.take(N)?.try_into().map_err(|_| DecodeError::new(at, ErrorKind::Malformed("short read")))
    }

    /// Reads a little-endian unsigned length, count or offset of `width`
    /// (1..=4) bytes.
    fn length(&mut self, width: usize) -> Result<usize> {
        let at = self.pos;
        let value = le_uint(self.take(width)?);
        usize::try_from(value).map_err(|_| DecodeError::new(at, ErrorKind::Malformed("length does not fit in memory")))
    }

    /// Checks that `len` bytes remain and returns the offset just past them.
    fn end_of(&self, len: usize) -> Result<usize> {
        let available = self.end.saturating_sub(self.pos);
        if len > available {
            return Err(DecodeError::new(self.pos, ErrorKind::Truncated { needed: len, available }));
        }
        Ok(self.pos + len)
    }

    // ----- the walk ---------------------------------------------------------

    /// Reads the document's value, however deeply it nests.
    fn tree(&mut self) -> Result<Value> {
        let mut open: Vec<Open> = Vec::new();
        loop {
            // Either the innermost container is complete and closes, or one
            // more element (with its name, inside an object) is read.
            let finished = if open.last().is_some_and(|top| top.is_full(self.pos)) {
                open.pop().map(|done| self.close(done)).transpose()?
            } else {
                None
            };
            let (name, value) = match finished {
                Some(named_value) => named_value,
                None => {
                    let name = if open.last().is_some_and(Open::is_object) { self.name()? } else { String::new() };
                    match self.item(open.len())? {
                        Item::Value(value) => (name, value),
                        Item::Open(mut child) => {
                            child.name = name;
                            open.push(child);
                            continue;
                        }
                    }
                }
            };
            match open.last_mut() {
                Some(parent) => parent.add(name, value),
                None => return Ok(value),
            }
        }
    }

    /// Reads one value, or just the header of a container, which the caller
    /// then fills. `depth` is the number of containers already open.
    fn item(&mut self, depth: usize) -> Result<Item> {
        let at = self.pos;
        let marker = self.byte()?;
        let (contents, framing) = match format::classify(marker) {
            Form::Array(framing) => (Contents::Array(Vec::new()), framing),
            Form::Object(framing) => (Contents::Object(Map::new()), framing),
            Form::UniformArray { count_width } => {
                open_container(depth, at)?;
                return self.uniform_array(count_width).map(Item::Value);
            }
            Form::UniformArrayOfArrays { count_width } => {
                // Opens two levels: the outer array and its inner arrays.
                open_container(depth + 1, at)?;
                return self.uniform_array_of_arrays(count_width).map(Item::Value);
            }
            form => return self.scalar(form, marker, at).map(Item::Value),
        };
        open_container(depth, at)?;
        let (bounds, capacity) = match framing {
            Framing::Empty => return Ok(Item::Value(contents.into_value())),
            Framing::Single => (Bounds::Single, 1),
            Framing::Length(width) => {
                let len = self.length(width)?;
                (self.enter(len, None)?, 0)
            }
            Framing::LengthAndCount(width) => {
                let len = self.length(width)?;
                let count_at = self.pos;
                let count = self.length(width)?;
                // Every element takes at least one byte, every member two:
                // refuse a count the length cannot hold before reserving
                // room for it.
                if count > len / contents.min_element_size() {
                    return Err(DecodeError::new(
                        count_at,
                        ErrorKind::Malformed("element count exceeds what the length can hold"),
                    ));
                }
                (self.enter(len, Some(count))?, count)
            }
        };
        Ok(Item::Open(Open::new(at, contents.with_capacity(capacity), bounds)))
    }

    /// Starts reading `len` bytes of container contents: they must be there,
    /// and no read may pass them until the container closes.
    fn enter(&mut self, len: usize, declared: Option<usize>) -> Result<Bounds> {
        let end = self.end_of(len)?;
        let outer_end = std::mem::replace(&mut self.end, end);
        Ok(Bounds::Sized { end, outer_end, declared })
    }

    /// Finishes a complete container: restores the enclosing read limit,
    /// checks a declared count, and returns the name and value to file.
    fn close(&mut self, done: Open) -> Result<(String, Value)> {
        if let Bounds::Sized { outer_end, declared, .. } = done.bounds {
            if let Some(declared) = declared.filter(|&declared| declared != done.found) {
                return Err(DecodeError::new(done.at, ErrorKind::CountMismatch { declared, found: done.found }));
            }
            self.end = outer_end;
        }
        Ok((done.name, done.contents.into_value()))
    }

    /// Reads an object member's name, which must be a string.
    fn name(&mut self) -> Result<String> {
        let at = self.pos;
        let marker = self.byte()?;
        self.string(format::classify(marker), marker, at)
    }

    /// Reads everything that is not a container.
    fn scalar(&mut self, form: Form, marker: u8, at: usize) -> Result<Value> {
        match form {
            Form::LiteralInt(n) => Ok(Value::from(n)),
            Form::Null => Ok(Value::Null),
            Form::False => Ok(Value::Bool(false)),
            Form::True => Ok(Value::Bool(true)),
            Form::Number(number_type) => {
                let bytes = self.take(number_type.size())?;
                number(number_type, bytes).map_err(|kind| DecodeError::new(at, kind))
            }
            Form::Guid => {
                let bytes = self.fixed::<16>()?;
                Ok(Value::String(guid_value_text(&bytes)))
            }
            Form::Binary { width } => {
                let len = self.length(width)?;
                let bytes = self.take(len)?;
                Ok(Value::String(base64_text(bytes, STANDARD_BASE64)))
            }
            other => self.string(other, marker, at).map(Value::String),
        }
    }

    /// Reads a string of any form; `marker` (at offset `at`) is already
    /// consumed. Any other form is an error.
    fn string(&mut self, form: Form, marker: u8, at: usize) -> Result<String> {
        match form {
            Form::SystemString(text) => {
                self.plain_strings.insert(at);
                Ok(text.to_owned())
            }
            Form::ShortString { len } => {
                let text = self.utf8(len)?;
                self.plain_strings.insert(at);
                Ok(text.to_owned())
            }
            Form::LengthPrefixedString { width } => {
                let len = self.length(width)?;
                let text = self.utf8(len)?;
                self.plain_strings.insert(at);
                Ok(text.to_owned())
            }
            Form::ReferenceString { width } => {
                let target = self.length(width)?;
                self.resolve_reference(target, at)
            }
            Form::UserString1 { id } => Err(DecodeError::new(at, ErrorKind::UserString { id })),
            Form::UserString2 { high } => {
                let low = usize::from(self.byte()?);
                let id = format::ONE_BYTE_USER_STRING_IDS + low + 256 * high;
                Err(DecodeError::new(at, ErrorKind::UserString { id }))
            }
            Form::Base64String { width, url_safe } => self.base64_string(width, url_safe),
            Form::GuidString { uppercase, quoted } => {
                let bytes = self.fixed::<16>()?;
                Ok(guid_string_text(&bytes, uppercase, quoted))
            }
            Form::TableString { chars } => self.table_string(chars),
            Form::PackedString { bits, len_width, has_base } => self.packed_string(bits, len_width, has_base),
            Form::Unknown => Err(DecodeError::new(at, ErrorKind::UnknownMarker { marker })),
            _ => Err(DecodeError::new(at, ErrorKind::ExpectedString { marker })),
        }
    }

    /// Takes `len` bytes that must be UTF-8.
    fn utf8(&mut self, len: usize) -> Result<&'a str> {
        let start = self.pos;
        let bytes = self.take(len)?;
        std::str::from_utf8(bytes).map_err(|e| DecodeError::new(start + e.valid_up_to(), ErrorKind::InvalidText))
    }

    /// A reference names the absolute offset (preamble = 0) of an earlier
    /// plain string: system, inline-length or length-prefixed. Because a
    /// reference is never a valid target, references cannot chain or loop.
    fn resolve_reference(&mut self, target: usize, at: usize) -> Result<String> {
        let bad = |reason| DecodeError::new(at, ErrorKind::BadReference { target, reason });
        if target >= self.buf.len() {
            return Err(bad("points outside the document"));
        }
        if target >= at {
            return Err(bad("does not point back to an earlier string"));
        }
        if !self.plain_strings.contains(target) {
            let reason = match self.buf.get(target).map(|&m| format::classify(m)) {
                Some(Form::ReferenceString { .. }) => "points at another reference",
                _ => "does not point at the start of an earlier plain string",
            };
            return Err(bad(reason));
        }
        let text = plain_string_at(self.buf, target).ok_or_else(|| bad("points at an unreadable string"))?;
        if text.len() > self.reference_text_left {
            return Err(DecodeError::new(at, ErrorKind::ReferenceExpansion { limit: self.reference_text_limit }));
        }
        self.reference_text_left -= text.len();
        Ok(text.to_owned())
    }

    /// Base64 strings carry the decoded bytes; the text is rebuilt from them.
    /// Layout: group count (text length / 4), padding byte, bytes. The padding
    /// byte is the number of `=` (0..=2), or its bitwise complement when the
    /// original text left the `=` out.
    fn base64_string(&mut self, width: usize, url_safe: bool) -> Result<String> {
        let groups = self.length(width)?;
        let padding_at = self.pos;
        let padding_byte = self.byte()?;
        let (padding, omitted) = match padding_byte {
            0..=2 => (usize::from(padding_byte), false),
            0xFD..=0xFF => (usize::from(!padding_byte), true),
            _ => return Err(DecodeError::new(padding_at, ErrorKind::Malformed("base64 padding byte out of range"))),
        };
        let padded_len = groups
            .checked_mul(4)
            .ok_or_else(|| DecodeError::new(padding_at, ErrorKind::Malformed("base64 length overflows")))?;
        let unpadded_len = padded_len
            .checked_sub(padding)
            .ok_or_else(|| DecodeError::new(padding_at, ErrorKind::Malformed("base64 padding longer than the text")))?;
        // Three bytes per four characters; a last group of two or three
        // characters holds one or two bytes.
        let bytes = self.take(unpadded_len / 4 * 3 + unpadded_len % 4 * 3 / 4)?;
        let alphabet = if url_safe { URL_SAFE_BASE64 } else { STANDARD_BASE64 };
        let mut text = base64_text(bytes, alphabet);
        if omitted {
            text.truncate(unpadded_len);
        }
        Ok(text)
    }

    /// 1-byte character count, then two 4-bit codes per byte (low nibble
    /// first) into `chars`. The unused high nibble of an odd count must be 0.
    fn table_string(&mut self, chars: &[u8; 16]) -> Result<String> {
        let len = usize::from(self.byte()?);
        let start = self.pos;
        let bytes = self.take(len.div_ceil(2))?;
        let mut text = String::with_capacity(len);
        for (i, &b) in bytes.iter().enumerate() {
            text.push(nibble_char(chars, b));
            if text.len() < len {
                text.push(nibble_char(chars, b >> 4));
            } else if b >> 4 != 0 {
                return Err(DecodeError::new(
                    start + i,
                    ErrorKind::Malformed("unused nibble of a 4-bit string is not zero"),
                ));
            }
        }
        Ok(text)
    }

    /// Character count, optional base character, then `bits`-bit codes
    /// packed least significant bit first; each character is `base + code`.
    fn packed_string(&mut self, bits: usize, len_width: usize, has_base: bool) -> Result<String> {
        let len = self.length(len_width)?;
        let base = if has_base { self.byte()? } else { 0 };
        let start = self.pos;
        let byte_count = len
            .checked_mul(bits)
            .map(|total| total.div_ceil(8))
            .ok_or_else(|| DecodeError::new(start, ErrorKind::Malformed("packed length overflows")))?;
        let bytes = self.take(byte_count)?;
        let mask = (1u16 << bits) - 1;
        let mut text = String::with_capacity(len);
        for i in 0..len {
            let bit = i * bits;
            let low = bytes.get(bit / 8).copied().unwrap_or(0);
            let high = bytes.get(bit / 8 + 1).copied().unwrap_or(0);
            let window = u16::from_le_bytes([low, high]);
            let code = ((window >> (bit % 8)) & mask) as u8;
            let ch = base.wrapping_add(code);
            if !ch.is_ascii() {
                return Err(DecodeError::new(start + bit / 8, ErrorKind::InvalidText));
            }
            text.push(char::from(ch));
        }
        Ok(text)
    }

    // ----- uniform number arrays ---------------------------------------------

    /// Item type marker, count, then `count` bare numbers of that type.
    fn uniform_array(&mut self, count_width: usize) -> Result<Value> {
        let item_type = self.uniform_item_type()?;
        let count = self.length(count_width)?;
        let start = self.pos;
        let size = count
            .checked_mul(item_type.size())
            .ok_or_else(|| DecodeError::new(start, ErrorKind::Malformed("uniform array size overflows")))?;
        let bytes = self.take(size)?;
        numbers(item_type, bytes, start).map(Value::Array)
    }

    /// Inner array marker, item type marker, inner count, outer count, then
    /// `outer` arrays of `inner` bare numbers each.
    fn uniform_array_of_arrays(&mut self, count_width: usize) -> Result<Value> {
        let inner_at = self.pos;
        if self.byte()? != format::inner_uniform_marker(count_width) {
            return Err(DecodeError::new(
                inner_at,
                ErrorKind::Malformed("array of uniform arrays has the wrong inner array marker"),
            ));
        }
        let item_type = self.uniform_item_type()?;
        let inner_count = self.length(count_width)?;
        let outer_count = self.length(count_width)?;
        let start = self.pos;
        let overflow = || DecodeError::new(start, ErrorKind::Malformed("uniform array size overflows"));
        let inner_size = inner_count.checked_mul(item_type.size()).ok_or_else(overflow)?;
        let bytes = self.take(inner_size.checked_mul(outer_count).ok_or_else(overflow)?)?;

        if inner_size == 0 {
            // Empty inner arrays take no bytes; keep the output in proportion
            // to the input anyway.
            if outer_count > self.buf.len() {
                return Err(DecodeError::new(
                    start,
                    ErrorKind::Malformed("more empty arrays than the input can justify"),
                ));
            }
            return Ok(Value::Array(vec![Value::Array(Vec::new()); outer_count]));
        }
        let mut outer = Vec::with_capacity(outer_count);
        for (i, chunk) in bytes.chunks_exact(inner_size).enumerate() {
            outer.push(Value::Array(numbers(item_type, chunk, start + i * inner_size)?));
        }
        Ok(Value::Array(outer))
    }

    fn uniform_item_type(&mut self) -> Result<NumberType> {
        let at = self.pos;
        let marker = self.byte()?;
        NumberType::of_uniform_item(marker).ok_or_else(|| {
            DecodeError::new(at, ErrorKind::Malformed("uniform array item type is not a sized number marker"))
        })
    }
}

/// What one step of the walk produced.
enum Item {
    /// A complete value.
    Value(Value),
    /// A container whose contents follow.
    Open(Open),
}

/// A container whose contents are still being read.
struct Open {
    /// Offset of its marker.
    at: usize,
    /// The name it is filed under in its parent object (empty otherwise).
    name: String,
    contents: Contents,
    /// Elements (or members) read so far.
    found: usize,
    bounds: Bounds,
}

impl Open {
    fn new(at: usize, contents: Contents, bounds: Bounds) -> Self {
        Open { at, name: String::new(), contents, found: 0, bounds }
    }

    fn is_object(&self) -> bool {
        matches!(self.contents, Contents::Object(_))
    }

    /// Whether nothing more belongs in this container.
    fn is_full(&self, pos: usize) -> bool {
        match self.bounds {
            Bounds::Single => self.found == 1,
            Bounds::Sized { end, .. } => pos >= end,
        }
    }

    fn add(&mut self, name: String, value: Value) {
        match &mut self.contents {
            Contents::Array(items) => items.push(value),
            Contents::Object(members) => {
                members.insert(name, value);
            }
        }
        self.found += 1;
    }
}

enum Contents {
    Array(Vec<Value>),
    Object(Map<String, Value>),
}

impl Contents {
    fn min_element_size(&self) -> usize {
        match self {
            Contents::Array(_) => 1,
            Contents::Object(_) => 2,
        }
    }

    fn with_capacity(self, count: usize) -> Self {
        match self {
            Contents::Array(_) => Contents::Array(Vec::with_capacity(count)),
            Contents::Object(_) => Contents::Object(Map::with_capacity(count)),
        }
    }

    fn into_value(self) -> Value {
        match self {
            Contents::Array(items) => Value::Array(items),
            Contents::Object(members) => Value::Object(members),
        }
    }
}

/// Where a container's contents end.
enum Bounds {
    /// `Arr1` / `Obj1`: exactly one element (or member), no length.
    Single,
    /// The contents end at `end`; `outer_end` was the read limit before.
    Sized { end: usize, outer_end: usize, declared: Option<usize> },
}

fn open_container(depth: usize, at: usize) -> Result<()> {
    if depth >= MAX_DEPTH {
        return Err(DecodeError::new(at, ErrorKind::TooDeep { limit: MAX_DEPTH }));
    }
    Ok(())
}

/// Little-endian unsigned integer of up to 8 bytes.
fn le_uint(bytes: &[u8]) -> u64 {
    bytes.iter().rev().fold(0, |acc, &b| (acc << 8) | u64::from(b))
}

/// Reads the plain string that starts at `offset`, for reference resolution.
fn plain_string_at(buf: &[u8], offset: usize) -> Option<&str> {
    let marker = *buf.get(offset)?;
    let rest = buf.get(offset + 1..)?;
    let (prefix, len) = match format::classify(marker) {
        Form::SystemString(text) => return Some(text),
        Form::ShortString { len } => (0, len),
        Form::LengthPrefixedString { width } => (width, usize::try_from(le_uint(rest.get(..width)?)).ok()?),
        _ => return None,
    };
    let bytes = rest.get(prefix..prefix.checked_add(len)?)?;
    std::str::from_utf8(bytes).ok()
}

// ----- numbers ----------------------------------------------------------------

/// Decodes consecutive bare numbers of one type; `start` is the offset of
/// the first, for error messages.
fn numbers(item_type: NumberType, bytes: &[u8], start: usize) -> Result<Vec<Value>> {
    let size = item_type.size();
    bytes
        .chunks_exact(size)
        .enumerate()
        .map(|(i, chunk)| number(item_type, chunk).map_err(|kind| DecodeError::new(start + i * size, kind)))
        .collect()
}

/// Decodes one little-endian number payload. Integers stay integers; floats
/// are widened to `f64`.
fn number(number_type: NumberType, bytes: &[u8]) -> std::result::Result<Value, ErrorKind> {
    fn le<const N: usize>(bytes: &[u8]) -> std::result::Result<[u8; N], ErrorKind> {
        bytes.try_into().map_err(|_| ErrorKind::Malformed("number payload has the wrong size"))
    }
    Ok(match number_type {
        NumberType::UInt8 => Value::from(u8::from_le_bytes(le(bytes)?)),
        NumberType::Int8 => Value::from(i8::from_le_bytes(le(bytes)?)),
        NumberType::Int16 => Value::from(i16::from_le_bytes(le(bytes)?)),
        NumberType::Int32 => Value::from(i32::from_le_bytes(le(bytes)?)),
        NumberType::Int64 => Value::from(i64::from_le_bytes(le(bytes)?)),
        NumberType::UInt32 => Value::from(u32::from_le_bytes(le(bytes)?)),
        NumberType::UInt64 => Value::from(u64::from_le_bytes(le(bytes)?)),
        NumberType::Float16 => float(half_to_f64(u16::from_le_bytes(le(bytes)?)))?,
        NumberType::Float32 => float(f64::from(f32::from_le_bytes(le(bytes)?)))?,
        NumberType::Float64 => float(f64::from_le_bytes(le(bytes)?))?,
    })
}

fn float(x: f64) -> std::result::Result<Value, ErrorKind> {
    serde_json::Number::from_f64(x).map(Value::Number).ok_or(ErrorKind::NonFiniteNumber)
}

/// IEEE 754 binary16 to `f64` (exact: every half value is a double).
fn half_to_f64(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((bits >> 10) & 0x1F);
    let fraction = f64::from(bits & 0x03FF);
    let magnitude = match exponent {
        0 => fraction * 2f64.powi(-24),
        0x1F if fraction == 0.0 => f64::INFINITY,
        0x1F => f64::NAN,
        _ => (1024.0 + fraction) * 2f64.powi(exponent - 25),
    };
    sign * magnitude
}

// ----- text helpers -----------------------------------------------------------

fn nibble_char(chars: &[u8; 16], nibble: u8) -> char {
    char::from(chars[usize::from(nibble & 0x0F)])
}

/// Formats 32 hex digits (given as nibbles) as `8-4-4-4-12`.
fn dashed_hex(nibbles: impl Iterator<Item = u8>, chars: &[u8; 16], quoted: bool) -> String {
    let mut text = String::with_capacity(38);
    if quoted {
        text.push('"');
    }
    for (i, nibble) in nibbles.enumerate() {
        if matches!(i, 8 | 12 | 16 | 20) {
            text.push('-');
        }
        text.push(nibble_char(chars, nibble));
    }
    if quoted {
        text.push('"');
    }
    text
}

/// GUID strings store the 32 hex digits in order, two per byte, low nibble
/// first.
fn guid_string_text(bytes: &[u8; 16], uppercase: bool, quoted: bool) -> String {
    let chars = if uppercase { format::UPPER_HEX_CHARS } else { format::LOWER_HEX_CHARS };
    let nibbles = bytes.iter().flat_map(|&b| [b & 0x0F, b >> 4]);
    dashed_hex(nibbles, chars, quoted)
}

/// GUID values are in .NET memory order: the first three fields (4, 2 and 2
/// bytes) little-endian, the last 8 bytes as they are. Text is lowercase.
fn guid_value_text(bytes: &[u8; 16]) -> String {
    const TEXT_ORDER: [usize; 16] = [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15];
    let nibbles = TEXT_ORDER.iter().filter_map(|&i| bytes.get(i)).flat_map(|&b| [b >> 4, b & 0x0F]);
    dashed_hex(nibbles, format::LOWER_HEX_CHARS, false)
}

const STANDARD_BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE_BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64 text of `bytes` with `=` padding.
fn base64_text(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let sextet = |v: u32| char::from(alphabet[(v & 0x3F) as usize]);
    let mut text = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b0 = chunk.first().copied().unwrap_or(0);
        let b1 = chunk.get(1).copied().unwrap_or(0);
        let b2 = chunk.get(2).copied().unwrap_or(0);
        let group = u32::from_be_bytes([0, b0, b1, b2]);
        text.push(sextet(group >> 18));
        text.push(sextet(group >> 12));
        text.push(if chunk.len() > 1 { sextet(group >> 6) } else { '=' });
        text.push(if chunk.len() > 2 { sextet(group) } else { '=' });
    }
    text
}

/// A set of byte offsets within one buffer, one bit per offset.
struct OffsetSet {
    words: Vec<u64>,
}

impl OffsetSet {
    fn new(len: usize) -> Self {
        OffsetSet { words: vec![0; len.div_ceil(64)] }
    }

    fn insert(&mut self, offset: usize) {
        if let Some(word) = self.words.get_mut(offset / 64) {
            *word |= 1 << (offset % 64);
        }
    }

    fn contains(&self, offset: usize) -> bool {
        self.words.get(offset / 64).is_some_and(|word| word & (1 << (offset % 64)) != 0)
    }
}
