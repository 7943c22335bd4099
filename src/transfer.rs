//! Moving items in bulk through the client: a container of its own (in no database) to load
//! files into, streaming import of JSON or NDJSON with a summary, NDJSON export, and copying a
//! container's items into another (the way to change a partition key). The `cosmoql` tool's
//! `import`, `query --data`, `.import` and `.export` use these.

use std::io::{BufRead, Write};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use cosmoql_storage::{Clock, Container, ImportError, ImportOptions, ImportSummary, SystemClock};

use crate::client::{ContainerClient, ContainerProperties};
use crate::Error;

impl ContainerClient {
    /// A container in memory that belongs to no database (and no account): load items into it
    /// and query them, as `cosmoql query --data FILE` does. Its id, partition key, settings and
    /// indexing policy are `properties`'; its throughput, when given, is provisioned as
    /// [`crate::DatabaseClient::create_container`] does. A 400 for settings out of range.
    ///
    /// ```
    /// use cosmoql::{ContainerClient, ContainerProperties, ImportOptions};
    /// let readings = ContainerClient::standalone(ContainerProperties::new("readings", "/deviceId")?)?;
    /// let ndjson = "{\"id\": \"r1\", \"deviceId\": \"d1\"}\n{\"id\": \"r2\", \"deviceId\": \"d2\"}\n";
    /// let summary = readings.import(ndjson.as_bytes(), ImportOptions::default()).map_err(|e| e.to_string());
    /// assert_eq!(summary.map(|s| s.imported), Ok(2));
    /// assert_eq!(readings.item_count(), 2);
    /// # Ok::<(), cosmoql::Error>(())
    /// ```
    pub fn standalone(properties: ContainerProperties) -> Result<Self, Error> {
        let mut settings = properties.settings;
        settings.validate()?;
        let clock: Arc<dyn Clock> = Arc::new(SystemClock::default());
        let dedicated = cosmoql_storage::throughput::dedicated_at_creation(
            properties.throughput,
            &mut settings.initial_partitions,
            &clock,
        )?;
        let container = Container::new(properties.id, properties.partition_key, settings);
        container.replace_indexing_policy(properties.indexing_policy);
        container.set_analytical_ttl(properties.analytical_storage_ttl)?;
        container.set_throughput(dedicated);
        Ok(ContainerClient::from_container(Arc::new(container)).with_clock(clock))
    }

    /// Imports every document of a JSON array or NDJSON stream (never the whole input in
    /// memory): each is created (with [`ImportOptions::upsert`], upserted), without request
    /// charges or throttling, as a bulk load. A line that is not a JSON object, or an item the
    /// store refuses, is counted and reported in the summary with its line number (with
    /// [`ImportOptions::fail_fast`], it stops the import: the error holds what was imported
    /// before it). Indexes are rebuilt in bulk at the end.
    ///
    /// The import runs on threads of its own, the caller's thread waiting: the allocator's free
    /// lists a bulk load leaves behind made the first hundreds of queries on the loading thread
    /// up to 1.4 times slower (docs/performance.md).
    pub fn import<R: BufRead + Send>(&self, reader: R, options: ImportOptions) -> Result<ImportSummary, ImportError> {
        off_thread(|| self.container.import(reader, options, |_| {}))
    }

    /// [`Self::import`] that stops between batches when `cancel` is set (Ctrl-C, for example):
    /// the items imported so far stay, and the error says how many.
    pub fn import_until<R: BufRead + Send>(
        &self,
        reader: R,
        options: ImportOptions,
        cancel: &AtomicBool,
    ) -> Result<ImportSummary, ImportError> {
        off_thread(|| self.container.import_until(reader, options, cancel, |_| {}))
    }

    /// Writes every item as one JSON object per line (NDJSON), in scan order, without system
    /// properties: what [`Self::import`] reads back. Returns how many items were written.
    pub fn export_ndjson<W: Write>(&self, out: W) -> std::io::Result<u64> {
        self.container.export_ndjson(out)
    }

    /// Copies every item into `target`, which may have another partition key (the way to change
    /// a container's key); returns how many were copied, and stops at the first item `target`
    /// refuses.
    pub fn copy_into(&self, target: &ContainerClient) -> Result<u64, Error> {
        Ok(self.container.copy_into(&target.container)?)
    }
}

impl ContainerClient {
    /// Deletes every item of one logical partition (the service's delete by partition key);
    /// returns how many. Each delete is charged and admitted as a single delete is; an item
    /// written into the partition meanwhile may remain, as on the service, which deletes in the
    /// background.
    pub fn delete_partition_items(&self, partition_key: crate::PartitionKey) -> Result<usize, Error> {
        let options = cosmoql_executor::QueryOptions {
            partition_key: Some(partition_key.clone()),
            ..cosmoql_executor::QueryOptions::default()
        };
        let ids: Vec<String> = self.query_items_blocking("SELECT VALUE c.id FROM c", options)?;
        let mut deleted = 0;
        for id in &ids {
            match self.delete_item(partition_key.clone(), id) {
                Ok(_) => deleted += 1,
                // Deleted meanwhile by someone else: gone either way.
                Err(e) if e.status() == Some(404) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(deleted)
    }
}

/// Runs `work` on a thread of its own (the main thread's stack size, as the query producers have)
/// and waits for it; a panic there goes on in the caller. Where no thread can be had, it runs
/// here.
fn off_thread<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    let slot = std::sync::Mutex::new(Some(work));
    let run = || slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take().map(|w| w());
    let on_thread = std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new().name("import".into()).stack_size(8 << 20).spawn_scoped(scope, run);
        spawned.ok().map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    // The work is taken once: by the thread, or here when no thread could start.
    on_thread.flatten().or_else(run).expect("bug: an import was taken from its slot and not run")
}
