//! Time to live: the container's default, each item's own, the expiry schedule and the purge of
//! expired items.

use super::*;
use crate::doc::DocRef;

impl Container {
    /// The default time to live (`defaultTtl`): `None` off, `-1` on without a default, `n` seconds.
    pub fn default_ttl(&self) -> Option<i64> {
        *self.default_ttl.read()
    }

    /// Replaces the default time to live (400 for a value other than -1 or 1 to 2,147,483,647);
    /// every item's expiry follows at once.
    pub fn set_default_ttl(&self, ttl: Option<i64>) -> Result<()> {
        if let Some(ttl) = ttl {
            validate_ttl(ttl, "defaultTtl")?;
        }
        *self.default_ttl.write() = ttl;
        let mut due = BTreeSet::new();
        if ttl.is_some() {
            let map = self.partitions.read();
            for p in map.iter() {
                let data = p.data.read();
                for (epk, lp) in &data.logical {
                    for item in lp.iter_from(0) {
                        let (Some(when), Some(id)) =
                            (self.expires_at(&item.meta), item.doc.root().get("id").and_then(|v| v.as_str()))
                        else {
                            continue;
                        };
                        due.insert((when, epk.clone(), Arc::from(id)));
                    }
                }
            }
        }
        let next = due.first().map_or(u64::MAX, |(when, _, _)| *when);
        *self.expiry.lock() = due;
        self.next_expiry.store(next, Ordering::Relaxed);
        self.persist_properties()
    }

    /// When an item written with `meta` expires (Unix seconds), under the current default: its
    /// own `ttl` applies only while the container has time to live on; -1 never expires.
    pub(super) fn expires_at(&self, meta: &ItemMeta) -> Option<u64> {
        let default = (*self.default_ttl.read())?;
        let ttl = meta.ttl.map_or(default, i64::from);
        (ttl > 0).then(|| meta.ts.saturating_add(ttl as u64))
    }

    /// Notes when an item just written expires.
    pub(super) fn schedule_expiry(&self, epk: &Epk, id: &Arc<str>, meta: &ItemMeta) {
        if let Some(when) = self.expires_at(meta) {
            self.expiry.lock().insert((when, epk.clone(), Arc::clone(id)));
            self.next_expiry.fetch_min(when, Ordering::Relaxed);
        }
    }

    /// Removes what has expired, if anything may have (a load and a comparison otherwise).
    pub fn expire(&self) {
        let next = self.next_expiry.load(Ordering::Relaxed);
        if next != u64::MAX && self.clock.read().unix_seconds() >= next {
            self.purge_expired();
        }
    }

    /// Removes the items whose time to live has passed; returns how many. Reads, writes and
    /// queries call it first, so an expired item is never seen.
    pub fn purge_expired(&self) -> usize {
        let now = self.clock.read().unix_seconds();
        let mut purged = 0;
        loop {
            let due = {
                let mut queue = self.expiry.lock();
                match queue.first() {
                    Some((when, _, _)) if *when <= now => queue.pop_first(),
                    _ => None,
                }
            };
            let Some((_, epk, id)) = due else { break };
            // The entry may be stale: the item rewritten (a later expiry) or deleted.
            let removed = self.write_partition(&epk, |data| {
                let current = existing(data, &epk, &id).map(|item| item.meta);
                Ok(match current {
                    Some(meta) if self.expires_at(&meta).is_some_and(|w| w <= now) => {
                        self.apply_delete_at(data, &epk, &id, true, None).is_some()
                    }
                    _ => false,
                })
            });
            if removed.unwrap_or(false) {
                purged += 1;
            }
        }
        let next = self.expiry.lock().first().map_or(u64::MAX, |(when, _, _)| *when);
        self.next_expiry.store(next, Ordering::Relaxed);
        self.expired.fetch_add(purged as u64, Ordering::Relaxed);
        purged
    }

    /// Items removed so far because their time to live passed.
    pub fn expired_count(&self) -> u64 {
        self.expired.load(Ordering::Relaxed)
    }

    /// The item's own time to live: its `ttl` property, which must be `-1` or 1 to 2,147,483,647
    /// seconds when the container has time to live on (otherwise it is an ordinary property,
    /// taken only when it is such an integer).
    pub(super) fn item_ttl(&self, ttl: Option<DocRef<'_>>) -> Result<Option<i32>> {
        let Some(v) = ttl else { return Ok(None) };
        let n = v.as_f64().filter(|n| n.fract() == 0.0 && n.abs() < 1e15).map(|n| n as i64);
        if self.default_ttl.read().is_some() {
            match n {
                Some(n) => validate_ttl(n, "ttl")?,
                None => {
                    return Err(StorageError::bad_request(format!(
                        "The input ttl '{}' is invalid. Ensure to provide a nonzero positive integer less than or \
                         equal to '{MAX_TTL}', or '-1' which means never expire.",
                        v.to_json_string().unwrap_or_default()
                    )))
                }
            }
        }
        Ok(n.filter(|n| *n == -1 || (1..=MAX_TTL).contains(n)).and_then(|n| i32::try_from(n).ok()))
    }
}
