//! Refusals on the wire, as the service sends them: the status, the `x-ms-substatus` header and
//! a body `{"code": "<Name>", "message": "<text>"}` (`../shared/research/gateway-python.md` §3.5;
//! the SDKs raise their typed errors from the status and substatus).
//!
//! A query the service refuses carries its errors as JSON inside the message, after `Message: `
//! and before the activity id, as recorded in Azure/azure-cosmos-dotnet-v2#507 and
//! thomaslevesque/CosmosDBStudio#21:
//! `Message: {"errors":[{"severity":"Error","location":{"start":51,"end":56},"code":"SC1001",
//! "message":"Syntax error, incorrect syntax near 'Group'."}]}\r\nActivityId: <id>, ...`.
//! Locations count UTF-16 code units of the query text (the SDKs are .NET, Java and JavaScript
//! strings); the recorded cases are ASCII, where every unit counts alike, so the unit is inferred.

use cosmoql::Error;
use serde_json::json;

use crate::auth::AuthError;

/// A refusal ready to send.
#[derive(Debug, Clone, PartialEq)]
pub struct WireError {
    /// The HTTP status.
    pub status: u16,
    /// The `x-ms-substatus` header (0: none).
    pub substatus: u32,
    /// `x-ms-retry-after-ms`, on a 429.
    pub retry_after_ms: Option<u64>,
    /// `x-ms-request-charge`: what the refused request still cost.
    pub request_charge: f64,
    /// The JSON body.
    pub body: String,
}

/// The service's `code` for a status (the name of the status in the service's words).
pub fn code_name(status: u16) -> &'static str {
    match status {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        408 => "RequestTimeout",
        409 => "Conflict",
        410 => "Gone",
        412 => "PreconditionFailed",
        413 => "RequestEntityTooLarge",
        429 => "TooManyRequests",
        449 => "RetryWith",
        503 => "ServiceUnavailable",
        _ => "InternalServerError",
    }
}

/// The body for `status` with `message`, the activity id appended as the service appends it.
fn body(status: u16, message: &str, activity_id: &str) -> String {
    let message = format!("{message}\r\nActivityId: {activity_id}, cosmoql/{}", env!("CARGO_PKG_VERSION"));
    json!({ "code": code_name(status), "message": message }).to_string()
}

/// `byte` (an offset into `text`) as a count of UTF-16 code units.
fn utf16_offset(text: &str, byte: usize) -> usize {
    text.get(..byte.min(text.len())).map_or(0, |prefix| prefix.encode_utf16().count())
}

/// The refusal the service sends for an error of the embedded API.
pub fn from_error(error: &Error, activity_id: &str) -> WireError {
    let status = error.status().unwrap_or(400);
    let message = match error {
        Error::Query { sql, error: e } if e.code.is_some() => {
            // In the service's order: severity, location, code, message.
            let mut entry = serde_json::Map::default();
            entry.insert("severity".into(), json!("Error"));
            if let Some(span) = e.span {
                let location = json!({ "start": utf16_offset(sql, span.start), "end": utf16_offset(sql, span.end) });
                entry.insert("location".into(), location);
            }
            entry.insert("code".into(), json!(e.code));
            entry.insert("message".into(), json!(e.message));
            format!("Message: {}", json!({ "errors": [entry] }))
        }
        Error::Query { error: e, .. } => e.message.clone(),
        Error::Storage(e) | Error::Batch { error: e, .. } => e.message.clone(),
        Error::Serialization(m) => m.clone(),
        // As the service words a script's failure: `Message: {"Errors":["Encountered exception
        // while executing function. ..."]}` (docs/design/server-side-js-research.md, 2.3).
        Error::Script(f) => format!("Message: {}", json!({ "Errors": [f.message] })),
    };
    WireError {
        status,
        substatus: error.substatus(),
        retry_after_ms: error.retry_after_ms(),
        request_charge: error.request_charge(),
        body: body(status, &message, activity_id),
    }
}

/// A refusal the gateway itself makes (a malformed request, an unknown resource), with no charge.
pub fn refusal(status: u16, substatus: u32, message: &str, activity_id: &str) -> WireError {
    WireError { status, substatus, retry_after_ms: None, request_charge: 0.0, body: body(status, message, activity_id) }
}

/// The refusal for a request whose authorization failed.
pub fn from_auth(error: &AuthError, activity_id: &str) -> WireError {
    WireError {
        status: error.status,
        substatus: 0,
        retry_after_ms: None,
        request_charge: 0.0,
        body: body(error.status, &error.message, activity_id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cosmoql::{ContainerClient, ContainerProperties, PartitionKey, QueryOptions, Value};

    fn container() -> ContainerClient {
        ContainerClient::standalone(ContainerProperties::new("c", "/k").unwrap()).unwrap()
    }

    fn refusal(sql: &str) -> WireError {
        let e = container().query_items_blocking::<Value>(sql, QueryOptions::default()).unwrap_err();
        from_error(&e, "a1")
    }

    #[test]
    fn a_refused_query_carries_its_errors_as_the_service_writes_them() {
        // Azure/azure-cosmos-dotnet-v2#507: `Group` is a keyword.
        let sql = "SELECT * FROM c WHERE c.Group=\"API\"";
        let wire = refusal(sql);
        assert_eq!((wire.status, wire.substatus), (400, 0));
        let body: serde_json::Value = serde_json::from_str(&wire.body).unwrap();
        assert_eq!(body["code"], "BadRequest");
        let message = body["message"].as_str().unwrap();
        let errors = message.strip_prefix("Message: ").and_then(|m| m.split("\r\nActivityId: ").next()).unwrap();
        let errors: serde_json::Value = serde_json::from_str(errors).unwrap();
        assert_eq!(
            errors,
            json!({"errors": [{"severity": "Error", "location": {"start": 24, "end": 29}, "code": "SC1001",
                "message": "Syntax error, incorrect syntax near 'Group'."}]})
        );
        assert!(message.ends_with(&format!("ActivityId: a1, cosmoql/{}", env!("CARGO_PKG_VERSION"))), "{message}");
        // Locations count UTF-16 units: 'é' is one unit, two bytes; '😀' two units, four bytes.
        let wire = refusal("SELECT 'é😀' FROM c WHERE c.Group = 1");
        let body: serde_json::Value = serde_json::from_str(&wire.body).unwrap();
        let message = body["message"].as_str().unwrap();
        assert!(
            message.starts_with(r#"Message: {"errors":[{"severity":"Error","location":{"start":28,"end":33},"code""#),
            "{message}"
        );
    }

    #[test]
    fn store_refusals_keep_their_status_substatus_and_charge() {
        let c = container();
        let missing = c.read_item::<Value>(PartitionKey::from("p"), "nope").unwrap_err();
        let wire = from_error(&missing, "a2");
        assert_eq!((wire.status, wire.substatus), (404, 0));
        let body: serde_json::Value = serde_json::from_str(&wire.body).unwrap();
        assert_eq!(body["code"], "NotFound");
        assert!(wire.request_charge > 0.0);
        let auth = crate::auth::Keys::emulator()
            .authorize(
                &crate::auth::SignedRequest { verb: "GET", path: "/", authorization: None, date: None, query: false },
                std::time::SystemTime::now(),
            )
            .unwrap_err();
        let wire = from_auth(&auth, "a3");
        assert_eq!(wire.status, 401);
        assert!(wire
            .body
            .starts_with(r#"{"code":"Unauthorized","message":"Required Header authorization is missing."#));
    }
}
