//! Continuation tokens: what a page of a query hands back so the next request resumes after it.
//!
//! # Format (version 3)
//!
//! `cq3.`, the lowercase hex of a JSON object, `.`, and the hex of the first 16 bytes of an
//! HMAC-SHA256 of everything before that `.` under a secret key kept in the user's cache
//! ([`key_file`]). A token is only ever read back after its MAC checks, so a forged or altered
//! one (charges near 2^53 to skip a page's charge, sort keys of another shape to repeat or end
//! pages) is refused before any of its fields is used, while a saved token still resumes its
//! query after a restart (`examples/paging.rs`).
//!
//! The JSON object:
//!
//! ```json
//! {"fp": "<16 hex digits>", "n": 40, "pos": ["<EPK hex>", 1234, 0], "keys": [[5], [], {"f": "NaN"}]}
//! ```
//!
//! - `fp`: a fingerprint (FNV-1a) of the query text, its parameters (sorted by name) and the
//!   request's partition key. A token resumes only the query it came from; any other is rejected.
//!   One exception, the service's: an ORDER BY query of a feed range (what the SDKs' pipelines
//!   send per range) is fingerprinted without its WHERE clause, because a pipeline resumes a
//!   range with the range's token and the query's filter slot
//!   (`{documentdb-formattableorderbyquery-filter}`) now holding a condition that drops only what
//!   came before the token; resuming after the token's sort keys gives the same results.
//! - `n`: results returned by the pages so far (what OFFSET and LIMIT still allow depends on it).
//! - `pos` (optional): the scan position of the last result returned: its item's logical
//!   partition EPK, its creation sequence, and its place among the rows its item expands into.
//!   Positions do not depend on how the EPK space is split, so a split between pages changes
//!   nothing.
//! - `keys` (ORDER BY only): the last result's sort key values, each `[]` for undefined, `[v]`
//!   for a JSON value, or `{"f": "NaN" | "Infinity" | "-Infinity"}`.
//! - `ru` (optional): what the pages so far were charged for, `[partitions, item bytes, index
//!   entries, output bytes]` (see `cost::ChargedSoFar`): the next page's charge is the formula on
//!   the sums less the formula on these.
//! - `held` (optional): the id of the results held for the next pages (see [`crate::held`]).
//!
//! How the next page uses them is the plan's `Paging`: results in scan order resume after `pos`;
//! ORDER BY resumes after (`keys`, `pos`); the other shapes are served from the `held` results,
//! or when those were let go run again and skip `n` results.

use std::collections::HashMap;

use cosmoql_storage::{Epk, ItemPosition, PartitionKey};
use cosmoql_value::{parse_json, to_json_string, Map, Value};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::cost::{ChargedSoFar, Work};
use crate::error::{QueryError, QueryErrorKind};
use crate::merge::SortCursor;
use crate::row::RowPos;

const PREFIX: &str = "cq3.";

/// Bytes of the HMAC a token carries.
const TAG_BYTES: usize = 16;

/// The key of the token MACs: 32 bytes kept in the user's cache ([`key_file`]), so that a
/// token resumes its query in another process of the same user (a saved token after a restart,
/// as the service's tokens do), and nobody without the file can make one. Created from the
/// operating system's randomness the first time; where the file cannot be read or written, a key
/// drawn for this process stands in (tokens then resume only in it).
fn key() -> &'static [u8; 32] {
    static KEY: std::sync::OnceLock<[u8; 32]> = std::sync::OnceLock::new();
    KEY.get_or_init(|| key_file().and_then(|path| stored_key(&path)).unwrap_or_else(random_key))
}

/// Where the key is kept: `COSMOQL_TOKEN_KEY_FILE`, else `cosmoql/token-key` under
/// `XDG_CACHE_HOME` or `~/.cache`.
pub fn key_file() -> Option<std::path::PathBuf> {
    if let Some(file) = std::env::var_os("COSMOQL_TOKEN_KEY_FILE").filter(|f| !f.is_empty()) {
        return Some(file.into());
    }
    let cache =
        std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()).map(std::path::PathBuf::from).or_else(|| {
            std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| std::path::Path::new(&h).join(".cache"))
        })?;
    Some(cache.join("cosmoql").join("token-key"))
}

/// The key in `path`, created there (readable by its owner only) when there is none; `None`
/// when the file is not a 32-byte regular file or cannot be made.
fn stored_key(path: &std::path::Path) -> Option<[u8; 32]> {
    use std::io::{Read, Write};
    use std::os::unix::fs::OpenOptionsExt;
    let read = |path: &std::path::Path| -> Option<[u8; 32]> {
        // Never through a link (the key would be whatever it points at).
        if !std::fs::symlink_metadata(path).ok()?.file_type().is_file() {
            return None;
        }
        let mut bytes = Vec::new();
        std::fs::File::open(path).ok()?.take(33).read_to_end(&mut bytes).ok()?;
        bytes.try_into().ok()
    };
    if let Some(key) = read(path) {
        return Some(key);
    }
    std::fs::create_dir_all(path.parent()?).ok()?;
    let key = random_key();
    // `create_new` fails on anything there, a link included: another process made the key first.
    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(mut file) => {
            file.write_all(&key).ok()?;
            file.sync_all().ok()?;
            Some(key)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            // Being written by that process: a moment to finish.
            (0..50).find_map(|_| {
                std::thread::sleep(std::time::Duration::from_millis(2));
                read(path)
            })
        }
        Err(_) => None,
    }
}

/// 32 bytes from the operating system; should it refuse, the process's hash seeds (themselves
/// from the OS) stand in.
pub(crate) fn random_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    if getrandom::fill(&mut key).is_err() {
        use std::hash::{BuildHasher, Hasher};
        let state = std::collections::hash_map::RandomState::new();
        for (i, chunk) in key.chunks_mut(8).enumerate() {
            let mut h = state.build_hasher();
            h.write_usize(i);
            chunk.copy_from_slice(&h.finish().to_le_bytes());
        }
    }
    key
}

/// The MAC of a token's body (HMAC takes keys of any length: `None` never happens).
fn mac(body: &str) -> Option<Hmac<Sha256>> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key()).ok()?;
    mac.update(body.as_bytes());
    Some(mac)
}

/// Where the next page starts, besides the count of results returned.
#[derive(Debug, Clone, PartialEq)]
pub enum ResumePoint {
    /// After this scan position.
    Position(RowPos),
    /// After these sort keys and scan position.
    Sort(SortCursor),
}

/// What a token says.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// Results the pages so far returned.
    pub returned: u64,
    pub resume: Option<ResumePoint>,
    /// What the pages so far were charged for.
    pub charged: ChargedSoFar,
    /// The id of the results held for the next pages ([`crate::held`]).
    pub held: Option<u64>,
}

/// The fingerprint a token of `plan` under `options` carries (see the module's `fp`).
pub fn plan_fingerprint(plan: &cosmoql_planner::Plan, options: &crate::options::QueryOptions) -> u64 {
    let pk = options.partition_key.as_ref();
    if options.epk_range.is_some() && plan.paging == cosmoql_planner::Paging::BySortKeys {
        let unfiltered = cosmoql_parser::Query { where_clause: None, ..plan.syntax.clone() };
        return fingerprint(&unfiltered.to_string(), &options.parameters, pk);
    }
    fingerprint(&plan.sql, &options.parameters, pk)
}

/// The fingerprint of a query request: its text, parameters and partition key.
pub fn fingerprint(sql: &str, parameters: &HashMap<String, Value>, partition_key: Option<&PartitionKey>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    };
    feed(sql.as_bytes());
    let mut params: Vec<_> = parameters.iter().collect();
    params.sort_by(|a, b| a.0.cmp(b.0));
    for (k, v) in params {
        feed(k.as_bytes());
        feed(to_json_string(v).unwrap_or_default().as_bytes());
    }
    if let Some(k) = partition_key {
        feed(k.to_string().as_bytes());
    }
    h
}

/// The token for `token` of the query with fingerprint `fp`.
pub fn encode(fp: u64, token: &Token) -> String {
    let mut object = Map::default();
    object.insert("fp".into(), Value::from(format!("{fp:016x}")));
    object.insert("n".into(), Value::from(token.returned as f64));
    let (pos, keys) = match &token.resume {
        None => (None, None),
        Some(ResumePoint::Position(pos)) => (Some(pos), None),
        Some(ResumePoint::Sort(cursor)) => (Some(&cursor.pos), Some(&cursor.keys)),
    };
    if let Some(RowPos { item: Some(item), sub }) = pos {
        object.insert(
            "pos".into(),
            Value::from(vec![Value::from(item.epk.to_hex()), Value::from(item.seq as f64), Value::from(*sub as f64)]),
        );
    }
    if let Some(keys) = keys {
        object.insert("keys".into(), Value::from(keys.iter().map(encode_key).collect::<Vec<_>>()));
    }
    if let Some(id) = token.held {
        object.insert("held".into(), Value::from(format!("{id:016x}")));
    }
    let c = &token.charged;
    if *c != ChargedSoFar::default() {
        let sums = [c.partitions, c.work.bytes, c.work.entries, c.output_bytes];
        object.insert("ru".into(), Value::from(sums.iter().map(|n| Value::from(*n as f64)).collect::<Vec<_>>()));
    }
    let json = to_json_string(&Value::from(object)).unwrap_or_default();
    let body = format!("{PREFIX}{}", hex(json.as_bytes()));
    let tag = mac(&body).map(|m| m.finalize().into_bytes().to_vec()).unwrap_or_default();
    format!("{body}.{}", hex(tag.get(..TAG_BYTES).unwrap_or_default()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of lowercase or uppercase hex digits, or `None`.
fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok()).collect()
}

fn encode_key(v: &Value) -> Value {
    match v {
        Value::Undefined => Value::from(Vec::<Value>::new()),
        Value::Number(n) if !n.is_finite() => {
            let name = if n.is_nan() {
                "NaN"
            } else if *n > 0.0 {
                "Infinity"
            } else {
                "-Infinity"
            };
            Value::object([("f", Value::from(name))])
        }
        v => Value::from(vec![v.clone()]),
    }
}

fn decode_key(v: &Value) -> Option<Value> {
    match v {
        Value::Array(a) if a.is_empty() => Some(Value::Undefined),
        Value::Array(a) if a.len() == 1 => Some(a[0].clone()),
        Value::Object(_) => match v.get("f").as_str()? {
            "NaN" => Some(Value::from(f64::NAN)),
            "Infinity" => Some(Value::from(f64::INFINITY)),
            "-Infinity" => Some(Value::from(f64::NEG_INFINITY)),
            _ => None,
        },
        _ => None,
    }
}

/// Reads a token of the query with fingerprint `fp`.
pub fn decode(text: &str, fp: u64) -> Result<Token, QueryError> {
    let bad = |why: &str| QueryError::new(QueryErrorKind::Bind, format!("invalid continuation token: {why}"), None);
    let not_ours = || bad("it is not a cosmoql token");
    if !text.starts_with(PREFIX) {
        return Err(bad("unknown format or version"));
    }
    let (body, tag) = text.rsplit_once('.').ok_or_else(not_ours)?;
    let tag = unhex(tag).filter(|t| t.len() == TAG_BYTES).ok_or_else(not_ours)?;
    if body.len() < PREFIX.len() || mac(body).is_none_or(|m| m.verify_truncated_left(&tag).is_err()) {
        return Err(bad("it was not made by this process for this query (its signature does not match)"));
    }
    let bytes = unhex(&body[PREFIX.len()..]).ok_or_else(not_ours)?;
    let json = String::from_utf8(bytes).map_err(|_| not_ours())?;
    let object = parse_json(&json).map_err(|_| not_ours())?;
    let field_fp = object.get("fp").as_str().and_then(|f| u64::from_str_radix(f, 16).ok()).ok_or_else(not_ours)?;
    if field_fp != fp {
        return Err(bad("it belongs to another query (text, parameters or partition key differ)"));
    }
    let returned = count(object.get("n")).ok_or_else(not_ours)?;
    let pos = match object.get("pos") {
        Value::Undefined => None,
        Value::Array(p) if p.len() == 3 => {
            let epk = p[0].as_str().and_then(|e| Epk::from_hex(e).ok()).ok_or_else(not_ours)?;
            let seq = count(&p[1]).ok_or_else(not_ours)?;
            let sub = count(&p[2]).ok_or_else(not_ours)?;
            Some(RowPos { item: Some(ItemPosition { epk, seq }), sub })
        }
        _ => return Err(not_ours()),
    };
    let resume = match (object.get("keys"), pos) {
        (Value::Undefined, pos) => pos.map(ResumePoint::Position),
        (Value::Array(keys), Some(pos)) => {
            let keys = keys.iter().map(decode_key).collect::<Option<Vec<_>>>().ok_or_else(not_ours)?;
            Some(ResumePoint::Sort(SortCursor { keys, pos }))
        }
        _ => return Err(not_ours()),
    };
    let charged = match object.get("ru") {
        Value::Undefined => ChargedSoFar::default(),
        Value::Array(a) if a.len() == 4 => {
            let n = |i: usize| count(&a[i]).ok_or_else(not_ours);
            ChargedSoFar { partitions: n(0)?, work: Work { bytes: n(1)?, entries: n(2)? }, output_bytes: n(3)? }
        }
        _ => return Err(not_ours()),
    };
    let held = match object.get("held") {
        Value::Undefined => None,
        v => Some(v.as_str().and_then(|h| u64::from_str_radix(h, 16).ok()).ok_or_else(not_ours)?),
    };
    Ok(Token { returned, resume, charged, held })
}

/// A non-negative integer field (exact up to 2^53).
fn count(v: &Value) -> Option<u64> {
    let n = v.as_f64()?;
    (n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_992.0).then_some(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_made_once_kept_and_never_read_through_a_link() {
        let dir = std::env::temp_dir().join(format!("cosmoql-token-key-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("sub").join("token-key");
        let made = stored_key(&path).unwrap();
        assert_eq!(stored_key(&path), Some(made), "read back, not made again");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        // A link, a file of another length: not a key (and nothing is written through the link).
        let link = dir.join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(stored_key(&link), None);
        let short = dir.join("short");
        std::fs::write(&short, b"0123").unwrap();
        assert_eq!(stored_key(&short), None);
        assert_eq!(std::fs::read(&short).unwrap(), b"0123");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn tokens_round_trip_and_reject_other_queries() {
        let pos = RowPos { item: Some(ItemPosition { epk: Epk::from_hex("0A1B").unwrap(), seq: 77 }), sub: 3 };
        let keys = vec![Value::Undefined, Value::from(2.5), Value::from("x"), Value::from(f64::INFINITY)];
        for token in [
            Token { returned: 0, resume: None, charged: ChargedSoFar::default(), held: None },
            Token { returned: 9, resume: None, charged: ChargedSoFar::default(), held: Some(u64::MAX - 7) },
            Token {
                returned: 40,
                resume: Some(ResumePoint::Position(pos.clone())),
                charged: ChargedSoFar { partitions: 3, work: Work { bytes: 123_456, entries: 17 }, output_bytes: 9000 },
                held: None,
            },
            Token {
                returned: 7,
                resume: Some(ResumePoint::Sort(SortCursor { keys: keys.clone(), pos: pos.clone() })),
                charged: ChargedSoFar::default(),
                held: None,
            },
        ] {
            let text = encode(42, &token);
            assert!(text.starts_with("cq3."));
            let back = decode(&text, 42).unwrap();
            match (&back.resume, &token.resume) {
                (Some(ResumePoint::Sort(a)), Some(ResumePoint::Sort(b))) => {
                    assert_eq!(a.pos, b.pos);
                    assert_eq!(a.keys.len(), b.keys.len());
                    assert!(a.keys.iter().zip(&b.keys).all(|(x, y)| x.cmp(y) == std::cmp::Ordering::Equal));
                }
                _ => assert_eq!(back, token),
            }
            assert_eq!(back.charged, token.charged);
            assert!(decode(&text, 43).unwrap_err().message.contains("another query"));
        }
        for bad in ["", "cq1.00", "cq2.7b7d", "cq3.zz", "cq3.7b7d", "cq3.7b7d.", "cq3.7b7d.00", "cq3..", "cq3."] {
            assert!(decode(bad, 42).is_err(), "{bad}");
        }
        // Bodies that carry a valid signature (as if the key leaked) still have to be tokens.
        let signed = |json: &str| {
            let body = format!("{PREFIX}{}", hex(json.as_bytes()));
            let tag = mac(&body).unwrap().finalize().into_bytes();
            format!("{body}.{}", hex(&tag[..TAG_BYTES]))
        };
        for json in ["{}", "[]", "{\"fp\": \"2a\"}", "{\"fp\": \"2a\", \"n\": -1}", "{\"fp\": \"2a\", \"n\": 1e300}"] {
            assert!(decode(&signed(json), 42).is_err(), "{json}");
        }
        assert_eq!(decode(&signed("{\"fp\": \"000000000000002a\", \"n\": 3}"), 42).unwrap().returned, 3);
        // One changed digit anywhere, or the signature of another token, is refused.
        let text = encode(42, &Token { returned: 5, resume: None, charged: ChargedSoFar::default(), held: None });
        for at in PREFIX.len()..text.len() {
            let mut bytes = text.clone().into_bytes();
            bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
            let changed = String::from_utf8(bytes).unwrap();
            if changed != text {
                assert!(decode(&changed, 42).is_err(), "{changed}");
            }
        }
    }
}
