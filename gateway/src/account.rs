//! The database account, `GET /`: the first thing every SDK reads. What they parse
//! (`../shared/research/gateway-python.md` §"GET /", `gateway-rust-sdk.md` §2.1): `_self`, `id`
//! and `_rid` (required by the Rust SDK), the writable and readable locations (a non-empty name
//! and the endpoint as the client reached it), multi-region writes and per-partition failover
//! (off), the default consistency (`Session`, so the SDKs send and track session tokens), the
//! replication and read policies, and `queryEngineConfiguration`, a JSON **string** of the query
//! limits that the .NET SDK parses. No thin-client locations: advertising them sends the Rust SDK
//! to a binary protocol the gateway does not speak.

use cosmoql::{Limits, LIMITS};
use serde_json::{json, Value};

/// The account's one region name (any non-empty name serves: an empty one reads as a failover).
pub const REGION: &str = "cosmoql";

/// The account document for a client that reached the server at `endpoint`
/// (`http://127.0.0.1:8081`, with or without the trailing slash).
pub fn account_document(endpoint: &str) -> Value {
    let endpoint = format!("{}/", endpoint.trim_end_matches('/'));
    let location = json!([{ "name": REGION, "databaseAccountEndpoint": endpoint }]);
    json!({
        "_self": "",
        "id": "cosmoql",
        "_rid": "cosmoql",
        "media": "//media/",
        "addresses": "//addresses/",
        "_dbs": "//dbs/",
        "writableLocations": location,
        "readableLocations": location,
        "enableMultipleWriteLocations": false,
        "enablePerPartitionFailoverBehavior": false,
        "userConsistencyPolicy": { "defaultConsistencyLevel": "Session" },
        "userReplicationPolicy": { "asyncReplication": false, "minReplicaSetSize": 1, "maxReplicasetSize": 1 },
        "systemReplicationPolicy": { "minReplicaSetSize": 1, "maxReplicasetSize": 1 },
        "readPolicy": { "primaryReadCoefficient": 1, "secondaryReadCoefficient": 1 },
        "queryEngineConfiguration": query_engine_configuration(&LIMITS),
    })
}

/// The query limits cosmoql enforces, in the service's `queryEngineConfiguration` form (the
/// names the service advertises; a string of JSON, as the service sends it).
pub fn query_engine_configuration(limits: &Limits) -> String {
    json!({
        "maxSqlQueryInputLength": limits.max_query_text,
        "maxJoinsPerSqlQuery": limits.max_joins,
        "maxLogicalAndPerSqlQuery": limits.max_and,
        "maxLogicalOrPerSqlQuery": limits.max_or,
        "maxUdfRefPerSqlQuery": limits.max_udf_references,
        "maxInExpressionItemsCount": limits.max_in_items,
        "sqlAllowNonFiniteNumbers": false,
        "sqlAllowAggregateFunctions": true,
        "sqlAllowSubQuery": true,
        "sqlAllowScalarSubQuery": true,
        "allowNewKeywords": true,
        "sqlAllowLike": true,
        "sqlAllowGroupByClause": true,
        "sqlAllowTop": true,
        "enableSpatialIndexing": true,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_account_has_what_the_sdks_read() {
        let doc = account_document("http://127.0.0.1:8081");
        for field in ["_self", "id", "_rid"] {
            assert!(doc[field].is_string(), "{field}");
        }
        for list in ["writableLocations", "readableLocations"] {
            assert_eq!(doc[list], json!([{"name": "cosmoql", "databaseAccountEndpoint": "http://127.0.0.1:8081/"}]));
        }
        assert_eq!(
            account_document("https://localhost:8081/")["writableLocations"][0]["databaseAccountEndpoint"],
            "https://localhost:8081/"
        );
        assert_eq!(doc["userConsistencyPolicy"]["defaultConsistencyLevel"], "Session");
        assert!(doc.as_object().unwrap().keys().all(|k| !k.starts_with("thinClient")));
        // A string of JSON, holding the limits the planner enforces.
        let config: Value = serde_json::from_str(doc["queryEngineConfiguration"].as_str().unwrap()).unwrap();
        assert_eq!(config["maxSqlQueryInputLength"], LIMITS.max_query_text);
        assert_eq!(config["maxJoinsPerSqlQuery"], LIMITS.max_joins);
        assert_eq!(config["maxInExpressionItemsCount"], LIMITS.max_in_items);
        assert_eq!(config["maxLogicalOrPerSqlQuery"], LIMITS.max_or);
    }
}
