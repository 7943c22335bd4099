//! Errors of planning: the query does not parse, does not bind, or asks for something the service
//! rejects. Every one carries what the service would answer: HTTP status, substatus and, for query
//! compilation errors, the service's error code (`SC2206`, ...).

use std::fmt;

use cosmoql_parser::{ParseError, Span};

/// What kind of planning error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlanErrorKind {
    /// The query text does not parse.
    Syntax,
    /// A name, parameter, function, argument count or clause the query language does not allow.
    Bind,
    /// The request's partition key does not fit the container's definition.
    PartitionKey,
}

/// A planning error, with the span of the offending part of the query where there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    pub kind: PlanErrorKind,
    pub message: String,
    pub span: Option<Span>,
    /// The HTTP status the service answers (400 for every planning error).
    pub status: u16,
    /// The service's substatus (`x-ms-substatus`), 0 when it sends none.
    pub substatus: u32,
    /// The service's query error code (`SC1001`, `SC2206`, ...), when it has one.
    pub code: Option<&'static str>,
    /// What the user probably meant (see [`ParseError::hint`]); not part of the service's answer.
    pub hint: Option<String>,
}

impl PlanError {
    /// A binding error at `span` (400, no substatus).
    pub fn bind(message: impl Into<String>, span: Span) -> Self {
        PlanError {
            kind: PlanErrorKind::Bind,
            message: message.into(),
            span: Some(span),
            status: 400,
            substatus: 0,
            code: None,
            hint: None,
        }
    }

    /// A rejection the service makes with its error code `code`.
    pub fn rejected(code: &'static str, message: impl Into<String>, span: Option<Span>) -> Self {
        PlanError {
            kind: PlanErrorKind::Bind,
            message: message.into(),
            span,
            status: 400,
            substatus: 0,
            code: Some(code),
            hint: None,
        }
    }

    /// A syntax error of `sql` in the service's words: `SC1001` `Syntax error, incorrect syntax
    /// near 'X'.` with the token it stopped at, or `SC1002` `Syntax error, unexpected
    /// end-of-file.` at the end of the text (recorded service answers: the .NET SDK's
    /// QueryPlanBaselineTests.OffsetLimit `OFFSET -1`, SC1001 at the `-`; the end of a query cut
    /// short, SC1002 at its length, in Azure/azure-cosmos-dotnet-v3 issue 1615). What cosmoql saw
    /// was expected there (`expected X, found Y`) is the hint.
    /// Other parse errors (a character no token starts, an unterminated string, nesting past
    /// the limits, whose texts are the service's limit messages) keep the parser's words.
    pub fn syntax(e: ParseError, sql: &str) -> Self {
        use cosmoql_parser::ParseErrorKind as K;
        if !matches!(e.kind, K::UnexpectedToken | K::UnexpectedEnd | K::InvalidCount) {
            return PlanError::from(e);
        }
        let range = e.span.range();
        let token = sql.get(range.clone()).unwrap_or("");
        let (code, message) = if token.trim().is_empty() && range.start >= sql.trim_end().len() {
            ("SC1002", "Syntax error, unexpected end-of-file.".to_string())
        } else {
            ("SC1001", format!("Syntax error, incorrect syntax near '{token}'."))
        };
        let hint = match e.hint {
            Some(hint) => format!("{}; {hint}", e.message),
            None => e.message,
        };
        PlanError {
            kind: PlanErrorKind::Syntax,
            message,
            span: Some(e.span),
            status: 400,
            substatus: 0,
            code: Some(code),
            hint: Some(hint),
        }
    }

    /// A request partition key that does not fit the container's definition.
    pub fn partition_key(message: impl Into<String>, status: u16, substatus: u32) -> Self {
        PlanError {
            kind: PlanErrorKind::PartitionKey,
            message: message.into(),
            span: None,
            status,
            substatus,
            code: None,
            hint: None,
        }
    }
}

impl From<ParseError> for PlanError {
    fn from(e: ParseError) -> Self {
        PlanError {
            kind: PlanErrorKind::Syntax,
            message: e.message,
            span: Some(e.span),
            status: 400,
            substatus: 0,
            code: Some("SC1001"),
            hint: e.hint,
        }
    }
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PlanError {}
