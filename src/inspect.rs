//! What a container and an account are, seen through the client: a container's id, key, counts,
//! physical and logical partitions, a sample of its items and its indexing policy; the key an
//! item is written under; and what opening a database directory had to recover. The `cosmoql`
//! tool's `.containers`, `.stats`, `.policy`, import reports and banners read these.

use std::path::Path;

use cosmoql_storage::{IndexingPolicy, PartitionInfo, PartitionKey, PartitionKeyDefinition, Recovery};
use cosmoql_value::Value;

use crate::client::{ContainerClient, CosmosClient};
use crate::Error;

/// The size of one logical partition (the items sharing a partition key value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogicalPartitionSize {
    /// The partition key value as text (`["dev-1"]`).
    pub key: String,
    /// Items in it.
    pub items: u64,
    /// Their encoded bytes.
    pub bytes: u64,
}

impl ContainerClient {
    /// The container id.
    pub fn id(&self) -> &str {
        self.container.id()
    }

    /// The container's partition key definition (one path, a hierarchical key, a synthetic key,
    /// or none).
    pub fn partition_key_definition(&self) -> &PartitionKeyDefinition {
        self.container.partition_key()
    }

    /// The partition key `item` would be written under (a synthetic key is computed); an error
    /// (400) for an item the store would refuse, as a write would.
    pub fn partition_key_of(&self, item: &Value) -> Result<PartitionKey, Error> {
        Ok(self.container.partition_of_item(item)?.1)
    }

    /// The id of the physical partition that holds `key`'s items now (it changes when that
    /// partition splits); an error (400) for a key that does not fit the container's definition.
    pub fn physical_partition_of(&self, key: &PartitionKey) -> Result<u32, Error> {
        Ok(self.container.partition_of_key(key)?)
    }

    /// Items in the container.
    pub fn item_count(&self) -> usize {
        self.container.item_count()
    }

    /// Physical partitions the container has now.
    pub fn partition_count(&self) -> usize {
        self.container.partition_count()
    }

    /// Each physical partition: its id, key range, items, bytes and logical partitions.
    pub fn partitions(&self) -> Vec<PartitionInfo> {
        self.container.partitions()
    }

    /// The container's resource id (`_rid`), as its properties show it.
    pub fn rid(&self) -> String {
        self.container.rid_text()
    }

    /// The container's last log sequence number: it grows with every write (the service's LSN,
    /// which session tokens carry).
    pub fn last_lsn(&self) -> u64 {
        self.container.last_lsn()
    }

    /// How many times a physical partition split so far.
    pub fn split_count(&self) -> u64 {
        self.container.split_count()
    }

    /// The indexing policy in force (see [`Self::replace_indexing_policy`]).
    pub fn read_indexing_policy(&self) -> IndexingPolicy {
        (*self.container.indexing_policy()).clone()
    }

    /// Up to `n` items as stored (without system properties), in scan order: a look at their
    /// shape (no request charge; expired items are removed first, as for any read).
    pub fn sample_items(&self, n: usize) -> Vec<Value> {
        self.container.scan().items().take(n).map(|item| item.doc.to_value()).collect()
    }

    /// Every logical partition's size, largest first (most items, then by key), as the
    /// partitions keep them.
    pub fn logical_partition_sizes(&self) -> Vec<LogicalPartitionSize> {
        let mut sizes: Vec<LogicalPartitionSize> = self
            .container
            .logical_partition_sizes()
            .into_iter()
            .map(|(_, key, items, bytes)| LogicalPartitionSize { key: key.to_string(), items, bytes })
            .collect();
        sizes.sort_by(|a, b| b.items.cmp(&a.items).then_with(|| a.key.cmp(&b.key)));
        sizes
    }
}

impl CosmosClient {
    /// What opening a database directory found and did (records replayed, a torn last record
    /// cut off, a damaged log set aside with [`crate::DurableOptions::recover`]); `None` for an
    /// account in memory.
    pub fn recovery(&self) -> Option<Recovery> {
        self.store.durable().map(|d| d.recovery())
    }

    /// For a database directory that lost its `CURRENT` file (its logs are there): writes one
    /// naming the oldest log, where opening then starts replaying. Returns the log named; `None`
    /// when `CURRENT` is there or there is no log. Run it before [`CosmosClient::open`].
    pub fn restore_current(dir: impl AsRef<Path>) -> Result<Option<String>, Error> {
        Ok(cosmoql_storage::durable::restore_current(dir.as_ref())?)
    }
}
