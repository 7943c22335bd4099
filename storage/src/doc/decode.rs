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
            for (k, e) in (Entries { rest: payload }) {
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
        out.extend_from_slice(format_number(n).as_bytes());
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
