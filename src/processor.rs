//! An embedded change-feed processor: leases per feed range and checkpoints kept in a lease
//! container, at-least-once delivery, and a lag estimate per range (the SDKs' change feed
//! processor, run by the caller's loop instead of background tasks).
//!
//! Each lease is an item of the lease container (keyed on `/id`) for one feed range of the
//! monitored container, made when the processor first starts: its owner, when the owner last
//! renewed it, and the continuation processed so far. A round ([`ChangeFeedProcessor::run_once`])
//! takes the leases that are free or whose owner stopped renewing them (with an etag check, so two
//! instances never both take one), reads a page of each range it holds, hands it to the handler,
//! and checkpoints the page's continuation only when the handler succeeded: a failed or
//! interrupted batch is delivered again. A lease's range stays valid when partitions split (a
//! range may span several partitions).

use cosmoql_storage::{ChangeFeedStart, Epk, FeedRange, PartitionKey, StorageError};
use cosmoql_value::Value;

use crate::client::ContainerClient;
use crate::Error;

/// A lease not renewed for this long (clock seconds) may be taken by another instance.
pub const LEASE_EXPIRY_SECONDS: u64 = 60;

/// What one processor instance does.
#[derive(Debug, Clone)]
pub struct ChangeFeedProcessor {
    monitored: ContainerClient,
    leases: ContainerClient,
    /// The processor's name: instances of the same processor share its leases.
    name: String,
    /// This instance.
    instance: String,
    start: ChangeFeedStart,
    max_items: usize,
}

/// One lease's state as the lag estimator sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaseLag {
    /// The lease item's id.
    pub lease: String,
    /// Its owner, if any.
    pub owner: Option<String>,
    /// Changes written and not yet processed.
    pub pending: u64,
}

impl ChangeFeedProcessor {
    /// A processor `name`, instance `instance`, reading `monitored` from `start` (for ranges
    /// without a checkpoint yet), keeping its leases in `leases` (a container keyed on `/id`).
    pub fn new(monitored: &ContainerClient, leases: &ContainerClient, name: &str, instance: &str) -> Self {
        ChangeFeedProcessor {
            monitored: monitored.clone(),
            leases: leases.clone(),
            name: name.to_string(),
            instance: instance.to_string(),
            start: ChangeFeedStart::Beginning,
            max_items: 100,
        }
    }

    /// Where ranges without a checkpoint start (default: the beginning).
    pub fn start_from(mut self, start: ChangeFeedStart) -> Self {
        self.start = start;
        self
    }

    /// At most this many changes per range per round (default 100).
    pub fn max_items(mut self, n: usize) -> Self {
        self.max_items = n.max(1);
        self
    }

    fn now(&self) -> u64 {
        self.leases.container.clock_now()
    }

    /// The lease items of this processor, making one per feed range of the monitored container
    /// the first time.
    fn lease_items(&self) -> Result<Vec<Value>, Error> {
        let prefix = format!("{}.", self.name);
        let query = || -> Result<Vec<Value>, Error> {
            self.leases.query_items_blocking(
                crate::Query::from("SELECT * FROM c WHERE STARTSWITH(c.id, @p)").with_parameter("@p", &prefix)?,
                crate::QueryOptions::default(),
            )
        };
        let all = query()?;
        if !all.is_empty() {
            return Ok(all);
        }
        for range in self.monitored.container.feed_ranges() {
            let FeedRange::Epk(min, max) = range else { continue };
            let lease = Value::object([
                ("id".to_string(), Value::from(format!("{prefix}{}-{}", min.to_hex(), max.to_hex()))),
                ("min".to_string(), Value::from(min.to_hex())),
                ("max".to_string(), Value::from(max.to_hex())),
                ("owner".to_string(), Value::Null),
                ("renewed".to_string(), Value::from(0.0)),
                ("continuation".to_string(), Value::Null),
            ]);
            // Another instance may have made it first: that one stands.
            match self.leases.create_item::<Value>(&lease) {
                Ok(_) => {}
                Err(e) if e.status() == Some(409) => {}
                Err(e) => return Err(e),
            }
        }
        query()
    }

    fn range_of(lease: &Value) -> Result<FeedRange, Error> {
        let epk =
            |name: &str| {
                lease.get(name).as_str().and_then(|h| Epk::from_hex(h).ok()).ok_or_else(|| {
                    Error::Storage(StorageError::bad_request(format!("a lease without a valid `{name}`")))
                })
            };
        Ok(FeedRange::Epk(epk("min")?, epk("max")?))
    }

    /// Writes `lease` back if nobody changed it since it was read (`false` if somebody did).
    fn save(&self, lease: &Value) -> Result<bool, Error> {
        let id = lease.get("id").as_str().unwrap_or_default().to_string();
        let etag = lease.get("_etag").as_str().map(str::to_string);
        match self.leases.replace_item::<Value>(PartitionKey::from(id.as_str()), &id, lease, etag.as_deref()) {
            Ok(_) => Ok(true),
            Err(e) if e.status() == Some(412) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// One round: take the free and expired leases, renew the held ones, and for each read a page
    /// of changes and hand it to `handler`; a page is checkpointed only when `handler` returns
    /// `Ok` (otherwise it comes again next round). Returns how many changes were handled.
    pub fn run_once(&self, mut handler: impl FnMut(&[Value]) -> Result<(), String>) -> Result<usize, Error> {
        let now = self.now();
        let mut handled = 0;
        for mut lease in self.lease_items()? {
            let owner = lease.get("owner").as_str().map(str::to_string);
            let renewed = lease.get("renewed").as_f64().unwrap_or(0.0) as u64;
            let ours = owner.as_deref() == Some(self.instance.as_str());
            let free = owner.is_none() || now.saturating_sub(renewed) >= LEASE_EXPIRY_SECONDS;
            if !ours && !free {
                continue;
            }
            if let Some(map) = lease.as_object_mut() {
                map.insert("owner".into(), Value::from(self.instance.as_str()));
                map.insert("renewed".into(), Value::from(now as f64));
            }
            if !self.save(&lease)? {
                continue; // another instance took it first
            }
            let lease = self.leases.read_item::<Value>(
                PartitionKey::from(lease.get("id").as_str().unwrap_or_default()),
                lease.get("id").as_str().unwrap_or_default(),
            )?;
            let mut lease = lease.item;
            let range = Self::range_of(&lease)?;
            let token = lease.get("continuation").as_str().map(str::to_string);
            let page =
                self.monitored.read_change_feed::<Value>(&range, self.start, token.as_deref(), self.max_items)?;
            if !page.items.is_empty() {
                if let Err(why) = handler(&page.items) {
                    // Not checkpointed: the same changes come again.
                    let _ = why;
                    continue;
                }
                handled += page.items.len();
            }
            if let Some(map) = lease.as_object_mut() {
                map.insert("continuation".into(), Value::from(page.continuation.as_str()));
            }
            self.save(&lease)?;
        }
        Ok(handled)
    }

    /// Each lease's owner and how many changes its range holds past its checkpoint.
    pub fn estimate_lag(&self) -> Result<Vec<LeaseLag>, Error> {
        let mut out = Vec::new();
        for lease in self.lease_items()? {
            let range = Self::range_of(&lease)?;
            let mut token = lease.get("continuation").as_str().map(str::to_string);
            let mut pending = 0u64;
            loop {
                let page = self.monitored.read_change_feed::<Value>(&range, self.start, token.as_deref(), 1000)?;
                if page.items.is_empty() {
                    break;
                }
                pending += page.items.len() as u64;
                token = Some(page.continuation);
            }
            out.push(LeaseLag {
                lease: lease.get("id").as_str().unwrap_or_default().to_string(),
                owner: lease.get("owner").as_str().map(str::to_string),
                pending,
            });
        }
        Ok(out)
    }
}
