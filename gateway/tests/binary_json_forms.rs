//! Forms the golden vectors do not cover, built by hand from the layouts.

use cosmoql_gateway::binary_json::decode;
use serde_json::{json, Value};

fn body(value: &[u8]) -> Vec<u8> {
    let mut out = vec![0x80];
    out.extend_from_slice(value);
    out
}

fn ok(value: &[u8]) -> Value {
    decode(&body(value)).unwrap_or_else(|err| panic!("{err}"))
}

/// Packs `codes` of `bits` bits each, least significant bit first.
fn pack(codes: &[u8], bits: usize) -> Vec<u8> {
    let mut out = vec![0u8; (codes.len() * bits).div_ceil(8)];
    for (i, &code) in codes.iter().enumerate() {
        for b in 0..bits {
            if code >> b & 1 == 1 {
                let bit = i * bits + b;
                out[bit / 8] |= 1 << (bit % 8);
            }
        }
    }
    out
}

#[test]
fn integer_extremes_stay_exact() {
    let mut u64_max = vec![0xC7];
    u64_max.extend_from_slice(&u64::MAX.to_le_bytes());
    assert_eq!(ok(&u64_max), json!(u64::MAX));
    let mut i64_min = vec![0xCB];
    i64_min.extend_from_slice(&i64::MIN.to_le_bytes());
    assert_eq!(ok(&i64_min), json!(i64::MIN));
    let mut beyond_f64 = vec![0xDB];
    beyond_f64.extend_from_slice(&(9_007_199_254_740_993_i64).to_le_bytes());
    assert_eq!(ok(&beyond_f64), json!(9_007_199_254_740_993_i64));
    assert_eq!(ok(&[0xD8, 0x80]), json!(-128));
    assert_eq!(ok(&[0xDC, 0xFF, 0xFF, 0xFF, 0xFF]), json!(u32::MAX));
    assert_eq!(ok(&[0xC8, 0xFF]), json!(255));
}

#[test]
fn doubles_keep_their_value_and_sign() {
    let mut third = vec![0xCC];
    third.extend_from_slice(&(1.0f64 / 3.0).to_le_bytes());
    assert_eq!(ok(&third).as_f64(), Some(1.0 / 3.0));
    let mut neg_zero = vec![0xCE];
    neg_zero.extend_from_slice(&(-0.0f64).to_le_bytes());
    assert!(ok(&neg_zero).as_f64().unwrap().is_sign_negative());
    let mut float32 = vec![0xCD];
    float32.extend_from_slice(&0.1f32.to_le_bytes());
    assert_eq!(ok(&float32).as_f64(), Some(f64::from(0.1f32)));
}

#[test]
fn float16_widens_exactly() {
    let cases: [(u16, f64); 6] = [
        (0x3C00, 1.0),
        (0xC000, -2.0),
        (0x3555, 0.333_251_953_125),
        (0x7BFF, 65504.0),
        (0x0001, 5.960_464_477_539_063e-8), // smallest subnormal, 2^-24
        (0x0400, 6.103_515_625e-5),         // smallest normal, 2^-14
    ];
    for (bits, expected) in cases {
        let [lo, hi] = bits.to_le_bytes();
        assert_eq!(ok(&[0xCF, lo, hi]).as_f64(), Some(expected), "{bits:#06x}");
    }
    assert!(ok(&[0xCF, 0x00, 0x80]).as_f64().unwrap().is_sign_negative());
    // As the item type of a uniform array.
    assert_eq!(ok(&[0xF0, 0xCF, 0x02, 0x00, 0x3C, 0x00, 0xC0]), json!([1.0, -2.0]));
}

#[test]
fn uniform_arrays_with_two_byte_counts() {
    let mut value = vec![0xF1, 0xD7];
    value.extend_from_slice(&300u16.to_le_bytes());
    value.extend((0..300).map(|i| (i % 256) as u8));
    let expected: Vec<u64> = (0..300).map(|i| i % 256).collect();
    assert_eq!(ok(&value), json!(expected));
}

#[test]
fn uniform_array_of_empty_arrays() {
    assert_eq!(ok(&[0xF2, 0xF0, 0xDA, 0x00, 0x02]), json!([[], []]));
    assert_eq!(ok(&[0xF2, 0xF0, 0xDA, 0x00, 0x00]), json!([]));
}

#[test]
fn references_to_every_plain_form() {
    // {"id": <80-byte text>, "x": <ref to "id">, "y": <ref to the text>}
    let long = "é".repeat(40); // 80 bytes: too long for the inline form
    let mut contents = vec![0x2C, 0xC0, 80];
    contents.extend_from_slice(long.as_bytes());
    contents.extend([0x81, b'x', 0xC3, 0x03]); // "x": ref -> "id" at offset 3
    contents.extend([0x81, b'y', 0xC3, 0x04]); // "y": ref -> the StrL1 at offset 4
    let mut value = vec![0xEA, contents.len() as u8];
    value.extend_from_slice(&contents);
    assert_eq!(ok(&value), json!({"id": long, "x": "id", "y": long}));
}

#[test]
fn reference_as_object_key() {
    // [{"name1": 1}, {<ref "name1">: 2}] with a 2-byte offset reference.
    let value = [
        0xE2, 0x0E, // ArrL1, 14 bytes
        0xE9, 0x85, b'n', b'a', b'm', b'e', b'1', 0x01, // offsets 3..=10
        0xE9, 0xC4, 0x04, 0x00, 0x02, // key = StrR2 -> offset 4
        0xD0, // null
    ];
    assert_eq!(ok(&value), json!([{"name1": 1}, {"name1": 2}, null]));
}

#[test]
fn reference_with_three_byte_offset() {
    // A 70000-byte array: "abc" at offset 6, nulls, then StrR3 -> 6.
    let mut contents = vec![0x83, b'a', b'b', b'c'];
    contents.extend(std::iter::repeat_n(0xD0, 70_000));
    contents.extend([0xC5, 0x06, 0x00, 0x00]);
    let mut value = vec![0xE4];
    value.extend_from_slice(&(contents.len() as u32).to_le_bytes());
    value.extend_from_slice(&contents);
    let decoded = ok(&value);
    let items = decoded.as_array().unwrap();
    assert_eq!(items.len(), 70_002);
    assert_eq!(items[0], json!("abc"));
    assert_eq!(items[70_001], json!("abc"));
}

#[test]
fn base64_variants() {
    // URL-safe alphabet with a 2-byte group count.
    assert_eq!(ok(&[0x74, 0x01, 0x00, 0x00, 0xFB, 0xFF, 0xFE]), json!("-__-"));
    // Padding omitted: one '=' would have been needed.
    assert_eq!(ok(&[0x71, 0x01, 0xFE, 0x66, 0x6F]), json!("Zm8"));
    // 0xFF: "omitted" padding of zero characters.
    assert_eq!(ok(&[0x71, 0x01, 0xFF, 0x66, 0x6F, 0x6F]), json!("Zm9v"));
    assert_eq!(ok(&[0x71, 0x00, 0x00]), json!(""));
}

#[test]
fn guid_forms() {
    let bytes: Vec<u8> = (0x10..0x20).collect();
    let mut guid_value = vec![0xD3];
    guid_value.extend_from_slice(&bytes);
    assert_eq!(ok(&guid_value), json!("13121110-1514-1716-1819-1a1b1c1d1e1f"));
    let mut upper = vec![0x76];
    upper.extend_from_slice(&[0xBA; 16]);
    assert_eq!(ok(&upper), json!("ABABABAB-ABAB-ABAB-ABAB-ABABABABABAB"));
}

#[test]
fn four_bit_table_strings() {
    // "2024-01-02T03:04:05.6Z" in the date-time set.
    let text = "2024-01-02T03:04:05.6Z";
    let set = b" 0123456789:-.TZ";
    let codes: Vec<u8> = text.bytes().map(|c| set.iter().position(|&s| s == c).unwrap() as u8).collect();
    let mut value = vec![0x7A, text.len() as u8];
    value.extend(pack(&codes, 4));
    assert_eq!(ok(&value), json!(text));
    assert_eq!(ok(&[0x79, 0x00]), json!(""));
}

#[test]
fn packed_strings_of_every_width() {
    let text = "the quick brown fox jumps over the lazy dog, 0123456789!";
    let min = text.bytes().min().unwrap();
    for (marker, bits) in [(0x7Cu8, 5usize), (0x7D, 6)] {
        let sample: String = text.chars().filter(|&c| (c as u8) < min + (1 << bits)).collect();
        let codes: Vec<u8> = sample.bytes().map(|c| c - min).collect();
        let mut value = vec![marker, sample.len() as u8, min];
        value.extend(pack(&codes, bits));
        assert_eq!(ok(&value), json!(sample), "{bits}-bit");
    }
    let hex = "deadbeef";
    let codes: Vec<u8> = hex.bytes().map(|c| c - b'a').collect();
    let mut four = vec![0x7B, hex.len() as u8, b'a'];
    four.extend(pack(&codes, 4));
    assert_eq!(ok(&four), json!(hex));

    let long = text.repeat(10); // 560 characters: needs the 2-byte length
    let mut seven = vec![0x7F];
    seven.extend_from_slice(&(long.len() as u16).to_le_bytes());
    seven.extend(pack(long.as_bytes(), 7));
    assert_eq!(ok(&seven), json!(long));
}

#[test]
fn wide_containers() {
    // 300 literal ints in an ArrLC2 and an ArrL4.
    let items: Vec<u8> = (0..300).map(|i| (i % 32) as u8).collect();
    let expected: Vec<u64> = (0..300).map(|i| i % 32).collect();
    let mut lc2 = vec![0xE6];
    lc2.extend_from_slice(&300u16.to_le_bytes());
    lc2.extend_from_slice(&300u16.to_le_bytes());
    lc2.extend_from_slice(&items);
    assert_eq!(ok(&lc2), json!(expected));
    let mut l4 = vec![0xE4];
    l4.extend_from_slice(&300u32.to_le_bytes());
    l4.extend_from_slice(&items);
    assert_eq!(ok(&l4), json!(expected));
    // Empty sized containers.
    assert_eq!(ok(&[0xE5, 0x00, 0x00]), json!([]));
    assert_eq!(ok(&[0xEF, 0, 0, 0, 0, 0, 0, 0, 0]), json!({}));
}

#[test]
fn repeated_keys_keep_first_position_and_last_value() {
    // {"id": 1, "type": 2, "id": 3}
    let value = [0xEA, 0x06, 0x2C, 0x01, 0x3B, 0x02, 0x2C, 0x03];
    let decoded = ok(&value);
    assert_eq!(decoded, json!({"id": 3, "type": 2}));
    let keys: Vec<&String> = decoded.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["id", "type"]);
}

#[test]
fn binary_blobs_become_base64() {
    assert_eq!(ok(&[0xDE, 0x00, 0x00]), json!(""));
    assert_eq!(ok(&[0xDD, 0x02, 0xFF, 0xEF]), json!("/+8="));
}

#[test]
fn a_typical_document() {
    // {"id":"doc-1","_etag":<quoted guid>,"n":42,"tags":["a","b"],"pk":null}
    let mut contents = vec![0x2C, 0x85];
    contents.extend_from_slice(b"doc-1");
    contents.push(0x24); // "_etag"
    contents.push(0x77);
    contents.extend_from_slice(&[0x00; 16]);
    contents.extend([0x81, b'n', 0xC8, 42]);
    contents.extend([0x84, b't', b'a', b'g', b's', 0xE5, 0x04, 0x02, 0x81, b'a', 0x81, b'b']);
    contents.extend([0x82, b'p', b'k', 0xD0]);
    let mut value = vec![0xED, contents.len() as u8, 0x05];
    value.extend_from_slice(&contents);
    assert_eq!(
        ok(&value),
        json!({
            "id": "doc-1",
            "_etag": "\"00000000-0000-0000-0000-000000000000\"",
            "n": 42,
            "tags": ["a", "b"],
            "pk": null
        })
    );
}
