//! Server-side JavaScript through the client (issue 26): a container's user-defined functions,
//! kept by storage (`storage/src/container/scripts.rs`) and run by the `js` crate's sandbox when
//! a query calls `udf.name(...)`. The query crates see only [`UdfHost`]: the names to bind and a
//! call to make.
//!
//! Each thread that runs a UDF has one sandbox (QuickJS runtimes stay on their thread), made on
//! its first call. A query's calls on a thread share one context, where each UDF is compiled
//! once (`Sandbox::call_in_session`: a fresh context a call cost 57 us a call, 2026-11-28); the
//! next query starts a new one, so what a UDF leaves in its globals lasts one query at most (UDFs
//! are "compute-only", without the context object: research, section 4).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use cosmoql_executor::{QueryError, QueryErrorKind, UdfHost};
use cosmoql_js::{Limits, Sandbox, ScriptError, ScriptErrorKind};
use cosmoql_parser::Span;
use cosmoql_storage::container::{Container, Script, ScriptKind};
use cosmoql_value::Value;

use crate::{ContainerClient, Error};

impl ContainerClient {
    /// Registers a user-defined function: `body` is its JavaScript (`function tax(income) { ...
    /// }`), called from queries as `udf.<id>(...)`. 409 when one has this id; 400 past the
    /// container's 50. The body is not run (nor compiled) until a query calls it.
    pub fn create_user_defined_function(&self, id: &str, body: &str) -> Result<Script, Error> {
        Ok(self.container.create_script(Script::new(ScriptKind::UserDefinedFunction, id, body))?)
    }

    /// A user-defined function (404 when there is none).
    pub fn read_user_defined_function(&self, id: &str) -> Result<Script, Error> {
        Ok(self.container.script(ScriptKind::UserDefinedFunction, id)?)
    }

    /// Replaces a user-defined function's body (404 when there is none).
    pub fn replace_user_defined_function(&self, id: &str, body: &str) -> Result<Script, Error> {
        Ok(self.container.replace_script(Script::new(ScriptKind::UserDefinedFunction, id, body))?)
    }

    /// Deletes a user-defined function (404 when there is none). Queries calling it no longer
    /// bind.
    pub fn delete_user_defined_function(&self, id: &str) -> Result<(), Error> {
        Ok(self.container.delete_script(ScriptKind::UserDefinedFunction, id)?)
    }

    /// The container's user-defined functions, in the order they were created.
    pub fn list_user_defined_functions(&self) -> Vec<Script> {
        self.container.scripts(ScriptKind::UserDefinedFunction)
    }
}

impl ContainerClient {
    /// The container's scripts of `kind` (the REST routes' view of all three kinds).
    pub fn list_scripts(&self, kind: ScriptKind) -> Vec<Script> {
        self.container.scripts(kind)
    }

    /// Registers a script of any kind (a trigger with its type and operation).
    pub fn create_script(&self, script: Script) -> Result<Script, Error> {
        Ok(self.container.create_script(script)?)
    }

    /// A script (404 when there is none of that kind and id).
    pub fn read_script(&self, kind: ScriptKind, id: &str) -> Result<Script, Error> {
        Ok(self.container.script(kind, id)?)
    }

    /// Replaces a script (404 when there is none).
    pub fn replace_script(&self, script: Script) -> Result<Script, Error> {
        Ok(self.container.replace_script(script)?)
    }

    /// Deletes a script (404 when there is none).
    pub fn delete_script(&self, kind: ScriptKind, id: &str) -> Result<(), Error> {
        Ok(self.container.delete_script(kind, id)?)
    }
}

/// What runs `container`'s UDFs in a query: `None` when it has none (no query can bind one).
pub fn udf_host(container: &Container) -> Option<Arc<dyn UdfHost>> {
    let functions = container.scripts(ScriptKind::UserDefinedFunction);
    if functions.is_empty() {
        return None;
    }
    static SESSIONS: AtomicU64 = AtomicU64::new(1);
    Some(Arc::new(Udfs {
        functions: functions.into_iter().map(|s| (s.id, s.body)).collect(),
        session: SESSIONS.fetch_add(1, Ordering::Relaxed),
    }))
}

/// A container's UDFs as one query saw them when it started: (name, body).
#[derive(Debug)]
struct Udfs {
    functions: Vec<(String, String)>,
    /// The sandboxes' session of this query's calls: a thread compiles each UDF once for it.
    session: u64,
}

thread_local! {
    /// This thread's sandbox, made on its first UDF call.
    static SANDBOX: RefCell<Option<Sandbox>> = const { RefCell::new(None) };
}

impl UdfHost for Udfs {
    fn names(&self) -> Vec<String> {
        self.functions.iter().map(|(name, _)| name.clone()).collect()
    }

    fn call(&self, name: &str, args: &[Value], span: Span) -> Result<Value, QueryError> {
        let Some((_, body)) = self.functions.iter().find(|(n, _)| n == name) else {
            return Err(QueryError::internal(format!("udf.{name} was bound but the query's UDFs do not hold it")));
        };
        with_sandbox(|sandbox| sandbox.call_in_session(self.session, body, args)).map_err(|e| udf_error(name, e, span))
    }
}

/// Runs `work` with this thread's sandbox (made on first use). While that one runs a script (a
/// procedure whose query calls a UDF), `work` gets a sandbox of its own for the call.
pub(crate) fn with_sandbox<T>(work: impl FnOnce(&Sandbox) -> Result<T, ScriptError>) -> Result<T, ScriptError> {
    SANDBOX.with(|cell| {
        let Ok(mut slot) = cell.try_borrow_mut() else {
            return work(&Sandbox::new(Limits::default())?);
        };
        if slot.is_none() {
            *slot = Some(Sandbox::new(Limits::default())?);
        }
        match slot.as_ref() {
            Some(sandbox) => work(sandbox),
            None => Err(ScriptError::new(ScriptErrorKind::Engine, "no sandbox")),
        }
    })
}

/// A UDF's failure as the service answers it.
///
/// * A throw (and a script that does not compile, which the service runs only when called):
///   400, "Encountered exception while executing Javascript. Exception = <the error>", as the
///   service answered a throwing trigger (Microsoft's course 20777A, module 3, "Error: Time is
///   too old"; research, section 2). The service adds QuickJS's stack trace's equivalent after
///   "\r\nStack trace:"; cosmoql does not (its engine's traces differ).
/// * Past the time limit: 408, as the service's status page gives for a script "within a query",
///   with the message the service gave a procedure that ran too long (research, section 2.2).
/// * Past the memory or stack limits: 400 with the engine's message (the service's not recorded).
fn udf_error(name: &str, e: ScriptError, span: Span) -> QueryError {
    match e.kind {
        ScriptErrorKind::TimeLimit => {
            let mut error = QueryError::eval(
                "The requested operation exceeded maximum alloted time. Learn more: \
                 https://aka.ms/cosmosdb-tsg-service-request-timeout",
                span,
            );
            error.status = 408;
            error
        }
        ScriptErrorKind::Engine => QueryError::new(
            QueryErrorKind::Internal,
            format!("udf.{name}: the JavaScript engine failed (a bug in cosmoql): {}", e.message),
            Some(span),
        ),
        _ => QueryError::eval(
            format!("Encountered exception while executing Javascript. Exception = {}", e.message),
            span,
        ),
    }
}
