//! Storage errors, each with the status code Cosmos DB answers with.

use std::fmt;

/// What went wrong, by the HTTP status code Cosmos DB would answer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// 400: a malformed request (bad id, bad partition key value, wrong key, bad patch, ...).
    BadRequest,
    /// 403 (substatus 1014): the logical partition is full.
    PartitionFull,
    /// 404: no such item, container or database.
    NotFound,
    /// 409: an item with this partition key and id (or a container/database with this id) exists.
    Conflict,
    /// 412: the if-match etag does not match the item's current etag.
    PreconditionFailed,
    /// 413: the item is larger than 2 MB.
    TooLarge,
    /// 429 (substatus 3200): the partition used its request units for now; nothing was done.
    TooManyRequests,
    /// 500: a bug in cosmoql, never the user's fault.
    Internal,
    /// 503: the database directory cannot be read or written (disk full, not writable, in use by
    /// another process, damaged); the message names the file. Nothing was changed.
    Unavailable,
}

impl ErrorKind {
    /// The HTTP status code.
    pub fn status_code(self) -> u16 {
        match self {
            ErrorKind::BadRequest => 400,
            ErrorKind::PartitionFull => 403,
            ErrorKind::NotFound => 404,
            ErrorKind::Conflict => 409,
            ErrorKind::PreconditionFailed => 412,
            ErrorKind::TooLarge => 413,
            ErrorKind::TooManyRequests => 429,
            ErrorKind::Internal => 500,
            ErrorKind::Unavailable => 503,
        }
    }

    /// The Cosmos DB substatus code, where one identifies the case.
    pub fn substatus(self) -> Option<u32> {
        match self {
            ErrorKind::PartitionFull => Some(1014),
            ErrorKind::TooManyRequests => Some(3200),
            _ => None,
        }
    }

    fn reason(self) -> &'static str {
        match self {
            ErrorKind::BadRequest => "Bad Request",
            ErrorKind::PartitionFull => "Forbidden",
            ErrorKind::NotFound => "Not Found",
            ErrorKind::Conflict => "Conflict",
            ErrorKind::PreconditionFailed => "Precondition Failed",
            ErrorKind::TooLarge => "Request Entity Too Large",
            ErrorKind::TooManyRequests => "Too Many Requests",
            ErrorKind::Internal => "Internal Server Error",
            ErrorKind::Unavailable => "Service Unavailable",
        }
    }
}

/// A failed storage operation. A failed write always leaves the store exactly as it was.
#[derive(Debug, Clone, PartialEq)]
pub struct StorageError {
    pub kind: ErrorKind,
    pub message: String,
    /// For a 429: how long to wait before retrying (the service's `x-ms-retry-after-ms`).
    pub retry_after_ms: Option<u64>,
    /// Request units the refused request still cost (the service's `x-ms-request-charge` on an
    /// error), set by the layer that prices requests; 0 until then.
    pub request_charge: f64,
}

impl StorageError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        StorageError { kind, message: message.into(), retry_after_ms: None, request_charge: 0.0 }
    }

    /// A 429: the partition's request units are used up for now; retry after `retry_after_ms`.
    pub fn throttled(retry_after_ms: u64) -> Self {
        StorageError {
            retry_after_ms: Some(retry_after_ms),
            ..StorageError::new(
                ErrorKind::TooManyRequests,
                "Request rate is large. More Request Units may be needed, so no changes were made. Please retry \
                 this request later. Learn more: http://aka.ms/cosmosdb-error-429",
            )
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        StorageError::new(ErrorKind::BadRequest, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        StorageError::new(ErrorKind::NotFound, message)
    }

    pub fn conflict(message: impl Into<String>) -> Self {
        StorageError::new(ErrorKind::Conflict, message)
    }

    /// A broken internal invariant: a bug in cosmoql.
    pub fn internal(message: impl Into<String>) -> Self {
        StorageError::new(ErrorKind::Internal, message)
    }

    /// The HTTP status code (400, 403, 404, 409, 412, 413, 500).
    pub fn status_code(&self) -> u16 {
        self.kind.status_code()
    }
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind == ErrorKind::Internal {
            return write!(f, "internal error (a bug in cosmoql, please report it): {}", self.message);
        }
        write!(f, "{} {}", self.kind.status_code(), self.kind.reason())?;
        if let Some(sub) = self.kind.substatus() {
            write!(f, " (substatus {sub})")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for StorageError {}

/// A definition or key value the catalog refused: a 400.
impl From<cosmoql_catalog::CatalogError> for StorageError {
    fn from(e: cosmoql_catalog::CatalogError) -> Self {
        StorageError::bad_request(e.message)
    }
}

/// Shorthand for storage results.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;
