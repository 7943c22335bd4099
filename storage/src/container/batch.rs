//! Transactional batches: the operations of one logical partition applied all or none (undone in
//! reverse on the first failure), logged as one frame.

use super::*;

/// The most writes one script transaction (a stored procedure's, with its triggers') commits.
pub const MAX_TRANSACTION_OPERATIONS: usize = 10_000;

impl Container {
    /// Runs up to 100 operations on one logical partition, all or nothing: if one fails, every
    /// earlier one is rolled back and the store is as before.
    pub fn execute_batch(
        &self,
        key: &PartitionKey,
        operations: &[BatchOperation],
    ) -> Result<Vec<ItemResponse>, BatchError> {
        self.execute_operations(key, operations, MAX_BATCH_OPERATIONS, "a batch")
    }

    /// A script's writes, committed as a batch is (one logical partition, all or nothing, one
    /// log frame) but up to [`MAX_TRANSACTION_OPERATIONS`] of them.
    pub fn execute_transaction(
        &self,
        key: &PartitionKey,
        operations: &[BatchOperation],
    ) -> Result<Vec<ItemResponse>, BatchError> {
        self.execute_operations(key, operations, MAX_TRANSACTION_OPERATIONS, "a script's transaction")
    }

    /// The partition key of `item`, checked as a write would check it (id, size, key paths).
    pub fn item_key(&self, item: &Value) -> Result<PartitionKey> {
        Ok(self.prepare_value(item)?.key)
    }

    fn execute_operations(
        &self,
        key: &PartitionKey,
        operations: &[BatchOperation],
        max: usize,
        what: &str,
    ) -> Result<Vec<ItemResponse>, BatchError> {
        self.expire();
        let whole = |error| BatchError { index: 0, error };
        if operations.is_empty() {
            return Err(whole(StorageError::bad_request(format!("{what} needs at least one operation"))));
        }
        if operations.len() > max {
            return Err(whole(StorageError::bad_request(format!(
                "{what} holds at most {max} operations, not {}",
                operations.len()
            ))));
        }
        let epk = self.key_epk(key).map_err(whole)?;
        // Validate and key every document first: nothing is locked yet.
        let mut prepared = Vec::with_capacity(operations.len());
        for (index, op) in operations.iter().enumerate() {
            let at = |error| BatchError { index, error };
            let prep = match op {
                BatchOperation::Create { item }
                | BatchOperation::Upsert { item, .. }
                | BatchOperation::Replace { item, .. } => {
                    let prep = self.prepare_value(item).map_err(at)?;
                    if prep.key != *key {
                        return Err(at(StorageError::bad_request(format!(
                            "the item's partition key {} differs from the batch's {key}: a batch stays in one logical partition",
                            prep.key
                        ))));
                    }
                    if let BatchOperation::Replace { id, .. } = op {
                        self.check_same_item(key, id, &prep).map_err(at)?;
                    }
                    Some(prep)
                }
                _ => None,
            };
            prepared.push(prep);
        }
        let result = self.write_partition(&epk, |data| {
            let mut undo_log = Vec::new();
            let mut responses = Vec::new();
            // The batch's writes are the partition's last: a rollback drops them (and the undo's).
            let kept = data.history.last_key_value().map_or(0, |(lsn, _)| *lsn);
            for (index, (op, prep)) in operations.iter().zip(&prepared).enumerate() {
                match self.apply_batch_op(data, key, &epk, op, prep.as_ref()) {
                    Ok((response, undo)) => {
                        responses.push(response);
                        undo_log.extend(undo);
                    }
                    Err(error) => {
                        for u in undo_log.into_iter().rev() {
                            self.undo(data, u);
                        }
                        data.pending.clear();
                        data.history.split_off(&kept.saturating_add(1));
                        return Ok(Err(BatchError { index, error }));
                    }
                }
            }
            Ok(Ok(responses))
        });
        match result {
            Ok(inner) => inner,
            Err(error) => Err(whole(error)),
        }
    }

    pub(super) fn apply_batch_op(
        &self,
        data: &mut PartitionData,
        key: &PartitionKey,
        epk: &Epk,
        op: &BatchOperation,
        prep: Option<&Prepared>,
    ) -> Result<(ItemResponse, Option<Undo>)> {
        let prep_ref = || prep.ok_or_else(|| StorageError::internal("batch document was not prepared"));
        match op {
            BatchOperation::Create { .. } => {
                let prep = prep_ref()?;
                let stored = self.stored(prep, None);
                self.apply_insert(data, prep, stored.clone())?;
                Ok((self.response(201, &stored, OperationKind::Replace), Some(Undo::inserted(prep))))
            }
            BatchOperation::Upsert { if_match, .. } => {
                let options = WriteOptions { if_match: if_match.clone(), condition: None };
                let (status, stored, undo) = self.apply_upsert(data, prep_ref()?, &options)?;
                Ok((self.response(status, &stored, OperationKind::Replace), Some(undo)))
            }
            BatchOperation::Replace { id, if_match, .. } => {
                let prep = prep_ref()?;
                let old = existing(data, epk, id).ok_or_else(|| not_found(key, id))?;
                check_etag(&old, &WriteOptions { if_match: if_match.clone(), condition: None })?;
                let stored = self.stored(prep, Some(old.meta.seq));
                let undo = self.apply_replace(data, prep, stored.clone())?;
                Ok((self.response(200, &stored, OperationKind::Replace), Some(undo)))
            }
            BatchOperation::Delete { id, if_match } => {
                let old = existing(data, epk, id).ok_or_else(|| not_found(key, id))?;
                check_etag(&old, &WriteOptions { if_match: if_match.clone(), condition: None })?;
                let undo = self.apply_delete(data, epk, id);
                Ok((self.deleted(&old), undo))
            }
            BatchOperation::Read { id } => {
                let item = existing(data, epk, id).ok_or_else(|| not_found(key, id))?;
                Ok((self.response(200, &item, OperationKind::Read), None))
            }
            BatchOperation::Patch { id, operations, if_match } => {
                let options = WriteOptions { if_match: if_match.clone(), condition: None };
                let (stored, undo) = self.apply_patch_locked(data, key, epk, id, operations, &options)?;
                Ok((self.response(200, &stored, OperationKind::Replace), Some(undo)))
            }
        }
    }
}
