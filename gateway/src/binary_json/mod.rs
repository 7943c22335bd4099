//! Decoder for the Cosmos DB **binary JSON** wire format.
//!
//! Cosmos DB clients may send and receive documents in a compact binary
//! encoding instead of UTF-8 JSON text. A binary body starts with the byte
//! `0x80`, which can never start a UTF-8 text document, so [`is_binary`] can
//! tell the two apart from the first byte. [`decode`] turns a binary body into
//! a [`serde_json::Value`].
//!
//! # How values map to JSON
//!
//! * Every integer form (the literal markers 0..=31, uint8, int8, int16,
//!   int32, int64, uint32, uint64) becomes a JSON integer. Integers are never
//!   routed through `f64`, so values such as `u64::MAX - 1` stay exact.
//! * double, float64 become `f64` as they are; float32 and float16 are widened
//!   to `f64` (exactly). NaN and infinities have no JSON form and are errors.
//! * Every string form becomes a JSON string: system-dictionary strings,
//!   inline and length-prefixed strings, references to earlier strings,
//!   base64 strings (re-encoded to their text), GUID strings, hex and
//!   date-time 4-bit strings and the 4/5/6/7-bit packed strings.
//! * A GUID value becomes its lowercase `8-4-4-4-12` text.
//! * A binary blob becomes a standard (padded) base64 string.
//! * Arrays, objects and the uniform number arrays become JSON arrays and
//!   objects. A repeated object key keeps its first position and its last
//!   value, as `serde_json` does for text.
//!
//! User strings (markers `0x40..0x68`) index a dictionary that is agreed
//! outside the document; the data plane never supplies one, so they are
//! reported as errors.
//!
//! # Hostile input
//!
//! The input is treated as untrusted. Decoding never panics; every length and
//! count is checked against the bytes that remain before anything is
//! allocated; nesting is limited to [`MAX_DEPTH`] open containers; the text
//! produced by string references is capped at sixteen times the input size
//! (at least 16 MiB, above any Cosmos DB item); trailing bytes after the value
//! are rejected.

mod format;
mod reader;

use std::fmt;

pub use format::PREAMBLE;
pub use reader::MAX_DEPTH;

/// Returns `true` when `body` is a binary JSON document, that is when its
/// first byte is [`PREAMBLE`] (`0x80`). An empty body is not binary.
pub fn is_binary(body: &[u8]) -> bool {
    body.first() == Some(&PREAMBLE)
}

/// Decodes one complete binary JSON document.
///
/// `body` must start with [`PREAMBLE`] and hold exactly one value after it.
///
/// ```
/// // {"id": "hi", "n": 7}: an object with a 1-byte length and count, the
/// // system string "id", a 2-byte inline string, a short key, a literal 7.
/// let body = [0x80, 0xED, 0x07, 0x02, 0x2C, 0x82, b'h', b'i', 0x81, b'n', 0x07];
/// let value = cosmoql_gateway::binary_json::decode(&body).unwrap();
/// assert_eq!(value, serde_json::json!({"id": "hi", "n": 7}));
///
/// // Cut short, the object's 7 bytes of contents (from offset 4) are missing.
/// let err = cosmoql_gateway::binary_json::decode(&body[..9]).unwrap_err();
/// assert_eq!(err.offset(), 4);
/// assert_eq!(
///     err.to_string(),
///     "invalid binary JSON at byte 4: value needs 7 more byte(s) but only 5 remain"
/// );
/// ```
///
/// # Errors
///
/// Returns a [`DecodeError`] naming the byte offset (counted from the start
/// of `body`) and the reason when the document is malformed, truncated, has
/// trailing bytes, or uses a form that has no JSON meaning.
pub fn decode(body: &[u8]) -> Result<serde_json::Value, DecodeError> {
    reader::decode_document(body)
}

/// Why a document could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The body is empty.
    Empty,
    /// The first byte is not [`PREAMBLE`].
    MissingPreamble { found: u8 },
    /// A value needs more bytes than are left (in the buffer, or in the
    /// container that holds it).
    Truncated { needed: usize, available: usize },
    /// A marker byte that no value starts with.
    UnknownMarker { marker: u8 },
    /// A user-dictionary string; the dictionary is not available.
    UserString { id: usize },
    /// A value appeared where only a string may stand (an object key).
    ExpectedString { marker: u8 },
    /// The bytes of a string are not valid UTF-8 (or, for the packed and
    /// table forms, not ASCII).
    InvalidText,
    /// NaN or an infinity: JSON cannot represent it.
    NonFiniteNumber,
    /// More than [`MAX_DEPTH`] containers are open at once.
    TooDeep { limit: usize },
    /// Bytes follow the document's single value.
    TrailingBytes { count: usize },
    /// A string reference that does not name an earlier plain string.
    BadReference { target: usize, reason: &'static str },
    /// String references would produce more text than the input justifies.
    ReferenceExpansion { limit: usize },
    /// A declared count disagrees with the contents.
    CountMismatch { declared: usize, found: usize },
    /// Any other structural inconsistency.
    Malformed(&'static str),
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Empty => write!(f, "empty body"),
            ErrorKind::MissingPreamble { found } => {
                write!(f, "expected the binary preamble 0x80, found 0x{found:02X}")
            }
            ErrorKind::Truncated { needed, available } => {
                write!(f, "value needs {needed} more byte(s) but only {available} remain")
            }
            ErrorKind::UnknownMarker { marker } => write!(f, "unknown type marker 0x{marker:02X}"),
            ErrorKind::UserString { id } => {
                write!(f, "user-dictionary string #{id} cannot be decoded without its dictionary")
            }
            ErrorKind::ExpectedString { marker } => {
                write!(f, "expected a string, found type marker 0x{marker:02X}")
            }
            ErrorKind::InvalidText => write!(f, "string bytes are not valid text"),
            ErrorKind::NonFiniteNumber => write!(f, "NaN or infinite number has no JSON form"),
            ErrorKind::TooDeep { limit } => {
                write!(f, "more than {limit} nested containers")
            }
            ErrorKind::TrailingBytes { count } => {
                write!(f, "{count} unexpected byte(s) after the value")
            }
            ErrorKind::BadReference { target, reason } => {
                write!(f, "string reference to offset {target} {reason}")
            }
            ErrorKind::ReferenceExpansion { limit } => {
                write!(f, "string references expand to more than {limit} bytes of text")
            }
            ErrorKind::CountMismatch { declared, found } => {
                write!(f, "declared {declared} element(s) but the contents hold {found}")
            }
            ErrorKind::Malformed(what) => write!(f, "{what}"),
        }
    }
}

/// A decoding failure: what went wrong and the byte offset in the body
/// (the preamble is offset 0) of the value or field where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    offset: usize,
    kind: ErrorKind,
}

impl DecodeError {
    pub(crate) fn new(offset: usize, kind: ErrorKind) -> Self {
        DecodeError { offset, kind }
    }

    /// Byte offset in the body where the problem was found.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid binary JSON at byte {}: {}", self.offset, self.kind)
    }
}

impl std::error::Error for DecodeError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_binary_by_first_byte() {
        assert!(is_binary(&[0x80]));
        assert!(is_binary(&[0x80, 0xD0]));
        assert!(!is_binary(b"{}"));
        assert!(!is_binary(&[]));
        assert!(!is_binary(&[0x00, 0x80]));
    }

    #[test]
    fn error_message_names_offset_and_reason() {
        let err = decode(&[0x80, 0xD0, 0xD0]).unwrap_err();
        assert_eq!(err.offset(), 2);
        assert_eq!(err.kind(), &ErrorKind::TrailingBytes { count: 1 });
        assert_eq!(err.to_string(), "invalid binary JSON at byte 2: 1 unexpected byte(s) after the value");
    }
}
