//! Spatial predicates as boxes for the spatial index.
//!
//! The spatial index holds GeoJSON points by latitude and longitude (and returns every item with
//! another kind of object at the path as a candidate). A predicate becomes a latitude band and a
//! longitude range that contain every point for which it can hold; the predicate then runs on the
//! candidates, so a box may be larger than needed but never smaller.
//!
//! - `ST_DISTANCE(path, point) < r` (or `<=`): distances are geodesic on the WGS-84 ellipsoid. A
//!   path of length `s` changes latitude by at most `s / M₀` radians, where `M₀ = a(1 − e²)` is
//!   the least meridional radius of curvature (6,335,439 m), and, within latitudes up to `φ`,
//!   longitude by at most `s / (a cos φ)` (the parallel radius `N cos φ` is at least `a cos φ`).
//! - `ST_WITHIN(path, shape)`, `ST_INTERSECTS(path, shape)` (either order): the predicates treat
//!   positions as points of a sphere and edges as great-circle arcs. A shape whose vertices fit in
//!   a cap of under 90° lies inside that cap (such caps are convex), provided each polygon is the
//!   small region its ring encloses: counter-clockwise, which for the small polygons accepted here
//!   (at most 20° across, not crossing the antimeridian) is the sign of its planar area. A point
//!   within or on the shape is then in the cap, and the cap in the box.

use cosmoql_catalog::SpatialBox;
use cosmoql_value::Value;

/// The least meridional radius of curvature of WGS-84, `a (1 − e²)`, in meters.
const MERIDIONAL_MIN: f64 = 6_335_439.327_083_17;
/// The WGS-84 equatorial radius, in meters.
const EQUATORIAL: f64 = 6_378_137.0;
/// Widening for rounding, relative and absolute (degrees).
const SLACK: f64 = 1e-6;
const SLACK_DEGREES: f64 = 1e-7;
/// The widest shape (cap radius, degrees) answered through the index.
const MAX_CAP: f64 = 20.0;

/// A `[longitude, latitude]` position of a GeoJSON value.
fn position(v: &Value) -> Option<(f64, f64)> {
    let items = v.as_array()?;
    if !(2..=3).contains(&items.len()) {
        return None;
    }
    let (lon, lat) = (items[0].as_f64()?, items[1].as_f64()?);
    ((-180.0..=180.0).contains(&lon) && (-90.0..=90.0).contains(&lat)).then_some((lon, lat))
}

/// The GeoJSON point a constant is.
pub fn point(v: &Value) -> Option<(f64, f64)> {
    let obj = v.as_object()?;
    (obj.get("type")?.as_str()? == "Point").then_some(())?;
    position(obj.get("coordinates")?)
}

/// The box holding every point within `meters` (geodesic) of `center`.
pub fn distance_box((lon, lat): (f64, f64), meters: f64) -> Option<SpatialBox> {
    if !(meters.is_finite() && meters >= 0.0) {
        return None;
    }
    let dlat = (meters / MERIDIONAL_MIN).to_degrees() * (1.0 + SLACK) + SLACK_DEGREES;
    let (lat_min, lat_max) = ((lat - dlat).max(-90.0), (lat + dlat).min(90.0));
    let widest = lat_min.abs().max(lat_max.abs());
    let lon_half_width = if widest >= 89.999 {
        180.0
    } else {
        let d = (meters / (EQUATORIAL * widest.to_radians().cos())).to_degrees() * (1.0 + SLACK) + SLACK_DEGREES;
        d.min(180.0)
    };
    Some(SpatialBox { lat_min, lat_max, lon_center: lon, lon_half_width })
}

/// The box holding every point within or on a constant shape (Point, LineString, Polygon,
/// MultiPolygon); `None` for shapes too wide, crossing the antimeridian, or not counter-clockwise.
pub fn shape_box(v: &Value) -> Option<SpatialBox> {
    let obj = v.as_object()?;
    let coords = obj.get("coordinates")?;
    let mut vertices: Vec<(f64, f64)> = Vec::new();
    let polygon = |rings: &Value, vertices: &mut Vec<(f64, f64)>| -> Option<()> {
        let outer = rings.as_array()?.first()?;
        let ring: Vec<(f64, f64)> = outer.as_array()?.iter().map(position).collect::<Option<_>>()?;
        if ring.len() < 4 || ring.first() != ring.last() || planar_area(&ring)? <= 0.0 {
            return None;
        }
        vertices.extend(ring);
        Some(())
    };
    match obj.get("type")?.as_str()? {
        "Point" => vertices.push(position(coords)?),
        "LineString" => vertices.extend(coords.as_array()?.iter().map(position).collect::<Option<Vec<_>>>()?),
        "Polygon" => polygon(coords, &mut vertices)?,
        "MultiPolygon" => {
            for p in coords.as_array()? {
                polygon(p, &mut vertices)?;
            }
        }
        _ => return None,
    }
    cap_box(&vertices)
}

/// Twice the signed planar area of a closed ring in longitude and latitude (positive:
/// counter-clockwise); `None` when it spans 180° of longitude or more.
fn planar_area(ring: &[(f64, f64)]) -> Option<f64> {
    let (min, max) = ring.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &(lon, _)| (lo.min(lon), hi.max(lon)));
    if max - min >= 180.0 {
        return None;
    }
    Some(ring.windows(2).map(|w| w[0].0 * w[1].1 - w[1].0 * w[0].1).sum())
}

fn xyz((lon, lat): (f64, f64)) -> [f64; 3] {
    let (lon, lat) = (lon.to_radians(), lat.to_radians());
    [lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()]
}

/// The box around the smallest-ish cap (centered on the vertices' mean direction) holding them.
fn cap_box(vertices: &[(f64, f64)]) -> Option<SpatialBox> {
    let sum = vertices.iter().map(|&v| xyz(v)).fold([0.0; 3], |a, b| [a[0] + b[0], a[1] + b[1], a[2] + b[2]]);
    let norm = (sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]).sqrt();
    if norm.is_nan() || norm <= 1e-9 {
        return None;
    }
    let c = [sum[0] / norm, sum[1] / norm, sum[2] / norm];
    let radius = vertices
        .iter()
        .map(|&v| {
            let p = xyz(v);
            (p[0] * c[0] + p[1] * c[1] + p[2] * c[2]).clamp(-1.0, 1.0).acos().to_degrees()
        })
        .fold(0.0, f64::max)
        * (1.0 + SLACK)
        + SLACK_DEGREES;
    if radius > MAX_CAP {
        return None;
    }
    let lat = c[2].clamp(-1.0, 1.0).asin().to_degrees();
    let lon = c[1].atan2(c[0]).to_degrees();
    let (lat_min, lat_max) = ((lat - radius).max(-90.0), (lat + radius).min(90.0));
    let lon_half_width = if lat.abs() + radius >= 89.999 {
        180.0
    } else {
        let s = radius.to_radians().sin() / lat.to_radians().cos();
        (s.min(1.0).asin().to_degrees() * (1.0 + SLACK) + SLACK_DEGREES).min(180.0)
    };
    Some(SpatialBox { lat_min, lat_max, lon_center: lon, lon_half_width })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cosmoql_value::parse_json;

    #[test]
    fn distance_boxes_widen_with_latitude_and_open_at_the_poles() {
        let equator = distance_box((0.0, 0.0), 1000.0).unwrap();
        assert!((equator.lat_max - 0.00904).abs() < 1e-4, "{equator:?}");
        assert!(equator.lon_half_width > 0.00898 && equator.lon_half_width < 0.0091, "{equator:?}");
        let north = distance_box((10.0, 60.0), 1000.0).unwrap();
        assert!(north.lon_half_width > 2.0 * equator.lon_half_width * 0.99);
        assert_eq!(distance_box((0.0, 89.99), 5000.0).unwrap().lon_half_width, 180.0);
        assert!(distance_box((0.0, 0.0), -1.0).is_none());
    }

    #[test]
    fn clockwise_wide_or_wrapping_shapes_get_no_box() {
        let shape = |s: &str| shape_box(&parse_json(s).unwrap());
        assert!(shape(r#"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}"#).is_some());
        assert!(shape(r#"{"type":"Polygon","coordinates":[[[0,0],[0,1],[1,1],[1,0],[0,0]]]}"#).is_none());
        assert!(shape(r#"{"type":"Polygon","coordinates":[[[0,0],[50,0],[50,50],[0,50],[0,0]]]}"#).is_none());
        assert!(shape(r#"{"type":"Polygon","coordinates":[[[179,0],[-179,0],[-179,1],[179,0]]]}"#).is_none());
    }
}
