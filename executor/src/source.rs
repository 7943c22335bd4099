//! What a query may read from storage, as one trait: the executor runs over any [`QuerySource`].
//! [`Container`] is the store's; tests run the executor over others. What indexes serve is
//! storage's [`IndexServing`], which a source has or not ([`QuerySource::indexes`]).

use std::sync::Arc;

use cosmoql_storage::{
    Container, DocRef, Epk, IndexServing, IndexingPolicy, ItemPosition, PartitionKey, PartitionKeyDefinition,
    StoredItem,
};
use cosmoql_value::Value;

use crate::output::Output;

/// Items with their positions, in scan order.
pub type Input<'a> = dyn Iterator<Item = (ItemPosition, StoredItem)> + 'a;

/// A physical partition: its id and EPK range `[min, max)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionRange {
    pub id: u32,
    pub min: Epk,
    pub max: Epk,
}

/// What a query reads.
///
/// Scan order is by the EPK of an item's logical partition, then by its creation sequence: an
/// [`ItemPosition`]. Positions must not depend on how the EPK space is cut into physical
/// partitions, so that a scan (and a continuation token) can resume from one across splits.
pub trait QuerySource: Sync {
    /// The partition key definition.
    fn partition_key(&self) -> &PartitionKeyDefinition;

    /// The indexing policy (the default one unless the source has its own).
    fn indexing_policy(&self) -> Arc<IndexingPolicy> {
        Arc::new(IndexingPolicy::default())
    }

    /// How many physical partitions there are now.
    fn partition_count(&self) -> usize;

    /// Called before a query reads: a store removes what has expired (time to live) so that the
    /// query never sees it.
    fn begin_read(&self) {}

    /// A number that changes whenever what planning reads from the source changes (its indexing
    /// policy), unique among sources: plans are cached under it. `None`: do not cache.
    fn plan_epoch(&self) -> Option<u64> {
        None
    }

    /// The physical partitions overlapping any of `ranges` (sorted, disjoint), in EPK order.
    fn partitions_overlapping(&self, ranges: &[(Epk, Epk)]) -> Vec<PartitionRange>;

    /// The item with this partition key and id, if there is one.
    fn read_item(&self, key: &PartitionKey, id: &str) -> Option<StoredItem>;

    /// The items at or after `from` and before `end`, with their positions, in scan order. Each
    /// item present for the whole scan is seen exactly once, whatever happens meanwhile.
    fn scan(&self, from: ItemPosition, end: Epk) -> Box<Input<'_>>;

    /// The whole item with its system properties.
    fn materialize(&self, item: &StoredItem) -> Value;

    /// The whole item as a query returns it (`SELECT *`): by default its value; a store returns
    /// the stored item, whose JSON is written from its bytes ([`Output::Whole`]).
    fn whole(&self, item: &StoredItem) -> Output {
        Output::Value(self.materialize(item))
    }

    /// A part of an item's document as a query returns it (`SELECT VALUE c.location`): by
    /// default its value; a store keeps it with the item's bytes ([`Output::Part`]).
    fn part(&self, _item: &StoredItem, part: DocRef<'_>) -> Output {
        Output::Value(part.to_value())
    }

    /// The source's indexes (probes, ordered walks, keys, counts, bounds, item statistics):
    /// `None` for a source without any, whose queries scan.
    fn indexes(&self) -> Option<&dyn IndexServing> {
        None
    }

    /// One system property of an item (`_rid`, `_ts`, ...); `Undefined` for other names.
    fn system_property(&self, item: &StoredItem, name: &str) -> Value;
}

impl QuerySource for Container {
    fn indexes(&self) -> Option<&dyn IndexServing> {
        Some(self)
    }

    fn begin_read(&self) {
        self.expire();
    }

    fn partition_key(&self) -> &PartitionKeyDefinition {
        Container::partition_key(self)
    }

    fn partition_count(&self) -> usize {
        Container::partition_count(self)
    }

    fn plan_epoch(&self) -> Option<u64> {
        Some(Container::plan_epoch(self))
    }

    fn indexing_policy(&self) -> Arc<IndexingPolicy> {
        Container::indexing_policy(self)
    }

    fn partitions_overlapping(&self, ranges: &[(Epk, Epk)]) -> Vec<PartitionRange> {
        Container::partitions_overlapping(self, ranges)
            .into_iter()
            .map(|(id, min, max)| PartitionRange { id, min, max })
            .collect()
    }

    fn read_item(&self, key: &PartitionKey, id: &str) -> Option<StoredItem> {
        self.read_stored(key, id).ok()
    }

    fn scan(&self, from: ItemPosition, end: Epk) -> Box<Input<'_>> {
        Box::new(Container::scan_from(self, from, end))
    }

    fn materialize(&self, item: &StoredItem) -> Value {
        Container::materialize(self, item)
    }

    fn whole(&self, item: &StoredItem) -> Output {
        Output::Whole(self.whole_item(item))
    }

    fn part(&self, item: &StoredItem, part: DocRef<'_>) -> Output {
        item.doc.part(part).map_or_else(|| Output::Value(part.to_value()), Output::Part)
    }

    fn system_property(&self, item: &StoredItem, name: &str) -> Value {
        Container::system_property(self, item, name)
    }
}
