//! The service's rules for an offer (provisioned throughput): its bounds and steps, the minimum a
//! container or a shared database may have, and the physical partitions an offer makes or needs.
//! Each rule is one of the documented formulas ("Service quotas", "Best practices for scaling
//! provisioned throughput", the autoscale FAQ); each test below is one of the docs' worked
//! examples.

use std::sync::Arc;

use super::{Clock, Provisioned, Throttle, MAX_RU_PER_PARTITION};
use crate::error::{Result, StorageError};

/// The physical partitions an offer of `ru_per_second` and `storage_bytes` of data need: one per
/// 10,000 RU/s and one per 50 GB, at least one.
pub fn partitions_for(ru_per_second: f64, storage_bytes: u64) -> usize {
    let by_ru = (ru_per_second / MAX_RU_PER_PARTITION).ceil();
    let by_storage = (storage_bytes as f64 / (50.0 * GB)).ceil();
    by_ru.max(by_storage).clamp(1.0, 1e6) as usize
}

/// Rounds `ru` up to a multiple of `step`.
fn round_up(ru: f64, step: f64) -> f64 {
    (ru / step).ceil() * step
}

/// The lowest manual RU/s a container may be set to: `MAX(400, storage in GB * 1, highest RU/s
/// ever provisioned / 100)`, in increments of 100.
pub fn minimum_manual(storage_gb: f64, highest_ever: f64) -> f64 {
    round_up(400f64.max(storage_gb).max(highest_ever / 100.0), 100.0)
}

/// The lowest autoscale maximum a container may be set to: `MAX(1000, storage in GB * 10, highest
/// RU/s ever provisioned / 10)`, rounded up to a multiple of 1000.
pub fn minimum_autoscale_max(storage_gb: f64, highest_ever: f64) -> f64 {
    round_up(1000f64.max(storage_gb * 10.0).max(highest_ever / 10.0), 1000.0)
}

/// The lowest manual RU/s of a database whose containers share it: the container's rule and
/// `400 + MAX(containers - 25, 0) * 100`.
pub fn minimum_shared_manual(storage_gb: f64, highest_ever: f64, containers: usize) -> f64 {
    let per_container = 400.0 + containers.saturating_sub(25) as f64 * 100.0;
    minimum_manual(storage_gb, highest_ever).max(per_container)
}

/// The lowest autoscale maximum of a shared database: the container's rule and
/// `1000 + MAX(containers - 25, 0) * 1000`.
pub fn minimum_shared_autoscale_max(storage_gb: f64, highest_ever: f64, containers: usize) -> f64 {
    let per_container = 1000.0 + containers.saturating_sub(25) as f64 * 1000.0;
    minimum_autoscale_max(storage_gb, highest_ever).max(per_container)
}

/// The physical partitions a container (or a shared database) starts with: one per 6,000 RU/s of
/// manual throughput, one per 10,000 RU/s of an autoscale maximum or of a shared database's
/// throughput ("Starting RU/s = physical partitions * initial throughput per partition").
pub fn partitions_at_creation(provisioned: Provisioned, shared: bool) -> usize {
    let per_partition = match provisioned {
        Provisioned::Manual(_) if !shared => 6000.0,
        _ => MAX_RU_PER_PARTITION,
    };
    (provisioned.ceiling() / per_partition).ceil().clamp(1.0, 1e6) as usize
}

/// The highest RU/s `partitions` physical partitions can be scaled to at once, without splits.
pub fn instant_maximum(partitions: usize) -> f64 {
    partitions as f64 * MAX_RU_PER_PARTITION
}

/// The physical partitions after raising the throughput of `partitions` to `ru_per_second`:
/// beyond [`instant_maximum`], partitions split (each parent in two) until there are
/// `ROUNDUP(RU/s / 10,000)`.
pub fn partitions_after_scaling(partitions: usize, ru_per_second: f64) -> usize {
    partitions.max((ru_per_second / MAX_RU_PER_PARTITION).ceil().clamp(1.0, 1e6) as usize)
}

/// What to scale `partitions` partitions to first so that reaching `target` RU/s splits every
/// partition evenly (then lower to `target`): `10,000 * P * 2^ROUNDUP(LOG2(S / (10,000 * P)))`;
/// `target` itself when no split is needed.
pub fn prescale_for_even_splits(partitions: usize, target: f64) -> f64 {
    let now = instant_maximum(partitions.max(1));
    if target <= now {
        return target;
    }
    now * 2f64.powf((target / now).log2().ceil())
}

const GB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The most RU/s an offer may have (the service's default account limit).
pub const MAX_OFFER: f64 = 1_000_000.0;

/// The lowest `provisioned` may be: for a container (`containers` `None`) or a shared database of
/// `containers` containers, holding `storage_gb`, after a highest offer of `highest`.
pub fn minimum(provisioned: Provisioned, storage_gb: f64, highest: f64, containers: Option<usize>) -> f64 {
    match (provisioned, containers) {
        (Provisioned::Manual(_), None) => minimum_manual(storage_gb, highest),
        (Provisioned::Autoscale { .. }, None) => minimum_autoscale_max(storage_gb, highest),
        (Provisioned::Manual(_), Some(n)) => minimum_shared_manual(storage_gb, highest, n),
        (Provisioned::Autoscale { .. }, Some(n)) => minimum_shared_autoscale_max(storage_gb, highest, n),
    }
}

/// Refuses (400) an offer outside `[minimum, 1,000,000]` or off its step (100 RU/s manual, 1000
/// RU/s autoscale), in the service's words.
pub fn check_offer(provisioned: Provisioned, minimum: f64) -> Result<()> {
    let (ru, step, what) = match provisioned {
        Provisioned::Manual(ru) => (ru, 100.0, "throughput"),
        Provisioned::Autoscale { max } => (max, 1000.0, "autoscale max throughput"),
    };
    if !ru.is_finite() || ru < minimum || ru > MAX_OFFER || ru % step != 0.0 {
        return Err(StorageError::bad_request(format!(
            "The offer should have valid {what} values between {minimum} and {MAX_OFFER} inclusive in increments of \
             {step}."
        )));
    }
    Ok(())
}

/// A container's own offer at its creation, if it has one: checked against the service's rules
/// (400 off its bounds or steps), its throttle on `clock`, and `initial_partitions` raised to the
/// physical partitions the offer starts with.
pub fn dedicated_at_creation(
    provisioned: Option<Provisioned>,
    initial_partitions: &mut usize,
    clock: &Arc<dyn Clock>,
) -> Result<Option<Arc<Throttle>>> {
    let Some(p) = provisioned else { return Ok(None) };
    check_offer(p, minimum(p, 0.0, 0.0, None))?;
    *initial_partitions = (*initial_partitions).max(partitions_at_creation(p, false));
    Ok(Some(Arc::new(Throttle::provisioned(p, Arc::clone(clock)))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_minimums_with_their_worked_examples() {
        // "a container is provisioned with 400 RU/s and 0-GB storage. You increase the throughput
        // to 50,000 RU/s and import 20 GB of data. The minimum RU/s is now 500 RU/s. Over time,
        // the storage grows to 2,000 GB. The minimum RU/s is now 2000 RU/s."
        assert_eq!(minimum_manual(0.0, 400.0), 400.0);
        assert_eq!(minimum_manual(20.0, 50_000.0), 500.0);
        assert_eq!(minimum_manual(2000.0, 50_000.0), 2000.0);
        // "if the highest RU/s you've ever scaled to is 100,000 RU/s, the lowest RU/s you can set
        // in the future is 1000 RU/s."
        assert_eq!(minimum_manual(0.0, 100_000.0), 1000.0);
        // Autoscale: 50,000 and 20 GB: 5000; 2,000 GB: 20,000.
        assert_eq!(minimum_autoscale_max(20.0, 50_000.0), 5000.0);
        assert_eq!(minimum_autoscale_max(2000.0, 50_000.0), 20_000.0);
        // The autoscale FAQ: 20,000 max and 1,500 GB: 15,000; scaled to 150,000 with 100 GB: 15,000.
        assert_eq!(minimum_autoscale_max(1500.0, 20_000.0), 15_000.0);
        assert_eq!(minimum_autoscale_max(100.0, 150_000.0), 15_000.0);
        // "When we scaled up to 200,000 RU/s, the lowest manual RU/s we can now set in the future
        // is 2000 RU/s. The lowest autoscale max RU/s we can set is 20,000 RU/s."
        assert_eq!((minimum_manual(0.0, 200_000.0), minimum_autoscale_max(0.0, 200_000.0)), (2000.0, 20_000.0));
        // A shared database of 400 RU/s, 15 GB, 10 containers: 400; with 30 containers: 900.
        assert_eq!(minimum_shared_manual(15.0, 400.0, 10), 400.0);
        assert_eq!(minimum_shared_manual(15.0, 400.0, 30), 900.0);
        // Autoscale: 1000 max, 15 GB, 10 containers: 1000. With 30 containers the current page
        // prints `1000 + MAX(30 - 25, 0) * 1000 RU/s = 5000`, which its own formula makes 6000;
        // the earlier page says "if you have 30 containers, the lowest autoscale maximum RU/s you
        // can set is 6000 RU/s".
        assert_eq!(minimum_shared_autoscale_max(15.0, 1000.0, 10), 1000.0);
        assert_eq!(minimum_shared_autoscale_max(15.0, 1000.0, 30), 6000.0);
    }

    #[test]
    fn the_documented_partition_counts_with_their_worked_examples() {
        // "to get 25 physical partitions, using manual throughput, you first provision
        // 25 * 6000 RU/s = 150,000 RU/s"; with autoscale or a shared database, 250,000 RU/s.
        assert_eq!(partitions_at_creation(Provisioned::Manual(150_000.0), false), 25);
        assert_eq!(partitions_at_creation(Provisioned::Autoscale { max: 250_000.0 }, false), 25);
        assert_eq!(partitions_at_creation(Provisioned::Manual(250_000.0), true), 25);
        // 18,000 RU/s over three physical partitions, 6,000 each.
        assert_eq!(partitions_at_creation(Provisioned::Manual(18_000.0), false), 3);
        assert_eq!(partitions_at_creation(Provisioned::Manual(400.0), false), 1);
        // "five physical partitions and 30,000 RU/s ... You can increase the RU/s to 50,000 RU/s
        // instantly."
        assert_eq!(instant_maximum(5), 50_000.0);
        assert_eq!(partitions_after_scaling(5, 50_000.0), 5);
        // "three physical partitions and 30,000 RU/s ... increase the throughput to 45,000 RU/s
        // ... in total, there are ROUNDUP(45,000 / 10,000) = 5 physical partitions".
        assert_eq!(partitions_after_scaling(3, 45_000.0), 5);
        // Lowering never merges.
        assert_eq!(partitions_after_scaling(5, 400.0), 5);
        // "five physical partitions, 50,000 RU/s and want to scale to 150,000 RU/s. We should
        // first set 200,000 RU/s, and then lower to 150,000 RU/s."
        assert_eq!(prescale_for_even_splits(5, 150_000.0), 200_000.0);
        // "first set RU/s = 4 * 10,000 RU/s per partition = 40,000 RU/s" (2 partitions, 30,000).
        assert_eq!(prescale_for_even_splits(2, 30_000.0), 40_000.0);
        assert_eq!(prescale_for_even_splits(5, 40_000.0), 40_000.0);
        // A shared database: one partition per 10,000 RU/s; 50 GB per partition.
        assert_eq!(partitions_for(400.0, 0), 1);
        assert_eq!(partitions_for(25_000.0, 0), 3);
        assert_eq!(partitions_for(400.0, 120 * 1024 * 1024 * 1024), 3);
    }

    #[test]
    fn an_offer_off_its_step_or_below_its_minimum_is_refused_in_the_services_words() {
        assert!(check_offer(Provisioned::Manual(400.0), 400.0).is_ok());
        let low = check_offer(Provisioned::Manual(300.0), 400.0).unwrap_err();
        assert_eq!(low.status_code(), 400);
        assert!(low.message.contains("between 400 and 1000000 inclusive in increments of 100"), "{}", low.message);
        assert!(check_offer(Provisioned::Manual(450.0), 400.0).is_err());
        assert!(check_offer(Provisioned::Autoscale { max: 1500.0 }, 1000.0).is_err());
        assert!(check_offer(Provisioned::Manual(MAX_OFFER + 100.0), 400.0).is_err());
        assert_eq!(minimum(Provisioned::Manual(400.0), 0.0, 0.0, Some(30)), 900.0);
    }
}
