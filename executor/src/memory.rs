//! The memory budget of a query: the operators that must hold rows (a sort without a limit,
//! GROUP BY and aggregates that keep values, DISTINCT, ranking, a FROM subquery's groups) charge
//! what they hold, and the query fails with a clear error instead of exhausting the machine when
//! the total passes the budget.
//!
//! Sizes are what the process really holds, as Rust lays values out and the allocator rounds its
//! blocks ([`heap_bytes`]): a value's shared blocks, an object's entries, index table and keys, a
//! row's bindings (a stored item in a row is a shared reference, not a copy), and the hash
//! tables and buffers that hold them, growth included ([`hash_entry`]). `tests/memory_budget.rs`
//! checks that a query stopped by its budget grew the resident set by at most 1.25 times it.
//! Results collected for the next pages ([`crate::held`]) are on the budget too while the query
//! runs; results returned are not (they are the output).

use std::sync::atomic::{AtomicU64, Ordering};

use cosmoql_storage::{DocPart, Shape, WholeItem, SYSTEM_PROPERTIES};
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

/// About how many bytes a value is, for request charges and the bounds on results (a measure
/// of its size as JSON, stable across versions; [`heap_bytes`] is what it holds in memory).
pub fn value_bytes(v: &Value) -> u64 {
    json_value_bytes(v).unwrap_or_else(|bytes| bytes)
}

/// [`value_bytes`] of a value that can be written as JSON; `Err` (with the bytes) when it holds
/// NaN or an infinity at some depth, which JSON cannot write. One walk for both: every result a
/// query returns is measured and checked.
pub fn json_value_bytes(v: &Value) -> Result<u64, u64> {
    let mut total = 0u64;
    let mut json = true;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        let bytes = match v {
            Value::Number(n) => {
                json &= n.is_finite();
                16
            }
            Value::String(s) => 24 + s.len() as u64,
            Value::Array(a) => {
                stack.extend(a.iter());
                32
            }
            Value::Object(m) => {
                let mut bytes = 48u64;
                for (k, e) in m.iter() {
                    bytes = bytes.saturating_add(32 + k.len() as u64);
                    stack.push(e);
                }
                bytes
            }
            _ => 16,
        };
        total = total.saturating_add(bytes);
    }
    if json {
        Ok(total)
    } else {
        Err(total)
    }
}

/// [`json_value_bytes`] of a whole item's value (its properties and its five system
/// properties), measured on its stored bytes without decoding them.
pub fn whole_item_bytes(item: &WholeItem) -> Result<u64, u64> {
    let Some(shape) = item.item.doc.root().shape() else { return Err(0) };
    // `_rid`, `_self`, `_etag` and `_attachments` are strings, `_ts` a number.
    let strings = item.names.system_string_lengths(&item.item);
    let system = SYSTEM_PROPERTIES.iter().zip(strings).fold(32 + "_ts".len() as u64 + 16, |total, (name, len)| {
        total.saturating_add(32 + name.len() as u64 + 24 + len as u64)
    });
    weighed(&shape, system)
}

/// [`json_value_bytes`] of a part of an item, measured on its stored bytes.
pub fn part_bytes(part: &DocPart) -> Result<u64, u64> {
    let Some(shape) = part.root().shape() else { return Err(0) };
    weighed(&shape, 0)
}

/// [`shape_bytes`] and `extra`, `Err` with the same measure when a number JSON cannot write is
/// among them (as [`json_value_bytes`] says).
fn weighed(shape: &Shape, extra: u64) -> Result<u64, u64> {
    let total = shape_bytes(shape).saturating_add(extra);
    if shape.finite {
        Ok(total)
    } else {
        Err(total)
    }
}

/// What the walk of [`json_value_bytes`] weighs, from the counts of one pass over the bytes.
fn shape_bytes(shape: &Shape) -> u64 {
    (48 * shape.objects)
        .saturating_add(shape.entries.saturating_mul(32).saturating_add(shape.key_bytes))
        .saturating_add(32 * shape.arrays)
        .saturating_add(shape.strings.saturating_mul(24).saturating_add(shape.string_bytes))
        .saturating_add(16 * shape.scalars)
}

/// What the allocator takes for a block of `n` bytes: glibc's malloc on 64 bits keeps 8 bytes
/// of header, rounds to 16 and gives at least 32.
pub fn block(n: usize) -> u64 {
    if n == 0 {
        0
    } else {
        (n as u64).saturating_add(8 + 15).max(32) & !15
    }
}

/// The bytes one entry of a hash set or map of `slot`-byte entries holds: the slot and its
/// control byte, at the table's lowest load (half of 7/8, just after it doubled) and while it
/// grows (the old table and the new one, twice as large, live at once).
pub fn hash_entry(slot: usize) -> u64 {
    // (slot + 1) bytes per bucket, 16/7 buckets per entry at the lowest load, 3/2 while growing.
    ((slot as u64 + 1) * 16 * 3).div_ceil(7 * 2)
}

/// The heap a value holds (besides its own `size_of::<Value>()` where it is kept), as Rust lays
/// it out: a string's shared block, an array's shared vector and its buffer, an object's shared
/// map with its entries, index table and keys; every block as the allocator rounds it. What the
/// operators that hold values charge to the budget.
pub fn heap_bytes(v: &Value) -> u64 {
    const ARC: usize = 16;
    let mut total = 0u64;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        let bytes = match v {
            Value::String(s) => block(ARC + s.len()),
            Value::Array(a) => {
                stack.extend(a.iter());
                block(ARC + size_of::<Vec<Value>>()) + block(a.capacity() * size_of::<Value>())
            }
            Value::Object(m) => {
                let mut keys = 0u64;
                for (k, e) in m.iter() {
                    keys = keys.saturating_add(block(k.capacity()));
                    stack.push(e);
                }
                let entry = 8 + size_of::<String>() + size_of::<Value>();
                let buckets = if m.capacity() == 0 { 0 } else { (m.capacity() * 8 / 7).next_power_of_two().max(4) };
                block(ARC + size_of::<cosmoql_value::Map>())
                    + block(m.capacity() * entry)
                    + block(buckets * (size_of::<usize>() + 1) + 16)
                    + keys
            }
            _ => 0,
        };
        total = total.saturating_add(bytes);
    }
    total
}

/// What a value held in a hash set (DISTINCT, MAKESET) takes: its heap and its entry.
pub fn set_entry_bytes(v: &Value) -> u64 {
    heap_bytes(v).saturating_add(hash_entry(size_of::<Value>()))
}

/// What a row holds: its vector of bindings and their values' heaps (a stored item is shared
/// with the store: a reference).
pub fn row_bytes(row: &Row) -> u64 {
    row.iter()
        .map(|b| match b {
            Binding::Value(v) => heap_bytes(v),
            _ => 0,
        })
        .fold(block(row.capacity() * size_of::<Binding>()), u64::saturating_add)
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
        // The object (48) and its key (32 + 1), the array (32), the number (16) and the string
        // (24 + 3): keys count.
        assert_eq!(value_bytes(&cosmoql_value::parse_json(r#"{"a": [1, "xyz"]}"#).unwrap()), 156);
        // The heap as laid out: an object of one entry holding an array of two values, one a
        // string: the map (shared block, entries, index table, key) and the array (shared block,
        // buffer) and the string.
        assert_eq!(block(1), 32);
        assert_eq!(block(40), 48);
        let v = cosmoql_value::parse_json(r#"{"a": [1, "xyz"]}"#).unwrap();
        assert!(heap_bytes(&v) >= 300, "{}", heap_bytes(&v));
        assert_eq!(heap_bytes(&Value::from(1.0)), 0);
    }
}
