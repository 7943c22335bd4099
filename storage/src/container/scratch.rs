//! A copy of one logical partition in a container of its own: where a script's transaction (a
//! stored procedure's, in the facade) reads and writes before its writes are committed to the
//! container as one batch.

use std::sync::atomic::Ordering;

use super::*;

impl Container {
    /// One logical partition copied into an in-memory container of its own: the same id,
    /// resource ids, key definition, settings, indexing policy and scripts, the partition's items with
    /// their system properties (so `_rid`, `_self`, `_etag` and `_ts` read as in the container),
    /// and sequence numbers that go on from the container's. Nothing written to the copy reaches
    /// the container. It costs a copy of the logical partition's items and their indexes.
    pub fn logical_partition_copy(&self, key: &PartitionKey) -> Result<Container> {
        let items = self.scan_partition_key(key)?;
        let settings =
            ContainerSettings { initial_partitions: 1, change_feed_retention: None, ..self.settings.clone() };
        let copy =
            Container::with_rids(self.id.clone(), self.definition.clone(), settings, self.database_rid, self.rid);
        *copy.indexing_policy.write() = self.indexing_policy();
        *copy.clock.write() = Arc::clone(&*self.clock.read());
        // Its scripts too: a query the transaction runs may call the container's UDFs.
        *copy.scripts.write() = self.scripts.read().clone();
        copy.suspend_indexes();
        let failed =
            |e: crate::codec::DecodeError| StorageError::internal(format!("copying a logical partition: {}", e.0));
        for item in items {
            copy.replay_put(item, false).map_err(failed)?;
        }
        copy.finish_replay().map_err(failed)?;
        copy.next_seq.fetch_max(self.next_seq.load(Ordering::Relaxed), Ordering::Relaxed);
        copy.next_lsn.fetch_max(self.next_lsn.load(Ordering::Relaxed), Ordering::Relaxed);
        Ok(copy)
    }
}
