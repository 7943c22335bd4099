//! ORDER BY: sorting rows with a bounded top-k, and merging partitions' sorted rows.
//!
//! Rows sort by their ORDER BY key values (the total order of values, per direction), then by
//! their item's creation sequence number in the first key's direction (unique in a container, so
//! ties come in the order items were created, or its reverse under a descending key, as the
//! service gives them: [`cosmoql_storage::tie_order`]), then by their place among the rows of
//! one item. None of it depends on how the EPK space is cut into
//! partitions, so every partitioning, every degree of parallelism and every access path (sort or
//! index walk) gives the same order, and a page can resume after the last row it returned
//! ([`SortCursor`]). The same [`SortBuffer`] sorts a
//! subquery's rows, one partition's rows, and a one-pass query's rows.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use cosmoql_planner::{compare_sort_keys, SortKey};
use cosmoql_storage::tie_order;
use cosmoql_value::merge::KWayMerge;
use cosmoql_value::Value;

use crate::row::{Row, RowPos};

/// A row in ORDER BY order: its sort key values, its scan position and the row (holding
/// references to stored items, not copies).
#[derive(Debug, Clone)]
pub struct SortedRow {
    pub keys: Vec<Value>,
    pub pos: RowPos,
    pub row: Row,
    /// The work the row is charged for (see `Runner::sort_indexed`; zero for a sort, whose work
    /// is charged whole on the first page).
    pub work: crate::cost::Work,
}

impl SortedRow {
    /// Where a page ending with this row resumes.
    pub fn cursor(&self) -> SortCursor {
        SortCursor { keys: self.keys.clone(), pos: self.pos.clone() }
    }
}

/// Compares (keys, creation sequence in the first key's direction, position).
fn compare(keys: &[Value], pos: &RowPos, other_keys: &[Value], other_pos: &RowPos, order: &[SortKey]) -> Ordering {
    let first_descending = order.first().is_some_and(|k| k.descending);
    compare_sort_keys(keys, other_keys, order)
        .then_with(|| match (&pos.item, &other_pos.item) {
            (Some(a), Some(b)) => tie_order(a.seq, b.seq, first_descending),
            (a, b) => a.is_some().cmp(&b.is_some()),
        })
        .then_with(|| pos.cmp(other_pos))
}

/// Where the last page of an ORDER BY query stopped: the sort keys and scan position of the last
/// row it returned.
#[derive(Debug, Clone, PartialEq)]
pub struct SortCursor {
    pub keys: Vec<Value>,
    pub pos: RowPos,
}

impl SortCursor {
    /// Whether a row sorts after the cursor (so a resumed query still has to return it).
    pub fn is_before(&self, keys: &[Value], pos: &RowPos, order: &[SortKey]) -> bool {
        compare(&self.keys, &self.pos, keys, pos, order) == Ordering::Less
    }
}

/// A row ordered by (keys, position) for the top-k heap.
struct Entry<'o> {
    row: SortedRow,
    order: &'o [SortKey],
}

impl Ord for Entry<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        compare(&self.row.keys, &self.row.pos, &other.row.keys, &other.row.pos, self.order)
    }
}

impl PartialOrd for Entry<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Entry<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry<'_> {}

/// Collects rows and gives them back in order: all of them, or with a limit only the first `k`
/// (a max-heap of `k` rows that rejects a later row with one comparison, before it is copied).
pub struct SortBuffer<'o> {
    order: &'o [SortKey],
    limit: Option<usize>,
    /// With a limit: the best `k` rows so far, the worst on top.
    heap: BinaryHeap<Entry<'o>>,
    /// Without a limit: every row.
    rows: Vec<SortedRow>,
}

impl std::fmt::Debug for SortBuffer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SortBuffer").field("limit", &self.limit).field("len", &self.len()).finish()
    }
}

impl<'o> SortBuffer<'o> {
    /// A buffer keeping at most `limit` rows (all of them without one).
    pub fn new(order: &'o [SortKey], limit: Option<u64>) -> Self {
        let limit = limit.map(|l| usize::try_from(l).unwrap_or(usize::MAX));
        SortBuffer { order, limit, heap: BinaryHeap::new(), rows: Vec::new() }
    }

    /// Whether a row with these keys and position would be kept; check before building it.
    pub fn admits(&self, keys: &[Value], pos: &RowPos) -> bool {
        match self.limit {
            None => true,
            Some(0) => false,
            Some(k) if self.heap.len() < k => true,
            Some(_) => self
                .heap
                .peek()
                .is_some_and(|worst| compare(keys, pos, &worst.row.keys, &worst.row.pos, self.order) == Ordering::Less),
        }
    }

    /// Adds a row; when the buffer is full, the worst row kept is dropped and returned.
    pub fn push(&mut self, row: SortedRow) -> Option<SortedRow> {
        match self.limit {
            None => {
                self.rows.push(row);
                None
            }
            Some(0) => Some(row),
            Some(k) => {
                let evicted = if self.heap.len() >= k { self.heap.pop().map(|e| e.row) } else { None };
                self.heap.push(Entry { row, order: self.order });
                evicted
            }
        }
    }

    /// Rows held now.
    pub fn len(&self) -> usize {
        self.heap.len() + self.rows.len()
    }

    /// Whether no row is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows kept, in order.
    pub fn into_sorted(self) -> Vec<SortedRow> {
        if self.limit.is_some() {
            self.heap.into_sorted_vec().into_iter().map(|e| e.row).collect()
        } else {
            let mut rows = self.rows;
            let order = self.order;
            rows.sort_by(|a, b| compare(&a.keys, &a.pos, &b.keys, &b.pos, order));
            rows
        }
    }
}

/// Partitions' sorted rows merged into one ORDER BY stream, holding one row per input: the
/// project's one k-way merge ([`cosmoql_value::merge::KWayMerge`]) in this module's order.
pub fn merge_rows<'o, I: Iterator<Item = SortedRow> + 'o>(
    order: &'o [SortKey],
    inputs: Vec<I>,
) -> impl Iterator<Item = SortedRow> + 'o {
    KWayMerge::new(inputs, move |a: &SortedRow, b: &SortedRow| compare(&a.keys, &a.pos, &b.keys, &b.pos, order))
}

#[cfg(test)]
mod tests {
    use cosmoql_planner::BoundExpr;

    use super::*;

    fn row(key: f64, sub: u64) -> SortedRow {
        SortedRow {
            keys: vec![Value::from(key)],
            pos: RowPos { item: None, sub },
            row: Vec::new(),
            work: crate::cost::Work::default(),
        }
    }

    fn keys(rows: impl IntoIterator<Item = SortedRow>) -> Vec<(f64, u64)> {
        rows.into_iter().map(|r| (r.keys[0].as_f64().unwrap_or(f64::NAN), r.pos.sub)).collect()
    }

    #[test]
    fn a_bounded_buffer_keeps_the_first_k_in_order_ties_by_position() {
        let order =
            [SortKey { expr: BoundExpr::Const(Value::Null), descending: true, path: None, span: Default::default() }];
        let mut all = SortBuffer::new(&order, None);
        let mut top = SortBuffer::new(&order, Some(3));
        for (i, k) in [5.0, 1.0, 9.0, 5.0, 7.0, 9.0].iter().enumerate() {
            let r = row(*k, i as u64);
            all.push(r.clone());
            if top.admits(&r.keys, &r.pos) {
                top.push(r);
            }
        }
        assert_eq!(keys(top.into_sorted()), vec![(9.0, 2), (9.0, 5), (7.0, 4)]);
        assert_eq!(keys(all.into_sorted()), vec![(9.0, 2), (9.0, 5), (7.0, 4), (5.0, 0), (5.0, 3), (1.0, 1)]);
        assert!(SortBuffer::new(&order, Some(0)).is_empty());
    }

    #[test]
    fn the_merge_interleaves_sorted_inputs_and_a_cursor_resumes_after_a_row() {
        let order =
            [SortKey { expr: BoundExpr::Const(Value::Null), descending: false, path: None, span: Default::default() }];
        let a = vec![row(1.0, 0), row(3.0, 2), row(3.0, 5)];
        let b = vec![row(2.0, 1), row(3.0, 3)];
        let merged: Vec<SortedRow> = merge_rows(&order, vec![a.into_iter(), b.into_iter()]).collect();
        assert_eq!(keys(merged.clone()), vec![(1.0, 0), (2.0, 1), (3.0, 2), (3.0, 3), (3.0, 5)]);
        let cursor = SortCursor { keys: merged[2].keys.clone(), pos: merged[2].pos.clone() };
        let rest: Vec<_> = merged.into_iter().filter(|r| cursor.is_before(&r.keys, &r.pos, &order)).collect();
        assert_eq!(keys(rest), vec![(3.0, 3), (3.0, 5)]);
    }
}
