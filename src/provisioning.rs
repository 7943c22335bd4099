//! Provisioned throughput through the embedded API: reading and replacing a container's or a
//! shared database's offer (manual or autoscale) with the service's rules (the documented
//! minimums, steps of 100 or 1000, splits past 10,000 RU/s per physical partition), burst
//! capacity, and redistribution across physical partitions. The budgets and the throttling
//! themselves are [`cosmoql_storage::throughput`].

use std::sync::Arc;

use cosmoql_storage::throughput::{self as tp, MAX_RU_PER_PARTITION};
use cosmoql_storage::{Container, Provisioned, StorageError, Throttle};

use crate::client::{ContainerClient, DatabaseClient};
use crate::Error;
pub use cosmoql_storage::throughput::MAX_OFFER;
use cosmoql_storage::throughput::{check_offer, minimum};

/// A container's or a shared database's throughput as the API reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct ThroughputProperties {
    /// Manual RU/s or an autoscale maximum.
    pub provisioned: Provisioned,
    /// The lowest it may be set to now (manual RU/s, or autoscale maximum).
    pub minimum: f64,
    /// The highest it can be raised to at once, without splitting partitions (the service's
    /// `instantMaximumThroughput`).
    pub instant_maximum: f64,
    /// Physical partitions sharing it.
    pub partitions: usize,
    /// Each physical partition's RU/s now (the autoscale maximum's share for autoscale).
    pub per_partition: Vec<(u32, f64)>,
    /// Redistributed across partitions (the "Custom" policy) rather than split evenly.
    pub custom_distribution: bool,
    /// Burst capacity on.
    pub burst: bool,
    /// The database's throughput, shared by its containers.
    pub shared: bool,
    /// Autoscale: the highest RU/s scaled to in each clock hour with requests (billed so).
    pub autoscale_hours: Vec<(u64, f64)>,
}

const GB: f64 = 1024.0 * 1024.0 * 1024.0;

fn properties(throttle: &Throttle, ids: &[u32], minimum: f64, shared: bool) -> ThroughputProperties {
    let n = ids.len().max(1);
    ThroughputProperties {
        provisioned: throttle.provisioning(),
        minimum,
        instant_maximum: tp::instant_maximum(n),
        partitions: ids.len(),
        per_partition: ids.iter().map(|id| (*id, throttle.budget_of(*id, n))).collect(),
        custom_distribution: !throttle.distribution().is_empty(),
        burst: throttle.burst(),
        shared,
        autoscale_hours: throttle.autoscale_hours(),
    }
}

fn storage_gb(container: &Container) -> f64 {
    container.partitions().iter().map(|p| p.bytes).sum::<u64>() as f64 / GB
}

fn no_throughput(what: &str) -> Error {
    Error::Storage(StorageError::bad_request(format!("{what} has no provisioned throughput")))
}

impl ContainerClient {
    /// The container's own throughput, if it has one.
    pub fn read_throughput(&self) -> Option<ThroughputProperties> {
        let throttle = self.container.throughput()?;
        if self.container.throughput_is_shared() {
            let ids: Vec<u32> = (0..throttle.shared_partitions() as u32).collect();
            return Some(properties(&throttle, &ids, 0.0, true));
        }
        let minimum = minimum(throttle.provisioning(), storage_gb(&self.container), throttle.highest_ever(), None);
        Some(properties(&throttle, &self.container.partition_ids(), minimum, false))
    }

    /// Provisions the container's own throughput, or changes it, under the service's rules: at
    /// least the documented minimum (400 RU/s, 1 RU/s per GB stored, a hundredth of the highest
    /// ever; autoscale: 1000, 10 per GB, a tenth), in steps of 100 (autoscale 1000), at most
    /// 1,000,000. Raising past 10,000 RU/s per physical partition splits partitions (in two, the
    /// widest key range first) until there are `ROUNDUP(RU/s / 10,000)`. Refused while the
    /// throughput is redistributed across partitions (reset it first).
    pub fn replace_throughput(&self, provisioned: Provisioned) -> Result<ThroughputProperties, Error> {
        let existing = self.container.throughput().filter(|_| self.container.has_own_throughput());
        let highest = existing.as_ref().map_or(0.0, |t| t.highest_ever());
        check_offer(provisioned, minimum(provisioned, storage_gb(&self.container), highest, None))?;
        let throttle = match existing {
            Some(t) => {
                if !t.distribution().is_empty() {
                    return Err(Error::Storage(StorageError::bad_request(
                        "the container's throughput is redistributed across its physical partitions (a custom \
                         policy): change it by redistributing, or reset it to an even split first",
                    )));
                }
                t.set_provisioned(provisioned);
                t
            }
            None => {
                let t = Arc::new(Throttle::provisioned(provisioned, Arc::clone(&self.clock)));
                self.container.set_throughput(Some(Arc::clone(&t)));
                t
            }
        };
        let now = self.container.partition_count();
        self.container.split_to(tp::partitions_after_scaling(now, provisioned.ceiling()));
        self.container.persist_properties()?;
        Ok(self.read_throughput().unwrap_or_else(|| properties(&throttle, &[], 0.0, false)))
    }

    /// Turns burst capacity on or off for the container's throughput (the service's account
    /// setting, here per container): a partition under 3,000 RU/s banks up to 5 minutes of what
    /// it leaves unused and spends it at up to 3,000 RU/s.
    pub fn set_burst_capacity(&self, on: bool) -> Result<(), Error> {
        self.container.throughput().ok_or_else(|| no_throughput("the container"))?.set_burst(on);
        Ok(self.container.persist_properties()?)
    }

    /// Redistributes the container's throughput across its physical partitions: each target
    /// (partition id, RU/s from 100 to 20,000) sets that partition's share, the others keep
    /// theirs, and the offer becomes the sum. A target over 10,000 RU/s splits the partition in
    /// two, each child taking half. Every target is checked before anything changes: a refused
    /// request splits nothing. Changing the offer is refused until
    /// [`Self::reset_throughput_distribution`].
    pub fn redistribute_throughput(&self, targets: &[(u32, f64)]) -> Result<ThroughputProperties, Error> {
        let throttle = self
            .container
            .throughput()
            .filter(|_| self.container.has_own_throughput())
            .ok_or_else(|| no_throughput("the container"))?;
        let ids = self.container.partition_ids();
        Throttle::check_targets(targets, &ids, 2.0 * MAX_RU_PER_PARTITION)?;
        for (id, ru) in targets {
            if *ru > MAX_RU_PER_PARTITION && !self.container.can_split_evenly(*id) {
                return Err(Error::Storage(StorageError::bad_request(format!(
                    "physical partition {id} cannot be split"
                ))));
            }
        }
        // The shares before any split: a partition not targeted keeps its own, and a split
        // partition's children take half of their target each.
        let mut budgets = throttle.budgets(&ids);
        for (id, ru) in targets {
            if *ru <= MAX_RU_PER_PARTITION {
                budgets.insert(*id, *ru);
                continue;
            }
            let Some(children) = self.container.split_partition_evenly(*id) else {
                // Only a log that cannot take the split (a full disk) gets here: the splits
                // made so far stay, their children sharing their parent's budget, and the
                // budgets are otherwise as they were.
                return Err(Error::Storage(StorageError::bad_request(format!(
                    "physical partition {id} cannot be split: the database's log refused it"
                ))));
            };
            budgets.remove(id);
            budgets.extend(children.map(|c| (c, ru / 2.0)));
        }
        throttle.set_budgets(budgets);
        self.container.persist_properties()?;
        self.read_throughput().ok_or_else(|| no_throughput("the container"))
    }

    /// Back to an even split of the same offer (the "Equal" policy).
    pub fn reset_throughput_distribution(&self) -> Result<ThroughputProperties, Error> {
        self.container.throughput().ok_or_else(|| no_throughput("the container"))?.reset_distribution();
        self.container.persist_properties()?;
        self.read_throughput().ok_or_else(|| no_throughput("the container"))
    }
}

impl DatabaseClient {
    /// The database's shared throughput, if it has one.
    pub fn read_throughput(&self) -> Result<Option<ThroughputProperties>, Error> {
        let db = self.store.database(&self.id)?;
        let Some(throttle) = db.throughput() else { return Ok(None) };
        let (containers, bytes) = db.shared_usage();
        let minimum = minimum(throttle.provisioning(), bytes as f64 / GB, throttle.highest_ever(), Some(containers));
        let ids: Vec<u32> = (0..throttle.shared_partitions() as u32).collect();
        Ok(Some(properties(&throttle, &ids, minimum, true)))
    }

    /// Provisions throughput shared by the database's containers (those without their own), or
    /// changes it, under the service's rules for shared databases: at least the documented
    /// minimum (as a container's, and 400 + 100 per container past 25; autoscale 1000 + 1000),
    /// in steps of 100 (autoscale 1000). The containers share the database's physical
    /// partitions, one per 10,000 RU/s, each owning an equal slice of the key space; at most 25
    /// containers share it.
    pub fn replace_throughput(&self, provisioned: Provisioned) -> Result<ThroughputProperties, Error> {
        let db = self.store.database(&self.id)?;
        let existing = db.throughput();
        let (containers, bytes) = db.shared_usage();
        let highest = existing.as_ref().map_or(0.0, |t| t.highest_ever());
        check_offer(provisioned, minimum(provisioned, bytes as f64 / GB, highest, Some(containers)))?;
        match existing {
            Some(t) => t.set_provisioned(provisioned),
            None => db.set_throughput(Some(Arc::new(Throttle::provisioned(provisioned, Arc::clone(&self.clock))))),
        }
        db.persist_throughput()?;
        self.read_throughput()?.ok_or_else(|| no_throughput("the database"))
    }

    /// Turns burst capacity on or off for the database's shared throughput.
    pub fn set_burst_capacity(&self, on: bool) -> Result<(), Error> {
        let db = self.store.database(&self.id)?;
        db.throughput().ok_or_else(|| no_throughput("the database"))?.set_burst(on);
        Ok(db.persist_throughput()?)
    }
}
