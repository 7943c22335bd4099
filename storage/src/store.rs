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
        let db =
            Arc::new(Database { id: id.to_string(), rid, containers: RwLock::default(), next_rid: AtomicU32::new(0) });
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

    /// Deletes a database and its containers; 404 if there is none.
    pub fn delete_database(&self, id: &str) -> Result<()> {
        self.databases
            .write()
            .remove(id)
            .map(|_| ())
            .ok_or_else(|| StorageError::not_found(format!("no database `{id}`")))
    }
}

/// A database: containers by id.
#[derive(Debug)]
pub struct Database {
    id: String,
    rid: u32,
    containers: RwLock<BTreeMap<String, Arc<Container>>>,
    next_rid: AtomicU32,
}

impl Database {
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Creates a container; 409 if it exists.
    pub fn create_container(
        &self,
        id: &str,
        partition_key: PartitionKeyDefinition,
        settings: ContainerSettings,
    ) -> Result<Arc<Container>> {
        validate_resource_id(id, "container")?;
        settings.validate()?;
        let mut containers = self.containers.write();
        if containers.contains_key(id) {
            return Err(StorageError::conflict(format!("container `{id}` exists in database `{}`", self.id)));
        }
        let rid = self.next_rid.fetch_add(1, Ordering::Relaxed) + 1;
        let container = Arc::new(Container::with_rids(id, partition_key, settings, self.rid, rid));
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
