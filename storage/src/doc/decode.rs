//! Decoding: a document back to a Value, and straight to JSON text.

use super::*;

// ---------------------------------------------------------------------------------------------
// Decoding and JSON output
// ---------------------------------------------------------------------------------------------

/// Decodes the value at the start of `b`; `undefined` for malformed parts. `depth` = enclosing
/// containers; an object at the top has room for `room` more properties.
pub(super) fn decode(b: &[u8], depth: usize, room: usize) -> Value {
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
                let v = decode(e.bytes, depth + 1, 0);
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
            let mut map = Map::with_capacity_and_hasher(n.min(payload.len() / 2) + room, Default::default());
            for (k, e) in Entries::of(payload) {
                let v = decode(e.bytes, depth + 1, 0);
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
pub(super) fn write_json(out: &mut Vec<u8>, b: &[u8], depth: usize) -> bool {
    write_value(out, b, depth).is_some()
}

/// [`write_json`], returning the size of the value written: a container's elements are written
/// one after the other, each header read once (not once to find where it ends, again to write
/// it). An element with no JSON form (NaN, or nested past [`MAX_DEPTH`]) is left out; malformed
/// bytes fail the whole write.
fn write_value(out: &mut Vec<u8>, b: &[u8], depth: usize) -> Option<usize> {
    let (h, size) = head(b)?;
    match h {
        Head::Null => out.extend_from_slice(b"null"),
        Head::Bool(v) => out.extend_from_slice(if v { b"true" } else { b"false" }),
        Head::Number(n) => {
            if !write_number(out, n) {
                return None;
            }
        }
        Head::String(s) => write_escaped(out, s),
        Head::Array(_, payload) => {
            if depth >= MAX_DEPTH {
                return None;
            }
            out.push(b'[');
            let mut first = true;
            let mut rest = payload;
            while !rest.is_empty() {
                let mark = out.len();
                if !first {
                    out.push(b',');
                }
                rest = rest.get(write_element(out, rest, depth + 1, mark, &mut first)?..)?;
            }
            out.push(b']');
        }
        Head::Object(_, payload) => {
            if depth >= MAX_DEPTH {
                return None;
            }
            out.push(b'{');
            let mut first = true;
            let mut rest = payload;
            while !rest.is_empty() {
                let mark = out.len();
                if !first {
                    out.push(b',');
                }
                let value = write_key(out, rest)?;
                rest = value.get(write_element(out, value, depth + 1, mark, &mut first)?..)?;
            }
            out.push(b'}');
        }
    }
    Some(size)
}

/// Writes the element (or entry) whose value starts `b`, after what `out` got since `mark` (its
/// comma, its key); an element with no JSON form takes all of that back, and `first` says
/// whether any element was written. The value's size.
#[inline(always)]
fn write_element(out: &mut Vec<u8>, b: &[u8], depth: usize, mark: usize, first: &mut bool) -> Option<usize> {
    match write_value(out, b, depth) {
        Some(n) => {
            *first = false;
            Some(n)
        }
        None => {
            out.truncate(mark);
            value_size(b)
        }
    }
}

/// Writes a number as `cosmoql_value::to_json_string` does: integral values below 2^63 in
/// magnitude as integers (serde's `serialize_i64`), others with [`format_number`]; `false` for
/// NaN/±∞.
pub(crate) fn write_number(out: &mut Vec<u8>, n: f64) -> bool {
    // Safe integers (|n| <= 2^53) print digit for digit, as JavaScript does; larger ones use the
    // shortest round-trip form JavaScript uses (2^60 -> 1152921504606847000).
    const LIMIT: f64 = 9_007_199_254_740_993.0;
    if !n.is_finite() {
        return false;
    }
    if n.fract() == 0.0 && (-LIMIT..LIMIT).contains(&n) {
        write_i64(out, n as i64);
    } else {
        cosmoql_value::with_number_text(n, |text| out.extend_from_slice(text.as_bytes()));
    }
    true
}

pub(super) fn write_i64(out: &mut Vec<u8>, i: i64) {
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
pub(crate) fn write_escaped(out: &mut Vec<u8>, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(s.len() + 2);
    if is_plain(s) {
        // Most strings: nothing to escape.
        out.push(b'"');
        out.extend_from_slice(s);
        out.push(b'"');
        return;
    }
    out.push(b'"');
    let mut rest = s;
    loop {
        let (plain, tail) = rest.split_at_checked(plain_prefix(rest)).unwrap_or((rest, &[]));
        out.extend_from_slice(plain);
        let Some((&b, tail)) = tail.split_first() else { break };
        let esc = ESCAPE[usize::from(b)];
        if esc == b'u' {
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xF)]]);
        } else {
            out.extend_from_slice(&[b'\\', esc]);
        }
        rest = tail;
    }
    out.push(b'"');
}

/// Whether JSON writes all of `s` as it is: eight bytes at a time, the last eight overlapping
/// the ones before (strings of eight bytes or more), or one at a time (shorter ones).
fn is_plain(s: &[u8]) -> bool {
    match s.last_chunk::<8>() {
        None => s.iter().all(|&b| ESCAPE[usize::from(b)] == 0),
        Some(last) => !escapes_any(last) && !s.chunks_exact(8).any(|c| c.first_chunk::<8>().is_some_and(escapes_any)),
    }
}

/// How many bytes at the start of `s` (a string [`is_plain`] said needs escaping) JSON writes as
/// they are: eight at a time, then one at a time.
fn plain_prefix(s: &[u8]) -> usize {
    let mut i = 0;
    while s.get(i..).and_then(<[u8]>::first_chunk::<8>).is_some_and(|c| !escapes_any(c)) {
        i += 8;
    }
    while s.get(i).is_some_and(|&b| ESCAPE[usize::from(b)] == 0) {
        i += 1;
    }
    i
}

/// Whether one of the eight bytes is one JSON escapes (a control character, `"` or `\\`: the
/// bytes [`ESCAPE`] escapes).
#[inline]
fn escapes_any(chunk: &[u8; 8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // The high bit of each byte of `v` below `n` (exact for n <= 128).
    let below = |v: u64, n: u64| v.wrapping_sub(ONES * n) & !v & HIGHS;
    let x = u64::from_le_bytes(*chunk);
    below(x, 0x20) | below(x ^ (ONES * u64::from(b'"')), 1) | below(x ^ (ONES * u64::from(b'\\')), 1) != 0
}

/// Counts what the value at the start of `b` holds, as its decoded value holds it (see
/// [`DocRef::shape`]), reading each header once; the value's size, `None` for malformed bytes
/// or nesting past [`MAX_DEPTH`].
pub(super) fn shape(b: &[u8], depth: usize, into: &mut Shape) -> Option<usize> {
    let (h, size) = head(b)?;
    match h {
        Head::Null | Head::Bool(_) => into.scalars += 1,
        Head::Number(n) => {
            into.scalars += 1;
            into.finite &= n.is_finite();
        }
        Head::String(s) => {
            into.strings += 1;
            into.string_bytes += s.len() as u64;
        }
        Head::Array(_, payload) => {
            if depth >= MAX_DEPTH {
                return None;
            }
            into.arrays += 1;
            let mut rest = payload;
            while !rest.is_empty() {
                rest = rest.get(shape(rest, depth + 1, into)?..)?;
            }
        }
        Head::Object(_, payload) => {
            if depth >= MAX_DEPTH {
                return None;
            }
            into.objects += 1;
            let mut rest = payload;
            while !rest.is_empty() {
                let (key, value) = split_key(rest)?;
                into.entries += 1;
                into.key_bytes += key.len() as u64;
                rest = value.get(shape(value, depth + 1, into)?..)?;
            }
        }
    }
    Some(size)
}
