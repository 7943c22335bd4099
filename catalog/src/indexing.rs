//! Indexing policies: which paths of an item are indexed, in the service's JSON form.
//!
//! ```json
//! {"indexingMode": "consistent", "automatic": true,
//!  "includedPaths": [{"path": "/*"}], "excludedPaths": [{"path": "/\"_etag\"/?"}],
//!  "compositeIndexes": [[{"path": "/name", "order": "ascending"}, {"path": "/age", "order": "descending"}]],
//!  "spatialIndexes": [{"path": "/location/*", "types": ["Point"]}]}
//! ```
//!
//! - A path is `/`-separated segments ending in `/?` (the scalar at that path) or `/*` (everything
//!   below); `/[]` stands for every element of an array; a segment other than letters, digits and
//!   `_` is quoted (`/"a b"/?`).
//! - Precedence, as documented: when included and excluded paths both match, the more precise one
//!   wins: a deeper path is more precise, and at the same depth `/?` beats `/*`.
//! - The root `/*` must be included or excluded; omitted lists are filled in as the service does
//!   (everything included), and `/"_etag"/?` is always excluded unless included explicitly.
//! - `id` and `_ts` are always indexed in consistent mode; mode `none` indexes nothing.
//!
//! Every invalid policy is a 400 with the service's wording where it is known (sources in
//! `docs/ARCHITECTURE.md`).

use std::fmt;

use cosmoql_value::{Map, Value};

use crate::error::{CatalogError, Result};

/// One segment of a document path, as policies and queries address values.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IndexStep {
    /// A property.
    Key(String),
    /// Every element of an array (`/[]`); a query's `a[0]` reads one of them.
    Element,
}

/// How a policy path ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathEnd {
    /// `/?`: the scalar value at the path.
    Scalar,
    /// `/*`: everything below the path.
    Subtree,
}

/// An included or excluded path of a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexPath {
    /// As written.
    pub text: String,
    pub segments: Vec<IndexStep>,
    pub end: PathEnd,
}

impl IndexPath {
    /// Parses an included or excluded path (`/a/b/?`, `/a/*`, `/a/[]/?`, `/"a b"/?`, and `/`, the
    /// older spelling of the root that the service still accepts: the Python SDK's emulator
    /// tests and its `index_management.py` sample create `{"path": "/"}`).
    pub fn parse(text: &str) -> Result<Self> {
        if text == "/" {
            return Ok(IndexPath { text: text.to_string(), segments: Vec::new(), end: PathEnd::Subtree });
        }
        let (segments, end) = parse_path(text, true)?;
        Ok(IndexPath { text: text.to_string(), segments, end: end.unwrap_or(PathEnd::Subtree) })
    }

    /// Whether the path covers the scalar at `path`.
    fn matches(&self, path: &[IndexStep]) -> bool {
        match self.end {
            PathEnd::Scalar => self.segments.len() == path.len() && segments_match(&self.segments, path),
            PathEnd::Subtree => self.segments.len() <= path.len() && segments_match(&self.segments, path),
        }
    }

    /// How precise the path is: deeper first, then `/?` before `/*`.
    fn precision(&self) -> (usize, u8) {
        (self.segments.len(), if self.end == PathEnd::Scalar { 1 } else { 0 })
    }
}

/// Whether a policy's segments match the start of a document path.
fn segments_match(policy: &[IndexStep], path: &[IndexStep]) -> bool {
    policy.iter().zip(path).all(|(p, d)| p == d)
}

/// One path of a composite index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompositePath {
    pub text: String,
    pub segments: Vec<IndexStep>,
    pub descending: bool,
}

/// A spatial index: a path and the geometry types it indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpatialIndex {
    pub path: IndexPath,
    pub types: Vec<String>,
}

/// `consistent` or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexingMode {
    /// Indexes are updated with every write.
    Consistent,
    /// Nothing is indexed: queries scan.
    None,
}

/// A container's indexing policy.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexingPolicy {
    pub mode: IndexingMode,
    pub automatic: bool,
    pub included: Vec<IndexPath>,
    pub excluded: Vec<IndexPath>,
    pub composite: Vec<Vec<CompositePath>>,
    pub spatial: Vec<SpatialIndex>,
    /// Policy fields cosmoql keeps but does not act on (`vectorIndexes`, `fullTextIndexes`),
    /// echoed back as given.
    pub other: Map,
}

impl Default for IndexingPolicy {
    /// The policy of a new container: everything included, `/"_etag"/?` excluded.
    fn default() -> Self {
        IndexingPolicy {
            mode: IndexingMode::Consistent,
            automatic: true,
            included: vec![IndexPath { text: "/*".into(), segments: vec![], end: PathEnd::Subtree }],
            excluded: vec![etag_path()],
            composite: Vec::new(),
            spatial: Vec::new(),
            other: Map::default(),
        }
    }
}

fn etag_path() -> IndexPath {
    IndexPath { text: "/\"_etag\"/?".into(), segments: vec![IndexStep::Key("_etag".into())], end: PathEnd::Scalar }
}

/// The service's message for a path it cannot parse; `position` is the 0-based character where
/// parsing failed.
fn bad_path(text: &str, position: usize) -> CatalogError {
    CatalogError::bad_request(format!(
        "The indexing path '{text}' could not be accepted, failed near position '{position}'. Please ensure that the path is a valid path. Common errors include invalid characters or absence of quotes around labels."
    ))
}

/// Parses `/seg/seg/...` with an optional `/?` or `/*` end (`terminal`: the end is required).
fn parse_path(text: &str, terminal: bool) -> Result<(Vec<IndexStep>, Option<PathEnd>)> {
    let chars: Vec<char> = text.chars().collect();
    let mut segments = Vec::new();
    let mut i = 0;
    loop {
        // A `/` starts every segment.
        if chars.get(i) != Some(&'/') {
            return Err(bad_path(text, i));
        }
        i += 1;
        match chars.get(i) {
            Some('?') | Some('*') if terminal => {
                if i + 1 != chars.len() {
                    return Err(bad_path(text, i + 1));
                }
                let end = if chars[i] == '?' { PathEnd::Scalar } else { PathEnd::Subtree };
                return Ok((segments, Some(end)));
            }
            Some('[') => {
                if chars.get(i + 1) != Some(&']') {
                    return Err(bad_path(text, i + 1));
                }
                segments.push(IndexStep::Element);
                i += 2;
            }
            Some('{') => {
                return Err(CatalogError::bad_request(format!(
                    "The indexing path '{text}' is a tuple path; cosmoql does not support tuple paths yet."
                )))
            }
            Some('"') => {
                let mut name = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(bad_path(text, i)),
                        Some('"') => break,
                        Some('\\') => match chars.get(i + 1) {
                            Some(&c @ ('"' | '\\')) => {
                                name.push(c);
                                i += 1;
                            }
                            _ => return Err(bad_path(text, i + 1)),
                        },
                        Some(&c) => name.push(c),
                    }
                    i += 1;
                }
                if name.is_empty() {
                    return Err(bad_path(text, i));
                }
                segments.push(IndexStep::Key(name));
                i += 1;
            }
            Some(c) if c.is_alphanumeric() || *c == '_' => {
                let start = i;
                while chars.get(i).is_some_and(|c| c.is_alphanumeric() || *c == '_') {
                    i += 1;
                }
                segments.push(IndexStep::Key(chars[start..i].iter().collect()));
            }
            _ => return Err(bad_path(text, i)),
        }
        if i == chars.len() {
            // A policy path must end in `/?` or `/*`; a composite path ends after its last segment.
            return if terminal { Err(bad_path(text, i)) } else { Ok((segments, None)) };
        }
    }
}

impl IndexingPolicy {
    /// Reads a policy in the service's JSON form, filling in what is omitted as the service does.
    pub fn from_json(v: &Value) -> Result<Self> {
        let Some(object) = v.as_object() else {
            return Err(CatalogError::bad_request("the indexing policy must be a JSON object"));
        };
        let mut policy = IndexingPolicy { included: Vec::new(), excluded: Vec::new(), ..IndexingPolicy::default() };
        for (key, value) in object.iter() {
            match key.as_str() {
                "indexingMode" => {
                    policy.mode = match value.as_str().map(str::to_ascii_lowercase).as_deref() {
                        Some("consistent") => IndexingMode::Consistent,
                        Some("none") => IndexingMode::None,
                        Some("lazy") => {
                            return Err(CatalogError::bad_request(
                                "Lazy indexing is not available for new containers: choose 'consistent' or 'none'.",
                            ))
                        }
                        _ => {
                            return Err(CatalogError::bad_request(format!(
                                "The indexing mode {value} is invalid: choose 'consistent' or 'none'."
                            )))
                        }
                    }
                }
                "automatic" => {
                    policy.automatic = value.as_bool().ok_or_else(|| {
                        CatalogError::bad_request("the indexing policy's `automatic` must be true or false")
                    })?
                }
                "includedPaths" => policy.included = paths(value, key)?,
                "excludedPaths" => policy.excluded = paths(value, key)?,
                "compositeIndexes" => policy.composite = composites(value)?,
                "spatialIndexes" => policy.spatial = spatials(value)?,
                _ => {
                    policy.other.insert(key.clone(), value.clone());
                }
            }
        }
        let has = |list: &[IndexPath]| list.iter().any(|p| p.segments.is_empty() && p.end == PathEnd::Subtree);
        if !object.contains_key("includedPaths") && !has(&policy.excluded) {
            policy.included.insert(0, IndexPath { text: "/*".into(), segments: vec![], end: PathEnd::Subtree });
        }
        if policy.mode == IndexingMode::Consistent && !has(&policy.included) && !has(&policy.excluded) {
            return Err(CatalogError::bad_request(
                "The special mandatory indexing path \"/\" is not provided in any of the path type sets. Please provide this path in one of the sets.",
            ));
        }
        let etag = etag_path();
        let mentions_etag = |list: &[IndexPath]| list.iter().any(|p| p.segments == etag.segments);
        if !mentions_etag(&policy.included) && !mentions_etag(&policy.excluded) {
            policy.excluded.push(etag);
        }
        Ok(policy)
    }

    /// The policy in the service's JSON form, as it reads it back.
    pub fn to_json(&self) -> Value {
        let mut m = Map::default();
        let mode = match self.mode {
            IndexingMode::Consistent => "consistent",
            IndexingMode::None => "none",
        };
        m.insert("indexingMode".into(), Value::from(mode));
        m.insert("automatic".into(), Value::from(self.automatic));
        let list = |paths: &[IndexPath]| {
            Value::from(
                paths.iter().map(|p| Value::object([("path", Value::from(p.text.as_str()))])).collect::<Vec<_>>(),
            )
        };
        m.insert("includedPaths".into(), list(&self.included));
        m.insert("excludedPaths".into(), list(&self.excluded));
        if !self.composite.is_empty() {
            let composites = self.composite.iter().map(|c| {
                Value::from(
                    c.iter()
                        .map(|p| {
                            Value::object([
                                ("path", Value::from(p.text.as_str())),
                                ("order", Value::from(if p.descending { "descending" } else { "ascending" })),
                            ])
                        })
                        .collect::<Vec<_>>(),
                )
            });
            m.insert("compositeIndexes".into(), Value::from(composites.collect::<Vec<_>>()));
        }
        if !self.spatial.is_empty() {
            let spatial = self.spatial.iter().map(|s| {
                Value::object([
                    ("path", Value::from(s.path.text.as_str())),
                    ("types", Value::from(s.types.iter().map(|t| Value::from(t.as_str())).collect::<Vec<_>>())),
                ])
            });
            m.insert("spatialIndexes".into(), Value::from(spatial.collect::<Vec<_>>()));
        }
        for (k, v) in self.other.iter() {
            m.insert(k.clone(), v.clone());
        }
        Value::from(m)
    }

    /// Whether the range index holds the scalars at `path` (a document path from the item's root).
    pub fn is_indexed(&self, path: &[IndexStep]) -> bool {
        if self.mode == IndexingMode::None {
            return false;
        }
        // `id` and `_ts` are always indexed in consistent mode.
        if let [IndexStep::Key(k)] = path {
            if k == "id" || k == "_ts" {
                return true;
            }
        }
        // The other system properties are made from an item's metadata when it is read (the
        // store keeps them in no document), so no index holds them: a filter on `_rid` (the REST
        // gateway's lookup of an item by its `_self`) reads the items.
        if let Some(IndexStep::Key(k)) = path.first() {
            if matches!(k.as_str(), "_rid" | "_self" | "_etag" | "_attachments") {
                return false;
            }
        }
        let best = |list: &[IndexPath]| list.iter().filter(|p| p.matches(path)).map(IndexPath::precision).max();
        match (best(&self.included), best(&self.excluded)) {
            (Some(i), Some(e)) => i > e,
            (Some(_), None) => true,
            _ => false,
        }
    }

    /// Whether a composite index serves ORDER BY on these paths and directions (`true`:
    /// descending): the same paths in the same order and number, with every direction equal to the
    /// index's or every one inverted.
    pub fn has_composite(&self, items: &[(Vec<IndexStep>, bool)]) -> bool {
        self.mode == IndexingMode::Consistent
            && self.composite.iter().any(|c| {
                c.len() == items.len()
                    && c.iter().zip(items).all(|(p, (path, _))| p.segments == *path)
                    && (c.iter().zip(items).all(|(p, (_, desc))| p.descending == *desc)
                        || c.iter().zip(items).all(|(p, (_, desc))| p.descending != *desc))
            })
    }
}

impl fmt::Display for IndexingPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", cosmoql_value::to_json_string(&self.to_json()).unwrap_or_default())
    }
}

fn paths(v: &Value, field: &str) -> Result<Vec<IndexPath>> {
    let Some(list) = v.as_array() else {
        return Err(CatalogError::bad_request(format!("the indexing policy's `{field}` must be an array")));
    };
    list.iter()
        .map(|entry| match entry.get("path").as_str() {
            Some(text) => IndexPath::parse(text),
            None => Err(CatalogError::bad_request(format!("each of `{field}` needs a string `path`"))),
        })
        .collect()
}

fn composites(v: &Value) -> Result<Vec<Vec<CompositePath>>> {
    let Some(list) = v.as_array() else {
        return Err(CatalogError::bad_request("the indexing policy's `compositeIndexes` must be an array of arrays"));
    };
    list.iter()
        .enumerate()
        .map(|(i, index)| {
            let Some(paths) = index.as_array() else {
                return Err(CatalogError::bad_request("each composite index must be an array of paths"));
            };
            if paths.len() < 2 {
                return Err(CatalogError::bad_request(format!(
                    "The composite index at 'indexingPolicy.additionalIndexes.composite['{i}']' must have at least 2 paths."
                )));
            }
            let mut out: Vec<CompositePath> = Vec::with_capacity(paths.len());
            for (j, p) in paths.iter().enumerate() {
                let Some(text) = p.get("path").as_str() else {
                    return Err(CatalogError::bad_request("each composite path needs a string `path`"));
                };
                // No `/?` or `/*`: a composite path ends at its last segment (an implicit `/?`).
                let (segments, _) = parse_path(text, false)?;
                let descending = match p.get("order") {
                    Value::Undefined => false,
                    Value::String(o) if o.eq_ignore_ascii_case("ascending") => false,
                    Value::String(o) if o.eq_ignore_ascii_case("descending") => true,
                    other => {
                        let shown = other.as_str().map_or_else(|| other.to_string(), str::to_string);
                        return Err(CatalogError::bad_request(format!(
                            "The composite order '{shown}' is invalid. Choose between 'ascending' and 'descending'."
                        )));
                    }
                };
                if out.iter().any(|q| q.segments == segments) {
                    return Err(CatalogError::bad_request(format!(
                        "The following path '{text}' was specified more than once in 'additionalIndexes.composite[{i}][{j}]'. Remove the duplicated field."
                    )));
                }
                out.push(CompositePath { text: text.to_string(), segments, descending });
            }
            Ok(out)
        })
        .collect()
}

fn spatials(v: &Value) -> Result<Vec<SpatialIndex>> {
    let Some(list) = v.as_array() else {
        return Err(CatalogError::bad_request("the indexing policy's `spatialIndexes` must be an array"));
    };
    list.iter()
        .map(|entry| {
            let Some(text) = entry.get("path").as_str() else {
                return Err(CatalogError::bad_request("each spatial index needs a string `path`"));
            };
            let path = IndexPath::parse(text)?;
            let types = entry.get("types").as_array().map(|t| t.to_vec()).unwrap_or_default();
            if types.is_empty() {
                return Err(CatalogError::bad_request(format!(
                    "The spatial data types array cannot be empty. Assign at least one spatial type for the 'types' array for the path '{text}'."
                )));
            }
            let types = types
                .iter()
                .map(|t| match t.as_str() {
                    Some(s @ ("Point" | "Polygon" | "MultiPolygon" | "LineString")) => Ok(s.to_string()),
                    _ => Err(CatalogError::bad_request(format!(
                        "The spatial type {t} is invalid: choose Point, Polygon, MultiPolygon or LineString."
                    ))),
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(SpatialIndex { path, types })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use cosmoql_value::parse_json;

    use super::*;

    fn policy(json: &str) -> Result<IndexingPolicy> {
        IndexingPolicy::from_json(&parse_json(json).unwrap())
    }

    fn key(path: &str) -> Vec<IndexStep> {
        path.split('/')
            .filter(|s| !s.is_empty())
            .map(|s| if s == "[]" { IndexStep::Element } else { IndexStep::Key(s.to_string()) })
            .collect()
    }

    #[test]
    fn the_default_policy_reads_back_as_the_service_writes_it() {
        let p = IndexingPolicy::default();
        assert_eq!(
            p.to_string(),
            r#"{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}"#
        );
        for omitted in
            ["{}", r#"{"indexingMode": "Consistent", "automatic": true}"#, r#"{"includedPaths": [{"path": "/*"}]}"#]
        {
            assert_eq!(policy(omitted).unwrap(), p, "{omitted}");
        }
        assert!(p.is_indexed(&key("/a/b")) && p.is_indexed(&key("/tags/[]")) && !p.is_indexed(&key("/_etag")));
    }

    #[test]
    fn the_more_precise_path_wins() {
        let p = policy(
            r#"{"includedPaths": [{"path": "/*"}, {"path": "/a/b/?"}, {"path": "/x/?"}],
                "excludedPaths": [{"path": "/a/*"}, {"path": "/x/*"}, {"path": "/\"s p\"/[]/?"}]}"#,
        )
        .unwrap();
        assert!(p.is_indexed(&key("/a/b")), "deeper wins");
        assert!(!p.is_indexed(&key("/a/c")));
        assert!(p.is_indexed(&key("/x")), "/? beats /* at the same depth");
        assert!(!p.is_indexed(&key("/x/y")));
        assert!(!p.is_indexed(&[IndexStep::Key("s p".into()), IndexStep::Element]));
        assert!(p.is_indexed(&key("/id")) && p.is_indexed(&key("/_ts")), "always");
        let none = policy(r#"{"indexingMode": "none", "automatic": false}"#).unwrap();
        assert!(!none.is_indexed(&key("/id")));
    }

    #[test]
    fn invalid_policies_are_rejected_in_the_service_words() {
        for (json, message) in [
            (
                r#"{"includedPaths": [{"path": "/expiration"}]}"#,
                "The indexing path '/expiration' could not be accepted, failed near position '11'. Please ensure that the path is a valid path. Common errors include invalid characters or absence of quotes around labels.",
            ),
            (r#"{"excludedPaths": [{"path": "/a b/?"}]}"#, "failed near position '2'"),
            (r#"{"excludedPaths": [{"path": "/\"a/?"}]}"#, "failed near position '5'"),
            (r#"{"includedPaths": [{"path": "/a/?"}]}"#, "The special mandatory indexing path \"/\" is not provided"),
            (r#"{"compositeIndexes": [[{"path": "/a"}]]}"#, "must have at least 2 paths"),
            (r#"{"compositeIndexes": [[{"path": "/a"}, {"path": "/b/?"}]]}"#, "The indexing path '/b/?' could not be accepted"),
            (r#"{"compositeIndexes": [[{"path": "/a"}, {"path": "/b/*"}]]}"#, "could not be accepted"),
            (r#"{"compositeIndexes": [[{"path": "/a"}, {"path": "/a"}]]}"#, "was specified more than once"),
            (r#"{"compositeIndexes": [[{"path": "/a", "order": "up"}, {"path": "/b"}]]}"#, "The composite order 'up' is invalid"),
            (r#"{"spatialIndexes": [{"path": "/loc/*", "types": []}]}"#, "The spatial data types array cannot be empty"),
            (r#"{"includedPaths": [{"path": "/events/[]/{name, category}/?"}, {"path": "/*"}]}"#, "tuple paths"),
            (r#"{"indexingMode": "lazy"}"#, "Lazy indexing"),
            (r#"{"indexingMode": "eager"}"#, "The indexing mode \"eager\" is invalid"),
            ("[]", "must be a JSON object"),
        ] {
            let err = policy(json).unwrap_err();
            assert_eq!(err.status_code(), 400, "{json}");
            assert!(err.message.contains(message), "{json}: {}", err.message);
        }
    }

    #[test]
    fn composite_indexes_serve_order_by_as_documented() {
        let p = policy(
            r#"{"compositeIndexes": [
                [{"path": "/name"}, {"path": "/age"}],
                [{"path": "/name"}, {"path": "/age"}, {"path": "/timestamp"}],
                [{"path": "/children/[]/age", "order": "descending"}, {"path": "/n"}]]}"#,
        )
        .unwrap();
        let q = |items: &[(&str, bool)]| items.iter().map(|(p, d)| (key(p), *d)).collect::<Vec<_>>();
        // The documentation's table.
        assert!(p.has_composite(&q(&[("/name", false), ("/age", false)])));
        assert!(!p.has_composite(&q(&[("/age", false), ("/name", false)])));
        assert!(p.has_composite(&q(&[("/name", true), ("/age", true)])));
        assert!(!p.has_composite(&q(&[("/name", false), ("/age", true)])));
        assert!(p.has_composite(&q(&[("/name", false), ("/age", false), ("/timestamp", false)])));
        assert!(!p.has_composite(&q(&[("/name", false)])));
        assert!(p.has_composite(&q(&[("/children/[]/age", false), ("/n", true)])));
    }
}
