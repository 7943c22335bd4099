//! OFFSET and TOP on index keys: when every item of the targets is a result and one range index
//! gives the ORDER BY, merging the partitions' index keys finds the rows OFFSET skips and the
//! rows the page returns without reading any item. The walks read keys and sequence numbers only
//! ([`IndexServing::index_ordered_keys`]); only the rows returned, and the last one skipped, are
//! then located ([`IndexServing::locate`]).

use cosmoql_planner::IndexOrder;
use cosmoql_storage::{Epk, IndexKey, IndexServing, IndexWork, ItemPosition, OrderedWalk};
use cosmoql_value::merge::KWayMerge;

use crate::error::QueryError;

/// What merging index keys found: the key and position of the last row skipped, how many were
/// skipped, and the keys and positions of the rows taken after them (in ORDER BY order).
#[derive(Debug)]
pub struct KeyMerge {
    pub last_skipped: Option<(IndexKey, ItemPosition)>,
    pub skipped: u64,
    pub taken: Vec<(IndexKey, ItemPosition)>,
}

/// The most entries a walk reads at once (chunks double up to it).
const MAX_CHUNK: usize = 4096;

/// One unit's index keys in ORDER BY order, read a chunk at a time.
struct KeyWalk<'s> {
    indexes: &'s dyn IndexServing,
    ranges: &'s [(Epk, Epk)],
    order: &'s IndexOrder,
    after: Option<(IndexKey, u64)>,
    chunk: usize,
    buffer: std::vec::IntoIter<(IndexKey, u64)>,
    done: bool,
    /// The source stopped answering from the index.
    broken: bool,
    work: IndexWork,
}

impl KeyWalk<'_> {
    /// The walk as it continues after reading `entries`, a chunk of its size.
    fn took(&mut self, entries: Vec<(IndexKey, u64)>) {
        self.done = entries.len() < self.chunk;
        self.after = entries.last().cloned();
        self.chunk = (self.chunk * 2).min(MAX_CHUNK);
        self.buffer = entries.into_iter();
    }
}

impl Iterator for KeyWalk<'_> {
    type Item = (IndexKey, u64);

    fn next(&mut self) -> Option<(IndexKey, u64)> {
        loop {
            if let Some(entry) = self.buffer.next() {
                return Some(entry);
            }
            if self.done {
                return None;
            }
            let walk = OrderedWalk {
                path: &self.order.path,
                descending: self.order.descending,
                after: self.after.as_ref(),
                limit: self.chunk,
            };
            let read = self.indexes.index_ordered_keys(&[self.ranges], &walk, &mut self.work);
            let Some(entries) = read.and_then(|mut units| units.pop()) else {
                self.broken = true;
                self.done = true;
                return None;
            };
            self.took(entries);
        }
    }
}

/// Merges the index keys of `units` (each a physical partition's part of the targets, in
/// `order`, resuming after `start`) to skip `skip` rows and take `take`. `None` when some unit's
/// index cannot give its keys in order, or a row taken is gone (deleted since its entry was
/// read): the caller runs the query the long way. `cancelled` is asked every 1,024 rows; the
/// entries read are added to `entries`.
pub fn merge_on_keys(
    indexes: &dyn IndexServing,
    units: &[&[(Epk, Epk)]],
    order: &IndexOrder,
    start: Option<(IndexKey, u64)>,
    (skip, take): (u64, u64),
    cancelled: &dyn Fn() -> Result<(), QueryError>,
    entries: &mut u64,
) -> Result<Option<KeyMerge>, QueryError> {
    // Each walk first reads its even share and two more: the merge takes the head of every
    // unit, and only the units that win read on (their chunks doubling). Reading more up front
    // costs entries in every partition (Q5 read 17 entries in each of 89 partitions for 10 rows).
    let n = skip.saturating_add(take);
    let share = usize::try_from(n / units.len().max(1) as u64).unwrap_or(usize::MAX).saturating_add(2);
    let chunk = share.clamp(1, 1024);
    // Every unit's first chunk in one call (one look at the policy and the partition map).
    let mut first_work = IndexWork::default();
    let first = OrderedWalk { path: &order.path, descending: order.descending, after: start.as_ref(), limit: chunk };
    let Some(firsts) = indexes.index_ordered_keys(units, &first, &mut first_work) else {
        *entries += first_work.entries;
        return Ok(None);
    };
    *entries += first_work.entries;
    if firsts.len() != units.len() {
        return Err(QueryError::internal("an index walk of several units answered for another number of them"));
    }
    let mut walks: Vec<KeyWalk<'_>> = units
        .iter()
        .zip(firsts)
        .map(|(ranges, entries)| {
            let mut walk = KeyWalk {
                indexes,
                ranges,
                order,
                after: None,
                chunk,
                buffer: Vec::new().into_iter(),
                done: false,
                broken: false,
                work: IndexWork::default(),
            };
            walk.took(entries);
            walk
        })
        .collect();
    let mut merged = KWayMerge::new(walks.iter_mut().collect(), cosmoql_storage::entry_order(order.descending));
    let mut last = None;
    let mut skipped = 0u64;
    let mut taken = Vec::new();
    while skipped.saturating_add(taken.len() as u64) < n {
        if (skipped + taken.len() as u64).is_multiple_of(1024) {
            cancelled()?;
        }
        let Some((unit, (key, seq))) = merged.next_with_input() else { break };
        if skipped < skip {
            skipped += 1;
            last = Some((unit, key, seq));
        } else {
            taken.push((unit, key, seq));
        }
    }
    drop(merged);
    *entries += walks.iter().map(|w| w.work.entries).sum::<u64>();
    if walks.iter().any(|w| w.broken) {
        return Ok(None);
    }
    let locate = |unit: usize, seq: u64| units.get(unit).and_then(|ranges| indexes.locate(ranges, seq));
    let Some(taken) =
        taken.into_iter().map(|(unit, key, seq)| Some((key, locate(unit, seq)?))).collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    let last_skipped = match last {
        None => None,
        Some((unit, key, seq)) => match locate(unit, seq) {
            Some(pos) => Some((key, pos)),
            None => return Ok(None),
        },
    };
    Ok(Some(KeyMerge { last_skipped, skipped, taken }))
}
