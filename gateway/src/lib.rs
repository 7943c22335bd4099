//! The Cosmos DB REST gateway of `cosmoql serve` (issue 23): what lets apps on the official SDKs
//! (Rust, Python, JavaScript) reach cosmoql. A crate above the facade; the query crates never
//! import it.
//!
//! Built so far, each piece a pure function with its tests:
//! - [`auth`]: the master-key authorization of every request (the HMAC the SDKs sign, the
//!   read-only key, the token's time window), with the service's 401/403 answers;
//! - [`errors`]: every refusal of the embedded API as the service sends it (status, substatus,
//!   `{"code", "message"}`, a refused query's errors with their locations);
//! - [`account`]: the database account document every SDK reads first;
//!
//! The server itself (HTTP/1.1 and HTTP/2 on one port, the resources, queries and feeds) is not
//! built yet: `cosmoql serve` does not exist.

pub mod account;
pub mod auth;
pub mod binary_json;
pub mod changefeed;
pub mod errors;
pub mod items;
pub mod offers;
pub mod pkranges;
pub mod plan;
pub mod query;
pub mod resources;
pub mod routes;
pub mod server;
pub mod wire;

pub use resources::{Gateway, RangeMode};
pub use server::{serve_until_signal, RunningServer, Server, ServerConfig};
