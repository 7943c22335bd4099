//! Typed items: a `T: Serialize` as a [`Value`] to store, and a stored [`Value`] (or a query's
//! [`Output`]) as a `T: DeserializeOwned` to hand back (a `Value` itself passes through
//! unconverted, and [`JsonText`] is written straight from a stored item's bytes).

use std::any::Any;
use std::fmt;

use cosmoql_executor::Output;
use cosmoql_value::Value;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

use crate::Error;

/// `item` as a [`Value`].
pub(crate) fn to_value<T: Serialize>(item: &T) -> Result<Value, Error> {
    serde_json::to_value(item).map(Value::from).map_err(|e| Error::Serialization(e.to_string()))
}

/// One result as compact JSON text, as the service writes it (system properties last, numbers in
/// its format). Ask a query for `JsonText` results (`query_pages::<JsonText>`) to write them out:
/// an item returned whole (`SELECT *`, `SELECT VALUE c`) is written straight from its stored
/// bytes, without being decoded into a [`Value`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JsonText(String);

impl JsonText {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text, owned.
    pub fn into_string(self) -> String {
        self.0
    }

    /// The value the text stands for.
    pub fn to_value(&self) -> Value {
        cosmoql_value::parse_json(&self.0).unwrap_or(Value::Undefined)
    }
}

impl fmt::Display for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for JsonText {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// From any self-describing format, through a [`Value`] (a query's results skip this: see
/// [`from_output`]).
impl<'de> Deserialize<'de> for JsonText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        cosmoql_value::to_json_string(&value)
            .map(JsonText)
            .ok_or_else(|| serde::de::Error::custom("the value has no JSON form"))
    }
}

/// A query's result as `T`: a [`Value`] decoded, [`JsonText`] written from the stored bytes, any
/// other type read from them (an item returned whole) or from the result's value
/// ([`from_value`]), the same either way.
pub(crate) fn from_output<T: DeserializeOwned + 'static>(output: Output) -> Result<T, Error> {
    use std::any::TypeId;
    if TypeId::of::<T>() == TypeId::of::<JsonText>() {
        let text =
            output.to_json_string().ok_or_else(|| Error::Serialization("a result has no JSON form".to_string()))?;
        let mut slot = Some(JsonText(text));
        if let Some(same) = (&mut slot as &mut dyn Any).downcast_mut::<Option<T>>().and_then(Option::take) {
            return Ok(same);
        }
    }
    match output {
        Output::Whole(item) if TypeId::of::<T>() != TypeId::of::<Value>() => {
            item.read::<T>().map_err(|e| Error::Serialization(e.to_string()))
        }
        Output::Part(part) if TypeId::of::<T>() != TypeId::of::<Value>() => {
            T::deserialize(part.root()).map_err(|e| Error::Serialization(e.to_string()))
        }
        output => from_value(output.into_value()),
    }
}

/// A value as `T`; a [`Value`] is moved as it is (the REPL, the CLI and the suites read values).
pub(crate) fn from_value<T: DeserializeOwned + 'static>(value: Value) -> Result<T, Error> {
    let mut slot = Some(value);
    if let Some(same) = (&mut slot as &mut dyn Any).downcast_mut::<Option<T>>().and_then(Option::take) {
        return Ok(same);
    }
    let json = slot.and_then(|v| v.to_serde_json()).unwrap_or(serde_json::Value::Null);
    serde_json::from_value(json).map_err(|e| Error::Serialization(e.to_string()))
}
