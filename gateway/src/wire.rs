//! A request as the handlers see it (decoded path, headers, the whole body, already bounded and
//! authorized) and the reply they build: the seam between the HTTP server and the resources,
//! so every handler is a plain function, tested without a socket.

use bytes::Bytes;
use cosmoql::Value;
use hyper::http::{HeaderMap, Method};

use crate::binary_json;
use crate::errors::{self, WireError};

/// One request.
#[derive(Debug, Clone)]
pub struct Request {
    /// The verb.
    pub method: Method,
    /// The path's segments, percent-decoded (`/dbs/a%20b/` is `["dbs", "a b"]`).
    pub segments: Vec<String>,
    /// The headers.
    pub headers: HeaderMap,
    /// The body, whole.
    pub body: Bytes,
    /// The client's `x-ms-activity-id` (or one made for it): echoed, and in error messages.
    pub activity_id: String,
    /// The scheme, host and port the client reached (`http://127.0.0.1:8081`).
    pub endpoint: String,
}

impl Request {
    /// A header's value, if present and text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// A boolean header: the SDKs send `True`, `true` and `False`.
    pub fn flag(&self, name: &str) -> bool {
        self.header(name).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    }

    /// The body as a JSON document, sent as text or in Cosmos binary JSON (the Rust SDK's
    /// default for item bodies), whatever the content type says (the Python SDK 4.9 sends a
    /// patch without one); 400 if it is neither.
    pub fn json_body(&self) -> Result<Value, WireError> {
        if binary_json::is_binary(&self.body) {
            let decoded = binary_json::decode(&self.body)
                .map_err(|e| self.bad_request(&format!("The request body is not valid binary JSON: {e}")))?;
            return cosmoql::value::parse_json(&decoded.to_string())
                .map_err(|e| self.bad_request(&format!("The request body is not a document: {e}")));
        }
        cosmoql::value::parse_json_slice(&self.body)
            .map_err(|e| self.bad_request(&format!("The request body is not valid JSON: {e}")))
    }

    /// A 400 for this request.
    pub fn bad_request(&self, message: &str) -> WireError {
        errors::refusal(400, 0, message, &self.activity_id)
    }

    /// `x-ms-max-item-count`: `None` when absent, `Some(-1)` for "as many as fit".
    pub fn max_item_count(&self) -> Result<Option<i64>, WireError> {
        match self.header("x-ms-max-item-count") {
            None => Ok(None),
            Some(text) => match text.trim().parse::<i64>() {
                Ok(n) if n == -1 || n > 0 => Ok(Some(n)),
                _ => Err(self.bad_request(&format!("Invalid value '{text}' for header x-ms-max-item-count."))),
            },
        }
    }
}

/// A reply: status, headers, body.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// Headers beyond the ones every reply carries (the server adds those).
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Bytes,
}

impl Reply {
    /// A reply with a JSON body.
    pub fn json(status: u16, body: &serde_json::Value) -> Reply {
        Reply { status, headers: Vec::new(), body: Bytes::from(body.to_string()) }
    }

    /// A reply whose body is a document of the store (an item, a page of results).
    pub fn document(status: u16, body: &Value) -> Reply {
        let text = cosmoql::value::to_json_string(body).unwrap_or_default();
        Reply { status, headers: Vec::new(), body: Bytes::from(text) }
    }

    /// A reply whose body is JSON text already written.
    pub fn json_text(status: u16, body: String) -> Reply {
        Reply { status, headers: Vec::new(), body: Bytes::from(body) }
    }

    /// A feed page (a query's or the change feed's): `{"_rid", <feed>: [...], "_count"}` around
    /// the items' JSON text, as written, with `x-ms-item-count`.
    pub fn feed<S: AsRef<str>>(rid: &str, feed: &str, items: &[S]) -> Reply {
        let text = |s: &str| cosmoql::value::to_json_string(&Value::from(s)).unwrap_or_default();
        let size = items.iter().map(|item| item.as_ref().len() + 1).sum::<usize>();
        let mut body = String::with_capacity(size + rid.len() + feed.len() + 40);
        body.push_str("{\"_rid\":");
        body.push_str(&text(rid));
        body.push(',');
        body.push_str(&text(feed));
        body.push_str(":[");
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                body.push(',');
            }
            body.push_str(item.as_ref());
        }
        body.push_str("],\"_count\":");
        body.push_str(&items.len().to_string());
        body.push('}');
        Reply::json_text(200, body).with("x-ms-item-count", items.len().to_string())
    }

    /// A reply without a body.
    pub fn empty(status: u16) -> Reply {
        Reply { status, headers: Vec::new(), body: Bytes::new() }
    }

    /// The same reply with one more header.
    pub fn with(mut self, name: &'static str, value: impl Into<String>) -> Reply {
        self.headers.push((name, value.into()));
        self
    }

    /// A header's value, if set.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    /// A refusal.
    pub fn error(error: WireError) -> Reply {
        let mut reply = Reply { status: error.status, headers: Vec::new(), body: Bytes::from(error.body) };
        if error.substatus != 0 {
            reply = reply.with("x-ms-substatus", error.substatus.to_string());
        }
        if let Some(ms) = error.retry_after_ms {
            reply = reply.with("x-ms-retry-after-ms", ms.to_string());
        }
        reply.with("x-ms-request-charge", charge_text(error.request_charge))
    }
}

/// Seconds since the epoch now.
pub fn now_seconds() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// A request charge as the service writes it (a decimal number; the SDKs parse it as a float).
pub fn charge_text(charge: f64) -> String {
    if charge.is_finite() && charge >= 0.0 {
        let rounded = (charge * 100.0).round() / 100.0;
        format!("{rounded}")
    } else {
        "0".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(headers: &[(&'static str, &str)], body: &str) -> Request {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(*name, value.parse().unwrap());
        }
        Request {
            method: Method::POST,
            segments: vec![],
            headers: map,
            body: Bytes::from(body.to_string()),
            activity_id: "a".into(),
            endpoint: "http://127.0.0.1:1".into(),
        }
    }

    #[test]
    fn flags_read_as_the_sdks_write_them() {
        let r = request(&[("x-ms-documentdb-isquery", "True"), ("x-ms-documentdb-is-upsert", "False")], "");
        assert!(r.flag("x-ms-documentdb-isquery"));
        assert!(!r.flag("x-ms-documentdb-is-upsert"));
        assert!(!r.flag("absent"));
    }

    #[test]
    fn max_item_count_takes_minus_one_and_positive_numbers_only() {
        assert_eq!(request(&[], "").max_item_count().unwrap(), None);
        assert_eq!(request(&[("x-ms-max-item-count", "-1")], "").max_item_count().unwrap(), Some(-1));
        assert_eq!(request(&[("x-ms-max-item-count", "7")], "").max_item_count().unwrap(), Some(7));
        for bad in ["0", "-2", "x", "99999999999999999999"] {
            assert_eq!(request(&[("x-ms-max-item-count", bad)], "").max_item_count().unwrap_err().status, 400);
        }
    }

    #[test]
    fn a_body_that_is_not_json_is_a_400() {
        assert_eq!(request(&[], "{\"id\":").json_body().unwrap_err().status, 400);
        assert_eq!(request(&[], "{\"id\":\"a\"}").json_body().unwrap().get("id").as_str(), Some("a"));
    }

    #[test]
    fn charges_are_decimal_text() {
        assert_eq!(charge_text(1.0), "1");
        assert_eq!(charge_text(2.857), "2.86");
        assert_eq!(charge_text(f64::NAN), "0");
    }
}
