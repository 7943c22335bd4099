//! Admission under provisioned throughput, as a client sees it: a request waits for every
//! partition it reads to admit it, retrying refusals (429) as the SDKs do, and a query page then
//! consumes its charge from those partitions, each its share of the work.

use std::time::Duration;

use super::cost::partition_shares;
use super::Clock;
use crate::error::{Result, StorageError};

/// How requests refused for lack of request units (429) are retried, as the SDKs do: up to
/// `max_attempts` attempts, waiting what each refusal says, at most `max_wait` in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryOptions {
    /// Attempts in all, the first included (the SDKs: 9).
    pub max_attempts: u32,
    /// The most time spent waiting between attempts (the SDKs: 30 s).
    pub max_wait: Duration,
}

impl Default for RetryOptions {
    fn default() -> Self {
        RetryOptions { max_attempts: 9, max_wait: Duration::from_secs(30) }
    }
}

/// Waits until `admit` admits a request to every partition `partitions` lists (asked again on
/// each attempt: a split may change them): a refusal (429) is retried per `retry`, waiting what
/// it says on `clock`; past the attempts or the time, the last refusal is the answer. Returns the
/// partitions and how many retries it took.
pub fn admit_with_retries(
    admit: impl Fn(&[u32]) -> Result<()>,
    clock: &dyn Clock,
    retry: RetryOptions,
    partitions: impl Fn() -> Result<Vec<u32>>,
) -> Result<(Vec<u32>, u32), StorageError> {
    let mut retries = 0u32;
    let mut waited = Duration::ZERO;
    loop {
        let ids = partitions()?;
        match admit(&ids) {
            Ok(()) => return Ok((ids, retries)),
            Err(refused) => {
                let wait = Duration::from_millis(refused.retry_after_ms.unwrap_or(1));
                if retries + 1 >= retry.max_attempts || waited + wait > retry.max_wait {
                    return Err(refused);
                }
                clock.sleep(wait);
                waited += wait;
                retries += 1;
            }
        }
    }
}

/// Consumes a query page's `charge` through `consume` from the partitions it read, each its share
/// of the work (`work`: each partition with the bytes it loaded and the index entries it read).
pub fn consume_page(charge: f64, work: &[(u32, u64, u64)], mut consume: impl FnMut(u32, f64)) {
    for (id, ru) in partition_shares(charge, work) {
        consume(id, ru);
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::throughput::ManualClock;

    #[test]
    fn refusals_are_retried_waiting_what_they_say_until_the_attempts_run_out() {
        let clock = ManualClock::default();
        let refusals = Cell::new(2);
        let admit = |_: &[u32]| {
            if refusals.get() == 0 {
                return Ok(());
            }
            refusals.set(refusals.get() - 1);
            Err(StorageError::throttled(250))
        };
        let (ids, retries) = admit_with_retries(admit, &clock, RetryOptions::default(), || Ok(vec![3])).unwrap();
        assert_eq!((ids, retries), (vec![3], 2));
        assert_eq!(clock.now(), Duration::from_millis(500));
        let always = |_: &[u32]| Err(StorageError::throttled(10));
        let retry = RetryOptions { max_attempts: 3, max_wait: Duration::from_secs(30) };
        let refused = admit_with_retries(always, &clock, retry, || Ok(vec![0])).unwrap_err();
        assert_eq!((refused.status_code(), clock.now()), (429, Duration::from_millis(520)));
        let retry = RetryOptions { max_attempts: 9, max_wait: Duration::from_millis(15) };
        assert!(admit_with_retries(always, &clock, retry, || Ok(vec![0])).is_err());
        assert_eq!(clock.now(), Duration::from_millis(530));
    }

    #[test]
    fn a_page_consumes_its_whole_charge_split_by_the_work() {
        let mut taken = Vec::new();
        consume_page(10.0, &[(0, 0, 0), (1, 1 << 20, 0)], |id, ru| taken.push((id, ru)));
        assert_eq!(taken.len(), 2);
        assert!((taken.iter().map(|(_, ru)| ru).sum::<f64>() - 10.0).abs() < 1e-9);
        assert!(taken[1].1 > taken[0].1);
    }
}
