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
    /// form (missing fields: `float32`, `cosine`).
    pub fn from_container_properties(properties: &Value) -> Vec<VectorPolicy> {
        let Some(list) = properties.get("vectorEmbeddingPolicy").get("vectorEmbeddings").as_array() else {
            return vec![];
        };
        list.iter()
            .filter_map(|v| {
                Some(VectorPolicy {
                    path: v.get("path").as_str()?.to_string(),
                    data_type: v.get("dataType").as_str().unwrap_or("float32").to_string(),
                    distance_function: v.get("distanceFunction").as_str().unwrap_or("cosine").to_string(),
                    dimensions: v.get("dimensions").as_f64().map(|d| d as usize),
                })
            })
            .collect()
    }

    /// Whether a higher value means closer (cosine, dot product), which the service sorts first.
    pub fn is_similarity(&self) -> bool {
        !self.distance_function.eq_ignore_ascii_case("euclidean")
    }
}
