//! The memory budget of a query: the operators that must hold rows (a sort without a limit,
//! GROUP BY and aggregates that keep values, DISTINCT, ranking, a FROM subquery's groups) charge
//! what they hold, and the query fails with a clear error instead of exhausting the machine when
//! the total passes the budget. Results themselves are not charged: they stream to the caller a
//! page at a time.
//!
//! Sizes are estimates of what Rust holds (a value's tree, a row's bindings; a stored item in a
//! row is a shared reference, not a copy), computed once per value held.

use std::sync::atomic::{AtomicU64, Ordering};

use cosmoql_value::Value;

use crate::error::{QueryError, QueryErrorKind};
use crate::row::{Binding, Row};

/// The budget when the request sets none: 1 GiB.
pub const DEFAULT_MEMORY_BUDGET: u64 = 1 << 30;

/// What one query may hold, and what it holds now.
#[derive(Debug)]
pub struct MemoryBudget {
    limit: u64,
    used: AtomicU64,
    peak: AtomicU64,
}

impl MemoryBudget {
    pub fn new(limit: u64) -> Self {
        MemoryBudget { limit, used: AtomicU64::new(0), peak: AtomicU64::new(0) }
    }

    /// Takes `bytes` for `what` (`"ORDER BY"`, `"GROUP BY"`, ...); an error past the budget.
    pub fn charge(&self, bytes: u64, what: &str) -> Result<(), QueryError> {
        let before = self.used.fetch_add(bytes, Ordering::Relaxed);
        let now = before.saturating_add(bytes);
        if now > self.limit {
            self.used.fetch_sub(bytes, Ordering::Relaxed);
            return Err(QueryError::new(
                QueryErrorKind::Resource,
                format!(
                    "the query needs more than its memory budget of {} for {what}; give it a larger budget (QueryOptions::memory_budget, --memory-budget) or hold fewer rows (a LIMIT, a narrower filter)",
                    human(self.limit)
                ),
                None,
            ));
        }
        self.peak.fetch_max(now, Ordering::Relaxed);
        Ok(())
    }

    /// Gives `bytes` back (a row a bounded sort dropped).
    pub fn release(&self, bytes: u64) {
        let _ = self.used.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| Some(u.saturating_sub(bytes)));
    }

    /// The most held at once.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }
}

/// What one operator holds against a budget; it gives it all back when dropped (a subquery that
/// runs once per row holds its groups only while it runs).
#[derive(Debug)]
pub struct Charge<'b> {
    budget: &'b MemoryBudget,
    bytes: u64,
}

impl<'b> Charge<'b> {
    pub fn new(budget: &'b MemoryBudget) -> Self {
        Charge { budget, bytes: 0 }
    }

    /// Takes `bytes` more for `what`; an error past the budget (nothing taken then).
    pub fn add(&mut self, bytes: u64, what: &str) -> Result<(), QueryError> {
        self.budget.charge(bytes, what)?;
        self.bytes = self.bytes.saturating_add(bytes);
        Ok(())
    }

    /// Gives `bytes` back early (a row a bounded sort dropped).
    pub fn release(&mut self, bytes: u64) {
        let bytes = bytes.min(self.bytes);
        self.budget.release(bytes);
        self.bytes -= bytes;
    }
}

impl Drop for Charge<'_> {
    fn drop(&mut self) {
        self.budget.release(self.bytes);
    }
}

/// `1073741824` as `1 GiB`, `5000` as `5000 bytes`.
pub fn human(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{} {unit}", bytes / size);
        }
    }
    format!("{bytes} bytes")
}

/// About what a value holds in memory.
pub fn value_bytes(v: &Value) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        total = total.saturating_add(match v {
            Value::String(s) => 24 + s.len() as u64,
            Value::Array(a) => {
                stack.extend(a.iter());
                32
            }
            Value::Object(m) => {
                for (k, e) in m.iter() {
                    total = total.saturating_add(32 + k.len() as u64);
                    stack.push(e);
                }
                48
            }
            _ => 16,
        });
    }
    total
}

/// About what a row holds (a stored item is shared with the store: a reference).
pub fn row_bytes(row: &Row) -> u64 {
    row.iter()
        .map(|b| match b {
            Binding::Value(v) => 16 + value_bytes(v),
            _ => 32,
        })
        .fold(0u64, u64::saturating_add)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_refuses_past_its_limit_and_takes_back_releases() {
        let b = MemoryBudget::new(100);
        b.charge(60, "ORDER BY").unwrap();
        let err = b.charge(60, "ORDER BY").unwrap_err();
        assert_eq!(err.kind, QueryErrorKind::Resource);
        assert!(err.message.contains("memory budget of 100 bytes for ORDER BY"), "{}", err.message);
        b.release(60);
        b.charge(100, "GROUP BY").unwrap();
        assert_eq!(b.peak(), 100);
        b.release(100);
        {
            let mut c = Charge::new(&b);
            c.add(80, "GROUP BY").unwrap();
            c.release(30);
            assert!(c.add(60, "GROUP BY").is_err());
        }
        // A dropped charge gives everything back.
        b.charge(100, "GROUP BY").unwrap();
        assert_eq!(human(DEFAULT_MEMORY_BUDGET), "1 GiB");
        assert!(value_bytes(&cosmoql_value::parse_json(r#"{"a": [1, "xyz"]}"#).unwrap()) > 100);
    }
}
