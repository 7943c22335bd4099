//! The Cosmos DB for NoSQL query language: lexer, spanned syntax tree, parser and printer.
//!
//! ```
//! let query = cosmoql_parser::parse("SELECT c.id FROM c WHERE c.qty > 10 ORDER BY c.id").unwrap();
//! assert_eq!(query.to_string(), "SELECT c.id FROM c WHERE c.qty > 10 ORDER BY c.id");
//! assert_eq!(cosmoql_parser::parse(&query.to_string()).unwrap(), query);
//! ```
//!
//! Errors render as `line L, column C: expected X, found Y` followed by the source line and a caret
//! (see [`ParseError`]). Nesting is bounded ([`MAX_NESTING`], [`MAX_EXPRESSION_DEPTH`]), so no input
//! can overflow the stack.

pub mod ast;
pub mod diagnostic;
mod display;
mod error;
pub mod hints;
pub mod lexer;
mod parser;
mod span;

pub use ast::*;
pub use error::{ParseError, ParseErrorKind};
pub use parser::{parse_expression, parse_query, MAX_EXPRESSION_DEPTH, MAX_LOGICAL_OPERATORS, MAX_NESTING};
pub use span::Span;

/// Parses a query. Same as [`parse_query`].
pub fn parse(source: &str) -> Result<Query, ParseError> {
    parse_query(source)
}
