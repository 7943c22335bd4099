//! Triggers (issue 26): registered per container, run only when a write names them
//! (`ItemOptions::pre_triggers` and `post_triggers`, the SDKs' trigger-include options). A
//! pre-trigger sees the request's body and may replace it; the write is made; a post-trigger
//! sees the written item as the response's body. All of it is one transaction in the item's
//! logical partition (`procedures.rs`'s `Transaction`): a throw anywhere writes nothing
//! (research, section 3: "An exception during the post-trigger execution fails the whole
//! transaction").

use cosmoql_js::{Host, HostError, Invocation, RequestBody};
use cosmoql_storage::container::{Script, ScriptKind, TriggerOperation, TriggerType};
use cosmoql_storage::{ItemResponse, PartitionKey, StorageError};
use cosmoql_value::Value;

use crate::procedures::{failure, ScriptFailure, Transaction};
use crate::{ContainerClient, Error, ItemOptions};

/// A write that names triggers.
pub(crate) enum Write<'v> {
    Create(&'v Value),
    Upsert(&'v Value),
    Replace { key: &'v PartitionKey, id: &'v str, item: &'v Value },
    Delete { key: &'v PartitionKey, id: &'v str },
}

impl Write<'_> {
    fn operation(&self) -> TriggerOperation {
        match self {
            Write::Create(_) => TriggerOperation::Create,
            Write::Upsert(_) => TriggerOperation::Upsert,
            Write::Replace { .. } => TriggerOperation::Replace,
            Write::Delete { .. } => TriggerOperation::Delete,
        }
    }
}

fn trigger(id: &str, body: &str, trigger_type: TriggerType, operation: TriggerOperation) -> Script {
    Script { trigger: Some((trigger_type, operation)), ..Script::new(ScriptKind::Trigger, id, body) }
}

fn host_failure(e: HostError) -> Error {
    Error::Script(ScriptFailure { status: e.status, substatus: 0, message: e.message })
}

impl ContainerClient {
    /// Registers a trigger: `body` is its JavaScript, run before (`Pre`) or after (`Post`) the
    /// writes of `operation` that name it. 409 when one has this id.
    pub fn create_trigger(
        &self,
        id: &str,
        body: &str,
        trigger_type: TriggerType,
        operation: TriggerOperation,
    ) -> Result<Script, Error> {
        Ok(self.container.create_script(trigger(id, body, trigger_type, operation))?)
    }

    /// A trigger (404 when there is none).
    pub fn read_trigger(&self, id: &str) -> Result<Script, Error> {
        Ok(self.container.script(ScriptKind::Trigger, id)?)
    }

    /// Replaces a trigger's body, type and operation (404 when there is none).
    pub fn replace_trigger(
        &self,
        id: &str,
        body: &str,
        trigger_type: TriggerType,
        operation: TriggerOperation,
    ) -> Result<Script, Error> {
        Ok(self.container.replace_script(trigger(id, body, trigger_type, operation))?)
    }

    /// Deletes a trigger (404 when there is none).
    pub fn delete_trigger(&self, id: &str) -> Result<(), Error> {
        Ok(self.container.delete_script(ScriptKind::Trigger, id)?)
    }

    /// The container's triggers, in the order they were created.
    pub fn list_triggers(&self) -> Vec<Script> {
        self.container.scripts(ScriptKind::Trigger)
    }

    /// The trigger named in a request's `pre` or `post` list, checked against the request's
    /// operation: `None` when the list is empty.
    fn named_trigger(
        &self,
        names: &[String],
        wanted: TriggerType,
        request: TriggerOperation,
    ) -> Result<Option<Script>, Error> {
        let name = match names {
            [] => return Ok(None),
            [name] => name,
            // "The service supports a maximum of one pre-trigger and one post-trigger per write
            // operation" (research, section 3; what it answers to two is not recorded).
            _ => {
                return Err(StorageError::bad_request(format!(
                    "a write may name at most one {}-trigger, not {}",
                    wanted.name().to_lowercase(),
                    names.len()
                ))
                .into())
            }
        };
        let script = self.read_trigger(name)?;
        let Some((ty, operation)) = script.trigger else {
            return Err(StorageError::internal(format!("the trigger {name} has no type")).into());
        };
        if ty != wanted {
            return Err(StorageError::bad_request(format!(
                "Trigger '{name}' is a {}-trigger and was named as a {}-trigger.",
                ty.name().to_lowercase(),
                wanted.name().to_lowercase()
            ))
            .into());
        }
        if !operation.runs_on(request) {
            // The service's words, seen with .NET (research, section 3).
            return Err(StorageError::bad_request(format!(
                "Trigger '{name}' was defined with operation type '{}', and therefore is invalid for '{}'.",
                operation.name(),
                request.name()
            ))
            .into());
        }
        Ok(Some(script))
    }

    /// Makes `write` with the triggers `options` names, all in one transaction: the container's
    /// response for the write, and the request units of all of it.
    pub(crate) fn triggered_write(
        &self,
        write: Write<'_>,
        options: &ItemOptions,
    ) -> Result<(ItemResponse, f64), Error> {
        let operation = write.operation();
        let pre = self.named_trigger(&options.pre_triggers, TriggerType::Pre, operation)?;
        let post = self.named_trigger(&options.post_triggers, TriggerType::Post, operation)?;
        let key = match &write {
            Write::Create(item) | Write::Upsert(item) => self.container.item_key(item)?,
            Write::Replace { key, .. } | Write::Delete { key, .. } => (*key).clone(),
        };
        let mut tx = Transaction::new(self, key);
        let mut body = match &write {
            Write::Create(item) | Write::Upsert(item) | Write::Replace { item, .. } => (*item).clone(),
            Write::Delete { .. } => Value::Null,
        };
        let run = |tx: &mut Transaction<'_>, script: &Script, request: RequestBody, response: Option<Value>| {
            let invocation = Invocation {
                args: Vec::new(),
                self_link: self.container.self_link(),
                alt_link: self.alt_link(),
                logging: false,
                request: Some(request),
                response: response.is_some(),
                response_body: response,
                max_operations: crate::ProcedureOptions::default().max_operations,
            };
            crate::scripts::with_sandbox(|sandbox| sandbox.run_script(&script.body, &invocation, tx))
                .map_err(|e| Error::Script(failure(e, "Javascript")))
        };
        if let Some(script) = &pre {
            let request = RequestBody { body: body.clone(), writable: true, operation: operation.name().to_string() };
            let outcome = run(&mut tx, script, request, None)?;
            if let Some(changed) = outcome.request {
                body = changed;
            }
        }
        let etag = options.if_match.clone().map_or(Value::Null, Value::from);
        let (op, args) = match &write {
            Write::Create(_) => ("create", Value::object([("body", body.clone())])),
            Write::Upsert(_) => ("upsert", Value::object([("body", body.clone()), ("etag", etag)])),
            Write::Replace { id, .. } => {
                ("replace", Value::object([("id", Value::from(*id)), ("body", body.clone()), ("etag", etag)]))
            }
            Write::Delete { id, .. } => ("delete", Value::object([("id", Value::from(*id)), ("etag", etag)])),
        };
        let written = tx.operation(op, &args).map_err(host_failure)?.result;
        let at = tx.operations.len().saturating_sub(1);
        if let Some(script) = &post {
            let request = RequestBody { body, writable: false, operation: operation.name().to_string() };
            run(&mut tx, script, request, Some(written))?;
        }
        let (charge, mut responses) = tx.commit()?;
        if at >= responses.len() {
            return Err(StorageError::internal("a triggered write's response is missing").into());
        }
        Ok((responses.swap_remove(at), charge))
    }
}
