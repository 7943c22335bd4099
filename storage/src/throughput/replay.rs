//! Replaying requests against an even split of an offer, on a clock of its own: the advisor's
//! what-if, with each partition's bucket kept as [`Throttle`] keeps it.

use std::time::Duration;

#[cfg(doc)]
use super::Throttle;
use super::{Bucket, PartitionUsage};

/// A replay of requests against an even split of `ru_per_second` over physical partitions, on a
/// clock of its own (the advisor's what-if): each partition's bucket as [`Throttle`] keeps it
/// (no burst capacity), without locks or key accounts, and runs of identical requests admitted
/// in one step.
#[derive(Debug, Clone)]
pub struct Replay {
    budget: f64,
    partitions: Vec<(Bucket, PartitionUsage)>,
    now: Duration,
}

impl Replay {
    pub fn new(ru_per_second: f64, partitions: usize) -> Self {
        let partitions = partitions.max(1);
        let ru_per_second = if ru_per_second.is_finite() { ru_per_second.max(0.0) } else { 0.0 };
        Replay {
            budget: ru_per_second / partitions as f64,
            partitions: vec![(Bucket::new(Duration::ZERO), PartitionUsage::default()); partitions],
            now: Duration::ZERO,
        }
    }

    /// Moves the clock to `now` (never back).
    pub fn advance(&mut self, now: Duration) {
        self.now = self.now.max(now);
    }

    /// `runs` identical requests now, each reading every partition of `slots` and costing
    /// `ru_each` on each: how many are admitted. Run `j` is admitted while every bucket holds
    /// less than its limit before it (`level + j * ru_each`, as one request at a time admits
    /// them up to the last bit of the sum); once one is refused the buckets no longer change,
    /// so every later one is too.
    ///
    /// # Panics
    /// On a slot past the partitions given to [`Replay::new`] (a bug in the caller).
    pub fn requests(&mut self, slots: &[usize], runs: u64, ru_each: f64) -> u64 {
        let ru_each = if ru_each.is_finite() { ru_each.max(0.0) } else { 0.0 };
        let (budget, now) = (self.budget, self.now);
        let mut admitted = runs;
        for &slot in slots {
            let bucket = &mut self.partitions[slot].0;
            bucket.drain(budget, false, now);
            let room = bucket.limit(budget, false) - bucket.level;
            let fit = if room <= 0.0 {
                0
            } else if ru_each == 0.0 {
                runs
            } else {
                ((room / ru_each).ceil().min(u64::MAX as f64) as u64).min(runs)
            };
            admitted = admitted.min(fit);
        }
        if admitted > 0 {
            for &slot in slots {
                let (bucket, usage) = &mut self.partitions[slot];
                let ru = ru_each * admitted as f64;
                bucket.level += ru;
                usage.account(ru, budget, now);
            }
        }
        admitted
    }

    /// Whether a second with `load[p]` RU on each partition `p` is quiet: every bucket empty
    /// now, and each load within its partition's budget, so every request is admitted and the
    /// bucket drains before the next second. A quiet second is counted in one step (the replay
    /// need not look at each request); otherwise nothing is counted and the replay goes request
    /// by request. The buckets are drained to now either way.
    pub fn quiet(&mut self, load: &[f64]) -> bool {
        let (budget, now) = (self.budget, self.now);
        if budget <= 0.0 || load.iter().any(|l| l.is_nan() || *l > budget) || load.len() > self.partitions.len() {
            return false;
        }
        for (bucket, _) in &mut self.partitions {
            bucket.drain(budget, false, now);
            if bucket.level > 0.0 {
                return false;
            }
        }
        for ((_, usage), ru) in self.partitions.iter_mut().zip(load) {
            if *ru > 0.0 {
                usage.account(*ru, budget, now);
            }
        }
        true
    }

    /// Skips `seconds` from now in one step, as if the seconds before repeated: each partition
    /// consumed `consumed[p]` RU in them, its busiest second stays what it was, and its bucket is
    /// left as it is.
    pub fn skip(&mut self, seconds: u64, consumed: &[f64]) {
        let by = Duration::from_secs(seconds);
        for ((bucket, usage), ru) in self.partitions.iter_mut().zip(consumed) {
            bucket.at = bucket.at.saturating_add(by);
            if ru.is_finite() && *ru > 0.0 {
                usage.consumed += ru;
            }
        }
        self.now = self.now.saturating_add(by);
    }

    /// RU each partition consumed so far.
    pub fn consumed(&self) -> Vec<f64> {
        self.partitions.iter().map(|(_, u)| u.consumed).collect()
    }

    /// Each partition's busiest second against its budget, in percent (at most 100).
    pub fn peak_normalized(&self) -> Vec<f64> {
        let budget = self.budget.max(f64::MIN_POSITIVE);
        self.partitions.iter().map(|(_, u)| (u.peak_second_ru / budget * 100.0).min(100.0)).collect()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::throughput::{ManualClock, Throttle};

    #[test]
    fn a_replay_admits_requests_as_the_throttle_does() {
        let clock = Arc::new(ManualClock::default());
        let throttle = Throttle::new(300.0, clock.clone());
        let mut replay = Replay::new(300.0, 3);
        let mut elapsed = Duration::ZERO;
        // A fixed sequence of draws (xorshift).
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut outcomes = [0; 2];
        for step in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x.is_multiple_of(5) {
                let by = Duration::from_millis(x >> 40 & 0x7FF);
                clock.advance(by);
                elapsed += by;
                replay.advance(elapsed);
            }
            let slot = (x >> 8) % 3;
            let ru = ((x >> 16) % 4000) as f64 / 37.0;
            let by_throttle = throttle.admit(slot as u32, 3).is_ok();
            if by_throttle {
                throttle.consume(slot as u32, 3, ru, None);
            }
            let by_replay = replay.requests(&[slot as usize], 1, ru) == 1;
            assert_eq!(by_throttle, by_replay, "request {step}");
            outcomes[usize::from(by_replay)] += 1;
        }
        assert!(outcomes.iter().all(|n| *n > 1000), "admitted and refused alike: {outcomes:?}");
        let budget = throttle.partition_budget(3);
        let peaks: Vec<f64> =
            throttle.usage().iter().map(|(_, u)| (u.peak_second_ru / budget * 100.0).min(100.0)).collect();
        assert_eq!(peaks, replay.peak_normalized());
    }
}
