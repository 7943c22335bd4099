//! The one renderer of errors about a spot in a query: parse errors, binding errors and run-time
//! errors all print as
//!
//! ```text
//! line 3, column 7: LOWER ...
//! WHERE LOWER(c.pk, 1) = 'x'
//!       ^^^^^^^^^^^^^^
//! ```
//!
//! the message after `line L, column C` (1-based, columns in characters), the source line, and
//! carets under the span (never past the end of its first line). A very long line (generated SQL)
//! is cut to a window of [`SNIPPET_CONTEXT`] characters on each side of the spot, marked `...`;
//! tabs stay tabs so the carets line up in a terminal.

use crate::span::{line_col, line_text, Span};

/// How many characters of a long line the rendered error shows on each side of the spot.
pub const SNIPPET_CONTEXT: usize = 60;

/// A spot in the query text, resolved for rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    /// 1-based line of the span's start.
    pub line: usize,
    /// 1-based column (in characters) of the span's start.
    pub column: usize,
    /// The line holding the spot (cut around it when very long).
    source_line: String,
    /// 1-based column of the caret within `source_line`.
    caret_column: usize,
    caret_width: usize,
}

impl Snippet {
    /// The spot `span` of `source` (clamped to the text).
    pub fn new(source: &str, span: Span) -> Self {
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
        Snippet { line, column, source_line, caret_column, caret_width }
    }

    /// `line L, column C: message`, the line and the carets.
    pub fn render(&self, message: &str) -> String {
        let pad: String =
            self.source_line.chars().take(self.caret_column - 1).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        format!(
            "line {}, column {}: {message}\n{}\n{pad}{}",
            self.line,
            self.column,
            self.source_line,
            "^".repeat(self.caret_width)
        )
    }
}

/// Renders `message` about `span` of `source` (see the module docs).
pub fn render(source: &str, span: Span, message: &str) -> String {
    Snippet::new(source, span).render(message)
}
