//! Databases and the containers they hold.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Weak};

use cosmoql_value::Value;
use parking_lot::RwLock;

use crate::codec::{DecodeError, Decoded, Reader, Writer};
use crate::container::{Container, ContainerSettings};
use crate::durable::{tag, Checkpoint, Durable, DurableOptions, Recovery};
use crate::error::ErrorKind;
use crate::error::{Result, StorageError};
use crate::throughput::{Clock, Throttle};
use cosmoql_catalog::indexing::IndexingPolicy;
use cosmoql_catalog::partition_key::PartitionKeyDefinition;

/// The whole store: databases by id. `Send + Sync`; share it with an `Arc`.
///
/// In memory ([`Store::new`]) or durable ([`Store::open`]: a database directory, see
/// [`crate::durable`]).
#[derive(Debug, Default)]
pub struct Store {
    databases: RwLock<BTreeMap<String, Arc<Database>>>,
    next_rid: AtomicU32,
    durable: Option<Arc<Durable>>,
}

impl Store {
    /// An empty store in memory.
    pub fn new() -> Self {
        Store::default()
    }

    /// Opens (or creates) the database directory `dir`: replays its log, rebuilds the indexes,
    /// and keeps every change durable from then on. Refused while another process has it open;
    /// a damaged log is refused with the file and offset (see [`DurableOptions::recover`]).
    pub fn open(dir: &Path, options: DurableOptions) -> Result<Arc<Store>> {
        let mut locked = Durable::lock(dir)?;
        let mut store = Store::default();
        let mut recovery = Recovery::default();
        let mut handles: HashMap<u32, Arc<Container>> = HashMap::new();
        let clock: Arc<dyn Clock> = Arc::new(crate::throughput::SystemClock::default());
        let mut end = None;
        if !locked.new {
            // CURRENT's log, then those of checkpoints that had not finished (see
            // `Durable::checkpoint_of`); the last one is live.
            let mut replayed = 0;
            for (i, (_, path)) in locked.chain.iter().enumerate() {
                let path = path.clone();
                let read = crate::wal::read_frames(&path, |offset, payload| {
                    store.replay(payload, &mut handles, &clock).map_err(|e| {
                        StorageError::new(
                            ErrorKind::Unavailable,
                            format!(
                                "{}: the log record at byte offset {offset} does not replay: {}",
                                path.display(),
                                e.0
                            ),
                        )
                    })?;
                    recovery.records += 1;
                    Ok::<(), StorageError>(())
                })?
                .map_err(|e| crate::durable::io_error("reading", &path, &e))?;
                recovery.torn_bytes += read.torn_bytes;
                recovery.logs += 1;
                replayed = i;
                end = Some(read.end);
                if let Some(c) = read.corruption {
                    if !options.recover {
                        return Err(StorageError::new(
                            ErrorKind::Unavailable,
                            format!(
                                "{c}. Nothing was changed. To open the database with those intact records, set the \
                                 rest of the file aside with `cosmoql recover {}` (or DurableOptions::recover)",
                                dir.display()
                            ),
                        ));
                    }
                    let aside = path.with_extension(format!("log.damaged-at-{}", c.offset));
                    let bytes = std::fs::read(&path).map_err(|e| crate::durable::io_error("reading", &path, &e))?;
                    std::fs::write(&aside, &bytes[c.offset as usize..])
                        .map_err(|e| crate::durable::io_error("writing", &aside, &e))?;
                    // Later logs continue from what was lost: they are set aside whole.
                    for (_, later) in &locked.chain[i + 1..] {
                        let to = later.with_extension("log.after-damage");
                        std::fs::rename(later, &to).map_err(|e| crate::durable::io_error("renaming", later, &e))?;
                    }
                    recovery.set_aside = Some(aside);
                    break;
                }
            }
            locked.chain.truncate(replayed + 1);
        }
        for container in handles.values() {
            container.finish_replay().map_err(|e| {
                StorageError::new(
                    ErrorKind::Unavailable,
                    format!("{}: the log does not replay to a sound database: {}", dir.display(), e.0),
                )
            })?;
        }
        let next_handle = handles.keys().max().map_or(Some(1), |h| h.checked_add(1)).ok_or_else(|| {
            StorageError::new(
                ErrorKind::Unavailable,
                format!("{}: a container number in the log is out of range", dir.display()),
            )
        })?;
        let durable = Durable::start(locked, end, options, recovery, next_handle)?;
        for (handle, container) in &handles {
            container.attach_journal(Arc::clone(&durable), *handle);
        }
        for db in store.databases.get_mut().values() {
            let _ = db.durable.set(Arc::clone(&durable));
        }
        store.durable = Some(Arc::clone(&durable));
        let store = Arc::new(store);
        let weak: Weak<dyn Checkpoint> = Arc::downgrade(&store) as Weak<dyn Checkpoint>;
        durable.set_checkpointer(weak);
        if durable.recovery().logs > 1 {
            // A checkpoint was cut short (a crash, or the store let go while it ran): finish one
            // now, so the chain of logs to replay never grows past two. If it fails (a full
            // disk), the chain stays, whole, and the next checkpoint tries again.
            let _ = store.checkpoint();
        }
        Ok(store)
    }

    /// The database directory's log, when the store is durable.
    pub fn durable(&self) -> Option<&Arc<Durable>> {
        self.durable.as_ref()
    }

    /// Writes a checkpoint now (a durable store; nothing otherwise).
    pub fn checkpoint(&self) -> Result<()> {
        match &self.durable {
            Some(d) => d.checkpoint(),
            None => Ok(()),
        }
    }

    /// Replays one log record into the store (opening).
    fn replay(
        &mut self,
        payload: &[u8],
        handles: &mut HashMap<u32, Arc<Container>>,
        clock: &Arc<dyn Clock>,
    ) -> Decoded<()> {
        let mut r = Reader::new(payload);
        match r.u8()? {
            tag::CREATE_DATABASE => {
                let id = r.str()?.to_string();
                let rid = r.u32()?;
                let next_container_rid = r.u32()?;
                self.next_rid.fetch_max(rid, Ordering::Relaxed);
                let throttle = Throttle::decode_optional(&mut r, clock)?;
                // Records written before databases kept their creation time read as created now.
                let created = if r.is_done() { clock.unix_seconds() } else { r.u64()? };
                let dbs = self.databases.get_mut();
                if !dbs.contains_key(&id) {
                    dbs.insert(
                        id.clone(),
                        Arc::new(Database {
                            id,
                            rid,
                            containers: RwLock::default(),
                            next_rid: AtomicU32::new(next_container_rid),
                            throughput: RwLock::new(throttle),
                            created,
                            durable: std::sync::OnceLock::new(),
                            deleted: Default::default(),
                        }),
                    );
                }
            }
            tag::DELETE_DATABASE => {
                let id = r.str()?;
                if let Some(db) = self.databases.get_mut().remove(id) {
                    handles.retain(|_, c| !db.containers.read().values().any(|d| Arc::ptr_eq(c, d)));
                }
            }
            tag::DATABASE_THROUGHPUT => {
                let id = r.str()?;
                let throttle = Throttle::decode_optional(&mut r, clock)?;
                if let Some(db) = self.databases.get_mut().get(id) {
                    db.set_throughput(throttle);
                }
            }
            tag::CREATE_CONTAINER => {
                let db_id = r.str()?.to_string();
                let (container, handle) = Container::decode_state(&mut r, Arc::clone(clock))?;
                // A container created through a handle to a database already deleted (logged by
                // versions before that was refused) is gone with it.
                let Some(db) = self.databases.get_mut().get(&db_id).cloned() else { return Ok(()) };
                let mut containers = db.containers.write();
                if !containers.contains_key(container.id()) {
                    db.next_rid.fetch_max(container.rid(), Ordering::Relaxed);
                    container.set_shared_throughput(db.throughput());
                    let container = Arc::new(container);
                    containers.insert(container.id().to_string(), Arc::clone(&container));
                    handles.insert(handle, container);
                }
            }
            tag::DELETE_CONTAINER => {
                let db_id = r.str()?;
                let id = r.str()?;
                if let Some(db) = self.databases.get_mut().get(db_id) {
                    if let Some(c) = db.containers.write().remove(id) {
                        handles.retain(|_, h| !Arc::ptr_eq(h, &c));
                    }
                }
            }
            tag::CONTAINER_PROPERTIES | tag::WRITES | tag::SPLIT | tag::HISTORY | tag::SCRIPTS => {
                let kind = payload[0];
                let handle = r.u32()?;
                // A container deleted later in the log (or before a checkpoint) is skipped.
                let Some(container) = handles.get(&handle) else { return Ok(()) };
                match kind {
                    tag::CONTAINER_PROPERTIES => container.replay_properties(&mut r)?,
                    tag::WRITES => container.replay_writes(&mut r)?,
                    tag::SPLIT => container.replay_split(&mut r)?,
                    tag::SCRIPTS => container.replay_scripts(&mut r)?,
                    _ => container.replay_history(&mut r)?,
                }
            }
            t => return Err(DecodeError(format!("a record of unknown kind {t}"))),
        }
        Ok(())
    }

    /// Logs a record now and waits until it is durable (nothing in memory).
    fn log(&self, record: &[u8]) -> Result<()> {
        match &self.durable {
            Some(d) => d.append_synced(record),
            None => Ok(()),
        }
    }

    /// Creates a database; 409 if it exists.
    pub fn create_database(&self, id: &str) -> Result<Arc<Database>> {
        validate_resource_id(id, "database")?;
        let _gate = self.durable.as_ref().map(|d| d.gate());
        let mut dbs = self.databases.write();
        if dbs.contains_key(id) {
            return Err(StorageError::conflict(format!("database `{id}` exists")));
        }
        let rid = next_rid(&self.next_rid)?;
        let db = Arc::new(Database {
            id: id.to_string(),
            rid,
            containers: RwLock::default(),
            next_rid: AtomicU32::new(0),
            throughput: RwLock::default(),
            created: crate::throughput::SystemClock::default().unix_seconds(),
            durable: self.durable.clone().map(std::sync::OnceLock::from).unwrap_or_default(),
            deleted: Default::default(),
        });
        self.log(&db.encode())?;
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
        let _gate = self.durable.as_ref().map(|d| d.gate());
        let mut dbs = self.databases.write();
        if !dbs.contains_key(id) {
            return Err(StorageError::not_found(format!("no database `{id}`")));
        }
        let mut w = Writer::new();
        w.u8(tag::DELETE_DATABASE).str(id);
        self.log(&w.buf)?;
        if let Some(db) = dbs.remove(id) {
            // Under the gate: a container created through a handle to it from now on is refused.
            db.deleted.store(true, Ordering::Relaxed);
        }
        Ok(())
    }
}

impl Checkpoint for Store {
    fn durable_log(&self) -> Option<&Arc<Durable>> {
        self.durable.as_ref()
    }

    fn checkpoint_header(&self, out: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        for db in self.databases.read().values() {
            out(&db.encode())?;
            for c in db.containers.read().values() {
                if let Some(handle) = c.journal_handle() {
                    out(&c.encode_state(&db.id, handle))?;
                }
            }
        }
        Ok(())
    }

    fn checkpoint_items(
        &self,
        out: &mut dyn FnMut(&[u8]) -> Result<()>,
        keep_going: &dyn Fn() -> bool,
    ) -> Result<bool> {
        let dbs: Vec<Arc<Database>> = self.databases.read().values().cloned().collect();
        for db in dbs {
            let containers: Vec<Arc<Container>> = db.containers.read().values().cloned().collect();
            for c in containers {
                let Some(handle) = c.journal_handle() else { continue };
                if !c.checkpoint_frames(handle, out, keep_going)? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }
}

/// The next resource id number from a counter (a log can hold any number: never wrap).
fn next_rid(counter: &AtomicU32) -> Result<u32> {
    counter
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_add(1))
        .map(|n| n + 1)
        .map_err(|_| StorageError::bad_request("no resource ids are left in this store"))
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
    /// When it was created, in Unix seconds: its `_ts`.
    created: u64,
    /// The store's log, when it is durable (set once, at creation or when the store opens).
    durable: std::sync::OnceLock<Arc<Durable>>,
    /// Deleted from its store: no container may be created in it any more.
    deleted: std::sync::atomic::AtomicBool,
}

impl Database {
    /// The database's creation record.
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.u8(tag::CREATE_DATABASE).str(&self.id).u32(self.rid).u32(self.next_rid.load(Ordering::Relaxed));
        self.encode_throughput(&mut w);
        // Last, so a record written before it existed still reads.
        w.u64(self.created);
        w.buf
    }

    fn encode_throughput(&self, w: &mut Writer) {
        Throttle::encode_optional(self.throughput.read().as_deref(), w);
    }

    /// Logs the database's throughput as it is now (after a change to its offer), synced.
    pub fn persist_throughput(&self) -> Result<()> {
        let Some(d) = self.durable.get() else { return Ok(()) };
        let mut w = Writer::new();
        w.u8(tag::DATABASE_THROUGHPUT).str(&self.id);
        self.encode_throughput(&mut w);
        d.append_synced(&w.buf)
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The database's properties in the service's JSON form (`id`, `_rid`, `_ts`: when it was
    /// created).
    pub fn properties(&self) -> Value {
        let rid = cosmoql_catalog::Rid::Database { database: self.rid }.encode().unwrap_or_default();
        Value::object([
            ("id", Value::from(self.id.as_str())),
            ("_rid", Value::from(rid)),
            ("_ts", Value::from(self.created as f64)),
        ])
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
        let _gate = self.durable.get().map(|d| d.gate());
        let mut containers = self.containers.write();
        if self.deleted.load(Ordering::Relaxed) {
            return Err(StorageError::not_found(format!("database `{}` was deleted", self.id)));
        }
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
        let rid = next_rid(&self.next_rid)?;
        if rid >= cosmoql_catalog::rid::MAX_COLLECTIONS {
            return Err(StorageError::bad_request("no resource ids are left for containers in this database"));
        }
        let container = Arc::new(Container::with_rids(id, partition_key, settings, self.rid, rid));
        container.set_throughput(dedicated);
        container.set_shared_throughput(shared);
        if let Some(d) = self.durable.get() {
            let handle = d.next_handle();
            d.append_synced(&container.encode_state(&self.id, handle))?;
            container.attach_journal(Arc::clone(d), handle);
        }
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
        let analytical_ttl =
            match properties.get("analyticalStorageTtl") {
                Value::Undefined | Value::Null => None,
                v => Some(v.as_f64().filter(|n| n.fract() == 0.0 && n.abs() < 1e15).map(|n| n as i64).ok_or_else(
                    || StorageError::bad_request("analyticalStorageTtl is an integer: 0, -1 or 1 to 2147483647"),
                )?),
            };
        // Refused before the container is made.
        crate::container::checked_analytical_ttl(analytical_ttl)?;
        let container = self.create_container(id, key, settings)?;
        container.replace_indexing_policy(policy);
        container.set_analytical_ttl(analytical_ttl)?;
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
        let _gate = self.durable.get().map(|d| d.gate());
        let mut containers = self.containers.write();
        if !containers.contains_key(id) {
            return Err(StorageError::not_found(format!("no container `{id}` in database `{}`", self.id)));
        }
        if let Some(d) = self.durable.get() {
            let mut w = Writer::new();
            w.u8(tag::DELETE_CONTAINER).str(&self.id).str(id);
            d.append_synced(&w.buf)?;
        }
        containers.remove(id);
        Ok(())
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
