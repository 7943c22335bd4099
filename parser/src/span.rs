//! Byte spans into the query text.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Range;

/// A half-open byte range `start..end` into the query text.
///
/// Spans are *location metadata*, not part of a node's meaning: two spans always compare equal and
/// hash to nothing, so `parse(print(ast)) == ast` holds although the printed text puts every node at
/// another offset. Compare [`Span::range`] when a test is about the location itself.
#[derive(Clone, Copy, Default)]
pub struct Span {
    /// First byte of the node.
    pub start: usize,
    /// One past the last byte of the node.
    pub end: usize,
}

impl Span {
    /// A span from `start` to `end` (bytes).
    pub const fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    /// The smallest span that covers both `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// The byte range, for slicing the source or comparing locations.
    pub fn range(self) -> Range<usize> {
        self.start..self.end
    }
}

impl PartialEq for Span {
    fn eq(&self, _other: &Span) -> bool {
        true
    }
}

impl Eq for Span {}

impl Hash for Span {
    fn hash<H: Hasher>(&self, _state: &mut H) {}
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// 1-based line and column (in characters) of byte offset `at` in `source`.
pub fn line_col(source: &str, at: usize) -> (usize, usize) {
    let at = floor_char_boundary(source, at);
    let before = &source[..at];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = source[line_start..at].chars().count() + 1;
    (line, column)
}

/// The full text of the line holding byte offset `at`, without its line break.
pub fn line_text(source: &str, at: usize) -> &str {
    let at = floor_char_boundary(source, at);
    let start = source[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = source[at..].find('\n').map_or(source.len(), |i| at + i);
    source[start..end].trim_end_matches('\r')
}

fn floor_char_boundary(source: &str, at: usize) -> usize {
    let mut at = at.min(source.len());
    while !source.is_char_boundary(at) {
        at -= 1;
    }
    at
}
