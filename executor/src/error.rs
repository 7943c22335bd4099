//! Errors of query compilation and evaluation.

use std::fmt;

use cosmoql_parser::Span;

/// What kind of query error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QueryErrorKind {
    /// The query text does not parse.
    Syntax,
    /// A name, parameter, function or argument count that does not resolve.
    Bind,
    /// A run-time error (a bad regular expression, a bad argument a function rejects, ...).
    Eval,
    /// The store refused (bad partition key, missing container, ...).
    Storage,
    /// The caller cancelled the query (`QueryOptions::cancel`).
    Cancelled,
    /// A bug in cosmoql, never the user's fault.
    Internal,
}

/// A query error; user errors carry the span of the offending part of the query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryError {
    pub kind: QueryErrorKind,
    pub message: String,
    pub span: Option<Span>,
}

impl QueryError {
    pub fn new(kind: QueryErrorKind, message: impl Into<String>, span: Option<Span>) -> Self {
        QueryError { kind, message: message.into(), span }
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

    /// Renders the error against the query text: `line L, column C: message`, the source line and
    /// a caret under the spot (as syntax errors render).
    pub fn render(&self, source: &str) -> String {
        if self.kind == QueryErrorKind::Internal {
            return self.to_string();
        }
        let Some(span) = self.span.filter(|s| s.start <= source.len()) else { return self.to_string() };
        let start = floor_boundary(source, span.start);
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..].find('\n').map_or(source.len(), |i| start + i);
        let line_no = source[..start].matches('\n').count() + 1;
        let column = source[line_start..start].chars().count() + 1;
        let text = source[line_start..line_end].trim_end_matches('\r');
        let end = floor_boundary(source, span.end.clamp(start, line_end));
        let width = source[start..end].chars().count().max(1);
        let pad: String = source[line_start..start].chars().map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        format!("line {line_no}, column {column}: {}\n{text}\n{pad}{}", self.message, "^".repeat(width))
    }
}

fn floor_boundary(s: &str, mut at: usize) -> usize {
    at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
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
