//! Aggregates: running accumulators per group, mergeable across partitions.
//!
//! Cosmos DB's rules: undefined arguments are skipped (COUNTIF counts only `true`); SUM and AVG of anything but numbers are
//! undefined; MIN and MAX order mixed scalars by type (null < booleans < numbers < strings) and
//! are undefined over arrays or objects; over no rows COUNT, COUNTIF and SUM are 0, MAKELIST and MAKESET
//! `[]`, the others undefined. MAKELIST keeps every value (duplicates too) and MAKESET the
//! distinct ones, both in scan order (the service does not promise an order; this one is
//! deterministic).

use std::cmp::Ordering;
use std::collections::HashSet;

use cosmoql_planner::AggregateKind;
use cosmoql_value::indexmap::IndexMap;
use cosmoql_value::Value;

use crate::memory::{heap_bytes, set_entry_bytes};
use crate::row::Row;

/// A running aggregate.
#[derive(Debug, Clone, PartialEq)]
pub struct Accumulator {
    kind: AggregateKind,
    count: u64,
    sum: f64,
    /// A SUM/AVG saw a non-number, or a MIN/MAX saw an array or object.
    poisoned: bool,
    best: Option<Value>,
    /// MAKELIST and MAKESET: the values kept, in scan order.
    values: Vec<Value>,
    /// MAKESET: the values in `values`, to skip duplicates.
    seen: HashSet<Value>,
}

impl Accumulator {
    pub fn new(kind: AggregateKind) -> Self {
        Accumulator { kind, count: 0, sum: 0.0, poisoned: false, best: None, values: Vec::new(), seen: HashSet::new() }
    }

    /// A COUNT that has counted `n` rows (counted from index entries).
    pub fn counted(n: u64) -> Self {
        Accumulator { count: n, ..Accumulator::new(AggregateKind::Count) }
    }

    /// Adds a value; returns the bytes it now holds for it (MAKELIST, a new MAKESET value).
    pub fn add(&mut self, v: Value) -> u64 {
        if v.is_undefined() || (self.kind == AggregateKind::CountIf && v != Value::Bool(true)) {
            return 0;
        }
        self.count = self.count.saturating_add(1);
        match self.kind {
            AggregateKind::Count | AggregateKind::CountIf => {}
            AggregateKind::Sum | AggregateKind::Avg => match v {
                Value::Number(n) => self.sum += n,
                _ => self.poisoned = true,
            },
            AggregateKind::Min | AggregateKind::Max => {
                if matches!(v, Value::Array(_) | Value::Object(_)) {
                    self.poisoned = true;
                } else {
                    self.add_best(v);
                }
            }
            AggregateKind::MakeList => {
                // Its heap and its place in the list (which doubles as it grows).
                let bytes = heap_bytes(&v) + 2 * size_of::<Value>() as u64;
                self.values.push(v);
                return bytes;
            }
            AggregateKind::MakeSet => {
                if !self.seen.contains(&v) {
                    // In the set and in the list (sharing the heap).
                    let bytes = set_entry_bytes(&v) + 2 * size_of::<Value>() as u64;
                    self.seen.insert(v.clone());
                    self.values.push(v);
                    return bytes;
                }
            }
        }
        0
    }

    /// Folds a later partial result of the same aggregate (in scan order) into this one.
    pub fn merge(&mut self, other: Accumulator) {
        self.count = self.count.saturating_add(other.count);
        self.sum += other.sum;
        self.poisoned |= other.poisoned;
        if let Some(b) = other.best {
            self.add_best(b);
        }
        match self.kind {
            AggregateKind::MakeList => self.values.extend(other.values),
            AggregateKind::MakeSet => {
                for v in other.values {
                    if self.seen.insert(v.clone()) {
                        self.values.push(v);
                    }
                }
            }
            _ => {}
        }
    }

    fn add_best(&mut self, v: Value) {
        let keep = match &self.best {
            None => true,
            Some(b) => {
                let o = v.cmp(b);
                if self.kind == AggregateKind::Min {
                    o == Ordering::Less
                } else {
                    o == Ordering::Greater
                }
            }
        };
        if keep {
            self.best = Some(v);
        }
    }

    pub fn result(&self) -> Value {
        match self.kind {
            AggregateKind::Count | AggregateKind::CountIf => Value::from(self.count as f64),
            AggregateKind::MakeList | AggregateKind::MakeSet => Value::from(self.values.clone()),
            _ if self.poisoned => Value::Undefined,
            AggregateKind::Sum => Value::from(self.sum),
            AggregateKind::Avg if self.count == 0 => Value::Undefined,
            AggregateKind::Avg => Value::from(self.sum / self.count as f64),
            AggregateKind::Min | AggregateKind::Max => self.best.clone().unwrap_or(Value::Undefined),
        }
    }
}

/// Groups by key, in order of first appearance: a representative row and the accumulators.
/// Groups by their keys, in the order first seen; keys hashed with foldhash (SipHash was a sixth
/// of a GROUP BY).
pub type Groups = IndexMap<Vec<Value>, (Row, Vec<Accumulator>), foldhash::fast::RandomState>;

/// Folds the groups of a later input (in scan order) into `into`.
pub fn merge_groups(into: &mut Groups, from: Groups) {
    for (key, (row, accs)) in from {
        match into.get_mut(&key) {
            Some((first, mine)) => {
                if first.len() < row.len() {
                    *first = row;
                }
                for (a, b) in mine.iter_mut().zip(accs) {
                    a.merge(b);
                }
            }
            None => {
                into.insert(key, (row, accs));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(kind: AggregateKind, parts: &[&[Value]]) -> Value {
        let mut total: Option<Accumulator> = None;
        for part in parts {
            let mut acc = Accumulator::new(kind);
            for v in part.iter() {
                acc.add(v.clone());
            }
            match &mut total {
                Some(t) => t.merge(acc),
                None => total = Some(acc),
            }
        }
        total.map_or(Value::Undefined, |t| t.result())
    }

    #[test]
    fn make_list_keeps_duplicates_and_make_set_drops_them_across_partitions() {
        let n = |x: f64| Value::from(x);
        let parts: &[&[Value]] = &[&[n(1.0), n(2.0), Value::Undefined], &[n(2.0), Value::Null, n(1.0)]];
        assert_eq!(run(AggregateKind::MakeList, parts), Value::from(vec![n(1.0), n(2.0), n(2.0), Value::Null, n(1.0)]));
        assert_eq!(run(AggregateKind::MakeSet, parts), Value::from(vec![n(1.0), n(2.0), Value::Null]));
        // Undefined only: an empty array, as COUNT is 0.
        let none: &[&[Value]] = &[&[Value::Undefined]];
        assert_eq!(run(AggregateKind::MakeList, none), Value::from(Vec::<Value>::new()));
        assert_eq!(run(AggregateKind::MakeSet, none), Value::from(Vec::<Value>::new()));
        assert_eq!(run(AggregateKind::Count, none), n(0.0));
    }
}
