//! Spatial functions over GeoJSON geography (WGS-84): `ST_DISTANCE`, `ST_WITHIN`,
//! `ST_INTERSECTS`, `ST_ISVALID`, `ST_ISVALIDDETAILED`, `ST_AREA`.
//!
//! The supported types are the documented ones: `Point`, `LineString`, `Polygon` (the first ring
//! is the boundary, later rings are holes) and `MultiPolygon`. Positions are `[longitude,
//! latitude]` (an altitude may follow and is ignored). As documented, a ring given clockwise
//! stands for the inverse of the region it encloses.
//!
//! Distances and areas are geodesic on the WGS-84 ellipsoid (Karney's algorithms, through
//! `geographiclib-rs`): meters and square meters. Cosmos DB's own geodesic routines differ from
//! the exact geodesic by a few parts in 10^8 (the documented `ST_DISTANCE` example gives
//! 3345.269817267368 m where the exact geodesic is 3345.26974037 m; the `ST_AREA` example gives
//! 735970283.0522614 m² where the exact value is 735970287.9 m²), so results agree with the
//! service to about 1e-7 relative, not to the last bit.
//!
//! Edges are great-circle arcs for the predicates (`ST_WITHIN`, `ST_INTERSECTS`) and for the
//! nearest point of an edge in `ST_DISTANCE`. Arguments that are not GeoJSON objects of a supported
//! type, or are invalid, make every function but the `ST_ISVALID*` pair return `undefined`.

use cosmoql_value::Value;
use geographiclib_rs::{Geodesic, InverseGeodesic, PolygonArea, Winding};

use super::body::{Builtin, FunctionContext};
use crate::error::FunctionError;

type Out = Result<Value, FunctionError>;

pub(crate) const FUNCTIONS: &[Builtin] = &[
    Builtin { name: "ST_DISTANCE", eval: st_distance },
    Builtin { name: "ST_WITHIN", eval: st_within },
    Builtin { name: "ST_INTERSECTS", eval: st_intersects },
    Builtin { name: "ST_ISVALID", eval: st_isvalid },
    Builtin { name: "ST_ISVALIDDETAILED", eval: st_isvaliddetailed },
    Builtin { name: "ST_AREA", eval: st_area },
];

/// `(longitude, latitude)` in degrees.
type Pos = (f64, f64);
type Ring = Vec<Pos>;

#[derive(Debug, Clone, PartialEq)]
enum Geometry {
    Point(Pos),
    LineString(Vec<Pos>),
    Polygon(Vec<Ring>),
    MultiPolygon(Vec<Vec<Ring>>),
}

// ---------------------------------------------------------------------------------------------
// Parsing and validation

/// The geometry, or why the object is not a valid one. `Err(None)`: not an object at all.
fn parse(v: &Value) -> Result<Geometry, Option<String>> {
    let obj = v.as_object().ok_or(None)?;
    let kind = obj.get("type").and_then(Value::as_str);
    let coords = obj.get("coordinates").unwrap_or(&Value::Undefined);
    let reason = |s: &str| Some(s.to_string());
    match kind {
        Some("Point") => Ok(Geometry::Point(position(coords)?)),
        Some("LineString") => {
            let points = positions(coords, "LineString")?;
            if points.len() < 2 {
                return Err(reason(
                    "The LineString input is not valid because it does not have enough points. A LineString must have at least two points.",
                ));
            }
            Ok(Geometry::LineString(points))
        }
        Some("Polygon") => Ok(Geometry::Polygon(polygon(coords)?)),
        Some("MultiPolygon") => {
            let list = coords.as_array().ok_or_else(|| reason("The MultiPolygon input is not valid because its coordinates are not an array of polygons."))?;
            Ok(Geometry::MultiPolygon(list.iter().map(polygon).collect::<Result<_, _>>()?))
        }
        Some(other) => Err(Some(format!(
            "The GeoJSON type '{other}' is not supported. The supported types are Point, LineString, Polygon and MultiPolygon."
        ))),
        None => Err(reason("The input is not a valid GeoJSON object: it has no 'type' string.")),
    }
}

fn position(v: &Value) -> Result<Pos, Option<String>> {
    let invalid = || {
        Some(
            "A position must be an array of two or three numbers: longitude, latitude and an optional altitude."
                .to_string(),
        )
    };
    let items = v.as_array().ok_or_else(invalid)?;
    if !(2..=3).contains(&items.len()) {
        return Err(invalid());
    }
    let nums: Vec<f64> =
        items.iter().map(|x| x.as_f64().filter(|n| n.is_finite())).collect::<Option<_>>().ok_or_else(invalid)?;
    let (lon, lat) = (nums[0], nums[1]);
    if !(-90.0..=90.0).contains(&lat) {
        return Err(Some("Latitude values must be between -90 and 90 degrees.".into()));
    }
    if !(-180.0..=180.0).contains(&lon) {
        return Err(Some("Longitude values must be between -180 and 180 degrees.".into()));
    }
    Ok((lon, lat))
}

fn positions(v: &Value, kind: &str) -> Result<Vec<Pos>, Option<String>> {
    let items = v.as_array().ok_or_else(|| {
        Some(format!("The {kind} input is not valid because its coordinates are not an array of positions."))
    })?;
    items.iter().map(position).collect()
}

fn polygon(v: &Value) -> Result<Vec<Ring>, Option<String>> {
    let rings = v.as_array().filter(|r| !r.is_empty()).ok_or_else(|| {
        Some("The Polygon input is not valid because its coordinates are not a non-empty array of rings.".to_string())
    })?;
    let mut out = Vec::with_capacity(rings.len());
    for (i, ring) in rings.iter().enumerate() {
        let number = i + 1;
        let points = positions(ring, "Polygon")?;
        if points.first() != points.last() || points.is_empty() {
            return Err(Some(format!(
                "The Polygon input is not valid because the start and end points of the ring number {number} are not the same. Each ring of a polygon must have the same start and end points."
            )));
        }
        if points.len() < 4 {
            return Err(Some(format!(
                "The Polygon input is not valid because the ring number {number} does not have enough points. Each ring of a polygon must contain at least four points."
            )));
        }
        out.push(points);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Sphere helpers (unit vectors)

type V3 = [f64; 3];

fn xyz((lon, lat): Pos) -> V3 {
    let (lon, lat) = (lon.to_radians(), lat.to_radians());
    [lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()]
}

fn to_pos(v: V3) -> Pos {
    (v[1].atan2(v[0]).to_degrees(), v[2].atan2(v[0].hypot(v[1])).to_degrees())
}

fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn norm(a: V3) -> f64 {
    dot(a, a).sqrt()
}

fn unit(a: V3) -> Option<V3> {
    let n = norm(a);
    (n > 1e-15).then(|| [a[0] / n, a[1] / n, a[2] / n])
}

const EPS: f64 = 1e-12;

fn same(a: Pos, b: Pos) -> bool {
    let (p, q) = (xyz(a), xyz(b));
    norm([p[0] - q[0], p[1] - q[1], p[2] - q[2]]) < EPS
}

/// `s` (on the great circle through `a` and `b`) lies on the minor arc from `a` to `b`.
fn between(s: V3, a: V3, b: V3) -> bool {
    let n = cross(a, b);
    dot(cross(a, s), n) >= -EPS && dot(cross(s, b), n) >= -EPS && dot(s, add(a, b)) > 0.0
}

fn point_on_segment(p: Pos, a: Pos, b: Pos) -> bool {
    if same(p, a) || same(p, b) {
        return true;
    }
    let (pv, av, bv) = (xyz(p), xyz(a), xyz(b));
    let Some(n) = unit(cross(av, bv)) else { return false };
    dot(pv, n).abs() < EPS && between(pv, av, bv)
}

/// Where the arcs `a1–a2` and `b1–b2` meet, if they do (any common point for overlapping arcs).
fn segment_intersection(a1: Pos, a2: Pos, b1: Pos, b2: Pos) -> Option<V3> {
    for (p, a, b) in [(a1, b1, b2), (a2, b1, b2), (b1, a1, a2), (b2, a1, a2)] {
        if point_on_segment(p, a, b) {
            return Some(xyz(p));
        }
    }
    let (na, nb) = (unit(cross(xyz(a1), xyz(a2)))?, unit(cross(xyz(b1), xyz(b2)))?);
    let t = unit(cross(na, nb))?;
    [t, [-t[0], -t[1], -t[2]]].into_iter().find(|&s| between(s, xyz(a1), xyz(a2)) && between(s, xyz(b1), xyz(b2)))
}

/// The arcs cross at a point interior to both (not at an end of either).
fn proper_crossing(a1: Pos, a2: Pos, b1: Pos, b2: Pos) -> bool {
    match segment_intersection(a1, a2, b1, b2) {
        None => false,
        Some(s) => [a1, a2, b1, b2].iter().all(|&e| norm(sub(s, xyz(e))) > 1e-10),
    }
}

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loc {
    Inside,
    Boundary,
    Outside,
}

/// Where `p` is relative to the region a ring encloses (as drawn, whatever its orientation):
/// a ray-casting test in the gnomonic projection centred on `p`, where arcs are straight lines.
fn ring_location(p: Pos, ring: &[Pos]) -> Loc {
    let c = xyz(p);
    let (lon, lat) = (p.0.to_radians(), p.1.to_radians());
    let east = [-lon.sin(), lon.cos(), 0.0];
    let north = [-lat.sin() * lon.cos(), -lat.sin() * lon.sin(), lat.cos()];
    let projected: Option<Vec<(f64, f64)>> = ring
        .iter()
        .map(|&v| {
            let w = xyz(v);
            let d = dot(w, c);
            (d > 1e-9).then(|| (dot(w, east) / d, dot(w, north) / d))
        })
        .collect();
    // A ring reaching a hemisphere away: fall back on a planar test in longitude/latitude.
    let pts = projected.unwrap_or_else(|| ring.iter().map(|&(x, y)| (x - p.0, y - p.1)).collect());
    let mut inside = false;
    for w in pts.windows(2) {
        let ((ax, ay), (bx, by)) = (w[0], w[1]);
        let scale = ax.hypot(ay).max(bx.hypot(by)).max(1e-300);
        if ax.hypot(ay) < EPS {
            return Loc::Boundary;
        }
        let cr = ax * by - ay * bx;
        if cr.abs() <= EPS * scale * scale && ax * bx + ay * by <= 0.0 {
            return Loc::Boundary;
        }
        if (ay > 0.0) != (by > 0.0) {
            let x = ax + (0.0 - ay) * (bx - ax) / (by - ay);
            if x > 0.0 {
                inside = !inside;
            }
        }
    }
    if inside {
        Loc::Inside
    } else {
        Loc::Outside
    }
}

/// A ring listed clockwise (its signed geodesic area is negative).
fn clockwise(ring: &[Pos]) -> bool {
    signed_ring_area(ring) < 0.0
}

fn signed_ring_area(ring: &[Pos]) -> f64 {
    let g = Geodesic::wgs84();
    let mut pa = PolygonArea::new(&g, Winding::CounterClockwise);
    for &(lon, lat) in &ring[..ring.len() - 1] {
        pa.add_point(lat, lon);
    }
    pa.compute(true).1
}

fn polygon_location(p: Pos, rings: &[Ring]) -> Loc {
    let mut loc = ring_location(p, &rings[0]);
    if clockwise(&rings[0]) {
        loc = match loc {
            Loc::Inside => Loc::Outside,
            Loc::Outside => Loc::Inside,
            Loc::Boundary => Loc::Boundary,
        };
    }
    if loc != Loc::Inside {
        return loc;
    }
    for hole in &rings[1..] {
        match ring_location(p, hole) {
            Loc::Inside => return Loc::Outside,
            Loc::Boundary => return Loc::Boundary,
            Loc::Outside => {}
        }
    }
    Loc::Inside
}

// ---------------------------------------------------------------------------------------------
// Geometries as points, arcs and polygons

#[derive(Debug, Default)]
struct Parts<'a> {
    points: Vec<Pos>,
    segments: Vec<(Pos, Pos)>,
    polygons: Vec<&'a [Ring]>,
}

fn parts(g: &Geometry) -> Parts<'_> {
    let mut out = Parts::default();
    let add_line = |out: &mut Parts<'_>, line: &[Pos]| {
        out.points.extend_from_slice(line);
        out.segments.extend(line.windows(2).map(|w| (w[0], w[1])));
    };
    match g {
        Geometry::Point(p) => out.points.push(*p),
        Geometry::LineString(line) => add_line(&mut out, line),
        Geometry::Polygon(rings) => {
            rings.iter().for_each(|r| add_line(&mut out, r));
            out.polygons.push(rings);
        }
        Geometry::MultiPolygon(polys) => {
            for rings in polys {
                rings.iter().for_each(|r| add_line(&mut out, r));
                out.polygons.push(rings);
            }
        }
    }
    out
}

fn location_in(p: Pos, g: &Parts<'_>) -> Loc {
    let mut loc = Loc::Outside;
    for poly in &g.polygons {
        match polygon_location(p, poly) {
            Loc::Inside => return Loc::Inside,
            Loc::Boundary => loc = Loc::Boundary,
            Loc::Outside => {}
        }
    }
    if loc == Loc::Outside
        && (g.points.iter().any(|&q| same(p, q)) || g.segments.iter().any(|&(a, b)| point_on_segment(p, a, b)))
    {
        // On a line (or a point) of a non-areal geometry: its interior for our purposes.
        return if g.polygons.is_empty() { Loc::Inside } else { Loc::Boundary };
    }
    loc
}

fn intersects(a: &Parts<'_>, b: &Parts<'_>) -> bool {
    a.points.iter().any(|&p| location_in(p, b) != Loc::Outside)
        || b.points.iter().any(|&p| location_in(p, a) != Loc::Outside)
        || a.segments
            .iter()
            .any(|&(a1, a2)| b.segments.iter().any(|&(b1, b2)| segment_intersection(a1, a2, b1, b2).is_some()))
}

/// `a` lies in `b`: no point of `a` outside `b`, no edge of `a` crossing out of `b`, and some
/// point of `a` in `b`'s interior.
fn within(a: &Parts<'_>, b: &Parts<'_>) -> bool {
    let mut samples: Vec<Pos> = a.points.clone();
    samples.extend(a.segments.iter().filter_map(|&(p, q)| unit(add(xyz(p), xyz(q))).map(to_pos)));
    let locs: Vec<Loc> = samples.iter().map(|&p| location_in(p, b)).collect();
    if locs.contains(&Loc::Outside) || !locs.contains(&Loc::Inside) {
        return false;
    }
    !a.segments.iter().any(|&(a1, a2)| b.segments.iter().any(|&(b1, b2)| proper_crossing(a1, a2, b1, b2)))
}

fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn geodesic_distance(p: Pos, q: Pos) -> f64 {
    let d: f64 = Geodesic::wgs84().inverse(p.1, p.0, q.1, q.0);
    d
}

/// From `p` to the nearest point of the arc `a–b`.
fn distance_to_segment(p: Pos, a: Pos, b: Pos) -> f64 {
    let ends = geodesic_distance(p, a).min(geodesic_distance(p, b));
    let (pv, av, bv) = (xyz(p), xyz(a), xyz(b));
    let Some(n) = unit(cross(av, bv)) else { return ends };
    let Some(foot) = unit(sub(pv, [n[0] * dot(pv, n), n[1] * dot(pv, n), n[2] * dot(pv, n)])) else { return ends };
    if between(foot, av, bv) {
        ends.min(geodesic_distance(p, to_pos(foot)))
    } else {
        ends
    }
}

fn distance(a: &Parts<'_>, b: &Parts<'_>) -> f64 {
    if intersects(a, b) {
        return 0.0;
    }
    let one_way = |x: &Parts<'_>, y: &Parts<'_>| {
        x.points
            .iter()
            .flat_map(|&p| {
                y.points
                    .iter()
                    .map(move |&q| geodesic_distance(p, q))
                    .chain(y.segments.iter().map(move |&(s, t)| distance_to_segment(p, s, t)))
            })
            .fold(f64::INFINITY, f64::min)
    };
    one_way(a, b).min(one_way(b, a))
}

fn polygon_area(rings: &[Ring]) -> f64 {
    let g = Geodesic::wgs84();
    let mut pa = PolygonArea::new(&g, Winding::CounterClockwise);
    for &(lon, lat) in &rings[0][..rings[0].len() - 1] {
        pa.add_point(lat, lon);
    }
    // Unsigned: a clockwise boundary encloses the rest of the earth.
    let outer = pa.compute(false).1;
    let holes: f64 = rings[1..].iter().map(|r| signed_ring_area(r).abs()).sum();
    (outer - holes).max(0.0)
}

// ---------------------------------------------------------------------------------------------
// Functions

fn two(args: &[Value], f: impl FnOnce(&Parts<'_>, &Parts<'_>) -> Value) -> Value {
    match (parse(&args[0]), parse(&args[1])) {
        (Ok(a), Ok(b)) => f(&parts(&a), &parts(&b)),
        _ => Value::Undefined,
    }
}

fn st_distance(args: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(two(args, |a, b| Value::from(distance(a, b))))
}

fn st_within(args: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(two(args, |a, b| Value::from(within(a, b))))
}

fn st_intersects(args: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(two(args, |a, b| Value::from(intersects(a, b))))
}

fn st_isvalid(args: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(match parse(&args[0]) {
        Ok(_) => Value::Bool(true),
        Err(Some(_)) => Value::Bool(false),
        Err(None) => Value::Undefined,
    })
}

fn st_isvaliddetailed(args: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(match parse(&args[0]) {
        Ok(_) => Value::object([("valid", Value::Bool(true))]),
        Err(Some(reason)) => Value::object([("valid", Value::Bool(false)), ("reason", Value::from(reason))]),
        Err(None) => Value::Undefined,
    })
}

fn st_area(args: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(match parse(&args[0]) {
        Ok(Geometry::Polygon(rings)) => Value::from(polygon_area(&rings)),
        Ok(Geometry::MultiPolygon(polys)) => Value::from(polys.iter().map(|r| polygon_area(r)).sum::<f64>()),
        Ok(_) => Value::from(0.0),
        Err(_) => Value::Undefined,
    })
}

#[cfg(test)]
mod tests {
    use cosmoql_value::parse_json;

    use super::*;
    use crate::functions::test_support::call;

    fn geo(json: &str) -> Value {
        parse_json(json).expect("valid JSON")
    }

    fn point(lon: f64, lat: f64) -> Value {
        geo(&format!(r#"{{"type":"Point","coordinates":[{lon},{lat}]}}"#))
    }

    fn poly(ring: &[(f64, f64)]) -> Value {
        let coords: Vec<String> = ring.iter().map(|(x, y)| format!("[{x},{y}]")).collect();
        geo(&format!(r#"{{"type":"Polygon","coordinates":[[{}]]}}"#, coords.join(",")))
    }

    #[track_caller]
    fn rel_close(v: Value, expected: f64, tol: f64) {
        let x = v.as_f64().unwrap_or_else(|| panic!("not a number: {v:?}"));
        assert!(((x - expected) / expected).abs() < tol, "{x} vs {expected}");
    }

    const SQUARE: [(f64, f64); 5] = [(31.8, -5.0), (32.0, -5.0), (32.0, -4.7), (31.8, -4.7), (31.8, -5.0)];

    #[test]
    fn conformance_st_distance() {
        // Documented: 3.345269817267368 km and 1907.438421299902 km (to ~4e-8 relative).
        let target = point(-122.11758113953535, 47.66901087006131);
        let hq = point(-122.12826822304672, 47.63980239335718);
        let rd = point(-96.84368664765994, 46.81297794314663);
        rel_close(call("ST_DISTANCE", &[hq, target.clone()]), 3345.269817267368, 1e-7);
        rel_close(call("ST_DISTANCE", &[rd, target]), 1907438.421299902, 1e-7);
    }

    #[test]
    fn conformance_st_area() {
        rel_close(call("ST_AREA", &[poly(&SQUARE)]), 735970283.0522614, 1e-7);
    }

    #[test]
    fn conformance_st_within() {
        let campus = poly(&[
            (-122.13236581015025, 47.64606476313813),
            (-122.13221982500913, 47.633757091363975),
            (-122.11840598103835, 47.641749416109235),
            (-122.12061400629656, 47.64589264786028),
            (-122.13236581015025, 47.64606476313813),
        ]);
        let hq = point(-122.12824857332558, 47.6395516675712);
        assert_eq!(call("ST_WITHIN", &[hq.clone(), campus.clone()]), Value::Bool(true));
        assert_eq!(call("ST_WITHIN", &[point(-122.10, 47.6395516675712), campus.clone()]), Value::Bool(false));
        assert_eq!(call("ST_WITHIN", &[campus, hq]), Value::Bool(false));
    }

    #[test]
    fn conformance_st_intersects() {
        let highway = poly(&[
            (-122.13693695285855, 47.64996065621003),
            (-122.1351662656516, 47.64627863318731),
            (-122.13488295569863, 47.646326350048696),
            (-122.1366182291613, 47.650016321952904),
            (-122.13693695285855, 47.64996065621003),
        ]);
        let campus = poly(&[
            (-122.14034847687708, 47.6494835188378),
            (-122.14014779899375, 47.64625477474044),
            (-122.13256925774829, 47.646207057813655),
            (-122.13254564858545, 47.64941990019193),
            (-122.14034847687708, 47.6494835188378),
        ]);
        assert_eq!(call("ST_INTERSECTS", &[highway.clone(), campus.clone()]), Value::Bool(true));
        assert_eq!(call("ST_INTERSECTS", &[campus, highway]), Value::Bool(true));
    }

    #[test]
    fn conformance_st_isvalid() {
        assert_eq!(call("ST_ISVALID", &[point(-84.38876194345323, 33.75682784306348)]), Value::Bool(true));
        assert_eq!(
            call("ST_ISVALID", &[geo(r#"{"type":"Point","coordinates":[133.75682784306348, -184.38876194345323]}"#)]),
            Value::Bool(false)
        );
        assert_eq!(call("ST_ISVALID", &[point(31.9, -132.8)]), Value::Bool(false));
        assert_eq!(
            call("ST_ISVALIDDETAILED", &[point(-84.38876194345323, 33.75682784306348)]),
            geo(r#"{"valid": true}"#)
        );
        assert_eq!(
            call(
                "ST_ISVALIDDETAILED",
                &[geo(r#"{"type":"Point","coordinates":[133.75682784306348, -184.38876194345323]}"#)]
            ),
            geo(r#"{"valid": false, "reason": "Latitude values must be between -90 and 90 degrees."}"#)
        );
        let open =
            geo(r#"{"type": "Polygon", "coordinates": [[ [ 31.8, -5 ], [ 31.8, -4.7 ], [ 32, -4.7 ], [ 32, -5 ] ]]}"#);
        assert_eq!(
            call("ST_ISVALIDDETAILED", &[open]),
            geo(
                r#"{"valid": false, "reason": "The Polygon input is not valid because the start and end points of the ring number 1 are not the same. Each ring of a polygon must have the same start and end points."}"#
            )
        );
    }

    #[test]
    fn validity_rules() {
        let valid = |json: &str| call("ST_ISVALID", &[geo(json)]);
        assert_eq!(valid(r#"{"type":"Point","coordinates":[200,10]}"#), Value::Bool(false));
        assert_eq!(valid(r#"{"type":"Point","coordinates":[10,10,5]}"#), Value::Bool(true));
        assert_eq!(valid(r#"{"type":"Point","coordinates":[10]}"#), Value::Bool(false));
        assert_eq!(valid(r#"{"type":"Point","coordinates":["10",1]}"#), Value::Bool(false));
        assert_eq!(valid(r#"{"type":"Point"}"#), Value::Bool(false));
        assert_eq!(valid(r#"{"type":"LineString","coordinates":[[1,1],[2,2]]}"#), Value::Bool(true));
        assert_eq!(valid(r#"{"type":"LineString","coordinates":[[1,1]]}"#), Value::Bool(false));
        assert_eq!(valid(r#"{"type":"Polygon","coordinates":[[[1,1],[2,1],[1,1]]]}"#), Value::Bool(false));
        assert_eq!(valid(r#"{"type":"Polygon","coordinates":[]}"#), Value::Bool(false));
        assert_eq!(
            valid(
                r#"{"type":"MultiPolygon","coordinates":[[[[52,12],[53,12],[53,13],[52,13],[52,12]]],[[[50,0],[51,0],[51,5],[50,5],[50,0]]]]}"#
            ),
            Value::Bool(true)
        );
        assert_eq!(valid(r#"{"type":"Circle","coordinates":[1,1]}"#), Value::Bool(false));
        assert_eq!(valid(r#"{"coordinates":[1,1]}"#), Value::Bool(false));
        assert!(call("ST_ISVALID", &[Value::from(1)]).is_undefined());
        assert!(call("ST_ISVALIDDETAILED", &[Value::Undefined]).is_undefined());
        let detailed = call("ST_ISVALIDDETAILED", &[geo(r#"{"type":"Polygon","coordinates":[[[1,1],[2,1],[1,1]]]}"#)]);
        assert_eq!(
            detailed.get("reason").as_str(),
            Some("The Polygon input is not valid because the ring number 1 does not have enough points. Each ring of a polygon must contain at least four points.")
        );
    }

    #[test]
    fn distance_cases() {
        let a = point(0.0, 0.0);
        assert_eq!(call("ST_DISTANCE", &[a.clone(), a.clone()]), Value::from(0.0));
        // One degree of longitude on the equator: a * pi / 180.
        rel_close(call("ST_DISTANCE", &[a.clone(), point(1.0, 0.0)]), 111_319.490_793_273_57, 1e-12);
        // A point inside a polygon is at distance 0; outside, the distance to the nearest edge.
        assert_eq!(call("ST_DISTANCE", &[point(31.9, -4.8), poly(&SQUARE)]), Value::from(0.0));
        let to_edge = call("ST_DISTANCE", &[point(31.9, -4.6), poly(&SQUARE)]).as_f64().expect("number");
        let direct = geodesic_distance((31.9, -4.6), (31.9, -4.7));
        assert!((to_edge - direct).abs() < 1.0, "{to_edge} vs {direct}");
        // Point to a line string: the foot of the perpendicular.
        let line = geo(r#"{"type":"LineString","coordinates":[[0,0],[0,2]]}"#);
        rel_close(call("ST_DISTANCE", &[point(0.5, 1.0), line]), geodesic_distance((0.5, 1.0), (0.0, 1.0)), 1e-6);
        assert!(call("ST_DISTANCE", &[a.clone(), Value::from("x")]).is_undefined());
        assert!(call("ST_DISTANCE", &[point(0.0, 95.0), a]).is_undefined());
    }

    #[test]
    fn within_and_intersects_cases() {
        let square = poly(&SQUARE);
        let inner = poly(&[(31.85, -4.95), (31.95, -4.95), (31.95, -4.75), (31.85, -4.75), (31.85, -4.95)]);
        let far = poly(&[(40.0, 0.0), (41.0, 0.0), (41.0, 1.0), (40.0, 1.0), (40.0, 0.0)]);
        let t = Value::Bool(true);
        let f = Value::Bool(false);
        assert_eq!(call("ST_WITHIN", &[inner.clone(), square.clone()]), t);
        assert_eq!(call("ST_WITHIN", &[square.clone(), inner.clone()]), f);
        assert_eq!(call("ST_INTERSECTS", &[inner.clone(), square.clone()]), t);
        assert_eq!(call("ST_INTERSECTS", &[far.clone(), square.clone()]), f);
        assert_eq!(call("ST_WITHIN", &[far, square.clone()]), f);
        // A line crossing the boundary intersects but is not within.
        let crossing = geo(r#"{"type":"LineString","coordinates":[[31.9,-4.8],[31.9,-4.0]]}"#);
        assert_eq!(call("ST_INTERSECTS", &[crossing.clone(), square.clone()]), t);
        assert_eq!(call("ST_WITHIN", &[crossing, square.clone()]), f);
        let inside_line = geo(r#"{"type":"LineString","coordinates":[[31.9,-4.8],[31.9,-4.9]]}"#);
        assert_eq!(call("ST_WITHIN", &[inside_line, square.clone()]), t);
        // Points: within a polygon, on a line, equal points.
        assert_eq!(call("ST_WITHIN", &[point(31.9, -4.8), square.clone()]), t);
        assert_eq!(call("ST_WITHIN", &[point(31.9, -4.0), square.clone()]), f);
        assert_eq!(call("ST_INTERSECTS", &[point(32.0, -4.8), square.clone()]), t, "on the boundary");
        assert_eq!(call("ST_WITHIN", &[point(32.0, -4.8), square.clone()]), f, "on the boundary only");
        assert_eq!(call("ST_INTERSECTS", &[point(1.0, 2.0), point(1.0, 2.0)]), t);
        assert_eq!(call("ST_WITHIN", &[point(1.0, 2.0), point(1.0, 2.0)]), t);
        assert_eq!(call("ST_INTERSECTS", &[point(1.0, 2.0), point(1.0, 2.5)]), f);
        let line = geo(r#"{"type":"LineString","coordinates":[[0,0],[0,2]]}"#);
        assert_eq!(call("ST_INTERSECTS", &[point(0.0, 1.0), line.clone()]), t);
        assert_eq!(call("ST_INTERSECTS", &[point(0.001, 1.0), line.clone()]), f);
        let cross = geo(r#"{"type":"LineString","coordinates":[[-1,1],[1,1]]}"#);
        assert_eq!(call("ST_INTERSECTS", &[cross, line]), t);
        // A hole excludes its inside.
        let holed = geo(
            r#"{"type":"Polygon","coordinates":[[[0,0],[10,0],[10,10],[0,10],[0,0]],[[4,4],[4,6],[6,6],[6,4],[4,4]]]}"#,
        );
        assert_eq!(call("ST_WITHIN", &[point(5.0, 5.0), holed.clone()]), f);
        assert_eq!(call("ST_WITHIN", &[point(2.0, 2.0), holed.clone()]), t);
        // A clockwise ring stands for the rest of the world.
        let clockwise = poly(&[(0.0, 0.0), (0.0, 1.0), (1.0, 1.0), (1.0, 0.0), (0.0, 0.0)]);
        assert_eq!(call("ST_WITHIN", &[point(0.5, 0.5), clockwise.clone()]), f);
        assert_eq!(call("ST_WITHIN", &[point(50.0, 50.0), clockwise]), t);
        assert!(call("ST_WITHIN", &[point(0.0, 0.0), Value::Null]).is_undefined());
        assert!(call("ST_INTERSECTS", &[Value::Undefined, point(0.0, 0.0)]).is_undefined());
        // MultiPolygon.
        let multi = geo(
            r#"{"type":"MultiPolygon","coordinates":[[[[52,12],[53,12],[53,13],[52,13],[52,12]]],[[[50,0],[51,0],[51,5],[50,5],[50,0]]]]}"#,
        );
        assert_eq!(call("ST_WITHIN", &[point(50.5, 2.0), multi.clone()]), t);
        assert_eq!(call("ST_WITHIN", &[point(51.5, 2.0), multi]), f);
    }

    #[test]
    fn area_cases() {
        let square = poly(&SQUARE);
        let a = call("ST_AREA", &[square]).as_f64().expect("number");
        // Holes subtract; points and lines have no area; the clockwise square is the rest of the earth.
        let holed = geo(
            r#"{"type":"Polygon","coordinates":[[[31.8,-5],[32,-5],[32,-4.7],[31.8,-4.7],[31.8,-5]],[[31.85,-4.95],[31.85,-4.75],[31.95,-4.75],[31.95,-4.95],[31.85,-4.95]]]}"#,
        );
        let h = call("ST_AREA", &[holed]).as_f64().expect("number");
        assert!(h < a && h > a * 0.5, "{h} vs {a}");
        assert_eq!(call("ST_AREA", &[point(1.0, 1.0)]), Value::from(0.0));
        let reversed: Vec<(f64, f64)> = SQUARE.iter().rev().copied().collect();
        let rest = call("ST_AREA", &[poly(&reversed)]).as_f64().expect("number");
        rel_close(Value::from(rest + a), Geodesic::wgs84().area(), 1e-9);
        let multi = geo(
            r#"{"type":"MultiPolygon","coordinates":[[[[31.8,-5],[32,-5],[32,-4.7],[31.8,-4.7],[31.8,-5]]],[[[31.8,-5],[32,-5],[32,-4.7],[31.8,-4.7],[31.8,-5]]]]}"#,
        );
        rel_close(call("ST_AREA", &[multi]), 2.0 * a, 1e-12);
        assert!(call("ST_AREA", &[Value::from("polygon")]).is_undefined());
        assert!(
            call("ST_AREA", &[geo(r#"{"type":"Polygon","coordinates":[[[1,1],[2,1],[2,2],[1,1.5]]]}"#)]).is_undefined()
        );
    }
}
