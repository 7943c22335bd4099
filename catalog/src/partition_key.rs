//! Partition key definitions: paths, kinds (Hash / MultiHash), hash versions, synthetic keys, and
//! reading an item's key value.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use cosmoql_value::{format_number, Map, Value};

use crate::epk::{effective_partition_key, prefix_range, Epk, HashVersion, PartitionKeyComponent, PartitionKeyKind};
use crate::error::{CatalogError, Result};

/// A read-only view of a stored document, enough to read its partition key: the storage engine's
/// encoded documents implement it, so key values are read without decoding the item.
pub trait DocView<'a>: Copy {
    /// The property `key` of an object (`None` for a missing property or a non-object).
    fn get(&self, key: &str) -> Option<Self>;
    /// The string, if this is one.
    fn as_str(&self) -> Option<&'a str>;
    /// The number, if this is one.
    fn as_f64(&self) -> Option<f64>;
    /// The boolean, if this is one.
    fn as_bool(&self) -> Option<bool>;
    /// Whether this is `null`.
    fn is_null(&self) -> bool;
    /// The name of this value's type, for messages (`object`, `array`, ...).
    fn kind_name(&self) -> &'static str;
}

/// The largest partition key value Cosmos DB accepts, in UTF-8 bytes of its strings.
pub const MAX_PARTITION_KEY_BYTES: usize = 2048;

/// A partition key path such as `/deviceId`, `/properties/name` or `/"department name"`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PartitionKeyPath {
    segments: Vec<String>,
}

impl PartitionKeyPath {
    /// Parses `/a/b`, with `"..."` quoting for segments holding `/` or spaces (`\"` and `\\` escape
    /// inside quotes).
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |why: &str| CatalogError::bad_request(format!("invalid partition key path `{text}`: {why}"));
        let Some(mut rest) = text.strip_prefix('/') else { return Err(bad("it must start with `/`")) };
        let mut segments = Vec::new();
        loop {
            if let Some(quoted) = rest.strip_prefix('"') {
                let mut seg = String::new();
                let mut chars = quoted.char_indices();
                let end = loop {
                    match chars.next() {
                        None => return Err(bad("a quoted segment is not closed")),
                        Some((i, '"')) => break i + 1,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, c @ ('"' | '\\'))) => seg.push(c),
                            _ => return Err(bad("only \\\" and \\\\ escapes are allowed in a quoted segment")),
                        },
                        Some((_, c)) => seg.push(c),
                    }
                };
                rest = &quoted[end..];
                if seg.is_empty() {
                    return Err(bad("a segment is empty"));
                }
                segments.push(seg);
            } else {
                let end = rest.find('/').unwrap_or(rest.len());
                let seg = &rest[..end];
                if seg.is_empty() {
                    return Err(bad("a segment is empty"));
                }
                if let Some(c) = seg.chars().find(|c| matches!(c, '"' | '[' | ']' | '*' | '?' | '\\')) {
                    return Err(bad(&format!("`{c}` is not allowed in a path segment (quote the segment)")));
                }
                segments.push(seg.to_string());
                rest = &rest[end..];
            }
            match rest.strip_prefix('/') {
                Some(r) => rest = r,
                None if rest.is_empty() => break,
                None => return Err(bad("expected `/` after a quoted segment")),
            }
        }
        Ok(PartitionKeyPath { segments })
    }

    /// The property names along the path.
    pub fn segments(&self) -> &[String] {
        &self.segments
    }

    /// Reads the key component at this path. A missing property (or a path through a non-object)
    /// is `Undefined`, as in Cosmos DB; an object or array value is a 400.
    pub fn component<'a>(&self, doc: impl DocView<'a>) -> Result<PartitionKeyComponent> {
        let mut cur = doc;
        for seg in &self.segments {
            match cur.get(seg) {
                Some(next) => cur = next,
                None => return Ok(PartitionKeyComponent::Undefined),
            }
        }
        if let Some(s) = cur.as_str() {
            return Ok(PartitionKeyComponent::String(s.to_string()));
        }
        if let Some(n) = cur.as_f64() {
            return Ok(PartitionKeyComponent::Number(n));
        }
        if let Some(b) = cur.as_bool() {
            return Ok(PartitionKeyComponent::Bool(b));
        }
        if cur.is_null() {
            return Ok(PartitionKeyComponent::Null);
        }
        Err(CatalogError::bad_request(format!(
            "the partition key value at {self} must be a string, number, boolean or null, not an {}",
            cur.kind_name()
        )))
    }

    /// The value at this path in a decoded item.
    pub fn value_in<'a>(&self, item: &'a Value) -> &'a Value {
        self.segments.iter().fold(item, |v, seg| v.get(seg))
    }
}

impl fmt::Display for PartitionKeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for seg in &self.segments {
            if seg.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '$' | '.')) {
                write!(f, "/{seg}")?;
            } else {
                write!(f, "/\"{}\"", seg.replace('\\', "\\\\").replace('"', "\\\""))?;
            }
        }
        Ok(())
    }
}

/// How a synthetic partition key is built from other properties of the item.
#[derive(Debug, Clone, PartialEq)]
pub enum SyntheticKind {
    /// The values of `paths` joined with `separator`: `abc-123-2018`.
    Concat { paths: Vec<PartitionKeyPath>, separator: String },
    /// The value of `base`, a dot and a pseudo-random bucket 1..=`buckets` (`2018-08-09.17`). The
    /// sequence of buckets is reproducible from `seed` and the order of writes.
    RandomSuffix { base: PartitionKeyPath, buckets: u32, seed: u64 },
    /// The value of `base`, a dot and `hash(source) % buckets + 1`, stable across runs and
    /// machines (MurmurHash3 x86-32 of the source's text, seed 0).
    HashSuffix { base: PartitionKeyPath, source: PartitionKeyPath, buckets: u32 },
}

/// A synthetic partition key: the engine computes it on create/upsert and writes it to `property`.
#[derive(Debug)]
pub struct SyntheticKey {
    /// The property that holds the key (default `partitionKey`).
    pub property: String,
    pub kind: SyntheticKind,
    /// How many random suffixes were drawn so far (for `RandomSuffix`).
    draws: AtomicU64,
}

impl Clone for SyntheticKey {
    fn clone(&self) -> Self {
        SyntheticKey {
            property: self.property.clone(),
            kind: self.kind.clone(),
            draws: AtomicU64::new(self.draws.load(Ordering::Relaxed)),
        }
    }
}

impl PartialEq for SyntheticKey {
    fn eq(&self, other: &Self) -> bool {
        self.property == other.property && self.kind == other.kind
    }
}

/// The default property name of a synthetic key.
pub const DEFAULT_SYNTHETIC_PROPERTY: &str = "partitionKey";

impl SyntheticKey {
    pub fn new(kind: SyntheticKind) -> Self {
        SyntheticKey { property: DEFAULT_SYNTHETIC_PROPERTY.to_string(), kind, draws: AtomicU64::new(0) }
    }

    /// Stores the key in another property than `partitionKey`.
    pub fn with_property(mut self, property: impl Into<String>) -> Self {
        self.property = property.into();
        self
    }

    /// The key for an item being written, or `None` to keep the value it already carries (a
    /// random-suffix key is drawn only when the item has none yet, so a replace of a read item
    /// stays in its logical partition).
    pub fn key_for<'a>(&self, doc: impl DocView<'a>) -> Result<Option<String>> {
        let part = |path: &PartitionKeyPath| -> Result<String> {
            key_text(&path.component(doc)?).ok_or_else(|| {
                CatalogError::bad_request(format!(
                    "the synthetic partition key needs {path}, which the item does not have (or is null)"
                ))
            })
        };
        Ok(Some(match &self.kind {
            SyntheticKind::Concat { paths, separator } => {
                paths.iter().map(part).collect::<Result<Vec<_>>>()?.join(separator)
            }
            SyntheticKind::RandomSuffix { base, buckets, seed } => {
                // An item that already carries a key of this base (a read item being replaced)
                // keeps it; any other value is replaced, so every stored key is `base.1..=N` and a
                // filter on the base alone can be pruned to those N keys.
                let base_text = part(base)?;
                if let Some(existing) = doc.get(&self.property).and_then(|v| v.as_str()) {
                    let bucket = existing.strip_prefix(base_text.as_str()).and_then(|r| r.strip_prefix('.'));
                    if bucket.and_then(|b| b.parse::<u32>().ok()).is_some_and(|b| (1..=*buckets).contains(&b))
                        && bucket.is_some_and(|b| !b.starts_with('0'))
                    {
                        return Ok(None);
                    }
                }
                let draw = self.draws.fetch_add(1, Ordering::Relaxed);
                let bucket =
                    splitmix64(seed.wrapping_add(draw.wrapping_mul(0x9E37_79B9_7F4A_7C15))) % u64::from(*buckets);
                format!("{base_text}.{}", bucket + 1)
            }
            SyntheticKind::HashSuffix { base, source, buckets } => {
                format!("{}.{}", part(base)?, hash_bucket(&part(source)?, *buckets))
            }
        }))
    }

    /// The full keys an item with these property values can have: one for `Concat` (`values` are
    /// the values of its paths, in order) and `HashSuffix` (`values` = [base, source]); all
    /// `buckets` candidates for `RandomSuffix` (`values` = `[base]`).
    pub fn keys_from_parts(&self, values: &[Value]) -> Result<Vec<String>> {
        let text = |v: &Value| {
            value_key_text(v).ok_or_else(|| {
                CatalogError::bad_request("synthetic key parts must be strings, numbers or booleans".to_string())
            })
        };
        let expect = |n: usize| {
            if values.len() == n {
                Ok(())
            } else {
                Err(CatalogError::bad_request(format!(
                    "this synthetic key is built from {n} values, {} were given",
                    values.len()
                )))
            }
        };
        match &self.kind {
            SyntheticKind::Concat { paths, separator } => {
                expect(paths.len())?;
                Ok(vec![values.iter().map(text).collect::<Result<Vec<_>>>()?.join(separator)])
            }
            SyntheticKind::RandomSuffix { buckets, .. } => {
                expect(1)?;
                let base = text(&values[0])?;
                Ok((1..=*buckets).map(|b| format!("{base}.{b}")).collect())
            }
            SyntheticKind::HashSuffix { buckets, .. } => {
                expect(2)?;
                Ok(vec![format!("{}.{}", text(&values[0])?, hash_bucket(&text(&values[1])?, *buckets))])
            }
        }
    }
}

/// `hash(text) % buckets + 1`, stable everywhere.
pub fn hash_bucket(text: &str, buckets: u32) -> u32 {
    crate::murmur3::murmur3_x86_32(text.as_bytes(), 0) % buckets.max(1) + 1
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// How a key part reads as text: strings as they are, numbers as Cosmos prints them.
fn key_text(c: &PartitionKeyComponent) -> Option<String> {
    match c {
        PartitionKeyComponent::String(s) => Some(s.clone()),
        PartitionKeyComponent::Number(n) => Some(format_number(*n)),
        PartitionKeyComponent::Bool(b) => Some(b.to_string()),
        PartitionKeyComponent::Null | PartitionKeyComponent::Undefined => None,
    }
}

fn value_key_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.to_string()),
        Value::Number(n) => Some(format_number(*n)),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A container's partition key definition.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionKeyDefinition {
    paths: Vec<PartitionKeyPath>,
    kind: PartitionKeyKind,
    version: HashVersion,
    synthetic: Option<SyntheticKey>,
}

impl PartitionKeyDefinition {
    /// No partition key: every item is in one logical partition.
    pub fn none() -> Self {
        PartitionKeyDefinition {
            paths: vec![],
            kind: PartitionKeyKind::Hash,
            version: HashVersion::V2,
            synthetic: None,
        }
    }

    /// A key on one path, e.g. `/deviceId`.
    pub fn hash(path: &str) -> Result<Self> {
        Ok(PartitionKeyDefinition {
            paths: vec![PartitionKeyPath::parse(path)?],
            kind: PartitionKeyKind::Hash,
            version: HashVersion::V2,
            synthetic: None,
        })
    }

    /// A hierarchical key on 2 or 3 paths (MultiHash).
    pub fn hierarchical(paths: &[&str]) -> Result<Self> {
        if !(2..=3).contains(&paths.len()) {
            return Err(CatalogError::bad_request(format!(
                "a hierarchical partition key has 2 or 3 paths, not {}",
                paths.len()
            )));
        }
        Ok(PartitionKeyDefinition {
            paths: paths.iter().map(|p| PartitionKeyPath::parse(p)).collect::<Result<_>>()?,
            kind: PartitionKeyKind::MultiHash,
            version: HashVersion::V2,
            synthetic: None,
        })
    }

    /// A key on one path given by its text: one path is Hash, several are MultiHash, none is
    /// [`PartitionKeyDefinition::none`].
    pub fn from_paths(paths: &[&str]) -> Result<Self> {
        match paths {
            [] => Ok(Self::none()),
            [one] => Self::hash(one),
            many => Self::hierarchical(many),
        }
    }

    /// A synthetic key, stored in `key.property` (which becomes the key's path).
    pub fn synthetic(key: SyntheticKey) -> Result<Self> {
        let path = PartitionKeyPath { segments: vec![key.property.clone()] };
        let check = |p: &PartitionKeyPath| {
            if p == &path {
                Err(CatalogError::bad_request(format!("the synthetic key cannot be built from its own property {p}")))
            } else {
                Ok(())
            }
        };
        match &key.kind {
            SyntheticKind::Concat { paths, .. } => {
                if paths.is_empty() {
                    return Err(CatalogError::bad_request("a concatenated key needs at least one path"));
                }
                paths.iter().try_for_each(check)?;
            }
            SyntheticKind::RandomSuffix { base, buckets, .. } => {
                check(base)?;
                if *buckets == 0 {
                    return Err(CatalogError::bad_request("a random-suffix key needs at least 1 bucket"));
                }
            }
            SyntheticKind::HashSuffix { base, source, buckets } => {
                check(base)?;
                check(source)?;
                if *buckets == 0 {
                    return Err(CatalogError::bad_request("a hash-suffix key needs at least 1 bucket"));
                }
            }
        }
        Ok(PartitionKeyDefinition {
            paths: vec![path],
            kind: PartitionKeyKind::Hash,
            version: HashVersion::V2,
            synthetic: Some(key),
        })
    }

    /// Selects the hash version (2 is the default; 1 is the legacy hash).
    pub fn with_version(mut self, version: HashVersion) -> Result<Self> {
        if version == HashVersion::V1 && self.kind == PartitionKeyKind::MultiHash {
            return Err(CatalogError::bad_request("hierarchical partition keys need hash version 2"));
        }
        self.version = version;
        Ok(self)
    }

    pub fn paths(&self) -> &[PartitionKeyPath] {
        &self.paths
    }

    pub fn kind(&self) -> PartitionKeyKind {
        self.kind
    }

    pub fn version(&self) -> HashVersion {
        self.version
    }

    pub fn synthetic_key(&self) -> Option<&SyntheticKey> {
        self.synthetic.as_ref()
    }

    /// Whether the container has no partition key (one logical partition).
    pub fn is_none(&self) -> bool {
        self.paths.is_empty()
    }

    /// The key of a stored item (its properties already include any synthetic key).
    pub fn key_of<'a>(&self, doc: impl DocView<'a>) -> Result<PartitionKey> {
        let key = PartitionKey(self.paths.iter().map(|p| p.component(doc)).collect::<Result<_>>()?);
        self.check_size(&key)?;
        Ok(key)
    }

    /// Checks that `key` is a full key of this definition (one component per path).
    pub fn check_key(&self, key: &PartitionKey) -> Result<()> {
        if key.0.len() != self.paths.len() {
            return Err(CatalogError::bad_request(format!(
                "the partition key {key} has {} component(s); this container's key {} has {}",
                key.0.len(),
                self.describe_paths(),
                self.paths.len()
            )));
        }
        if let Some(c) = key.0.iter().find(|c| matches!(c, PartitionKeyComponent::Number(n) if !n.is_finite())) {
            return Err(CatalogError::bad_request(format!("{c:?} is not a valid partition key value")));
        }
        self.check_size(key)
    }

    fn check_size(&self, key: &PartitionKey) -> Result<()> {
        let bytes: usize =
            key.0.iter().map(|c| if let PartitionKeyComponent::String(s) = c { s.len() } else { 8 }).sum();
        if bytes > MAX_PARTITION_KEY_BYTES {
            return Err(CatalogError::bad_request(format!(
                "the partition key value is {bytes} bytes; the limit is {MAX_PARTITION_KEY_BYTES}"
            )));
        }
        Ok(())
    }

    /// The effective partition key of a full key.
    pub fn epk(&self, key: &PartitionKey) -> Result<Epk> {
        if self.paths.is_empty() {
            return Ok(Epk::min());
        }
        effective_partition_key(&key.0, self.kind, self.version).map_err(|e| CatalogError::bad_request(e.to_string()))
    }

    /// The EPK range `[min, max)` a key prefix covers (a hierarchical key with fewer components than
    /// paths); a full key covers just its own EPK.
    pub fn epk_range(&self, prefix: &PartitionKey) -> Result<(Epk, Epk)> {
        if prefix.0.is_empty() || self.paths.is_empty() {
            return Ok((Epk::min(), Epk::max()));
        }
        if prefix.0.len() > self.paths.len() {
            return Err(CatalogError::bad_request(format!(
                "the key prefix {prefix} is longer than the container's key {}",
                self.describe_paths()
            )));
        }
        if prefix.0.len() < self.paths.len() && self.kind != PartitionKeyKind::MultiHash {
            return Err(CatalogError::bad_request("only hierarchical keys accept a key prefix"));
        }
        prefix_range(&prefix.0, self.paths.len(), self.version).map_err(|e| CatalogError::bad_request(e.to_string()))
    }

    fn describe_paths(&self) -> String {
        if self.paths.is_empty() {
            return "(none)".to_string();
        }
        self.paths.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", ")
    }

    /// The definition in Cosmos DB's container-properties form
    /// (`{"paths": [...], "kind": "Hash", "version": 2}`, plus `syntheticKey` for synthetic keys).
    pub fn to_json(&self) -> Value {
        let mut m = Map::default();
        m.insert("paths".into(), Value::array(self.paths.iter().map(|p| Value::from(p.to_string()))));
        m.insert(
            "kind".into(),
            Value::from(if self.kind == PartitionKeyKind::MultiHash { "MultiHash" } else { "Hash" }),
        );
        m.insert("version".into(), Value::from(if self.version == HashVersion::V1 { 1 } else { 2 }));
        if let Some(s) = &self.synthetic {
            let mut k = Map::default();
            k.insert("property".into(), Value::from(s.property.as_str()));
            let path = |p: &PartitionKeyPath| Value::from(p.to_string());
            match &s.kind {
                SyntheticKind::Concat { paths, separator } => {
                    k.insert("kind".into(), Value::from("concat"));
                    k.insert("paths".into(), Value::array(paths.iter().map(path)));
                    k.insert("separator".into(), Value::from(separator.as_str()));
                }
                SyntheticKind::RandomSuffix { base, buckets, seed } => {
                    k.insert("kind".into(), Value::from("randomSuffix"));
                    k.insert("base".into(), path(base));
                    k.insert("buckets".into(), Value::from(*buckets));
                    k.insert("seed".into(), Value::from(*seed));
                }
                SyntheticKind::HashSuffix { base, source, buckets } => {
                    k.insert("kind".into(), Value::from("hashSuffix"));
                    k.insert("base".into(), path(base));
                    k.insert("source".into(), path(source));
                    k.insert("buckets".into(), Value::from(*buckets));
                }
            }
            m.insert("syntheticKey".into(), Value::from(k));
        }
        Value::from(m)
    }

    /// Reads the Cosmos DB form (see [`PartitionKeyDefinition::to_json`]); `null` or a missing
    /// `paths` means no key.
    pub fn from_json(v: &Value) -> Result<Self> {
        if v.is_null() || v.is_undefined() {
            return Ok(Self::none());
        }
        let bad = |why: &str| CatalogError::bad_request(format!("invalid partitionKey definition: {why}"));
        let strings = |v: &Value, what: &str| -> Result<Vec<String>> {
            match v {
                Value::Undefined => Ok(vec![]),
                Value::Array(items) => items
                    .iter()
                    .map(|p| p.as_str().map(str::to_string).ok_or_else(|| bad(&format!("{what} must be strings"))))
                    .collect(),
                _ => Err(bad(&format!("{what} must be an array of strings"))),
            }
        };
        let version = match v.get("version") {
            Value::Undefined | Value::Null => HashVersion::V2,
            Value::Number(n) if *n == 2.0 => HashVersion::V2,
            Value::Number(n) if *n == 1.0 => HashVersion::V1,
            _ => return Err(bad("version must be 1 or 2")),
        };
        let synthetic = v.get("syntheticKey");
        let def = if synthetic.is_undefined() || synthetic.is_null() {
            let paths = strings(v.get("paths"), "paths")?;
            let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
            let def = Self::from_paths(&refs)?;
            match v.get("kind").as_str() {
                None | Some("Hash") if def.kind == PartitionKeyKind::Hash => def,
                None | Some("MultiHash") if def.kind == PartitionKeyKind::MultiHash => def,
                // One path declared MultiHash is a hierarchical key of one level.
                Some("MultiHash") if refs.len() == 1 => {
                    PartitionKeyDefinition { kind: PartitionKeyKind::MultiHash, ..def }
                }
                Some(other) => return Err(bad(&format!("kind `{other}` does not fit {} path(s)", refs.len()))),
                None => def,
            }
        } else {
            let path = |name: &str| -> Result<PartitionKeyPath> {
                PartitionKeyPath::parse(
                    synthetic.get(name).as_str().ok_or_else(|| bad(&format!("syntheticKey.{name} must be a path")))?,
                )
            };
            let buckets = || -> Result<u32> {
                match synthetic.get("buckets").as_f64() {
                    Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= f64::from(u32::MAX) => Ok(n as u32),
                    _ => Err(bad("syntheticKey.buckets must be a positive integer")),
                }
            };
            let kind = match synthetic.get("kind").as_str() {
                Some("concat") => SyntheticKind::Concat {
                    paths: strings(synthetic.get("paths"), "syntheticKey.paths")?
                        .iter()
                        .map(|p| PartitionKeyPath::parse(p))
                        .collect::<Result<_>>()?,
                    separator: synthetic.get("separator").as_str().unwrap_or("-").to_string(),
                },
                Some("randomSuffix") => SyntheticKind::RandomSuffix {
                    base: path("base")?,
                    buckets: buckets()?,
                    seed: synthetic.get("seed").as_f64().unwrap_or(0.0) as u64,
                },
                Some("hashSuffix") => {
                    SyntheticKind::HashSuffix { base: path("base")?, source: path("source")?, buckets: buckets()? }
                }
                _ => return Err(bad("syntheticKey.kind must be concat, randomSuffix or hashSuffix")),
            };
            let mut key = SyntheticKey::new(kind);
            if let Some(p) = synthetic.get("property").as_str() {
                key.property = p.to_string();
            }
            Self::synthetic(key)?
        };
        def.with_version(version)
    }
}

/// A partition key value: one component per path of the definition (none for a container
/// without a key).
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionKey(pub Vec<PartitionKeyComponent>);

impl PartitionKey {
    /// The key of a container without a partition key.
    pub fn none() -> Self {
        PartitionKey(vec![])
    }

    /// The key of items that lack the key property (Cosmos's `PartitionKey.None` for a keyed
    /// container).
    pub fn undefined() -> Self {
        PartitionKey(vec![PartitionKeyComponent::Undefined])
    }

    /// A key from JSON values: strings, numbers, booleans, null; `Undefined` for a missing property.
    pub fn from_values(values: &[Value]) -> Result<Self> {
        values.iter().map(component_of).collect::<Result<_>>().map(PartitionKey)
    }

    /// A key from JSON text: a single value (`"dev-1"`, `5`) or an array of components
    /// (`["acme", 2024]`).
    pub fn parse_json(text: &str) -> Result<Self> {
        let v = cosmoql_value::parse_json(text)
            .map_err(|e| CatalogError::bad_request(format!("invalid partition key JSON: {e}")))?;
        match &v {
            Value::Array(items) => Self::from_values(items),
            other => Self::from_values(std::slice::from_ref(other)),
        }
    }

    /// The components as JSON values (undefined ones as `Undefined`).
    pub fn to_values(&self) -> Vec<Value> {
        self.0
            .iter()
            .map(|c| match c {
                PartitionKeyComponent::Undefined => Value::Undefined,
                PartitionKeyComponent::Null => Value::Null,
                PartitionKeyComponent::Bool(b) => Value::Bool(*b),
                PartitionKeyComponent::Number(n) => Value::Number(*n),
                PartitionKeyComponent::String(s) => Value::from(s.as_str()),
            })
            .collect()
    }
}

fn component_of(v: &Value) -> Result<PartitionKeyComponent> {
    Ok(match v {
        Value::Undefined => PartitionKeyComponent::Undefined,
        Value::Null => PartitionKeyComponent::Null,
        Value::Bool(b) => PartitionKeyComponent::Bool(*b),
        Value::Number(n) if n.is_finite() => PartitionKeyComponent::Number(*n),
        Value::String(s) => PartitionKeyComponent::String(s.to_string()),
        other => {
            return Err(CatalogError::bad_request(format!(
                "a partition key component must be a string, finite number, boolean or null, not {other}"
            )))
        }
    })
}

impl From<&str> for PartitionKey {
    fn from(s: &str) -> Self {
        PartitionKey(vec![PartitionKeyComponent::String(s.to_string())])
    }
}

impl From<String> for PartitionKey {
    fn from(s: String) -> Self {
        PartitionKey(vec![PartitionKeyComponent::String(s)])
    }
}

impl From<f64> for PartitionKey {
    fn from(n: f64) -> Self {
        PartitionKey(vec![PartitionKeyComponent::Number(n)])
    }
}

impl From<bool> for PartitionKey {
    fn from(b: bool) -> Self {
        PartitionKey(vec![PartitionKeyComponent::Bool(b)])
    }
}

impl fmt::Display for PartitionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, v) in self.to_values().iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match v {
                Value::Undefined => f.write_str("undefined")?,
                v => write!(f, "{v}")?,
            }
        }
        f.write_str("]")
    }
}
