//! The service's rules for an offer (provisioned throughput): its bounds, its steps and the
//! minimum a container or a shared database may have, used where a container is created with one
//! (`client.rs`) and where it is read or replaced (`provisioning.rs`).

use cosmoql_storage::throughput as tp;
use cosmoql_storage::{Provisioned, StorageError};

use crate::Error;

/// The most RU/s an offer may have (the service's default account limit).
pub const MAX_OFFER: f64 = 1_000_000.0;

/// The lowest `provisioned` may be: for a container (`containers` `None`) or a shared database of
/// `containers` containers, holding `storage_gb`, after a highest offer of `highest`.
pub(crate) fn minimum(provisioned: Provisioned, storage_gb: f64, highest: f64, containers: Option<usize>) -> f64 {
    match (provisioned, containers) {
        (Provisioned::Manual(_), None) => tp::minimum_manual(storage_gb, highest),
        (Provisioned::Autoscale { .. }, None) => tp::minimum_autoscale_max(storage_gb, highest),
        (Provisioned::Manual(_), Some(n)) => tp::minimum_shared_manual(storage_gb, highest, n),
        (Provisioned::Autoscale { .. }, Some(n)) => tp::minimum_shared_autoscale_max(storage_gb, highest, n),
    }
}

/// Refuses (400) an offer outside `[minimum, 1,000,000]` or off its step (100 RU/s manual, 1000
/// RU/s autoscale), in the service's words.
pub(crate) fn check_offer(provisioned: Provisioned, minimum: f64) -> Result<(), Error> {
    let (ru, step, what) = match provisioned {
        Provisioned::Manual(ru) => (ru, 100.0, "throughput"),
        Provisioned::Autoscale { max } => (max, 1000.0, "autoscale max throughput"),
    };
    if !ru.is_finite() || ru < minimum || ru > MAX_OFFER || ru % step != 0.0 {
        return Err(Error::Storage(StorageError::bad_request(format!(
            "The offer should have valid {what} values between {minimum} and {MAX_OFFER} inclusive in increments of \
             {step}."
        ))));
    }
    Ok(())
}
