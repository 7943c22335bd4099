//! Golden EPK vectors (`tests/data/epk/`, copied from `shared/conformance/epk/`; see its README).
//!
//! How the vectors whose notes flag them are checked:
//!
//! * NaN / ±Infinity ("not a legal partition key value ... hash-only vector"): the service rejects
//!   them with 400, so [`effective_partition_key`] must return `NonFiniteNumber`; the hash itself
//!   is checked through [`effective_partition_key_verbatim`], which hashes the bit pattern as is.
//! * `-0`: cosmoql follows the Rust SDK and normalizes `-0` to `+0`, so
//!   [`effective_partition_key`] must give the EPK of `0` (which differs from the vector, taken
//!   from the .NET baseline that hashes the sign bit); the vector's EPK is checked through
//!   [`effective_partition_key_verbatim`].
//! * `v2-multihash-076` has 4 MultiHash components (an SDK unit test that only checks the
//!   length); the service allows at most 3 paths, so [`effective_partition_key`] must return
//!   `TooManyComponents`, and the verbatim hash must match.
//!
//! Every other vector must match both functions.

use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use cosmoql_catalog::epk::{
    effective_partition_key, effective_partition_key_verbatim, prefix_range, split_space, Epk, EpkErrorKind,
    HashVersion, PartitionKeyComponent, PartitionKeyKind,
};
use serde_json::Value;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/epk")
}

fn load(name: &str) -> Value {
    let path = data_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn component(v: &Value) -> PartitionKeyComponent {
    if let Some(obj) = v.as_object() {
        if obj.get("$undefined") == Some(&Value::Bool(true)) {
            return PartitionKeyComponent::Undefined;
        }
        if let Some(n) = obj.get("$number").and_then(Value::as_str) {
            let x = match n {
                // The baselines come from .NET, whose `double.NaN` has the sign bit set
                // (0xFFF8000000000000); Rust's `f64::NAN` is 0x7FF8000000000000.
                "NaN" => f64::from_bits(0xFFF8_0000_0000_0000),
                "Infinity" => f64::INFINITY,
                "-Infinity" => f64::NEG_INFINITY,
                "-0" => -0.0,
                other => panic!("unknown $number {other}"),
            };
            return PartitionKeyComponent::Number(x);
        }
        panic!("unknown special component {v}");
    }
    PartitionKeyComponent::try_from(v).unwrap_or_else(|e| panic!("{v}: {e}"))
}

fn hex(s: &str) -> Epk {
    Epk::from_hex(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

fn std_hash(e: &Epk) -> u64 {
    let mut h = DefaultHasher::new();
    e.hash(&mut h);
    h.finish()
}

fn str_field<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or_else(|| panic!("missing string {k} in {v}"))
}

#[test]
fn key_vectors() {
    let vectors = load("vectors.json");
    let vectors = vectors.as_array().expect("a list");
    let mut checked = 0;
    let (mut rejected, mut normalized, mut too_many) = (0, 0, 0);
    for v in vectors {
        let id = str_field(v, "id");
        let version = match v["version"].as_u64() {
            Some(1) => HashVersion::V1,
            Some(2) => HashVersion::V2,
            other => panic!("{id}: version {other:?}"),
        };
        let kind = match str_field(v, "kind") {
            "Hash" => PartitionKeyKind::Hash,
            "MultiHash" => PartitionKeyKind::MultiHash,
            other => panic!("{id}: kind {other}"),
        };
        let key: Vec<PartitionKeyComponent> = v["key"].as_array().expect("key list").iter().map(component).collect();
        let expected = str_field(v, "epk");

        // The hash as the baselines compute it: every vector.
        let verbatim = effective_partition_key_verbatim(&key, kind, version)
            .unwrap_or_else(|e| panic!("{id}: verbatim hash failed: {e}"));
        assert_eq!(verbatim.to_hex(), expected, "{id} (verbatim)");

        // The service's value rules.
        let non_finite = key.iter().any(|c| matches!(c, PartitionKeyComponent::Number(x) if !x.is_finite()));
        let negative_zero =
            key.iter().any(|c| matches!(c, PartitionKeyComponent::Number(x) if *x == 0.0 && x.is_sign_negative()));
        let checked_epk = effective_partition_key(&key, kind, version);
        if non_finite {
            assert!(v["note"].as_str().is_some_and(|n| n.contains("Not a legal partition key")), "{id}");
            let err = checked_epk.expect_err(id);
            assert!(matches!(err.kind(), EpkErrorKind::NonFiniteNumber(_)), "{id}: {err}");
            rejected += 1;
        } else if negative_zero {
            assert!(v["note"].as_str().is_some_and(|n| n.contains("normalizes -0.0")), "{id}");
            let plus: Vec<_> = key
                .iter()
                .map(|c| match c {
                    PartitionKeyComponent::Number(x) if *x == 0.0 => PartitionKeyComponent::Number(0.0),
                    c => c.clone(),
                })
                .collect();
            let got = checked_epk.unwrap_or_else(|e| panic!("{id}: {e}"));
            assert_eq!(got.to_hex(), effective_partition_key(&plus, kind, version).unwrap().to_hex(), "{id}");
            assert_ne!(got.to_hex(), expected, "{id}: -0 must be normalized (documented choice)");
            normalized += 1;
        } else if kind == PartitionKeyKind::MultiHash && key.len() > 3 {
            let err = checked_epk.expect_err(id);
            assert_eq!(err.kind(), &EpkErrorKind::TooManyComponents { count: key.len(), max: 3 }, "{id}");
            too_many += 1;
        } else {
            let got = checked_epk.unwrap_or_else(|e| panic!("{id}: {e}"));
            assert_eq!(got.to_hex(), expected, "{id}");
        }

        // Cross-checks on the file itself.
        match (version, kind) {
            (HashVersion::V2, PartitionKeyKind::MultiHash) => {
                assert_eq!(expected.len(), 32 * key.len(), "{id}");
                for (i, c) in key.iter().enumerate() {
                    let single =
                        effective_partition_key_verbatim(std::slice::from_ref(c), PartitionKeyKind::Hash, version)
                            .unwrap();
                    assert_eq!(single.to_hex(), expected[32 * i..32 * (i + 1)], "{id} component {i}");
                }
            }
            (HashVersion::V2, PartitionKeyKind::Hash) => assert_eq!(expected.len(), 32, "{id}"),
            (HashVersion::V1, _) => assert!(expected.starts_with("05"), "{id}"),
        }
        if let Some(raw) = v["raw_hash_v2"].as_str() {
            // The documented mask: top two bits of byte 0 of each 16-byte component cleared.
            let mut masked = hex(raw).as_bytes().to_vec();
            for chunk in masked.chunks_mut(16) {
                chunk[0] &= 0x3F;
            }
            assert_eq!(Epk::from_bytes(&masked).to_hex(), expected, "{id}: raw_hash_v2 masked");
        }
        checked += 1;
    }
    assert_eq!(checked, 78, "vectors.json has 78 vectors");
    assert_eq!((rejected, normalized, too_many), (6, 2, 1));
    println!(
        "epk: checked {checked} key vectors ({rejected} NaN/Infinity rejected, {normalized} -0 normalized, \
         {too_many} over-long MultiHash rejected; all {checked} hashes match verbatim)"
    );
}

#[test]
fn range_vectors() {
    let r = load("range_vectors.json");
    let mut checked = 0;

    assert_eq!(Epk::min().to_hex(), str_field(&r["epk_space"], "min_inclusive"));
    assert_eq!(Epk::max().to_hex(), str_field(&r["epk_space"], "max_exclusive"));

    for c in r["comparison"].as_array().expect("comparison list") {
        let (a, b) = (hex(str_field(c, "a")), hex(str_field(c, "b")));
        let want = match c["cmp"].as_i64() {
            Some(-1) => Ordering::Less,
            Some(0) => Ordering::Equal,
            Some(1) => Ordering::Greater,
            other => panic!("cmp {other:?}"),
        };
        assert_eq!(a.cmp(&b), want, "{c}");
        assert_eq!(b.cmp(&a), want.reverse(), "{c}");
        assert_eq!(a == b, want == Ordering::Equal, "{c}");
        if want == Ordering::Equal {
            assert_eq!(std_hash(&a), std_hash(&b), "{c}");
        }
        // Uppercase hex compares like the bytes (after the same trailing-zero rule).
        checked += 1;
    }
    assert_eq!(checked, 9);

    let mut successors = 0;
    for s in r["successor"].as_array().expect("successor list") {
        let epk = hex(str_field(s, "epk"));
        let got = match s["normalize_to_bytes"].as_u64() {
            None => epk.successor(),
            Some(width) => epk.successor_padded(width as usize),
        };
        assert_eq!(got.to_hex(), str_field(s, "successor"), "{s}");
        successors += 1;
    }
    assert_eq!(successors, 12);
    checked += successors;

    let mut prefixes = 0;
    for p in r["prefix_ranges"].as_array().expect("prefix list") {
        assert_eq!(str_field(p, "kind"), "MultiHash");
        assert_eq!(p["version"].as_u64(), Some(2));
        let paths = p["partition_key_paths"].as_array().unwrap().len();
        let key: Vec<_> = p["key"].as_array().unwrap().iter().map(component).collect();
        let (start, end) = prefix_range(&key, paths, HashVersion::V2).unwrap_or_else(|e| panic!("{p}: {e}"));
        assert_eq!(start.to_hex(), str_field(p, "min_inclusive"), "{p}");
        if p["point"].as_bool() == Some(true) {
            // Points are returned half-open: [epk, successor(epk)).
            let max = hex(str_field(p, "max_inclusive"));
            assert_eq!(start, max, "{p}");
            assert_eq!(end.to_hex(), max.successor().to_hex(), "{p}");
            assert_eq!(end.to_hex(), max.successor_padded(16 * paths).to_hex(), "{p}");
        } else {
            assert_eq!(end.to_hex(), str_field(p, "max_exclusive"), "{p}");
        }
        prefixes += 1;
    }
    assert_eq!(prefixes, 3);
    checked += prefixes;

    // The emulator's split is the same even split of [00.., 40..) that `split_space` uses.
    let mut splits = 0;
    for s in r["emulator_partition_boundaries_v2"].as_array().expect("split list") {
        let n = s["partitions"].as_u64().unwrap() as usize;
        let want: Vec<&str> =
            s["internal_boundaries"].as_array().unwrap().iter().map(|b| b.as_str().unwrap()).collect();
        let got = split_space(n);
        assert_eq!(got.len(), n + 1);
        assert_eq!(got[0], Epk::min());
        assert_eq!(got[n].to_hex(), "FF");
        let internal: Vec<String> = got[1..n].iter().map(Epk::to_hex).collect();
        assert_eq!(internal, want, "{n} partitions");
        splits += 1;
    }
    assert_eq!(splits, 4);
    checked += splits;

    println!(
        "epk: checked {checked} range vectors (9 comparison, {successors} successor, {prefixes} prefix, {splits} split)"
    );
}

#[test]
fn in_repo_copies_match_the_shared_conformance_set() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance/epk");
    if !shared.is_dir() {
        println!("epk: {} is absent; skipping the byte-identity check of the in-repo copies", shared.display());
        return;
    }
    for name in ["vectors.json", "range_vectors.json"] {
        let ours = std::fs::read(data_dir().join(name)).unwrap();
        let theirs = std::fs::read(shared.join(name)).unwrap();
        assert!(ours == theirs, "tests/data/epk/{name} differs from {}", shared.join(name).display());
    }
    println!("epk: tests/data/epk/{{vectors,range_vectors}}.json are byte-identical to {}", shared.display());
}
