//! A fixture container's scripts: its `userDefinedFunctions`, read from `fixtures.json` (inline
//! or from files) and registered on the container the fixture loads.

use std::path::Path;

use cosmoql_storage::container::{Container, Script, ScriptKind};
use cosmoql_storage::StorageError;
use cosmoql_value::Value;

/// A fixture container's `userDefinedFunctions`: (id, body) each, a body given inline or in a
/// file relative to `dir`.
pub(super) fn udfs_of(list: &Value, dir: &Path) -> Result<Vec<(String, String)>, String> {
    let items = match list {
        Value::Undefined | Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        _ => return Err("\"userDefinedFunctions\" must be an array".into()),
    };
    let mut udfs = Vec::new();
    for udf in items.iter() {
        let id = udf.get("id").as_str().ok_or("a user-defined function without a string \"id\"")?;
        let body = match (udf.get("body").as_str(), udf.get("file").as_str()) {
            (Some(body), None) => body.to_string(),
            (None, Some(file)) => {
                let path = dir.join(file);
                std::fs::read_to_string(&path).map_err(|e| format!("udf.{id}: {}: {e}", path.display()))?
            }
            _ => return Err(format!("udf.{id}: give its JavaScript as \"body\" or in a \"file\"")),
        };
        udfs.push((id.to_string(), body));
    }
    Ok(udfs)
}

/// Registers the UDFs on `container`.
pub(super) fn register(container: &Container, udfs: &[(String, String)]) -> Result<(), StorageError> {
    for (id, body) in udfs {
        container.create_script(Script::new(ScriptKind::UserDefinedFunction, id.as_str(), body.as_str()))?;
    }
    Ok(())
}
