//! Partition pruning: which partition keys a query's `WHERE` clause lets it touch.
//!
//! The pruning is *sound*: it never leaves out a partition that could hold a matching row. It reads
//! the boolean structure of the `WHERE` clause and keeps, for the paths that determine the key
//! ("slots"), the sets of values they are pinned to:
//!
//! * `key = constant` (either order), `key IN (constants)`, and a bare `key` (a `WHERE` keeps a
//!   row only when its condition is exactly `true`, so `WHERE c.flag` pins `true`). Constants are
//!   literals, `@parameters`, `-number`, and array/object constructors.
//! * `AND` intersects (a side that says nothing is ignored), `OR` unites (a side that says nothing
//!   makes the whole `OR` say nothing). `NOT`, `!=`, `<`, `BETWEEN`, `LIKE`, functions, subqueries
//!   say nothing ("any key").
//! * A constant that can never equal a stored key makes its comparison never true, so the branch
//!   matches nothing: `undefined`, arrays, objects (an item whose key path holds an array or object
//!   is rejected on write) and `NaN`. So `c.pk = []` prunes to no partition, where the .NET SDK's
//!   query plan keeps the full range: both are correct, this one is cheaper. `WHERE false` (any
//!   literal but `true`) also matches nothing.
//! * Numbers compare by value: `1` and `1.0` are one key, and so are `0` and `-0`.
//!
//! Pruning reads the *bound* query: key paths are `Path` reads of the slot of the first `FROM`
//! source, which must be the container itself (`FROM c`, `FROM root r`, with or without `JOIN`s),
//! so `c.a.b`, `c["a b"]` and `c[@name]` with a string parameter are one path, never through an
//! array index; a JOIN alias that hides `c` binds another slot, which pins nothing. Parameters are constants already
//! (the binder rejects a missing one), and so are folded expressions (`c.pk = 'a' || 'b'`).
//!
//! Hierarchical keys: all levels pinned give keys (the cross product of the value sets), a
//! pinned prefix gives EPK ranges, and anything that leaves the first level free gives all
//! partitions. Synthetic keys: the key property itself, or all the source values it is built from
//! (`Concat`: every path; `HashSuffix`: base and source, or base alone for all its buckets;
//! `RandomSuffix`: base, for all its buckets). The `RandomSuffix` rule holds because the store
//! keeps an item's key property only when it is `base.1` to `base.N` for the item's own base, and
//! draws a new one otherwise (`SyntheticKey::key_for`).
//!
//! Sets are bounded by [`MAX_KEYS`]: a larger `IN` list or `OR` says nothing, a larger `AND` cross
//! product keeps only one side (still sound), and more than [`MAX_KEYS`] keys gives all partitions.

use std::collections::BTreeSet;

use cosmoql_catalog::{
    Epk, HashVersion, PartitionKey, PartitionKeyDefinition, PartitionKeyKind, SyntheticKey, SyntheticKind,
};
use cosmoql_parser::BinaryOp;
use cosmoql_value::{format_number, Value};

use crate::bound::{BoundExpr, BoundQuery, Step};

/// The most keys (and value combinations) pruning enumerates before it gives up on a set.
pub const MAX_KEYS: usize = 1000;

/// Which partition key values a query can touch.
#[derive(Debug, Clone, PartialEq)]
pub enum Targets {
    /// Every partition (no pruning).
    All,
    /// These full partition keys only (deduplicated, sorted by their values). Empty: the filter can
    /// never hold (e.g. `c.pk = 1 AND c.pk = 2`), so no partition.
    Keys(Vec<PartitionKey>),
    /// These EPK ranges `[min, max)` (hierarchical key prefixes), sorted and non-overlapping.
    Ranges(Vec<(Epk, Epk)>),
}

/// The result of pruning: the targets and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Pruning {
    pub targets: Targets,
    /// Why, in one line a user can read in EXPLAIN, e.g. `c.deviceId = "dev-1" pins 1 key`,
    /// `no equality filter on /deviceId: all partitions`.
    pub reason: String,
}

impl Pruning {
    fn all(reason: impl Into<String>) -> Self {
        Pruning { targets: Targets::All, reason: reason.into() }
    }
}

/// Which partitions `query` can touch in a container with this key `definition`. `filter_text` is
/// the WHERE clause as the query wrote it, for the reason.
pub fn prune(query: &BoundQuery, filter_text: Option<&str>, definition: &PartitionKeyDefinition) -> Pruning {
    if definition.is_none() {
        return Pruning::all("the container has no partition key: one partition");
    }
    let Some(item) = query.item_slot() else {
        return Pruning::all(if query.sources.is_empty() {
            "no FROM clause: all partitions"
        } else {
            "the first FROM source is not the container's items: all partitions"
        });
    };
    let Some(filter) = &query.filter else { return Pruning::all("no WHERE clause: all partitions") };
    let layout = Layout::of(definition);
    let analyzer = Analyzer { item, slots: &layout.slots };
    let unpinned = |what: String| Pruning::all(format!("{what}: all partitions"));
    let Some(facts) = analyzer.facts(filter) else { return unpinned(layout.unpinned.clone()) };
    let shown = shown(filter_text.unwrap_or("the filter"));
    match layout.targets(definition, &facts) {
        Err(why) => unpinned(why),
        Ok(Targets::Keys(keys)) if keys.is_empty() => {
            Pruning { targets: Targets::Keys(keys), reason: format!("{shown} can never hold: no partition") }
        }
        Ok(Targets::Keys(keys)) => {
            let n = keys.len();
            let reason = format!("{shown} pins {n} key{}", if n == 1 { "" } else { "s" });
            Pruning { targets: Targets::Keys(keys), reason }
        }
        Ok(Targets::Ranges(ranges)) => {
            let n = ranges.len();
            let reason = format!("{shown} pins a key prefix: {n} EPK range{}", if n == 1 { "" } else { "s" });
            Pruning { targets: Targets::Ranges(ranges), reason }
        }
        Ok(Targets::All) => unpinned(layout.unpinned.clone()),
    }
}

/// The id the filter pins with an equality among its top-level AND terms (`c.id = "x"`), when
/// the first FROM source is the container's items: with one partition key, a point read.
pub fn pinned_id(query: &BoundQuery) -> Option<String> {
    let item = query.item_slot()?;
    crate::access::conjuncts(query.filter.as_ref()?).into_iter().find_map(|t| match path_equality(t)? {
        (path, Value::String(id)) if is_id(item, path) => Some(id.to_string()),
        _ => None,
    })
}

/// The path and the constant of an equality `path = constant` (either way round).
fn path_equality(e: &BoundExpr) -> Option<(&BoundExpr, &Value)> {
    let BoundExpr::Binary(BinaryOp::Eq, l, r) = e else { return None };
    match (l.as_ref(), r.as_ref()) {
        (path @ BoundExpr::Path { .. }, BoundExpr::Const(value))
        | (BoundExpr::Const(value), path @ BoundExpr::Path { .. }) => Some((path, value)),
        _ => None,
    }
}

/// Whether `e` reads the id of the container's item (in `item`).
fn is_id(item: usize, e: &BoundExpr) -> bool {
    matches!(e, BoundExpr::Path { slot, steps } if *slot == item && matches!(steps.as_slice(), [Step::Key(k)] if k == "id"))
}

/// Whether the item a point read finds (`key` and `id`) satisfies the whole WHERE clause: every
/// top-level AND term is the id equality it reads, or an equality of one of the key's paths with
/// that key's value there (a key of paths, not synthetic). Its rows then need no filtering. Only
/// with V2 hashing: a V1 EPK holds a long string key's first 100 bytes only, so two keys may share
/// a logical partition and the read may find the other key's item.
pub fn point_answers_filter(
    query: &BoundQuery,
    definition: &PartitionKeyDefinition,
    key: &PartitionKey,
    id: &str,
) -> bool {
    let (Some(item), Some(filter)) = (query.item_slot(), &query.filter) else { return false };
    if definition.synthetic_key().is_some() || definition.is_none() || definition.version() != HashVersion::V2 {
        return false;
    }
    // Without a synthetic key, slot i is the key's path i.
    let layout = Layout::of(definition);
    let analyzer = Analyzer { item, slots: &layout.slots };
    let values = key.to_values();
    crate::access::conjuncts(filter).into_iter().all(|t| match path_equality(t) {
        Some((path, value)) if is_id(item, path) => matches!(value, Value::String(s) if **s == *id),
        Some((path, value @ (Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_)))) => {
            analyzer.slot(path).is_some_and(|i| values.get(i) == Some(value))
        }
        _ => false,
    })
}

/// The filter as EXPLAIN shows it (shortened when long).
fn shown(text: &str) -> String {
    const MAX: usize = 80;
    if text.chars().count() <= MAX {
        text.to_string()
    } else {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}…")
    }
}

/// The value of each slot, or `None` where the predicate leaves it free.
type Assignment = Vec<Option<Value>>;

/// What a predicate says about the slots. `None`: nothing (any key). `Some(list)`: it holds only
/// if, for some assignment of the list, every fixed slot has its value. `Some([])`: never holds.
type Facts = Option<Vec<Assignment>>;

/// The paths that determine the key, and how to turn their values into keys.
struct Layout {
    /// Property paths, deduplicated. For a synthetic key, slot 0 is the key property.
    slots: Vec<Vec<String>>,
    /// For a synthetic key: the slots of its source paths, in the order `keys_from_parts` takes.
    roles: Vec<usize>,
    /// What is missing when nothing is pinned, e.g. `no equality filter on /deviceId`.
    unpinned: String,
}

impl Layout {
    fn of(definition: &PartitionKeyDefinition) -> Layout {
        let mut slots: Vec<Vec<String>> = definition.paths().iter().map(|p| p.segments().to_vec()).collect();
        let mut roles = Vec::new();
        let key_paths = definition.paths().iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
        let mut unpinned = format!("no equality filter on {key_paths}");
        if let Some(synthetic) = definition.synthetic_key() {
            let sources = match &synthetic.kind {
                SyntheticKind::Concat { paths, .. } => paths.iter().collect::<Vec<_>>(),
                SyntheticKind::RandomSuffix { base, .. } => vec![base],
                SyntheticKind::HashSuffix { base, source, .. } => vec![base, source],
            };
            for path in &sources {
                let segments = path.segments().to_vec();
                let slot = slots.iter().position(|s| *s == segments).unwrap_or_else(|| {
                    slots.push(segments);
                    slots.len() - 1
                });
                roles.push(slot);
            }
            let parts = sources.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
            let need = match &synthetic.kind {
                SyntheticKind::Concat { .. } => format!("all of {parts}"),
                _ => sources.first().map(ToString::to_string).unwrap_or_default(),
            };
            unpinned = format!("no equality filter on {key_paths} or on {need} (the synthetic key's parts)");
        } else if definition.kind() == PartitionKeyKind::MultiHash {
            if let Some(first) = definition.paths().first() {
                unpinned = format!("no equality filter on the first key level {first}");
            }
        }
        Layout { slots, roles, unpinned }
    }

    /// Turns the assignments into keys or ranges; `Err` (with what is missing) for all partitions.
    fn targets(&self, definition: &PartitionKeyDefinition, facts: &[Assignment]) -> Result<Targets, String> {
        let levels = definition.paths().len();
        let mut keys: BTreeSet<Vec<Value>> = BTreeSet::new();
        let mut prefixes: Vec<Vec<Value>> = Vec::new();
        for assignment in facts {
            if let Some(synthetic) = definition.synthetic_key() {
                for key in self.synthetic_keys(synthetic, assignment)? {
                    insert_key(&mut keys, vec![Value::from(key)])?;
                }
                continue;
            }
            let fixed: Vec<Value> = assignment.iter().take(levels).map_while(Clone::clone).collect();
            if fixed.len() == levels {
                insert_key(&mut keys, fixed)?;
            } else if fixed.is_empty() || definition.kind() != PartitionKeyKind::MultiHash {
                return Err(self.unpinned.clone());
            } else {
                prefixes.push(fixed);
            }
        }
        if prefixes.is_empty() {
            let keys = keys.iter().filter_map(|values| PartitionKey::from_values(values).ok()).collect();
            return Ok(Targets::Keys(keys));
        }
        let mut ranges: Vec<(Epk, Epk)> = keys
            .into_iter()
            .chain(prefixes)
            .filter_map(|values| PartitionKey::from_values(&values).ok())
            .filter_map(|prefix| definition.epk_range(&prefix).ok())
            .collect();
        ranges.sort();
        let mut merged: Vec<(Epk, Epk)> = Vec::with_capacity(ranges.len());
        for (start, end) in ranges {
            match merged.last_mut() {
                Some(last) if start <= last.1 => {
                    if end > last.1 {
                        last.1 = end;
                    }
                }
                _ => merged.push((start, end)),
            }
        }
        Ok(Targets::Ranges(merged))
    }

    /// The synthetic keys (values of the key property) one assignment allows; `Err` when it
    /// pins none of the key's inputs.
    fn synthetic_keys(&self, synthetic: &SyntheticKey, assignment: &Assignment) -> Result<Vec<String>, String> {
        if let Some(Some(key)) = assignment.first() {
            // The key property holds a string; any other constant matches no item.
            return Ok(key.as_str().map(str::to_string).into_iter().collect());
        }
        let parts: Vec<Option<&Value>> = self.roles.iter().map(|&slot| assignment[slot].as_ref()).collect();
        let too_many = |buckets: u32| {
            if usize::try_from(buckets).map_or(true, |b| b > MAX_KEYS) {
                Err(format!("{buckets} buckets per base value is more than {MAX_KEYS} keys"))
            } else {
                Ok(())
            }
        };
        // `keys_from_parts` fails on values no stored item can have as a part (null): no key.
        let from_parts = |values: &[Value]| synthetic.keys_from_parts(values).unwrap_or_default();
        match (&synthetic.kind, parts.as_slice()) {
            (SyntheticKind::Concat { .. }, parts) if parts.iter().all(Option::is_some) => {
                let values: Vec<Value> = parts.iter().flatten().map(|v| (*v).clone()).collect();
                Ok(from_parts(&values))
            }
            (SyntheticKind::RandomSuffix { buckets, .. }, [Some(base)]) => {
                too_many(*buckets)?;
                Ok(from_parts(&[(*base).clone()]))
            }
            (SyntheticKind::HashSuffix { .. }, [Some(base), Some(source)]) => {
                Ok(from_parts(&[(*base).clone(), (*source).clone()]))
            }
            (SyntheticKind::HashSuffix { buckets, .. }, [Some(base), None]) => {
                too_many(*buckets)?;
                Ok(part_text(base)
                    .map_or_else(Vec::new, |base| (1..=*buckets).map(|i| format!("{base}.{i}")).collect()))
            }
            _ => Err(self.unpinned.clone()),
        }
    }
}

/// How a synthetic key part reads as text (as `keys_from_parts` writes it); `None` for values no
/// stored item has as a part.
fn part_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.to_string()),
        Value::Number(n) => Some(format_number(*n)),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Adds a key unless no stored item can have it; `Err` past [`MAX_KEYS`].
fn insert_key(keys: &mut BTreeSet<Vec<Value>>, values: Vec<Value>) -> Result<(), String> {
    if PartitionKey::from_values(&values).is_ok() {
        keys.insert(values);
    }
    if keys.len() > MAX_KEYS {
        return Err(format!("more than {MAX_KEYS} keys"));
    }
    Ok(())
}

/// A comparison operand evaluated at planning time.
enum Const {
    /// A value that a key slot can hold.
    Key(Value),
    /// A value no key slot equals (`undefined`, `NaN`, arrays, objects).
    Never,
    /// Not a constant.
    Unknown,
}

struct Analyzer<'a> {
    /// The slot of the container's item.
    item: usize,
    slots: &'a [Vec<String>],
}

impl Analyzer<'_> {
    fn facts(&self, e: &BoundExpr) -> Facts {
        match e {
            BoundExpr::Binary(BinaryOp::And, left, right) => match (self.facts(left), self.facts(right)) {
                (None, only) | (only, None) => only,
                (Some(a), Some(b)) => Some(and(a, b)),
            },
            BoundExpr::Binary(BinaryOp::Or, left, right) => {
                let (a, b) = (self.facts(left), self.facts(right));
                let mut out = a?;
                for x in b? {
                    push_unique(&mut out, x);
                }
                (out.len() <= MAX_KEYS).then_some(out)
            }
            BoundExpr::Binary(BinaryOp::Eq, left, right) => {
                if let Some(slot) = self.slot(left) {
                    self.equals(slot, right)
                } else {
                    let slot = self.slot(right)?;
                    self.equals(slot, left)
                }
            }
            BoundExpr::In { expr, list, negated: false, .. } => {
                let slot = self.slot(expr)?;
                if list.len() > MAX_KEYS {
                    return None;
                }
                let mut out = Vec::new();
                for item in list {
                    for x in self.equals(slot, item)? {
                        push_unique(&mut out, x);
                    }
                }
                Some(out)
            }
            BoundExpr::Const(Value::Bool(true)) => None,
            // `WHERE false`, `WHERE null`, `WHERE 1`...: a row is kept only for exactly `true`.
            BoundExpr::Const(_) => Some(Vec::new()),
            _ => {
                let slot = self.slot(e)?;
                Some(vec![self.assign(slot, Value::Bool(true))])
            }
        }
    }

    /// `slot = e`.
    fn equals(&self, slot: usize, e: &BoundExpr) -> Facts {
        match constant(e) {
            Const::Key(v) => Some(vec![self.assign(slot, v)]),
            Const::Never => Some(Vec::new()),
            Const::Unknown => None,
        }
    }

    fn assign(&self, slot: usize, v: Value) -> Assignment {
        let mut a = vec![None; self.slots.len()];
        a[slot] = Some(v);
        a
    }

    /// The key slot `e` reads (`c.a.b`), if any.
    fn slot(&self, e: &BoundExpr) -> Option<usize> {
        let BoundExpr::Path { slot, steps } = e else { return None };
        if *slot != self.item {
            return None;
        }
        let path: Option<Vec<&str>> = steps
            .iter()
            .map(|s| match s {
                Step::Key(k) => Some(k.as_str()),
                Step::Index(_) => None,
            })
            .collect();
        let path = path?;
        self.slots.iter().position(|s| s.iter().map(String::as_str).eq(path.iter().copied()))
    }
}

fn constant(e: &BoundExpr) -> Const {
    match e {
        BoundExpr::Const(Value::Undefined | Value::Array(_) | Value::Object(_)) => Const::Never,
        BoundExpr::Const(Value::Number(n)) => number(*n),
        BoundExpr::Const(v) => Const::Key(v.clone()),
        BoundExpr::Array(_) | BoundExpr::Object(_) => Const::Never,
        _ => Const::Unknown,
    }
}

/// A number constant: `NaN` equals nothing; `-0` is `0`.
fn number(n: f64) -> Const {
    if n.is_nan() {
        Const::Never
    } else {
        Const::Key(Value::Number(n + 0.0))
    }
}

/// Both hold: the compatible merges of each pair. Past [`MAX_KEYS`] pairs, one side alone (a sound
/// over-approximation): the one that fixes more leading slots, then the smaller.
fn and(a: Vec<Assignment>, b: Vec<Assignment>) -> Vec<Assignment> {
    if a.len().saturating_mul(b.len()) > MAX_KEYS {
        let score = |set: &[Assignment]| {
            let leading = set.iter().map(|x| x.iter().take_while(|v| v.is_some()).count()).min().unwrap_or(0);
            (leading, std::cmp::Reverse(set.len()))
        };
        return if score(&b) > score(&a) { b } else { a };
    }
    let mut out = Vec::new();
    for x in &a {
        for y in &b {
            let merged: Option<Assignment> = x
                .iter()
                .zip(y)
                .map(|pair| match pair {
                    (Some(p), Some(q)) if p != q => None,
                    (Some(v), _) | (None, Some(v)) => Some(Some(v.clone())),
                    (None, None) => Some(None),
                })
                .collect();
            if let Some(m) = merged {
                push_unique(&mut out, m);
            }
        }
    }
    out
}

fn push_unique(out: &mut Vec<Assignment>, x: Assignment) {
    if !out.contains(&x) {
        out.push(x);
    }
}
