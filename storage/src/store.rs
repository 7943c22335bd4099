//! Databases and the containers they hold.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use cosmoql_value::Value;
use parking_lot::RwLock;

use crate::container::{Container, ContainerSettings};
use crate::error::{Result, StorageError};
use crate::indexing::IndexingPolicy;
use crate::partition_key::PartitionKeyDefinition;
use crate::throughput::Throttle;

/// The whole store: databases by id. `Send + Sync`; share it with an `Arc`.
#[derive(Debug, Default)]
pub struct Store {
    databases: RwLock<BTreeMap<String, Arc<Database>>>,
    next_rid: AtomicU32,
}

impl Store {
    pub fn new() -> Self {
        Store::default()
    }

    /// Creates a database; 409 if it exists.
    pub fn create_database(&self, id: &str) -> Result<Arc<Database>> {
        validate_resource_id(id, "database")?;
        let mut dbs = self.databases.write();
        if dbs.contains_key(id) {
            return Err(StorageError::conflict(format!("database `{id}` exists")));
        }
        let rid = self.next_rid.fetch_add(1, Ordering::Relaxed) + 1;
        let db = Arc::new(Database {
            id: id.to_string(),
            rid,
            containers: RwLock::default(),
            next_rid: AtomicU32::new(0),
            throughput: RwLock::default(),
        });
        dbs.insert(id.to_string(), Arc::clone(&db));
        Ok(db)
    }

    /// The database, creating it if needed.
    pub fn database_or_create(&self, id: &str) -> Result<Arc<Database>> {
        match self.database(id) {
            Ok(db) => Ok(db),
            Err(_) => self.create_database(id).or_else(|_| self.database(id)),
        }
    }

    /// The database; 404 if there is none.
    pub fn database(&self, id: &str) -> Result<Arc<Database>> {
        self.databases.read().get(id).cloned().ok_or_else(|| StorageError::not_found(format!("no database `{id}`")))
    }

    /// Database ids, sorted.
    pub fn database_ids(&self) -> Vec<String> {
        self.databases.read().keys().cloned().collect()
    }

    /// Removes every expired item of every container now (reads, writes and queries also remove
    /// what has expired before they run); returns how many.
    pub fn purge_expired(&self) -> usize {
        let dbs: Vec<Arc<Database>> = self.databases.read().values().cloned().collect();
        dbs.iter()
            .flat_map(|db| db.containers.read().values().cloned().collect::<Vec<_>>())
            .map(|c| c.purge_expired())
            .sum()
    }

    /// Deletes a database and its containers; 404 if there is none.
    pub fn delete_database(&self, id: &str) -> Result<()> {
        self.databases
            .write()
            .remove(id)
            .map(|_| ())
            .ok_or_else(|| StorageError::not_found(format!("no database `{id}`")))
    }
}

/// The most containers that may share a database's throughput.
pub const MAX_SHARED_CONTAINERS: usize = 25;

/// A database: containers by id.
#[derive(Debug)]
pub struct Database {
    id: String,
    rid: u32,
    containers: RwLock<BTreeMap<String, Arc<Container>>>,
    next_rid: AtomicU32,
    /// Throughput shared by the containers without their own.
    throughput: RwLock<Option<Arc<Throttle>>>,
}

impl Database {
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Provisions throughput shared by the database's containers (those without their own), or
    /// removes it (`None`).
    pub fn set_throughput(&self, throttle: Option<Arc<Throttle>>) {
        *self.throughput.write() = throttle.clone();
        for c in self.containers.read().values() {
            c.set_shared_throughput(throttle.clone());
        }
    }

    /// The containers sharing the database's throughput (those without their own), and the bytes
    /// they hold.
    pub fn shared_usage(&self) -> (usize, u64) {
        let containers = self.containers.read();
        let sharing: Vec<&Arc<Container>> = containers.values().filter(|c| !c.has_own_throughput()).collect();
        let bytes = sharing.iter().flat_map(|c| c.partitions()).map(|p| p.bytes).sum();
        (sharing.len(), bytes)
    }

    /// The database's shared throughput, if any.
    pub fn throughput(&self) -> Option<Arc<Throttle>> {
        self.throughput.read().clone()
    }

    /// Creates a container; 409 if it exists.
    pub fn create_container(
        &self,
        id: &str,
        partition_key: PartitionKeyDefinition,
        settings: ContainerSettings,
    ) -> Result<Arc<Container>> {
        self.create_container_with(id, partition_key, settings, None)
    }

    /// Creates a container with its own throughput (`dedicated`), or sharing the database's; 409
    /// if it exists, 400 if it would be the 26th to share the database's throughput.
    pub fn create_container_with(
        &self,
        id: &str,
        partition_key: PartitionKeyDefinition,
        settings: ContainerSettings,
        dedicated: Option<Arc<Throttle>>,
    ) -> Result<Arc<Container>> {
        validate_resource_id(id, "container")?;
        settings.validate()?;
        let mut containers = self.containers.write();
        if containers.contains_key(id) {
            return Err(StorageError::conflict(format!("container `{id}` exists in database `{}`", self.id)));
        }
        let shared = self.throughput.read().clone();
        if shared.is_some()
            && dedicated.is_none()
            && containers.values().filter(|c| !c.has_own_throughput()).count() >= MAX_SHARED_CONTAINERS
        {
            return Err(StorageError::bad_request(format!(
                "database `{}` already has {MAX_SHARED_CONTAINERS} containers sharing its throughput: give container \
                 `{id}` throughput of its own",
                self.id
            )));
        }
        let rid = self.next_rid.fetch_add(1, Ordering::Relaxed) + 1;
        let container = Arc::new(Container::with_rids(id, partition_key, settings, self.rid, rid));
        container.set_throughput(dedicated);
        container.set_shared_throughput(shared);
        containers.insert(id.to_string(), Arc::clone(&container));
        Ok(container)
    }

    /// Creates a container from Cosmos DB's container-properties JSON (`id`, `partitionKey`).
    pub fn create_container_from_properties(
        &self,
        properties: &Value,
        settings: ContainerSettings,
    ) -> Result<Arc<Container>> {
        let id = properties
            .get("id")
            .as_str()
            .ok_or_else(|| StorageError::bad_request("container properties need a string `id`"))?;
        let key = PartitionKeyDefinition::from_json(properties.get("partitionKey"))?;
        let policy = match properties.get("indexingPolicy") {
            Value::Undefined | Value::Null => IndexingPolicy::default(),
            p => IndexingPolicy::from_json(p)?,
        };
        let mut settings = settings;
        settings.unique_keys = crate::container::UniqueKey::policy_from_json(properties.get("uniqueKeyPolicy"))?;
        settings.default_ttl = match properties.get("defaultTtl") {
            Value::Undefined | Value::Null => None,
            v => Some(
                v.as_f64()
                    .filter(|n| n.fract() == 0.0 && n.abs() < 1e15)
                    .map(|n| n as i64)
                    .ok_or_else(|| StorageError::bad_request("defaultTtl is an integer: -1 or 1 to 2147483647"))?,
            ),
        };
        settings.change_feed_retention = match properties.get("changeFeedPolicy").get("retentionDuration") {
            Value::Undefined | Value::Null => None,
            v => Some(
                v.as_f64()
                    .filter(|n| n.fract() == 0.0 && *n >= 0.0 && *n < 1e9)
                    .map(|minutes| minutes as u64 * 60)
                    .ok_or_else(|| {
                        StorageError::bad_request("changeFeedPolicy.retentionDuration is a number of minutes")
                    })?,
            )
            .filter(|s| *s > 0),
        };
        let container = self.create_container(id, key, settings)?;
        container.replace_indexing_policy(policy);
        Ok(container)
    }

    /// The container; 404 if there is none.
    pub fn container(&self, id: &str) -> Result<Arc<Container>> {
        self.containers
            .read()
            .get(id)
            .cloned()
            .ok_or_else(|| StorageError::not_found(format!("no container `{id}` in database `{}`", self.id)))
    }

    /// Container ids, sorted.
    pub fn container_ids(&self) -> Vec<String> {
        self.containers.read().keys().cloned().collect()
    }

    /// Deletes a container; 404 if there is none.
    pub fn delete_container(&self, id: &str) -> Result<()> {
        self.containers
            .write()
            .remove(id)
            .map(|_| ())
            .ok_or_else(|| StorageError::not_found(format!("no container `{id}` in database `{}`", self.id)))
    }
}

fn validate_resource_id(id: &str, what: &str) -> Result<()> {
    if id.is_empty() || id.len() > 255 || id.chars().any(|c| matches!(c, '/' | '\\' | '?' | '#')) || id.ends_with(' ') {
        return Err(StorageError::bad_request(format!(
            "invalid {what} id `{id}`: 1 to 255 characters, none of / \\ ? #, no trailing space"
        )));
    }
    Ok(())
}
