//! Parse errors: what went wrong, where, and how it renders.

use std::fmt;

use crate::span::{line_col, line_text, Span};

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
/// line 1, column 15: expected an expression, found FROM
/// SELECT c.id,  FROM c
///               ^^^^
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
    source_line: String,
    caret_width: usize,
}

impl ParseError {
    pub(crate) fn new(source: &str, kind: ParseErrorKind, span: Span, message: String) -> Self {
        let (line, column) = line_col(source, span.start);
        let source_line = line_text(source, span.start).to_string();
        // Underline the span, but never past the end of the line it starts on.
        let rest_of_line = source_line.chars().count().saturating_sub(column - 1);
        let span_chars = source
            .get(span.start..span.end.min(source.len()))
            .map_or(1, |s| s.chars().take_while(|c| *c != '\n').count());
        let caret_width = span_chars.min(rest_of_line).max(1);
        ParseError {
            kind,
            span,
            line,
            column,
            message,
            source_line,
            caret_width,
        }
    }

    /// `expected X, found Y` at `span`.
    pub(crate) fn expected(source: &str, span: Span, expected: &str, found: &str) -> Self {
        let kind = if span.start >= source.len() {
            ParseErrorKind::UnexpectedEnd
        } else {
            ParseErrorKind::UnexpectedToken
        };
        ParseError::new(
            source,
            kind,
            span,
            format!("expected {expected}, found {found}"),
        )
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )?;
        // Tabs stay tabs so the caret lines up under them in a terminal.
        let pad: String = self
            .source_line
            .chars()
            .take(self.column - 1)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        writeln!(f, "{}", self.source_line)?;
        write!(f, "{pad}{}", "^".repeat(self.caret_width))
    }
}

impl std::error::Error for ParseError {}
