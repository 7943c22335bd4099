//! cosmoql: Azure Cosmos DB for NoSQL-style SQL over a partitioned JSON document store, embedded in
//! your Rust program.
//!
//! This facade is the embedded API. Today it exposes the document values and the query parser; the
//! store, planner and executor join it as they land (see `docs/ARCHITECTURE.md`).
//!
//! ```
//! use cosmoql::{parse, Value};
//!
//! let query = parse("select value c.name from c where c.age >= 18").unwrap();
//! assert_eq!(query.to_string(), "SELECT VALUE c.name FROM c WHERE c.age >= 18");
//!
//! let doc: Value = cosmoql::value::parse_json(r#"{"name": "Ana", "age": 30.0}"#).unwrap();
//! assert_eq!(cosmoql::value::to_json_string(&doc).unwrap(), r#"{"name":"Ana","age":30}"#);
//! ```

pub mod testing;

/// Document values: [`Value`], JSON I/O, the total order and query comparison.
pub use cosmoql_value as value;

/// The query language: lexer, syntax tree, parser and printer.
pub use cosmoql_parser as parser;

/// The partitioned document store: containers, partition keys, EPK hashing, item operations.
pub use cosmoql_storage as storage;

/// The query executor: compile and run queries over a container.
pub use cosmoql_executor as executor;
pub use cosmoql_executor::{execute, explain, QueryError, QueryOptions, QueryOutput};

pub use cosmoql_parser::{parse, ParseError, Query};
pub use cosmoql_storage::{
    Container, ContainerSettings, Database, PartitionKey, PartitionKeyDefinition, StorageError, Store,
};
pub use cosmoql_value::Value;
