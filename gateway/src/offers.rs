//! Offers (provisioned throughput) and the queries on the account's own feeds.
//!
//! An offer is the throughput of a container or of a database shared by its containers, as the
//! service shows it (`../shared/research/gateway-python.md` §3.1; the Python SDK's
//! `get_throughput` queries `SELECT * FROM root r WHERE r.resource = @link` and
//! `replace_throughput` PUTs the offer back with new `content`): `resource` is the owner's
//! `_self`, `offerResourceId` its `_rid`, `content.offerThroughput` the manual RU/s, or
//! `content.offerAutopilotSettings.maxThroughput` the autoscale maximum. An offer's id and `_rid`
//! are its owner's `_rid`, so it is found again from its link without a table of its own.
//!
//! The queries on the databases, containers and offers feeds run in the engine over those
//! documents. The engine's scratch container gives every stored document system properties of its
//! own, so a result keeps the resource's: results that are resources (an object with a resource's
//! `id`) get the resource's `_rid`, `_self`, `_etag` and `_ts` back. A query that filters on a
//! system property sees the scratch container's, not the resource's.

use cosmoql::{ContainerClient, ContainerProperties, PartitionKeyDefinition, Provisioned, QueryOptions, Value};
use serde_json::json;

use crate::errors::{self, WireError};
use crate::query::query_spec;
use crate::resources::{to_json, Gateway};
use crate::wire::{charge_text, Reply, Request};

/// The system properties of the account's resources.
const SYSTEM: [&str; 5] = ["_rid", "_self", "_etag", "_ts", "_attachments"];

/// The offer document of a resource with `_rid` `rid` and `_self` `link`.
fn offer_document(rid: &str, link: &str, provisioned: &Provisioned) -> serde_json::Value {
    let content = match provisioned {
        Provisioned::Manual(ru) => json!({"offerThroughput": *ru as u64, "offerIsRUPerMinuteThroughputEnabled": false}),
        Provisioned::Autoscale { max } => json!({
            "offerThroughput": (*max / 10.0) as u64,
            "offerIsRUPerMinuteThroughputEnabled": false,
            "offerAutopilotSettings": {"maxThroughput": *max as u64},
        }),
    };
    json!({
        "id": rid,
        "_rid": rid,
        "_self": format!("offers/{rid}/"),
        "_etag": crate::resources::content_etag(&cosmoql::value::parse_json(&content.to_string()).unwrap_or(Value::Null)),
        "_ts": crate::wire::now_seconds(),
        "offerVersion": "V2",
        "offerType": "Invalid",
        "resource": link,
        "offerResourceId": rid,
        "content": content,
    })
}

impl Gateway {
    /// Every offer: each database with shared throughput, each container with its own.
    pub fn offers(&self, request: &Request) -> Vec<serde_json::Value> {
        let mut offers = Vec::new();
        for id in self.client.database_ids() {
            let db = self.client.database_client(&id);
            let Ok(props) = db.read_properties() else { continue };
            let doc = self.database_document(&props);
            if let Ok(Some(t)) = db.read_throughput() {
                offers.push(offer_document(
                    doc["_rid"].as_str().unwrap_or_default(),
                    doc["_self"].as_str().unwrap_or_default(),
                    &t.provisioned,
                ));
            }
            for name in db.container_ids().unwrap_or_default() {
                let Ok(container) = self.container(&id, &name, request) else { continue };
                if let Some(t) = container.client.read_throughput().filter(|t| !t.shared) {
                    let doc = self.container_document(&container);
                    offers.push(offer_document(
                        &container.rid,
                        doc["_self"].as_str().unwrap_or_default(),
                        &t.provisioned,
                    ));
                }
            }
        }
        offers
    }

    /// `GET /offers/{rid}`.
    pub fn read_offer(&self, rid: &str, request: &Request) -> Result<Reply, WireError> {
        let offer = self.offers(request).into_iter().find(|o| o["_rid"] == rid);
        let offer =
            offer.ok_or_else(|| crate::resources::not_found(request, &format!("Resource Not Found: offer `{rid}`")))?;
        Ok(Reply::json(200, &offer))
    }

    /// `PUT /offers/{rid}`: new throughput for the offer's owner (`content.offerThroughput`, or
    /// `content.offerAutopilotSettings.maxThroughput` for autoscale), under the service's rules.
    pub fn replace_offer(&self, rid: &str, request: &Request) -> Result<Reply, WireError> {
        let body = request.json_body()?;
        let content = body.get("content");
        let provisioned = match (
            content.get("offerAutopilotSettings").get("maxThroughput").as_f64(),
            content.get("offerThroughput").as_f64(),
        ) {
            (Some(max), _) => Provisioned::Autoscale { max },
            (None, Some(ru)) => Provisioned::Manual(ru),
            (None, None) => return Err(request.bad_request("The offer's content has no offerThroughput.")),
        };
        let fail = |e: cosmoql::Error| errors::from_error(&e, &request.activity_id);
        for id in self.client.database_ids() {
            let db = self.client.database_client(&id);
            if db.read_properties().ok().and_then(|p| p.get("_rid").as_str().map(str::to_string)).as_deref()
                == Some(rid)
            {
                db.replace_throughput(provisioned).map_err(fail)?;
                return self.read_offer(rid, request);
            }
            for name in db.container_ids().unwrap_or_default() {
                let Ok(container) = self.container(&id, &name, request) else { continue };
                if container.rid == rid {
                    container.client.replace_throughput(provisioned).map_err(fail)?;
                    return self.read_offer(rid, request);
                }
            }
        }
        Err(crate::resources::not_found(request, &format!("Resource Not Found: offer `{rid}`")))
    }
}

/// The reply listing a feed's documents (`GET /offers`, ...).
pub fn list(rid: &str, feed: &str, documents: Vec<serde_json::Value>) -> Reply {
    let count = documents.len();
    Reply::json(200, &json!({"_rid": rid, feed: documents, "_count": count})).with("x-ms-item-count", count.to_string())
}

/// A query over a feed of the account's own resources (`Databases`, `DocumentCollections`,
/// `Offers`), run by the engine over their documents; one page.
pub fn query(rid: &str, feed: &str, documents: Vec<serde_json::Value>, request: &Request) -> Result<Reply, WireError> {
    let spec = query_spec(request)?;
    let fail = |e: cosmoql::Error| errors::from_error(&e, &request.activity_id);
    let scratch = ContainerClient::standalone(ContainerProperties::with_key(feed, PartitionKeyDefinition::none()))
        .map_err(fail)?;
    let mut stored = Vec::new();
    for doc in documents {
        let mut item = cosmoql::value::parse_json(&doc.to_string()).unwrap_or(Value::Null);
        if let Some(map) = item.as_object_mut() {
            for name in SYSTEM {
                map.shift_remove(name);
            }
        }
        scratch.upsert_item::<Value>(&item).map_err(fail)?;
        stored.push(doc);
    }
    let mut options = QueryOptions::default();
    for (name, value) in spec.parameters {
        options.parameters.insert(name, value);
    }
    let results = scratch.query_items_blocking::<Value>(spec.text.as_str(), options).map_err(fail)?;
    let results: Vec<serde_json::Value> = results
        .iter()
        .map(|row| {
            let mut row = to_json(row);
            let original = row.get("id").and_then(|id| stored.iter().find(|d| d.get("id") == Some(id)));
            if let (Some(map), Some(original)) = (row.as_object_mut(), original) {
                for name in SYSTEM {
                    if map.contains_key(name) {
                        match original.get(name) {
                            Some(v) => map.insert(name.to_string(), v.clone()),
                            None => map.remove(name),
                        };
                    }
                }
            }
            row
        })
        .collect();
    Ok(list(rid, feed, results).with("x-ms-request-charge", charge_text(1.0)))
}
