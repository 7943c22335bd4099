//! What the indexes serve to queries: probes, items at positions, ordered walks of a range or
//! composite index, index keys, counts and bounds.

use cosmoql_value::merge::KWayMerge;

use super::*;

/// Index entries in ORDER BY order: keys (one, or a tuple), positions and items.
pub type OrderedEntries<K> = Vec<Entry<K>>;

/// An index entry found in order: its key, its item's position, and the item.
type Entry<K> = (K, ItemPosition, StoredItem);

/// A walk of a range index in key order (see [`Container::index_ordered`]).
#[derive(Debug, Clone, Copy)]
pub struct OrderedWalk<'a> {
    pub path: &'a [IndexStep],
    pub descending: bool,
    /// Resume after this (key, sequence number).
    pub after: Option<&'a (IndexKey, u64)>,
    pub limit: usize,
}

/// What a request's EPK ranges hold ([`IndexServing::items_in`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeItems {
    /// Items in the ranges.
    pub inside: u64,
    /// Items of the physical partitions holding them.
    pub whole: u64,
    /// Whether the ranges take a few logical partitions of each of those physical partitions,
    /// holding at most half of its items: an ordered walk reads those logical partitions' own
    /// orders, their entries only ([`LocalOrders`]).
    pub own_orders: bool,
}

/// What [`Container::composite_ordered`] walks: ORDER BY paths with their directions.
#[derive(Debug, Clone, Copy)]
pub struct CompositeWalk<'a> {
    pub keys: &'a [(Vec<IndexStep>, bool)],
    /// Only tuples starting with these keys (equalities of the filter on the leading paths).
    pub prefix: &'a [IndexKey],
    /// Resume after this (tuple, sequence number).
    pub after: Option<&'a (Vec<IndexKey>, u64)>,
    pub limit: usize,
}

/// The least and greatest index keys at a path (see [`Container::index_bounds`]).
#[derive(Debug, Clone, PartialEq)]
pub struct IndexBounds {
    pub least: Option<IndexKey>,
    pub greatest: Option<IndexKey>,
    /// Every item of the ranges has a scalar at the path (none is undefined, an array or an
    /// object there).
    pub complete: bool,
}

impl IndexBounds {
    /// Takes in a key that may be less than the least or greater than the greatest.
    pub fn widen(&mut self, least: Option<IndexKey>, greatest: Option<IndexKey>) {
        if let Some(k) = least.filter(|k| self.least.as_ref().is_none_or(|l| k < l)) {
            self.least = Some(k);
        }
        if let Some(k) = greatest.filter(|k| self.greatest.as_ref().is_none_or(|g| k > g)) {
            self.greatest = Some(k);
        }
    }
}

/// What a container's indexes serve to queries. The executor reads through it (a query source
/// without indexes has none, and its queries scan); a new index capability is a method here and
/// its body in the impl below, nothing else.
pub trait IndexServing: Sync {
    /// The positions of the items in `ranges` (sorted, disjoint `[min, max)`; at or after `from`)
    /// that a probe matches, in scan order, with the index work done; `None` when a partition of
    /// the range cannot serve a path of the probe (not indexed, or not yet transformed): the
    /// caller scans instead.
    fn index_probe(
        &self,
        ranges: &[(Epk, Epk)],
        probe: &IndexProbe,
        from: Option<&ItemPosition>,
    ) -> Option<(Vec<ItemPosition>, IndexWork)>;

    /// How many items `ranges` hold, and how many the physical partitions holding them hold.
    fn items_in(&self, ranges: &[(Epk, Epk)]) -> RangeItems;

    /// The items at these positions (sorted), skipping those deleted meanwhile.
    fn fetch(&self, positions: &[ItemPosition]) -> Vec<(ItemPosition, StoredItem)>;

    /// Up to `walk.limit` entries of `ranges` in the order of the range index at `walk.path`;
    /// `None` when the index cannot give every item of the ranges in order (the caller sorts).
    fn index_ordered(
        &self,
        ranges: &[(Epk, Epk)],
        walk: &OrderedWalk<'_>,
        work: &mut IndexWork,
    ) -> Option<OrderedEntries<IndexKey>>;

    /// Like [`IndexServing::index_ordered`] with keys and sequence numbers only (no positions,
    /// no items, so a walk of whole physical partitions never looks up where an entry's item
    /// is), for each of several units' ranges at once (the units in EPK order, as a query's
    /// are): what a merge that skips OFFSET's rows on index keys reads, its first chunk of
    /// every unit in one call ([`IndexServing::locate`] then places the few rows it returns).
    fn index_ordered_keys(
        &self,
        units: &[&[(Epk, Epk)]],
        walk: &OrderedWalk<'_>,
        work: &mut IndexWork,
    ) -> Option<Vec<Vec<(IndexKey, u64)>>>;

    /// The position of the item of `ranges` with sequence number `seq`; `None` when there is
    /// none (deleted since its index entry was read).
    fn locate(&self, ranges: &[(Epk, Epk)], seq: u64) -> Option<ItemPosition>;

    /// Like [`IndexServing::index_ordered`] for several ORDER BY paths, from a composite index;
    /// keys are tuples.
    fn composite_ordered(
        &self,
        ranges: &[(Epk, Epk)],
        walk: &CompositeWalk<'_>,
        work: &mut IndexWork,
    ) -> Option<OrderedEntries<Vec<IndexKey>>>;

    /// The distinct scalars at `path` among the items of `ranges`, in key order, and whether
    /// every item there has one; `None` when the index cannot tell.
    fn index_keys(
        &self,
        ranges: &[(Epk, Epk)],
        path: &[IndexStep],
        work: &mut IndexWork,
    ) -> Option<(Vec<IndexKey>, bool)>;

    /// How many items of `ranges` a probe finds; `None` when the index cannot tell.
    fn index_count(&self, ranges: &[(Epk, Epk)], probe: &IndexProbe) -> Option<(u64, IndexWork)>;

    /// The least and greatest scalars at `path` among the items of `ranges` (that `filter`
    /// finds); `None` when the index cannot tell.
    fn index_bounds(
        &self,
        ranges: &[(Epk, Epk)],
        path: &[IndexStep],
        filter: Option<&IndexProbe>,
        work: &mut IndexWork,
    ) -> Option<IndexBounds>;
}

/// The most logical partitions [`Keep`] tells apart by address.
const FEW_LOGICAL: usize = 32;

/// Which of one physical partition's index entries a request's EPK ranges keep, decided by the
/// entry's item's EPK as the partition's index holds it ([`PartitionIndex::location`]). The index
/// holds one EPK per logical partition, so when the ranges take a few logical partitions of the
/// physical partition (a query pinned to a key), an entry is kept by comparing its EPK's address
/// with theirs: a one-partition ORDER BY walks hundreds of entries to find its rows, and
/// comparing EPK bytes was half the cost of each.
enum Keep<'a> {
    /// The ranges hold the whole physical partition.
    All,
    /// The index's EPKs of the logical partitions in the ranges.
    Located(Vec<&'a Epk>),
    /// Many logical partitions: compare with the ranges.
    Ranges(&'a [(Epk, Epk)]),
}

impl<'a> Keep<'a> {
    fn new(p: &PhysicalPartition, data: &'a PartitionData, ranges: &'a [(Epk, Epk)]) -> Self {
        if p.within(ranges) {
            return Keep::All;
        }
        let mut located = Vec::new();
        for (min, max) in ranges {
            if *max <= p.min || *min >= p.max {
                continue;
            }
            for (epk, _) in data.logical.range::<Epk, _>((Bound::Included(min), Bound::Excluded(max))) {
                if located.len() == FEW_LOGICAL {
                    return Keep::Ranges(ranges);
                }
                // A logical partition with no indexed item has no entry to keep.
                located.extend(data.index.interned(epk));
            }
        }
        Keep::Located(located)
    }

    /// Whether the entry of the item with sequence number `seq` is kept (looking up where the
    /// item is only when the ranges do not hold the whole partition).
    fn keeps_seq(&self, index: &PartitionIndex, seq: u64) -> bool {
        matches!(self, Keep::All) || index.location(seq).is_some_and(|epk| self.keeps(epk))
    }

    /// Whether an entry whose item is at `epk`, as [`PartitionIndex::location`] gives it, is kept.
    fn keeps(&self, epk: &Epk) -> bool {
        match self {
            Keep::All => true,
            Keep::Located(located) => located.iter().any(|l| std::ptr::eq(*l, epk)),
            Keep::Ranges(ranges) => in_ranges(ranges, epk),
        }
    }
}

/// How one physical partition serves an ordered walk of `ranges` at a path: the own orders of
/// the few logical partitions the ranges take ([`pinned_logical`]), or its index, keeping the
/// entries [`Keep`] says.
enum PartWalk<'d> {
    Pinned(Vec<(&'d Epk, &'d LogicalPartition)>),
    Index(Keep<'d>),
}

impl<'d> PartWalk<'d> {
    /// `None` when some item of the partition has no scalar at `path` (no index entry there: the
    /// caller sorts). The index's own walk ([`PartitionIndex::ordered_visit`]) checks that for
    /// itself.
    fn new(
        p: &PhysicalPartition,
        data: &'d PartitionData,
        ranges: &'d [(Epk, Epk)],
        path: &[IndexStep],
    ) -> Option<Self> {
        if p.within(ranges) {
            return Some(PartWalk::Index(Keep::All));
        }
        if data.index.items_with_scalar(path) != data.index.items() {
            return None;
        }
        Some(match pinned_logical(p, data, ranges) {
            Some(pinned) => PartWalk::Pinned(pinned),
            None => PartWalk::Index(Keep::new(p, data, ranges)),
        })
    }
}

/// The logical partitions of `p` that `ranges` take, when they are a few and hold at most half
/// of its items (a query pinned to a key or a few): their own orders ([`LocalOrders`]) serve an
/// ordered walk reading their entries only. `None` otherwise: the partition's index serves it.
fn pinned_logical<'d>(
    p: &PhysicalPartition,
    data: &'d PartitionData,
    ranges: &[(Epk, Epk)],
) -> Option<Vec<(&'d Epk, &'d LogicalPartition)>> {
    if p.within(ranges) {
        return None;
    }
    let mut pinned = Vec::new();
    let mut items = 0usize;
    for (min, max) in ranges {
        if *max <= p.min || *min >= p.max {
            continue;
        }
        for (epk, lp) in data.logical.range::<Epk, _>((Bound::Included(min), Bound::Excluded(max))) {
            if pinned.len() == FEW_LOGICAL {
                return None;
            }
            items += lp.len();
            pinned.push((epk, lp));
        }
    }
    (items.saturating_mul(2) <= data.items).then_some(pinned)
}

/// A pinned logical partition's part of an ordered walk, from its own order ([`LocalOrders`]);
/// `None` when some item of it has no scalar at the path.
fn own_order(lp: &LogicalPartition, walk: &OrderedWalk<'_>, work: &mut IndexWork) -> Option<Vec<(IndexKey, u64)>> {
    let entries = lp.orders.lock().walk(walk.path, walk.descending, walk.after, walk.limit, lp.iter_from(0))?;
    work.entries += entries.len() as u64;
    Some(entries)
}

/// What [`Container::covering`] finds: the one partition holding every range (the usual case,
/// with nothing allocated), or several.
pub(super) enum Covering<'m> {
    One(Option<&'m Arc<PhysicalPartition>>),
    Many(std::vec::IntoIter<&'m Arc<PhysicalPartition>>),
}

impl<'m> Iterator for Covering<'m> {
    type Item = &'m Arc<PhysicalPartition>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Covering::One(p) => p.take(),
            Covering::Many(ps) => ps.next(),
        }
    }
}

impl Container {
    /// Whether the current policy lets queries use the range index at `path` (a partition whose
    /// index is still being transformed may not have it yet).
    pub(super) fn policy_serves(&self, path: &[IndexStep]) -> bool {
        self.indexing_policy.read().is_indexed(path)
    }

    /// The physical partitions overlapping sorted, disjoint EPK ranges, each once, in EPK order.
    pub(super) fn covering<'m>(map: &'m [Arc<PhysicalPartition>], ranges: &[(Epk, Epk)]) -> Covering<'m> {
        // One partition holds every range (a query's unit is one physical partition's part of
        // its ranges): found with one search, not a walk over the map, and nothing allocated.
        if let (Some((first, _)), Some((_, last))) = (ranges.first(), ranges.last()) {
            if let Some(p) = map.get(Self::index_for(map, first)).filter(|p| *last <= p.max) {
                return Covering::One(Some(p));
            }
        }
        let mut out: Vec<&Arc<PhysicalPartition>> = Vec::new();
        for (min, max) in ranges {
            for p in map[Self::index_for(map, min)..].iter().take_while(|p| p.min < *max) {
                if out.last().is_none_or(|last| !Arc::ptr_eq(last, p)) && !out.iter().any(|q| Arc::ptr_eq(q, p)) {
                    out.push(p);
                }
            }
        }
        Covering::Many(out.into_iter())
    }

    /// [`Container::covering`], trying first the partition at `near` and the one after it
    /// (where the previous of units in EPK order was found), and leaving `near` where this one
    /// is.
    pub(super) fn covering_near<'m>(
        map: &'m [Arc<PhysicalPartition>],
        ranges: &[(Epk, Epk)],
        near: &mut usize,
    ) -> Covering<'m> {
        if let (Some((first, _)), Some((_, last))) = (ranges.first(), ranges.last()) {
            for at in [*near, near.saturating_add(1)] {
                if let Some(p) = map.get(at).filter(|p| p.min <= *first && *last <= p.max) {
                    *near = at;
                    return Covering::One(Some(p));
                }
            }
        }
        Self::covering(map, ranges)
    }
}

impl IndexServing for Container {
    /// The positions of the items in `ranges` (sorted, disjoint `[min, max)`; at or after `from`) that a probe matches, in
    /// scan order, with the index work done; `None` when a partition of the range cannot serve a
    /// path of the probe (not indexed, or not yet transformed): the caller scans instead.
    fn index_probe(
        &self,
        ranges: &[(Epk, Epk)],
        probe: &IndexProbe,
        from: Option<&ItemPosition>,
    ) -> Option<(Vec<ItemPosition>, IndexWork)> {
        if !probe.served_by(&self.indexing_policy()) {
            return None;
        }
        let mut work = IndexWork::default();
        let mut out = Vec::new();
        let map = self.partitions.read();
        for p in Self::covering(&map, ranges) {
            let data = p.data.read();
            let keep = Keep::new(p, &data, ranges);
            for seq in data.index.probe(probe, &mut work)? {
                let Some(epk) = data.index.location(seq) else { continue };
                if keep.keeps(epk) {
                    let pos = ItemPosition { epk: epk.clone(), seq };
                    if from.is_none_or(|f| pos >= *f) {
                        out.push(pos);
                    }
                }
            }
        }
        out.sort_unstable();
        Some((out, work))
    }

    /// How many items `ranges` hold, and how many the physical partitions holding them hold (an
    /// index covers a whole physical partition: for a few logical partitions of a big one, a scan
    /// of them reads less than an index does).
    fn items_in(&self, ranges: &[(Epk, Epk)]) -> RangeItems {
        let map = self.partitions.read();
        let mut items = RangeItems { inside: 0, whole: 0, own_orders: true };
        for p in Self::covering(&map, ranges) {
            let data = p.data.read();
            items.whole += data.items as u64;
            items.own_orders &= pinned_logical(p, &data, ranges).is_some();
            for (min, max) in ranges {
                if *max <= p.min || *min >= p.max {
                    continue;
                }
                let range = (Bound::Included(min), Bound::Excluded(max));
                items.inside += data.logical.range::<Epk, _>(range).map(|(_, lp)| lp.len() as u64).sum::<u64>();
            }
        }
        items
    }

    /// The items at these positions (sorted), skipping those deleted meanwhile.
    fn fetch(&self, positions: &[ItemPosition]) -> Vec<(ItemPosition, StoredItem)> {
        let map = self.partitions.read();
        let mut out = Vec::with_capacity(positions.len());
        let mut rest = positions;
        while let Some(first) = rest.first() {
            let p = &map[Self::index_for(&map, &first.epk)];
            let n = rest.iter().take_while(|pos| pos.epk < p.max).count().max(1);
            let data = p.data.read();
            // Positions are sorted: a logical partition's come together, and it is looked up once.
            let mut last = None;
            for pos in &rest[..n] {
                let lp = match last {
                    Some((epk, lp)) if epk == &pos.epk => lp,
                    _ => {
                        let lp = data.logical.get(&pos.epk);
                        last = Some((&pos.epk, lp));
                        lp
                    }
                };
                if let Some(item) = lp.and_then(|lp| lp.get_seq(pos.seq)) {
                    out.push((pos.clone(), item.clone()));
                }
            }
            rest = &rest[n..];
        }
        out
    }

    /// Up to `walk.limit` entries of `ranges` in the order of the range index at `path` (keys
    /// descending if `descending`, then sequence numbers in the same direction), after `after`, with their
    /// keys. `None` when a partition of the range cannot serve the path, or when some item there
    /// has no scalar at the path (an undefined, array or object value has no index entry): the
    /// caller sorts instead.
    fn index_ordered(
        &self,
        ranges: &[(Epk, Epk)],
        walk: &OrderedWalk<'_>,
        work: &mut IndexWork,
    ) -> Option<OrderedEntries<IndexKey>> {
        let path = walk.path;
        // An item has one value at a path without `[]`; with one, it has many.
        if path.contains(&IndexStep::Element) || !self.policy_serves(path) {
            return None;
        }
        let map = self.partitions.read();
        let mut runs = Vec::new();
        for p in Self::covering(&map, ranges) {
            let data = p.data.read();
            match PartWalk::new(p, &data, ranges, path)? {
                PartWalk::Pinned(pinned) => {
                    for (epk, lp) in pinned {
                        let entries = own_order(lp, walk, work)?;
                        let mut run = Vec::with_capacity(entries.len());
                        for (key, seq) in entries {
                            let item = lp.get_seq(seq)?.clone();
                            run.push((key, ItemPosition { epk: epk.clone(), seq }, item));
                        }
                        runs.push(run);
                    }
                }
                PartWalk::Index(keep) => {
                    let entries =
                        data.index.ordered(path, walk.descending, walk.after, walk.limit, &|e| keep.keeps(e), work)?;
                    let mut run = Vec::with_capacity(entries.len());
                    located(&data, entries, &mut run);
                    runs.push(run);
                }
            }
        }
        let descending = walk.descending;
        Some(merge_runs(
            &mut runs,
            walk.limit,
            by_entry(descending, |a: &IndexKey, b| if descending { b.cmp(a) } else { a.cmp(b) }),
        ))
    }

    fn index_ordered_keys(
        &self,
        units: &[&[(Epk, Epk)]],
        walk: &OrderedWalk<'_>,
        work: &mut IndexWork,
    ) -> Option<Vec<Vec<(IndexKey, u64)>>> {
        let path = walk.path;
        let policy = Arc::clone(&self.indexing_policy.read());
        if path.contains(&IndexStep::Element) || !policy.is_indexed(path) {
            return None;
        }
        let map = self.partitions.read();
        // Units come in EPK order: each is first looked for where the last one was.
        let mut near = 0;
        let mut out = Vec::with_capacity(units.len());
        // One vector of runs for every unit (most units are one partition's one run).
        let mut runs = Vec::new();
        for ranges in units {
            for p in Self::covering_near(&map, ranges, &mut near) {
                let data = p.data.read();
                let run = match PartWalk::new(p, &data, ranges, path)? {
                    PartWalk::Pinned(pinned) => {
                        for (_, lp) in pinned {
                            runs.push(own_order(lp, walk, work)?);
                        }
                        continue;
                    }
                    PartWalk::Index(keep) => {
                        let mut run = Vec::with_capacity(walk.limit.min(1024));
                        let visit = |key: &IndexKey, seq| {
                            if keep.keeps_seq(&data.index, seq) {
                                run.push((key.clone(), seq));
                            }
                            run.len() < walk.limit
                        };
                        data.index.ordered_visit((path, Some(&policy)), walk.descending, walk.after, work, visit)?;
                        run
                    }
                };
                runs.push(run);
            }
            out.push(merge_runs(&mut runs, walk.limit, crate::index::entry_order(walk.descending)));
        }
        Some(out)
    }

    fn locate(&self, ranges: &[(Epk, Epk)], seq: u64) -> Option<ItemPosition> {
        let map = self.partitions.read();
        Self::covering(&map, ranges).find_map(|p| {
            let data = p.data.read();
            let epk = data.index.location(seq).filter(|epk| in_ranges(ranges, epk))?;
            Some(ItemPosition { epk: epk.clone(), seq })
        })
    }

    /// Like [`Container::index_ordered`] for ORDER BY on several paths, from a composite index
    /// of the current policy that serves their order: keys are tuples. `None` when none does, or
    /// when some item of the ranges lacks a scalar at one of the paths (the caller sorts).
    fn composite_ordered(
        &self,
        ranges: &[(Epk, Epk)],
        walk: &CompositeWalk<'_>,
        work: &mut IndexWork,
    ) -> Option<OrderedEntries<Vec<IndexKey>>> {
        if !self.indexing_policy().has_composite(walk.keys) {
            return None;
        }
        let map = self.partitions.read();
        let mut runs = Vec::new();
        for p in Self::covering(&map, ranges) {
            let data = p.data.read();
            let keep = Keep::new(p, &data, ranges);
            let keep = |e: &Epk| keep.keeps(e);
            let entries = data.index.composite_ordered(walk.keys, walk.prefix, walk.after, walk.limit, &keep, work)?;
            let mut run = Vec::with_capacity(entries.len());
            located(&data, entries, &mut run);
            runs.push(run);
        }
        let directions: Vec<bool> = walk.keys.iter().map(|(_, d)| *d).collect();
        let first_descending = directions.first().copied().unwrap_or(false);
        Some(merge_runs(
            &mut runs,
            walk.limit,
            by_entry(first_descending, |a: &Vec<IndexKey>, b| {
                a.iter().zip(b).zip(&directions).fold(std::cmp::Ordering::Equal, |o, ((x, y), d)| {
                    o.then_with(|| if *d { y.cmp(x) } else { x.cmp(y) })
                })
            }),
        ))
    }

    /// The distinct scalars at `path` among the items of `ranges`, in key order, and whether
    /// every item there has one; `None` when a partition cannot serve the path.
    fn index_keys(
        &self,
        ranges: &[(Epk, Epk)],
        path: &[IndexStep],
        work: &mut IndexWork,
    ) -> Option<(Vec<IndexKey>, bool)> {
        if !self.policy_serves(path) {
            return None;
        }
        let map = self.partitions.read();
        let mut keys = Vec::new();
        let mut complete = true;
        for p in Self::covering(&map, ranges) {
            let data = p.data.read();
            complete &= data.index.items_with_scalar(path) == data.index.items();
            let keep = Keep::new(p, &data, ranges);
            keys.extend(data.index.keys(path, &|e| keep.keeps(e), work)?);
        }
        keys.sort();
        keys.dedup();
        Some((keys, complete))
    }

    /// How many items of `ranges` a probe finds (for `COUNT`), without making their positions;
    /// `None` when a partition cannot serve it.
    fn index_count(&self, ranges: &[(Epk, Epk)], probe: &IndexProbe) -> Option<(u64, IndexWork)> {
        if !probe.served_by(&self.indexing_policy()) {
            return None;
        }
        let mut work = IndexWork::default();
        let mut count = 0u64;
        let map = self.partitions.read();
        for p in Self::covering(&map, ranges) {
            let data = p.data.read();
            count += match Keep::new(p, &data, ranges) {
                Keep::All => data.index.probe_count(probe, &mut work)? as u64,
                keep => {
                    let seqs = data.index.probe(probe, &mut work)?;
                    seqs.iter().filter(|s| data.index.location(**s).is_some_and(|e| keep.keeps(e))).count() as u64
                }
            };
        }
        Some((count, work))
    }

    /// The least and the greatest scalar at `path` among the items of `ranges` that `filter`
    /// finds (for `MIN` and `MAX`), and whether every item there has one; `None` when a partition
    /// cannot serve the path or the filter.
    fn index_bounds(
        &self,
        ranges: &[(Epk, Epk)],
        path: &[IndexStep],
        filter: Option<&IndexProbe>,
        work: &mut IndexWork,
    ) -> Option<IndexBounds> {
        if !self.policy_serves(path) || filter.is_some_and(|f| !f.served_by(&self.indexing_policy())) {
            return None;
        }
        let map = self.partitions.read();
        let mut bounds = IndexBounds { least: None, greatest: None, complete: true };
        for p in Self::covering(&map, ranges) {
            let data = p.data.read();
            // Among the items the filter finds, when there is one.
            let found: Option<std::collections::HashSet<u64>> = match filter {
                Some(f) => Some(data.index.probe(f, work)?.into_iter().collect()),
                None => None,
            };
            let kept = Keep::new(p, &data, ranges);
            let keep = |seq: u64, epk: &Epk| kept.keeps(epk) && found.as_ref().is_none_or(|f| f.contains(&seq));
            bounds.complete &= data.index.items_with_scalar(path) == data.index.items();
            let least = data.index.first_key(path, false, &keep, work)?;
            let greatest = data.index.first_key(path, true, &keep, work)?;
            bounds.widen(least, greatest);
        }
        Some(bounds)
    }
}

/// The first `limit` entries of partitions' runs, each already in `order`, merged.
fn merge_runs<E>(runs: &mut Vec<Vec<E>>, limit: usize, order: impl Fn(&E, &E) -> std::cmp::Ordering) -> Vec<E> {
    if runs.len() <= 1 {
        // One partition's run is already in order: no merge, no copy.
        let mut run = runs.pop().unwrap_or_default();
        run.truncate(limit);
        return run;
    }
    let inputs = runs.drain(..).map(Vec::into_iter).collect();
    KWayMerge::new(inputs, order).take(limit).collect()
}

/// The order of ordered walks' entries: by their keys (`keys`, directions applied), then by
/// creation sequence in the first key's direction ([`crate::index::tie_order`]).
fn by_entry<K>(
    first_descending: bool,
    keys: impl Fn(&K, &K) -> std::cmp::Ordering,
) -> impl Fn(&Entry<K>, &Entry<K>) -> std::cmp::Ordering {
    move |a, b| keys(&a.0, &b.0).then(crate::index::tie_order(a.1.seq, b.1.seq, first_descending))
}
