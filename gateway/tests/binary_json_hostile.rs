//! Hand-made hostile bodies: each must be an error, never a panic. Bodies that
//! announce huge sizes must be refused from the announcement alone, before
//! anything is allocated for them.

use cosmoql_gateway::binary_json::{decode, ErrorKind, MAX_DEPTH};
use serde_json::json;

/// Decodes `body`, which must fail, and returns the error.
fn decode_err(body: &[u8]) -> cosmoql_gateway::binary_json::DecodeError {
    match decode(body) {
        Ok(value) => panic!("decoded {value} from a hostile body"),
        Err(err) => err,
    }
}

/// Expects an error of the given kind.
fn assert_rejected(body: &[u8], kind: ErrorKind) {
    let err = decode_err(body);
    assert_eq!(err.kind(), &kind, "{err}");
}

fn body(value: &[u8]) -> Vec<u8> {
    let mut out = vec![0x80];
    out.extend_from_slice(value);
    out
}

fn truncated(needed: usize, available: usize) -> ErrorKind {
    ErrorKind::Truncated { needed, available }
}

// ----- huge declared lengths and counts ---------------------------------------

#[test]
fn huge_string_lengths() {
    assert_rejected(&body(&[0xC2, 0xFF, 0xFF, 0xFF, 0xFF, b'a']), truncated(0xFFFF_FFFF, 1));
    assert_rejected(&body(&[0xC1, 0xFF, 0xFF]), truncated(0xFFFF, 0));
    assert_rejected(&body(&[0xBF, b'a', b'b']), truncated(63, 2));
}

#[test]
fn huge_container_lengths_and_counts() {
    // ArrL4 / ObjL4 claiming 4 GiB of contents.
    assert_rejected(&body(&[0xE4, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]), truncated(0xFFFF_FFFF, 1));
    assert_rejected(&body(&[0xEC, 0xFF, 0xFF, 0xFF, 0xFF, 0x2C, 0x00]), truncated(0xFFFF_FFFF, 2));
    // ArrLC4 / ObjLC4 whose count cannot fit in their length: refused before
    // any capacity is reserved for it.
    let count_too_big = ErrorKind::Malformed("element count exceeds what the length can hold");
    assert_rejected(&body(&[0xE7, 0x01, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]), count_too_big.clone());
    assert_rejected(&body(&[0xEF, 0x02, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0x0F, 0x2C, 0x00]), count_too_big);
    // Both huge: the length is checked against the bytes left.
    assert_rejected(&body(&[0xE7, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]), truncated(0xFFFF_FFFF, 0));
}

#[test]
fn huge_blobs_and_encoded_strings() {
    assert_rejected(&body(&[0xDF, 0xFF, 0xFF, 0xFF, 0xFF]), truncated(0xFFFF_FFFF, 0));
    // Base64 with 65535 groups: 196605 decoded bytes announced.
    assert_rejected(&body(&[0x72, 0xFF, 0xFF, 0x00]), truncated(196_605, 0));
    // 7-bit packed string of 65535 characters.
    assert_rejected(&body(&[0x7F, 0xFF, 0xFF, 0x41]), truncated(57_344, 1));
}

#[test]
fn huge_uniform_arrays() {
    // 65535 int64 items announced, one byte present.
    assert_rejected(&body(&[0xF1, 0xDB, 0xFF, 0xFF, 0x01]), truncated(65535 * 8, 1));
    // 65535 arrays of 65535 float64 items.
    assert_rejected(&body(&[0xF3, 0xF1, 0xCE, 0xFF, 0xFF, 0xFF, 0xFF]), truncated(65535 * 65535 * 8, 0));
    // 65535 empty inner arrays from a 9-byte body.
    assert_rejected(
        &body(&[0xF3, 0xF1, 0xDA, 0x00, 0x00, 0xFF, 0xFF]),
        ErrorKind::Malformed("more empty arrays than the input can justify"),
    );
}

// ----- nesting ------------------------------------------------------------------

fn nested_single_arrays(levels: usize) -> Vec<u8> {
    let mut out = vec![0x80];
    out.extend(std::iter::repeat_n(0xE1, levels));
    out.push(0x07);
    out
}

#[test]
fn nesting_up_to_the_limit_decodes() {
    let mut expected = json!(7);
    for _ in 0..MAX_DEPTH {
        expected = json!([expected]);
    }
    assert_eq!(decode(&nested_single_arrays(MAX_DEPTH)).unwrap(), expected);
}

#[test]
fn nesting_past_the_limit_is_an_error() {
    let err = decode(&nested_single_arrays(MAX_DEPTH + 1)).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TooDeep { limit: MAX_DEPTH });
    assert_eq!(err.offset(), 1 + MAX_DEPTH);
}

#[test]
fn very_deep_nesting_does_not_overflow_the_stack() {
    assert_rejected(&nested_single_arrays(1_000_000), ErrorKind::TooDeep { limit: MAX_DEPTH });

    // {"id": {"id": {...}}} a thousand levels deep.
    let mut objects = vec![0x80];
    for _ in 0..1000 {
        objects.extend([0xE9, 0x2C]);
    }
    objects.push(0xD0);
    assert_rejected(&objects, ErrorKind::TooDeep { limit: MAX_DEPTH });

    // Length-framed arrays nest too: ArrL2 inside ArrL2, 300 deep.
    let mut inner = vec![0x00];
    for _ in 0..300 {
        let mut outer = vec![0xE3];
        outer.extend_from_slice(&(inner.len() as u16).to_le_bytes());
        outer.extend_from_slice(&inner);
        inner = outer;
    }
    assert_rejected(&body(&inner), ErrorKind::TooDeep { limit: MAX_DEPTH });
}

#[test]
fn uniform_arrays_count_towards_depth() {
    let mut at_limit = vec![0x80];
    at_limit.extend(std::iter::repeat_n(0xE1, MAX_DEPTH - 1));
    at_limit.extend([0xF0, 0xD7, 0x01, 0x05]);
    assert!(decode(&at_limit).is_ok());

    let mut past = vec![0x80];
    past.extend(std::iter::repeat_n(0xE1, MAX_DEPTH - 1));
    past.extend([0xF2, 0xF0, 0xD7, 0x01, 0x01, 0x05]);
    assert_eq!(decode(&past).unwrap_err().kind(), &ErrorKind::TooDeep { limit: MAX_DEPTH });
}

// ----- string references ----------------------------------------------------------

fn bad_reference(target: usize, reason: &'static str) -> ErrorKind {
    ErrorKind::BadReference { target, reason }
}

#[test]
fn reference_to_itself() {
    // [<ref to offset 3>] where offset 3 is the reference itself.
    assert_rejected(&body(&[0xE2, 0x02, 0xC3, 0x03]), bad_reference(3, "does not point back to an earlier string"));
    // A lone top-level reference to itself.
    assert_rejected(&body(&[0xC3, 0x01]), bad_reference(1, "does not point back to an earlier string"));
}

#[test]
fn reference_to_another_reference() {
    // ["hi", ref->"hi", ref->ref]
    assert_rejected(
        &body(&[0xE2, 0x07, 0x82, b'h', b'i', 0xC3, 0x03, 0xC3, 0x06]),
        bad_reference(6, "points at another reference"),
    );
}

#[test]
fn reference_outside_the_buffer() {
    assert_rejected(&body(&[0xC3, 0xC8]), bad_reference(200, "points outside the document"));
    assert_rejected(&body(&[0xC6, 0xFF, 0xFF, 0xFF, 0xFF]), bad_reference(0xFFFF_FFFF, "points outside the document"));
}

#[test]
fn reference_forwards() {
    // [ref->offset 5, "hi"]: the target exists but comes later.
    assert_rejected(
        &body(&[0xE2, 0x05, 0xC3, 0x05, 0x82, b'h', b'i']),
        bad_reference(5, "does not point back to an earlier string"),
    );
}

#[test]
fn reference_to_something_that_is_not_a_plain_string() {
    let not_a_string = "does not point at the start of an earlier plain string";
    // [5, ref->the literal 5]
    assert_rejected(&body(&[0xE2, 0x03, 0x05, 0xC3, 0x03]), bad_reference(3, not_a_string));
    // ["a,b", ref->the ',' inside it (0x2C is also the marker of "id")]
    assert_rejected(&body(&[0xE2, 0x06, 0x83, b'a', 0x2C, b'b', 0xC3, 0x05]), bad_reference(5, not_a_string));
    // [<hex string>, ref->it]: compressed strings are not reference targets.
    assert_rejected(&body(&[0xE2, 0x05, 0x78, 0x02, 0xA1, 0xC3, 0x03]), bad_reference(3, not_a_string));
    // Pointing at the preamble.
    assert_rejected(&body(&[0xE2, 0x02, 0xC3, 0x00]), bad_reference(0, not_a_string));
}

#[test]
fn reference_expansion_is_capped() {
    // One 60 KiB string followed by references to it: with 16x the input
    // (or 16 MiB, whichever is larger) as the cap, a body of about 1 MiB
    // that would expand to ~20 GiB must be refused.
    let text_len = 60 * 1024;
    let refs = 350_000;
    let mut contents = vec![0xC1];
    contents.extend_from_slice(&(text_len as u16).to_le_bytes());
    contents.extend(std::iter::repeat_n(b'x', text_len));
    for _ in 0..refs {
        contents.extend([0xC4, 0x06, 0x00]); // StrR2 -> offset 6
    }
    let mut body = vec![0x80, 0xE4];
    body.extend_from_slice(&(contents.len() as u32).to_le_bytes());
    body.extend_from_slice(&contents);
    assert_eq!(body[6], 0xC1, "the string starts at offset 6");

    let err = decode(&body).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::ReferenceExpansion { limit } if *limit == 16 * body.len()), "{err}");
}

// ----- trailing bytes, markers, structure --------------------------------------------

#[test]
fn trailing_garbage() {
    assert_rejected(&body(&[0xD0, 0xFF, 0xFF]), ErrorKind::TrailingBytes { count: 2 });
    assert_rejected(&body(&[0xE0, 0x00]), ErrorKind::TrailingBytes { count: 1 });
    // A complete document followed by a second preamble and document.
    assert_rejected(&[0x80, 0x01, 0x80, 0x01], ErrorKind::TrailingBytes { count: 2 });
}

#[test]
fn empty_and_missing_preamble() {
    assert_rejected(&[], ErrorKind::Empty);
    assert_rejected(&[0x80], truncated(1, 0));
    assert_rejected(b"{\"id\":\"1\"}", ErrorKind::MissingPreamble { found: b'{' });
}

#[test]
fn unknown_markers() {
    let unknown: Vec<u8> = (0x68..=0x70).chain(0xD4..=0xD6).chain(0xF4..=0xFF).collect();
    for marker in unknown {
        let err = decode_err(&body(&[marker]));
        assert_eq!(err.kind(), &ErrorKind::UnknownMarker { marker });
        assert_eq!(err.offset(), 1);
    }
}

#[test]
fn user_strings_are_refused() {
    assert_rejected(&body(&[0x40]), ErrorKind::UserString { id: 0 });
    assert_rejected(&body(&[0x5F]), ErrorKind::UserString { id: 31 });
    assert_rejected(&body(&[0x61, 0x05]), ErrorKind::UserString { id: 32 + 5 + 256 });
    // As an object key.
    assert_rejected(&body(&[0xE9, 0x41, 0x01]), ErrorKind::UserString { id: 1 });
}

#[test]
fn child_cannot_spill_out_of_its_container() {
    // ArrL1 of one byte whose single element is a 3-byte int16.
    assert_rejected(&body(&[0xE2, 0x01, 0xC9, 0x05, 0x00]), truncated(2, 0));
    // ObjL1 whose length ends between a name and its value.
    assert_rejected(&body(&[0xEA, 0x01, 0x2C, 0x05]), truncated(1, 0));
}

#[test]
fn declared_count_must_match() {
    assert_rejected(&body(&[0xE5, 0x02, 0x01, 0x00, 0x01]), ErrorKind::CountMismatch { declared: 1, found: 2 });
    assert_rejected(
        &body(&[0xED, 0x04, 0x01, 0x2C, 0x00, 0x3B, 0x01]),
        ErrorKind::CountMismatch { declared: 1, found: 2 },
    );
}

#[test]
fn object_keys_must_be_strings() {
    assert_rejected(&body(&[0xE9, 0x01, 0x02]), ErrorKind::ExpectedString { marker: 0x01 });
    assert_rejected(&body(&[0xE9, 0xE0, 0x02]), ErrorKind::ExpectedString { marker: 0xE0 });
    assert_rejected(&body(&[0xE9, 0xFF, 0x02]), ErrorKind::UnknownMarker { marker: 0xFF });
}

#[test]
fn invalid_text() {
    assert_rejected(&body(&[0x82, 0xC3, 0x28]), ErrorKind::InvalidText);
    assert_rejected(&body(&[0xC0, 0x01, 0xFF]), ErrorKind::InvalidText);
    // 4-bit packed string whose base character pushes codes past ASCII.
    assert_rejected(&body(&[0x7B, 0x02, 0x78, 0xFF]), ErrorKind::InvalidText);
}

#[test]
fn non_finite_numbers() {
    let mut nan = vec![0xCC];
    nan.extend_from_slice(&f64::NAN.to_le_bytes());
    assert_rejected(&body(&nan), ErrorKind::NonFiniteNumber);
    let mut inf32 = vec![0xCD];
    inf32.extend_from_slice(&f32::INFINITY.to_le_bytes());
    assert_rejected(&body(&inf32), ErrorKind::NonFiniteNumber);
    assert_rejected(&body(&[0xCF, 0x00, 0x7C]), ErrorKind::NonFiniteNumber);
    assert_rejected(&body(&[0xF0, 0xCF, 0x02, 0x00, 0x3C, 0x01, 0xFE]), ErrorKind::NonFiniteNumber);
}

#[test]
fn malformed_encoded_strings() {
    assert_rejected(&body(&[0x71, 0x01, 0x07, 0x41]), ErrorKind::Malformed("base64 padding byte out of range"));
    assert_rejected(&body(&[0x71, 0x00, 0x01]), ErrorKind::Malformed("base64 padding longer than the text"));
    assert_rejected(&body(&[0x78, 0x01, 0x1F]), ErrorKind::Malformed("unused nibble of a 4-bit string is not zero"));
}

#[test]
fn malformed_uniform_arrays() {
    let not_a_sized_number = ErrorKind::Malformed("uniform array item type is not a sized number marker");
    assert_rejected(&body(&[0xF0, 0xD0, 0x01, 0x00]), not_a_sized_number.clone());
    assert_rejected(&body(&[0xF0, 0xC8, 0x01, 0x00]), not_a_sized_number);
    assert_rejected(
        &body(&[0xF2, 0xF1, 0xDA, 0x00, 0x01]),
        ErrorKind::Malformed("array of uniform arrays has the wrong inner array marker"),
    );
}

#[test]
fn nesting_does_not_consume_call_stack() {
    // The walk keeps open containers on the heap, so even a maximally deep
    // document decodes on a thread with a tiny stack. (The result is leaked
    // rather than dropped: dropping a nested `Value` recurses in serde_json.)
    let mut objects = vec![0x80];
    for _ in 0..MAX_DEPTH {
        objects.extend([0xE9, 0x2C]);
    }
    objects.push(0xD0);
    let arrays = {
        let mut out = vec![0x80];
        out.extend(std::iter::repeat_n(0xE1, MAX_DEPTH));
        out.push(0x07);
        out
    };
    std::thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn(move || {
            std::mem::forget(decode(&objects).expect("deep objects"));
            std::mem::forget(decode(&arrays).expect("deep arrays"));
        })
        .expect("spawn")
        .join()
        .expect("decoded on a 64 KiB stack");
}
