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
//!
//! This module is the one home of request units: `cost.rs` prices every operation, this file
//! keeps the budgets and throttles, `offer.rs` holds the service's rules for an offer (bounds,
//! steps, minimums, partition counts), `admission.rs` how a client waits for admission and
//! spends a page's charge, and `replay.rs` the advisor's what-if replay of a workload.

pub mod admission;
pub mod cost;
pub mod offer;
mod replay;

pub use admission::RetryOptions;
pub use offer::*;
pub use replay::Replay;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::{Result, StorageError};

pub use crate::clock::{Clock, ManualClock, SystemClock};

/// The kind of request that consumed request units, for the per-key accounts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequestKind {
    /// Point reads.
    Read,
    /// Creates, replaces, upserts, patches and deletes.
    Write,
    /// Queries scoped to the key.
    Query,
    /// Transactional batches.
    Batch,
}

/// Request units one logical partition key consumed, by kind of request (exact: the service's
/// own report only samples).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeyUsage {
    /// The key, as JSON.
    pub key: String,
    pub read: f64,
    pub write: f64,
    pub query: f64,
    pub batch: f64,
}

impl KeyUsage {
    pub fn total(&self) -> f64 {
        self.read + self.write + self.query + self.batch
    }

    fn add(&mut self, kind: RequestKind, ru: f64) {
        match kind {
            RequestKind::Read => self.read += ru,
            RequestKind::Write => self.write += ru,
            RequestKind::Query => self.query += ru,
            RequestKind::Batch => self.batch += ru,
        }
    }
}

impl fmt::Display for KeyUsage {
    /// `["dev-1"] 12.00 RU (read 2.00, write 10.00)`: the kinds that consumed any.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kinds: Vec<String> =
            [("read", self.read), ("write", self.write), ("query", self.query), ("batch", self.batch)]
                .iter()
                .filter(|(_, ru)| *ru > 0.0)
                .map(|(name, ru)| format!("{name} {ru:.2}"))
                .collect();
        write!(f, "{} {:.2} RU ({})", self.key, self.total(), kinds.join(", "))
    }
}

/// How throughput is provisioned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Provisioned {
    /// A fixed number of RU per second.
    Manual(f64),
    /// Autoscale up to `max` RU per second: the system scales instantly between 10% of `max` and
    /// `max` as the busiest partition needs, so every partition may use its share of `max`.
    Autoscale { max: f64 },
}

impl Provisioned {
    /// The most RU per second a request can use: the manual figure, or the autoscale maximum.
    pub fn ceiling(self) -> f64 {
        match self {
            Provisioned::Manual(ru) => ru,
            Provisioned::Autoscale { max } => max,
        }
    }
}

impl fmt::Display for Provisioned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Provisioned::Manual(ru) => write!(f, "{ru} RU/s (manual)"),
            Provisioned::Autoscale { max } => write!(f, "autoscale {} - {max} RU/s", max / 10.0),
        }
    }
}

/// A physical partition's throughput never exceeds this: an offer above `P` times it splits
/// partitions.
pub const MAX_RU_PER_PARTITION: f64 = 10_000.0;

/// The least throughput a redistribution leaves a physical partition.
pub const MIN_PARTITION_TARGET: f64 = 100.0;

/// Burst capacity: a partition banks what it leaves unused, up to this many seconds of its budget…
pub const BURST_SECONDS: f64 = 300.0;
/// …and spends it at up to this rate, when its budget is below it.
pub const BURST_RU_PER_SECOND: f64 = 3_000.0;

/// One partition's consumption: RU in the bucket at a time, and burst capacity banked.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    level: f64,
    at: Duration,
    credit: f64,
}

impl Bucket {
    fn new(now: Duration) -> Self {
        Bucket { level: 0.0, at: now, credit: 0.0 }
    }

    /// The bucket drained to now: it empties at the budget's rate; what the budget leaves unused
    /// is banked as burst capacity (when on), which drains the bucket further at up to the burst
    /// rate.
    fn drain(&mut self, budget: f64, burst: bool, now: Duration) {
        let elapsed = now.saturating_sub(self.at).as_secs_f64();
        self.at = now;
        let capacity = budget * elapsed;
        let used = self.level.min(capacity);
        self.level -= used;
        if burst && budget < BURST_RU_PER_SECOND {
            self.credit = (self.credit + capacity - used).min(BURST_SECONDS * budget);
            let extra = self.level.min((BURST_RU_PER_SECOND - budget) * elapsed).min(self.credit);
            self.level -= extra;
            self.credit -= extra;
        }
    }

    /// What a partition may hold in its bucket and still be admitted: a second's budget, or a
    /// second at the burst rate while it has burst capacity.
    fn limit(&self, budget: f64, burst: bool) -> f64 {
        if burst && budget < BURST_RU_PER_SECOND && self.credit > 0.0 {
            BURST_RU_PER_SECOND.min(budget + self.credit)
        } else {
            budget
        }
    }
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
    /// RU consumed from burst capacity (above the partition's budget).
    pub burst_ru: f64,
    second: u64,
    second_ru: f64,
}

impl PartitionUsage {
    /// Counts `ru` consumed at `now` against a budget of `budget` RU/s: the total, the clock
    /// second's and its peak, and what went over the budget (burst). Returns the second's RU
    /// against the budget (1: all of it; what autoscale scales to).
    fn account(&mut self, ru: f64, budget: f64, now: Duration) -> f64 {
        let second = now.as_secs();
        self.consumed += ru;
        if second != self.second {
            self.second = second;
            self.second_ru = 0.0;
        }
        self.burst_ru += (self.second_ru + ru - budget).max(0.0) - (self.second_ru - budget).max(0.0);
        self.second_ru += ru;
        self.peak_second_ru = self.peak_second_ru.max(self.second_ru);
        self.second_ru / budget.max(f64::MIN_POSITIVE)
    }
}

/// What can change about a throttle once it exists.
#[derive(Debug, Clone)]
struct Offer {
    provisioned: Provisioned,
    burst: bool,
    /// Explicit per-partition budgets (throughput redistribution); partitions not listed share
    /// what the listed ones leave, evenly.
    targets: std::collections::BTreeMap<u32, f64>,
    /// The highest ceiling ever set (the minimum throughput depends on it).
    highest: f64,
}

/// A container's (or a shared database's) provisioned throughput and its per-partition buckets.
#[derive(Debug)]
pub struct Throttle {
    offer: Mutex<Offer>,
    clock: Arc<dyn Clock>,
    buckets: Mutex<HashMap<u32, (Bucket, PartitionUsage)>>,
    /// RU consumed per logical partition key (as JSON) and kind of request, for the skew report:
    /// exact, one entry per key that consumed any.
    keys: Mutex<HashMap<String, KeyUsage>>,
    /// Autoscale: the highest RU/s scaled to, per clock hour (what the hour is billed at).
    scaled: Mutex<std::collections::BTreeMap<u64, f64>>,
}

impl Throttle {
    /// Manual throughput of `ru_per_second`.
    pub fn new(ru_per_second: f64, clock: Arc<dyn Clock>) -> Self {
        Throttle::provisioned(Provisioned::Manual(ru_per_second), clock)
    }

    pub fn provisioned(provisioned: Provisioned, clock: Arc<dyn Clock>) -> Self {
        let offer = Offer { provisioned, burst: false, targets: Default::default(), highest: provisioned.ceiling() };
        Throttle {
            offer: Mutex::new(offer),
            clock,
            buckets: Mutex::new(HashMap::new()),
            keys: Mutex::new(HashMap::new()),
            scaled: Mutex::new(Default::default()),
        }
    }

    fn offer(&self) -> Offer {
        self.offer.lock().map(|o| o.clone()).unwrap_or(Offer {
            provisioned: Provisioned::Manual(0.0),
            burst: false,
            targets: Default::default(),
            highest: 0.0,
        })
    }

    /// How the throughput is provisioned now.
    pub fn provisioning(&self) -> Provisioned {
        self.offer().provisioned
    }

    /// Changes the offer; budgets follow at once. An explicit redistribution is reset to even
    /// (as the service does when the total changes).
    pub fn set_provisioned(&self, provisioned: Provisioned) {
        if let Ok(mut o) = self.offer.lock() {
            o.provisioned = provisioned;
            o.highest = o.highest.max(provisioned.ceiling());
            o.targets.clear();
        }
    }

    /// The highest RU/s (manual) or maximum (autoscale) ever provisioned.
    pub fn highest_ever(&self) -> f64 {
        self.offer().highest
    }

    /// Turns burst capacity on or off.
    pub fn set_burst(&self, on: bool) {
        if let Ok(mut o) = self.offer.lock() {
            o.burst = on;
        }
    }

    pub fn burst(&self) -> bool {
        self.offer().burst
    }

    /// The container's offer, in RU per second (the autoscale maximum for autoscale).
    pub fn ru_per_second(&self) -> f64 {
        self.provisioning().ceiling()
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Redistributes throughput across physical partitions (the service's "Custom" throughput
    /// policy): each of `targets` gives a partition (by id, one of `partitions`) its RU/s, the
    /// others keep what they have, and the offer becomes the sum. Refused (400), changing
    /// nothing, for an unknown or repeated partition or a target outside 100-10,000 RU/s (a
    /// larger one splits the partition first; the caller does that).
    pub fn redistribute(&self, targets: &[(u32, f64)], partitions: &[u32]) -> Result<()> {
        Self::check_targets(targets, partitions, MAX_RU_PER_PARTITION)?;
        let mut budgets = self.budgets(partitions);
        budgets.extend(targets.iter().copied());
        self.set_budgets(budgets);
        Ok(())
    }

    /// Checks redistribution targets: each names one of `partitions`, once, with a finite RU/s
    /// from 100 to `most`.
    pub fn check_targets(targets: &[(u32, f64)], partitions: &[u32], most: f64) -> Result<()> {
        for (i, (id, ru)) in targets.iter().enumerate() {
            if !partitions.contains(id) {
                return Err(StorageError::bad_request(format!("no physical partition {id} in the container")));
            }
            if targets[..i].iter().any(|(other, _)| other == id) {
                return Err(StorageError::bad_request(format!("physical partition {id} is targeted twice")));
            }
            if !ru.is_finite() || *ru < MIN_PARTITION_TARGET || *ru > most {
                return Err(StorageError::bad_request(format!(
                    "the throughput of physical partition {id} must be between {MIN_PARTITION_TARGET} and \
                     {MAX_RU_PER_PARTITION} RU/s (up to 20,000 splits it), not {ru}"
                )));
            }
        }
        Ok(())
    }

    /// Each of `partitions`' budget now, in RU per second: they sum to the offer.
    pub fn budgets(&self, partitions: &[u32]) -> std::collections::BTreeMap<u32, f64> {
        let offer = self.offer();
        partitions.iter().map(|id| (*id, Self::budget_in(&offer, *id, partitions.len()))).collect()
    }

    /// Sets every partition's budget (the "Custom" policy); the offer becomes their sum.
    pub fn set_budgets(&self, budgets: std::collections::BTreeMap<u32, f64>) {
        let total: f64 = budgets.values().sum();
        if let Ok(mut o) = self.offer.lock() {
            o.provisioned = match o.provisioned {
                Provisioned::Manual(_) => Provisioned::Manual(total),
                Provisioned::Autoscale { .. } => Provisioned::Autoscale { max: total },
            };
            o.highest = o.highest.max(total);
            o.targets = budgets;
        }
    }

    /// Back to an even split of the same offer (the "Equal" policy).
    pub fn reset_distribution(&self) {
        if let Ok(mut o) = self.offer.lock() {
            o.targets.clear();
        }
    }

    /// The explicit per-partition throughput under the "Custom" policy (empty: "Equal", an even
    /// split).
    pub fn distribution(&self) -> Vec<(u32, f64)> {
        self.offer().targets.into_iter().collect()
    }

    /// A partition with an explicit throughput split: its children share it evenly.
    pub fn split_target(&self, parent: u32, children: [u32; 2]) {
        if let Ok(mut o) = self.offer.lock() {
            if let Some(ru) = o.targets.remove(&parent) {
                for child in children {
                    o.targets.insert(child, ru / 2.0);
                }
            }
        }
    }

    /// The budget of `partition`, one of `partitions` physical partitions, in RU per second.
    pub fn budget_of(&self, partition: u32, partitions: usize) -> f64 {
        Self::budget_in(&self.offer(), partition, partitions)
    }

    fn budget_in(offer: &Offer, partition: u32, partitions: usize) -> f64 {
        let total = offer.provisioned.ceiling();
        if let Some(ru) = offer.targets.get(&partition) {
            return *ru;
        }
        let named: f64 = offer.targets.values().sum();
        let rest = partitions.saturating_sub(offer.targets.len()).max(1);
        ((total - named) / rest as f64).max(0.0)
    }

    /// A shared database's physical partitions: one per 10,000 RU/s of its offer, at least one.
    pub fn shared_partitions(&self) -> usize {
        partitions_for(self.ru_per_second(), 0)
    }

    /// Each of `partitions` physical partitions' budget under an even split, in RU per second.
    pub fn partition_budget(&self, partitions: usize) -> f64 {
        self.ru_per_second() / partitions.max(1) as f64
    }

    /// Admits a request to `partition` (one of `partitions`), or refuses it with a 429 saying
    /// how long to wait.
    pub fn admit(&self, partition: u32, partitions: usize) -> Result<()> {
        let offer = self.offer();
        let budget = Self::budget_in(&offer, partition, partitions);
        let now = self.clock.now();
        let mut buckets = self.buckets.lock().map_err(|_| StorageError::internal("throttle lock poisoned"))?;
        let (bucket, usage) = buckets.entry(partition).or_insert((Bucket::new(now), PartitionUsage::default()));
        bucket.drain(budget, offer.burst, now);
        let limit = bucket.limit(budget, offer.burst);
        if bucket.level < limit {
            usage.admitted += 1;
            return Ok(());
        }
        usage.throttled += 1;
        // Until the bucket holds less than one second's budget again.
        let wait = (bucket.level - budget) / budget.max(f64::MIN_POSITIVE);
        Err(StorageError::throttled(((wait * 1000.0).ceil().min(u64::MAX as f64) as u64).max(1)))
    }

    /// Adds a request's charge to `partition`'s bucket (and to its logical partition `key`'s
    /// account under the request's kind, when the request had one key).
    pub fn consume(&self, partition: u32, partitions: usize, ru: f64, key: Option<(&str, RequestKind)>) {
        let ru = if ru.is_finite() { ru.max(0.0) } else { 0.0 };
        let offer = self.offer();
        let budget = Self::budget_in(&offer, partition, partitions);
        let now = self.clock.now();
        let second = now.as_secs();
        let mut normalized = None;
        if let Ok(mut buckets) = self.buckets.lock() {
            let (bucket, usage) = buckets.entry(partition).or_insert((Bucket::new(now), PartitionUsage::default()));
            bucket.drain(budget, offer.burst, now);
            bucket.level += ru;
            normalized = Some(usage.account(ru, budget, now));
        }
        if let (Provisioned::Autoscale { max }, Some(n)) = (offer.provisioned, normalized) {
            // The system scales to what the busiest partition needs, between 10% and 100%.
            let scaled = (n * max).clamp(max / 10.0, max);
            if let Ok(mut hours) = self.scaled.lock() {
                let hour = hours.entry(second / 3600).or_insert(max / 10.0);
                *hour = hour.max(scaled);
            }
        }
        if let (Some((key, kind)), Ok(mut keys)) = (key, self.keys.lock()) {
            keys.entry(key.to_string())
                .or_insert_with(|| KeyUsage { key: key.to_string(), ..KeyUsage::default() })
                .add(kind, ru);
        }
    }

    /// Autoscale: the highest RU/s scaled to in each clock hour that saw requests (the hour is
    /// billed at it; an idle hour at 10% of the maximum), oldest first. Empty for manual
    /// throughput.
    pub fn autoscale_hours(&self) -> Vec<(u64, f64)> {
        self.scaled.lock().map(|h| h.iter().map(|(k, v)| (*k, *v)).collect()).unwrap_or_default()
    }

    /// RU consumed per logical partition key, by kind, most first.
    pub fn key_usage(&self) -> Vec<KeyUsage> {
        let mut out: Vec<KeyUsage> = self.keys.lock().map(|k| k.values().cloned().collect()).unwrap_or_default();
        out.sort_by(|a, b| b.total().total_cmp(&a.total()).then_with(|| a.key.cmp(&b.key)));
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

impl Throttle {
    /// Writes the offer (what persists of a throttle: consumption is not kept across restarts).
    pub(crate) fn encode_offer(&self, w: &mut crate::codec::Writer) {
        let o = self.offer();
        match o.provisioned {
            Provisioned::Manual(ru) => w.u8(0).f64(ru),
            Provisioned::Autoscale { max } => w.u8(1).f64(max),
        };
        w.u8(o.burst as u8).f64(o.highest).u32(o.targets.len() as u32);
        for (id, ru) in &o.targets {
            w.u32(*id).f64(*ru);
        }
    }

    /// Writes an optional throttle's offer (a flag, then the offer).
    pub(crate) fn encode_optional(throttle: Option<&Throttle>, w: &mut crate::codec::Writer) {
        match throttle {
            Some(t) => {
                w.u8(1);
                t.encode_offer(w);
            }
            None => {
                w.u8(0);
            }
        }
    }

    /// What [`Throttle::encode_optional`] wrote.
    pub(crate) fn decode_optional(
        r: &mut crate::codec::Reader<'_>,
        clock: &Arc<dyn Clock>,
    ) -> crate::codec::Decoded<Option<Arc<Throttle>>> {
        Ok(match r.u8()? {
            1 => Some(Arc::new(Throttle::decode_offer(r, Arc::clone(clock))?)),
            _ => None,
        })
    }

    /// A throttle with the offer [`Throttle::encode_offer`] wrote.
    pub(crate) fn decode_offer(r: &mut crate::codec::Reader<'_>, clock: Arc<dyn Clock>) -> crate::codec::Decoded<Self> {
        let provisioned = match r.u8()? {
            0 => Provisioned::Manual(r.f64()?),
            _ => Provisioned::Autoscale { max: r.f64()? },
        };
        let burst = r.u8()? != 0;
        let highest = r.f64()?;
        let mut targets = std::collections::BTreeMap::new();
        for _ in 0..r.u32()? {
            targets.insert(r.u32()?, r.f64()?);
        }
        let throttle = Throttle::provisioned(provisioned, clock);
        if let Ok(mut o) = throttle.offer.lock() {
            *o = Offer { provisioned, burst, targets, highest };
        }
        Ok(throttle)
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
            throttle.consume(0, 2, 5.0, Some(("a", RequestKind::Write)));
        }
        throttle.admit(0, 2).unwrap();
        // One huge request overdraws: 195 + 500 = 695 RU in a 200 RU/s bucket.
        throttle.consume(0, 2, 500.0, Some(("b", RequestKind::Query)));
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
        let keys = throttle.key_usage();
        assert_eq!(keys.iter().map(|k| (k.key.as_str(), k.total())).collect::<Vec<_>>(), [("b", 500.0), ("a", 195.0)]);
        assert_eq!((keys[0].query, keys[1].write), (500.0, 195.0));
        assert_eq!(keys[0].to_string(), "b 500.00 RU (query 500.00)");
    }

    #[test]
    fn autoscale_serves_each_partition_its_share_of_the_maximum_and_bills_the_hour_at_its_peak() {
        let clock = Arc::new(ManualClock::default());
        let throttle = Throttle::provisioned(Provisioned::Autoscale { max: 20_000.0 }, clock.clone());
        assert_eq!(throttle.partition_budget(2), 10_000.0);
        // "if P_1 has used 6,000 RUs and P_2 has used 8,000 RUs, the normalized utilization is
        // MAX(6,000 RU / 10,000 RU, 8,000 RU / 10,000 RU) = 0.8": the system scales to 16,000.
        throttle.admit(0, 2).unwrap();
        throttle.consume(0, 2, 6000.0, None);
        throttle.admit(1, 2).unwrap();
        throttle.consume(1, 2, 8000.0, None);
        assert_eq!(throttle.autoscale_hours(), vec![(0, 16_000.0)]);
        // An hour that never scaled beyond 10% is billed at 0.1 * Tmax.
        clock.advance(Duration::from_secs(3600));
        throttle.consume(0, 2, 50.0, None);
        assert_eq!(throttle.autoscale_hours(), vec![(0, 16_000.0), (1, 2000.0)]);
        // "you'll see 429 responses when you consume more than [the max] in a single second":
        // a partition past its 10,000 is refused.
        clock.advance(Duration::from_secs(10));
        throttle.consume(1, 2, 10_000.0, None);
        assert!(throttle.admit(1, 2).is_err());
        assert!(throttle.admit(0, 2).is_ok());
        // Manual throughput has no autoscale hours.
        assert!(Throttle::new(400.0, clock).autoscale_hours().is_empty());
    }

    /// How many of `seconds` seconds' requests of `ru` RU, `per_second` a second, a partition
    /// admits.
    fn admitted(throttle: &Throttle, clock: &ManualClock, seconds: u64, per_second: u64, ru: f64) -> Vec<u64> {
        (0..seconds)
            .map(|_| {
                let mut n = 0;
                for _ in 0..per_second {
                    if throttle.admit(0, 1).is_ok() {
                        throttle.consume(0, 1, ru, None);
                        n += 1;
                    }
                    clock.advance(Duration::from_millis(1000 / per_second));
                }
                n
            })
            .collect()
    }

    #[test]
    fn burst_capacity_banks_five_idle_minutes_and_spends_them_at_up_to_3000_ru_per_second() {
        // "a physical partition that has 100 RU/s of provisioned throughput and is idle for 5
        // minutes ... can accumulate a maximum of 100 RU/s * 300 seconds = 30,000 RU of burst
        // capacity ... the partition can burst up to 3000 RU/s for up 30,000 RU / 3000 RU/s = 10
        // seconds."
        let clock = Arc::new(ManualClock::default());
        let throttle = Throttle::new(100.0, clock.clone());
        throttle.set_burst(true);
        throttle.admit(0, 1).unwrap();
        clock.advance(Duration::from_secs(600));
        // 10 requests of 300 RU a second: 3000 RU/s asked.
        let per_second = admitted(&throttle, &clock, 30, 10, 300.0);
        let bursting = per_second.iter().take_while(|n| **n >= 9).count();
        // The bank pays what the budget does not: 30,000 RU at 2,900 RU/s over the budget's 100.
        assert!((10..=11).contains(&bursting), "{per_second:?}");
        // Then the budget alone: 100 RU/s, a 300 RU request every 3 seconds.
        let tail: u64 = per_second[15..].iter().sum();
        assert!((4..=6).contains(&tail), "{per_second:?}");
        let usage = throttle.usage()[0].1;
        assert!(usage.burst_ru > 25_000.0, "{usage:?}");
        // Without burst capacity the same partition serves its 100 RU/s from the start.
        let plain = Throttle::new(100.0, clock.clone());
        plain.admit(0, 1).unwrap();
        clock.advance(Duration::from_secs(600));
        let per_second = admitted(&plain, &clock, 10, 10, 300.0);
        assert!(per_second.iter().sum::<u64>() <= 5, "{per_second:?}");
        // A partition of 3000 RU/s or more cannot use burst capacity.
        let big = Throttle::new(3000.0, clock.clone());
        big.set_burst(true);
        big.admit(0, 1).unwrap();
        clock.advance(Duration::from_secs(600));
        let per_second = admitted(&big, &clock, 5, 10, 600.0);
        assert!(per_second.iter().skip(1).all(|n| *n <= 5), "{per_second:?}");
    }

    #[test]
    fn redistribution_sets_some_partitions_keeps_the_others_and_the_offer_follows_the_sum() {
        let clock = Arc::new(ManualClock::default());
        let throttle = Throttle::new(6000.0, clock);
        let ids = [0, 1, 2];
        // The docs' example: 6,000 RU/s over three partitions, set to 2,000 / 4,000 / 1,000: the
        // offer becomes 7,000.
        throttle.redistribute(&[(0, 2000.0), (1, 4000.0), (2, 1000.0)], &ids).unwrap();
        assert_eq!(throttle.provisioning(), Provisioned::Manual(7000.0));
        assert_eq!(
            (throttle.budget_of(0, 3), throttle.budget_of(1, 3), throttle.budget_of(2, 3)),
            (2000.0, 4000.0, 1000.0)
        );
        // One partition alone: the others keep theirs.
        throttle.redistribute(&[(2, 3000.0)], &ids).unwrap();
        assert_eq!(throttle.provisioning(), Provisioned::Manual(9000.0));
        assert_eq!(throttle.budget_of(0, 3), 2000.0);
        // A split partition's children share its throughput.
        throttle.split_target(1, [3, 4]);
        assert_eq!((throttle.budget_of(3, 4), throttle.budget_of(4, 4)), (2000.0, 2000.0));
        // Refused: an unknown partition, less than 100 or more than 10,000 RU/s.
        for (target, says) in [
            ((9, 500.0), "no physical partition 9"),
            ((0, 50.0), "must be between 100 and 10000 RU/s"),
            ((0, 12_000.0), "must be between 100 and 10000 RU/s"),
        ] {
            let e = throttle.redistribute(&[target], &[0, 2, 3, 4]).unwrap_err();
            assert!(e.message.contains(says), "{}", e.message);
        }
        // Back to an even split of the same offer.
        throttle.reset_distribution();
        assert_eq!(throttle.budget_of(0, 4), 2250.0);
    }
}
