use super::PartitionKeyComponent as C;
use super::*;

fn hex(s: &str) -> Epk {
    Epk::from_hex(s).unwrap()
}

fn v2(c: &[C]) -> String {
    effective_partition_key(c, PartitionKeyKind::Hash, HashVersion::V2).unwrap().to_hex()
}

fn v1(c: &[C]) -> String {
    effective_partition_key(c, PartitionKeyKind::Hash, HashVersion::V1).unwrap().to_hex()
}

#[test]
fn string_hashes_are_the_epks_of_string_keys() {
    let epk = |c: &[C], kind| effective_partition_key(c, kind, HashVersion::V2).unwrap();
    let number = |e: &Epk| u128::from_be_bytes(e.as_bytes()[..16].try_into().unwrap());
    for text in ["", "redmond", "a-b", "日本語", &"x".repeat(300)] {
        let whole = epk(&[C::String(text.to_string())], PartitionKeyKind::Hash);
        assert_eq!(string_hash_v2(&[text]), number(&whole), "{text}");
    }
    assert_eq!(string_hash_v2(&["dev-1", "-", "2026"]), string_hash_v2(&["dev-1-2026"]));
    let levels = epk(&[C::String("t".into()), C::Undefined], PartitionKeyKind::MultiHash);
    assert_eq!(string_hash_v2(&["t"]), number(&levels));
    assert_eq!(undefined_hash_v2(), u128::from_be_bytes(levels.as_bytes()[16..32].try_into().unwrap()));
    for c in [C::Number(5.0), C::Number(-0.0), C::Number(0.1), C::Bool(true), C::Bool(false), C::Null] {
        let whole = epk(std::slice::from_ref(&c), PartitionKeyKind::Hash);
        assert_eq!(component_hash_v2(&c), number(&whole), "{c:?}");
    }
    assert_ne!(component_hash_v2(&C::Number(5.0)), string_hash_v2(&["5"]), "a number is not its text");
}

#[test]
fn ordering_ignores_trailing_zeros() {
    assert_eq!(hex("80"), hex("8000"));
    assert_eq!(hex(""), hex("00"));
    assert_eq!(hex(""), Epk::min());
    assert!(hex("80") < hex("8001"));
    assert!(hex("1631") < hex("1631FF"));
    assert!(hex("3F") < Epk::max());
    assert!(hex("FEFFFFFF") < Epk::max());
    assert!(hex("00") < hex("0001"));
    assert!(hex("05C1") > hex("05"));
    assert_eq!(hex("4080").cmp(&hex("40800000")), Ordering::Equal);
    let hash = |e: &Epk| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        e.hash(&mut h);
        h.finish()
    };
    assert_eq!(hash(&hex("80")), hash(&hex("800000")));
    assert_eq!(hash(&hex("")), hash(&hex("0000")));
    let mut v = [hex("81"), hex("8000"), hex(""), hex("7FFF"), hex("80FF")];
    v.sort();
    let sorted: Vec<String> = v.iter().map(Epk::to_hex).collect();
    assert_eq!(sorted, ["", "7FFF", "8000", "80FF", "81"]);
    // Compared eight bytes at a time: the order of the trimmed bytes, at every length and
    // position (zeros and FFs where the words meet).
    let mut seed = 11u64;
    let mut next = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    let mut epks = Vec::new();
    for _ in 0..400 {
        // Up to 60 bytes: inline (at most 48) and on the heap, each against both.
        let len = next() % 60;
        let bytes: Vec<u8> = (0..len).map(|_| [0x00, 0x01, 0x7F, 0x80, 0xFF][next() % 5]).collect();
        epks.push(Epk::from_bytes(&bytes));
    }
    for a in &epks {
        for b in epks.iter().take(60) {
            assert_eq!(a.cmp(b), a.significant_bytes().cmp(b.significant_bytes()), "{a} {b}");
            assert_eq!(a.cmp(b) == Ordering::Equal, a == b, "{a} {b}");
        }
    }
}

#[test]
fn hex_round_trip() {
    for s in ["", "00", "FF", "05C1CF33970FF80800", "22E342F38A486A088463DFF7838A5963"] {
        assert_eq!(hex(s).to_hex(), s);
        assert_eq!(hex(s).to_string(), s);
    }
    assert_eq!(hex("abcdef").to_hex(), "ABCDEF");
    let long = "0123456789ABCDEF".repeat(20);
    assert_eq!(hex(&long).to_hex(), long);
    assert_eq!(hex(&long).as_bytes().len(), 160);
    assert_eq!(format!("{:?}", hex("0A")), "Epk(\"0A\")");
    assert_eq!("8000".parse::<Epk>().unwrap().as_bytes(), [0x80, 0]);
    assert_eq!(Epk::max().to_hex(), "FF");
    assert_eq!(Epk::min().to_hex(), "");
}

#[test]
fn bad_hex_is_an_error() {
    assert_eq!(Epk::from_hex("ABC").unwrap_err().kind(), &EpkErrorKind::OddHexLength(3));
    assert_eq!(Epk::from_hex("0G").unwrap_err().kind(), &EpkErrorKind::InvalidHexDigit(1));
    assert_eq!(Epk::from_hex("00 1").unwrap_err().kind(), &EpkErrorKind::InvalidHexDigit(2));
    assert!(Epk::from_hex("é0").is_err());
    assert!(Epk::from_hex("0x").unwrap_err().to_string().contains("hex digit"));
}

#[test]
fn successor() {
    assert_eq!(hex("3AFF").successor().to_hex(), "3B00");
    assert_eq!(hex("").successor().to_hex(), "00");
    assert_eq!(hex("").successor_padded(2).to_hex(), "0001");
    assert_eq!(hex("3A").successor_padded(16).to_hex(), "3A000000000000000000000000000001");
    assert_eq!(hex("FF").successor().to_hex(), "FF01");
    assert!(hex("FFFF").successor() > hex("FFFF"));
    assert_eq!(hex("01FFFF").successor_padded(2).to_hex(), "020000");
}

#[test]
fn known_hashes() {
    assert_eq!(v2(&[C::String("redmond".into())]), "22E342F38A486A088463DFF7838A5963");
    assert_eq!(v1(&[C::String("partitionKey".into())]), "05C1E1B3D9CD2608716273756A756A706F4C667A00");
    assert_eq!(v1(&[C::Number(-128.0)]), "05C1D73349F54C053FA0");
    assert_eq!(v1(&[C::Number(127.0)]), "05C1DD539DDFCC05C05FE0");
    assert_eq!(v2(&[]), "");
    assert_eq!(v1(&[]), "");
}

#[test]
fn binary_number_encoding() {
    let enc = |x: f64| {
        let mut e = Epk::min();
        binary_number(&mut e, x);
        e.to_hex()
    };
    assert_eq!(enc(0.0), "058000");
    assert_eq!(enc(-128.0), "053FA0");
    assert_eq!(enc(127.0), "05C05FE0");
    // Order-preserving.
    let xs = [f64::MIN, -1e10, -1.5, -1.0, -5e-324, 0.0, 5e-324, 1.0, 1.5, 1e10, f64::MAX];
    for w in xs.windows(2) {
        assert!(hex(&enc(w[0])) < hex(&enc(w[1])), "{} < {}", w[0], w[1]);
    }
}

#[test]
fn negative_zero_is_normalized_but_verbatim_keeps_the_sign() {
    let neg = [C::Number(-0.0)];
    let pos = [C::Number(0.0)];
    for version in [HashVersion::V1, HashVersion::V2] {
        let a = effective_partition_key(&neg, PartitionKeyKind::Hash, version).unwrap();
        let b = effective_partition_key(&pos, PartitionKeyKind::Hash, version).unwrap();
        assert_eq!(a.to_hex(), b.to_hex());
    }
    let raw = |v| effective_partition_key_verbatim(&neg, PartitionKeyKind::Hash, v).unwrap().to_hex();
    assert_eq!(raw(HashVersion::V2), "3D018BB1DF3DB27235766E81FD10406E");
    assert_eq!(raw(HashVersion::V1), "05C1E703ED99A0058000");
}

#[test]
fn error_cases() {
    for (x, which) in [
        (f64::NAN, NonFinite::NaN),
        (f64::INFINITY, NonFinite::Infinity),
        (f64::NEG_INFINITY, NonFinite::NegativeInfinity),
    ] {
        for version in [HashVersion::V1, HashVersion::V2] {
            let err = effective_partition_key(&[C::Number(x)], PartitionKeyKind::Hash, version).unwrap_err();
            assert_eq!(err.kind(), &EpkErrorKind::NonFiniteNumber(which));
            assert!(err.to_string().contains("finite"), "{err}");
        }
        let err = effective_partition_key(
            &[C::String("a".into()), C::Number(x)],
            PartitionKeyKind::MultiHash,
            HashVersion::V2,
        )
        .unwrap_err();
        assert_eq!(err.kind(), &EpkErrorKind::NonFiniteNumber(which));
    }
    let four = vec![C::Null; 4];
    let err = effective_partition_key(&four, PartitionKeyKind::MultiHash, HashVersion::V2).unwrap_err();
    assert_eq!(err.kind(), &EpkErrorKind::TooManyComponents { count: 4, max: 3 });
    assert!(effective_partition_key(&four, PartitionKeyKind::Hash, HashVersion::V2).is_ok());
    let err = effective_partition_key(&[C::Null], PartitionKeyKind::MultiHash, HashVersion::V1).unwrap_err();
    assert_eq!(err.kind(), &EpkErrorKind::MultiHashRequiresV2);
    assert!(effective_partition_key_verbatim(&[C::Null], PartitionKeyKind::MultiHash, HashVersion::V1).is_err());

    let one = [C::Null];
    assert_eq!(prefix_range(&one, 0, HashVersion::V2).unwrap_err().kind(), &EpkErrorKind::InvalidPathCount(0));
    assert_eq!(prefix_range(&one, 4, HashVersion::V2).unwrap_err().kind(), &EpkErrorKind::InvalidPathCount(4));
    assert_eq!(
        prefix_range(&[C::Null, C::Null], 1, HashVersion::V2).unwrap_err().kind(),
        &EpkErrorKind::PrefixLongerThanPaths { components: 2, paths: 1 }
    );
    assert_eq!(prefix_range(&one, 2, HashVersion::V1).unwrap_err().kind(), &EpkErrorKind::V1PrefixRange);
    assert_eq!(prefix_range(&[], 1, HashVersion::V1).unwrap_err().kind(), &EpkErrorKind::V1PrefixRange);

    let json = serde_json::json!([1, "a", true, null, {}, []]);
    let parsed: Vec<_> = json.as_array().unwrap().iter().map(C::try_from).collect();
    assert_eq!(parsed[0], Ok(C::Number(1.0)));
    assert_eq!(parsed[3], Ok(C::Null));
    assert_eq!(parsed[4].as_ref().unwrap_err().kind(), &EpkErrorKind::UnsupportedValue("object"));
    assert_eq!(parsed[5].as_ref().unwrap_err().kind(), &EpkErrorKind::UnsupportedValue("array"));
}

#[test]
fn prefix_ranges() {
    let full = [C::String("a".into()), C::Number(1.0)];
    let (s, e) = prefix_range(&full[..1], 2, HashVersion::V2).unwrap();
    assert_eq!(e.to_hex(), format!("{}FF", s.to_hex()));
    let (ps, pe) = prefix_range(&full, 2, HashVersion::V2).unwrap();
    assert!(s <= ps && pe <= e);
    assert_eq!(pe, ps.successor());
    let (s, e) = prefix_range(&[], 3, HashVersion::V2).unwrap();
    assert_eq!((s, e), (Epk::min(), Epk::max()));
    let (s, e) = prefix_range(&[C::Bool(true)], 1, HashVersion::V1).unwrap();
    assert_eq!(e, s.successor());
}

#[test]
fn split_space_boundaries() {
    assert_eq!(split_space(1), vec![Epk::min(), Epk::max()]);
    assert_eq!(split_space(0), vec![Epk::min(), Epk::max()]);
    let b: Vec<String> = split_space(4).iter().map(Epk::to_hex).collect();
    assert_eq!(b[0], "");
    assert_eq!(b[2], "20000000000000000000000000000000");
    assert_eq!(b[4], "FF");
    let many = split_space(1000);
    assert!(many.windows(2).all(|w| w[0] < w[1]));
    assert!(many[999] < hex("40"));
}

#[test]
fn inline_and_heap_representations_agree() {
    let long = "x".repeat(90);
    let e = effective_partition_key(&[C::String(long)], PartitionKeyKind::Hash, HashVersion::V1).unwrap();
    assert!(e.as_bytes().len() > INLINE);
    assert_eq!(Epk::from_hex(&e.to_hex()).unwrap(), e);
    let mut padded = e.to_hex();
    padded.push_str("0000");
    assert_eq!(hex(&padded), e);
    let three = [C::Null, C::Bool(false), C::Number(2.5)];
    let e = effective_partition_key(&three, PartitionKeyKind::MultiHash, HashVersion::V2).unwrap();
    assert_eq!(e.as_bytes().len(), INLINE);
    assert!(matches!(e.0, Repr::Inline { .. }));
}
