//! Effective partition keys (EPKs): how Cosmos DB hashes partition key values onto the key space
//! that physical partitions own.
//!
//! The algorithm follows `shared/conformance/epk/README.md` (tested against its golden vectors in
//! `catalog/tests/epk_vectors.rs`):
//!
//! * Every component is encoded as a type byte plus payload: undefined `00`, null `01`,
//!   false `02`, true `03`, number `05` + the 8 little-endian bytes of the `f64`, string `08` +
//!   UTF-8 + terminator (`FF` in V2, `00` in V1).
//! * **V2 Hash**: MurmurHash3 x64 128 (seed 0) over all encodings; the EPK is `h2` big-endian then
//!   `h1` big-endian with the top two bits of byte 0 cleared (so it starts with `00`..`3F`).
//! * **V2 MultiHash** (hierarchical keys, up to 3 paths): each component is hashed on its own as
//!   above and the 16-byte results are concatenated.
//! * **V1 Hash**: MurmurHash3 x86 32 (seed 0) over the encodings (strings truncated to their first
//!   100 UTF-8 bytes, which agrees with .NET's 100 UTF-16 units for ASCII only), then the EPK is
//!   the order-preserving binary encoding of the hash as a number followed by the binary encoding of
//!   every (truncated) component.
//!
//! Value rules (the service answers 400 for the rejected ones):
//!
//! * NaN and ±Infinity are rejected ([`EpkErrorKind::NonFiniteNumber`]).
//! * `-0` is normalized to `+0` before hashing, as the Rust SDK does, so `-0` and `0` share a
//!   logical partition. The .NET hash baseline hashes the sign bit instead; that hash is still
//!   reachable through [`effective_partition_key_verbatim`].
//! * A MultiHash key has at most 3 components; V1 has no MultiHash.
//! * An empty key maps to [`Epk::min`].
//!
//! Hashing does not allocate: the encodings are streamed into the hasher, and an [`Epk`] of up to
//! 48 bytes (every V2 key, short V1 keys) is stored inline.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use crate::murmur3::{Murmur3X64_128, Murmur3X86_32};
use crate::padded::{cmp_padded, word_at};

/// The most paths (and so components) a hierarchical (MultiHash) partition key can have.
pub const MAX_MULTI_HASH_COMPONENTS: usize = 3;

/// Size of one V2 component hash in an EPK.
pub const V2_COMPONENT_BYTES: usize = 16;

/// V1 keeps the first this many UTF-8 bytes of a string.
const V1_STRING_MAX_BYTES: usize = 100;

/// One value of a partition key (one per path). Numbers are f64 as in JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum PartitionKeyComponent {
    /// The partition key path is missing from the document. Hashes differently from `null`.
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    String(String),
}

impl TryFrom<&serde_json::Value> for PartitionKeyComponent {
    type Error = EpkError;

    /// Strings, numbers, booleans and `null`; objects and arrays are not partition key values.
    /// (JSON cannot express undefined: that is a missing path, [`PartitionKeyComponent::Undefined`].)
    fn try_from(value: &serde_json::Value) -> Result<Self, EpkError> {
        use serde_json::Value;
        match value {
            Value::Null => Ok(PartitionKeyComponent::Null),
            Value::Bool(b) => Ok(PartitionKeyComponent::Bool(*b)),
            Value::Number(n) => match n.as_f64() {
                Some(x) => Ok(PartitionKeyComponent::Number(x)),
                None => Err(EpkError::new(EpkErrorKind::UnsupportedValue("number"))),
            },
            Value::String(s) => Ok(PartitionKeyComponent::String(s.clone())),
            Value::Array(_) => Err(EpkError::new(EpkErrorKind::UnsupportedValue("array"))),
            Value::Object(_) => Err(EpkError::new(EpkErrorKind::UnsupportedValue("object"))),
        }
    }
}

/// The partition key definition's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PartitionKeyKind {
    /// One path (the components, if several, are hashed together).
    #[default]
    Hash,
    /// Hierarchical partition key: up to 3 paths, hashed one by one (V2 only).
    MultiHash,
}

/// The partition key definition's hash version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum HashVersion {
    /// Legacy: MurmurHash3 x86 32 plus the binary encoding of the values.
    V1,
    /// MurmurHash3 x64 128 (the default for new containers).
    #[default]
    V2,
}

/// Why a key could not be hashed, or an EPK could not be built.
#[derive(Debug, Clone, PartialEq)]
pub struct EpkError {
    kind: EpkErrorKind,
}

/// The kinds of [`EpkError`]. All of them are client errors (HTTP 400 in Cosmos DB terms).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EpkErrorKind {
    /// NaN, Infinity or -Infinity as a key value.
    NonFiniteNumber(NonFinite),
    /// A MultiHash key with more components than the 3 allowed.
    TooManyComponents { count: usize, max: usize },
    /// V1 hashing has no hierarchical (MultiHash) keys.
    MultiHashRequiresV2,
    /// A key with more components than the container has paths.
    PrefixLongerThanPaths { components: usize, paths: usize },
    /// A path count that is not 1..=3.
    InvalidPathCount(usize),
    /// V1 prefix ranges exist only for single-path (Hash) containers with the full key.
    V1PrefixRange,
    /// A hex EPK with an odd number of digits.
    OddHexLength(usize),
    /// A hex EPK with a non-hex character at this byte offset.
    InvalidHexDigit(usize),
    /// A JSON value that cannot be a partition key value (object, array).
    UnsupportedValue(&'static str),
}

/// Which non-finite number was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonFinite {
    NaN,
    Infinity,
    NegativeInfinity,
}

impl EpkError {
    fn new(kind: EpkErrorKind) -> Self {
        EpkError { kind }
    }

    /// What went wrong.
    pub fn kind(&self) -> &EpkErrorKind {
        &self.kind
    }
}

impl fmt::Display for EpkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            EpkErrorKind::NonFiniteNumber(n) => {
                let n = match n {
                    NonFinite::NaN => "NaN",
                    NonFinite::Infinity => "Infinity",
                    NonFinite::NegativeInfinity => "-Infinity",
                };
                write!(f, "partition key value {n} is not allowed: numbers must be finite")
            }
            EpkErrorKind::TooManyComponents { count, max } => {
                write!(f, "a hierarchical partition key has at most {max} components, got {count}")
            }
            EpkErrorKind::MultiHashRequiresV2 => {
                write!(f, "hierarchical (MultiHash) partition keys require hash version 2")
            }
            EpkErrorKind::PrefixLongerThanPaths { components, paths } => write!(
                f,
                "the partition key has {components} components but the container has {paths} partition key paths"
            ),
            EpkErrorKind::InvalidPathCount(n) => {
                write!(f, "a partition key definition has 1 to {MAX_MULTI_HASH_COMPONENTS} paths, got {n}")
            }
            EpkErrorKind::V1PrefixRange => {
                write!(f, "hash version 1 supports only single-path partition keys, and the key must be complete")
            }
            EpkErrorKind::OddHexLength(n) => {
                write!(f, "an effective partition key has an even number of hex digits, got {n}")
            }
            EpkErrorKind::InvalidHexDigit(at) => {
                write!(f, "invalid hex digit at offset {at} of the effective partition key")
            }
            EpkErrorKind::UnsupportedValue(what) => {
                write!(f, "a partition key value must be a string, number, boolean or null, not {what}")
            }
        }
    }
}

impl std::error::Error for EpkError {}

// ---------------------------------------------------------------------------------------------
// Epk
// ---------------------------------------------------------------------------------------------

/// Bytes stored without a heap allocation: a 3-path V2 MultiHash EPK.
const INLINE: usize = 3 * V2_COMPONENT_BYTES;

#[derive(Clone)]
enum Repr {
    Inline { len: u8, buf: [u8; INLINE] },
    Heap(Vec<u8>),
}

/// An effective partition key: raw bytes, printed as uppercase hex.
///
/// Ordering, equality and hashing compare bytes as unsigned numbers where trailing `00` bytes do
/// not count: `"80" == "8000"`, `"" == "00"`, `"1631" < "1631FF"`. [`Epk::as_bytes`] and
/// [`Epk::to_hex`] still show the bytes as built, padding included.
#[derive(Clone)]
pub struct Epk(Repr);

impl Epk {
    /// The smallest EPK, `""` (inclusive lower bound of the space).
    pub fn min() -> Epk {
        Epk(Repr::Inline { len: 0, buf: [0; INLINE] })
    }

    /// `"FF"`, the exclusive upper bound of the space: every real EPK is below it.
    pub fn max() -> Epk {
        Epk::from_bytes(&[0xFF])
    }

    /// An EPK from its raw bytes.
    pub fn from_bytes(bytes: &[u8]) -> Epk {
        let mut e = Epk::min();
        e.extend(bytes);
        e
    }

    /// Parse hex (either case; `""` is [`Epk::min`]).
    pub fn from_hex(s: &str) -> Result<Epk, EpkError> {
        let b = s.as_bytes();
        if !b.len().is_multiple_of(2) {
            return Err(EpkError::new(EpkErrorKind::OddHexLength(b.len())));
        }
        let mut e = Epk::min();
        for (i, pair) in b.chunks_exact(2).enumerate() {
            let digit =
                |j: usize| hex_value(pair[j]).ok_or_else(|| EpkError::new(EpkErrorKind::InvalidHexDigit(2 * i + j)));
            e.push(digit(0)? << 4 | digit(1)?);
        }
        Ok(e)
    }

    /// Uppercase hex of the bytes (padding included).
    pub fn to_hex(&self) -> String {
        let mut s = String::with_capacity(2 * self.as_bytes().len());
        for &b in self.as_bytes() {
            s.push(HEX[usize::from(b >> 4)] as char);
            s.push(HEX[usize::from(b & 0x0F)] as char);
        }
        s
    }

    /// The first 16 bytes as a big-endian number (zero-padded).
    pub fn top_u128(&self) -> u128 {
        let mut b = [0u8; 16];
        for (d, s) in b.iter_mut().zip(self.as_bytes()) {
            *d = *s;
        }
        u128::from_be_bytes(b)
    }

    /// The raw bytes (padding included).
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, buf } => &buf[..usize::from(*len)],
            Repr::Heap(v) => v,
        }
    }

    /// The bytes without trailing `00` padding: the part that ordering and equality look at.
    pub fn significant_bytes(&self) -> &[u8] {
        let b = self.as_bytes();
        let n = b.iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
        &b[..n]
    }

    /// The successor used to turn a point `[A, A]` into the half-open `[A, succ(A))`: the bytes
    /// as a big-endian number plus one, at the same width (`"3AFF"` → `"3B00"`). `""` gives
    /// `"00"`, as in the SDK (which is *equal* to `""` under the trailing-zero rule). An all-`FF`
    /// EPK cannot be incremented at its width, so `01` is appended instead (`"FF"` → `"FF01"`),
    /// which is still greater; real EPKs never get there (V2 ones start with `00`..`3F`, V1 ones
    /// with `05`).
    pub fn successor(&self) -> Epk {
        self.successor_padded(0)
    }

    /// [`Epk::successor`] after right-padding with `00` to `width` bytes (the container's full EPK
    /// width: 16 bytes per V2 path), e.g. `"3A"` at 16 → `"3A000000000000000000000000000001"`.
    pub fn successor_padded(&self, width: usize) -> Epk {
        let mut out = self.clone();
        while out.as_bytes().len() < width {
            out.push(0);
        }
        if out.as_bytes().is_empty() {
            out.push(0);
            return out;
        }
        let bytes = out.bytes_mut();
        for b in bytes.iter_mut().rev() {
            if *b == 0xFF {
                *b = 0;
            } else {
                *b += 1;
                return out;
            }
        }
        // Every byte was FF: append instead of overflowing.
        for b in out.bytes_mut() {
            *b = 0xFF;
        }
        out.push(1);
        out
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        match &mut self.0 {
            Repr::Inline { len, buf } => &mut buf[..usize::from(*len)],
            Repr::Heap(v) => v,
        }
    }

    #[inline]
    fn push(&mut self, b: u8) {
        self.extend(&[b]);
    }

    #[inline]
    fn extend(&mut self, bytes: &[u8]) {
        match &mut self.0 {
            Repr::Inline { len, buf } => {
                let n = usize::from(*len);
                if n + bytes.len() <= INLINE {
                    buf[n..n + bytes.len()].copy_from_slice(bytes);
                    *len = (n + bytes.len()) as u8;
                } else {
                    let mut v = Vec::with_capacity((n + bytes.len()).max(2 * INLINE));
                    v.extend_from_slice(&buf[..n]);
                    v.extend_from_slice(bytes);
                    self.0 = Repr::Heap(v);
                }
            }
            Repr::Heap(v) => v.extend_from_slice(bytes),
        }
    }
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'A'..=b'F' => Some(c - b'A' + 10),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

impl PartialEq for Epk {
    fn eq(&self, other: &Self) -> bool {
        self.significant_bytes() == other.significant_bytes()
    }
}

impl Eq for Epk {}

impl Ord for Epk {
    /// Lexicographic over the significant bytes: after trimming, a proper prefix is smaller
    /// because the longer key's tail ends with a non-zero byte. That is the order of the bytes
    /// padded with zeros to the same length, compared here eight at a time (sorting a probe's
    /// positions by EPK was a fifth of a query's instructions). The first word of two inline
    /// EPKs is compared where the caller is (finding a partition in the map compares about ten
    /// pairs, nearly all told apart by it).
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        if let (Repr::Inline { buf: a, .. }, Repr::Inline { buf: b, .. }) = (&self.0, &other.0) {
            let (x, y) = (word_at(a, 0), word_at(b, 0));
            if x != y {
                return x.cmp(&y);
            }
        }
        self.cmp_padded(other)
    }
}

impl Epk {
    /// [`Ord::cmp`] past the first word.
    fn cmp_padded(&self, other: &Self) -> Ordering {
        // Inline EPKs are zero past their length (only `extend` writes, at the end): their
        // buffers are the padded bytes already.
        if let (Repr::Inline { len: la, buf: a }, Repr::Inline { len: lb, buf: b }) = (&self.0, &other.0) {
            // Word by word up to the longer length (two words for a V2 key, equal or not): an
            // equality test of the whole buffers first was a call to `memcmp` over 48 bytes.
            return cmp_padded(a, b, usize::from(*la.max(lb)));
        }
        let (a, b) = (self.as_bytes(), other.as_bytes());
        cmp_padded(a, b, a.len().max(b.len()))
    }
}

impl PartialOrd for Epk {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Hash for Epk {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.significant_bytes().hash(state);
    }
}

impl fmt::Display for Epk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &b in self.as_bytes() {
            write!(f, "{b:02X}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Epk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Epk(\"{self}\")")
    }
}

impl FromStr for Epk {
    type Err = EpkError;

    fn from_str(s: &str) -> Result<Epk, EpkError> {
        Epk::from_hex(s)
    }
}

impl Default for Epk {
    fn default() -> Self {
        Epk::min()
    }
}

// ---------------------------------------------------------------------------------------------
// Hashing
// ---------------------------------------------------------------------------------------------

/// The EPK of a partition key value (one component per path).
///
/// Rejects NaN/±Infinity, MultiHash keys with more than 3 components and V1 MultiHash; normalizes
/// `-0` to `+0`. An empty key gives [`Epk::min`]. `Hash` accepts several components and hashes
/// them together (the SDKs allow it); the service's Hash containers have one path.
pub fn effective_partition_key(
    components: &[PartitionKeyComponent],
    kind: PartitionKeyKind,
    version: HashVersion,
) -> Result<Epk, EpkError> {
    if kind == PartitionKeyKind::MultiHash && version == HashVersion::V1 {
        return Err(EpkError::new(EpkErrorKind::MultiHashRequiresV2));
    }
    if kind == PartitionKeyKind::MultiHash && components.len() > MAX_MULTI_HASH_COMPONENTS {
        return Err(EpkError::new(EpkErrorKind::TooManyComponents {
            count: components.len(),
            max: MAX_MULTI_HASH_COMPONENTS,
        }));
    }
    for c in components {
        if let PartitionKeyComponent::Number(x) = c {
            if !x.is_finite() {
                let which = if x.is_nan() {
                    NonFinite::NaN
                } else if *x > 0.0 {
                    NonFinite::Infinity
                } else {
                    NonFinite::NegativeInfinity
                };
                return Err(EpkError::new(EpkErrorKind::NonFiniteNumber(which)));
            }
        }
    }
    Ok(compute(components, kind, version, true))
}

/// The EPK exactly as the SDK hash baselines compute it, without the service's value rules:
/// numbers are hashed with their IEEE-754 bit pattern as given (`-0` keeps its sign bit, NaN and
/// ±Infinity are hashed; .NET's `double.NaN` is `0xFFF8000000000000`, not Rust's `f64::NAN`)
/// and MultiHash accepts any number of components. Meant for conformance
/// tests against the .NET baselines; documents and queries go through
/// [`effective_partition_key`]. V1 MultiHash is still an error.
pub fn effective_partition_key_verbatim(
    components: &[PartitionKeyComponent],
    kind: PartitionKeyKind,
    version: HashVersion,
) -> Result<Epk, EpkError> {
    if kind == PartitionKeyKind::MultiHash && version == HashVersion::V1 {
        return Err(EpkError::new(EpkErrorKind::MultiHashRequiresV2));
    }
    Ok(compute(components, kind, version, false))
}

fn compute(components: &[PartitionKeyComponent], kind: PartitionKeyKind, version: HashVersion, normalize: bool) -> Epk {
    let mut out = Epk::min();
    if components.is_empty() {
        return out;
    }
    match (version, kind) {
        (HashVersion::V2, PartitionKeyKind::Hash) => {
            let mut h = Murmur3X64_128::new(0);
            for c in components {
                write_v2(&mut h, c, normalize);
            }
            out.extend(&finish_v2(&h));
        }
        (HashVersion::V2, PartitionKeyKind::MultiHash) => {
            for c in components {
                let mut h = Murmur3X64_128::new(0);
                write_v2(&mut h, c, normalize);
                out.extend(&finish_v2(&h));
            }
        }
        (HashVersion::V1, _) => {
            let mut h = Murmur3X86_32::new(0);
            for c in components {
                write_v1(&mut h, c, normalize);
            }
            let hash = h.finish();
            binary_number(&mut out, f64::from(hash));
            for c in components {
                binary_component(&mut out, c, normalize);
            }
        }
    }
    out
}

/// The V2 hash of one string component whose text is `parts` joined, as a big-endian number:
/// the EPK of a single-path (Hash, V2) key with that string value, and that component's level of
/// a MultiHash key, in the EPK's order. The partition-key advisor hashes a candidate's every key
/// with it, without building the key or its text.
pub fn string_hash_v2(parts: &[&str]) -> u128 {
    let mut h = Murmur3X64_128::new(0);
    h.write_u8(0x08);
    for part in parts {
        h.write(part.as_bytes());
    }
    h.write_u8(0xFF);
    u128::from_be_bytes(finish_v2(&h))
}

/// The V2 hash of one component, as [`string_hash_v2`] gives it for a string: numbers, booleans,
/// null and undefined too (`-0` hashes as `0`).
pub fn component_hash_v2(c: &PartitionKeyComponent) -> u128 {
    let mut h = Murmur3X64_128::new(0);
    write_v2(&mut h, c, true);
    u128::from_be_bytes(finish_v2(&h))
}

/// [`component_hash_v2`] of an undefined component (an item without the key's path).
pub fn undefined_hash_v2() -> u128 {
    component_hash_v2(&PartitionKeyComponent::Undefined)
}

#[inline]
fn number_value(x: f64, normalize: bool) -> f64 {
    // `-0.0 + 0.0` is `+0.0`; every other value is unchanged.
    if normalize {
        x + 0.0
    } else {
        x
    }
}

fn write_v2(h: &mut Murmur3X64_128, c: &PartitionKeyComponent, normalize: bool) {
    match c {
        PartitionKeyComponent::Undefined => h.write_u8(0x00),
        PartitionKeyComponent::Null => h.write_u8(0x01),
        PartitionKeyComponent::Bool(false) => h.write_u8(0x02),
        PartitionKeyComponent::Bool(true) => h.write_u8(0x03),
        PartitionKeyComponent::Number(x) => {
            let mut buf = [0u8; 9];
            buf[0] = 0x05;
            buf[1..].copy_from_slice(&number_value(*x, normalize).to_le_bytes());
            h.write(&buf);
        }
        PartitionKeyComponent::String(s) => {
            h.write_u8(0x08);
            h.write(s.as_bytes());
            h.write_u8(0xFF);
        }
    }
}

fn finish_v2(h: &Murmur3X64_128) -> [u8; 16] {
    let (h1, h2) = h.finish();
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&h2.to_be_bytes());
    out[8..].copy_from_slice(&h1.to_be_bytes());
    out[0] &= 0x3F;
    out
}

fn v1_truncate(s: &str) -> &[u8] {
    let b = s.as_bytes();
    &b[..b.len().min(V1_STRING_MAX_BYTES)]
}

fn write_v1(h: &mut Murmur3X86_32, c: &PartitionKeyComponent, normalize: bool) {
    match c {
        PartitionKeyComponent::Undefined => h.write_u8(0x00),
        PartitionKeyComponent::Null => h.write_u8(0x01),
        PartitionKeyComponent::Bool(false) => h.write_u8(0x02),
        PartitionKeyComponent::Bool(true) => h.write_u8(0x03),
        PartitionKeyComponent::Number(x) => {
            let mut buf = [0u8; 9];
            buf[0] = 0x05;
            buf[1..].copy_from_slice(&number_value(*x, normalize).to_le_bytes());
            h.write(&buf);
        }
        PartitionKeyComponent::String(s) => {
            h.write_u8(0x08);
            h.write(v1_truncate(s));
            h.write_u8(0x00);
        }
    }
}

/// The order-preserving binary encoding of a number: `05`, the top byte of the sign-adjusted bit
/// pattern, then the rest 7 bits per byte (low bit 1 = "more follows"), or a single `00`.
fn binary_number(out: &mut Epk, x: f64) {
    let bits = x.to_bits();
    let u = if bits & (1 << 63) == 0 { bits | (1 << 63) } else { (!bits).wrapping_add(1) };
    let mut buf = [0u8; 11];
    buf[0] = 0x05;
    buf[1] = (u >> 56) as u8;
    let mut n = 2;
    let mut rest = u << 8;
    if rest == 0 {
        buf[n] = 0;
        n += 1;
    }
    while rest != 0 {
        let group = ((rest >> 57) as u8) << 1;
        rest <<= 7;
        buf[n] = if rest == 0 { group } else { group | 1 };
        n += 1;
    }
    out.extend(&buf[..n]);
}

fn binary_component(out: &mut Epk, c: &PartitionKeyComponent, normalize: bool) {
    match c {
        PartitionKeyComponent::Undefined => out.push(0x00),
        PartitionKeyComponent::Null => out.push(0x01),
        PartitionKeyComponent::Bool(false) => out.push(0x02),
        PartitionKeyComponent::Bool(true) => out.push(0x03),
        PartitionKeyComponent::Number(x) => binary_number(out, number_value(*x, normalize)),
        PartitionKeyComponent::String(s) => {
            out.push(0x08);
            // UTF-8 never contains FF, so `+ 1` cannot overflow.
            for &b in v1_truncate(s) {
                out.push(b.wrapping_add(1));
            }
            out.push(0x00);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Ranges
// ---------------------------------------------------------------------------------------------

/// The half-open EPK range `[start, end)` that a (possibly partial) key covers in a container with
/// `path_count` partition key paths.
///
/// * V2 keys are hashed as MultiHash (for one path that equals Hash). A prefix (fewer components
///   than paths) covers `[concat, concat + "FF")`: `FF` is above every masked leading byte. The
///   empty prefix covers the whole space `["", "FF")`.
/// * A full key is a point; it is returned half-open as `[epk, epk.successor())` (the point's
///   EPK already has the container's full width, 16 bytes per path).
/// * V1 supports only `path_count == 1` with the full key.
pub fn prefix_range(
    components: &[PartitionKeyComponent],
    path_count: usize,
    version: HashVersion,
) -> Result<(Epk, Epk), EpkError> {
    if path_count == 0 || path_count > MAX_MULTI_HASH_COMPONENTS {
        return Err(EpkError::new(EpkErrorKind::InvalidPathCount(path_count)));
    }
    if components.len() > path_count {
        return Err(EpkError::new(EpkErrorKind::PrefixLongerThanPaths {
            components: components.len(),
            paths: path_count,
        }));
    }
    let kind = match version {
        HashVersion::V1 if path_count != 1 || components.len() != 1 => {
            return Err(EpkError::new(EpkErrorKind::V1PrefixRange));
        }
        HashVersion::V1 => PartitionKeyKind::Hash,
        HashVersion::V2 => PartitionKeyKind::MultiHash,
    };
    let start = effective_partition_key(components, kind, version)?;
    if components.len() == path_count {
        let end = start.successor();
        return Ok((start, end));
    }
    let mut end = start.clone();
    end.push(0xFF);
    Ok((start, end))
}

/// The middle of the EPK range `[lo, hi)`, by its first 16 bytes, for a split that halves the key
/// space (the service's split when throughput grows). A V2 range is halved within the hash space
/// `[00.., 40..)` its keys fall in. `None` when the range is too narrow to halve.
pub fn midpoint(lo: &Epk, hi: &Epk) -> Option<Epk> {
    let (l, mut h) = (lo.top_u128(), if *hi == Epk::max() { u128::MAX } else { hi.top_u128() });
    if l < 1u128 << 126 && h > 1u128 << 126 {
        h = 1u128 << 126;
    }
    let mid = l + (h - l) / 2;
    let mid = Epk::from_bytes(&mid.to_be_bytes());
    (mid > *lo && mid < *hi).then_some(mid)
}

/// Boundaries that split the EPK space into `n` ranges for `n` initial physical partitions of a V2
/// container: `n + 1` EPKs, the first [`Epk::min`], the last [`Epk::max`].
///
/// V2 hashes all start with a byte `<= 0x3F`, so the internal boundaries divide the used V2 hash
/// space `[00.., 40..)` evenly: boundary `k` is `k * floor(2^126 / n)` as 16 big-endian bytes
/// (for 4 partitions: `10…`, `20…`, `30…`). The first partition also owns everything below
/// (nothing) and the last everything from its boundary up to `FF`. This is the same split as the
/// Rust SDK's in-memory emulator. V1 EPKs (`05C1…`) would all fall into the last partition.
/// `n == 0` is treated as 1.
pub fn split_space(n: usize) -> Vec<Epk> {
    let n = n.max(1);
    let mut out = Vec::with_capacity(n + 1);
    out.push(Epk::min());
    let step = (1u128 << 126) / n as u128;
    for k in 1..n {
        out.push(Epk::from_bytes(&(step * k as u128).to_be_bytes()));
    }
    out.push(Epk::max());
    out
}

#[cfg(test)]
mod tests;
