//! Byte strings compared as if padded with zeros to a common length, eight bytes at a time as
//! big-endian words (which order as their bytes do): EPKs and short index keys compare this way
//! without a call to `memcmp`.

use std::cmp::Ordering;

/// The big-endian word of the eight bytes of `bytes` at `at`, zeros past their end.
#[inline]
pub(crate) fn word_at(bytes: &[u8], at: usize) -> u64 {
    match bytes.get(at..at.saturating_add(8)) {
        Some(w) => u64::from_be_bytes(w.try_into().unwrap_or_default()),
        None => {
            let mut w = [0u8; 8];
            let tail = bytes.get(at..).unwrap_or_default();
            w[..tail.len()].copy_from_slice(tail);
            u64::from_be_bytes(w)
        }
    }
}

/// The order of `a` and `b` padded with zeros to `end` bytes.
#[inline]
pub(crate) fn cmp_padded(a: &[u8], b: &[u8], end: usize) -> Ordering {
    let mut at = 0;
    while at < end {
        let (x, y) = (word_at(a, at), word_at(b, at));
        if x != y {
            return x.cmp(&y);
        }
        at += 8;
    }
    Ordering::Equal
}
