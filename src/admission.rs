//! Admission under provisioned throughput: a request waits for every partition it reads to admit
//! it (retrying refusals, 429, as the SDKs do), and a query page then consumes its charge from
//! those partitions, each its share of the work.

use cosmoql_storage::{Container, PartitionKey, RequestKind};

use crate::Error;

/// Waits for the container's throughput to admit a request to every partition `partitions`
/// lists: a refusal (429) is retried per `retry`, waiting what it says on the throttle's clock.
/// Returns the partitions and how many retries it took.
pub(crate) fn admit(
    container: &Container,
    throttle: &cosmoql_storage::Throttle,
    retry: RetryOptions,
    partitions: impl Fn() -> Result<Vec<u32>, cosmoql_storage::StorageError>,
) -> Result<(Vec<u32>, u32), Error> {
    let mut retries = 0u32;
    let mut waited = std::time::Duration::ZERO;
    loop {
        let ids = partitions()?;
        match container.admit(&ids) {
            Ok(()) => return Ok((ids, retries)),
            Err(refused) => {
                let wait = std::time::Duration::from_millis(refused.retry_after_ms.unwrap_or(1));
                if retries + 1 >= retry.max_attempts || waited + wait > retry.max_wait {
                    return Err(refused.into());
                }
                throttle.clock().sleep(wait);
                waited += wait;
                retries += 1;
            }
        }
    }
}

/// Consumes a query page's charge from the partitions it read, each its share of the work (and,
/// for a query scoped to one partition key, from that key's account).
pub(crate) fn consume_query(
    container: &Container,
    ids: &[u32],
    out: &cosmoql_executor::QueryOutput,
    key: Option<&PartitionKey>,
) {
    let work: Vec<(u32, u64, u64)> = ids
        .iter()
        .map(|id| {
            let m = out.partitions.iter().find(|m| m.partition == *id);
            (*id, m.map_or(0, |m| m.retrieved_document_size), m.map_or(0, |m| m.index_entries))
        })
        .collect();
    let key = key.map(ToString::to_string);
    for (id, ru) in cosmoql_executor::cost::partition_shares(out.metrics.request_charge, &work) {
        container.consume(id, ru, key.as_deref().map(|k| (k, RequestKind::Query)));
    }
}

/// How the client retries requests refused for lack of request units (429), as the SDKs do:
/// up to `max_attempts` attempts, waiting what each refusal says, at most `max_wait` in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryOptions {
    /// Attempts in all, the first included (the SDKs: 9).
    pub max_attempts: u32,
    /// The most time spent waiting between attempts (the SDKs: 30 s).
    pub max_wait: std::time::Duration,
}

impl Default for RetryOptions {
    fn default() -> Self {
        RetryOptions { max_attempts: 9, max_wait: std::time::Duration::from_secs(30) }
    }
}
