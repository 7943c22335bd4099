//! MurmurHash3 (Austin Appleby's public-domain design), the two variants Cosmos DB uses for
//! effective partition keys:
//!
//! * `x86_32` (32-bit result) for V1 hash partitioning,
//! * `x64_128` (two 64-bit halves `h1`, `h2`) for V2 hash partitioning.
//!
//! Both are available as one-shot functions and as streaming hashers, so the EPK code can feed a
//! type marker, the payload and a terminator without first concatenating them into a buffer. The
//! streaming hashers give exactly the same result as the one-shot functions over the concatenated
//! input, however the input is split into `write` calls.

/// One-shot MurmurHash3 x86 32-bit.
// The EPK code streams into the hashers; the one-shot form is the reference API and the tests'.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn murmur3_x86_32(data: &[u8], seed: u32) -> u32 {
    let mut h = Murmur3X86_32::new(seed);
    h.write(data);
    h.finish()
}

/// One-shot MurmurHash3 x64 128-bit; returns `(h1, h2)` as the reference implementation leaves
/// them (the reference writes `h1` then `h2` little-endian as its 16 output bytes).
// The EPK code streams into the hashers; the one-shot form is the reference API and the tests'.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn murmur3_x64_128(data: &[u8], seed: u64) -> (u64, u64) {
    let mut h = Murmur3X64_128::new(seed);
    h.write(data);
    h.finish()
}

const C1_32: u32 = 0xcc9e_2d51;
const C2_32: u32 = 0x1b87_3593;

#[inline]
fn mix_k1_32(k: u32) -> u32 {
    k.wrapping_mul(C1_32).rotate_left(15).wrapping_mul(C2_32)
}

#[inline]
fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// Streaming MurmurHash3 x86 32-bit.
#[derive(Debug, Clone)]
pub(crate) struct Murmur3X86_32 {
    h: u32,
    tail: [u8; 4],
    tail_len: usize,
    total: u64,
}

impl Murmur3X86_32 {
    pub(crate) fn new(seed: u32) -> Self {
        Murmur3X86_32 { h: seed, tail: [0; 4], tail_len: 0, total: 0 }
    }

    #[inline]
    fn block(&mut self, b: [u8; 4]) {
        self.h ^= mix_k1_32(u32::from_le_bytes(b));
        self.h = self.h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }

    #[inline]
    pub(crate) fn write_u8(&mut self, b: u8) {
        self.write(&[b]);
    }

    pub(crate) fn write(&mut self, mut data: &[u8]) {
        self.total = self.total.wrapping_add(data.len() as u64);
        if self.tail_len > 0 {
            let take = (4 - self.tail_len).min(data.len());
            self.tail[self.tail_len..self.tail_len + take].copy_from_slice(&data[..take]);
            self.tail_len += take;
            data = &data[take..];
            if self.tail_len < 4 {
                return;
            }
            self.block(self.tail);
            self.tail_len = 0;
        }
        let mut chunks = data.chunks_exact(4);
        for c in &mut chunks {
            self.block([c[0], c[1], c[2], c[3]]);
        }
        let rest = chunks.remainder();
        self.tail[..rest.len()].copy_from_slice(rest);
        self.tail_len = rest.len();
    }

    pub(crate) fn finish(&self) -> u32 {
        let mut h = self.h;
        if self.tail_len > 0 {
            let mut k = 0u32;
            for (i, &b) in self.tail[..self.tail_len].iter().enumerate() {
                k ^= u32::from(b) << (8 * i);
            }
            h ^= mix_k1_32(k);
        }
        // The reference takes the length as a 32-bit `int`.
        h ^= self.total as u32;
        fmix32(h)
    }
}

const C1_64: u64 = 0x87c3_7b91_1142_53d5;
const C2_64: u64 = 0x4cf5_ad43_2745_937f;

#[inline]
fn mix_k1_64(k: u64) -> u64 {
    k.wrapping_mul(C1_64).rotate_left(31).wrapping_mul(C2_64)
}

#[inline]
fn mix_k2_64(k: u64) -> u64 {
    k.wrapping_mul(C2_64).rotate_left(33).wrapping_mul(C1_64)
}

#[inline]
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

/// Streaming MurmurHash3 x64 128-bit.
#[derive(Debug, Clone)]
pub(crate) struct Murmur3X64_128 {
    h1: u64,
    h2: u64,
    tail: [u8; 16],
    tail_len: usize,
    total: u64,
}

impl Murmur3X64_128 {
    pub(crate) fn new(seed: u64) -> Self {
        Murmur3X64_128 { h1: seed, h2: seed, tail: [0; 16], tail_len: 0, total: 0 }
    }

    #[inline]
    fn block(&mut self, b: &[u8; 16]) {
        let mut lo = [0u8; 8];
        let mut hi = [0u8; 8];
        lo.copy_from_slice(&b[..8]);
        hi.copy_from_slice(&b[8..]);
        let (k1, k2) = (u64::from_le_bytes(lo), u64::from_le_bytes(hi));
        self.h1 ^= mix_k1_64(k1);
        self.h1 = self.h1.rotate_left(27).wrapping_add(self.h2).wrapping_mul(5).wrapping_add(0x52dc_e729);
        self.h2 ^= mix_k2_64(k2);
        self.h2 = self.h2.rotate_left(31).wrapping_add(self.h1).wrapping_mul(5).wrapping_add(0x3849_5ab5);
    }

    #[inline]
    pub(crate) fn write_u8(&mut self, b: u8) {
        self.write(&[b]);
    }

    pub(crate) fn write(&mut self, mut data: &[u8]) {
        self.total = self.total.wrapping_add(data.len() as u64);
        if self.tail_len > 0 {
            let take = (16 - self.tail_len).min(data.len());
            self.tail[self.tail_len..self.tail_len + take].copy_from_slice(&data[..take]);
            self.tail_len += take;
            data = &data[take..];
            if self.tail_len < 16 {
                return;
            }
            let full = self.tail;
            self.block(&full);
            self.tail_len = 0;
        }
        let mut chunks = data.chunks_exact(16);
        for c in &mut chunks {
            let mut b = [0u8; 16];
            b.copy_from_slice(c);
            self.block(&b);
        }
        let rest = chunks.remainder();
        self.tail[..rest.len()].copy_from_slice(rest);
        self.tail_len = rest.len();
    }

    pub(crate) fn finish(&self) -> (u64, u64) {
        let (mut h1, mut h2) = (self.h1, self.h2);
        if self.tail_len > 0 {
            let mut k1 = 0u64;
            let mut k2 = 0u64;
            for (i, &b) in self.tail[..self.tail_len].iter().enumerate() {
                if i < 8 {
                    k1 ^= u64::from(b) << (8 * i);
                } else {
                    k2 ^= u64::from(b) << (8 * (i - 8));
                }
            }
            if self.tail_len > 8 {
                h2 ^= mix_k2_64(k2);
            }
            h1 ^= mix_k1_64(k1);
        }
        h1 ^= self.total;
        h2 ^= self.total;
        h1 = h1.wrapping_add(h2);
        h2 = h2.wrapping_add(h1);
        h1 = fmix64(h1);
        h2 = fmix64(h2);
        h1 = h1.wrapping_add(h2);
        h2 = h2.wrapping_add(h1);
        (h1, h2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SMHasher's `VerificationTest`: hash the keys `[]`, `[0]`, `[0, 1]`, ... `[0..=254]` with
    /// seed `256 - len`, concatenate the hash outputs, hash that with seed 0 and read the first
    /// four bytes little-endian.
    fn verification(hash_len: usize, f: impl Fn(&[u8], u32) -> Vec<u8>) -> u32 {
        let mut key = Vec::with_capacity(256);
        let mut hashes = Vec::with_capacity(256 * hash_len);
        for i in 0..256usize {
            hashes.extend(f(&key, (256 - i) as u32));
            key.push(i as u8);
        }
        let fin = f(&hashes, 0);
        u32::from_le_bytes([fin[0], fin[1], fin[2], fin[3]])
    }

    fn x64_bytes(data: &[u8], seed: u32) -> Vec<u8> {
        let (h1, h2) = murmur3_x64_128(data, u64::from(seed));
        let mut v = h1.to_le_bytes().to_vec();
        v.extend(h2.to_le_bytes());
        v
    }

    #[test]
    fn x86_32_smhasher_verification_value() {
        let v = verification(4, |d, s| murmur3_x86_32(d, s).to_le_bytes().to_vec());
        assert_eq!(v, 0xB0F5_7EE3);
    }

    #[test]
    fn x64_128_smhasher_verification_value() {
        assert_eq!(verification(16, x64_bytes), 0x6384_BA69);
    }

    #[test]
    fn x86_32_published_values() {
        assert_eq!(murmur3_x86_32(b"", 0), 0);
        assert_eq!(murmur3_x86_32(b"", 1), 0x514E_28B7);
        assert_eq!(murmur3_x86_32(b"", 0xffff_ffff), 0x81F1_6F39);
        assert_eq!(murmur3_x86_32(&[0, 0, 0, 0], 0), 0x2362_F9DE);
        assert_eq!(murmur3_x86_32(b"aaaa", 0x9747_b28c), 0x5A97_808A);
        assert_eq!(murmur3_x86_32(b"Hello, world!", 0x9747_b28c), 0x2488_4CBA);
        assert_eq!(murmur3_x86_32(b"hello", 0), 0x248B_FA47);
        assert_eq!(murmur3_x86_32(b"The quick brown fox jumps over the lazy dog", 0x9747_b28c), 0x2FA8_26CD);
    }

    #[test]
    fn x64_128_published_values() {
        assert_eq!(murmur3_x64_128(b"", 0), (0, 0));
        assert_eq!(murmur3_x64_128(b"hello", 0), (0xcbd8_a7b3_41bd_9b02, 0x5b1e_906a_48ae_1d19));
        assert_eq!(
            murmur3_x64_128(b"The quick brown fox jumps over the lazy dog", 0),
            (0xe34b_bc7b_bc07_1b6c, 0x7a43_3ca9_c49a_9347)
        );
    }

    /// The Cosmos DB baseline vectors (README of the EPK conformance set): V1 raw hash of the
    /// hashing encoding of `""` (`08 00`), and V2 raw hash of `"redmond"` (`08 redmond FF`) before
    /// the top-two-bit mask, written as h2 big-endian then h1 big-endian.
    #[test]
    fn cosmos_baseline_values() {
        assert_eq!(murmur3_x86_32(&[0x08, 0x00], 0), 0x3CCC_B0FF);
        // V1 raw hashes of `null` (`01`), `false` (`02`) and `true` (`03`) from the same baselines.
        assert_eq!(murmur3_x86_32(&[0x01], 0), 0xE45A_D1AB);
        assert_eq!(murmur3_x86_32(&[0x02], 0), 0x6C27_D09F);
        assert_eq!(murmur3_x86_32(&[0x03], 0), 0x5E2A_8076);
        let (h1, h2) = murmur3_x64_128(b"\x08redmond\xFF", 0);
        assert_eq!(h2 & 0x3FFF_FFFF_FFFF_FFFF, 0x22E3_42F3_8A48_6A08);
        assert_eq!(h1, 0x8463_DFF7_838A_5963);
        // The .NET baseline's raw (unmasked) V2 hash of `-0.0`.
        let mut neg_zero = vec![0x05];
        neg_zero.extend((-0.0f64).to_le_bytes());
        assert_eq!(murmur3_x64_128(&neg_zero, 0), (0x35766E81FD10406E, 0x3D018BB1DF3DB272));
    }

    #[test]
    fn streaming_matches_one_shot_for_every_split() {
        let data: Vec<u8> = (0..67u8).map(|i| i.wrapping_mul(37).wrapping_add(11)).collect();
        for len in 0..data.len() {
            let d = &data[..len];
            let want32 = murmur3_x86_32(d, 7);
            let want128 = murmur3_x64_128(d, 7);
            for a in 0..=len {
                for b in a..=len {
                    let mut s32 = Murmur3X86_32::new(7);
                    let mut s128 = Murmur3X64_128::new(7);
                    for part in [&d[..a], &d[a..b], &d[b..]] {
                        s32.write(part);
                        s128.write(part);
                    }
                    assert_eq!(s32.finish(), want32, "len {len} split {a}/{b}");
                    assert_eq!(s128.finish(), want128, "len {len} split {a}/{b}");
                }
            }
        }
        let mut s = Murmur3X64_128::new(0);
        for &b in b"\x08redmond\xFF" {
            s.write_u8(b);
        }
        assert_eq!(s.finish(), murmur3_x64_128(b"\x08redmond\xFF", 0));
    }
}
