//! The account's resources as the REST API shows them: databases and containers addressed by
//! name or by `_rid` (the .NET SDK addresses some requests by rid), their documents with the
//! system properties the SDKs read (`_rid`, `_self`, `_etag`, `_ts` and the feed links), and
//! the requests on them (create, read, list, replace, delete).
//!
//! Facts (`../shared/research/gateway-python.md` §3.2): the SDKs cache a container by link and by
//! `_rid`, so `_rid` is required; `partitionKey` comes back exactly as the store holds it (the
//! SDKs hash keys with its `paths`, `kind` and `version`); `_self` embeds the rids (the Python SDK
//! cuts the collection rid out of an item's `_self`).

use cosmoql::store::PartitionInfo;
use cosmoql::{
    ContainerClient, ContainerProperties, CosmosClient, DatabaseClient, Epk, IndexingPolicy, PartitionKey,
    PartitionKeyDefinition, Provisioned, RetryOptions, Value,
};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::time::Duration;

use crate::errors::{self, WireError};
use crate::pkranges::RangeHistory;
use crate::wire::{Reply, Request};

/// The state every request shares: the account, and what the gateway remembers beside it.
#[derive(Debug)]
pub struct Gateway {
    /// The account.
    pub client: CosmosClient,
    /// The ranges listed so far, for the parents of the ranges a split makes.
    pub ranges: RangeHistory,
    /// How containers' ranges are listed.
    pub range_mode: RangeMode,
    /// How a range retired by a split answers.
    pub retired: RetiredRanges,
}

/// A strong etag of a resource's properties: it changes exactly when they do.
pub fn content_etag(properties: &Value) -> String {
    let text = cosmoql::value::to_json_string(properties).unwrap_or_default();
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("\"{}-{}-{}-{}-{}\"", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// Converts a store document to the gateway's JSON.
pub fn to_json(v: &Value) -> serde_json::Value {
    cosmoql::value::to_json_string(v).and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(serde_json::Value::Null)
}

impl Gateway {
    /// A gateway over `client`, listing ranges as `range_mode` says and answering for retired
    /// ranges as `retired` says.
    pub fn new(client: CosmosClient, range_mode: RangeMode, retired: RetiredRanges) -> Gateway {
        Gateway { client, ranges: RangeHistory::default(), range_mode, retired }
    }

    /// The database named (or with the rid) `name`; 404 if there is none.
    pub fn database(&self, name: &str, request: &Request) -> Result<(DatabaseClient, Value), WireError> {
        let by_name = self.client.database_client(name);
        if let Ok(props) = by_name.read_properties() {
            return Ok((by_name, props));
        }
        for id in self.client.database_ids() {
            let db = self.client.database_client(&id);
            if let Ok(props) = db.read_properties() {
                if props.get("_rid").as_str() == Some(name) {
                    return Ok((db, props));
                }
            }
        }
        Err(not_found(request, &format!("Owner resource does not exist: database `{name}`")))
    }

    /// The container `coll` of database `db` (names or rids); 404 if there is none.
    pub fn container(&self, db: &str, coll: &str, request: &Request) -> Result<Container, WireError> {
        let (database, db_props) = self.database(db, request)?;
        let client = match database.container_client(coll) {
            Ok(c) => c,
            Err(_) => database
                .container_ids()
                .unwrap_or_default()
                .iter()
                .filter_map(|id| database.container_client(id).ok())
                .find(|c| c.rid() == coll)
                .ok_or_else(|| not_found(request, &format!("Resource Not Found: container `{coll}`")))?,
        };
        let db_rid = db_props.get("_rid").as_str().unwrap_or_default().to_string();
        let rid = client.rid();
        // A client that cached the container before it was deleted and created again: the
        // service's 400/1024, on which the SDKs read the container again.
        if request.header("x-ms-cosmos-intended-collection-rid").is_some_and(|intended| intended != rid) {
            return Err(errors::refusal(
                400,
                1024,
                &format!("The container `{coll}` was created again since the client read it (its rid is now {rid})."),
                &request.activity_id,
            ));
        }
        // A throttled request is the client's to retry (its SDK waits what the 429 says).
        let client = client.with_retry_options(RetryOptions { max_attempts: 1, max_wait: Duration::ZERO });
        Ok(Container {
            client,
            database: database.id().to_string(),
            db_rid,
            rid,
            ranges: self.range_mode,
            retired: self.retired,
        })
    }

    /// A database's document.
    pub fn database_document(&self, props: &Value) -> serde_json::Value {
        let rid = props.get("_rid").as_str().unwrap_or_default();
        json!({
            "id": props.get("id").as_str(),
            "_rid": rid,
            "_self": format!("dbs/{rid}/"),
            "_etag": content_etag(props),
            "_colls": "colls/",
            "_users": "users/",
            "_ts": to_json(props.get("_ts")),
        })
    }

    /// A container's document: its properties, the service's defaults for what the store does not
    /// keep, and the system properties.
    pub fn container_document(&self, container: &Container) -> serde_json::Value {
        let props = container.client.read_properties();
        let mut doc = to_json(&props);
        if let Some(map) = doc.as_object_mut() {
            map.insert(
                "conflictResolutionPolicy".into(),
                json!({"mode": "LastWriterWins", "conflictResolutionPath": "/_ts", "conflictResolutionProcedure": ""}),
            );
            map.insert("geospatialConfig".into(), json!({"type": "Geography"}));
            map.insert("_self".into(), json!(format!("dbs/{}/colls/{}/", container.db_rid, container.rid)));
            map.insert("_etag".into(), json!(content_etag(&props)));
            map.insert("_docs".into(), json!("docs/"));
            map.insert("_sprocs".into(), json!("sprocs/"));
            map.insert("_triggers".into(), json!("triggers/"));
            map.insert("_udfs".into(), json!("udfs/"));
            map.insert("_conflicts".into(), json!("conflicts/"));
        }
        doc
    }

    /// `POST /dbs`: creates a database (201; 409 if it exists).
    pub fn create_database(&self, request: &Request) -> Result<Reply, WireError> {
        let body = request.json_body()?;
        let Some(id) = body.get("id").as_str() else {
            return Err(request
                .bad_request("The input content is invalid because the required properties - 'id; ' - are missing"));
        };
        let db = self.client.create_database(id).map_err(|e| errors::from_error(&e, &request.activity_id))?;
        if let Some(provisioned) = offer_of(request)? {
            db.replace_throughput(provisioned).map_err(|e| errors::from_error(&e, &request.activity_id))?;
        }
        let props = db.read_properties().map_err(|e| errors::from_error(&e, &request.activity_id))?;
        Ok(Reply::json(201, &self.database_document(&props)))
    }

    /// Every database's document.
    pub fn database_documents(&self) -> Vec<serde_json::Value> {
        self.client
            .database_ids()
            .iter()
            .filter_map(|id| self.client.database_client(id).read_properties().ok())
            .map(|p| self.database_document(&p))
            .collect()
    }

    /// `DELETE /dbs/{db}`.
    pub fn delete_database(&self, name: &str, request: &Request) -> Result<Reply, WireError> {
        let (db, _) = self.database(name, request)?;
        self.client.delete_database(db.id()).map_err(|e| errors::from_error(&e, &request.activity_id))?;
        Ok(Reply::empty(204))
    }

    /// `POST /dbs/{db}/colls`: creates a container from the service's container body (201; 409
    /// if it exists).
    pub fn create_container(&self, db: &str, request: &Request) -> Result<Reply, WireError> {
        let (database, _) = self.database(db, request)?;
        let body = request.json_body()?;
        let properties = container_properties(&body, request)?;
        // A container with no throughput of its own in a database with none to share gets the
        // service's default, 400 RU/s of its own (the Python SDK's samples read it back).
        let shared = database.read_throughput().ok().flatten().is_some();
        let properties = match offer_of(request)? {
            Some(provisioned) => properties.throughput(provisioned),
            None if !shared => properties.throughput(Provisioned::Manual(DEFAULT_CONTAINER_THROUGHPUT)),
            None => properties,
        };
        let id = properties.id.clone();
        database.create_container(properties).map_err(|e| errors::from_error(&e, &request.activity_id))?;
        let container = self.container(db, &id, request)?;
        Ok(Reply::json(201, &self.container_document(&container)))
    }

    /// A database's `_rid` and the documents of its containers.
    pub fn container_documents(
        &self,
        db: &str,
        request: &Request,
    ) -> Result<(String, Vec<serde_json::Value>), WireError> {
        let (database, props) = self.database(db, request)?;
        let docs = database
            .container_ids()
            .unwrap_or_default()
            .iter()
            .filter_map(|id| self.container(db, id, request).ok())
            .map(|c| self.container_document(&c))
            .collect();
        Ok((props.get("_rid").as_str().unwrap_or_default().to_string(), docs))
    }

    /// `PUT /dbs/{db}/colls/{c}`: replaces what may change of a container (its indexing policy
    /// and default time to live); the id and partition key must stay.
    pub fn replace_container(&self, db: &str, coll: &str, request: &Request) -> Result<Reply, WireError> {
        let container = self.container(db, coll, request)?;
        let body = request.json_body()?;
        let current = container.client.read_properties();
        if body.get("id").as_str() != current.get("id").as_str() {
            return Err(request.bad_request("The id of a container cannot change."));
        }
        let key = body.get("partitionKey");
        if !key.is_undefined()
            && PartitionKeyDefinition::from_json(key).ok().map(|d| d.to_json())
                != Some(current.get("partitionKey").clone())
        {
            return Err(request.bad_request("Partition key definition of a container cannot be changed."));
        }
        let fail = |e: cosmoql::Error| errors::from_error(&e, &request.activity_id);
        let policy = body.get("indexingPolicy");
        if !policy.is_undefined() {
            let policy = IndexingPolicy::from_json(policy).map_err(|e| fail(e.into()))?;
            container.client.replace_indexing_policy(policy).map_err(fail)?;
        }
        let ttl = match body.get("defaultTtl") {
            Value::Undefined | Value::Null => None,
            Value::Number(n) if n.fract() == 0.0 => Some(*n as i64),
            _ => return Err(request.bad_request("defaultTtl must be an integer.")),
        };
        container.client.replace_default_ttl(ttl).map_err(fail)?;
        // Omitted, the analytical time to live stays as it was (the service's documented rule).
        match body.get("analyticalStorageTtl") {
            Value::Undefined => {}
            Value::Null => container.client.replace_analytical_storage_ttl(None).map_err(fail)?,
            Value::Number(n) if n.fract() == 0.0 => {
                container.client.replace_analytical_storage_ttl(Some(*n as i64)).map_err(fail)?
            }
            _ => return Err(request.bad_request("analyticalStorageTtl must be an integer.")),
        }
        Ok(Reply::json(200, &self.container_document(&container)))
    }

    /// `DELETE /dbs/{db}/colls/{c}`.
    pub fn delete_container(&self, db: &str, coll: &str, request: &Request) -> Result<Reply, WireError> {
        let container = self.container(db, coll, request)?;
        self.client
            .database_client(&container.database)
            .delete_container(container.client.id())
            .map_err(|e| errors::from_error(&e, &request.activity_id))?;
        Ok(Reply::empty(204))
    }
}

/// How the gateway lists a container's partition key ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RangeMode {
    /// One range per physical partition, as the service lists them: SDKs that fan out per range
    /// (the Rust and JavaScript SDKs, the Python SDK for prefix keys) see cosmoql's partitions,
    /// and what their client-side pipelines cannot merge they refuse, as against the service.
    #[default]
    Physical,
    /// One range, `["", "FF")`, for every container: an SDK that fans out per range sends each
    /// query whole to it, and the engine answers every shape exactly (the Rust SDK's aggregates
    /// and GROUP BY, which it cannot merge itself).
    Single,
}

/// How a request for a partition key range that a split retired is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RetiredRanges {
    /// For the span the range had (now its children's), its continuation still valid: no SDK
    /// needs to handle the split (`../shared/research/gateway-python.md` §7: the Python SDK's
    /// repair restarts the children from the beginning and repeats results).
    #[default]
    Transparent,
    /// 410 Gone with substatus 1002, as the service answers: the SDKs reload the ranges and
    /// repair the request themselves (to test that handling).
    Gone,
}

/// A container as a request found it: the client and the rids its documents embed.
#[derive(Debug, Clone)]
pub struct Container {
    /// The container.
    pub client: ContainerClient,
    /// Its database's id.
    pub database: String,
    /// Its database's `_rid`.
    pub db_rid: String,
    /// Its `_rid`.
    pub rid: String,
    /// How its ranges are listed.
    pub ranges: RangeMode,
    /// How its retired ranges answer.
    pub retired: RetiredRanges,
}

impl Container {
    /// The partition key ranges as the gateway lists them.
    pub fn listed_partitions(&self) -> Vec<PartitionInfo> {
        let partitions = self.client.partitions();
        match self.ranges {
            RangeMode::Physical => partitions,
            RangeMode::Single => vec![PartitionInfo {
                id: 0,
                min: Epk::min(),
                max: Epk::max(),
                items: partitions.iter().map(|p| p.items).sum(),
                bytes: partitions.iter().map(|p| p.bytes).sum(),
                logical_partitions: partitions.iter().map(|p| p.logical_partitions).sum(),
            }],
        }
    }

    /// The listed range that holds `key`'s items.
    pub fn range_of(&self, key: &PartitionKey) -> Option<u32> {
        match self.ranges {
            RangeMode::Physical => self.client.physical_partition_of(key).ok(),
            RangeMode::Single => Some(0),
        }
    }
}

/// The throughput a container gets when it is created without any and its database shares none.
pub const DEFAULT_CONTAINER_THROUGHPUT: f64 = 400.0;

/// A 404 for a request.
pub fn not_found(request: &Request, message: &str) -> WireError {
    errors::refusal(404, 0, message, &request.activity_id)
}

/// The throughput a create request provisions: `x-ms-offer-throughput` (manual) or
/// `x-ms-cosmos-offer-autopilot-settings` (`{"maxThroughput": n}`, autoscale).
fn offer_of(request: &Request) -> Result<Option<Provisioned>, WireError> {
    if let Some(text) = request.header("x-ms-offer-throughput") {
        let ru =
            text.trim().parse::<u32>().map_err(|_| request.bad_request("Invalid value for x-ms-offer-throughput."))?;
        return Ok(Some(Provisioned::Manual(f64::from(ru))));
    }
    if let Some(text) = request.header("x-ms-cosmos-offer-autopilot-settings") {
        let max = serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|v| v["maxThroughput"].as_u64())
            .ok_or_else(|| request.bad_request("Invalid value for x-ms-cosmos-offer-autopilot-settings."))?;
        return Ok(Some(Provisioned::Autoscale { max: max as f64 }));
    }
    Ok(None)
}

/// The container the service's container body describes: id, partition key (absent: a container
/// without a key, as the REST API's default), indexing policy, default TTL, unique keys.
fn container_properties(body: &Value, request: &Request) -> Result<ContainerProperties, WireError> {
    let fail = |e: cosmoql::Error| errors::from_error(&e, &request.activity_id);
    let Some(id) = body.get("id").as_str() else {
        return Err(
            request.bad_request("The input content is invalid because the required properties - 'id; ' - are missing")
        );
    };
    let key = PartitionKeyDefinition::from_json(body.get("partitionKey")).map_err(|e| fail(e.into()))?;
    let mut properties = ContainerProperties::with_key(id, key).kept_properties(body).map_err(fail)?;
    let policy = body.get("indexingPolicy");
    if !policy.is_undefined() && !policy.is_null() {
        properties = properties.indexing_policy(IndexingPolicy::from_json(policy).map_err(|e| fail(e.into()))?);
    }
    match body.get("defaultTtl") {
        Value::Undefined | Value::Null => {}
        Value::Number(n) if n.fract() == 0.0 => properties = properties.default_ttl(Some(*n as i64)),
        _ => return Err(request.bad_request("defaultTtl must be an integer.")),
    }
    match body.get("analyticalStorageTtl") {
        Value::Undefined | Value::Null => {}
        Value::Number(n) if n.fract() == 0.0 => properties = properties.analytical_storage_ttl(Some(*n as i64)),
        _ => return Err(request.bad_request("analyticalStorageTtl must be an integer.")),
    }
    match body.get("changeFeedPolicy").get("retentionDuration") {
        Value::Undefined | Value::Null => {}
        Value::Number(minutes) if *minutes >= 0.0 && minutes.fract() == 0.0 => {
            properties = properties.change_feed_retention(Some(Duration::from_secs(*minutes as u64 * 60)));
        }
        _ => return Err(request.bad_request("changeFeedPolicy.retentionDuration must be a whole number of minutes.")),
    }
    if let Value::Array(keys) = body.get("uniqueKeyPolicy").get("uniqueKeys") {
        for key in keys.iter() {
            let paths: Vec<&str> = match key.get("paths") {
                Value::Array(paths) => paths.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            properties = properties.unique_key(&paths).map_err(fail)?;
        }
    }
    Ok(properties)
}
