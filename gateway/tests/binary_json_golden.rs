//! The golden vectors of the Azure SDK for Rust (see README.md here): every
//! case decodes to its JSON, every strict prefix is an error, and corrupted
//! versions of the cases never panic.

use serde_json::Value;

struct Case {
    name: String,
    binary: Vec<u8>,
    json: Value,
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/binary_json_vectors.json");
    let parsed: Value = serde_json::from_str(text).expect("vector file is JSON");
    let list = parsed.as_array().expect("vector file is an array");
    list.iter()
        .map(|case| Case {
            name: case["name"].as_str().expect("name").to_owned(),
            binary: parse_hex(case["binary"].as_str().expect("binary")),
            json: case["json"].clone(),
        })
        .collect()
}

fn parse_hex(text: &str) -> Vec<u8> {
    text.split_whitespace().map(|pair| u8::from_str_radix(pair, 16).expect("hex byte")).collect()
}

/// JSON equality where numbers compare by value: integers exactly, anything
/// else as `f64`. Object keys must also come in the same order.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (integer(x), integer(y)) {
            (Some(p), Some(q)) => p == q,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_json(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.keys().eq(y.keys()) && x.values().zip(y.values()).all(|(p, q)| same_json(p, q))
        }
        _ => a == b,
    }
}

fn integer(n: &serde_json::Number) -> Option<i128> {
    n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from))
}

#[test]
fn the_vector_file_has_all_87_cases() {
    assert_eq!(cases().len(), 87);
}

#[test]
fn every_vector_decodes_to_its_json() {
    let mut failures = Vec::new();
    for case in cases() {
        assert!(cosmoql_gateway::binary_json::is_binary(&case.binary), "{}: not binary", case.name);
        match cosmoql_gateway::binary_json::decode(&case.binary) {
            Ok(value) if same_json(&value, &case.json) => {}
            Ok(value) => failures.push(format!("{}: got {value}, want {}", case.name, case.json)),
            Err(err) => failures.push(format!("{}: {err}", case.name)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn integers_stay_integers() {
    for case in cases() {
        if case.json.is_u64() || case.json.is_i64() {
            let value = cosmoql_gateway::binary_json::decode(&case.binary).unwrap();
            assert_eq!(value, case.json, "{}", case.name);
        }
    }
}

#[test]
fn every_strict_prefix_is_an_error() {
    for case in cases() {
        for len in 0..case.binary.len() {
            let prefix = &case.binary[..len];
            assert!(
                cosmoql_gateway::binary_json::decode(prefix).is_err(),
                "{}: prefix of {len} byte(s) decoded",
                case.name
            );
        }
    }
}

#[test]
fn trailing_byte_after_every_vector_is_an_error() {
    for case in cases() {
        let mut body = case.binary.clone();
        body.push(0xD0);
        let err = cosmoql_gateway::binary_json::decode(&body).unwrap_err();
        assert_eq!(err.kind(), &cosmoql_gateway::binary_json::ErrorKind::TrailingBytes { count: 1 }, "{}", case.name);
        assert_eq!(err.offset(), case.binary.len(), "{}", case.name);
    }
}

/// Overwrites each byte of each vector with many values and decodes the
/// result; a panic fails the test, errors and odd values are fine.
#[test]
fn corrupted_vectors_never_panic() {
    const PROBES: [u8; 24] = [
        0x00, 0x01, 0x02, 0x03, 0x05, 0x7F, 0x80, 0x81, 0xBF, 0xC0, 0xC3, 0xC6, 0xCF, 0xD3, 0xDF, 0xE1, 0xE4, 0xE7,
        0xE9, 0xEC, 0xEF, 0xF3, 0xFE, 0xFF,
    ];
    let mut decoded = 0usize;
    for case in cases() {
        let every_value = case.binary.len() <= 40;
        for i in 1..case.binary.len() {
            let values: Vec<u8> = if every_value { (0..=255).collect() } else { PROBES.to_vec() };
            for v in values {
                let mut body = case.binary.clone();
                body[i] = v;
                if cosmoql_gateway::binary_json::decode(&body).is_ok() {
                    decoded += 1;
                }
            }
        }
    }
    // Plenty of corruptions are still valid documents (another literal int,
    // another character); the point is that none of them panicked.
    assert!(decoded > 0);
}

/// Random edits (overwrite, insert, delete, flip a bit, splice in part of
/// another case) of randomly chosen cases; a fixed seed keeps it repeatable.
#[test]
fn randomly_edited_vectors_never_panic() {
    let seeds: Vec<Vec<u8>> = cases().into_iter().map(|case| case.binary).collect();
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut random = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..50_000 {
        let mut body = seeds[random() as usize % seeds.len()].clone();
        for _ in 0..1 + random() % 4 {
            let r = random();
            let byte = (r >> 32) as u8;
            let pos = 1 + (r >> 8) as usize % body.len();
            match r % 5 {
                0 if pos < body.len() => body[pos] = byte,
                1 => body.insert(pos, byte),
                2 if pos < body.len() => {
                    body.remove(pos);
                }
                3 => {
                    let other = &seeds[(r >> 40) as usize % seeds.len()];
                    let piece = other[1..other.len().min(2 + byte as usize % 8)].to_vec();
                    body.splice(pos..pos, piece);
                }
                _ if pos < body.len() => body[pos] ^= 1 << (byte % 8),
                _ => {}
            }
        }
        if let Ok(value) = cosmoql_gateway::binary_json::decode(&body) {
            serde_json::to_string(&value).expect("a decoded value serializes");
        }
    }
}
