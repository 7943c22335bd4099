//! `cosmoql serve`: the Cosmos DB REST API, so apps on the official SDKs (Rust, Python,
//! JavaScript) reach cosmoql as they reach the service. A crate above the facade (it serves what
//! the embedded API does, as any program would); the query crates never import it.
//!
//! A request's path through it: [`server`] accepts the connection (HTTP/1.1 or h2c), bounds the
//! headers and body, authorizes the signature ([`auth`]) and hands a [`wire::Request`] to
//! [`routes`] on the blocking pool; the route's handler answers with a [`wire::Reply`]:
//! - [`account`]: the database account document every SDK reads first;
//! - [`resources`]: databases and containers (the shared [`Gateway`] state);
//! - [`items`]: documents and transactional batches; [`binary_json`] decodes bodies the Rust SDK
//!   sends in Cosmos binary JSON;
//! - [`query`]: queries and read feeds, run whole by the engine; [`plan`]: the query-plan request;
//! - [`pkranges`]: partition key ranges; [`changefeed`]: the change feed; [`offers`]: throughput
//!   and the queries on the account's feeds;
//! - [`errors`]: every refusal as the service sends it.

pub mod account;
pub mod auth;
pub mod binary_json;
pub mod changefeed;
pub mod errors;
pub mod hybrid;
pub mod items;
pub mod offers;
pub mod pkranges;
pub mod plan;
pub mod query;
pub mod remote;
pub mod resources;
pub mod rewrite;
pub mod routes;
pub mod scripts;
pub mod server;
pub mod tls;
pub mod wire;

pub use resources::{Gateway, RangeMode, RetiredRanges};
pub use server::{serve_until_signal, RunningServer, Server, ServerConfig};
