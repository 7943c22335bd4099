//! Partial document update: Cosmos DB's patch operations over JSON-pointer paths.

use cosmoql_value::Value;

use crate::doc::SYSTEM_PROPERTIES;
use crate::error::{Result, StorageError};

/// Cosmos DB accepts at most 10 operations per patch.
pub const MAX_PATCH_OPERATIONS: usize = 10;

/// One patch operation. Paths are JSON pointers (`/a/b/0`, `~1` for `/`, `~0` for `~`); `-` as the
/// last segment of an `Add` or `Set` on an array appends.
#[derive(Debug, Clone, PartialEq)]
pub enum PatchOperation {
    /// Inserts into an array (shifting later elements) or sets an object property (creating it).
    Add { path: String, value: Value },
    /// Sets an object property (creating it) or replaces an array element.
    Set { path: String, value: Value },
    /// Replaces a value that must exist.
    Replace { path: String, value: Value },
    /// Removes a value that must exist.
    Remove { path: String },
    /// Adds `by` to a number (a missing object property starts at 0).
    Increment { path: String, by: f64 },
    /// Removes the value at `from`, which must exist, and adds it at `path`.
    Move { from: String, path: String },
}

impl PatchOperation {
    fn path(&self) -> &str {
        match self {
            PatchOperation::Add { path, .. }
            | PatchOperation::Set { path, .. }
            | PatchOperation::Replace { path, .. }
            | PatchOperation::Remove { path }
            | PatchOperation::Increment { path, .. }
            | PatchOperation::Move { path, .. } => path,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            PatchOperation::Add { .. } => "add",
            PatchOperation::Set { .. } => "set",
            PatchOperation::Replace { .. } => "replace",
            PatchOperation::Remove { .. } => "remove",
            PatchOperation::Increment { .. } => "incr",
            PatchOperation::Move { .. } => "move",
        }
    }

    /// Reads Cosmos DB's JSON form: `{"op": "add"|"set"|"replace"|"remove"|"incr", "path": "/a",
    /// "value": ...}`, or `{"op": "move", "from": "/a", "path": "/b"}`.
    pub fn from_json(v: &Value) -> Result<Self> {
        let path = v
            .get("path")
            .as_str()
            .ok_or_else(|| StorageError::bad_request("a patch operation needs a string `path`"))?
            .to_string();
        let value = || -> Result<Value> {
            match v.get("value") {
                Value::Undefined => Err(StorageError::bad_request(format!("the patch of {path} needs a `value`"))),
                value => Ok(value.clone()),
            }
        };
        Ok(match v.get("op").as_str() {
            Some("add") => PatchOperation::Add { value: value()?, path },
            Some("set") => PatchOperation::Set { value: value()?, path },
            Some("replace") => PatchOperation::Replace { value: value()?, path },
            Some("remove") => PatchOperation::Remove { path },
            Some("move") => match v.get("from").as_str() {
                Some(from) => PatchOperation::Move { from: from.to_string(), path },
                None => return Err(StorageError::bad_request(format!("the move to {path} needs a string `from`"))),
            },
            Some("incr") | Some("increment") => match value()?.as_f64() {
                Some(by) => PatchOperation::Increment { path, by },
                None => return Err(StorageError::bad_request("an incr operation needs a number `value`")),
            },
            _ => return Err(StorageError::bad_request("a patch `op` must be add, set, replace, remove, incr or move")),
        })
    }
}

/// `n += by`, unless the sum is not a finite number (JSON could not hold it).
fn increment(n: &mut f64, by: f64) -> std::result::Result<(), String> {
    let sum = *n + by;
    if !sum.is_finite() {
        return Err(format!(
            "incrementing {} by {} overflows",
            cosmoql_value::format_number(*n),
            cosmoql_value::format_number(by)
        ));
    }
    *n = sum;
    Ok(())
}

/// Applies `operations` to `item` in order. `protected` lists paths (as segments) that no operation
/// may touch, nor any of their parents (the id and the partition key paths). On error `item` may be
/// partly changed: callers patch a copy.
pub fn apply_patch(item: &mut Value, operations: &[PatchOperation], protected: &[Vec<String>]) -> Result<()> {
    if operations.is_empty() || operations.len() > MAX_PATCH_OPERATIONS {
        return Err(StorageError::bad_request(format!(
            "a patch has 1 to {MAX_PATCH_OPERATIONS} operations, not {}",
            operations.len()
        )));
    }
    for op in operations {
        let bad = |why: String| StorageError::bad_request(format!("cannot {} {}: {why}", op.name(), op.path()));
        let target = |path: &str| -> Result<Vec<String>> {
            let segments = parse_pointer(path)?;
            if let Some(p) = protected.iter().find(|p| p.starts_with(&segments) || segments.starts_with(p)) {
                return Err(bad(format!("/{} is the item's id or partition key, which cannot change", p.join("/"))));
            }
            if SYSTEM_PROPERTIES.contains(&segments[0].as_str()) {
                return Err(bad("system properties cannot be patched".to_string()));
            }
            Ok(segments)
        };
        let segments = target(op.path())?;
        let (last, parents) = segments.split_last().ok_or_else(|| bad("the path is empty".to_string()))?;
        match op {
            PatchOperation::Move { from, path } => {
                let source = target(from)?;
                if segments.starts_with(&source) && segments.len() > source.len() {
                    return Err(bad(format!("{path} is inside {from}")));
                }
                let (from_last, from_parents) =
                    source.split_last().ok_or_else(|| bad("`from` is empty".to_string()))?;
                let from_parent = navigate(item, from_parents).ok_or_else(|| bad(format!("{from} does not exist")))?;
                let value = take(from_parent, from_last).ok_or_else(|| bad(format!("{from} does not exist")))?;
                let parent = navigate(item, parents).ok_or_else(|| bad("its parent does not exist".to_string()))?;
                apply_one(parent, last, &PatchOperation::Add { path: path.clone(), value }).map_err(bad)?;
            }
            _ => {
                let parent = navigate(item, parents).ok_or_else(|| bad("its parent does not exist".to_string()))?;
                apply_one(parent, last, op).map_err(bad)?;
            }
        }
    }
    Ok(())
}

/// Removes and returns the value at `last` of `parent` (a property or an array index).
fn take(parent: &mut Value, last: &str) -> Option<Value> {
    match parent {
        Value::Object(_) => parent.as_object_mut()?.shift_remove(last),
        Value::Array(_) => {
            let items = parent.as_array_mut()?;
            let index = last.parse::<usize>().ok().filter(|i| *i < items.len())?;
            Some(items.remove(index))
        }
        _ => None,
    }
}

fn apply_one(parent: &mut Value, last: &str, op: &PatchOperation) -> Result<(), String> {
    if let Some(map) = parent.as_object_mut() {
        return match op {
            PatchOperation::Add { value, .. } | PatchOperation::Set { value, .. } => {
                map.insert(last.to_string(), value.clone());
                Ok(())
            }
            PatchOperation::Replace { value, .. } => match map.get_mut(last) {
                Some(slot) => {
                    *slot = value.clone();
                    Ok(())
                }
                None => Err("the property does not exist".to_string()),
            },
            PatchOperation::Remove { .. } => match map.shift_remove(last) {
                Some(_) => Ok(()),
                None => Err("the property does not exist".to_string()),
            },
            PatchOperation::Move { .. } => Err("a move is applied as a remove and an add".to_string()),
            PatchOperation::Increment { by, .. } => match map.get_mut(last) {
                None => {
                    map.insert(last.to_string(), Value::Number(*by));
                    Ok(())
                }
                Some(Value::Number(n)) => increment(n, *by),
                Some(other) => Err(format!("it holds {}, not a number", other.kind().name())),
            },
        };
    }
    if let Some(items) = parent.as_array_mut() {
        let len = items.len();
        let index = if last == "-" {
            match op {
                PatchOperation::Add { .. } | PatchOperation::Set { .. } => len,
                _ => return Err("`-` (the end of the array) only works with add and set".to_string()),
            }
        } else {
            last.parse::<usize>().map_err(|_| format!("`{last}` is not an array index"))?
        };
        let in_range =
            || if index < len { Ok(()) } else { Err(format!("index {index} is past the end ({len} elements)")) };
        return match op {
            PatchOperation::Add { value, .. } => {
                if index > len {
                    return Err(format!("index {index} is past the end ({len} elements)"));
                }
                items.insert(index, value.clone());
                Ok(())
            }
            PatchOperation::Set { value, .. } => {
                if index == len {
                    items.push(value.clone());
                    Ok(())
                } else {
                    in_range()?;
                    items[index] = value.clone();
                    Ok(())
                }
            }
            PatchOperation::Replace { value, .. } => {
                in_range()?;
                items[index] = value.clone();
                Ok(())
            }
            PatchOperation::Remove { .. } => {
                in_range()?;
                items.remove(index);
                Ok(())
            }
            PatchOperation::Move { .. } => Err("a move is applied as a remove and an add".to_string()),
            PatchOperation::Increment { by, .. } => {
                in_range()?;
                match &mut items[index] {
                    Value::Number(n) => increment(n, *by),
                    other => Err(format!("it holds {}, not a number", other.kind().name())),
                }
            }
        };
    }
    Err(format!("its parent is {}, not an object or array", parent.kind().name()))
}

fn navigate<'a>(mut cur: &'a mut Value, segments: &[String]) -> Option<&'a mut Value> {
    for seg in segments {
        cur = match cur {
            Value::Object(_) => cur.as_object_mut()?.get_mut(seg.as_str())?,
            Value::Array(_) => {
                let i: usize = seg.parse().ok()?;
                cur.as_array_mut()?.get_mut(i)?
            }
            _ => return None,
        };
    }
    Some(cur)
}

/// `/a/b~1c/0` -> `["a", "b/c", "0"]`.
fn parse_pointer(path: &str) -> Result<Vec<String>> {
    let bad = |why: &str| StorageError::bad_request(format!("invalid patch path `{path}`: {why}"));
    let rest = path.strip_prefix('/').ok_or_else(|| bad("it must start with `/`"))?;
    if rest.is_empty() {
        return Err(bad("the whole item cannot be patched"));
    }
    rest.split('/')
        .map(|seg| {
            if seg.is_empty() {
                return Err(bad("a segment is empty"));
            }
            Ok(seg.replace("~1", "/").replace("~0", "~"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cosmoql_value::parse_json;

    fn patched(doc: &str, ops: &[PatchOperation]) -> Result<Value> {
        let mut v = parse_json(doc).unwrap();
        apply_patch(&mut v, ops, &[vec!["id".into()], vec!["pk".into()]])?;
        Ok(v)
    }

    fn json(text: &str) -> Value {
        parse_json(text).unwrap()
    }

    #[test]
    fn each_operation_on_objects_and_arrays() {
        let doc = r#"{"id":"1","pk":"a","n":1,"tags":["x","y"],"o":{"k":true}}"#;
        let ops = [
            PatchOperation::Add { path: "/tags/1".into(), value: json("\"new\"") },
            PatchOperation::Add { path: "/tags/-".into(), value: json("\"end\"") },
            PatchOperation::Set { path: "/o/k".into(), value: json("false") },
            PatchOperation::Set { path: "/fresh".into(), value: json("[1]") },
            PatchOperation::Replace { path: "/tags/0".into(), value: json("\"X\"") },
            PatchOperation::Remove { path: "/tags/2".into() },
            PatchOperation::Increment { path: "/n".into(), by: 2.5 },
            PatchOperation::Increment { path: "/counter".into(), by: 1.0 },
        ];
        let v = patched(doc, &ops).unwrap();
        assert_eq!(
            v,
            json(r#"{"id":"1","pk":"a","n":3.5,"tags":["X","new","end"],"o":{"k":false},"fresh":[1],"counter":1}"#)
        );
    }

    #[test]
    fn bad_patches_are_rejected() {
        let doc = r#"{"id":"1","pk":"a","n":"text","tags":["x"],"o":{"k":{"deep":1}}}"#;
        let cases = [
            PatchOperation::Replace { path: "/missing".into(), value: json("1") },
            PatchOperation::Remove { path: "/missing".into() },
            PatchOperation::Increment { path: "/n".into(), by: 1.0 },
            PatchOperation::Add { path: "/tags/5".into(), value: json("1") },
            PatchOperation::Remove { path: "/tags/-".into() },
            PatchOperation::Set { path: "/nope/child".into(), value: json("1") },
            PatchOperation::Set { path: "/id".into(), value: json("\"2\"") },
            PatchOperation::Remove { path: "/pk".into() },
            PatchOperation::Set { path: "/_ts".into(), value: json("1") },
            PatchOperation::Set { path: "".into(), value: json("1") },
            PatchOperation::Set { path: "/".into(), value: json("1") },
            PatchOperation::Set { path: "/n/x".into(), value: json("1") },
        ];
        for op in cases {
            let err = patched(doc, std::slice::from_ref(&op)).unwrap_err();
            assert_eq!(err.status_code(), 400, "{op:?}: {err}");
        }
        let too_many = vec![PatchOperation::Increment { path: "/c".into(), by: 1.0 }; 11];
        assert_eq!(patched(doc, &too_many).unwrap_err().status_code(), 400);
        assert_eq!(patched(doc, &[]).unwrap_err().status_code(), 400);
    }

    #[test]
    fn pointer_escapes() {
        let v =
            patched(r#"{"id":"1","a/b":{"~":0}}"#, &[PatchOperation::Increment { path: "/a~1b/~0".into(), by: 1.0 }])
                .unwrap();
        assert_eq!(v, json(r#"{"id":"1","a/b":{"~":1}}"#));
    }

    #[test]
    fn operations_parse_from_json() {
        let op = PatchOperation::from_json(&json(r#"{"op":"incr","path":"/n","value":2}"#)).unwrap();
        assert_eq!(op, PatchOperation::Increment { path: "/n".into(), by: 2.0 });
        assert!(PatchOperation::from_json(&json(r#"{"op":"move","path":"/n"}"#)).is_err());
        assert!(PatchOperation::from_json(&json(r#"{"op":"set","path":"/n"}"#)).is_err());
    }
}
