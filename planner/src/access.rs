//! Access paths: what the indexes can do for a query, chosen on the bound query.
//!
//! Each conjunct of the WHERE clause is classified, as the service documents its strategies:
//!
//! | predicate on an indexed path of the item | what runs |
//! |---|---|
//! | `=`, `IN`, `ARRAY_CONTAINS(path, scalar)`, case-sensitive `StringEquals` | **index seek**: the items holding the key(s) |
//! | `<`, `<=`, `>`, `>=`, `BETWEEN`, case-sensitive `STARTSWITH`, `LEFT(path, n) =`, `SUBSTRING(path, 0, n) =` | **index range scan** over keys of the constant's type |
//! | case-insensitive `STARTSWITH`, `StringEquals` | **expanded scan**: every string key tested, ignoring case |
//! | `CONTAINS`, `ENDSWITH`, `LIKE`, `RegexMatch` (constant patterns) | **full index scan**: every string key tested |
//! | `ST_DISTANCE(path, point) <`/`<=` r, `ST_WITHIN(path, shape)`, `ST_INTERSECTS` | **spatial index**: points in a box around the circle or shape, and every other geometry (`spatial.rs`) |
//! | `OR` of the above | the union of their items |
//! | anything else (`UPPER`, `LOWER`, math, UDFs, `NOT`, `!=`, an excluded path) | read and filtered |
//!
//! The scans test keys with the same functions (`cosmoql_value::text`, `LikePattern`) that
//! evaluate the predicates on items, so they agree by construction.
//!
//! A path may go through an alias: `t.name` for `JOIN t IN c.tags` (or `FROM t IN c.tags`) is
//! `/tags/[]/name`, whose entries find the items holding such an element; the rows are then made
//! and filtered from those items alone.
//!
//! The items the index finds (the intersection over the conjuncts it serves) are then read and the
//! whole WHERE clause runs on them, so an index only ever narrows what is read: results are those
//! of a scan. Comparisons follow the query language: `c.n > 5` holds only for numbers, so its
//! range stops where strings begin.
//!
//! ORDER BY on one path of the item, with its range index, walks the index in order: each
//! partition yields its rows sorted and stops once it has the rows the page can return.

use std::fmt;
use std::ops::Bound;
use std::sync::Arc;

use cosmoql_catalog::MAX_ITEM_BYTES;
use cosmoql_catalog::{IndexKey, IndexProbe, IndexStep, IndexingMode, IndexingPolicy, SpatialBox, StringTest};
use cosmoql_parser::BinaryOp;
use cosmoql_value::text::{self, TextTest};
use cosmoql_value::Value;

use crate::bound::{BoundExpr, BoundProjection, BoundQuery, Source, SourceKind, Step};
use crate::functions::AggregateKind;
use crate::spatial;

/// What a predicate gets from the indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PredicateStrategy {
    /// Equality or `IN`: the items holding given keys.
    IndexSeek,
    /// A range of keys (comparisons, `BETWEEN`, `STARTSWITH`).
    IndexRangeScan,
    /// Every string key of the path tested, ignoring case (case-insensitive `STARTSWITH`,
    /// `StringEquals`): the service's expanded scan.
    ExpandedScan,
    /// Every string key of the path tested (`CONTAINS`, `ENDSWITH`, `LIKE`, `RegexMatch`): the
    /// service's full index scan, which reads the index, not the items.
    FullIndexScan,
    /// Part of a seek on a composite index: equalities on its leading paths, a range on the last.
    Composite,
    /// GeoJSON points in a box around the shape or circle, and every other geometry, from the
    /// spatial index.
    SpatialScan,
    /// The union of the items the parts of an `OR` find.
    IndexUnion,
    /// On the partition key, which already limits the query to the logical partitions it pins.
    PartitionKey,
    /// Evaluated on each item read; why the index does not help.
    Filter(String),
}

/// One conjunct of the WHERE clause and its strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct PredicateAccess {
    /// The index path it uses (`/metricValue/?`), if any.
    pub path: Option<String>,
    pub strategy: PredicateStrategy,
    /// The items the indexes find for it are exactly those for which it holds.
    pub exact: bool,
    /// For a predicate an index would serve if the policy indexed its path: that path.
    pub potential: Option<String>,
}

/// ORDER BY served by a range index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexOrder {
    /// The first ORDER BY path and its direction.
    pub path: Vec<IndexStep>,
    pub descending: bool,
    /// For ORDER BY on several paths: every path with its direction, served by a composite
    /// index of the policy (empty for one path, served by its range index).
    pub composite: Vec<(Vec<IndexStep>, bool)>,
    /// The keys the filter's equalities give the composite's leading paths: the walk reads only
    /// the tuples starting with them.
    pub prefix: Vec<IndexKey>,
}

impl IndexOrder {
    /// The index as EXPLAIN's ORDER BY line names it.
    pub fn index_name(&self) -> String {
        if self.composite.is_empty() {
            format!("the index on {}", policy_path(&self.path))
        } else {
            self.describe()
        }
    }

    /// How the index is named: `/a/?` or `(/a ASC, /b DESC)`.
    pub fn describe(&self) -> String {
        if self.composite.is_empty() {
            format!("the range index on {}", policy_path(&self.path))
        } else if self.prefix.is_empty() {
            format!("the composite index ({})", composite_specs(&self.composite).join(", "))
        } else {
            let values: Vec<String> =
                self.prefix.iter().map(|k| cosmoql_value::to_json_string(&k.to_value()).unwrap_or_default()).collect();
            format!(
                "the composite index ({}), its tuples starting with {}",
                composite_specs(&self.composite).join(", "),
                values.join(", ")
            )
        }
    }
}

/// Composite index paths as index metrics write them: `/a ASC`, `/b DESC`.
fn composite_specs(keys: &[(Vec<IndexStep>, bool)]) -> Vec<String> {
    keys.iter()
        .map(|(p, d)| format!("{} {}", policy_path(p).trim_end_matches("/?"), if *d { "DESC" } else { "ASC" }))
        .collect()
}

/// The access path of a query.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// One entry per conjunct of the WHERE clause, in order.
    pub predicates: Vec<PredicateAccess>,
    /// The items to read: what the indexes find for the conjuncts they serve.
    pub filter: Option<IndexProbe>,
    /// ORDER BY from the index.
    pub order: Option<IndexOrder>,
    /// Composite indexes the policy lacks that would serve the query better (equality filters
    /// then one range or the ORDER BY path), as index metrics report them: `"/path ASC"`.
    pub potential_composites: Vec<Vec<String>>,
    /// ORDER BY rows can be found on index keys alone: every item is a row (no WHERE, no JOIN) and
    /// every row a result (a projection that is never undefined), so OFFSET skips index entries
    /// and the page reads only the items it returns.
    pub skip_on_keys: bool,
    /// The query only counts rows (`COUNT` of constants, no GROUP BY) and the indexes find
    /// exactly the items its WHERE clause keeps (or there is none): the counts come from index
    /// entries, without reading items.
    pub count_only: bool,
    /// The query reads each item once and every conjunct of its WHERE clause is answered exactly,
    /// by the indexes or by the targets (see [`Access::filter_answered`]).
    pub exact_filter: bool,
    /// `SELECT DISTINCT VALUE` of a path of the item, with no filter but the partition key: the
    /// results come in ascending order, from the index's keys at the path when it is indexed and
    /// every item has a scalar there, else from the items.
    pub distinct_keys: Option<Vec<IndexStep>>,
    /// Every aggregate is `MIN` or `MAX` of this indexed path of the item, with no GROUP BY and a
    /// filter the indexes answer exactly (or none): the index's first and last keys among the
    /// items the filter finds answer them when every item has a scalar there.
    pub min_max: Option<Vec<IndexStep>>,
    /// The policy indexes the `distinct_keys` path.
    pub distinct_indexed: bool,
    /// The composite index the filter seeks (paths with their directions).
    pub composite_filter: Option<Vec<(Vec<IndexStep>, bool)>>,
}

impl Access {
    /// Whether the query reads every item of its partitions in scan order.
    pub fn is_scan(&self) -> bool {
        self.filter.is_none() && self.order.is_none()
    }

    /// Whether a predicate is an index seek (few items are likely: with ORDER BY, the executor
    /// sorts what the seek finds when it finds few, rather than walking the ORDER BY index).
    pub fn has_seek(&self) -> bool {
        self.filter.is_some()
            && self
                .predicates
                .iter()
                .any(|p| matches!(p.strategy, PredicateStrategy::IndexSeek | PredicateStrategy::Composite))
    }
}

/// Chooses the access path of a query under a policy. `pinned_key_paths`: the partition key's
/// paths when the query reads only the logical partitions its filter pins (a seek on them would
/// find what the targets already are).
pub fn choose(query: &BoundQuery, policy: &IndexingPolicy, pinned_key_paths: &[Vec<IndexStep>]) -> Access {
    let Some(bases) = source_paths(query) else { return Access::default() };
    let chooser = Chooser { bases, policy };
    let mut access = Access::default();
    let mut probes = Vec::new();
    let mut equalities: Vec<(Vec<IndexStep>, IndexKey)> = Vec::new();
    if let Some(filter) = &query.filter {
        for conjunct in conjuncts(filter) {
            let (probe, mut predicate) = chooser.predicate(conjunct);
            if let Some(IndexProbe::Range { path, lower: Bound::Included(l), upper: Bound::Included(u) }) = &probe {
                if l == u {
                    equalities.push((path.clone(), l.clone()));
                }
            }
            let on_key = probe.as_ref().is_some_and(|p| {
                predicate.strategy == PredicateStrategy::IndexSeek
                    && p.paths().iter().all(|path| pinned_key_paths.iter().any(|k| k == path))
            });
            if on_key {
                // The targets are exactly the logical partitions holding those keys.
                predicate.strategy = PredicateStrategy::PartitionKey;
                predicate.path = probe.as_ref().and_then(|p| p.paths().first().map(|p| policy_path(p)));
                predicate.exact = true;
            } else if let Some(probe) = probe {
                probes.push((access.predicates.len(), probe));
            }
            access.predicates.push(predicate);
        }
    }
    if let Some((composite, used)) = compose(policy, &probes) {
        let spec = format!("({})", composite_specs(&composite_paths(&composite)).join(", "));
        for &i in &used {
            access.predicates[i].strategy = PredicateStrategy::Composite;
            access.predicates[i].path = Some(spec.clone());
        }
        probes.retain(|(i, _)| !used.contains(i));
        access.composite_filter = Some(composite_paths(&composite));
        probes.push((used[0], composite));
    }
    let mut probes: Vec<IndexProbe> = probes.into_iter().map(|(_, p)| p).collect();
    access.filter = match probes.len() {
        0 => None,
        1 => probes.pop(),
        _ => Some(IndexProbe::And(probes)),
    };
    // The query reads each item once (`FROM c`, no JOIN): its rows are the items.
    let plain = matches!(query.sources.as_slice(), [Source { kind: SourceKind::Items, .. }]);
    access.order = chooser.order(query).filter(|_| plain);
    if let Some(order) = &mut access.order {
        for (path, _) in &order.composite {
            match equalities.iter().find(|(p, _)| p == path) {
                Some((_, key)) => order.prefix.push(key.clone()),
                None => break,
            }
        }
    }
    access.potential_composites = potential_composites(query, &access, policy);
    access.skip_on_keys = access.order.as_ref().is_some_and(|o| o.composite.is_empty())
        && query.filter.is_none()
        && !query.distinct
        && query.rank.is_none()
        && matches!(query.projection, BoundProjection::Star(_) | BoundProjection::List(_));
    access.count_only = query.group_by.is_none()
        && plain
        && !query.aggregates.is_empty()
        && query
            .aggregates
            .iter()
            .all(|a| a.kind == AggregateKind::Count && matches!(&a.arg, BoundExpr::Const(v) if !v.is_undefined()))
        && access.predicates.iter().all(|p| p.exact);
    access.exact_filter = plain && access.predicates.iter().all(|p| p.exact);
    // Only the partition key filters: the targets hold exactly the rows.
    let unfiltered = access.filter.is_none() && access.predicates.iter().all(|p| p.exact);
    let simple = unfiltered && plain && query.rank.is_none() && query.group_by.is_none();
    let indexed = |path: Vec<IndexStep>| {
        (policy.mode == IndexingMode::Consistent && !path.contains(&IndexStep::Element) && policy.is_indexed(&path))
            .then_some(path)
    };
    if simple && query.distinct && query.order_by.is_empty() && query.aggregates.is_empty() {
        if let BoundProjection::Value(e) = &query.projection {
            access.distinct_keys = chooser.path(e);
            access.distinct_indexed = access.distinct_keys.clone().and_then(indexed).is_some();
        }
    }
    // MIN and MAX may have a filter the indexes answer exactly: the keys are those of the items
    // it finds.
    let exact = access.predicates.iter().all(|p| p.exact);
    if exact && plain && query.rank.is_none() && query.group_by.is_none() && !query.aggregates.is_empty() {
        let mut paths = query.aggregates.iter().map(|a| match a.kind {
            AggregateKind::Min | AggregateKind::Max => chooser.path(&a.arg),
            _ => None,
        });
        let first = paths.next().flatten();
        if paths.all(|p| p.is_some() && p == first) {
            access.min_max = first.and_then(indexed);
        }
    }
    access
}

fn composite_paths(probe: &IndexProbe) -> Vec<(Vec<IndexStep>, bool)> {
    match probe {
        IndexProbe::Composite { paths, .. } => paths.clone(),
        _ => Vec::new(),
    }
}

/// Equalities on the leading paths of a composite index of the policy and, optionally, a range
/// on its next path, when those are all its paths (an item lacking a scalar at another path
/// would have no tuple): one probe of the composite instead of one per path. Returns the probe
/// and the predicates (by number) it serves; the composite serving the most predicates wins.
fn compose(policy: &IndexingPolicy, served: &[(usize, IndexProbe)]) -> Option<(IndexProbe, Vec<usize>)> {
    if policy.mode != IndexingMode::Consistent {
        return None;
    }
    let single = |p: &IndexProbe| match p {
        IndexProbe::Range { path, lower, upper } if !path.contains(&IndexStep::Element) => {
            Some((path.clone(), lower.clone(), upper.clone()))
        }
        _ => None,
    };
    let mut best: Option<(IndexProbe, Vec<usize>)> = None;
    for composite in &policy.composite {
        let mut used = Vec::new();
        let mut equal = Vec::new();
        let mut range = None;
        for (position, cp) in composite.iter().enumerate() {
            let found = served.iter().find_map(|(i, p)| {
                let (path, lower, upper) = single(p)?;
                (path == cp.segments && !used.contains(i)).then_some((*i, lower, upper))
            });
            let Some((i, lower, upper)) = found else { break };
            match (&lower, &upper) {
                (Bound::Included(l), Bound::Included(u)) if l == u => {
                    equal.push(l.clone());
                    used.push(i);
                }
                _ if position + 1 == composite.len() => {
                    range = Some((lower, upper));
                    used.push(i);
                    break;
                }
                _ => break,
            }
        }
        let whole = used.len() == composite.len();
        if whole && best.as_ref().is_none_or(|(_, b)| b.len() < used.len()) {
            let paths = composite.iter().map(|cp| (cp.segments.clone(), cp.descending)).collect();
            best = Some((IndexProbe::Composite { paths, equal, range }, used));
        }
    }
    best
}

/// Equality filters on some paths and a range on one more, or an ORDER BY on one more: the
/// composite index (equalities first) a policy could add, unless it has it.
fn potential_composites(query: &BoundQuery, access: &Access, policy: &IndexingPolicy) -> Vec<Vec<String>> {
    if policy.mode != IndexingMode::Consistent {
        return Vec::new();
    }
    let bare = |p: &str| p.trim_end_matches("/?").to_string();
    let single = |p: &PredicateAccess| p.path.as_deref().filter(|path| !path.contains("/[]")).map(bare);
    let mut equal: Vec<String> = Vec::new();
    let mut ranges: Vec<String> = Vec::new();
    for p in &access.predicates {
        match (&p.strategy, single(p)) {
            (PredicateStrategy::IndexSeek | PredicateStrategy::PartitionKey, Some(path)) if !equal.contains(&path) => {
                equal.push(path)
            }
            (PredicateStrategy::IndexRangeScan, Some(path)) => ranges.push(path),
            _ => {}
        }
    }
    if equal.is_empty() {
        return Vec::new();
    }
    let last = match (ranges.as_slice(), &access.order, query.order_by.first()) {
        ([range], _, _) if !equal.contains(range) => format!("{range} ASC"),
        ([], Some(order), _) if !order.composite.is_empty() => return Vec::new(),
        ([], Some(order), Some(key)) => {
            let path = bare(&policy_path(&order.path));
            if equal.contains(&path) {
                return Vec::new();
            }
            format!("{path} {}", if key.descending { "DESC" } else { "ASC" })
        }
        _ => return Vec::new(),
    };
    let mut specs: Vec<String> = equal.iter().map(|p| format!("{p} ASC")).collect();
    specs.push(last);
    let has = policy.composite.iter().any(|c| {
        c.len() == specs.len()
            && c.iter().zip(&specs).all(|(cp, spec)| {
                let (path, dir) = spec.rsplit_once(' ').unwrap_or((spec, "ASC"));
                bare(&policy_path(&cp.segments)) == path && cp.descending == (dir == "DESC")
            })
    });
    if has {
        Vec::new()
    } else {
        vec![specs]
    }
}

/// The index metrics of a query, in the service's PopulateIndexMetrics (V2) JSON: the single
/// indexes the filters and ORDER BY use, the single indexes excluded paths would need, and the
/// composite indexes that would serve the query better.
pub fn index_metrics(access: &Access) -> Value {
    let spec = |path: &str| Value::object([("IndexSpec".to_string(), Value::from(path))]);
    // The service lists them last predicate first; an equality on the ORDER BY path makes the
    // order trivial and is not listed (the emulator's recorded outputs, .NET SDK baseline
    // `IndexMetricsParserBaselineTest`).
    let order_path = access.order.as_ref().filter(|o| o.composite.is_empty()).map(|o| policy_path(&o.path));
    let utilized_composites: Vec<Value> = access
        .composite_filter
        .iter()
        .chain(access.order.iter().filter(|o| !o.composite.is_empty()).map(|o| &o.composite))
        .map(|keys| {
            let specs = composite_specs(keys).into_iter().map(Value::from).collect();
            Value::object([("IndexSpecs".to_string(), Value::Array(Arc::new(specs)))])
        })
        .collect();
    let mut utilized: Vec<String> = Vec::new();
    for p in access.predicates.iter().rev() {
        let trivial = p.strategy == PredicateStrategy::IndexSeek && p.path == order_path;
        if !matches!(p.strategy, PredicateStrategy::Filter(_) | PredicateStrategy::Composite) && !trivial {
            if let Some(path) = &p.path {
                if !utilized.contains(path) {
                    utilized.push(path.clone());
                }
            }
        }
    }
    let trivial_order = access
        .predicates
        .iter()
        .any(|p| p.strategy == PredicateStrategy::IndexSeek && p.path.is_some() && p.path == order_path);
    if let Some(path) = order_path.filter(|_| !trivial_order) {
        if !utilized.contains(&path) {
            utilized.push(path);
        }
    }
    let distinct = access.distinct_keys.as_ref().filter(|_| access.distinct_indexed);
    for path in distinct.into_iter().chain(&access.min_max) {
        let path = policy_path(path);
        if !utilized.contains(&path) {
            utilized.push(path);
        }
    }
    let mut potential: Vec<String> = Vec::new();
    for p in &access.predicates {
        if let Some(path) = &p.potential {
            if !potential.contains(path) {
                potential.push(path.clone());
            }
        }
    }
    let scored = |v: Value| match v {
        Value::Object(m) => {
            let mut m = (*m).clone();
            m.insert("IndexImpactScore".into(), Value::from("High"));
            Value::from(m)
        }
        other => other,
    };
    let composites: Vec<Value> = access
        .potential_composites
        .iter()
        .map(|specs| {
            Value::object([
                (
                    "IndexSpecs".to_string(),
                    Value::Array(Arc::new(specs.iter().map(|s| Value::from(s.as_str())).collect())),
                ),
                ("IndexImpactScore".to_string(), Value::from("High")),
            ])
        })
        .collect();
    let list = |items: Vec<Value>| Value::Array(Arc::new(items));
    Value::object([
        (
            "UtilizedIndexes".to_string(),
            Value::object([
                ("SingleIndexes".to_string(), list(utilized.iter().map(|p| spec(p)).collect())),
                ("CompositeIndexes".to_string(), list(utilized_composites)),
            ]),
        ),
        (
            "PotentialIndexes".to_string(),
            Value::object([
                ("SingleIndexes".to_string(), list(potential.iter().map(|p| scored(spec(p))).collect())),
                ("CompositeIndexes".to_string(), list(composites)),
            ]),
        ),
    ])
}

/// The top-level terms of `a AND b AND ...`, in order, iteratively (a long AND chain is deep on
/// the left).
pub fn conjuncts(e: &BoundExpr) -> Vec<&BoundExpr> {
    let mut out = Vec::new();
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match e {
            BoundExpr::Binary(BinaryOp::And, l, r) => {
                stack.push(r);
                stack.push(l);
            }
            _ => out.push(e),
        }
    }
    out
}

/// The document path each source's alias stands for, by slot: the item's root for `FROM c`,
/// `/tags/[]` for `JOIN t IN c.tags` (its elements) or `FROM t IN c.tags`, `/a` for `FROM c.a`;
/// `None` when the query does not read the container's items.
fn source_paths(query: &BoundQuery) -> Option<Vec<Option<Vec<IndexStep>>>> {
    if !query.reads_items || query.sources.is_empty() {
        return None;
    }
    let mut bases: Vec<Option<Vec<IndexStep>>> = Vec::new();
    let set = |bases: &mut Vec<Option<Vec<IndexStep>>>, slot: usize, path: Option<Vec<IndexStep>>| {
        if bases.len() <= slot {
            bases.resize(slot + 1, None);
        }
        bases[slot] = path;
    };
    for (i, source) in query.sources.iter().enumerate() {
        let elements = |mut p: Vec<IndexStep>| {
            p.push(IndexStep::Element);
            p
        };
        match &source.kind {
            SourceKind::Items if i == 0 => set(&mut bases, source.slot, Some(Vec::new())),
            SourceKind::ItemPath { root, steps } if i == 0 => {
                set(&mut bases, *root, Some(Vec::new()));
                let path = Chooser::key_steps(steps);
                set(&mut bases, source.slot, path);
            }
            SourceKind::ItemIterate { root, array } if i == 0 => {
                set(&mut bases, *root, Some(Vec::new()));
                let path = Chooser { bases: bases.clone(), policy: &IndexingPolicy::default() }.path(array);
                set(&mut bases, source.slot, path.map(elements));
            }
            SourceKind::Iterate(array) if i > 0 => {
                let path = Chooser { bases: bases.clone(), policy: &IndexingPolicy::default() }.path(array);
                set(&mut bases, source.slot, path.map(elements));
            }
            SourceKind::Value(value) if i > 0 => {
                let path = Chooser { bases: bases.clone(), policy: &IndexingPolicy::default() }.path(value);
                set(&mut bases, source.slot, path);
            }
            _ if i == 0 => return None,
            _ => {}
        }
    }
    Some(bases)
}

struct Chooser<'a> {
    /// The document path of each slot's alias (see [`source_paths`]).
    bases: Vec<Option<Vec<IndexStep>>>,
    policy: &'a IndexingPolicy,
}

impl Chooser<'_> {
    /// The document path `e` reads, when it is one (`c.a.b`, `t.name` for `JOIN t IN c.tags`:
    /// `/tags/[]/name`; array positions are not).
    fn path(&self, e: &BoundExpr) -> Option<Vec<IndexStep>> {
        let (slot, steps) = match e {
            BoundExpr::Path { slot, steps } => (*slot, &steps[..]),
            BoundExpr::Slot(slot) => (*slot, &[][..]),
            _ => return None,
        };
        let mut path = self.bases.get(slot)?.clone()?;
        path.extend(Self::key_steps(steps)?);
        Some(path)
    }

    fn key_steps(steps: &[Step]) -> Option<Vec<IndexStep>> {
        steps
            .iter()
            .map(|s| match s {
                Step::Key(k) => Some(IndexStep::Key(k.clone())),
                Step::Index(_) => None,
            })
            .collect()
    }

    fn order(&self, q: &BoundQuery) -> Option<IndexOrder> {
        if q.order_by.is_empty() || q.sources.len() != 1 || q.rank.is_some() || q.is_aggregate() {
            return None;
        }
        if self.policy.mode != IndexingMode::Consistent {
            return None;
        }
        let keys: Vec<(Vec<IndexStep>, bool)> =
            q.order_by.iter().map(|k| self.path(&k.expr).map(|p| (p, k.descending))).collect::<Option<_>>()?;
        let (path, descending) = keys[0].clone();
        if keys.len() == 1 {
            return self.policy.is_indexed(&path).then_some(IndexOrder {
                path,
                descending,
                composite: Vec::new(),
                prefix: Vec::new(),
            });
        }
        self.policy.has_composite(&keys).then_some(IndexOrder { path, descending, composite: keys, prefix: Vec::new() })
    }

    /// The probe of one conjunct and how it is served.
    fn predicate(&self, e: &BoundExpr) -> (Option<IndexProbe>, PredicateAccess) {
        match self.probe(e) {
            Ok((probe, strategy)) => {
                let path = probe.paths().first().map(|p| policy_path(p));
                (Some(probe), PredicateAccess { path, strategy, exact: self.exact(e), potential: None })
            }
            Err(why) => {
                // What the predicate would use under a policy indexing every path.
                let everything = IndexingPolicy::default();
                let potential = (self.policy.mode == IndexingMode::Consistent)
                    .then(|| Chooser { bases: self.bases.clone(), policy: &everything }.probe(e).ok())
                    .flatten()
                    .and_then(|(probe, _)| probe.paths().first().map(|p| policy_path(p)));
                (
                    None,
                    PredicateAccess { path: None, strategy: PredicateStrategy::Filter(why), exact: false, potential },
                )
            }
        }
    }

    /// Whether the probe of `e` finds exactly the items for which `e` holds: every part of it is
    /// served (an AND whose parts are not all served finds more).
    fn exact(&self, e: &BoundExpr) -> bool {
        match e {
            BoundExpr::Binary(BinaryOp::And, l, r) | BoundExpr::Binary(BinaryOp::Or, l, r) => {
                self.exact(l) && self.exact(r)
            }
            BoundExpr::Call { function, args, .. } if function.name() == "RegexMatch" => {
                self.probe(e).is_ok() && regex_decides_every_string(args)
            }
            _ => self.probe(e).is_ok_and(|(_, strategy)| strategy != PredicateStrategy::SpatialScan),
        }
    }

    /// A spatial probe on the item path `e` reads, when the policy has its spatial index.
    fn spatial(&self, e: &BoundExpr, area: Option<SpatialBox>) -> Result<(IndexProbe, PredicateStrategy), String> {
        let path = self.path(e).ok_or("a spatial function of something other than an item path")?;
        if self.policy.mode != IndexingMode::Consistent || !self.policy.spatial.iter().any(|s| s.path.segments == path)
        {
            return Err(format!("{} has no spatial index", policy_path(&path).trim_end_matches("/?")));
        }
        let area = area.ok_or("a shape the spatial index cannot bound (not a small counter-clockwise shape)")?;
        Ok((IndexProbe::Spatial { path, area }, PredicateStrategy::SpatialScan))
    }

    /// `ST_DISTANCE(path, point) < r` (`<=`; either argument order, either side).
    fn distance(
        &self,
        call: &BoundExpr,
        op: BinaryOp,
        limit: &BoundExpr,
    ) -> Option<Result<(IndexProbe, PredicateStrategy), String>> {
        let (BoundExpr::Call { function, args, .. }, BoundExpr::Const(Value::Number(r))) = (call, limit) else {
            return None;
        };
        if function.name() != "ST_DISTANCE" || !matches!(op, BinaryOp::Lt | BinaryOp::LtEq) {
            return None;
        }
        let (item, center) = match (&args[0], &args[1]) {
            (BoundExpr::Const(v), other) | (other, BoundExpr::Const(v)) => (other, spatial::point(v)),
            _ => return None,
        };
        Some(self.spatial(item, center.and_then(|c| spatial::distance_box(c, *r))))
    }

    /// The probe for an indexed path, or why there is none.
    fn indexed(&self, path: Vec<IndexStep>) -> Result<Vec<IndexStep>, String> {
        if self.policy.mode == IndexingMode::None {
            Err("the indexing mode is none".into())
        } else if !self.policy.is_indexed(&path) {
            Err(format!("{} is not indexed", policy_path(&path)))
        } else {
            Ok(path)
        }
    }

    /// `LEFT(path, n) = 'text'` or `SUBSTRING(path, 0, n) = 'text'` (`call = constant`): a
    /// prefix when the text is n UTF-16 code units long, the text itself when it is shorter
    /// (the whole string was kept); `None` when it is not that shape.
    fn leading(
        &self,
        call: &BoundExpr,
        constant: &BoundExpr,
    ) -> Option<Result<(IndexProbe, PredicateStrategy), String>> {
        let (BoundExpr::Call { function, args, .. }, BoundExpr::Const(Value::String(text))) = (call, constant) else {
            return None;
        };
        let count = match (function.name(), args.as_slice()) {
            ("LEFT", [_, BoundExpr::Const(Value::Number(n))]) => *n,
            ("SUBSTRING", [_, BoundExpr::Const(Value::Number(start)), BoundExpr::Const(Value::Number(n))])
                if *start == 0.0 =>
            {
                *n
            }
            _ => return None,
        };
        // A slice cutting a surrogate pair ends in U+FFFD: leave those texts to the filter.
        if count.fract() != 0.0 || !(0.0..=1e9).contains(&count) || text.contains('\u{fffd}') {
            return None;
        }
        let path = self.path(&args[0])?;
        let units = text.encode_utf16().count() as f64;
        let probe = |path| match units.partial_cmp(&count) {
            Some(std::cmp::Ordering::Equal) => Some(IndexProbe::Prefix { path, prefix: text.to_string() }),
            Some(std::cmp::Ordering::Less) => Some(IndexProbe::equals(path, IndexKey::string(text))),
            _ => None,
        };
        Some(self.indexed(path).and_then(|path| {
            probe(path).map(|p| (p, PredicateStrategy::IndexRangeScan)).ok_or_else(|| "never true".to_string())
        }))
    }

    fn probe(&self, e: &BoundExpr) -> Result<(IndexProbe, PredicateStrategy), String> {
        use PredicateStrategy::*;
        if e.calls_udf() {
            // "UDF's do not utilize the index so evaluating the UDF will require loading
            // documents" (research, section 4).
            return Err("a user-defined function: UDFs never use the index, each item read runs it".into());
        }
        match e {
            BoundExpr::Binary(
                op @ (BinaryOp::Eq | BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq),
                l,
                r,
            ) => {
                if *op == BinaryOp::Eq {
                    if let Some(found) = self.leading(l, r).or_else(|| self.leading(r, l)) {
                        return found;
                    }
                }
                if let Some(found) = self.distance(l, *op, r).or_else(|| self.distance(r, flip(*op), l)) {
                    return found;
                }
                let (path, key, op) = match (self.path(l), self.path(r), constant_key(l), constant_key(r)) {
                    (Some(p), _, _, Some(k)) => (p, k, *op),
                    (_, Some(p), Some(k), _) => (p, k, flip(*op)),
                    _ => {
                        return Err(match (&**l, &**r) {
                            (BoundExpr::Call { function, .. }, _) | (_, BoundExpr::Call { function, .. }) => {
                                format!("{} of the value: the index cannot answer it", function.name())
                            }
                            _ => "not an item path compared with a scalar constant".into(),
                        })
                    }
                };
                let path = self.indexed(path)?;
                if op == BinaryOp::Eq {
                    return Ok((IndexProbe::equals(path, key), IndexSeek));
                }
                let (low, high) = type_range(&key);
                let (lower, upper) = match op {
                    BinaryOp::Lt => (low, Bound::Excluded(key)),
                    BinaryOp::LtEq => (low, Bound::Included(key)),
                    BinaryOp::Gt => (Bound::Excluded(key), high),
                    _ => (Bound::Included(key), high),
                };
                Ok((IndexProbe::Range { path, lower, upper }, IndexRangeScan))
            }
            BoundExpr::Between { expr, low, high, negated: false } => {
                let path = self.path(expr).ok_or("BETWEEN on something other than an item path")?;
                let (Some(lo), Some(hi)) = (constant_key(low), constant_key(high)) else {
                    return Err("BETWEEN without scalar constant bounds".into());
                };
                if type_range(&lo) != type_range(&hi) {
                    return Err("BETWEEN bounds of two types".into());
                }
                let path = self.indexed(path)?;
                Ok((IndexProbe::Range { path, lower: Bound::Included(lo), upper: Bound::Included(hi) }, IndexRangeScan))
            }
            BoundExpr::In { expr, list, negated: false, .. } => {
                let path = self.path(expr).ok_or("IN on something other than an item path")?;
                let keys: Option<Vec<IndexKey>> = list.iter().map(constant_key).collect();
                let keys = keys.ok_or("IN with a value that is not a scalar constant")?;
                let path = self.indexed(path)?;
                let probes = keys.into_iter().map(|k| IndexProbe::equals(path.clone(), k)).collect();
                Ok((IndexProbe::Or(probes), IndexSeek))
            }
            BoundExpr::Call { function, args, .. } => {
                let exact = args.get(2).is_none_or(|a| matches!(a, BoundExpr::Const(Value::Bool(false))));
                match function.name() {
                    "ARRAY_CONTAINS" if exact => {
                        let path = self.path(&args[0]).ok_or("ARRAY_CONTAINS of something other than an item path")?;
                        let key =
                            constant_key(&args[1]).ok_or("ARRAY_CONTAINS of a value that is not a scalar constant")?;
                        let mut path = path;
                        path.push(IndexStep::Element);
                        let path = self.indexed(path)?;
                        Ok((IndexProbe::equals(path, key), IndexSeek))
                    }
                    "STARTSWITH" if exact => {
                        let path = self.path(&args[0]).ok_or("STARTSWITH of something other than an item path")?;
                        let Some(BoundExpr::Const(Value::String(prefix))) = args.get(1) else {
                            return Err("STARTSWITH with a prefix that is not a string constant".into());
                        };
                        let path = self.indexed(path)?;
                        Ok((IndexProbe::Prefix { path, prefix: prefix.to_string() }, IndexRangeScan))
                    }
                    "ARRAY_CONTAINS" => Err("ARRAY_CONTAINS matching partially".into()),
                    "STARTSWITH" | "StringEquals" | "CONTAINS" | "ENDSWITH" => {
                        let name = function.name();
                        let path = self
                            .path(&args[0])
                            .ok_or_else(|| format!("{name} of something other than an item path"))?;
                        let Some(BoundExpr::Const(Value::String(needle))) = args.get(1) else {
                            return Err(format!("{name} of a value that is not a string constant"));
                        };
                        let ignore_case = match args.get(2) {
                            None | Some(BoundExpr::Const(Value::Undefined)) => false,
                            Some(BoundExpr::Const(Value::Bool(b))) => *b,
                            Some(_) => return Err(format!("{name} with a case flag that is not a constant")),
                        };
                        let path = self.indexed(path)?;
                        if name == "StringEquals" && !ignore_case {
                            return Ok((IndexProbe::equals(path, IndexKey::string(needle)), IndexSeek));
                        }
                        let test = match name {
                            "STARTSWITH" => TextTest::StartsWith,
                            "StringEquals" => TextTest::Equals,
                            "CONTAINS" => TextTest::Contains,
                            _ => TextTest::EndsWith,
                        };
                        let strategy = match test {
                            TextTest::StartsWith | TextTest::Equals => ExpandedScan,
                            _ => FullIndexScan,
                        };
                        let describe = format!("{name}(_, {needle:?}, {ignore_case})");
                        let test = StringTest { test: Arc::new(test.matcher(needle, ignore_case)), describe };
                        Ok((IndexProbe::Strings { path, test }, strategy))
                    }
                    "ST_WITHIN" | "ST_INTERSECTS" => {
                        let (item, shape) = match (&args[0], &args[1]) {
                            (other, BoundExpr::Const(v)) => (other, v),
                            (BoundExpr::Const(v), other) if function.name() == "ST_INTERSECTS" => (other, v),
                            _ => return Err(format!("{} without a constant shape", function.name())),
                        };
                        self.spatial(item, spatial::shape_box(shape))
                    }
                    "RegexMatch" => {
                        let path = self.path(&args[0]).ok_or("RegexMatch of something other than an item path")?;
                        let (Some(BoundExpr::Const(Value::String(pattern))), modifiers) = (args.get(1), args.get(2))
                        else {
                            return Err("RegexMatch with a pattern that is not a string constant".into());
                        };
                        let modifiers = match modifiers {
                            None => "",
                            Some(BoundExpr::Const(Value::String(m))) => m,
                            Some(_) => return Err("RegexMatch with modifiers that are not a string constant".into()),
                        };
                        let re = text::regex(pattern, modifiers)
                            .map_err(|e| format!("RegexMatch with a pattern that does not compile ({e})"))?;
                        let path = self.indexed(path)?;
                        let describe = format!("RegexMatch(_, {pattern:?}, {modifiers:?})");
                        // A string the match would take too long on is a candidate: the item is
                        // read and its filter says so (such a probe is not exact).
                        let test =
                            StringTest { test: Arc::new(move |s: &str| re.is_match(s).unwrap_or(true)), describe };
                        Ok((IndexProbe::Strings { path, test }, FullIndexScan))
                    }
                    name => Err(format!("{name} of the value: the index cannot answer it")),
                }
            }
            BoundExpr::Binary(BinaryOp::Or, _, _) => {
                let mut parts = Vec::new();
                let mut stack = vec![e];
                while let Some(e) = stack.pop() {
                    match e {
                        BoundExpr::Binary(BinaryOp::Or, l, r) => {
                            stack.push(r);
                            stack.push(l);
                        }
                        _ => parts.push(self.probe(e).map_err(|why| format!("a part of the OR is read: {why}"))?.0),
                    }
                }
                Ok((IndexProbe::Or(parts), IndexUnion))
            }
            BoundExpr::Binary(BinaryOp::And, _, _) => {
                let probes: Vec<IndexProbe> =
                    conjuncts(e).into_iter().filter_map(|c| self.probe(c).ok()).map(|p| p.0).collect();
                if probes.is_empty() {
                    Err("no part of the AND uses an index".into())
                } else {
                    Ok((IndexProbe::And(probes), IndexSeek))
                }
            }
            BoundExpr::Like { expr, compiled: Some(pattern), negated: false, .. } => {
                let path = self.path(expr).ok_or("LIKE on something other than an item path")?;
                let path = self.indexed(path)?;
                let pattern = pattern.clone();
                let describe = format!("LIKE {pattern:?}");
                let test = StringTest { test: Arc::new(move |s: &str| pattern.matches(s)), describe };
                Ok((IndexProbe::Strings { path, test }, FullIndexScan))
            }
            BoundExpr::Const(Value::Bool(true)) => Err("always true".into()),
            _ => Err("not a comparison of an item path with a constant".into()),
        }
    }
}

/// A scalar constant as an index key (non-finite numbers have none: no item holds them).
fn constant_key(e: &BoundExpr) -> Option<IndexKey> {
    match e {
        BoundExpr::Const(v) => IndexKey::from_value(v),
        _ => None,
    }
}

/// `a op b` as `b op' a`.
fn flip(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::GtEq => BinaryOp::LtEq,
        other => other,
    }
}

/// The keys of the constant's type: comparisons hold only between values of one type.
fn type_range(key: &IndexKey) -> (Bound<IndexKey>, Bound<IndexKey>) {
    match key {
        IndexKey::Null => (Bound::Included(IndexKey::Null), Bound::Included(IndexKey::Null)),
        IndexKey::Bool(_) => (Bound::Included(IndexKey::Bool(false)), Bound::Included(IndexKey::Bool(true))),
        IndexKey::Number(_) => (Bound::Excluded(IndexKey::Bool(true)), Bound::Excluded(IndexKey::string(""))),
        IndexKey::Short(_) | IndexKey::Long(_) => (Bound::Included(IndexKey::string("")), Bound::Unbounded),
    }
}

/// A path as a policy writes its scalar: `/a/b/?`, `/tags/[]/?`.
pub fn policy_path(path: &[IndexStep]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            IndexStep::Key(k) if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !k.is_empty() => {
                s.push('/');
                s.push_str(k);
            }
            IndexStep::Key(k) => {
                s.push_str("/\"");
                s.push_str(&k.replace('"', "\\\""));
                s.push('"');
            }
            IndexStep::Element => s.push_str("/[]"),
        }
    }
    s.push_str("/?");
    s
}

impl fmt::Display for PredicateStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PredicateStrategy::IndexSeek => write!(f, "index seek"),
            PredicateStrategy::IndexRangeScan => write!(f, "index range scan"),
            PredicateStrategy::ExpandedScan => write!(f, "expanded index scan (every string key, ignoring case)"),
            PredicateStrategy::FullIndexScan => write!(f, "full index scan (every string key tested)"),
            PredicateStrategy::Composite => write!(f, "composite index seek"),
            PredicateStrategy::SpatialScan => {
                write!(f, "spatial index (the points in a box around the shape, and every other geometry)")
            }
            PredicateStrategy::IndexUnion => write!(f, "union of index lookups"),
            PredicateStrategy::PartitionKey => write!(f, "the partition key (the targets are its logical partitions)"),
            PredicateStrategy::Filter(why) => write!(f, "filter on the items read ({why})"),
        }
    }
}

/// Whether a `RegexMatch` probe's pattern is small enough to decide every string an item can
/// hold within the match's work bound; a larger one makes some strings candidates only.
fn regex_decides_every_string(args: &[BoundExpr]) -> bool {
    let modifiers = match args.get(2) {
        None => "",
        Some(BoundExpr::Const(Value::String(m))) => m,
        Some(_) => return false,
    };
    match args.get(1) {
        Some(BoundExpr::Const(Value::String(pattern))) => {
            text::regex(pattern, modifiers).is_ok_and(|re| re.decides_within(MAX_ITEM_BYTES))
        }
        _ => false,
    }
}
