//! Encoding: the binary form's writing primitives, JSON text to a document in one pass (serde), and a
//! Value to a document.

use super::*;

// ---------------------------------------------------------------------------------------------
// Low-level writing
// ---------------------------------------------------------------------------------------------

/// Bytes reserved for a container header before its children are written: the minimum (one
/// byte each for count and length); the children are shifted right when the header is longer.
pub(super) const HEADER_GUESS: usize = 2;

/// The bytes [`push_varint`] writes for `v`.
#[inline]
pub(super) fn varint_len(v: usize) -> usize {
    (usize::BITS - (v | 1).leading_zeros()).div_ceil(7) as usize
}

#[inline]
pub(super) fn push_varint(buf: &mut Vec<u8>, v: usize) {
    let mut v = v as u64;
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Writes a varint into `out` at `pos`; returns the position after it. `out` must have room
/// (10 bytes per varint).
pub(super) fn put_varint(out: &mut [u8; 20], mut pos: usize, v: usize) -> usize {
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
pub(super) fn push_string(buf: &mut Vec<u8>, s: &str) {
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
pub(super) fn push_key(buf: &mut Vec<u8>, k: &str) {
    push_varint(buf, k.len());
    buf.extend_from_slice(k.as_bytes());
}

#[inline]
pub(super) fn push_number(buf: &mut Vec<u8>, n: f64) {
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
pub(super) fn begin_container(buf: &mut Vec<u8>, t: u8) -> usize {
    let start = buf.len();
    buf.push(t);
    buf.extend_from_slice(&[0; HEADER_GUESS]);
    start
}

/// Finishes the container begun at `start` once its `count` children follow the reserved header.
#[inline]
pub(super) fn end_container(buf: &mut Vec<u8>, start: usize, count: usize) {
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

/// [`end_container`] for a writer in the in-memory form: counts what the container's header
/// takes more in the portable form, where its payload is longer by what its children took more
/// (`w.extra` now against `extra` when it began).
pub(super) fn end_container_counted(w: &mut Writer, start: usize, count: usize, extra: isize) {
    let payload = w.buf.len().saturating_sub(start + 1 + HEADER_GUESS);
    let portable = payload.saturating_add_signed(w.extra - extra);
    w.extra += varint_len(portable) as isize - varint_len(payload) as isize;
    end_container(&mut w.buf, start, count);
}

/// Finishes the object begun at `start` (when `w.extra` was `extra`) whose entries start at
/// `w.entries[base..]`: a key written twice keeps its first position and its last value.
/// `may_repeat` false says no key is written twice (the caller knows), and the keys are not
/// compared.
pub(super) fn end_object(w: &mut Writer, start: usize, base: usize, may_repeat: bool, extra: isize) {
    let mut count = w.entries.len() - base;
    let form = w.form;
    let Writer { buf, entries, .. } = &mut *w;
    let starts = &entries[base..];
    if may_repeat && has_duplicates(starts.len(), |i| key_at(buf, starts[i], form)) {
        count = dedupe_entries(buf, starts, form);
        // What the dropped entries took more in the portable form is not known: the sealing
        // measures it.
        w.exact = false;
    }
    w.entries.truncate(base);
    if w.form == Form::Memory {
        end_container_counted(w, start, count, extra);
    } else {
        end_container(&mut w.buf, start, count);
    }
}

/// Rewrites the entries of an object (at `starts`, up to the end of `buf`) so that each key
/// appears once, at its first position, with its last value. Returns the new entry count.
pub(super) fn dedupe_entries(buf: &mut Vec<u8>, starts: &[usize], form: Form) -> usize {
    let Some(&first) = starts.first() else { return 0 };
    let end = buf.len();
    let mut scratch = Vec::with_capacity(end - first);
    {
        let b: &[u8] = buf;
        // (entry holding the key, entry holding the value), in first-occurrence order.
        let mut order: Vec<(usize, usize)> = Vec::with_capacity(starts.len());
        let mut index: HashMap<&[u8], usize> = HashMap::with_capacity(starts.len());
        for (i, &start) in starts.iter().enumerate() {
            let k = key_at(b, start, form);
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
            let kend = read_key(b, s, form).map_or(e, |(_, end)| end.min(e));
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
#[derive(Debug)]
pub(super) struct Writer {
    pub(super) buf: Vec<u8>,
    pub(super) entries: Vec<usize>,
    /// The direct reader's prints of the open objects' keys (`super::json`).
    pub(super) prints: Vec<u64>,
    /// The form `buf` is written in: the direct reader writes the in-memory form, the serde
    /// path and values the portable one.
    pub(super) form: Form,
    /// In the in-memory form: how many bytes longer the portable form of `buf` is, and whether
    /// that count is exact (a repeated key's dropped entry makes it unknown).
    pub(super) extra: isize,
    pub(super) exact: bool,
    /// The other form, built from `buf` when the document is sealed.
    pub(super) memory: Vec<u8>,
}

impl Default for Writer {
    fn default() -> Self {
        Writer {
            buf: Vec::new(),
            entries: Vec::new(),
            prints: Vec::new(),
            form: Form::Portable,
            extra: 0,
            exact: true,
            memory: Vec::new(),
        }
    }
}

impl Writer {
    /// Empties the writer for a document in `form`.
    pub(super) fn reset(&mut self, form: Form) {
        self.buf.clear();
        self.entries.clear();
        self.prints.clear();
        self.form = form;
        self.extra = 0;
        self.exact = true;
    }
}

thread_local! {
    static WRITER: RefCell<Writer> = RefCell::new(Writer::default());
}

/// Runs `f` with this thread's reusable writer (cleared), or a fresh one if it is busy.
pub(super) fn with_writer<R>(f: impl FnOnce(&mut Writer) -> R) -> R {
    WRITER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut w) => {
            w.reset(Form::Portable);
            let r = f(&mut w);
            if w.buf.capacity() > 1 << 20 {
                w.buf = Vec::new();
            }
            if w.memory.capacity() > 1 << 20 {
                w.memory = Vec::new();
            }
            // An object of many keys leaves these large: give them back too.
            if w.entries.capacity() > 1 << 14 || w.prints.capacity() > 1 << 14 {
                w.entries = Vec::new();
                w.prints = Vec::new();
            }
            r
        }
        Err(_) => f(&mut Writer::default()),
    })
}

/// Deserializes one JSON value into the writer. `depth` = number of enclosing containers.
pub(super) struct ValueSeed<'w> {
    pub(super) w: &'w mut Writer,
    pub(super) depth: usize,
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
        end_object(w, start, base, true, 0);
        Ok(())
    }
}

/// Deserializes one object key into the writer.
pub(super) struct KeySeed<'w> {
    pub(super) w: &'w mut Writer,
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

/// serde_json alone (the tests compare the direct reader with it).
#[cfg(test)]
pub(super) fn encode_json_with<'de, R: serde_json::de::Read<'de>>(
    de: serde_json::Deserializer<R>,
    require_object: bool,
) -> Result<Doc, DocError> {
    with_writer(|w| {
        serde_into(w, de)?;
        finish(w, require_object)
    })
}

/// JSON text to a document: the direct reader ([`super::json`]) first, serde_json for the text it
/// gives up on (with serde_json's errors).
pub(super) fn encode_json_bytes(bytes: &[u8], require_object: bool) -> Result<Doc, DocError> {
    with_writer(|w| {
        w.reset(Form::Memory);
        if json::encode(bytes, w).is_none() {
            w.reset(Form::Portable);
            // Checking the whole text at once is several times cheaper than serde_json checking
            // each string on its own; text that is not UTF-8 is left to serde_json, for its error.
            match std::str::from_utf8(bytes) {
                Ok(text) => serde_into(w, serde_json::Deserializer::from_str(text))?,
                Err(_) => serde_into(w, serde_json::Deserializer::from_slice(bytes))?,
            }
        }
        finish(w, require_object)
    })
}

/// Reads one JSON text (and nothing after it) into `w` with serde_json.
fn serde_into<'de, R: serde_json::de::Read<'de>>(
    w: &mut Writer,
    mut de: serde_json::Deserializer<R>,
) -> Result<(), DocError> {
    ValueSeed { w: &mut *w, depth: 0 }.deserialize(&mut de).map_err(|e| DocError::json(&e))?;
    de.end().map_err(|e| DocError::json(&e))
}

fn finish(w: &mut Writer, require_object: bool) -> Result<Doc, DocError> {
    if require_object && w.buf.first() != Some(&tag::OBJECT) {
        let kind = head(&w.buf).map_or(ValueKind::Undefined, |(h, _)| h.kind());
        return Err(DocError::not_an_object(kind));
    }
    seal(w)
}

/// The document the writer's buffer holds.
pub(super) fn seal(w: &mut Writer) -> Result<Doc, DocError> {
    let malformed = || DocError::malformed(0, "the encoder wrote a malformed value");
    if w.form == Form::Portable {
        return seal_portable(&w.buf, &mut w.memory).ok_or_else(malformed);
    }
    let portable = if w.exact {
        w.buf.len().checked_add_signed(w.extra).ok_or_else(malformed)?
    } else {
        w.memory.clear();
        convert(&w.buf, Form::Memory, &mut w.memory, 0).ok_or_else(malformed)?;
        w.memory.len()
    };
    Ok(seal_memory(&mut w.buf, portable))
}

/// Encodes one JSON text of any type (object, array, scalar). Items use [`Doc::from_json_str`],
/// which requires an object.
pub fn encode_json_str(text: &str) -> Result<Doc, DocError> {
    encode_json_bytes(text.as_bytes(), false)
}

/// Like [`encode_json_str`], from UTF-8 bytes.
pub fn encode_json_slice(bytes: &[u8]) -> Result<Doc, DocError> {
    encode_json_bytes(bytes, false)
}

// ---------------------------------------------------------------------------------------------
// Encoding from Value
// ---------------------------------------------------------------------------------------------

/// Appends `v`; returns `false` (writing nothing) for undefined. `depth` = enclosing containers.
pub(super) fn push_value(buf: &mut Vec<u8>, v: &Value, depth: usize) -> Result<bool, DocError> {
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

/// Appends the portable encoding of `v` (any type) to `out` (see [`Doc::to_bytes`]). Undefined
/// fields and elements are omitted; a top-level undefined is an error (and writes nothing).
pub(super) fn encode_value_into(out: &mut Vec<u8>, v: &Value) -> Result<(), DocError> {
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
        seal(w)
    })
}
