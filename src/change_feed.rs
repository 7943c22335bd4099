//! Reading a container's change feed through the embedded API: latest-version pages, and with a
//! retention all versions and deletes, with their request charges.

use serde::de::DeserializeOwned;

use crate::client::ContainerClient;
use crate::typed::from_value;
use crate::Error;
use cosmoql_value::Value;

/// One page of a container's change feed (latest-version mode).
#[derive(Debug, Clone)]
pub struct ChangeFeedPage<T> {
    /// Each changed item once, in its latest version, with its system properties and `_lsn`.
    pub items: Vec<T>,
    /// Where the next read resumes: a change feed never ends, a later read returns what was
    /// written since.
    pub continuation: String,
    /// Request units charged.
    pub request_charge: f64,
}

impl ContainerClient {
    /// Reads a page of at most `max_item_count` changes of `range` in latest-version mode: from
    /// `start`, or from the `continuation` of an earlier page of the same range (which resumes
    /// across partition splits with nothing missed or repeated).
    pub fn read_change_feed<T: DeserializeOwned + 'static>(
        &self,
        range: &cosmoql_storage::FeedRange,
        start: cosmoql_storage::ChangeFeedStart,
        continuation: Option<&str>,
        max_item_count: usize,
    ) -> Result<ChangeFeedPage<T>, Error> {
        let page = self.container.read_changes(range, start, continuation, max_item_count)?;
        let mut items = Vec::with_capacity(page.items.len());
        let mut bytes = 0u64;
        for (item, _) in &page.items {
            bytes += item.doc.len() as u64;
            let mut value = self.container.materialize(item);
            if let Some(map) = value.as_object_mut() {
                map.insert("_lsn".into(), Value::from(item.meta.lsn as f64));
            }
            items.push(from_value(value)?);
        }
        let work = cosmoql_executor::cost::QueryWork {
            partitions: 1,
            index_entries: page.items.len() as u64,
            retrieved: page.items.len() as u64,
            retrieved_bytes: bytes,
            output: page.items.len() as u64,
            output_bytes: bytes,
        };
        let request_charge = cosmoql_executor::cost::query_charge(&work);
        Ok(ChangeFeedPage { items, continuation: page.continuation, request_charge })
    }
}

impl ContainerClient {
    /// Reads a page of at most `max_item_count` writes of `range` in all-versions-and-deletes
    /// mode: every create, replace and delete within the container's change feed retention,
    /// each as the service shapes it, `{"current": item, "metadata": {"operationType", "lsn",
    /// "crts", "previousImageLSN", "timeToLiveExpired", "id", "partitionKey"}}` (a delete has no
    /// `current`). 400 without a retention ([`crate::ContainerProperties::change_feed_retention`]).
    pub fn read_change_feed_all_versions(
        &self,
        range: &cosmoql_storage::FeedRange,
        start: cosmoql_storage::ChangeFeedStart,
        continuation: Option<&str>,
        max_item_count: usize,
    ) -> Result<ChangeFeedPage<Value>, Error> {
        use cosmoql_storage::ChangeOperation;
        let page = self.container.read_all_versions(range, start, continuation, max_item_count)?;
        let mut items = Vec::with_capacity(page.changes.len());
        let mut bytes = 0u64;
        for (lsn, change) in &page.changes {
            let operation = match change.operation {
                ChangeOperation::Create => "create",
                ChangeOperation::Replace => "replace",
                ChangeOperation::Delete => "delete",
            };
            let mut metadata = vec![
                ("operationType".to_string(), Value::from(operation)),
                ("lsn".to_string(), Value::from(*lsn as f64)),
                ("crts".to_string(), Value::from(change.ts as f64)),
                ("timeToLiveExpired".to_string(), Value::from(change.ttl_expired)),
                ("id".to_string(), Value::from(&*change.id)),
                ("partitionKey".to_string(), Value::from(change.key.to_values())),
            ];
            if let Some(previous) = change.previous_lsn {
                metadata.push(("previousImageLSN".to_string(), Value::from(previous as f64)));
            }
            let mut fields = Vec::new();
            if let Some(item) = &change.item {
                bytes += item.doc.len() as u64;
                let mut current = self.container.materialize(item);
                if let Some(map) = current.as_object_mut() {
                    map.insert("_lsn".into(), Value::from(*lsn as f64));
                }
                fields.push(("current".to_string(), current));
            }
            fields.push(("metadata".to_string(), Value::object(metadata)));
            items.push(Value::object(fields));
        }
        let work = cosmoql_executor::cost::QueryWork {
            partitions: 1,
            index_entries: page.changes.len() as u64,
            retrieved: page.changes.len() as u64,
            retrieved_bytes: bytes,
            output: page.changes.len() as u64,
            output_bytes: bytes,
        };
        Ok(ChangeFeedPage {
            items,
            continuation: page.continuation,
            request_charge: cosmoql_executor::cost::query_charge(&work),
        })
    }
}
