//! Item operations: preparing an item (id, key, system properties, size, unique keys), create,
//! read, replace, upsert, delete and patch, and the changes they apply to a partition (with what
//! undoes them, for batches and a refused log write).

use super::*;
use crate::doc::{DocRef, Node};

impl Container {
    /// The bytes the items take in memory: their documents' bytes in the in-memory form
    /// (property names the process's table holds are numbers there, see `doc::names`) and each
    /// item's slot (its document's pointer and its metadata); not the allocator's own headers
    /// and rounding, nor the table. One pass over the items.
    pub fn item_memory(&self) -> u64 {
        let mut bytes = 0u64;
        for p in self.partitions.read().iter() {
            let data = p.data.read();
            for lp in data.logical.values() {
                bytes +=
                    lp.iter_from(0).map(|item| (item.doc.memory_len() + size_of::<StoredItem>()) as u64).sum::<u64>();
            }
        }
        bytes
    }

    /// Each unique key's values in `doc`, tagged with the key's place in the policy (a missing
    /// value counts as null).
    pub(super) fn unique_values(&self, doc: &Doc) -> Vec<String> {
        self.settings
            .unique_keys
            .iter()
            .enumerate()
            .map(|(i, key)| {
                let mut text = format!("{i}:");
                for path in &key.segments {
                    let names: Vec<&str> = path.iter().map(String::as_str).collect();
                    match doc.root().path(&names) {
                        Some(v) => text.push_str(&v.to_json_string().unwrap_or_default()),
                        None => text.push_str("null"),
                    }
                    text.push('\u{1}');
                }
                text
            })
            .collect()
    }

    /// Validates an item, fills its synthetic key and computes its key and EPK.
    pub(crate) fn prepare(&self, doc: Doc) -> Result<Prepared> {
        let fields = RootFields::of(&doc)?;
        if !fields.system && self.definition.synthetic_key().is_none() {
            let id = fields.id()?;
            let ttl = self.item_ttl(fields.ttl);
            return self.prepared(doc, id, ttl);
        }
        // System properties belong to the store: values sent back with an item (a read, modified,
        // then replaced) are dropped, not stored.
        let mut doc = if fields.system {
            let drop: Vec<(&str, &Value)> = SYSTEM_PROPERTIES.iter().map(|p| (*p, &Value::Undefined)).collect();
            doc.with_fields(&drop).map_err(|e| StorageError::bad_request(e.to_string()))?
        } else {
            doc
        };
        if let Some(synthetic) = self.definition.synthetic_key() {
            if let Some(key) = synthetic.key_for(doc.root())? {
                doc = doc
                    .with_fields(&[(synthetic.property.as_str(), &Value::from(key))])
                    .map_err(|e| StorageError::bad_request(e.to_string()))?;
            }
        }
        let fields = RootFields::of(&doc)?;
        let id = fields.id()?;
        let ttl = self.item_ttl(fields.ttl);
        self.prepared(doc, id, ttl)
    }

    /// The rest of [`Container::prepare`] once the document is final: its size, key and EPK
    /// (`ttl` is the item's ttl, or why it is refused, checked last).
    fn prepared(&self, doc: Doc, id: Arc<str>, ttl: Result<Option<i32>>) -> Result<Prepared> {
        check_size(&doc)?;
        let key = self.definition.key_of(doc.root())?;
        let epk = self.definition.epk(&key)?;
        Ok(Prepared { doc, id, key, epk, ttl: ttl? })
    }

    /// The item to store for `prep`: a new write's metadata (`seq`: the item's creation sequence
    /// number when it exists).
    pub(super) fn stored(&self, prep: &Prepared, seq: Option<u64>) -> StoredItem {
        StoredItem { doc: prep.doc.clone(), meta: ItemMeta { ttl: prep.ttl, ..self.new_meta(seq) } }
    }

    pub(super) fn prepare_value(&self, item: &Value) -> Result<Prepared> {
        let doc = Doc::from_value(item).map_err(|e| StorageError::bad_request(e.to_string()))?;
        self.prepare(doc)
    }

    pub(super) fn key_epk(&self, key: &PartitionKey) -> Result<Epk> {
        self.definition.check_key(key)?;
        Ok(self.definition.epk(key)?)
    }

    pub(super) fn new_meta(&self, seq: Option<u64>) -> ItemMeta {
        ItemMeta {
            seq: seq.unwrap_or_else(|| self.next_seq.fetch_add(1, Ordering::Relaxed)),
            lsn: self.next_lsn.fetch_add(1, Ordering::Relaxed),
            ts: self.clock.read().unix_seconds(),
            ttl: None,
        }
    }

    /// The item with its system properties, as Cosmos DB returns it.
    pub fn materialize(&self, item: &StoredItem) -> Value {
        self.names.materialize(item)
    }

    /// The item returned whole: its JSON written from the stored bytes, or decoded on demand.
    pub fn whole_item(&self, item: &StoredItem) -> WholeItem {
        WholeItem { item: item.clone(), names: Arc::clone(&self.names) }
    }

    /// The response to deleting `old`.
    pub(super) fn deleted(&self, old: &StoredItem) -> ItemResponse {
        ItemResponse {
            status: 204,
            item: Value::Undefined,
            etag: String::new(),
            operation: OperationKind::Delete,
            bytes: old.doc.len(),
            indexed_terms: self.indexed_terms(old),
        }
    }

    /// The index terms an item has under the current indexing policy: its scalars at indexed
    /// paths (array elements each), `_ts`, its composite tuples and spatial entries.
    pub fn indexed_terms(&self, item: &StoredItem) -> u64 {
        crate::index::indexed_terms(&self.indexing_policy(), item)
    }

    /// An item's `_rid`.
    pub fn item_rid(&self, item: &StoredItem) -> String {
        self.names.item_rid(item.meta.seq)
    }

    /// An item's `_rid`, on the stack (what builds a column of them without a string an item).
    pub fn item_rid_text(&self, item: &StoredItem) -> cosmoql_catalog::rid::RidText {
        self.names.rid_text(item.meta.seq)
    }

    /// One system property of an item (`_rid`, `_self`, `_etag`, `_attachments`, `_ts`);
    /// `Undefined` for any other name.
    pub fn system_property(&self, item: &StoredItem, name: &str) -> Value {
        self.names.system_property(item, name)
    }

    pub(super) fn response(&self, status: u16, item: &StoredItem, kind: OperationKind) -> ItemResponse {
        // An upsert's status says whether it created the item.
        let kind = match (kind, status) {
            (OperationKind::Replace, 201) => OperationKind::Create,
            (kind, _) => kind,
        };
        let indexed_terms = if kind == OperationKind::Read { 0 } else { self.indexed_terms(item) };
        ItemResponse {
            indexed_terms,
            status,
            item: self.materialize(item),
            etag: item.meta.etag(),
            operation: kind,
            bytes: item.doc.len(),
        }
    }

    /// Creates an item; 409 if one with the same partition key and id exists.
    pub fn create(&self, item: &Value) -> Result<ItemResponse> {
        self.create_doc(Doc::from_value(item).map_err(|e| StorageError::bad_request(e.to_string()))?)
    }

    /// Creates an item from its JSON text.
    pub fn create_json(&self, json: &str) -> Result<ItemResponse> {
        self.create_doc(Doc::from_json_str(json).map_err(|e| StorageError::bad_request(e.to_string()))?)
    }

    /// Creates an item from an encoded document.
    pub fn create_doc(&self, doc: Doc) -> Result<ItemResponse> {
        self.expire();
        let stored = self.insert_doc(doc)?;
        Ok(self.response(201, &stored, OperationKind::Create))
    }

    /// Creates an item and returns what was stored, without materializing a response (the import
    /// path).
    pub fn insert_doc(&self, doc: Doc) -> Result<StoredItem> {
        self.expire();
        self.insert_prepared(self.prepare(doc)?)
    }

    /// Inserts an item [`Container::prepare`] validated.
    pub(crate) fn insert_prepared(&self, prep: Prepared) -> Result<StoredItem> {
        self.write_partition(&prep.epk, |data| {
            // Sequence numbers are taken under the partition's write lock, so a logical
            // partition's items are in sequence order.
            let stored = self.stored(&prep, None);
            self.apply_insert(data, &prep, stored.clone())?;
            Ok(stored)
        })
    }

    /// Reads an item by partition key and id; 404 if there is none.
    pub fn read(&self, key: &PartitionKey, id: &str) -> Result<ItemResponse> {
        self.expire();
        let stored = self.read_stored(key, id)?;
        Ok(self.response(200, &stored, OperationKind::Read))
    }

    /// Reads the stored form of an item (no decoding).
    pub fn read_stored(&self, key: &PartitionKey, id: &str) -> Result<StoredItem> {
        self.expire();
        let epk = self.key_epk(key)?;
        self.read_partition(&epk, |data| data.logical.get(&epk).and_then(|lp| lp.get(id)).cloned())
            .ok_or_else(|| not_found(key, id))
    }

    /// Replaces an item; its partition key and id cannot change.
    pub fn replace(
        &self,
        key: &PartitionKey,
        id: &str,
        item: &Value,
        options: &WriteOptions<'_>,
    ) -> Result<ItemResponse> {
        self.expire();
        let prep = self.prepare_value(item)?;
        self.check_same_item(key, id, &prep)?;
        let epk = prep.epk.clone();
        let stored = self.write_partition(&epk, |data| {
            let old = existing(data, &prep.epk, &prep.id).ok_or_else(|| not_found(key, id))?;
            check_etag(&old, options)?;
            let stored = self.stored(&prep, Some(old.meta.seq));
            self.apply_replace(data, &prep, stored.clone())?;
            Ok(stored)
        })?;
        Ok(self.response(200, &stored, OperationKind::Replace))
    }

    /// Creates the item, or replaces the one with the same partition key and id.
    pub fn upsert(&self, item: &Value, options: &WriteOptions<'_>) -> Result<ItemResponse> {
        self.expire();
        let prep = self.prepare_value(item)?;
        let epk = prep.epk.clone();
        let (status, stored) =
            self.write_partition(&epk, |data| self.apply_upsert(data, &prep, options).map(|(s, st, _)| (s, st)))?;
        Ok(self.response(status, &stored, OperationKind::Replace))
    }

    /// Deletes an item.
    pub fn delete(&self, key: &PartitionKey, id: &str, options: &WriteOptions<'_>) -> Result<ItemResponse> {
        self.expire();
        let epk = self.key_epk(key)?;
        let old = self.write_partition(&epk, |data| {
            let old = existing(data, &epk, id).ok_or_else(|| not_found(key, id))?;
            check_etag(&old, options)?;
            self.apply_delete(data, &epk, id);
            Ok(old)
        })?;
        Ok(self.deleted(&old))
    }

    /// Applies patch operations (add, set, replace, remove, incr) atomically. 412 if the etag or
    /// the condition does not hold; 400 for a bad patch (nothing changes).
    pub fn patch(
        &self,
        key: &PartitionKey,
        id: &str,
        operations: &[PatchOperation],
        options: &WriteOptions<'_>,
    ) -> Result<ItemResponse> {
        self.expire();
        let epk = self.key_epk(key)?;
        let stored = self.write_partition(&epk, |data| {
            let (stored, _) = self.apply_patch_locked(data, key, &epk, id, operations, options)?;
            Ok(stored)
        })?;
        Ok(self.response(200, &stored, OperationKind::Replace))
    }

    pub(super) fn check_same_item(&self, key: &PartitionKey, id: &str, prep: &Prepared) -> Result<()> {
        self.definition.check_key(key)?;
        if prep.key != *key {
            return Err(StorageError::bad_request(format!(
                "the item's partition key {} differs from the request's {key}: an item's key never changes (copy it to a new item instead)",
                prep.key
            )));
        }
        if &*prep.id != id {
            return Err(StorageError::bad_request(format!(
                "the item's id `{}` differs from the id `{id}` being replaced",
                prep.id
            )));
        }
        Ok(())
    }

    /// Enters a new item (its undo, for a caller that may take it back, is [`Undo::inserted`]).
    pub(super) fn apply_insert(&self, data: &mut PartitionData, prep: &Prepared, stored: StoredItem) -> Result<()> {
        let cap = self.settings.logical_partition_max_bytes;
        let size = stored.doc.len() as u64;
        let unique = self.unique_values(&stored.doc);
        let lp =
            data.logical.entry(prep.epk.clone()).or_insert_with(|| LogicalPartition::new(prep.key.clone(), &prep.epk));
        let failure = if lp.contains(&prep.id) {
            Some(StorageError::conflict(format!(
                "an item with id `{}` exists in logical partition {}",
                prep.id, prep.key
            )))
        } else if lp.bytes + size > cap {
            Some(partition_full(&prep.key, lp.bytes, size, cap))
        } else {
            lp.check_unique(&prep.id, &unique).err()
        };
        if let Some(err) = failure {
            if lp.is_empty() {
                data.logical.remove(&prep.epk);
            }
            return Err(err);
        }
        data.index.insert(&prep.epk, &stored);
        if let Some(changes) = data.changes.get_mut() {
            changes.insert(stored.meta.lsn, (Arc::clone(&lp.epk), stored.meta.seq));
        }
        lp.index_unique(&prep.id, unique);
        self.schedule_expiry(&prep.epk, &prep.id, &stored.meta);
        let change = self.settings.change_feed_retention.is_some().then(|| Change {
            operation: ChangeOperation::Create,
            epk: prep.epk.clone(),
            id: Arc::clone(&prep.id),
            key: prep.key.clone(),
            item: Some(stored.clone()),
            previous_lsn: None,
            ts: stored.meta.ts,
            ttl_expired: false,
        });
        let lsn = stored.meta.lsn;
        let logged = self.journal().is_some().then(|| stored.clone());
        lp.push(&prep.id, stored);
        data.items += 1;
        data.bytes += size;
        if let Some(change) = change {
            self.record(data, lsn, change);
        }
        if let Some(item) = logged {
            self.log_change(data, || Entry::Put(item), &Undo::inserted(prep));
        }
        Ok(())
    }

    pub(super) fn apply_replace(&self, data: &mut PartitionData, prep: &Prepared, stored: StoredItem) -> Result<Undo> {
        let cap = self.settings.logical_partition_max_bytes;
        let lp = data
            .logical
            .get_mut(&prep.epk)
            .ok_or_else(|| StorageError::internal("replace of a missing logical partition"))?;
        let old_size =
            lp.get(&prep.id).ok_or_else(|| StorageError::internal("replace of a missing item"))?.doc.len() as u64;
        let new_size = stored.doc.len() as u64;
        if new_size > old_size && lp.bytes - old_size + new_size > cap {
            return Err(partition_full(&prep.key, lp.bytes - old_size, new_size, cap));
        }
        let unique = self.unique_values(&stored.doc);
        lp.check_unique(&prep.id, &unique)?;
        self.schedule_expiry(&prep.epk, &prep.id, &stored.meta);
        let old =
            lp.replace(&prep.id, stored.clone()).ok_or_else(|| StorageError::internal("replace of a missing item"))?;
        lp.unindex_unique(&self.unique_values(&old.doc));
        lp.index_unique(&prep.id, unique);
        if let Some(changes) = data.changes.get_mut() {
            changes.remove(&old.meta.lsn);
            changes.insert(stored.meta.lsn, (Arc::clone(&lp.epk), stored.meta.seq));
        }
        if self.settings.change_feed_retention.is_some() {
            let change = Change {
                operation: ChangeOperation::Replace,
                epk: prep.epk.clone(),
                id: Arc::clone(&prep.id),
                key: prep.key.clone(),
                item: Some(stored.clone()),
                previous_lsn: Some(old.meta.lsn),
                ts: stored.meta.ts,
                ttl_expired: false,
            };
            self.record(data, stored.meta.lsn, change);
        }
        data.index.remove(&old);
        data.index.insert(&prep.epk, &stored);
        data.bytes = data.bytes - old_size + new_size;
        let undo = Undo::Replaced { epk: prep.epk.clone(), id: Arc::clone(&prep.id), old };
        self.log_change(data, || Entry::Put(stored), &undo);
        Ok(undo)
    }

    pub(super) fn apply_upsert(
        &self,
        data: &mut PartitionData,
        prep: &Prepared,
        options: &WriteOptions<'_>,
    ) -> Result<(u16, StoredItem, Undo)> {
        match existing(data, &prep.epk, &prep.id) {
            Some(old) => {
                check_etag(&old, options)?;
                let stored = self.stored(prep, Some(old.meta.seq));
                let undo = self.apply_replace(data, prep, stored.clone())?;
                Ok((200, stored, undo))
            }
            None => {
                if options.if_match.is_some() {
                    return Err(StorageError::new(
                        ErrorKind::PreconditionFailed,
                        format!("no item `{}` to match the etag against", prep.id),
                    ));
                }
                let stored = self.stored(prep, None);
                self.apply_insert(data, prep, stored.clone())?;
                Ok((201, stored, Undo::inserted(prep)))
            }
        }
    }

    /// Keeps a write for the all-versions-and-deletes change feed (with a retention), dropping
    /// what is older than the retention.
    pub(super) fn record(&self, data: &mut PartitionData, lsn: u64, change: Change) {
        let Some(retention) = self.settings.change_feed_retention else { return };
        let horizon = change.ts.saturating_sub(retention);
        while data.history.first_key_value().is_some_and(|(_, c)| c.ts < horizon) {
            data.history.pop_first();
        }
        data.history.insert(lsn, change);
    }

    /// Removes an item known to exist; returns the undo record.
    pub(super) fn apply_delete(&self, data: &mut PartitionData, epk: &Epk, id: &str) -> Option<Undo> {
        self.apply_delete_at(data, epk, id, false, None)
    }

    /// Removes an item known to exist (`expired`: because its time to live passed; `at`: the
    /// delete's LSN and time when replayed, else new ones).
    pub(super) fn apply_delete_at(
        &self,
        data: &mut PartitionData,
        epk: &Epk,
        id: &str,
        expired: bool,
        at: Option<(u64, u64)>,
    ) -> Option<Undo> {
        let lp = data.logical.get_mut(epk)?;
        let (id, old) = lp.remove(id)?;
        let (mut lsn, mut ts) = at.unwrap_or((0, 0));
        if self.settings.change_feed_retention.is_some() {
            if at.is_none() {
                ts = self.clock.read().unix_seconds();
                lsn = self.next_lsn.fetch_add(1, Ordering::Relaxed);
            }
            let change = Change {
                operation: ChangeOperation::Delete,
                epk: epk.clone(),
                id: Arc::clone(&id),
                key: lp.key.clone(),
                item: None,
                previous_lsn: Some(old.meta.lsn),
                ts,
                ttl_expired: expired,
            };
            self.record(data, lsn, change);
        }
        let lp = data.logical.get_mut(epk)?;
        lp.unindex_unique(&self.unique_values(&old.doc));
        if let Some(changes) = data.changes.get_mut() {
            changes.remove(&old.meta.lsn);
        }
        data.index.remove(&old);
        data.items -= 1;
        data.bytes -= old.doc.len() as u64;
        let key = lp.key.clone();
        if lp.is_empty() {
            data.logical.remove(epk);
        }
        let undo = Undo::Deleted { epk: epk.clone(), key, id: Arc::clone(&id), old };
        self.log_change(data, || Entry::Delete { epk: epk.clone(), id, lsn, ts, expired }, &undo);
        Some(undo)
    }

    pub(super) fn apply_patch_locked(
        &self,
        data: &mut PartitionData,
        key: &PartitionKey,
        epk: &Epk,
        id: &str,
        operations: &[PatchOperation],
        options: &WriteOptions<'_>,
    ) -> Result<(StoredItem, Undo)> {
        let old = existing(data, epk, id).ok_or_else(|| not_found(key, id))?;
        check_etag(&old, options)?;
        let mut value = old.doc.root().to_value();
        if let Some(condition) = options.condition {
            if !condition(&self.materialize(&old)) {
                return Err(StorageError::new(
                    ErrorKind::PreconditionFailed,
                    "the patch condition does not hold for the item",
                ));
            }
        }
        // The id and the key paths cannot be patched; a patch of a synthetic key's source that
        // would move the item is caught below, when the key is recomputed.
        let mut protected: Vec<Vec<String>> = vec![vec!["id".to_string()]];
        protected.extend(self.definition.paths().iter().map(|p| p.segments().to_vec()));
        apply_patch(&mut value, operations, &protected)?;
        let doc = Doc::from_value(&value).map_err(|e| StorageError::bad_request(e.to_string()))?;
        let prep = self.prepare(doc)?;
        if prep.key != *key || &*prep.id != id {
            return Err(StorageError::bad_request("a patch cannot change the item's id or partition key"));
        }
        let stored = self.stored(&prep, Some(old.meta.seq));
        let undo = self.apply_replace(data, &prep, stored.clone())?;
        Ok((stored, undo))
    }

    pub(super) fn undo(&self, data: &mut PartitionData, undo: Undo) {
        match undo {
            Undo::Inserted { epk, id } => {
                self.apply_delete(data, &epk, &id);
            }
            Undo::Replaced { epk, id, old } => {
                if let Some(lp) = data.logical.get_mut(&epk) {
                    let size = old.doc.len() as u64;
                    if let Some(newer) = lp.replace(&id, old.clone()) {
                        lp.unindex_unique(&self.unique_values(&newer.doc));
                        lp.index_unique(&id, self.unique_values(&old.doc));
                        self.schedule_expiry(&epk, &id, &old.meta);
                        if let Some(changes) = data.changes.get_mut() {
                            changes.remove(&newer.meta.lsn);
                            changes.insert(old.meta.lsn, (Arc::clone(&lp.epk), old.meta.seq));
                        }
                        data.index.remove(&newer);
                        data.index.insert(&epk, &old);
                        data.bytes = data.bytes - newer.doc.len() as u64 + size;
                    }
                }
            }
            Undo::Deleted { epk, key, id, old } => {
                let size = old.doc.len() as u64;
                data.index.insert(&epk, &old);
                self.schedule_expiry(&epk, &id, &old.meta);
                let unique = self.unique_values(&old.doc);
                let lp = data.logical.entry(epk.clone()).or_insert_with(|| LogicalPartition::new(key, &epk));
                if let Some(changes) = data.changes.get_mut() {
                    changes.insert(old.meta.lsn, (Arc::clone(&lp.epk), old.meta.seq));
                }
                lp.index_unique(&id, unique);
                lp.restore(&id, old);
                data.items += 1;
                data.bytes += size;
            }
        }
    }
}

/// The root properties [`Container::prepare`] reads, found in one pass over the item's entries.
struct RootFields<'d> {
    id: Option<DocRef<'d>>,
    ttl: Option<DocRef<'d>>,
    /// Whether the item holds a system property (`_rid`, `_ts`, ...).
    system: bool,
}

impl<'d> RootFields<'d> {
    fn of(doc: &'d Doc) -> Result<Self> {
        let Some(Node::Object(entries)) = doc.root().node() else {
            return Err(StorageError::bad_request("an item must be a JSON object"));
        };
        let mut fields = RootFields { id: None, ttl: None, system: false };
        for (k, v) in entries {
            match k {
                b"id" => fields.id = Some(v),
                b"ttl" => fields.ttl = Some(v),
                [b'_', ..] if SYSTEM_PROPERTIES.iter().any(|p| p.as_bytes() == k) => fields.system = true,
                _ => {}
            }
        }
        Ok(fields)
    }

    /// The item's id, checked.
    fn id(&self) -> Result<Arc<str>> {
        let Some(v) = self.id else { return Err(StorageError::bad_request("the item has no `id` property")) };
        let Some(id) = v.as_str() else {
            return Err(StorageError::bad_request(format!(
                "the item's `id` must be a string, not {}",
                v.kind().name()
            )));
        };
        validate_id(id)?;
        Ok(Arc::from(id))
    }
}
