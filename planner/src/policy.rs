//! The container policies planning reads: the vector embedding policy (for `VectorDistance`).

use cosmoql_value::Value;

/// One entry of a container's `vectorEmbeddingPolicy.vectorEmbeddings`.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorPolicy {
    /// `/embedding`
    pub path: String,
    /// `float32`, `int8`, `uint8`, `float16`
    pub data_type: String,
    /// `cosine`, `dotproduct`, `euclidean`
    pub distance_function: String,
    pub dimensions: Option<usize>,
}

impl VectorPolicy {
    /// The `vectorEmbeddingPolicy.vectorEmbeddings` of container properties in Cosmos DB's JSON
    /// form (missing fields: `float32`, `cosine`). An entry the service would refuse (no path,
    /// an unknown distance function or data type, dimensions that are not a positive integer) is
    /// an error naming it.
    pub fn from_container_properties(properties: &Value) -> Result<Vec<VectorPolicy>, String> {
        if !properties.is_object() {
            return Err(format!("container properties are a JSON object, not {}", properties.kind().name()));
        }
        let policy = properties.get("vectorEmbeddingPolicy");
        if policy.is_undefined() || policy.is_null() {
            return Ok(Vec::new());
        }
        let Some(list) = policy.get("vectorEmbeddings").as_array() else {
            return Err("vectorEmbeddingPolicy.vectorEmbeddings must be an array".to_string());
        };
        list.iter()
            .enumerate()
            .map(|(i, v)| {
                let bad = |what: &str| format!("vectorEmbeddings[{i}]: {what}");
                let path = match v.get("path").as_str() {
                    Some(p) if p.starts_with('/') && p.len() > 1 => p.to_string(),
                    _ => return Err(bad("`path` must be a property path such as \"/embedding\"")),
                };
                let text = |name: &str, default: &str, allowed: &[&str]| match v.get(name) {
                    Value::Undefined => Ok(default.to_string()),
                    Value::String(s) if allowed.iter().any(|a| a.eq_ignore_ascii_case(s)) => Ok(s.to_ascii_lowercase()),
                    other => Err(bad(&format!("`{name}` must be one of {}, not {other}", allowed.join(", ")))),
                };
                let data_type = text("dataType", "float32", &["float32", "float16", "int8", "uint8"])?;
                let distance_function = text("distanceFunction", "cosine", &["cosine", "dotproduct", "euclidean"])?;
                let dimensions = match v.get("dimensions") {
                    Value::Undefined => None,
                    Value::Number(n) if *n >= 1.0 && n.fract() == 0.0 && *n <= 1_000_000.0 => Some(*n as usize),
                    other => return Err(bad(&format!("`dimensions` must be a positive integer, not {other}"))),
                };
                Ok(VectorPolicy { path, data_type, distance_function, dimensions })
            })
            .collect()
    }

    /// Whether a higher value means closer (cosine, dot product), which the service sorts first.
    pub fn is_similarity(&self) -> bool {
        !self.distance_function.eq_ignore_ascii_case("euclidean")
    }
}

#[cfg(test)]
mod tests {
    use cosmoql_value::parse_json;

    use super::*;

    fn policies(json: &str) -> Result<Vec<VectorPolicy>, String> {
        VectorPolicy::from_container_properties(&parse_json(json).unwrap())
    }

    #[test]
    fn policies_the_service_would_refuse_are_errors() {
        assert_eq!(policies("{}").unwrap(), vec![]);
        let ok = policies(r#"{"vectorEmbeddingPolicy": {"vectorEmbeddings": [{"path": "/v", "dimensions": 3, "distanceFunction": "DotProduct"}]}}"#).unwrap();
        assert_eq!((ok[0].distance_function.as_str(), ok[0].dimensions), ("dotproduct", Some(3)));
        for bad in [
            "[]",
            r#"{"vectorEmbeddingPolicy": {"vectorEmbeddings": {}}}"#,
            r#"{"vectorEmbeddingPolicy": {"vectorEmbeddings": [{"dimensions": 3}]}}"#,
            r#"{"vectorEmbeddingPolicy": {"vectorEmbeddings": [{"path": "/v", "dimensions": -1}]}}"#,
            r#"{"vectorEmbeddingPolicy": {"vectorEmbeddings": [{"path": "/v", "dimensions": 1.5}]}}"#,
            r#"{"vectorEmbeddingPolicy": {"vectorEmbeddings": [{"path": "/v", "distanceFunction": "manhattan"}]}}"#,
            r#"{"vectorEmbeddingPolicy": {"vectorEmbeddings": [{"path": "/v", "dataType": "float64"}]}}"#,
        ] {
            assert!(policies(bad).is_err(), "{bad}");
        }
    }
}
