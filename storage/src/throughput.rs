//! Provisioned throughput: request units per second, split evenly across physical partitions,
//! and the throttling that enforces it.
//!
//! Each physical partition has a budget of `offer / P` RU per second (recomputed from the
//! current partition count, so splits and offer changes take effect at once). Its consumption is
//! a leaky bucket draining at the budget's rate: a request is admitted while the bucket holds
//! less than one second's budget; after it runs, its charge is added, so a request that costs
//! more than what was left puts the partition in debt and later requests wait until it drains
//! (one huge request cannot beat the limit). A refused request is a 429 (substatus 3200) with
//! how long to wait; it changes nothing and costs nothing.
//!
//! Time comes from a [`Clock`]: [`SystemClock`] in the API and the REPL, [`ManualClock`] in
//! tests, which never sleep.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::{Result, StorageError};

/// Where time comes from.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Time since an arbitrary start.
    fn now(&self) -> Duration;
    /// Waits (a manual clock moves forward instead).
    fn sleep(&self, d: Duration);
}

/// Real time.
#[derive(Debug)]
pub struct SystemClock {
    start: Instant,
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock { start: Instant::now() }
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.start.elapsed()
    }
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// Time that moves only when told to (or when something sleeps on it).
#[derive(Debug, Default)]
pub struct ManualClock {
    now: Mutex<Duration>,
}

impl ManualClock {
    pub fn advance(&self, d: Duration) {
        if let Ok(mut now) = self.now.lock() {
            *now = now.saturating_add(d);
        }
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        self.now.lock().map_or(Duration::ZERO, |n| *n)
    }
    fn sleep(&self, d: Duration) {
        self.advance(d);
    }
}

/// One partition's consumption: RU in the bucket at a time.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    level: f64,
    at: Duration,
}

/// Request units consumed and refused by one physical partition.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PartitionUsage {
    pub consumed: f64,
    /// Requests admitted and refused.
    pub admitted: u64,
    pub throttled: u64,
    /// The most RU consumed in one second (clock seconds), and that second.
    pub peak_second_ru: f64,
    second: u64,
    second_ru: f64,
}

/// A container's provisioned throughput and its per-partition buckets.
#[derive(Debug)]
pub struct Throttle {
    ru_per_second: f64,
    clock: Arc<dyn Clock>,
    buckets: Mutex<HashMap<u32, (Bucket, PartitionUsage)>>,
    /// RU consumed per logical partition key (as JSON), for the skew report: exact, one entry
    /// per key that consumed any.
    keys: Mutex<HashMap<String, f64>>,
}

impl Throttle {
    pub fn new(ru_per_second: f64, clock: Arc<dyn Clock>) -> Self {
        Throttle { ru_per_second, clock, buckets: Mutex::new(HashMap::new()), keys: Mutex::new(HashMap::new()) }
    }

    /// The container's offer, in RU per second.
    pub fn ru_per_second(&self) -> f64 {
        self.ru_per_second
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Each of `partitions` physical partitions' budget, in RU per second.
    pub fn partition_budget(&self, partitions: usize) -> f64 {
        self.ru_per_second / partitions.max(1) as f64
    }

    /// The bucket of `partition`, drained to now.
    fn drained(bucket: &mut Bucket, budget: f64, now: Duration) {
        let elapsed = now.saturating_sub(bucket.at).as_secs_f64();
        bucket.level = (bucket.level - budget * elapsed).max(0.0);
        bucket.at = now;
    }

    /// Admits a request to `partition` (one of `partitions`), or refuses it with a 429 saying
    /// how long to wait.
    pub fn admit(&self, partition: u32, partitions: usize) -> Result<()> {
        let budget = self.partition_budget(partitions);
        let now = self.clock.now();
        let mut buckets = self.buckets.lock().map_err(|_| StorageError::internal("throttle lock poisoned"))?;
        let (bucket, usage) =
            buckets.entry(partition).or_insert((Bucket { level: 0.0, at: now }, PartitionUsage::default()));
        Self::drained(bucket, budget, now);
        if bucket.level < budget {
            usage.admitted += 1;
            return Ok(());
        }
        usage.throttled += 1;
        // Until the bucket holds less than one second's budget again.
        let wait = (bucket.level - budget) / budget.max(f64::MIN_POSITIVE);
        Err(StorageError::throttled(((wait * 1000.0).ceil() as u64).max(1)))
    }

    /// Adds a request's charge to `partition`'s bucket (and to its logical partition `key`'s
    /// account, when the request had one).
    pub fn consume(&self, partition: u32, partitions: usize, ru: f64, key: Option<&str>) {
        let ru = ru.max(0.0);
        let budget = self.partition_budget(partitions);
        let now = self.clock.now();
        if let Ok(mut buckets) = self.buckets.lock() {
            let (bucket, usage) =
                buckets.entry(partition).or_insert((Bucket { level: 0.0, at: now }, PartitionUsage::default()));
            Self::drained(bucket, budget, now);
            bucket.level += ru;
            usage.consumed += ru;
            let second = now.as_secs();
            if second != usage.second {
                usage.second = second;
                usage.second_ru = 0.0;
            }
            usage.second_ru += ru;
            usage.peak_second_ru = usage.peak_second_ru.max(usage.second_ru);
        }
        if let (Some(key), Ok(mut keys)) = (key, self.keys.lock()) {
            *keys.entry(key.to_string()).or_insert(0.0) += ru;
        }
    }

    /// RU consumed per logical partition key, most first.
    pub fn key_usage(&self) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> =
            self.keys.lock().map(|k| k.iter().map(|(k, v)| (k.clone(), *v)).collect()).unwrap_or_default();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out
    }

    /// What each partition consumed and how many of its requests were refused, by partition id.
    pub fn usage(&self) -> Vec<(u32, PartitionUsage)> {
        let mut out: Vec<(u32, PartitionUsage)> =
            self.buckets.lock().map(|b| b.iter().map(|(id, (_, u))| (*id, *u)).collect()).unwrap_or_default();
        out.sort_by_key(|(id, _)| *id);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn a_partition_is_refused_past_its_budget_and_waits_out_its_debt() {
        let clock = Arc::new(ManualClock::default());
        let throttle = Throttle::new(400.0, clock.clone());
        // Two partitions: 200 RU/s each.
        assert_eq!(throttle.partition_budget(2), 200.0);
        for _ in 0..39 {
            throttle.admit(0, 2).unwrap();
            throttle.consume(0, 2, 5.0, Some("a"));
        }
        throttle.admit(0, 2).unwrap();
        // One huge request overdraws: 195 + 500 = 695 RU in a 200 RU/s bucket.
        throttle.consume(0, 2, 500.0, Some("b"));
        let refused = throttle.admit(0, 2).unwrap_err();
        assert_eq!(
            (refused.kind, refused.status_code(), refused.kind.substatus()),
            (ErrorKind::TooManyRequests, 429, Some(3200))
        );
        assert_eq!(refused.retry_after_ms, Some(2475));
        assert!(refused.message.starts_with("Request rate is large."));
        // The other partition is unaffected.
        throttle.admit(1, 2).unwrap();
        // The debt drains at the budget's rate: refused until 2.475 s have passed.
        clock.advance(Duration::from_millis(2400));
        assert!(throttle.admit(0, 2).is_err());
        clock.advance(Duration::from_millis(80));
        throttle.admit(0, 2).unwrap();
        let usage = throttle.usage();
        assert_eq!((usage[0].1.consumed, usage[0].1.admitted, usage[0].1.throttled), (695.0, 41, 2));
        assert_eq!(usage[0].1.peak_second_ru, 695.0);
        assert_eq!(throttle.key_usage(), vec![("b".to_string(), 500.0), ("a".to_string(), 195.0)]);
    }
}
