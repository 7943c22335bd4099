//! What a query asks of a container's indexes: probes of the range, composite and spatial
//! indexes, written by the planner and answered by the storage engine.

use std::fmt;
use std::ops::Bound;
use std::sync::Arc;

use crate::index_key::IndexKey;
use crate::indexing::{IndexStep, IndexingMode, IndexingPolicy};

/// What a query asks of a range index.
#[derive(Debug, Clone)]
pub enum IndexProbe {
    /// Items with a key in the range at the path.
    Range { path: Vec<IndexStep>, lower: Bound<IndexKey>, upper: Bound<IndexKey> },
    /// Items with a string key starting with the prefix.
    Prefix { path: Vec<IndexStep>, prefix: String },
    /// Items with a string key at the path that the test accepts: every string key of the path
    /// is tested (the service's expanded and full index scans).
    Strings { path: Vec<IndexStep>, test: StringTest },
    /// Items whose tuple in the composite index on `paths` (with their directions) starts with
    /// `equal` and, when given, has its next component in `range`.
    Composite {
        paths: Vec<(Vec<IndexStep>, bool)>,
        equal: Vec<IndexKey>,
        range: Option<(Bound<IndexKey>, Bound<IndexKey>)>,
    },
    /// Items with a GeoJSON point in the box at the path, and items with any other object there
    /// (the spatial index).
    Spatial { path: Vec<IndexStep>, area: SpatialBox },
    /// Items matching all of them.
    And(Vec<IndexProbe>),
    /// Items matching any of them.
    Or(Vec<IndexProbe>),
}

/// A test of string keys, with what it tests for (shown by `Debug`).
#[derive(Clone)]
pub struct StringTest {
    pub test: Arc<dyn Fn(&str) -> bool + Send + Sync>,
    pub describe: String,
}

impl fmt::Debug for StringTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe)
    }
}

impl IndexProbe {
    /// Items whose key at `path` equals `key`.
    pub fn equals(path: Vec<IndexStep>, key: IndexKey) -> IndexProbe {
        IndexProbe::Range { path, lower: Bound::Included(key.clone()), upper: Bound::Included(key) }
    }

    /// Whether `policy` has the indexes the probe reads (range indexes on its paths, the
    /// spatial index for a spatial probe).
    pub fn served_by(&self, policy: &IndexingPolicy) -> bool {
        match self {
            IndexProbe::Spatial { path, .. } => {
                policy.mode == IndexingMode::Consistent && policy.spatial.iter().any(|s| s.path.segments == *path)
            }
            IndexProbe::Composite { paths, .. } => policy.has_composite(paths),
            IndexProbe::And(list) | IndexProbe::Or(list) => list.iter().all(|p| p.served_by(policy)),
            other => other.paths().iter().all(|p| policy.is_indexed(p)),
        }
    }

    /// The paths the probe reads.
    pub fn paths(&self) -> Vec<&[IndexStep]> {
        match self {
            IndexProbe::Range { path, .. }
            | IndexProbe::Prefix { path, .. }
            | IndexProbe::Strings { path, .. }
            | IndexProbe::Spatial { path, .. } => vec![path.as_slice()],
            IndexProbe::Composite { paths, .. } => paths.iter().map(|(p, _)| p.as_slice()).collect(),
            IndexProbe::And(list) | IndexProbe::Or(list) => list.iter().flat_map(IndexProbe::paths).collect(),
        }
    }
}

/// A latitude band and a longitude range around a center (wrapping at the antimeridian), in
/// degrees: what a spatial probe asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpatialBox {
    /// The southern edge, in degrees.
    pub lat_min: f64,
    /// The northern edge, in degrees.
    pub lat_max: f64,
    /// The longitude in the middle, in degrees.
    pub lon_center: f64,
    /// Half the longitude range; 180 or more: every longitude.
    pub lon_half_width: f64,
}

impl SpatialBox {
    pub fn holds_longitude(&self, lon: f64) -> bool {
        if self.lon_half_width >= 180.0 {
            return true;
        }
        let mut d = (lon - self.lon_center).abs() % 360.0;
        if d > 180.0 {
            d = 360.0 - d;
        }
        // Index units round to 1e-9 degree.
        d <= self.lon_half_width + 2e-9
    }
}
