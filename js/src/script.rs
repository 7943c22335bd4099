//! Stored procedures and triggers: a script run against the service's server-side API
//! (`prelude.js`: `getContext()`, the collection, request and response, `__`, `console.log`),
//! its collection calls answered by a [`Host`].
//!
//! The calls are queued and answered in order after the code that made them returns, as the
//! service queues them; the queue is drained from here, between the engine's pending jobs
//! (promises), so an `async` script and a chain of callbacks alike run flat on the stack.

use std::time::{SystemTime, UNIX_EPOCH};

use cosmoql_value::{parse_json, to_json_string, Map, Value};
use rquickjs::{Ctx, Function, Object};

use crate::{caught, error, Sandbox, ScriptError, ScriptErrorKind};

/// The server-side API, evaluated before each script.
const PRELUDE: &str = include_str!("prelude.js");

/// What a script's collection calls reach: the container, scoped to one logical partition.
pub trait Host {
    /// Runs one call: `op` is `create`, `upsert`, `replace`, `delete`, `read`, `patch` or
    /// `query`, `args` its arguments as the prelude passes them (a `body`, an `id`, an `etag`,
    /// `operations`, a `query` with `parameters`, `pageSize` and `continuation`).
    fn operation(&mut self, op: &str, args: &Value) -> Result<Reply, HostError>;
}

/// A call's answer: the resource (or the page of a query), and a query's continuation.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub result: Value,
    pub continuation: Option<String>,
    /// A read with `ifNoneMatch` of the current etag.
    pub not_modified: bool,
}

impl Reply {
    pub fn of(result: Value) -> Reply {
        Reply { result, continuation: None, not_modified: false }
    }
}

/// A call the host refused: the script's callback gets `err.number` (the status) and `err.body`
/// (the service's `{"Errors":[...]}` text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostError {
    pub status: u16,
    pub message: String,
}

/// The request a trigger sees: its body, whether it may change it (a pre-trigger), and the
/// operation (`Create`, `Replace`, `Upsert`, `Delete`).
#[derive(Debug, Clone, PartialEq)]
pub struct RequestBody {
    pub body: Value,
    pub writable: bool,
    pub operation: String,
}

/// One invocation of a stored procedure or trigger.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    /// The arguments (a procedure's parameters array, spread as the service does).
    pub args: Vec<Value>,
    /// The collection's links (`dbs/<rid>/colls/<rid>/` and `dbs/<db>/colls/<container>`):
    /// document links must start with one of them.
    pub self_link: String,
    pub alt_link: String,
    /// `console.log` kept (the request's `x-ms-documentdb-script-enable-logging: true`).
    pub logging: bool,
    /// The request, for a trigger.
    pub request: Option<RequestBody>,
    /// Whether there is a response (not in a pre-trigger).
    pub response: bool,
    /// The response's body to begin with (a post-trigger's: the item written).
    pub response_body: Option<Value>,
    /// Collection calls accepted before `isAccepted` turns false; past 80% of the time limit it
    /// turns false too.
    pub max_operations: usize,
}

/// What a script left behind.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The response body (`None`: never set).
    pub response: Option<Value>,
    /// The request body at the end (a pre-trigger may have replaced it).
    pub request: Option<Value>,
    /// What `console.log` wrote (empty without logging).
    pub log: String,
}

impl Sandbox {
    /// Runs the script `source` (a procedure's or trigger's body: one function) against the
    /// server-side API, its collection calls answered by `host`.
    pub fn run_script(
        &self,
        source: &str,
        invocation: &Invocation,
        host: &mut dyn Host,
    ) -> Result<Outcome, ScriptError> {
        let accept_until = now_ms() + self.limits().time.as_secs_f64() * 800.0;
        let config = config(invocation, accept_until)?;
        self.invoke(|ctx| {
            let js = |e| caught(&ctx, e);
            let prelude: Function = ctx.eval(PRELUDE).map_err(js)?;
            let config = ctx.json_parse(config).map_err(js)?;
            let api: Object = prelude.call((ctx.globals(), config)).map_err(js)?;
            let script = crate::function_of(&ctx, source)?;
            let args = to_json_string(&Value::from(invocation.args.clone()))
                .ok_or_else(|| error(ScriptErrorKind::Engine, "an argument without a JSON form"))?;
            let args = ctx.json_parse(args).map_err(js)?;
            let start: Function = api.get("start").map_err(js)?;
            let _: rquickjs::Value = start.call((script, args)).map_err(js)?;
            drain(&ctx, &api, host)?;
            let finish: Function = api.get("finish").map_err(js)?;
            let state: String = finish.call(()).map_err(js)?;
            outcome(&state)
        })
    }
}

fn now_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

fn config(invocation: &Invocation, accept_until: f64) -> Result<String, ScriptError> {
    let mut map = Map::default();
    map.insert("selfLink".into(), Value::from(invocation.self_link.as_str()));
    map.insert("altLink".into(), Value::from(invocation.alt_link.as_str()));
    map.insert("logging".into(), Value::Bool(invocation.logging));
    map.insert("response".into(), Value::Bool(invocation.response));
    if let Some(body) = &invocation.response_body {
        map.insert("responseBody".into(), body.clone());
    }
    map.insert("maxOperations".into(), Value::from(invocation.max_operations as f64));
    map.insert("acceptUntil".into(), Value::from(accept_until));
    if let Some(request) = &invocation.request {
        let mut r = Map::default();
        r.insert("body".into(), request.body.clone());
        r.insert("writable".into(), Value::Bool(request.writable));
        r.insert("operation".into(), Value::from(request.operation.as_str()));
        map.insert("request".into(), Value::from(r));
    }
    to_json_string(&Value::from(map))
        .ok_or_else(|| error(ScriptErrorKind::Engine, "a request body without a JSON form"))
}

/// Answers the queued calls in order, running the engine's pending jobs (promise reactions)
/// before each, until neither is left.
fn drain(ctx: &Ctx<'_>, api: &Object<'_>, host: &mut dyn Host) -> Result<(), ScriptError> {
    let js = |e| caught(ctx, e);
    let next: Function = api.get("next").map_err(js)?;
    let done: Function = api.get("done").map_err(js)?;
    loop {
        while ctx.execute_pending_job() {}
        let Some(call): Option<String> = next.call(()).map_err(js)? else {
            if ctx.execute_pending_job() {
                continue;
            }
            return Ok(());
        };
        let call = parse_json(&call).map_err(|e| error(ScriptErrorKind::Engine, e.to_string()))?;
        let op = call.get("op").as_str().unwrap_or_default().to_string();
        let reply = reply_text(host.operation(&op, call.get("args")))?;
        let _: rquickjs::Value = done.call((reply,)).map_err(js)?;
    }
}

/// The host's answer as the prelude's `done` reads it.
fn reply_text(reply: Result<Reply, HostError>) -> Result<String, ScriptError> {
    let mut map = Map::default();
    match reply {
        Ok(reply) => {
            let mut options = Map::default();
            if let Some(c) = reply.continuation {
                options.insert("continuation".into(), Value::from(c));
            }
            if reply.not_modified {
                options.insert("notModified".into(), Value::Bool(true));
            } else {
                map.insert("result".into(), reply.result);
            }
            map.insert("options".into(), Value::from(options));
        }
        Err(e) => {
            let body = to_json_string(&Value::from(Map::from_iter([(
                "Errors".to_string(),
                Value::from(vec![Value::from(e.message)]),
            )])))
            .unwrap_or_default();
            let mut err = Map::default();
            err.insert("number".into(), Value::from(f64::from(e.status)));
            err.insert("body".into(), Value::from(body));
            map.insert("error".into(), Value::from(err));
        }
    }
    to_json_string(&Value::from(map)).ok_or_else(|| error(ScriptErrorKind::Engine, "a reply without a JSON form"))
}

fn outcome(state: &str) -> Result<Outcome, ScriptError> {
    let state = parse_json(state).map_err(|e| error(ScriptErrorKind::Result, e.to_string()))?;
    let body = |holder: &Value| match holder {
        Value::Object(_) if holder.get("set") == &Value::Bool(true) => Some(holder.get("body").clone()),
        _ => None,
    };
    Ok(Outcome {
        response: body(state.get("response")),
        request: body(state.get("request")),
        log: state.get("log").as_str().unwrap_or_default().to_string(),
    })
}
