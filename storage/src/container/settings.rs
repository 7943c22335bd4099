//! A container's settings and the service's limits: sizes of items, ids and logical partitions,
//! batches, initial partitions and split thresholds, unique keys, time to live; the container's
//! properties in the service's JSON form.

use super::*;

pub use cosmoql_catalog::MAX_ITEM_BYTES;

/// Cosmos DB's id length limit, in UTF-8 bytes.
pub const MAX_ID_BYTES: usize = 1023;

/// Cosmos DB's logical partition size cap (20 GB).
pub const DEFAULT_LOGICAL_PARTITION_MAX_BYTES: u64 = 20 * 1024 * 1024 * 1024;

/// Operations per transactional batch.
pub const MAX_BATCH_OPERATIONS: usize = 100;

/// Items per physical partition at creation, for the default initial partition count.
pub const ITEMS_PER_INITIAL_PARTITION: usize = 10_000;

/// Sizing and splitting knobs of a container.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerSettings {
    /// Physical partitions at creation (default: 1 per 10,000 expected items, at least 1).
    pub initial_partitions: usize,
    /// A physical partition splits when it holds more items than this...
    pub split_max_items: usize,
    /// ...or more bytes (encoded item size) than this.
    pub split_max_bytes: u64,
    /// A write that would grow a logical partition past this many bytes fails with 403.
    pub logical_partition_max_bytes: u64,
    /// The unique key policy (set at creation only): each key's paths take a combination of
    /// values at most one item per logical partition may have.
    pub unique_keys: Vec<UniqueKey>,
    /// The default time to live (`defaultTtl`): `None` off, `-1` on without a default, `n` seconds.
    pub default_ttl: Option<i64>,
    /// The change feed's all-versions-and-deletes retention (`changeFeedPolicy.retentionDuration`,
    /// here in seconds): every create, replace and delete is kept this long. `None`: off (only
    /// latest versions).
    pub change_feed_retention: Option<u64>,
    /// Container properties the store keeps as given, for the layers that read them: the
    /// service's `vectorEmbeddingPolicy` (what `VectorDistance` defaults to) and
    /// `fullTextPolicy`, as a JSON object with those members (set at creation only).
    pub kept_properties: Option<Value>,
}

/// The container properties [`ContainerSettings::kept_properties`] keeps.
pub const KEPT_PROPERTIES: [&str; 2] = ["vectorEmbeddingPolicy", "fullTextPolicy"];

/// One unique key of a container's unique key policy: the paths whose values together must be
/// unique within each logical partition (a missing value counts as null).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniqueKey {
    /// The paths as written (`/address/zipCode`).
    pub paths: Vec<String>,
    /// Each path's property names.
    pub(super) segments: Vec<Vec<String>>,
}

impl UniqueKey {
    /// The keys of a `uniqueKeyPolicy` (`{"uniqueKeys": [{"paths": ["/a", "/b"]}]}`); 400 when it
    /// is malformed.
    pub fn policy_from_json(policy: &Value) -> Result<Vec<UniqueKey>> {
        let bad =
            || StorageError::bad_request("a uniqueKeyPolicy is {\"uniqueKeys\": [{\"paths\": [\"/path\", ...]}, ...]}");
        let keys = match policy.get("uniqueKeys") {
            Value::Undefined | Value::Null => return Ok(Vec::new()),
            Value::Array(keys) => keys,
            _ => return Err(bad()),
        };
        keys.iter()
            .map(|k| {
                let paths = k.get("paths");
                let paths = paths.as_array().ok_or_else(bad)?;
                let paths: Vec<&str> = paths.iter().map(|p| p.as_str().ok_or_else(bad)).collect::<Result<_>>()?;
                UniqueKey::new(&paths)
            })
            .collect()
    }

    /// A unique key of `paths` (each `/a/b`); 400 for a path that is not a plain property path.
    pub fn new(paths: &[&str]) -> Result<UniqueKey> {
        if paths.is_empty() {
            return Err(StorageError::bad_request("a unique key needs at least one path"));
        }
        let mut segments = Vec::with_capacity(paths.len());
        for path in paths {
            let parsed = cosmoql_catalog::partition_key::PartitionKeyPath::parse(path)
                .map_err(|e| StorageError::bad_request(format!("unique key path `{path}`: {e}")))?;
            segments.push(parsed.segments().to_vec());
        }
        Ok(UniqueKey { paths: paths.iter().map(|p| p.to_string()).collect(), segments })
    }
}

/// The most unique keys a policy may have, and the most paths they may name together.
pub const MAX_UNIQUE_KEYS: usize = 10;

pub const MAX_UNIQUE_KEY_PATHS: usize = 16;

/// The longest time to live, in seconds.
pub const MAX_TTL: i64 = 2_147_483_647;

/// A 400 unless `ttl` is a valid time to live (`-1`, or 1 to 2,147,483,647 seconds); `what`
/// names it (`defaultTtl`, `ttl`).
pub fn validate_ttl(ttl: i64, what: &str) -> Result<()> {
    if ttl == -1 || (1..=MAX_TTL).contains(&ttl) {
        return Ok(());
    }
    Err(StorageError::bad_request(format!(
        "The input {what} '{ttl}' is invalid. Ensure to provide a nonzero positive integer less than or equal to \
         '{MAX_TTL}', or '-1' which means never expire."
    )))
}

/// The analytical time to live `ttl` as a container keeps it (`0` turns the analytical store
/// off, as `None`); a 400 for a value other than `0`, `-1` or 1 to 2,147,483,647.
pub fn checked_analytical_ttl(ttl: Option<i64>) -> Result<Option<i64>> {
    let ttl = ttl.filter(|t| *t != 0);
    if let Some(ttl) = ttl {
        validate_ttl(ttl, "analyticalStorageTtl")?;
    }
    Ok(ttl)
}

impl Default for ContainerSettings {
    fn default() -> Self {
        ContainerSettings {
            initial_partitions: 1,
            split_max_items: 2 * ITEMS_PER_INITIAL_PARTITION,
            split_max_bytes: 64 * 1024 * 1024,
            logical_partition_max_bytes: DEFAULT_LOGICAL_PARTITION_MAX_BYTES,
            unique_keys: Vec::new(),
            default_ttl: None,
            change_feed_retention: None,
            kept_properties: None,
        }
    }
}

/// The most physical partitions a container starts with (it may split into more as it grows).
pub const MAX_INITIAL_PARTITIONS: usize = 10_000;

impl ContainerSettings {
    /// Settings for a container expected to hold `items` items: 1 physical partition per 10,000
    /// (at most [`MAX_INITIAL_PARTITIONS`]).
    pub fn for_expected_items(items: usize) -> Self {
        let partitions = (items / ITEMS_PER_INITIAL_PARTITION).clamp(1, MAX_INITIAL_PARTITIONS);
        ContainerSettings { initial_partitions: partitions, ..Self::default() }
    }

    /// A 400 unless the settings are usable: 1 to [`MAX_INITIAL_PARTITIONS`] initial partitions,
    /// split thresholds of at least 1.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_INITIAL_PARTITIONS).contains(&self.initial_partitions) {
            return Err(StorageError::bad_request(format!(
                "a container starts with 1 to {MAX_INITIAL_PARTITIONS} physical partitions, not {}",
                self.initial_partitions
            )));
        }
        if self.split_max_items == 0 || self.split_max_bytes == 0 {
            return Err(StorageError::bad_request("split thresholds must be at least 1"));
        }
        if self.unique_keys.len() > MAX_UNIQUE_KEYS
            || self.unique_keys.iter().map(|k| k.paths.len()).sum::<usize>() > MAX_UNIQUE_KEY_PATHS
        {
            return Err(StorageError::bad_request(format!(
                "a unique key policy has at most {MAX_UNIQUE_KEYS} unique keys and {MAX_UNIQUE_KEY_PATHS} paths in all"
            )));
        }
        if let Some(ttl) = self.default_ttl {
            validate_ttl(ttl, "defaultTtl")?;
        }
        Ok(())
    }
}

impl Container {
    /// The container's properties in Cosmos DB's JSON form.
    pub fn properties(&self) -> Value {
        let mut m = Map::default();
        m.insert("id".into(), Value::from(self.id.as_str()));
        m.insert("indexingPolicy".into(), self.indexing_policy().to_json());
        m.insert("partitionKey".into(), self.definition.to_json());
        if let Some(ttl) = self.default_ttl() {
            m.insert("defaultTtl".into(), Value::from(ttl as f64));
        }
        if let Some(ttl) = self.analytical_ttl() {
            m.insert("analyticalStorageTtl".into(), Value::from(ttl as f64));
        }
        if let Some(seconds) = self.settings.change_feed_retention {
            m.insert(
                "changeFeedPolicy".into(),
                Value::object([("retentionDuration", Value::from((seconds / 60) as f64))]),
            );
        }
        if !self.settings.unique_keys.is_empty() {
            let keys: Vec<Value> = self
                .settings
                .unique_keys
                .iter()
                .map(|k| {
                    let paths: Vec<Value> = k.paths.iter().map(|p| Value::from(p.as_str())).collect();
                    Value::object([("paths", Value::from(paths))])
                })
                .collect();
            m.insert("uniqueKeyPolicy".into(), Value::object([("uniqueKeys", Value::from(keys))]));
        }
        if let Some(kept) = &self.settings.kept_properties {
            for name in KEPT_PROPERTIES {
                let v = kept.get(name);
                if !v.is_undefined() {
                    m.insert(name.into(), v.clone());
                }
            }
        }
        m.insert("_rid".into(), Value::from(self.rid_text()));
        m.insert("_ts".into(), Value::from(self.created as f64));
        Value::from(m)
    }
}
