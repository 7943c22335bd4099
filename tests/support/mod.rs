//! Shared by the integration tests: a container seen through the executor's [`QuerySource`]
//! with parts of it switched off, to compare the engine's fast paths with the plain ones.

use std::sync::Arc;

use cosmoql::executor::source::{Input, PartitionRange, QuerySource};
use cosmoql::executor::Output;
use cosmoql::storage::{
    Container, DocRef, Epk, IndexServing, IndexingPolicy, ItemPosition, PartitionKey, PartitionKeyDefinition,
    StoredItem,
};
use cosmoql::value::Value;

/// A container without its indexes (`indexed: false`: every query scans), or whose items and
/// parts of items returned whole are decoded into values (`whole: false`: the trait's
/// defaults), or both.
pub struct Seen<'a> {
    pub container: &'a Container,
    pub indexed: bool,
    pub whole: bool,
}

impl QuerySource for Seen<'_> {
    fn partition_key(&self) -> &PartitionKeyDefinition {
        self.container.partition_key()
    }
    fn indexing_policy(&self) -> Arc<IndexingPolicy> {
        self.container.indexing_policy()
    }
    fn partition_count(&self) -> usize {
        self.container.partition_count()
    }
    fn partitions_overlapping(&self, ranges: &[(Epk, Epk)]) -> Vec<PartitionRange> {
        QuerySource::partitions_overlapping(self.container, ranges)
    }
    fn read_item(&self, key: &PartitionKey, id: &str) -> Option<StoredItem> {
        QuerySource::read_item(self.container, key, id)
    }
    fn scan(&self, from: ItemPosition, end: Epk) -> Box<Input<'_>> {
        QuerySource::scan(self.container, from, end)
    }
    fn materialize(&self, item: &StoredItem) -> Value {
        self.container.materialize(item)
    }
    fn whole(&self, item: &StoredItem) -> Output {
        if self.whole {
            QuerySource::whole(self.container, item)
        } else {
            Output::Value(self.container.materialize(item))
        }
    }
    fn part(&self, item: &StoredItem, part: DocRef<'_>) -> Output {
        if self.whole {
            QuerySource::part(self.container, item, part)
        } else {
            Output::Value(part.to_value())
        }
    }
    fn indexes(&self) -> Option<&dyn IndexServing> {
        if self.indexed {
            QuerySource::indexes(self.container)
        } else {
            None
        }
    }
    fn system_property(&self, item: &StoredItem, name: &str) -> Value {
        self.container.system_property(item, name)
    }
}
