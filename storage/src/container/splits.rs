//! Splits: a physical partition past its thresholds hands the upper half of its logical
//! partitions to a new one (and the requested splits of throughput changes and tests).

use super::*;

impl Container {
    pub(super) fn over_threshold(&self, d: &PartitionData) -> bool {
        d.items > self.settings.split_max_items || d.bytes > self.settings.split_max_bytes
    }

    /// Splits `p` in two at a boundary between logical partitions, if it is still live and over a
    /// threshold. Returns whether it split.
    pub(super) fn split(&self, p: &Arc<PhysicalPartition>) -> bool {
        // A checkpoint is copying the partitions: the next write past the thresholds splits.
        let Some(_layout) = self.layout.try_lock() else { return false };
        let _gate = self.gate();
        let mut map = self.partitions.write();
        let mut data = p.data.write();
        if data.retired || !self.over_threshold(&data) {
            return false;
        }
        self.split_locked(&mut map, p, &mut data)
    }

    pub(super) fn split_locked(
        &self,
        map: &mut Vec<Arc<PhysicalPartition>>,
        p: &Arc<PhysicalPartition>,
        data: &mut PartitionData,
    ) -> bool {
        if data.logical.len() < 2 {
            return false; // a logical partition is never split
        }
        // The boundary: the first logical partition past half of the items (never the first one,
        // so both halves hold something).
        let half = data.items.div_ceil(2).max(1);
        let mut seen = 0;
        let mut boundary = None;
        for (i, (epk, lp)) in data.logical.iter().enumerate() {
            if i > 0 && seen >= half {
                boundary = Some(epk.clone());
                break;
            }
            seen += lp.len();
        }
        let boundary = match boundary {
            Some(b) => b,
            // All but the last logical partition hold less than half: split before the last one.
            None => match data.logical.keys().next_back() {
                Some(last) => last.clone(),
                None => return false,
            },
        };
        self.split_at(map, p, data, boundary)
    }

    /// Splits `p` at `boundary` (strictly inside its range): the logical partitions below it stay
    /// left, the rest go right (either side may be empty).
    pub(super) fn split_at(
        &self,
        map: &mut Vec<Arc<PhysicalPartition>>,
        p: &Arc<PhysicalPartition>,
        data: &mut PartitionData,
        boundary: Epk,
    ) -> bool {
        if boundary <= p.min || boundary >= p.max {
            return false;
        }
        let Some(at) = map.iter().position(|q| Arc::ptr_eq(q, p)) else { return false };
        if !self.log_split(&boundary) {
            return false; // the log refused it (disk full): the partition stays whole
        }
        let upper = data.logical.split_off(&boundary);
        let lower = std::mem::take(&mut data.logical);
        let policy = Arc::clone(data.index.policy());
        let index = std::mem::replace(&mut data.index, PartitionIndex::new(policy));
        let (lower_index, upper_index) = index.split(&boundary);
        let make = |min: Epk, max: Epk, logical: BTreeMap<Epk, LogicalPartition>, index: PartitionIndex| {
            let items = logical.values().map(LogicalPartition::len).sum();
            let bytes = logical.values().map(|lp| lp.bytes).sum();
            Arc::new(PhysicalPartition {
                id: self.next_partition_id.fetch_add(1, Ordering::Relaxed) as u32,
                min,
                max,
                data: RwLock::new(PartitionData {
                    retired: false,
                    history: BTreeMap::new(),
                    pending: Vec::new(),
                    changes: OnceLock::new(),
                    logical,
                    items,
                    bytes,
                    index,
                    writes: 0,
                }),
            })
        };
        let left = make(p.min.clone(), boundary.clone(), lower, lower_index);
        let right = make(boundary.clone(), p.max.clone(), upper, upper_index);
        // The kept writes go with their keys.
        for (lsn, change) in std::mem::take(&mut data.history) {
            let child = if change.epk < boundary { &left } else { &right };
            child.data.write().history.insert(lsn, change);
        }
        data.retired = true;
        data.items = 0;
        data.bytes = 0;
        let children = [left.id, right.id];
        map.splice(at..=at, [left, right]);
        self.splits.fetch_add(1, Ordering::Relaxed);
        // A partition with an explicit throughput: its children share it evenly.
        if let Some(t) = self.throughput.read().as_ref() {
            t.split_target(p.id, children);
        }
        true
    }

    /// Splits physical partitions, the widest EPK range first, each at the middle of its range,
    /// until there are at least `n` (as the service does when throughput is raised past what the
    /// partitions can serve: 10,000 RU/s each). Returns how many splits it made.
    pub fn split_to(&self, n: usize) -> usize {
        let mut splits = 0;
        let _layout = self.layout.lock();
        let _gate = self.gate();
        let mut map = self.partitions.write();
        while map.len() < n {
            // How much key space a split would give away: the widest range goes first.
            let width = |p: &PhysicalPartition| {
                cosmoql_catalog::epk::midpoint(&p.min, &p.max)
                    .map(|mid| mid.top_u128().saturating_sub(p.min.top_u128()))
            };
            let Some(p) = map.iter().filter(|p| width(p).is_some()).max_by_key(|p| width(p)).cloned() else { break };
            let Some(mid) = cosmoql_catalog::epk::midpoint(&p.min, &p.max) else { break };
            let mut data = p.data.write();
            if !self.split_at(&mut map, &p, &mut data, mid) {
                break;
            }
            splits += 1;
        }
        splits
    }

    /// Splits the physical partition `id` at the middle of its EPK range; the children's ids, or
    /// `None` when there is no such partition or its range is too narrow.
    pub fn split_partition_evenly(&self, id: u32) -> Option<[u32; 2]> {
        let _layout = self.layout.lock();
        let _gate = self.gate();
        let mut map = self.partitions.write();
        let p = Arc::clone(map.iter().find(|p| p.id == id)?);
        let mid = cosmoql_catalog::epk::midpoint(&p.min, &p.max)?;
        let mut data = p.data.write();
        if !self.split_at(&mut map, &p, &mut data, mid) {
            return None;
        }
        let at = map.iter().position(|q| q.min == p.min)?;
        Some([map[at].id, map.get(at + 1)?.id])
    }

    /// Whether [`Container::split_partition_evenly`] can split partition `id`: it exists and
    /// its EPK range has a middle (only the log refusing the split can still stop it).
    pub fn can_split_evenly(&self, id: u32) -> bool {
        let map = self.partitions.read();
        map.iter().find(|p| p.id == id).is_some_and(|p| cosmoql_catalog::epk::midpoint(&p.min, &p.max).is_some())
    }

    /// Splits the physical partition holding `epk` now, whatever its size (tests and tools use
    /// this to force splits). Returns false when it holds fewer than two logical partitions.
    pub fn force_split(&self, epk: &Epk) -> bool {
        let _layout = self.layout.lock();
        let _gate = self.gate();
        let mut map = self.partitions.write();
        let p = Arc::clone(&map[Self::index_for(&map, epk)]);
        let mut data = p.data.write();
        self.split_locked(&mut map, &p, &mut data)
    }
}
