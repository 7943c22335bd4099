//! Document values for cosmoql: the [`Value`] type, JSON input/output with
//! Cosmos DB number formatting, and the two notions of comparison.
//!
//! # Two kinds of comparison
//!
//! 1. **The total order** — `Eq`, `Ord` and `Hash` on [`Value`]. Every pair of
//!    values is comparable: undefined < null < false < true < numbers <
//!    strings < arrays < objects, numbers by value (`-0 == 0`, NaN after
//!    `+Infinity`), strings by code point, arrays lexicographically, objects
//!    as their key-sorted entries. It is what `ORDER BY`, `MIN`/`MAX`,
//!    indexes and merges sort by, and what `DISTINCT`/`GROUP BY` group by
//!    (`1` and `1.0` are one value, object key order is irrelevant,
//!    `undefined` is one group). `cmp == Equal` ⇔ `==` ⇒ equal hashes.
//!    Details (NaN, UTF-8 vs UTF-16 string order): [`order`].
//! 2. **Query comparison** — the SQL operators in [`ops`]. `=` yields
//!    `undefined` unless both sides have the same JSON type; `<`, `<=`, `>`,
//!    `>=` are only defined between two numbers, strings, booleans or nulls;
//!    `AND`/`OR`/`NOT` use three-valued logic, and a `WHERE` keeps a row only
//!    if its condition [`is_truthy`] (exactly `true`).
//!
//! Never use `==`/`<` on `Value` to implement the query operators, nor the
//! other way round.
//!
//! # JSON
//!
//! [`parse_json`] / [`from_reader`] read JSON (numbers become `f64`, object
//! key order is kept). [`to_json_string`] writes compact JSON, omitting
//! `undefined` (and NaN/±Infinity, which have no JSON form) wherever it
//! occurs, and returning `None` for a top-level one. Numbers print as
//! JavaScript/Cosmos DB prints them ([`format_number`]): `3`, not `3.0`;
//! `13.475000000000001`; `1e+21`. Details: [`json`].
//!
//! ```
//! use cosmoql_value::{parse_json, to_json_string, query_eq, Value};
//!
//! let doc = parse_json(r#"{"b": 1.0, "a": [3, 13.475000000000001]}"#).unwrap();
//! assert_eq!(to_json_string(&doc).unwrap(), r#"{"b":1,"a":[3,13.475000000000001]}"#);
//! assert!(doc.get("missing").is_undefined());
//! // Query equality across two types is false; with an undefined side it is undefined:
//! assert_eq!(query_eq(doc.get("b"), &Value::from("1")), Value::Bool(false));
//! assert_eq!(query_eq(doc.get("missing"), &Value::Null), Value::Undefined);
//! ```

pub mod json;
pub mod like;
pub mod merge;
pub mod ops;
pub mod order;
pub mod text;
mod value;

pub use json::{
    format_number, from_reader, parse_json, parse_json_slice, to_json_string, to_json_string_pretty, with_number_text,
    write_json, JsonError,
};
pub use like::LikePattern;
pub use ops::{
    and, is_truthy, not, or, query_cmp, query_eq, query_ge, query_gt, query_le, query_lt, query_ne, ValueSet,
};
pub use value::{Map, Value, ValueKind};

/// Re-exported so that dependents build [`Map`]s with the same `indexmap`.
pub use indexmap;
