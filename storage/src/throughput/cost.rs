//! Request charges: the one place where request units are computed, for item operations and
//! queries alike. Beside it, `throughput.rs` holds the budgets they are taken from and the
//! throttling; the facade's `admission.rs` (429 retries) and `provisioning.rs` (offers) use both.
//!
//! A charge is a pure function of what the operation did (sizes, index terms, index entries
//! and items read, partitions touched, results returned, the consistency level): no clock, no
//! randomness, the same work always the same charge. The coefficients live in [`MODEL`] and are
//! fitted to the figures the service publishes (the "request units" and "indexing" pages):
//!
//! | anchor | model |
//! |---|---|
//! | point read of a 1 KB item: 1 RU; of 100 KB: 10 RU | reads grow linearly with size between them |
//! | create of a 1 KB item with at most 5 indexed terms: 5 RU | writes: 5 RU at 1 KB to 50 RU at 100 KB, plus 0.2 RU per indexed term past 5 |
//! | create of 100 KB with indexing mode none: 50 RU | no index terms |
//! | replace: twice the create of the same item | a delete costs the create of the item it removes |
//! | Strong and Bounded Staleness reads: twice | [`Consistency::read_factor`] |
//! | a query by id and key on a small item: about 2.8-3.0 RU | 0.5 + 2.3 per physical partition touched |
//! | a full scan retrieving ~400 MB: about 4,060 RU | 0.01 RU per KB retrieved |
//!
//! Charges are rounded to two decimals once per request ([`round`]).

/// The coefficients of the request-charge model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChargeModel {
    /// A point read of 1 KB or less.
    pub read_1kb: f64,
    /// A point read of 100 KB.
    pub read_100kb: f64,
    /// A create of 1 KB or less, with at most `free_terms` index terms.
    pub write_1kb: f64,
    /// A create of 100 KB without index terms.
    pub write_100kb: f64,
    /// Index terms a write includes for free.
    pub free_terms: u64,
    /// Each index term past those.
    pub per_term: f64,
    /// A query's fixed cost.
    pub query_base: f64,
    /// Each physical partition a query page reads.
    pub per_partition: f64,
    /// Each KB of items a query loads.
    pub per_kb_retrieved: f64,
    /// Each index entry a query reads.
    pub per_index_entry: f64,
    /// Each KB of results a query returns.
    pub per_kb_output: f64,
}

/// The model in force.
pub const MODEL: ChargeModel = ChargeModel {
    read_1kb: 1.0,
    read_100kb: 10.0,
    write_1kb: 5.0,
    write_100kb: 50.0,
    free_terms: 5,
    per_term: 0.2,
    query_base: 0.5,
    per_partition: 2.3,
    per_kb_retrieved: 0.01,
    per_index_entry: 0.0001,
    per_kb_output: 0.001,
};

/// A read's consistency level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Consistency {
    Strong,
    BoundedStaleness,
    #[default]
    Session,
    ConsistentPrefix,
    Eventual,
}

impl Consistency {
    /// What reads cost at this level relative to Session: Strong and Bounded Staleness read
    /// from two replicas.
    pub fn read_factor(self) -> f64 {
        match self {
            Consistency::Strong | Consistency::BoundedStaleness => 2.0,
            _ => 1.0,
        }
    }
}

/// Classes of operations, by what they cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperationKind {
    Read,
    /// A new item (create, or an upsert that created).
    Create,
    /// A new version of an item (replace, patch, or an upsert of an existing item).
    Replace,
    Delete,
}

/// What an item operation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemWork {
    pub kind: OperationKind,
    /// The item's size as stored (for a delete, the deleted item's).
    pub bytes: usize,
    /// The item's index terms under the policy (see `cosmoql_storage::index::indexed_terms`).
    pub indexed_terms: u64,
}

impl ItemWork {
    /// A point read of an item of `bytes` stored bytes (a read enters no index terms).
    pub fn read(bytes: usize) -> ItemWork {
        ItemWork { kind: OperationKind::Read, bytes, indexed_terms: 0 }
    }
}

/// The charge of an item request the service refused: one that looked its item up first (404 not
/// found, 409 conflict, 412 precondition failed) costs the point read of at most 1 KB it did; one
/// refused before any work (400 bad request, 403 partition full, 413 too large, and a 429, which
/// "changed nothing") costs nothing. The service documents that failed requests are charged for
/// what they consumed ("requests that do not complete successfully due to application errors
/// such as 400, 412, 449"), not the amounts.
pub fn error_charge(kind: crate::error::ErrorKind) -> f64 {
    use crate::error::ErrorKind;
    match kind {
        ErrorKind::NotFound | ErrorKind::Conflict | ErrorKind::PreconditionFailed => MODEL.read_1kb,
        _ => 0.0,
    }
}

/// What one page of a query did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueryWork {
    /// Physical partitions read.
    pub partitions: usize,
    pub index_entries: u64,
    /// Items loaded, and their bytes.
    pub retrieved: u64,
    pub retrieved_bytes: u64,
    /// Results returned, and their bytes.
    pub output: u64,
    pub output_bytes: u64,
}

/// Rounds a charge to two decimals (once per request: `5.41`, never `5.409999999999999`).
pub fn round(ru: f64) -> f64 {
    (ru * 100.0).round() / 100.0
}

/// `bytes` in KB, at least 1.
fn kb(bytes: usize) -> f64 {
    (bytes as f64 / 1024.0).max(1.0)
}

/// Linear between the 1 KB and the 100 KB figures.
fn by_size(at_1kb: f64, at_100kb: f64, bytes: usize) -> f64 {
    at_1kb + (at_100kb - at_1kb) * (kb(bytes) - 1.0) / 99.0
}

/// The charge of creating an item of this size with this many index terms.
fn create(work: &ItemWork) -> f64 {
    let terms = work.indexed_terms.saturating_sub(MODEL.free_terms) as f64;
    by_size(MODEL.write_1kb, MODEL.write_100kb, work.bytes) + MODEL.per_term * terms
}

/// The charge of an item operation, rounded.
pub fn item_charge(work: &ItemWork, consistency: Consistency) -> f64 {
    round(match work.kind {
        OperationKind::Read => by_size(MODEL.read_1kb, MODEL.read_100kb, work.bytes) * consistency.read_factor(),
        OperationKind::Create => create(work),
        // The old version's terms go and the new one's come: twice a create.
        OperationKind::Replace => 2.0 * round(create(work)),
        // The item's terms go.
        OperationKind::Delete => create(work),
    })
}

/// The charge of one page of a query, rounded.
pub fn query_charge(work: &QueryWork) -> f64 {
    round(unrounded(work.partitions as u64, work.retrieved_bytes, work.index_entries, work.output_bytes))
}

/// The query charge formula before rounding.
fn unrounded(partitions: u64, retrieved_bytes: u64, index_entries: u64, output_bytes: u64) -> f64 {
    MODEL.query_base
        + MODEL.per_partition * partitions.max(1) as f64
        + MODEL.per_kb_retrieved * retrieved_bytes as f64 / 1024.0
        + MODEL.per_index_entry * index_entries as f64
        + MODEL.per_kb_output * output_bytes as f64 / 1024.0
}

/// Work a query is charged for: item bytes loaded and index entries read, as the executor
/// attributes them to the results (see `Emitter::note_work`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Work {
    pub bytes: u64,
    pub entries: u64,
}

impl Work {
    pub fn add(&mut self, other: Work) {
        self.bytes = self.bytes.saturating_add(other.bytes);
        self.entries = self.entries.saturating_add(other.entries);
    }

    /// What `self` holds beyond `earlier` (a counter's reading against an earlier one).
    pub fn since(self, earlier: Work) -> Work {
        Work { bytes: self.bytes.saturating_sub(earlier.bytes), entries: self.entries.saturating_sub(earlier.entries) }
    }
}

/// What a query's pages have been charged for so far, carried from page to page in the
/// continuation token: the charge of pages 1..k is the formula applied to these sums, so the
/// pages' charges add up to exactly what one page returning everything costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChargedSoFar {
    /// Physical partitions (charged once, on the first page).
    pub partitions: u64,
    pub work: Work,
    pub output_bytes: u64,
}

impl ChargedSoFar {
    /// The charge of everything so far, rounded (zero before the first page).
    pub fn charge(&self, consistency: Consistency) -> f64 {
        if *self == ChargedSoFar::default() {
            return 0.0;
        }
        round(
            unrounded(self.partitions, self.work.bytes, self.work.entries, self.output_bytes)
                * consistency.read_factor(),
        )
    }

    /// The charge of the page that took the sums from `before` to `self`: the difference of the
    /// two rounded totals, so that the pages' charges add up to the total's.
    pub fn page_charge(&self, before: &ChargedSoFar, consistency: Consistency) -> f64 {
        round(self.charge(consistency) - before.charge(consistency))
    }
}

/// How a query page's `charge` divides among the physical partitions it read, for the budgets
/// of provisioned throughput: each partition's share follows its own work (its fixed cost, the
/// bytes it loaded and the index entries it read; `partitions` lists them with that work), and
/// the shares add up to the charge.
pub fn partition_shares(charge: f64, partitions: &[(u32, u64, u64)]) -> Vec<(u32, f64)> {
    let weight = |bytes: u64, entries: u64| {
        MODEL.per_partition + MODEL.per_kb_retrieved * bytes as f64 / 1024.0 + MODEL.per_index_entry * entries as f64
    };
    let total: f64 = partitions.iter().map(|(_, b, e)| weight(*b, *e)).sum();
    partitions.iter().map(|(id, b, e)| (*id, charge * weight(*b, *e) / total.max(f64::MIN_POSITIVE))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(kind: OperationKind, kb: usize, terms: u64) -> ItemWork {
        ItemWork { kind, bytes: kb * 1024, indexed_terms: terms }
    }

    #[test]
    fn the_published_item_anchors() {
        let session = Consistency::Session;
        assert_eq!(item_charge(&item(OperationKind::Read, 1, 0), session), 1.00);
        assert_eq!(item_charge(&item(OperationKind::Read, 100, 0), session), 10.00);
        assert_eq!(item_charge(&ItemWork { kind: OperationKind::Read, bytes: 200, indexed_terms: 0 }, session), 1.00);
        assert_eq!(item_charge(&item(OperationKind::Create, 1, 5), session), 5.00);
        assert_eq!(item_charge(&item(OperationKind::Create, 1, 3), session), 5.00);
        assert_eq!(item_charge(&item(OperationKind::Create, 100, 0), session), 50.00);
        let create = item_charge(&item(OperationKind::Create, 4, 12), session);
        assert_eq!(item_charge(&item(OperationKind::Replace, 4, 12), session), 2.0 * create);
        assert_eq!(item_charge(&item(OperationKind::Read, 1, 0), Consistency::Strong), 2.00);
        assert_eq!(item_charge(&item(OperationKind::Read, 100, 0), Consistency::BoundedStaleness), 20.00);
        assert_eq!(item_charge(&item(OperationKind::Read, 1, 0), Consistency::Eventual), 1.00);
    }

    #[test]
    fn the_published_query_anchors() {
        // A query by id and key on a small item: about 2.8-3.0 RU.
        let point = QueryWork {
            partitions: 1,
            index_entries: 1,
            retrieved: 1,
            retrieved_bytes: 600,
            output: 1,
            output_bytes: 700,
        };
        let charge = query_charge(&point);
        assert!((2.8..=3.0).contains(&charge), "{charge}");
        // The documented full scan with UPPER(): 60,951 items, about 400 MB retrieved, 7 results,
        // about 4,060 RU (within 10%).
        let scan = QueryWork {
            partitions: 1,
            index_entries: 0,
            retrieved: 60_951,
            retrieved_bytes: 400 * 1024 * 1024,
            output: 7,
            output_bytes: 7 * 1024,
        };
        let charge = query_charge(&scan);
        assert!((charge - 4060.0).abs() <= 406.0, "{charge}");
        // Each extra physical partition adds at least 2.3 RU.
        let two = query_charge(&QueryWork { partitions: 2, ..point });
        assert!(two - query_charge(&point) >= 2.3 - 1e-9);
    }

    #[test]
    fn charges_have_two_decimals() {
        for bytes in [1, 1500, 3333, 77_777, 1_000_000] {
            for kind in [OperationKind::Read, OperationKind::Create, OperationKind::Replace] {
                let c = item_charge(&ItemWork { kind, bytes, indexed_terms: 17 }, Consistency::Session);
                assert_eq!(c, round(c));
                assert!(format!("{c}").split('.').nth(1).map_or(0, str::len) <= 2, "{c}");
            }
        }
    }
}
