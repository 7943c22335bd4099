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
    /// The line holding the error (cut around the spot when very long).
    source_line: String,
    /// 1-based column of the caret within `source_line`.
    caret_column: usize,
    caret_width: usize,
}

/// How many characters of a long line the rendered error shows on each side of the spot.
const SNIPPET_CONTEXT: usize = 60;

impl ParseError {
    pub(crate) fn new(source: &str, kind: ParseErrorKind, span: Span, message: String) -> Self {
        let (line, column) = line_col(source, span.start);
        let full_line: Vec<char> = line_text(source, span.start).chars().collect();
        // Underline the span, but never past the end of the line it starts on.
        let rest_of_line = full_line.len().saturating_sub(column - 1);
        let span_chars = source
            .get(span.start..span.end.min(source.len()))
            .map_or(1, |s| s.chars().take_while(|c| *c != '\n').count());
        let caret_width = span_chars.min(rest_of_line).clamp(1, SNIPPET_CONTEXT);
        // A very long line (generated SQL) is cut to a window around the spot.
        let first = (column - 1).saturating_sub(SNIPPET_CONTEXT);
        let last = (column - 1 + caret_width + SNIPPET_CONTEXT).min(full_line.len());
        let mut source_line: String = full_line[first.min(last)..last].iter().collect();
        let mut caret_column = column - first;
        if first > 0 {
            source_line.insert_str(0, "...");
            caret_column += 3;
        }
        if last < full_line.len() {
            source_line.push_str("...");
        }
        ParseError { kind, span, line, column, message, source_line, caret_column, caret_width }
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
        writeln!(f, "line {}, column {}: {}", self.line, self.column, self.message)?;
        // Tabs stay tabs so the caret lines up under them in a terminal.
        let pad: String =
            self.source_line.chars().take(self.caret_column - 1).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        writeln!(f, "{}", self.source_line)?;
        write!(f, "{pad}{}", "^".repeat(self.caret_width))
    }
}

impl std::error::Error for ParseError {}
