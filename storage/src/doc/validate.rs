//! Validation: bytes from outside the encoder (a file, the network) checked completely before
//! anything reads them.

use super::*;

/// Checks the value at the start of `b` (found at `offset` in the whole input, its keys in
/// `form`) completely; returns its size. `depth` = enclosing containers.
fn validate(b: &[u8], offset: usize, depth: usize, form: Form) -> Result<usize, DocError> {
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
                    let (key, p) = read_key(payload, pos, form)
                        .ok_or_else(|| DocError::malformed(at, "bad key: its length runs past its object"))?;
                    if std::str::from_utf8(key).is_err() {
                        return Err(DocError::malformed(at, "key is not UTF-8"));
                    }
                    keys.push(key);
                    pos = p;
                }
                let rest = payload.get(pos..).unwrap_or(&[]);
                pos += validate(rest, payload_offset + pos, depth + 1, form)?;
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

/// Validates that `bytes` is exactly one well-formed encoded value, its keys in `form`.
pub(super) fn validate_all(bytes: &[u8], form: Form) -> Result<(), DocError> {
    let size = validate(bytes, 0, 0, form)?;
    if size != bytes.len() {
        return Err(DocError::malformed(size, "trailing bytes after the value"));
    }
    Ok(())
}
