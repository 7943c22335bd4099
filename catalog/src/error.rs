//! The catalog's one error: a definition (a partition key path or value, an indexing policy) the
//! service refuses with 400 Bad Request, in its words where they are known.

use std::fmt;

/// A refused definition or key value (the service answers 400).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogError {
    /// What is wrong, for the user.
    pub message: String,
}

impl CatalogError {
    /// A 400 with `message`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        CatalogError { message: message.into() }
    }

    /// The service's status code: every catalog refusal is a 400 (with no substatus).
    pub fn status_code(&self) -> u16 {
        400
    }
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CatalogError {}

/// The catalog's results.
pub type Result<T, E = CatalogError> = std::result::Result<T, E>;
