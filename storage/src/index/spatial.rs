//! Spatial entries: points and boxes of GeoJSON values, for ST_ functions.

use super::*;

/// The value at a path of `Key` steps (composite paths have no `[]`).
pub(super) fn scalar_at<'a>(item: &'a StoredItem, path: &[IndexStep]) -> Option<DocRef<'a>> {
    let mut v = item.doc.root();
    for step in path {
        match step {
            IndexStep::Key(k) => v = v.get(k)?,
            IndexStep::Element => return None,
        }
    }
    Some(v)
}

/// The spatial index of one path: GeoJSON points by latitude and longitude, and the items
/// holding any other object there (lines, polygons, invalid geometries), which every spatial
/// probe returns as candidates, so that a probe never misses an item the predicate keeps.
#[derive(Debug, Default)]
pub(super) struct SpatialEntries {
    pub(super) path: Vec<IndexStep>,
    /// (latitude, longitude) in units of 1e-9 degree, and the item.
    pub(super) points: std::collections::BTreeSet<(i64, i64, u64)>,
    pub(super) others: std::collections::BTreeSet<u64>,
}

/// Degrees in index units (1e-9 degree), rounded to nearest.
pub(super) fn nano_degrees(d: f64) -> i64 {
    (d * 1e9).round() as i64
}

/// Where an item stands in a spatial index: a point, or another object.
pub(super) enum SpatialEntry {
    Point(i64, i64),
    Other,
}

impl SpatialEntries {
    pub(super) fn entry(&self, item: &StoredItem) -> Option<SpatialEntry> {
        let v = scalar_at(item, &self.path)?;
        if !v.is_object() {
            return None;
        }
        let point = || {
            if v.get("type")?.as_str()? != "Point" {
                return None;
            }
            let coordinates = v.get("coordinates")?;
            let mut numbers = coordinates.elements();
            let lon = numbers.next()?.as_f64()?;
            let lat = numbers.next()?.as_f64()?;
            ((-180.0..=180.0).contains(&lon) && (-90.0..=90.0).contains(&lat))
                .then(|| SpatialEntry::Point(nano_degrees(lat), nano_degrees(lon)))
        };
        Some(point().unwrap_or(SpatialEntry::Other))
    }

    pub(super) fn change(&mut self, item: &StoredItem, change: Change) {
        let seq = item.meta.seq;
        match (self.entry(item), change) {
            (None, _) => {}
            (Some(SpatialEntry::Point(lat, lon)), Change::Remove) => {
                self.points.remove(&(lat, lon, seq));
            }
            (Some(SpatialEntry::Point(lat, lon)), _) => {
                self.points.insert((lat, lon, seq));
            }
            (Some(SpatialEntry::Other), Change::Remove) => {
                self.others.remove(&seq);
            }
            (Some(SpatialEntry::Other), _) => {
                self.others.insert(seq);
            }
        }
    }

    pub(super) fn split(self, goes_left: &dyn Fn(&u64) -> bool) -> (SpatialEntries, SpatialEntries) {
        let (lp, rp) = self.points.into_iter().partition(|(_, _, seq)| goes_left(seq));
        let (lo, ro) = self.others.into_iter().partition(|seq| goes_left(seq));
        (
            SpatialEntries { path: self.path.clone(), points: lp, others: lo },
            SpatialEntries { path: self.path, points: rp, others: ro },
        )
    }

    /// The items with a point in the box, and every item with another object at the path.
    pub(super) fn probe(&self, area: &SpatialBox, work: &mut IndexWork) -> Vec<u64> {
        let low = (nano_degrees(area.lat_min) - 1, i64::MIN, 0);
        let high = (nano_degrees(area.lat_max) + 1, i64::MAX, u64::MAX);
        let mut out: Vec<u64> = self.others.iter().copied().collect();
        if low <= high {
            for &(_, lon, seq) in self.points.range(low..=high) {
                work.entries += 1;
                if area.holds_longitude(lon as f64 / 1e9) {
                    out.push(seq);
                }
            }
        }
        work.entries += self.others.len() as u64;
        out
    }
}
