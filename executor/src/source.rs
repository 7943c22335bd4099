//! What a query may read from storage, as one trait: the executor runs over any [`QuerySource`].
//! [`Container`] is the store's; tests run the executor over others.

use std::sync::Arc;

use cosmoql_storage::{
    CompositeWalk, Container, Epk, IndexBounds, IndexKey, IndexProbe, IndexStep, IndexWork, IndexingPolicy,
    ItemPosition, OrderedEntries, OrderedWalk, PartitionKey, PartitionKeyDefinition, StoredItem,
};
use cosmoql_value::Value;

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

    /// The positions of the items of `ranges` (at or after `from`) a probe of the indexes finds,
    /// in scan order; `None` when the indexes cannot answer it (the caller scans). A source
    /// without indexes answers `None`.
    fn index_probe(
        &self,
        _ranges: &[(Epk, Epk)],
        _probe: &IndexProbe,
        _from: Option<&ItemPosition>,
    ) -> Option<(Vec<ItemPosition>, IndexWork)> {
        None
    }

    /// The items at these positions (sorted), skipping those no longer there.
    fn fetch(&self, _positions: &[ItemPosition]) -> Vec<(ItemPosition, StoredItem)> {
        Vec::new()
    }

    /// How many items `ranges` hold, and how many the physical partitions holding them hold
    /// (`None` when the source does not know).
    fn items_in(&self, _ranges: &[(Epk, Epk)]) -> Option<(u64, u64)> {
        None
    }

    /// Up to `walk.limit` entries of `ranges` in the order of a range index (with their items
    /// if `walk.items`); `None` when the index cannot give every item of the ranges in order (the
    /// caller sorts).
    fn index_ordered(
        &self,
        _ranges: &[(Epk, Epk)],
        _walk: &OrderedWalk<'_>,
        _work: &mut IndexWork,
    ) -> Option<Vec<(IndexKey, ItemPosition, Option<StoredItem>)>> {
        None
    }

    /// Like [`QuerySource::index_ordered`] for several ORDER BY paths, from a composite index;
    /// keys are tuples.
    fn composite_ordered(
        &self,
        _ranges: &[(Epk, Epk)],
        _walk: &CompositeWalk<'_>,
        _work: &mut IndexWork,
    ) -> Option<OrderedEntries<Vec<IndexKey>>> {
        None
    }

    /// The distinct scalars at `path` among the items of `ranges`, in key order, and whether
    /// every item there has one; `None` when the index cannot tell.
    fn index_keys(
        &self,
        _ranges: &[(Epk, Epk)],
        _path: &[IndexStep],
        _work: &mut IndexWork,
    ) -> Option<(Vec<IndexKey>, bool)> {
        None
    }

    /// The least and greatest scalars at `path` among the items of `ranges`; `None` when the
    /// index cannot tell.
    fn index_bounds(
        &self,
        _ranges: &[(Epk, Epk)],
        _path: &[IndexStep],
        _filter: Option<&IndexProbe>,
        _work: &mut IndexWork,
    ) -> Option<IndexBounds> {
        None
    }

    /// How many items of `ranges` a probe finds; `None` when the index cannot tell.
    fn index_count(&self, _ranges: &[(Epk, Epk)], _probe: &IndexProbe) -> Option<(u64, IndexWork)> {
        None
    }

    /// One system property of an item (`_rid`, `_ts`, ...); `Undefined` for other names.
    fn system_property(&self, item: &StoredItem, name: &str) -> Value;
}

impl QuerySource for Container {
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

    fn system_property(&self, item: &StoredItem, name: &str) -> Value {
        Container::system_property(self, item, name)
    }

    fn index_probe(
        &self,
        ranges: &[(Epk, Epk)],
        probe: &IndexProbe,
        from: Option<&ItemPosition>,
    ) -> Option<(Vec<ItemPosition>, IndexWork)> {
        Container::index_probe(self, ranges, probe, from)
    }

    fn fetch(&self, positions: &[ItemPosition]) -> Vec<(ItemPosition, StoredItem)> {
        Container::fetch(self, positions)
    }

    fn items_in(&self, ranges: &[(Epk, Epk)]) -> Option<(u64, u64)> {
        Some(Container::items_in(self, ranges))
    }

    fn index_ordered(
        &self,
        ranges: &[(Epk, Epk)],
        walk: &OrderedWalk<'_>,
        work: &mut IndexWork,
    ) -> Option<Vec<(IndexKey, ItemPosition, Option<StoredItem>)>> {
        Container::index_ordered(self, ranges, walk, work)
    }

    fn composite_ordered(
        &self,
        ranges: &[(Epk, Epk)],
        walk: &CompositeWalk<'_>,
        work: &mut IndexWork,
    ) -> Option<OrderedEntries<Vec<IndexKey>>> {
        Container::composite_ordered(self, ranges, walk, work)
    }

    fn index_keys(
        &self,
        ranges: &[(Epk, Epk)],
        path: &[IndexStep],
        work: &mut IndexWork,
    ) -> Option<(Vec<IndexKey>, bool)> {
        Container::index_keys(self, ranges, path, work)
    }

    fn index_bounds(
        &self,
        ranges: &[(Epk, Epk)],
        path: &[IndexStep],
        filter: Option<&IndexProbe>,
        work: &mut IndexWork,
    ) -> Option<IndexBounds> {
        Container::index_bounds(self, ranges, path, filter, work)
    }

    fn index_count(&self, ranges: &[(Epk, Epk)], probe: &IndexProbe) -> Option<(u64, IndexWork)> {
        Container::index_count(self, ranges, probe)
    }
}
