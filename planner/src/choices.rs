//! The access choices a plan leaves to run time, each threshold one constant. The plan names
//! the alternatives ([`Access`] and EXPLAIN, whose words come from these constants); the
//! executor picks one for each unit (a physical partition's part of the query's key ranges) from
//! what the storage says of it ([`UnitShare`]).

use crate::access::Access;

/// A unit whose key ranges hold fewer than 1 in `SCAN_SHARE` of its physical partitions' items
/// reads them by scanning its ranges: the partitions' indexes cover every item, the scan only
/// the unit's.
pub const SCAN_SHARE: u64 = 8;

/// Walking the ORDER BY index of a unit's physical partitions reads about `rows × whole /
/// inside` entries for `rows` rows (it skips the entries of other logical partitions), or
/// `rows` when the unit's logical partitions' own orders serve it; it walks when that is under
/// `WALK_ENTRIES_PER_ITEM` entries for each of the unit's items (an entry costs about a quarter
/// of an item).
pub const WALK_ENTRIES_PER_ITEM: u64 = 4;

/// An ORDER BY query whose index seek finds at most this many items in a unit sorts them;
/// past it, it walks the ORDER BY index.
pub const SEEK_THEN_SORT: usize = 10_000;

/// What the storage says of a unit: the items its key ranges hold (`inside`), the items of
/// the physical partitions holding them (`whole`), and whether an ORDER BY walk reads the
/// unit's logical partitions' own orders (`own_orders`: their entries only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitShare {
    pub inside: u64,
    pub whole: u64,
    pub own_orders: bool,
}

impl UnitShare {
    /// Scanning the unit's ranges reads less than the partitions' indexes would.
    pub fn scan_is_smaller(self) -> bool {
        self.inside.saturating_mul(SCAN_SHARE) < self.whole
    }

    /// Walking the ORDER BY index for `rows` rows (all of the unit's when `None`) reads less than
    /// scanning the unit's items: a TOP 10 of a big logical partition in a bigger physical one
    /// walks; of a small one, scans, unless the logical partition's own order serves the walk.
    pub fn walk_is_smaller(self, rows: Option<u64>) -> bool {
        let rows = rows.unwrap_or(self.inside);
        let entries = if self.own_orders { rows } else { rows.saturating_mul(self.whole) / self.inside.max(1) };
        self.inside > 0 && entries < self.inside.saturating_mul(WALK_ENTRIES_PER_ITEM)
    }
}

/// How one unit of an ORDER BY query reads its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderedRead {
    /// Read the unit's items (what the indexes find, or a scan: [`Access::probes`]) and sort
    /// them.
    ReadThenSort,
    /// Seek the filter's indexes and sort what they find when it is at most [`SEEK_THEN_SORT`]
    /// items; past it, walk.
    SeekThenSort,
    /// Walk the ORDER BY index.
    Walk,
}

impl Access {
    /// Whether a unit reads the items the indexes find (rather than scanning its ranges).
    pub fn probes(&self, share: Option<UnitShare>) -> bool {
        self.filter.is_some() && !share.is_some_and(UnitShare::scan_is_smaller)
    }

    /// Whether every item a unit reads satisfies the WHERE clause, so that its rows are not
    /// filtered again: the unit reads what the filter's probe finds (`probed`), and every
    /// conjunct is answered exactly, by the probe or by the unit's ranges (the partition key's).
    /// A unit that scans filters its rows.
    pub fn filter_answered(&self, probed: bool) -> bool {
        probed && self.filter.is_some() && self.exact_filter
    }

    /// How a unit of an ORDER BY query reads: `point` when it reads one item by key and id,
    /// `bound` the rows the query wants (TOP, OFFSET + LIMIT), never the page size, so that every
    /// page reads the unit the same way.
    pub fn ordered_read(&self, point: bool, share: Option<UnitShare>, bound: Option<u64>) -> OrderedRead {
        let walk = self.filter.is_none() && share.is_some_and(|s| s.walk_is_smaller(bound));
        let scan = point || (share.is_some_and(UnitShare::scan_is_smaller) && !walk);
        match (&self.order, scan) {
            (Some(_), false) if self.has_seek() => OrderedRead::SeekThenSort,
            (Some(_), false) => OrderedRead::Walk,
            _ => OrderedRead::ReadThenSort,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_threshold_is_where_its_constant_says() {
        let share = |inside, whole| UnitShare { inside, whole, own_orders: false };
        assert!(share(99, 800).scan_is_smaller());
        assert!(!share(100, 800).scan_is_smaller());
        // TOP 10 of 1,000 items in a partition of 10,000: 100 entries < 4,000.
        assert!(share(1_000, 10_000).walk_is_smaller(Some(10)));
        // All 1,000 rows: 10,000 entries > 4,000.
        assert!(!share(1_000, 10_000).walk_is_smaller(None));
        assert!(!share(0, 10).walk_is_smaller(Some(1)));
        assert!(share(10, 10).walk_is_smaller(None));
        // A logical partition's own order: TOP 10 of 50 items reads 10 entries < 200.
        assert!(!share(50, 10_000).walk_is_smaller(Some(10)));
        assert!(UnitShare { inside: 50, whole: 10_000, own_orders: true }.walk_is_smaller(Some(10)));
        assert!(!UnitShare { inside: 0, whole: 10_000, own_orders: true }.walk_is_smaller(Some(10)));
    }
}
