//! Parse errors: what went wrong, where, and how it renders.

use std::fmt;

use crate::diagnostic::Snippet;
use crate::span::Span;

/// What kind of mistake the query text holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParseErrorKind {
    /// A character that starts no token (`#`, `!` alone, a control character, ...).
    UnexpectedCharacter,
    /// A string literal without its closing quote.
    UnterminatedString,
    /// A backslash escape that JSON-style strings do not know, or a bad `\uXXXX`.
    InvalidEscape,
    /// A number that does not follow the numeric literal grammar (`1e`, `1.2.3`, ...).
    InvalidNumber,
    /// `@` not followed by a parameter name.
    InvalidParameter,
    /// A token the grammar does not allow at this point.
    UnexpectedToken,
    /// The query ended where the grammar needs more.
    UnexpectedEnd,
    /// `TOP`, `OFFSET`, `LIMIT` or a path index that is not a non-negative integer.
    InvalidCount,
    /// The query nests deeper than the parser allows (see [`crate::MAX_NESTING`]).
    TooDeep,
}

/// A syntax error, with its location resolved against the query text.
///
/// `Display` renders it as `line L, column C: <message>`, then the source line and a caret under the
/// spot, e.g.
/// ```text
/// line 1, column 14: expected an expression, found keyword FROM
/// SELECT c.id, FROM c
///              ^^^^
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The kind of mistake.
    pub kind: ParseErrorKind,
    /// Where, in bytes.
    pub span: Span,
    /// 1-based line of `span.start`.
    pub line: usize,
    /// 1-based column (in characters) of `span.start`.
    pub column: usize,
    /// What went wrong, usually `expected X, found Y`.
    pub message: String,
    /// What the user probably meant, for a habit from another SQL dialect (`LIMIT 3` without
    /// `OFFSET`, `COUNT(*)`, `INSERT`): rendered after the caret as `hint: ...`.
    pub hint: Option<String>,
    /// The spot in the source, for rendering.
    /// Boxed: errors are rare, and a small `Result` keeps the parser's happy path fast.
    snippet: Box<Snippet>,
}

impl ParseError {
    pub(crate) fn new(source: &str, kind: ParseErrorKind, span: Span, message: String) -> Self {
        let snippet = Box::new(Snippet::new(source, span));
        ParseError { kind, span, line: snippet.line, column: snippet.column, message, hint: None, snippet }
    }

    /// `expected X, found Y` at `span`.
    pub(crate) fn expected(source: &str, span: Span, expected: &str, found: &str) -> Self {
        let kind =
            if span.start >= source.len() { ParseErrorKind::UnexpectedEnd } else { ParseErrorKind::UnexpectedToken };
        ParseError::new(source, kind, span, format!("expected {expected}, found {found}"))
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.snippet.render(&self.message))?;
        match &self.hint {
            Some(hint) => write!(f, "\nhint: {hint}"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for ParseError {}
