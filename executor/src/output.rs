//! What a query returns, one result at a time: a [`Value`], or a stored item returned whole
//! (`SELECT *`, `SELECT VALUE c`), which stays its stored bytes until a consumer asks for a value
//! ([`Output::into_value`]) or writes its JSON straight from them ([`Output::write_json`]).

use cosmoql_storage::doc::{write_json_number, write_json_string};
use cosmoql_storage::{DocPart, WholeItem};
use cosmoql_value::Value;

use crate::memory::{heap_bytes, json_value_bytes, part_bytes, whole_item_bytes};

/// One result of a query.
#[derive(Debug, Clone)]
pub enum Output {
    Value(Value),
    /// A stored item with its system properties, not decoded.
    Whole(WholeItem),
    /// A part of a stored item (`SELECT VALUE c.location`), not decoded.
    Part(DocPart),
}

impl Output {
    /// The result as a value (a whole item decoded, with its system properties).
    pub fn into_value(self) -> Value {
        match self {
            Output::Value(v) => v,
            other => other.to_value(),
        }
    }

    /// [`Output::into_value`] without consuming the result.
    pub fn to_value(&self) -> Value {
        match self {
            Output::Value(v) => v.clone(),
            Output::Whole(item) => item.to_value(),
            Output::Part(part) => part.root().to_value(),
        }
    }

    /// Whether the result is undefined (dropped: a query never returns undefined).
    pub fn is_undefined(&self) -> bool {
        matches!(self, Output::Value(Value::Undefined))
    }

    /// Appends the result's compact JSON text to `out` (a whole item's straight from its stored
    /// bytes), the same text as `cosmoql_value::to_json_string(&self.to_value())`. `false`, with
    /// nothing appended, when the result has no JSON form.
    pub fn write_json(&self, out: &mut Vec<u8>) -> bool {
        match self {
            // Scalars by the stored documents' writers (the same text, without serde).
            Output::Value(Value::String(s)) => {
                write_json_string(out, s);
                true
            }
            Output::Value(Value::Number(n)) => write_json_number(out, *n),
            Output::Value(v) => match cosmoql_value::to_json_string(v) {
                Some(text) => {
                    out.extend_from_slice(text.as_bytes());
                    true
                }
                None => false,
            },
            Output::Whole(item) => item.write_json(out),
            Output::Part(part) => part.root().write_json(out),
        }
    }

    /// The result's compact JSON text; `None` when it has no JSON form.
    pub fn to_json_string(&self) -> Option<String> {
        let capacity = match self {
            Output::Value(Value::String(s)) => s.len() + 2,
            Output::Value(Value::Number(_)) => 24,
            Output::Value(v) => return cosmoql_value::to_json_string(v),
            // The system properties take about 200 bytes.
            Output::Whole(item) => item.item.doc.len() * 5 / 4 + 256,
            Output::Part(part) => part.root().as_bytes().len() * 5 / 4 + 8,
        };
        let mut out = Vec::with_capacity(capacity);
        // Written by the JSON writers: UTF-8 for every document the store accepted.
        self.write_json(&mut out).then(|| String::from_utf8(out).ok()).flatten()
    }

    /// [`crate::memory::value_bytes`] of the result's value (what its request charge counts),
    /// `Err` with the same measure when it holds a number JSON cannot write.
    pub fn json_bytes(&self) -> Result<u64, u64> {
        match self {
            Output::Value(v) => json_value_bytes(v),
            Output::Whole(item) => whole_item_bytes(item),
            Output::Part(part) => part_bytes(part),
        }
    }

    /// [`Output::json_bytes`], whether or not JSON can write the result.
    pub fn bytes(&self) -> u64 {
        self.json_bytes().unwrap_or_else(|bytes| bytes)
    }

    /// The memory the result holds besides its own `size_of::<Output>()`: a value's heap, a
    /// whole item's stored bytes (which it keeps alive).
    pub fn heap_bytes(&self) -> u64 {
        match self {
            Output::Value(v) => heap_bytes(v),
            Output::Whole(item) => item.item.doc.memory_len() as u64,
            Output::Part(part) => part.doc_len() as u64,
        }
    }
}

impl From<Value> for Output {
    fn from(v: Value) -> Output {
        Output::Value(v)
    }
}
