//! Stored procedures (issue 26): registered per container and executed in one logical partition,
//! every write of an execution one transaction.
//!
//! A script works on a copy of its logical partition (`Container::logical_partition_copy`, made
//! at its first call): each write is checked and made there, so the callback sees 404, 409 or
//! 412 at once, and later reads and queries see it (the documented bulk delete queries again
//! after deleting). When the script returns, its writes are committed to the container as one
//! transactional batch (`Container::execute_transaction`: all or nothing, one log frame); when it
//! throws or runs past a limit, the copy is dropped and nothing was written. A write to the same
//! items by another client in between fails the commit on their etags (for items the script
//! read, not for those it only created).

use std::collections::HashSet;
use std::sync::Arc;

use cosmoql_executor::cost::{item_charge, ItemWork};
use cosmoql_js::{Host, HostError, Invocation, Reply, ScriptError, ScriptErrorKind};
use cosmoql_storage::container::{BatchOperation, Container, Script, ScriptKind, WriteOptions};
use cosmoql_storage::patch::PatchOperation;
use cosmoql_storage::{PartitionKey, StorageError};
use cosmoql_value::Value;

use crate::{ContainerClient, Error, QueryOptions};

/// How a stored procedure runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcedureOptions {
    /// Keep what the script's `console.log` writes (the SDKs' `enable_script_logging`).
    pub script_logging: bool,
    /// Collection calls accepted before `isAccepted` turns false (it also does past 80% of the
    /// 5 s limit): a procedure that checks it returns a continuation, as the documented bulk
    /// samples do.
    pub max_operations: usize,
}

impl Default for ProcedureOptions {
    fn default() -> Self {
        ProcedureOptions { script_logging: false, max_operations: 1_000 }
    }
}

/// What an execution returned.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcedureResponse {
    /// The response body the script set (null when it set none).
    pub body: Value,
    /// What `console.log` wrote, with script logging on.
    pub log: String,
    /// The request units of the work done: the writes committed and the reads and queries made.
    pub request_charge: f64,
}

/// A script that failed: the service answers 400 with the thrown `Error`'s number as the
/// substatus (research, section 2.3), 408 past the time limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptFailure {
    /// 400 for a throw, 408 past the time limit, a write's status when the commit failed.
    pub status: u16,
    /// A thrown `Error(number, message)`'s number (0: none).
    pub substatus: u32,
    /// The service's words: "Encountered exception while executing function. Exception = ...".
    pub message: String,
}

impl std::fmt::Display for ScriptFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let reason = match self.status {
            400 => "Bad Request",
            404 => "Not Found",
            408 => "Request Timeout",
            409 => "Conflict",
            412 => "Precondition Failed",
            413 => "Request Entity Too Large",
            _ => "Internal Server Error",
        };
        write!(f, "{} {reason}", self.status)?;
        if self.substatus != 0 {
            write!(f, " (substatus {})", self.substatus)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl ContainerClient {
    /// Registers a stored procedure: `body` is its JavaScript (one function). 409 when one has
    /// this id; 400 past the container's 100.
    pub fn create_stored_procedure(&self, id: &str, body: &str) -> Result<Script, Error> {
        Ok(self.container.create_script(Script::new(ScriptKind::StoredProcedure, id, body))?)
    }

    /// A stored procedure (404 when there is none).
    pub fn read_stored_procedure(&self, id: &str) -> Result<Script, Error> {
        Ok(self.container.script(ScriptKind::StoredProcedure, id)?)
    }

    /// Replaces a stored procedure's body (404 when there is none).
    pub fn replace_stored_procedure(&self, id: &str, body: &str) -> Result<Script, Error> {
        Ok(self.container.replace_script(Script::new(ScriptKind::StoredProcedure, id, body))?)
    }

    /// Deletes a stored procedure (404 when there is none).
    pub fn delete_stored_procedure(&self, id: &str) -> Result<(), Error> {
        Ok(self.container.delete_script(ScriptKind::StoredProcedure, id)?)
    }

    /// The container's stored procedures, in the order they were created.
    pub fn list_stored_procedures(&self) -> Vec<Script> {
        self.container.scripts(ScriptKind::StoredProcedure)
    }

    /// Runs the stored procedure `id` in the logical partition `partition_key` with `args` (its
    /// parameters, spread as the service spreads them). Its writes are committed together when
    /// it returns, or none of them when it throws.
    pub fn execute_stored_procedure(
        &self,
        id: &str,
        partition_key: &PartitionKey,
        args: &[Value],
        options: &ProcedureOptions,
    ) -> Result<ProcedureResponse, Error> {
        let script = self.read_stored_procedure(id)?;
        let invocation = Invocation {
            args: args.to_vec(),
            self_link: self.container.self_link(),
            alt_link: self.alt_link(),
            logging: options.script_logging,
            request: None,
            response: true,
            response_body: None,
            max_operations: options.max_operations,
        };
        let mut host = Transaction::new(self, partition_key.clone());
        let outcome = crate::scripts::with_sandbox(|sandbox| sandbox.run_script(&script.body, &invocation, &mut host))
            .map_err(|e| Error::Script(failure(e, "function")))?;
        let (charge, _) = host.commit()?;
        Ok(ProcedureResponse {
            body: match outcome.response {
                Some(Value::Undefined) | None => Value::Null,
                Some(body) => body,
            },
            log: outcome.log,
            request_charge: charge,
        })
    }

    /// `dbs/<database>/colls/<container>`, the name-based link scripts may use.
    pub(crate) fn alt_link(&self) -> String {
        let database = self.database.as_deref().unwrap_or("_");
        format!("dbs/{database}/colls/{}", self.container.id())
    }
}

/// The service's answer for a script that failed: "Encountered exception while executing
/// function" for a procedure (research, 2.3), "... executing Javascript" for a trigger (the
/// service's words for a throwing pre-trigger, research 2.3 [MS-20777A]).
pub(crate) fn failure(e: ScriptError, executing: &str) -> ScriptFailure {
    match e.kind {
        ScriptErrorKind::TimeLimit => ScriptFailure {
            status: 408,
            substatus: 0,
            message: "The requested operation exceeded maximum alloted time. Learn more: \
                      https://aka.ms/cosmosdb-tsg-service-request-timeout"
                .into(),
        },
        ScriptErrorKind::Engine => ScriptFailure {
            status: 500,
            substatus: 0,
            message: format!("the JavaScript engine failed (a bug in cosmoql): {}", e.message),
        },
        _ => ScriptFailure {
            status: 400,
            substatus: e.number.unwrap_or(0),
            message: format!("Encountered exception while executing {executing}. Exception = {}", e.message),
        },
    }
}

/// One execution's writes: made on a copy of the logical partition (so the script's reads and
/// queries see them, and each is checked as the store checks it), recorded, and committed to the
/// container at the end.
pub(crate) struct Transaction<'a> {
    client: &'a ContainerClient,
    key: PartitionKey,
    /// The logical partition's copy, made at the first call.
    copy: Option<Arc<Container>>,
    /// The ids written so far: their etags are the copy's, not the container's.
    written: HashSet<String>,
    pub(crate) operations: Vec<BatchOperation>,
    /// The request units of the calls made.
    charge: f64,
}

fn refused(e: StorageError) -> HostError {
    HostError { status: e.status_code(), message: e.message.clone() }
}

fn bad(message: impl Into<String>) -> HostError {
    HostError { status: 400, message: message.into() }
}

impl<'a> Transaction<'a> {
    pub(crate) fn new(client: &'a ContainerClient, key: PartitionKey) -> Self {
        Transaction { client, key, copy: None, written: HashSet::new(), operations: Vec::new(), charge: 0.0 }
    }

    fn copy(&mut self) -> Result<Arc<Container>, HostError> {
        if let Some(copy) = &self.copy {
            return Ok(Arc::clone(copy));
        }
        let copy = Arc::new(self.client.container.logical_partition_copy(&self.key).map_err(refused)?);
        self.copy = Some(Arc::clone(&copy));
        Ok(copy)
    }

    /// Charges a call's response and gives its item.
    fn charged(&mut self, response: cosmoql_storage::ItemResponse) -> Value {
        self.charge += item_charge(&ItemWork::from(&response), self.client.consistency);
        response.item
    }

    /// The id a document link names: the link's last segment, or under the self link the id of
    /// the item whose `_rid` it is.
    fn target(&mut self, args: &Value) -> Result<String, HostError> {
        let segment = args.get("id").as_str().unwrap_or_default().to_string();
        if args.get("byRid") != &Value::Bool(true) {
            return Ok(segment);
        }
        let found = self.query(&Value::object([
            ("query", Value::from("SELECT VALUE r.id FROM root r WHERE r._rid = @rid")),
            (
                "parameters",
                Value::from(vec![Value::object([("name", Value::from("@rid")), ("value", Value::from(segment))])]),
            ),
        ]))?;
        match found.result.index(0) {
            Value::String(id) => Ok(id.to_string()),
            _ => Err(HostError { status: 404, message: "Resource Not Found".into() }),
        }
    }

    /// The body's id, after checking it is in the transaction's logical partition.
    fn checked(&mut self, body: &Value) -> Result<String, HostError> {
        let key = self.copy()?.item_key(body).map_err(refused)?;
        if key != self.key {
            return Err(bad("Requests originating from scripts cannot reference partition keys other than the one \
                            for which client request was submitted."));
        }
        Ok(body.get("id").as_str().unwrap_or_default().to_string())
    }

    /// A write made on the copy, and recorded for the commit. The caller's etag goes to the
    /// commit only for an item this transaction has not written (the container's etag).
    fn write(
        &mut self,
        id: String,
        etag: Option<String>,
        made: Result<cosmoql_storage::ItemResponse, StorageError>,
        record: impl FnOnce(Option<String>) -> BatchOperation,
    ) -> Result<Reply, HostError> {
        let response = made.map_err(refused)?;
        let first = self.written.insert(id);
        self.operations.push(record(if first { etag } else { None }));
        Ok(Reply::of(self.charged(response)))
    }

    fn query(&mut self, args: &Value) -> Result<Reply, HostError> {
        let sql = args.get("query").as_str().unwrap_or_default().to_string();
        let mut options = QueryOptions { partition_key: Some(self.key.clone()), ..QueryOptions::default() };
        if let Value::Array(parameters) = args.get("parameters") {
            for p in parameters.iter() {
                let name = p.get("name").as_str().unwrap_or_default().to_string();
                options = options.parameter(&name, p.get("value").clone());
            }
        }
        options.max_item_count = args.get("pageSize").as_f64().filter(|n| *n > 0.0).map(|n| n as usize);
        options.continuation = args.get("continuation").as_str().map(str::to_string);
        let copy = ContainerClient::from_container(self.copy()?);
        let mut pager = copy.query_pages::<Value>(sql.as_str(), options);
        let page = match pager.next_page() {
            Some(Ok(page)) => page,
            Some(Err(e)) => return Err(HostError { status: e.status().unwrap_or(400), message: e.to_string() }),
            None => return Ok(Reply::of(Value::from(Vec::<Value>::new()))),
        };
        self.charge += page.request_charge;
        Ok(Reply { result: Value::from(page.items), continuation: page.continuation, not_modified: false })
    }

    /// Commits the writes (one transaction): the request units of the execution, and each
    /// write's response from the container.
    pub(crate) fn commit(self) -> Result<(f64, Vec<cosmoql_storage::ItemResponse>), Error> {
        let mut responses = Vec::new();
        if !self.operations.is_empty() {
            responses = self.client.container.execute_transaction(&self.key, &self.operations).map_err(|e| {
                Error::Script(ScriptFailure {
                    status: e.error.status_code(),
                    substatus: e.error.kind.substatus().unwrap_or(0),
                    message: format!(
                        "the script's writes were not committed (write {}): {}; nothing was written",
                        e.index, e.error
                    ),
                })
            })?;
        }
        Ok((self.charge, responses))
    }
}

impl Host for Transaction<'_> {
    fn operation(&mut self, op: &str, args: &Value) -> Result<Reply, HostError> {
        let etag = args.get("etag").as_str().map(str::to_string);
        let options = WriteOptions { if_match: etag.clone(), condition: None };
        let key = self.key.clone();
        match op {
            "create" => {
                let body = args.get("body").clone();
                let id = self.checked(&body)?;
                let made = self.copy()?.create(&body);
                self.write(id, None, made, |_| BatchOperation::Create { item: body })
            }
            "upsert" => {
                let body = args.get("body").clone();
                let id = self.checked(&body)?;
                let made = self.copy()?.upsert(&body, &options);
                self.write(id, etag, made, |if_match| BatchOperation::Upsert { item: body, if_match })
            }
            "replace" => {
                let id = self.target(args)?;
                let body = args.get("body").clone();
                self.checked(&body)?;
                let made = self.copy()?.replace(&key, &id, &body, &options);
                self.write(id.clone(), etag, made, |if_match| BatchOperation::Replace { id, item: body, if_match })
            }
            "delete" => {
                let id = self.target(args)?;
                let made = self.copy()?.delete(&key, &id, &options);
                self.write(id.clone(), etag, made, |if_match| BatchOperation::Delete { id, if_match })
            }
            "read" => {
                let id = self.target(args)?;
                let read = self.copy()?.read(&key, &id).map_err(refused)?;
                let item = self.charged(read);
                let unchanged = args.get("ifNoneMatch").as_str().is_some_and(|e| item.get("_etag").as_str() == Some(e));
                Ok(Reply { result: item, continuation: None, not_modified: unchanged })
            }
            "patch" => {
                let id = self.target(args)?;
                let Value::Array(list) = args.get("operations") else {
                    return Err(bad("Invalid patch request: check syntax of patch specification."));
                };
                let operations =
                    list.iter().map(PatchOperation::from_json).collect::<Result<Vec<_>, _>>().map_err(refused)?;
                let made = self.copy()?.patch(&key, &id, &operations, &options);
                self.write(id.clone(), etag, made, |if_match| BatchOperation::Patch { id, operations, if_match })
            }
            "query" => self.query(args),
            other => Err(bad(format!("the script called an operation cosmoql does not know ({other}): a bug"))),
        }
    }
}
