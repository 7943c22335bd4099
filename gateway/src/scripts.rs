//! Server-side JavaScript over REST (issue 26): a container's `sprocs`, `triggers` and `udfs`
//! (create, read, replace, delete, list and query, as the service's resources with `id`, `body`,
//! a trigger's `triggerType` and `triggerOperation`, and `_rid`, `_self`, `_etag`, `_ts`), and
//! executing a stored procedure: a POST to its link with the parameters as a JSON array, the
//! logical partition in `x-ms-documentdb-partitionkey`, and its `console.log` in
//! `x-ms-documentdb-script-log-results` when `x-ms-documentdb-script-enable-logging` is `true`
//! (`docs/design/server-side-js-research.md`, sections 1.11 and 5).

use cosmoql::rid::Rid;
use cosmoql::value::Value;
use cosmoql::{ProcedureOptions, Script, ScriptKind, TriggerOperation, TriggerType};
use hyper::Method;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::json;

use crate::errors::{self, WireError};
use crate::items::{data_plane, header_key};
use crate::resources::Container;
use crate::wire::{Reply, Request};

/// What `encodeURIComponent` leaves as it is (the SDKs' tests compare the log with it).
const URI_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// The kind of script a path segment names.
pub fn kind_of(segment: &str) -> Option<ScriptKind> {
    Some(match segment {
        "sprocs" => ScriptKind::StoredProcedure,
        "triggers" => ScriptKind::Trigger,
        "udfs" => ScriptKind::UserDefinedFunction,
        _ => return None,
    })
}

fn segment(kind: ScriptKind) -> &'static str {
    match kind {
        ScriptKind::StoredProcedure => "sprocs",
        ScriptKind::Trigger => "triggers",
        ScriptKind::UserDefinedFunction => "udfs",
    }
}

/// The list's name in a feed (`{"StoredProcedures": [...]}`).
fn feed(kind: ScriptKind) -> &'static str {
    match kind {
        ScriptKind::StoredProcedure => "StoredProcedures",
        ScriptKind::Trigger => "Triggers",
        ScriptKind::UserDefinedFunction => "UserDefinedFunctions",
    }
}

/// A script as the service's resource.
fn document(container: &Container, script: &Script) -> serde_json::Value {
    let (database, collection) = match Rid::parse(&container.rid) {
        Some(Rid::Collection { database, collection }) => (database, collection),
        _ => (0, 0),
    };
    // Scripts are children of the collection, numbered apart from its items.
    let rid = Rid::Document { database, collection, document: script.rid }.encode().unwrap_or_default();
    let mut doc = json!({
        "id": script.id,
        "body": script.body,
        "_rid": rid,
        "_self": format!("dbs/{}/colls/{}/{}/{rid}/", container.db_rid, container.rid, segment(script.kind)),
        "_etag": script.etag_text(),
        "_ts": script.ts,
    });
    if let (Some((ty, op)), Some(map)) = (script.trigger, doc.as_object_mut()) {
        map.insert("triggerType".into(), json!(ty.name()));
        map.insert("triggerOperation".into(), json!(op.name()));
    }
    doc
}

fn documents(container: &Container, kind: ScriptKind) -> Vec<serde_json::Value> {
    container.client.list_scripts(kind).iter().map(|s| document(container, s)).collect()
}

/// `GET .../sprocs`: the container's scripts of a kind.
pub fn list(container: &Container, kind: ScriptKind) -> Reply {
    crate::offers::list(&container.rid, feed(kind), documents(container, kind))
}

/// `POST .../sprocs` with a query: the scripts the query selects.
pub fn query(container: &Container, kind: ScriptKind, request: &Request) -> Result<Reply, WireError> {
    crate::offers::query(&container.rid, feed(kind), documents(container, kind), request)
}

/// A script from a request's body: `id`, `body` and a trigger's type and operation.
fn script_of(kind: ScriptKind, request: &Request, id_in_path: Option<&str>) -> Result<Script, WireError> {
    let body = request.json_body()?;
    let text = |name: &str| body.get(name).as_str().map(str::to_string);
    let id = text("id").ok_or_else(|| request.bad_request("The resource's `id` is missing or not a string."))?;
    if id_in_path.is_some_and(|p| p != id) {
        return Err(request.bad_request("The id in the body differs from the id in the path."));
    }
    let source = text("body").ok_or_else(|| request.bad_request("The script's `body` is missing or not a string."))?;
    let mut script = Script::new(kind, id, source);
    if kind == ScriptKind::Trigger {
        let ty = text("triggerType").and_then(|t| TriggerType::parse(&t));
        let op = text("triggerOperation").and_then(|o| TriggerOperation::parse(&o));
        let (Some(ty), Some(op)) = (ty, op) else {
            return Err(request.bad_request(
                "A trigger needs `triggerType` (Pre or Post) and `triggerOperation` (All, Create, Update, Replace, \
                 Delete or Upsert).",
            ));
        };
        script.trigger = Some((ty, op));
    }
    Ok(script)
}

fn fail(request: &Request) -> impl Fn(cosmoql::Error) -> WireError + '_ {
    move |e| errors::from_error(&e, &request.activity_id)
}

/// `POST .../sprocs`: registers a script (201).
pub fn create(container: &Container, kind: ScriptKind, request: &Request) -> Result<Reply, WireError> {
    let script = container.client.create_script(script_of(kind, request, None)?).map_err(fail(request))?;
    Ok(Reply::json(201, &document(container, &script)).with("etag", script.etag_text()))
}

/// `GET`, `PUT` and `DELETE` of `.../sprocs/{id}`.
pub fn one(container: &Container, kind: ScriptKind, id: &str, request: &Request) -> Result<Reply, WireError> {
    let script = match request.method {
        Method::GET => container.client.read_script(kind, id),
        Method::PUT => container.client.replace_script(script_of(kind, request, Some(id))?),
        Method::DELETE => {
            container.client.delete_script(kind, id).map_err(fail(request))?;
            return Ok(Reply::empty(204));
        }
        _ => return Err(errors::refusal(405, 0, "Method not allowed.", &request.activity_id)),
    }
    .map_err(fail(request))?;
    Ok(Reply::json(200, &document(container, &script)).with("etag", script.etag_text()))
}

/// `POST .../sprocs/{id}`: executes the procedure in the logical partition the header names.
pub fn execute(container: &Container, id: &str, request: &Request) -> Result<Reply, WireError> {
    let params = match request.body.is_empty() {
        true => Vec::new(),
        false => match request.json_body()? {
            Value::Array(items) => items.to_vec(),
            Value::Null => Vec::new(),
            _ => return Err(request.bad_request("A stored procedure's parameters are a JSON array.")),
        },
    };
    let key = match header_key(container, request)? {
        Some(key) => key,
        None if container.client.partition_key_definition().is_none() => cosmoql::PartitionKey::none(),
        None => {
            return Err(request.bad_request(
                "PartitionKey value must be supplied for this operation: a stored procedure runs in one logical \
                 partition.",
            ))
        }
    };
    // The JavaScript SDK sends `true`, the Python SDK `True`.
    let logging =
        request.header("x-ms-documentdb-script-enable-logging").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let options = ProcedureOptions { script_logging: logging, ..ProcedureOptions::default() };
    let response = container.client.execute_stored_procedure(id, &key, &params, &options).map_err(fail(request))?;
    let body = cosmoql::value::to_json_string(&response.body).unwrap_or_else(|| "null".into());
    let mut reply =
        Reply::json_text(200, body).with("x-ms-request-charge", crate::wire::charge_text(response.request_charge));
    if logging {
        reply = reply
            .with("x-ms-documentdb-script-log-results", utf8_percent_encode(&response.log, URI_COMPONENT).to_string());
    }
    Ok(data_plane(container, &key, reply))
}
