//! Errors of running a query: what planning rejected, what failed while running, what the store
//! refused. Each carries the HTTP status and substatus the service would answer with, and user
//! errors the span of the part of the query they are about.

use std::fmt;

use cosmoql_parser::Span;
use cosmoql_planner::{PlanError, PlanErrorKind};
use cosmoql_storage::StorageError;

/// What kind of query error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QueryErrorKind {
    /// The query text does not parse.
    Syntax,
    /// A name, parameter, function, argument count or clause that does not bind, or that the
    /// service rejects.
    Bind,
    /// A run-time error (a bad regular expression, a bad argument a function rejects, ...).
    Eval,
    /// The store refused (bad partition key, cross-partition query not allowed, ...).
    Storage,
    /// The query needs more memory than its budget (`QueryOptions::memory_budget`).
    Resource,
    /// The caller cancelled the query (`QueryOptions::cancel`).
    Cancelled,
    /// A bug in cosmoql, never the user's fault.
    Internal,
}

/// A query error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryError {
    pub kind: QueryErrorKind,
    pub message: String,
    /// The part of the query the error is about.
    pub span: Option<Span>,
    /// The HTTP status the service answers with: 400 for the user's mistakes, 408 for a
    /// cancelled query (the SDKs' client-side timeout), 500 for bugs.
    pub status: u16,
    /// The service's substatus (`x-ms-substatus`), 0 when it sends none.
    pub substatus: u32,
    /// The service's query error code (`SC2001`, ...), when it has one.
    pub code: Option<&'static str>,
    /// What the user probably meant (`COUNT(1)` for `COUNT(*)`, ...): rendered after the caret,
    /// never part of the service's message.
    pub hint: Option<String>,
}

impl QueryError {
    /// An error of `kind` with the status that kind answers with.
    pub fn new(kind: QueryErrorKind, message: impl Into<String>, span: Option<Span>) -> Self {
        let status = match kind {
            QueryErrorKind::Syntax
            | QueryErrorKind::Bind
            | QueryErrorKind::Eval
            | QueryErrorKind::Storage
            | QueryErrorKind::Resource => 400,
            QueryErrorKind::Cancelled => 408,
            QueryErrorKind::Internal => 500,
        };
        QueryError { kind, message: message.into(), span, status, substatus: 0, code: None, hint: None }
    }

    pub fn bind(message: impl Into<String>, span: Span) -> Self {
        QueryError::new(QueryErrorKind::Bind, message, Some(span))
    }

    pub fn eval(message: impl Into<String>, span: Span) -> Self {
        QueryError::new(QueryErrorKind::Eval, message, Some(span))
    }

    pub fn internal(message: impl Into<String>) -> Self {
        QueryError::new(QueryErrorKind::Internal, message, None)
    }

    pub fn cancelled() -> Self {
        QueryError::new(QueryErrorKind::Cancelled, "the query was cancelled", None)
    }

    /// Renders the error against the query text: `line L, column C: message`, the source line and
    /// a caret under the spot (as syntax errors render); without a span, the message alone.
    pub fn render(&self, source: &str) -> String {
        let rendered = match self.span {
            Some(span) if self.kind != QueryErrorKind::Internal && span.start <= source.len() => {
                cosmoql_parser::diagnostic::render(source, span, &self.message)
            }
            _ => self.to_string(),
        };
        match &self.hint {
            Some(hint) => format!("{rendered}\nhint: {hint}"),
            None => rendered,
        }
    }
}

impl From<PlanError> for QueryError {
    fn from(e: PlanError) -> Self {
        let kind = match e.kind {
            PlanErrorKind::Syntax => QueryErrorKind::Syntax,
            PlanErrorKind::Bind => QueryErrorKind::Bind,
            PlanErrorKind::PartitionKey => QueryErrorKind::Storage,
        };
        QueryError {
            kind,
            message: e.message,
            span: e.span,
            status: e.status,
            substatus: e.substatus,
            code: e.code,
            hint: e.hint,
        }
    }
}

impl From<StorageError> for QueryError {
    fn from(e: StorageError) -> Self {
        let kind = match e.kind {
            cosmoql_storage::ErrorKind::Internal => QueryErrorKind::Internal,
            _ => QueryErrorKind::Storage,
        };
        QueryError {
            kind,
            message: e.to_string(),
            span: None,
            status: e.status_code(),
            substatus: e.kind.substatus().unwrap_or(0),
            code: None,
            hint: None,
        }
    }
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            QueryErrorKind::Internal => {
                write!(f, "internal error (a bug in cosmoql, please report it): {}", self.message)
            }
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for QueryError {}

/// An error raised by a system function; the evaluator attaches the call's span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionError(pub String);

impl fmt::Display for FunctionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
