//! Documents: create, upsert, read, replace, delete, patch (with `If-Match`, `If-None-Match` and
//! a patch's condition) and transactional batches, with the headers the SDKs read back (etag,
//! request charge, session token, the serving range).
//!
//! Facts (`../shared/research/gateway-python.md` §3.2-3.5): the key comes in
//! `x-ms-documentdb-partitionkey` as a JSON array (`[]` for a container without a key, `[{}]`
//! for an item without the key's property); a key that differs from the body's is 400/1001; an
//! upsert is a POST with `x-ms-documentdb-is-upsert`; `Prefer: return=minimal` answers without
//! the body; a batch answers one result per operation, the failed one with its status and the
//! others with 424.

use cosmoql::store::BatchOperation;
use cosmoql::{
    ItemOptions, ItemResponse, JsonText, PartitionKey, PatchOperation, QueryOptions, TransactionalBatch, Value,
};
use serde_json::json;

use crate::errors::{self, WireError};
use crate::resources::{to_json, Container};
use crate::wire::{charge_text, Reply, Request};

/// The service's message for a key header that differs from the document's key (400/1001).
pub const WRONG_KEY: &str =
    "PartitionKey extracted from document doesn't match the one specified in the header. Learn \
                             more: https://aka.ms/CosmosDB/sql/errors/wrong-pk-value";

/// The service's message for an item operation without a key on a container that has one.
pub const KEY_REQUIRED: &str = "PartitionKey value must be supplied for this operation.";

/// The key in `x-ms-documentdb-partitionkey`, if the request has one, as `container` reads it.
pub fn header_key(container: &Container, request: &Request) -> Result<Option<PartitionKey>, WireError> {
    Ok(raw_header_key(request)?.map(|key| container_key(container, key)))
}

/// The key in `x-ms-documentdb-partitionkey` as written.
fn raw_header_key(request: &Request) -> Result<Option<PartitionKey>, WireError> {
    let Some(text) = request.header("x-ms-documentdb-partitionkey") else { return Ok(None) };
    let bad = || request.bad_request(&format!("The partition key header value '{text}' is not valid JSON array."));
    let Value::Array(parts) = cosmoql::value::parse_json(text).map_err(|_| bad())? else { return Err(bad()) };
    // `{}` stands for the undefined key (an item without the key's property).
    let parts: Vec<Value> = parts
        .iter()
        .map(|p| match p {
            Value::Object(m) if m.is_empty() => Value::Undefined,
            other => other.clone(),
        })
        .collect();
    PartitionKey::from_values(&parts).map(Some).map_err(|e| errors::from_error(&e.into(), &request.activity_id))
}

/// The key in the header as the container reads it: a container without a key has one logical
/// partition, which the Python SDK names `[{}]` (the key of an item without the key's property,
/// since there is no property) and others `[]`.
fn container_key(container: &Container, key: PartitionKey) -> PartitionKey {
    if container.client.partition_key_definition().is_none() && key == PartitionKey::undefined() {
        PartitionKey::none()
    } else {
        key
    }
}

/// The key an operation on one item addresses: the header's, or none for a container without a
/// key; 400 when a keyed container's request has none.
fn item_key(container: &Container, request: &Request) -> Result<PartitionKey, WireError> {
    match header_key(container, request)? {
        Some(key) => Ok(key),
        None if container.client.partition_key_definition().is_none() => Ok(PartitionKey::none()),
        None => Err(request.bad_request(KEY_REQUIRED)),
    }
}

/// The preconditions of a write: `If-Match` and a patch's condition.
fn options_of(request: &Request, condition: Option<String>) -> ItemOptions {
    // The SDKs join several trigger names with "," (research, section 3).
    let names = |header: &str| -> Vec<String> {
        request.header(header).map_or_else(Vec::new, |v| {
            v.split(',').map(str::trim).filter(|n| !n.is_empty()).map(str::to_string).collect()
        })
    };
    ItemOptions {
        if_match: request.header("if-match").map(str::to_string),
        condition,
        pre_triggers: names("x-ms-documentdb-pre-trigger-include"),
        post_triggers: names("x-ms-documentdb-post-trigger-include"),
    }
}

/// The reply to an item operation: the item (unless the client asked for none), its etag and
/// the data-plane headers.
fn item_reply<B: Body>(container: &Container, request: &Request, key: &PartitionKey, r: ItemResponse<B>) -> Reply {
    let minimal = request.header("prefer").is_some_and(|p| p.eq_ignore_ascii_case("return=minimal"));
    let reply = if minimal || r.status == 204 { Reply::empty(r.status) } else { r.item.reply(r.status) };
    let reply = if r.etag.is_empty() { reply } else { reply.with("etag", r.etag.clone()) };
    data_plane(container, key, reply.with("x-ms-request-charge", charge_text(r.request_charge)))
}

/// An item as a reply's body: a value, or its JSON text (a point read, written from the stored
/// bytes).
trait Body {
    fn reply(self, status: u16) -> Reply;
}

impl Body for Value {
    fn reply(self, status: u16) -> Reply {
        Reply::document(status, &self)
    }
}

impl Body for JsonText {
    fn reply(self, status: u16) -> Reply {
        Reply::json_text(status, self.into_string())
    }
}

/// The headers of every data-plane reply: the serving range, the session token and the content
/// paths (without `x-ms-alt-content-path` the Python SDK skips session tracking).
pub fn data_plane(container: &Container, key: &PartitionKey, reply: Reply) -> Reply {
    let range = container.range_of(key).unwrap_or(0);
    session_headers(container, range, reply)
}

/// The session token of `range` now, and the content paths.
pub fn session_headers(container: &Container, range: u32, reply: Reply) -> Reply {
    reply
        .with("x-ms-session-token", format!("{range}:-1#{}", container.client.last_lsn()))
        .with("x-ms-documentdb-partitionkeyrangeid", range.to_string())
        .with("x-ms-alt-content-path", format!("dbs/{}/colls/{}", container.database, container.client.id()))
        .with("x-ms-content-path", container.rid.clone())
}

/// The id of the item whose `_rid` is `rid` (a request addressed by `_self`), looked up in the
/// request's logical partition (or the whole container without a key header); `None` when
/// `rid` is no document rid, 404 when no item has it.
pub fn id_of_rid(container: &Container, rid: &str, request: &Request) -> Result<Option<String>, WireError> {
    if !matches!(cosmoql::rid::Rid::parse(rid), Some(cosmoql::rid::Rid::Document { .. })) {
        return Ok(None);
    }
    let options = QueryOptions { partition_key: header_key(container, request)?, ..QueryOptions::default() }
        .parameter("rid", Value::from(rid));
    let ids: Vec<String> = container
        .client
        .query_items_blocking("SELECT VALUE c.id FROM c WHERE c._rid = @rid", options)
        .map_err(|e| errors::from_error(&e, &request.activity_id))?;
    match ids.into_iter().next() {
        Some(id) => Ok(Some(id)),
        None => Err(crate::resources::not_found(request, &format!("Resource Not Found: no item has the rid `{rid}`"))),
    }
}

/// `POST .../docs`: create, or upsert with `x-ms-documentdb-is-upsert`.
pub fn create(container: &Container, request: &Request) -> Result<Reply, WireError> {
    let item = request.json_body()?;
    let fail = |e: cosmoql::Error| errors::from_error(&e, &request.activity_id);
    let body_key = container.client.partition_key_of(&item).map_err(fail)?;
    if let Some(key) = header_key(container, request)? {
        if key != body_key {
            return Err(errors::refusal(400, 1001, WRONG_KEY, &request.activity_id));
        }
    }
    let response = if request.flag("x-ms-documentdb-is-upsert") {
        container.client.upsert_item_with::<Value>(&item, &options_of(request, None))
    } else {
        container.client.create_item_with::<Value>(&item, &options_of(request, None))
    };
    Ok(item_reply(container, request, &body_key, response.map_err(fail)?))
}

/// The service's answer to a read whose session token is ahead of the server (a write the client
/// saw that this server has not made: a token from another server, or from before an in-memory
/// server restarted): 404 with substatus 1002, ReadSessionNotAvailable.
pub const SESSION_NOT_AVAILABLE: &str = "The read session is not available for the input session token.";

/// Refuses a read whose `x-ms-session-token` names a log sequence number past the container's
/// (each `range:version#lsn` entry, the global LSN after the first `#`).
pub fn check_session(container: &Container, request: &Request) -> Result<(), WireError> {
    let Some(token) = request.header("x-ms-session-token") else { return Ok(()) };
    let last = container.client.last_lsn();
    let ahead = token
        .split(',')
        .filter_map(|entry| entry.split('#').nth(1))
        .filter_map(|lsn| lsn.trim().parse::<u64>().ok())
        .any(|lsn| lsn > last);
    if ahead {
        return Err(errors::refusal(404, 1002, SESSION_NOT_AVAILABLE, &request.activity_id));
    }
    Ok(())
}

/// `GET .../docs/{id}`: a point read; 304 when `If-None-Match` names the current etag.
pub fn read(container: &Container, id: &str, request: &Request) -> Result<Reply, WireError> {
    let key = item_key(container, request)?;
    check_session(container, request)?;
    let r = container
        .client
        .read_item::<JsonText>(key.clone(), id)
        .map_err(|e| errors::from_error(&e, &request.activity_id))?;
    if request.header("if-none-match").is_some_and(|etag| etag == r.etag) {
        let reply =
            Reply::empty(304).with("etag", r.etag.clone()).with("x-ms-request-charge", charge_text(r.request_charge));
        return Ok(data_plane(container, &key, reply));
    }
    Ok(item_reply(container, request, &key, r))
}

/// `PUT .../docs/{id}`: replace (with `If-Match`).
pub fn replace(container: &Container, id: &str, request: &Request) -> Result<Reply, WireError> {
    let key = item_key(container, request)?;
    let item = request.json_body()?;
    let fail = |e: cosmoql::Error| errors::from_error(&e, &request.activity_id);
    if container.client.partition_key_of(&item).map_err(fail)? != key {
        return Err(errors::refusal(400, 1001, WRONG_KEY, &request.activity_id));
    }
    let r = container
        .client
        .replace_item_with::<Value>(key.clone(), id, &item, &options_of(request, None))
        .map_err(fail)?;
    Ok(item_reply(container, request, &key, r))
}

/// `DELETE .../docs/{id}` (with `If-Match`).
pub fn delete(container: &Container, id: &str, request: &Request) -> Result<Reply, WireError> {
    let key = item_key(container, request)?;
    let r = container
        .client
        .delete_item_with(key.clone(), id, &options_of(request, None))
        .map_err(|e| errors::from_error(&e, &request.activity_id))?;
    let reply = Reply::empty(204).with("x-ms-request-charge", charge_text(r.request_charge));
    Ok(data_plane(container, &key, reply))
}

/// `PATCH .../docs/{id}`: `{"operations": [...], "condition": "FROM c WHERE ..."}` (with
/// `If-Match`).
pub fn patch(container: &Container, id: &str, request: &Request) -> Result<Reply, WireError> {
    let key = item_key(container, request)?;
    let body = request.json_body()?;
    let fail = |e: cosmoql::Error| errors::from_error(&e, &request.activity_id);
    // `{"operations": [...], "condition": ...}`, or the operations alone (the JavaScript SDK).
    let operations = match &body {
        Value::Array(_) => patch_operations(&body, request)?,
        _ => patch_operations(body.get("operations"), request)?,
    };
    let condition = match body.get("condition") {
        Value::Undefined | Value::Null => None,
        Value::String(s) => Some(s.to_string()),
        _ => return Err(request.bad_request("The patch condition must be a string.")),
    };
    let r = container
        .client
        .patch_item_with::<Value>(key.clone(), id, &operations, &options_of(request, condition))
        .map_err(fail)?;
    Ok(item_reply(container, request, &key, r))
}

/// The operations of a patch body; 400 unless 1 to 10 well-formed operations (the service's
/// bound).
fn patch_operations(v: &Value, request: &Request) -> Result<Vec<PatchOperation>, WireError> {
    let Value::Array(ops) = v else {
        return Err(request.bad_request("The patch request body must have an `operations` array."));
    };
    if ops.is_empty() || ops.len() > 10 {
        return Err(request.bad_request("Patch request has more than 10 operations or none."));
    }
    ops.iter()
        .map(|op| PatchOperation::from_json(op).map_err(|e| errors::from_error(&e.into(), &request.activity_id)))
        .collect()
}

/// `POST .../operations/partitionkeydelete`: deletes the items of the header's logical
/// partition.
pub fn delete_partition(container: &Container, request: &Request) -> Result<Reply, WireError> {
    let key = item_key(container, request)?;
    container.client.delete_partition_items(key.clone()).map_err(|e| errors::from_error(&e, &request.activity_id))?;
    Ok(data_plane(container, &key, Reply::empty(200)))
}

/// The most operations a transactional batch may hold (the service's limit).
pub const MAX_BATCH_OPERATIONS: usize = 100;

/// `POST .../docs` with `x-ms-cosmos-is-batch-request`: a transactional batch on the header's
/// logical partition, or, with `x-ms-cosmos-batch-atomic: false`, a bulk request.
pub fn batch(container: &Container, request: &Request) -> Result<Reply, WireError> {
    if request.header("x-ms-cosmos-batch-atomic").is_some_and(|v| v.trim().eq_ignore_ascii_case("false")) {
        return bulk(container, request);
    }
    let key = item_key(container, request)?;
    let Value::Array(ops) = request.json_body()? else {
        return Err(request.bad_request("A batch request body must be a JSON array of operations."));
    };
    if ops.is_empty() || ops.len() > MAX_BATCH_OPERATIONS {
        return Err(request.bad_request(&format!(
            "A batch must have between 1 and {MAX_BATCH_OPERATIONS} operations, not {}.",
            ops.len()
        )));
    }
    let mut batch = TransactionalBatch::new();
    for op in ops.iter() {
        batch = batch.push(batch_operation(op, request)?);
    }
    match container.client.execute_transactional_batch(key.clone(), batch) {
        Ok(responses) => {
            let charge: f64 = responses.iter().map(|r| r.request_charge).sum();
            let results: Vec<serde_json::Value> = responses.iter().map(operation_result).collect();
            let reply =
                Reply::json(200, &serde_json::Value::Array(results)).with("x-ms-request-charge", charge_text(charge));
            Ok(data_plane(container, &key, reply))
        }
        Err(cosmoql::Error::Batch { index, error }) => {
            // The failed operation's status, 424 (failed dependency) for every other one.
            let results: Vec<serde_json::Value> = (0..ops.len())
                .map(|i| {
                    if i == index {
                        json!({"statusCode": error.status_code(), "subStatusCode": error.kind.substatus().unwrap_or(0),
                               "requestCharge": error.request_charge})
                    } else {
                        json!({"statusCode": 424, "requestCharge": 0})
                    }
                })
                .collect();
            let reply = Reply::json(207, &serde_json::Value::Array(results))
                .with("x-ms-request-charge", charge_text(error.request_charge));
            Ok(data_plane(container, &key, reply))
        }
        Err(e) => Err(errors::from_error(&e, &request.activity_id)),
    }
}

/// A bulk request (the JavaScript and .NET SDKs' bulk mode: `x-ms-cosmos-batch-atomic: false`):
/// operations of any logical partitions, each with its key as JSON text in `partitionKey`, each
/// applied on its own; one result per operation, in order, a failed one failing only itself.
fn bulk(container: &Container, request: &Request) -> Result<Reply, WireError> {
    let Value::Array(ops) = request.json_body()? else {
        return Err(request.bad_request("A bulk request body must be a JSON array of operations."));
    };
    if ops.is_empty() || ops.len() > MAX_BATCH_OPERATIONS {
        return Err(request.bad_request(&format!(
            "A bulk request must have between 1 and {MAX_BATCH_OPERATIONS} operations, not {}.",
            ops.len()
        )));
    }
    let mut results = Vec::with_capacity(ops.len());
    let mut charge = 0.0;
    for op in ops.iter() {
        let key = match op.get("partitionKey") {
            Value::String(text) => PartitionKey::parse_json(text)
                .map(|key| container_key(container, key))
                .map_err(|e| errors::from_error(&e.into(), &request.activity_id)),
            _ if container.client.partition_key_definition().is_none() => Ok(PartitionKey::none()),
            _ => Err(request.bad_request(KEY_REQUIRED)),
        };
        let outcome = key.and_then(|key| {
            let operation = batch_operation(op, request)?;
            container
                .client
                .execute_transactional_batch(key, TransactionalBatch::new().push(operation))
                .map_err(|e| errors::from_error(&e, &request.activity_id))
        });
        results.push(match outcome {
            Ok(responses) => {
                charge += responses[0].request_charge;
                operation_result(&responses[0])
            }
            Err(e) => {
                charge += e.request_charge;
                json!({"statusCode": e.status, "subStatusCode": e.substatus, "requestCharge": e.request_charge})
            }
        });
    }
    Ok(Reply::json(200, &serde_json::Value::Array(results)).with("x-ms-request-charge", charge_text(charge)))
}

/// The result of one operation of a batch or bulk request, as the SDKs read it.
fn operation_result(r: &ItemResponse<Value>) -> serde_json::Value {
    let mut entry = json!({"statusCode": r.status, "requestCharge": r.request_charge});
    if !r.etag.is_empty() {
        entry["eTag"] = json!(r.etag);
    }
    if !r.item.is_undefined() {
        entry["resourceBody"] = to_json(&r.item);
    }
    entry
}

/// One operation of a batch body (`{"operationType", "id", "resourceBody", "ifMatch"}`).
fn batch_operation(op: &Value, request: &Request) -> Result<BatchOperation, WireError> {
    let if_match = op.get("ifMatch").as_str().map(str::to_string);
    let body = || match op.get("resourceBody") {
        Value::Object(_) => Ok(op.get("resourceBody").clone()),
        _ => Err(request.bad_request("A batch operation needs a `resourceBody` object.")),
    };
    let id = || {
        op.get("id").as_str().map(str::to_string).ok_or_else(|| request.bad_request("A batch operation needs an `id`."))
    };
    let kind = op.get("operationType").as_str().unwrap_or_default();
    Ok(match kind {
        "Create" => BatchOperation::Create { item: body()? },
        "Upsert" => BatchOperation::Upsert { item: body()?, if_match },
        "Replace" => BatchOperation::Replace { id: id()?, item: body()?, if_match },
        "Delete" => BatchOperation::Delete { id: id()?, if_match },
        "Read" => BatchOperation::Read { id: id()? },
        "Patch" => BatchOperation::Patch {
            id: id()?,
            operations: patch_operations(op.get("resourceBody").get("operations"), request)?,
            if_match,
        },
        other => return Err(request.bad_request(&format!("Unknown batch operation type '{other}'."))),
    })
}
