//! Master-key authorization of a REST request, checked as the service checks it.
//!
//! Every SDK (Rust, Python, JavaScript, .NET) sends `authorization: ` + the form-url-encoded
//! `type=master&ver=1.0&sig=<base64>`, where `sig` is the base64 HMAC-SHA256, under the
//! base64-decoded master key, of five lines (`../shared/research/gateway-*.md`, §2):
//!
//! ```text
//! lower(verb) \n lower(resource type) \n resource link \n lower(x-ms-date) \n \n
//! ```
//!
//! The resource type and link come from the request path: a path of an odd number of segments
//! names a feed (type: the last segment; link: the segments before it), an even number one
//! resource (type: the second-to-last segment; link: the whole path). Links are signed as
//! written, except that the Python SDK lowercases links it takes for resource ids: both are
//! accepted.
//!
//! The service's answers, as recorded:
//! - no `authorization` header: 401 `Required Header authorization is missing. Ensure a valid
//!   Authorization token is passed.` (the service's answer to a bare `GET /`, quoted in the
//!   stored public pages of several REST users);
//! - a signature that does not match: 401 `The input authorization token can't serve the
//!   request. Please check that the expected payload is built as per the protocol, and check
//!   the key being used. Server used the following payload to sign: '…'` (the Azure docs' ODBC
//!   troubleshooting page, with the payload's newlines written `\n`);
//! - an `x-ms-date` outside the token's window: 403 `The authorization token is not valid at the
//!   current time. Please create another token and retry (token start time: …, token expiry
//!   time: …, current server time: …).` (microsoft/vscode-cosmosdb#842,
//!   Azure-Samples/azure-cosmos-db-python-getting-started#18): the window starts at the date
//!   and lasts 15 minutes. A date 6.7 minutes ahead of the server was refused; how far ahead
//!   the service tolerates is not recorded, so [`FUTURE_SKEW`] (5 minutes) is inferred.
//! - a write with the read-only key: 403 (its message is not recorded; see [`AuthError`]).

use std::fmt;
use std::time::{Duration, SystemTime};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The Cosmos DB emulator's well-known master key: its connection string works against
/// `cosmoql serve` unchanged.
pub const EMULATOR_KEY: &str =
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

/// How long a signed request stays valid after its `x-ms-date` (the service's window).
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(15 * 60);

/// How far ahead of the server's clock an `x-ms-date` may be (inferred: see the module docs).
pub const FUTURE_SKEW: Duration = Duration::from_secs(5 * 60);

/// The longest `authorization` header read (a master token is under 100 bytes; an AAD token is a
/// JWT of a few KB).
pub const MAX_AUTHORIZATION_BYTES: usize = 16 * 1024;

/// The account's keys: the master key (read-write) and an optional read-only key.
#[derive(Clone)]
pub struct Keys {
    master: Vec<u8>,
    read_only: Option<Vec<u8>>,
}

impl fmt::Debug for Keys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keys").field("read_only", &self.read_only.is_some()).finish_non_exhaustive()
    }
}

/// What a request's key allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The master key: everything.
    ReadWrite,
    /// The read-only key: reads and queries.
    ReadOnly,
}

/// The parts of a request that authorization reads.
#[derive(Debug, Clone, Copy)]
pub struct SignedRequest<'a> {
    /// The HTTP method (`GET`, `POST`, ...).
    pub verb: &'a str,
    /// The request path, percent-decoded (`/dbs/shop/colls/orders/docs/o1`).
    pub path: &'a str,
    /// The `authorization` header, as sent (form-url-encoded).
    pub authorization: Option<&'a str>,
    /// The `x-ms-date` header (else the `date` header), as sent.
    pub date: Option<&'a str>,
    /// A query (a POST that reads): the read-only key may run it.
    pub query: bool,
}

/// A refused request: the status and the service's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthError {
    /// 401 (no or a wrong signature) or 403 (outside the token's window, or a write with the
    /// read-only key).
    pub status: u16,
    /// The service's `code` (`Unauthorized`, `Forbidden`).
    pub code: &'static str,
    /// The service's message.
    pub message: String,
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.status, self.code, self.message)
    }
}

impl std::error::Error for AuthError {}

impl AuthError {
    fn unauthorized(message: impl Into<String>) -> Self {
        AuthError { status: 401, code: "Unauthorized", message: message.into() }
    }

    fn forbidden(message: impl Into<String>) -> Self {
        AuthError { status: 403, code: "Forbidden", message: message.into() }
    }

    fn missing() -> Self {
        AuthError::unauthorized(
            "Required Header authorization is missing. Ensure a valid Authorization token is passed.",
        )
    }

    fn mismatch(payload: &str) -> Self {
        AuthError::unauthorized(format!(
            "The input authorization token can't serve the request. Please check that the expected payload is built \
             as per the protocol, and check the key being used. Server used the following payload to sign: '{}'",
            payload.replace('\n', "\\n")
        ))
    }
}

impl Keys {
    /// Keys from their base64 text; an error for text that is not base64 or decodes to nothing.
    pub fn new(master: &str, read_only: Option<&str>) -> Result<Self, String> {
        let decode = |text: &str| match STANDARD.decode(text.trim()) {
            Ok(key) if !key.is_empty() => Ok(key),
            _ => Err(format!("a key must be base64 text (as the Azure portal shows it), not `{text}`")),
        };
        Ok(Keys { master: decode(master)?, read_only: read_only.map(decode).transpose()? })
    }

    /// The emulator's well-known key, with no read-only key.
    pub fn emulator() -> Self {
        Keys::new(EMULATOR_KEY, None).unwrap_or_else(|_| Keys { master: Vec::new(), read_only: None })
    }

    /// Checks a request's signature and date against these keys at `now`: what the request may
    /// do, or the service's refusal.
    pub fn authorize(&self, request: &SignedRequest<'_>, now: SystemTime) -> Result<Access, AuthError> {
        let header = request.authorization.filter(|h| !h.trim().is_empty()).ok_or_else(AuthError::missing)?;
        if header.len() > MAX_AUTHORIZATION_BYTES {
            return Err(AuthError::unauthorized("The authorization header is too long."));
        }
        let date = request.date.unwrap_or_default();
        let (resource_type, link) = signed_resource(request.path);
        let payload = string_to_sign(request.verb, resource_type, link, date);
        let Some(signature) = master_signature(header).and_then(|s| STANDARD.decode(s).ok()) else {
            return Err(AuthError::mismatch(&payload));
        };
        // The Python SDK signs links it takes for resource ids in lower case.
        let lowered = string_to_sign(request.verb, resource_type, &link.to_lowercase(), date);
        let signed_with = |key: &[u8]| [&payload, &lowered].iter().any(|p| verify(key, p, &signature));
        let access = if signed_with(&self.master) {
            Access::ReadWrite
        } else if self.read_only.as_deref().is_some_and(signed_with) {
            Access::ReadOnly
        } else {
            return Err(AuthError::mismatch(&payload));
        };
        check_window(date, now)?;
        if access == Access::ReadOnly && !is_read(request.verb) && !request.query {
            return Err(AuthError::forbidden("The request is a write and the authorization key is read-only."));
        }
        Ok(access)
    }
}

/// A key's bytes from its base64 text (as the portal shows it); `None` if it is not base64.
pub fn key_bytes(text: &str) -> Option<Vec<u8>> {
    STANDARD.decode(text.trim()).ok().filter(|key| !key.is_empty())
}

/// The signature of `payload` under `key` (base64), as the SDKs compute it.
pub fn sign(key: &[u8], payload: &str) -> String {
    let Ok(mut mac) = <Hmac<Sha256> as Mac>::new_from_slice(key) else { return String::new() };
    mac.update(payload.as_bytes());
    STANDARD.encode(mac.finalize().into_bytes())
}

/// The `authorization` header an SDK sends for a request (form-url-encoded), for tests and for
/// `cosmoql test --endpoint` as a client.
pub fn authorization_header(key: &[u8], verb: &str, path: &str, date: &str) -> String {
    let (resource_type, link) = signed_resource(path);
    let token = format!("type=master&ver=1.0&sig={}", sign(key, &string_to_sign(verb, resource_type, link, date)));
    form_encode(&token)
}

/// The five lines an SDK signs.
pub fn string_to_sign(verb: &str, resource_type: &str, link: &str, date: &str) -> String {
    format!("{}\n{}\n{}\n{}\n\n", verb.to_lowercase(), resource_type.to_lowercase(), link, date.to_lowercase())
}

/// The resource type and link a path is signed with: `/dbs` -> (`dbs`, ``), `/dbs/d/colls/c/docs`
/// -> (`docs`, `dbs/d/colls/c`), `/dbs/d/colls/c/docs/x` -> (`docs`, `dbs/d/colls/c/docs/x`),
/// `/` -> (``, ``), `/offers/AbCd` -> (`offers`, `AbCd`).
pub fn resource_of(path: &str) -> (&str, &str) {
    let link = path.trim_matches('/');
    if link.is_empty() {
        return ("", "");
    }
    let segments: Vec<&str> = link.split('/').collect();
    if segments.len() % 2 == 1 {
        let parent = link.rfind('/').map_or("", |i| &link[..i]);
        (segments[segments.len() - 1], parent)
    } else if segments.len() == 6 && segments[4] == "operations" && segments[5] == "partitionkeydelete" {
        // Delete by partition key is signed as a request on the container (the Python SDK's
        // `DeleteAllItemsByPartitionKey`).
        let collection = link.rfind("/operations").map_or(link, |i| &link[..i]);
        ("colls", collection)
    } else if segments.len() == 2 && segments[0] == "offers" {
        // Offers are addressed by rid alone, and the SDKs sign them by it (the Python SDK's
        // `GetResourceIdOrFullNameFromLink`; lower-cased, as every rid-based link).
        ("offers", segments[1])
    } else {
        (segments[segments.len() - 2], link)
    }
}

/// The resource type and link an SDK signs for `path`: [`resource_of`], except that a link the
/// SDKs take for rid-based (`dbs/<rid>/...`) is signed as its last rid alone, as the Python SDK
/// (`GetResourceIdOrFullNameFromLink`) and the .NET SDK's `AuthorizationHelper` do: reading a
/// document by `_self` signs `docs` and the document's rid.
pub fn signed_resource(path: &str) -> (&str, &str) {
    let (resource_type, link) = resource_of(path);
    if cosmoql::rid::python_reads_as_rid(link) {
        return (resource_type, link.rsplit('/').next().unwrap_or(link));
    }
    (resource_type, link)
}

/// The `sig` of a `type=master&ver=1.0&sig=...` header (form-url-decoded); `None` for another
/// token type (resource tokens and AAD are not served) or a malformed header.
fn master_signature(header: &str) -> Option<String> {
    let decoded = form_decode(header)?;
    let mut fields = decoded.split('&').filter_map(|kv| kv.split_once('='));
    let (mut kind, mut version, mut sig) = (None, None, None);
    for (k, v) in fields.by_ref() {
        match k {
            "type" => kind = Some(v),
            "ver" => version = Some(v),
            "sig" => sig = Some(v.to_string()),
            _ => {}
        }
    }
    (kind == Some("master") && version == Some("1.0")).then_some(sig).flatten()
}

/// Constant-time comparison of `signature` with the MAC of `payload` under `key`.
fn verify(key: &[u8], payload: &str, signature: &[u8]) -> bool {
    let Ok(mut mac) = <Hmac<Sha256> as Mac>::new_from_slice(key) else { return false };
    mac.update(payload.as_bytes());
    mac.verify_slice(signature).is_ok()
}

/// Refuses (403) a date outside `[now - lifetime, now + skew]`, or one that is no HTTP date.
fn check_window(date: &str, now: SystemTime) -> Result<(), AuthError> {
    let start = httpdate::parse_http_date(date.trim()).ok();
    let valid = start.is_some_and(|start| {
        start <= now + FUTURE_SKEW && now.duration_since(start).map_or(true, |age| age <= TOKEN_LIFETIME)
    });
    if valid {
        return Ok(());
    }
    let show = |t: SystemTime| httpdate::fmt_http_date(t);
    let (start_text, expiry_text) = match start {
        Some(s) => (show(s), show(s + TOKEN_LIFETIME)),
        None => (date.to_string(), date.to_string()),
    };
    Err(AuthError::forbidden(format!(
        "The authorization token is not valid at the current time. Please create another token and retry (token \
         start time: {start_text}, token expiry time: {expiry_text}, current server time: {}).",
        show(now)
    )))
}

/// Whether a request only reads, by its method: `GET` and `HEAD`. (A query is a `POST` that says
/// so in its headers; the server, which reads them, lets the read-only key run queries.)
fn is_read(verb: &str) -> bool {
    verb.eq_ignore_ascii_case("GET") || verb.eq_ignore_ascii_case("HEAD")
}

/// `application/x-www-form-urlencoded` decoding (`%XX`; `+` is a space); `None` for a bad escape
/// or bytes that are not UTF-8.
fn form_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Percent-encodes every byte but unreserved ones, as the SDKs quote the header.
fn form_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of the REST API reference ("Access control in the Azure Cosmos DB SQL
    /// API", learn.microsoft.com/rest/api/cosmos-db/access-control-on-cosmosdb-resources).
    const DOCS_KEY: &str = "dsZQi3KtZmCv1ljt3VNWNm7sQUF1y5rJfC6kv5JiwvW0EndXdDku/dkKBp8/ufDToSxLzR4y+O/0H/t4bQtVNw==";
    const DOCS_DATE: &str = "Thu, 27 Apr 2017 00:51:12 GMT";

    fn at(date: &str, later: u64) -> SystemTime {
        httpdate::parse_http_date(date).unwrap() + Duration::from_secs(later)
    }

    #[test]
    fn the_documented_example_signs_as_the_docs_say() {
        let key = STANDARD.decode(DOCS_KEY).unwrap();
        let payload = string_to_sign("GET", "dbs", "dbs/ToDoList", DOCS_DATE);
        assert_eq!(payload, "get\ndbs\ndbs/ToDoList\nthu, 27 apr 2017 00:51:12 gmt\n\n");
        assert_eq!(sign(&key, &payload), "c09PEVJrgp2uQRkr934kFbTqhByc7TVr3OHyqlu+c+c=");
        assert_eq!(
            authorization_header(&key, "GET", "/dbs/ToDoList", DOCS_DATE),
            "type%3Dmaster%26ver%3D1.0%26sig%3Dc09PEVJrgp2uQRkr934kFbTqhByc7TVr3OHyqlu%2Bc%2Bc%3D"
        );
        let keys = Keys::new(DOCS_KEY, None).unwrap();
        // The docs print the header with lower-case escapes: both decode alike.
        let header = "type%3dmaster%26ver%3d1.0%26sig%3dc09PEVJrgp2uQRkr934kFbTqhByc7TVr3OHyqlu%2bc%2bc%3d";
        let request = SignedRequest {
            verb: "GET",
            path: "/dbs/ToDoList",
            authorization: Some(header),
            date: Some(DOCS_DATE),
            query: false,
        };
        assert_eq!(keys.authorize(&request, at(DOCS_DATE, 60)), Ok(Access::ReadWrite));
    }

    #[test]
    fn paths_give_the_resource_type_and_link_the_sdks_sign() {
        assert_eq!(resource_of("/"), ("", ""));
        assert_eq!(resource_of("/dbs"), ("dbs", ""));
        assert_eq!(resource_of("/dbs/d"), ("dbs", "dbs/d"));
        assert_eq!(resource_of("/dbs/d/colls/c/docs"), ("docs", "dbs/d/colls/c"));
        assert_eq!(resource_of("/offers/AQAAAIAHAAA="), ("offers", "AQAAAIAHAAA="));
        assert_eq!(resource_of("/offers"), ("offers", ""));
        assert_eq!(resource_of("/dbs/d/colls/c/operations/partitionkeydelete"), ("colls", "dbs/d/colls/c"));
        assert_eq!(resource_of("/dbs/d/colls/c/docs/a b+é"), ("docs", "dbs/d/colls/c/docs/a b+é"));
        assert_eq!(resource_of("/dbs/d/colls/c/pkranges"), ("pkranges", "dbs/d/colls/c"));
        assert_eq!(resource_of("/offers/"), ("offers", ""));
    }

    #[test]
    fn refusals_carry_the_services_status_and_words() {
        let keys = Keys::emulator();
        let key = STANDARD.decode(EMULATOR_KEY).unwrap();
        let now = at(DOCS_DATE, 0);
        let path = "/dbs/shop/colls/orders/docs/o1";
        let good = authorization_header(&key, "GET", path, DOCS_DATE);
        let request = |authorization, date, verb| SignedRequest { verb, path, authorization, date, query: false };

        let missing = keys.authorize(&request(None, Some(DOCS_DATE), "GET"), now).unwrap_err();
        assert_eq!((missing.status, missing.code), (401, "Unauthorized"));
        assert!(missing.message.starts_with("Required Header authorization is missing."), "{missing}");

        let other = STANDARD.decode(DOCS_KEY).unwrap();
        let wrong = authorization_header(&other, "GET", path, DOCS_DATE);
        let refused = keys.authorize(&request(Some(&wrong), Some(DOCS_DATE), "GET"), now).unwrap_err();
        assert_eq!(refused.status, 401);
        assert!(
            refused.message.ends_with(
                "Server used the following payload to sign: \
                 'get\\ndocs\\ndbs/shop/colls/orders/docs/o1\\nthu, 27 apr 2017 00:51:12 gmt\\n\\n'"
            ),
            "{refused}"
        );
        // Signed for another verb, path or date: refused alike.
        for (verb, date) in [("DELETE", DOCS_DATE), ("GET", "Thu, 27 Apr 2017 00:51:13 GMT")] {
            let e = keys.authorize(&request(Some(&good), Some(date), verb), at(DOCS_DATE, 0)).unwrap_err();
            assert_eq!(e.status, 401, "{verb} {date}");
        }
        for header in ["", "type=resource&ver=1.0&sig=abc", "type%3Dmaster%26ver%3D1.0%26sig%3D%ZZ", "sig=%%%"] {
            let e = keys.authorize(&request(Some(header), Some(DOCS_DATE), "GET"), now).unwrap_err();
            assert_eq!(e.status, 401, "{header:?}");
        }
        assert_eq!(keys.authorize(&request(Some(&good), Some(DOCS_DATE), "GET"), now), Ok(Access::ReadWrite));
    }

    #[test]
    fn a_date_outside_the_window_is_forbidden_in_the_services_words() {
        let keys = Keys::emulator();
        let key = STANDARD.decode(EMULATOR_KEY).unwrap();
        let header = authorization_header(&key, "GET", "/dbs", DOCS_DATE);
        let request = SignedRequest {
            verb: "GET",
            path: "/dbs",
            authorization: Some(&header),
            date: Some(DOCS_DATE),
            query: false,
        };
        assert!(keys.authorize(&request, at(DOCS_DATE, 15 * 60)).is_ok());
        let late = keys.authorize(&request, at(DOCS_DATE, 15 * 60 + 1)).unwrap_err();
        assert_eq!((late.status, late.code), (403, "Forbidden"));
        assert_eq!(
            late.message,
            "The authorization token is not valid at the current time. Please create another token and retry (token \
             start time: Thu, 27 Apr 2017 00:51:12 GMT, token expiry time: Thu, 27 Apr 2017 01:06:12 GMT, current \
             server time: Thu, 27 Apr 2017 01:06:13 GMT)."
        );
        // 4 minutes ahead of the server: accepted; 6.7 minutes (a recorded refusal): forbidden.
        let ahead = |secs| httpdate::parse_http_date(DOCS_DATE).unwrap() - Duration::from_secs(secs);
        assert!(keys.authorize(&request, ahead(240)).is_ok());
        assert_eq!(keys.authorize(&request, ahead(402)).unwrap_err().status, 403);
        // No date, or one that is no HTTP date (signed as sent): forbidden.
        for date in ["", "yesterday"] {
            let header = authorization_header(&key, "GET", "/dbs", date);
            let r = SignedRequest {
                verb: "GET",
                path: "/dbs",
                authorization: Some(&header),
                date: Some(date),
                query: false,
            };
            assert_eq!(keys.authorize(&r, at(DOCS_DATE, 0)).unwrap_err().status, 403, "{date:?}");
        }
    }

    #[test]
    fn the_read_only_key_reads_and_never_writes_and_lowercased_links_are_accepted() {
        let read_only = STANDARD.encode(b"a read-only key of the account");
        let keys = Keys::new(EMULATOR_KEY, Some(&read_only)).unwrap();
        let ro = STANDARD.decode(&read_only).unwrap();
        let now = at(DOCS_DATE, 1);
        let path = "/dbs/Shop/colls/Orders/docs";
        let get = authorization_header(&ro, "GET", path, DOCS_DATE);
        let r = SignedRequest { verb: "GET", path, authorization: Some(&get), date: Some(DOCS_DATE), query: false };
        assert_eq!(keys.authorize(&r, now), Ok(Access::ReadOnly));
        let post = authorization_header(&ro, "POST", path, DOCS_DATE);
        let w = SignedRequest { verb: "POST", path, authorization: Some(&post), date: Some(DOCS_DATE), query: false };
        assert_eq!(keys.authorize(&w, now).unwrap_err().status, 403);
        // The Python SDK signs a link it takes for resource ids in lower case.
        let master = STANDARD.decode(EMULATOR_KEY).unwrap();
        let payload = string_to_sign("GET", "docs", "dbs/shop/colls/orders", DOCS_DATE);
        let lowered = form_encode(&format!("type=master&ver=1.0&sig={}", sign(&master, &payload)));
        let r = SignedRequest { verb: "GET", path, authorization: Some(&lowered), date: Some(DOCS_DATE), query: false };
        assert_eq!(keys.authorize(&r, now), Ok(Access::ReadWrite));
        assert!(Keys::new("not base64!", None).is_err());
        assert!(Keys::new("", None).is_err());
    }

    #[test]
    fn a_rid_based_link_is_signed_by_its_last_rid_in_lower_case() {
        // The Python SDK replacing or deleting an item by its `_self`.
        let master = STANDARD.decode(EMULATOR_KEY).unwrap();
        let path = "/dbs/qHVdAA==/colls/qHVdAImeKAQ=/docs/qHVdAImeKAQBAAAAAAAAAA==";
        assert_eq!(signed_resource(path), ("docs", "qHVdAImeKAQBAAAAAAAAAA=="));
        assert_eq!(signed_resource("/dbs/qHVdAA==/colls/qHVdAImeKAQ=/pkranges"), ("pkranges", "qHVdAImeKAQ="));
        assert_eq!(signed_resource("/dbs/shop/colls/orders/docs/x"), ("docs", "dbs/shop/colls/orders/docs/x"));
        let payload = string_to_sign("DELETE", "docs", "qhvdaimekaqbaaaaaaaaaa==", DOCS_DATE);
        let header = form_encode(&format!("type=master&ver=1.0&sig={}", sign(&master, &payload)));
        let r =
            SignedRequest { verb: "DELETE", path, authorization: Some(&header), date: Some(DOCS_DATE), query: false };
        assert_eq!(Keys::emulator().authorize(&r, at(DOCS_DATE, 1)), Ok(Access::ReadWrite));
    }
}
