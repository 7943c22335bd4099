//! Typed items: a `T: Serialize` as a [`Value`] to store, and a stored [`Value`] as a
//! `T: DeserializeOwned` to hand back (a `Value` itself passes through unconverted).

use std::any::Any;

use cosmoql_value::Value;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::Error;

/// `item` as a [`Value`].
pub(crate) fn to_value<T: Serialize>(item: &T) -> Result<Value, Error> {
    serde_json::to_value(item).map(Value::from).map_err(|e| Error::Serialization(e.to_string()))
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
