//! Request charges: the one place where request units are computed, for item operations and
//! queries alike. Each charge is a pure function of what the operation did.
//!
//! The model today is a placeholder with the right shape (a later issue fits it to the service's
//! published figures): a read costs 1 RU per started KB, a write (create, replace, upsert,
//! patch) 5 RU per started KB, a delete 5 RU; a query 2.5 RU, plus 0.05 per item read and 0.01
//! per result.

use cosmoql_storage::OperationKind;

/// The charge of an item operation on an item of `bytes` bytes.
pub fn item_charge(kind: OperationKind, bytes: usize) -> f64 {
    let kb = bytes.div_ceil(1024).max(1) as f64;
    match kind {
        OperationKind::Read => kb,
        OperationKind::Write => 5.0 * kb,
        OperationKind::Delete => 5.0,
    }
}

/// The charge of one page of a query that read `retrieved` items and returned `output` results.
pub fn query_charge(retrieved: u64, output: u64) -> f64 {
    2.5 + 0.05 * retrieved as f64 + 0.01 * output as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_grow_with_what_an_operation_did() {
        assert_eq!(item_charge(OperationKind::Read, 0), 1.0);
        assert_eq!(item_charge(OperationKind::Read, 1024), 1.0);
        assert_eq!(item_charge(OperationKind::Read, 1025), 2.0);
        assert_eq!(item_charge(OperationKind::Write, 100 * 1024), 500.0);
        assert_eq!(item_charge(OperationKind::Delete, 100 * 1024), 5.0);
        assert!(query_charge(10, 1) > query_charge(0, 0));
    }
}
