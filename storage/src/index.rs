//! The indexes of one physical partition, kept in step with its items.
//!
//! Every write to a partition updates its [`PartitionIndex`] under the same write lock, so an index
//! never disagrees with the items. What is indexed follows the [`IndexingPolicy`] the index was
//! built for:
//!
//! - **Range entries**: for every indexed path, the scalars found there (`null`, booleans, numbers,
//!   strings), each mapped to the creation sequence numbers of the items holding it. Paths are kept
//!   in a trie of [`IndexStep`]s; every element of an array is entered under the array's `[]`
//!   step, so `/tags/[]/?` finds items by one of their tags. `id` always, and `_ts` from the item's
//!   metadata, as the service does.
//! - **Composite entries**: for every composite index, the tuple of its paths' scalars.
//!
//! Keys sort in the engine's one order of values (null < false < true < numbers < strings; numbers
//! numerically with `-0 = 0`; strings by their UTF-8 bytes), so a range of keys is a range of
//! values and the index yields items in ORDER BY order. A string key does not copy the string: it
//! shares the item's encoded bytes.
//!
//! Sequence numbers (unique in the container, kept by replaces) name items; `locations` maps each
//! to its logical partition. Within one key, items are in sequence order; a walk reads them
//! forward or backward as the first ORDER BY key is ascending or descending ([`tie_order`]), which
//! is how the engine breaks ORDER BY ties, so an index walk and a sort give the same order.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::Arc;

use cosmoql_value::Value;
use indexmap::IndexMap;

use crate::doc::{DocRef, Node};
use crate::item::StoredItem;
use cosmoql_catalog::epk::Epk;
use cosmoql_catalog::indexing::{IndexStep, IndexingMode, IndexingPolicy};
use cosmoql_catalog::{IndexKey, IndexProbe, SpatialBox};

mod bulk;
mod composite;
mod helpers;
mod postings;
mod spatial;
use self::composite::*;
use self::helpers::*;
use self::postings::*;
use self::spatial::*;

/// The index of one document path and the paths below it.
#[derive(Debug, Default)]
struct PathNode {
    /// Whether the policy indexes the scalars at this path.
    indexed: bool,
    /// Children by property name (UTF-8 bytes, as a document holds them: a walk entering an item
    /// looks each up once, without checking or copying the name), in the order they were first
    /// seen: items of one shape find the i-th property's child at position i, with one compare.
    keys: IndexMap<Vec<u8>, PathNode, foldhash::fast::RandomState>,
    element: Option<Box<PathNode>>,
    values: BTreeMap<IndexKey, Postings>,
    /// Number of (key, item) entries in `values`.
    entries: usize,
    /// Entries collected by a bulk build, not yet in `values`.
    pending: Vec<(IndexKey, u64)>,
}

/// A step of the path being walked, borrowed from the item.
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a [u8]),
    Element,
}

/// The most entries an ordered walk reserves room for at once (a walk asks for its next chunk,
/// at most 4,096, or for a limit that may be huge: it grows past this only when it finds them).
const MAX_RESERVED_ENTRIES: usize = 1024;

/// The order of rows whose ORDER BY keys are equal: by their items' creation sequence numbers
/// (the document part of their `_rid`), ascending when the first ORDER BY key is ascending and
/// descending when it is descending. The service's index walks give ties in that order, and the
/// SDKs' ORDER BY pipelines count on it when they resume from a continuation token: "If there is
/// a tie in the sort order the documents should be in _rid order in the same direction as the
/// first order by field" (azure-cosmos-dotnet-v3, `OrderByCrossPartitionQueryPipelineStage`;
/// azure-sdk-for-java `OrderByUtils`; @azure/cosmos `RidSkipCountFilter`). Index walks, sorts
/// and merges all follow it, so every access path gives one order.
pub fn tie_order(seq: u64, other: u64, first_key_descending: bool) -> Ordering {
    if first_key_descending {
        other.cmp(&seq)
    } else {
        seq.cmp(&other)
    }
}

/// The order of one range index's (key, sequence number) entries in a walk: keys ascending, or
/// descending when `descending`, then [`tie_order`]. What the partitions' walks give and what
/// merging them keeps.
pub fn entry_order(descending: bool) -> impl Fn(&(IndexKey, u64), &(IndexKey, u64)) -> Ordering + Copy {
    move |a, b| {
        let keys = if descending { b.0.cmp(&a.0) } else { a.0.cmp(&b.0) };
        keys.then(tie_order(a.1, b.1, descending))
    }
}

/// One key's postings in [`tie_order`], those after `after` (a sequence number of the same key
/// where a walk stopped) only.
fn ties(postings: &Postings, descending: bool, after: Option<u64>) -> Ties<'_> {
    let seqs = postings.seqs();
    let (next, end) = match (descending, after) {
        (false, None) | (true, None) => (0, seqs.len()),
        (false, Some(m)) => (seqs.partition_point(|&s| s <= m), seqs.len()),
        (true, Some(m)) => (0, seqs.partition_point(|&s| s < m)),
    };
    Ties { seqs, next, end, descending }
}

/// What [`ties`] gives: the numbers `next..end` of a key's postings, forward or backward.
struct Ties<'p> {
    seqs: std::borrow::Cow<'p, [u64]>,
    next: usize,
    end: usize,
    descending: bool,
}

impl Iterator for Ties<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        if self.next >= self.end {
            return None;
        }
        if self.descending {
            self.end -= 1;
            self.seqs.get(self.end).copied()
        } else {
            self.next += 1;
            self.seqs.get(self.next - 1).copied()
        }
    }
}

fn owned_path(steps: &[Step<'_>]) -> Vec<IndexStep> {
    steps
        .iter()
        .map(|s| match s {
            Step::Key(k) => IndexStep::Key(String::from_utf8_lossy(k).into_owned()),
            Step::Element => IndexStep::Element,
        })
        .collect()
}

/// Insert, remove, or collect for a bulk build.
#[derive(Clone, Copy, PartialEq)]
enum Change {
    Add,
    Remove,
    Collect,
}

impl PathNode {
    /// The child at `step` (made when new); `hint` is where a property's child is looked for
    /// first (the property's position in its object).
    fn child<'n>(
        &'n mut self,
        step: Step<'_>,
        hint: usize,
        path: &[Step<'_>],
        policy: &IndexingPolicy,
    ) -> &'n mut PathNode {
        let make = || PathNode { indexed: policy.is_indexed(&owned_path(path)), ..PathNode::default() };
        match step {
            Step::Key(k) => {
                let at = match self.keys.get_index(hint) {
                    Some((name, _)) if name.as_slice() == k => hint,
                    _ => match self.keys.get_index_of(k) {
                        Some(at) => at,
                        None => self.keys.insert_full(k.to_vec(), make()).0,
                    },
                };
                &mut self.keys[at]
            }
            Step::Element => self.element.get_or_insert_with(|| Box::new(make())),
        }
    }

    fn change(&mut self, key: IndexKey, seq: u64, change: Change) {
        match change {
            Change::Collect => self.pending.push((key, seq)),
            Change::Add => match self.values.get_mut(&key) {
                Some(p) => self.entries += usize::from(p.insert(seq)),
                None => {
                    self.values.insert(key, Postings::One(seq));
                    self.entries += 1;
                }
            },
            Change::Remove => {
                if let Some(p) = self.values.get_mut(&key) {
                    let (removed, empty) = p.remove(seq);
                    self.entries -= usize::from(removed);
                    if empty {
                        self.values.remove(&key);
                    }
                }
            }
        }
    }

    /// Enters (or removes) every scalar below `v`, which sits at `path`.
    fn walk<'a>(
        &mut self,
        v: DocRef<'a>,
        path: &mut Vec<Step<'a>>,
        shared: &Arc<[u8]>,
        seq: u64,
        change: Change,
        policy: &IndexingPolicy,
    ) {
        match v.node() {
            Some(Node::Object(entries)) => {
                for (i, (k, child)) in entries.enumerate() {
                    path.push(Step::Key(k));
                    self.child(Step::Key(k), i, path, policy).walk(child, path, shared, seq, change, policy);
                    path.pop();
                }
            }
            Some(Node::Array(elements)) => {
                path.push(Step::Element);
                let node = self.child(Step::Element, 0, path, policy);
                for element in elements {
                    node.walk(element, path, shared, seq, change, policy);
                }
                path.pop();
            }
            Some(scalar) if self.indexed => {
                if let Some(key) = key_of_node(scalar, shared) {
                    self.change(key, seq, change);
                }
            }
            _ => {}
        }
    }

    fn split(self, goes_left: &dyn Fn(&u64) -> bool) -> (PathNode, PathNode) {
        let (left_values, right_values) = split_values(self.values, goes_left);
        let mut left = PathNode {
            indexed: self.indexed,
            entries: count(&left_values),
            values: left_values,
            ..PathNode::default()
        };
        let mut right = PathNode {
            indexed: self.indexed,
            entries: count(&right_values),
            values: right_values,
            ..PathNode::default()
        };
        for (k, child) in self.keys {
            let (l, r) = child.split(goes_left);
            left.keys.insert(k.clone(), l);
            right.keys.insert(k, r);
        }
        if let Some(e) = self.element {
            let (l, r) = e.split(goes_left);
            left.element = Some(Box::new(l));
            right.element = Some(Box::new(r));
        }
        (left, right)
    }

    fn find(&self, path: &[IndexStep]) -> Option<&PathNode> {
        let mut node = self;
        for step in path {
            node = match step {
                IndexStep::Key(k) => node.keys.get(k.as_bytes())?,
                IndexStep::Element => node.element.as_deref()?,
            };
        }
        Some(node)
    }

    fn visit<'s>(&'s self, path: &mut Vec<IndexStep>, f: &mut dyn FnMut(&[IndexStep], &'s PathNode)) {
        f(path, self);
        let mut keys: Vec<_> = self.keys.iter().collect();
        keys.sort_by(|a, b| a.0.cmp(b.0));
        for (k, child) in keys {
            path.push(IndexStep::Key(String::from_utf8_lossy(k).into_owned()));
            child.visit(path, f);
            path.pop();
        }
        if let Some(e) = &self.element {
            path.push(IndexStep::Element);
            e.visit(path, f);
            path.pop();
        }
    }
}

/// The key `item` has in the range index at `path` (a path without `[]`), as the index enters
/// it (`_ts` from the item's metadata); `None` when the item holds no scalar there.
pub(crate) fn item_key(item: &StoredItem, path: &[IndexStep]) -> Option<IndexKey> {
    if let [IndexStep::Key(k)] = path {
        if k == "_ts" {
            return IndexKey::number(item.meta.ts as f64);
        }
    }
    key_of_doc(&scalar_at(item, path)?, item.doc.shared())
}

/// How many index terms `item` has under `policy`: a scalar at an indexed path (each array
/// element its own), `_ts`, a tuple per composite index it fills, an entry per spatial path
/// holding an object. What a write's request charge counts.
pub fn indexed_terms(policy: &IndexingPolicy, item: &StoredItem) -> u64 {
    if policy.mode == IndexingMode::None {
        return 0;
    }
    fn walk(v: DocRef<'_>, path: &mut Vec<IndexStep>, policy: &IndexingPolicy) -> u64 {
        if v.is_object() {
            let mut n = 0;
            for (k, child) in v.entries() {
                path.push(IndexStep::Key(k.to_string()));
                n += walk(child, path, policy);
                path.pop();
            }
            n
        } else if v.is_array() {
            path.push(IndexStep::Element);
            let n = v.elements().map(|e| walk(e, path, policy)).sum();
            path.pop();
            n
        } else {
            u64::from(policy.is_indexed(path))
        }
    }
    let scalars = walk(item.doc.root(), &mut Vec::new(), policy);
    let ts = u64::from(policy.is_indexed(&[IndexStep::Key("_ts".into())]));
    let composites = policy
        .composite
        .iter()
        .filter(|c| c.iter().all(|p| scalar_at(item, &p.segments).is_some_and(|v| !v.is_object() && !v.is_array())))
        .count() as u64;
    let spatial =
        policy.spatial.iter().filter(|s| scalar_at(item, &s.path.segments).is_some_and(|v| v.is_object())).count()
            as u64;
    scalars + ts + composites + spatial
}

/// The indexes of one physical partition.
#[derive(Debug)]
pub struct PartitionIndex {
    policy: Arc<IndexingPolicy>,
    root: PathNode,
    composites: Vec<CompositeIndex>,
    spatial: Vec<SpatialEntries>,
    /// Whether writes maintain the index. A suspended index (during a bulk import) is empty,
    /// serves nothing, and is rebuilt by the index transformation.
    live: bool,
    /// Each indexed item's logical partition, by sequence number (the EPKs shared: one per
    /// logical partition in `epks`).
    locations: HashMap<u64, Arc<Epk>, foldhash::fast::RandomState>,
    epks: HashMap<Epk, Arc<Epk>, foldhash::fast::RandomState>,
}

/// Sizes of a partition's indexes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexStats {
    /// (key, item) entries in range and composite indexes.
    pub entries: u64,
    /// Distinct keys.
    pub keys: u64,
    /// Estimated bytes held by the indexes (entries, postings, trie and item locations; the
    /// strings are the items' own bytes).
    pub bytes: u64,
}

impl std::ops::AddAssign for IndexStats {
    fn add_assign(&mut self, o: IndexStats) {
        self.entries += o.entries;
        self.keys += o.keys;
        self.bytes += o.bytes;
    }
}

/// Counts of what an index walk did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexWork {
    /// (key, item) entries read.
    pub entries: u64,
}

impl PartitionIndex {
    /// An empty index for `policy`.
    pub fn new(policy: Arc<IndexingPolicy>) -> Self {
        let composites = policy
            .composite
            .iter()
            .map(|c| CompositeIndex {
                paths: c.iter().map(|p| p.segments.clone()).collect(),
                descending: c.iter().map(|p| p.descending).collect(),
                values: BTreeMap::new(),
                entries: 0,
                pending: Vec::new(),
            })
            .collect();
        let mut spatial: Vec<SpatialEntries> = Vec::new();
        for spec in &policy.spatial {
            if !spatial.iter().any(|e| e.path == spec.path.segments) {
                spatial.push(SpatialEntries { path: spec.path.segments.clone(), ..SpatialEntries::default() });
            }
        }
        PartitionIndex {
            policy,
            root: PathNode::default(),
            composites,
            spatial,
            live: true,
            locations: HashMap::default(),
            epks: HashMap::default(),
        }
    }

    /// A suspended index (see [`PartitionIndex::is_live`]).
    pub fn suspended(policy: Arc<IndexingPolicy>) -> Self {
        PartitionIndex { live: false, ..PartitionIndex::new(policy) }
    }

    /// Whether writes maintain this index and it serves queries.
    pub fn is_live(&self) -> bool {
        self.live
    }

    fn locate(&mut self, epk: &Epk, seq: u64) {
        let shared = match self.epks.get(epk) {
            Some(shared) => Arc::clone(shared),
            None => {
                let shared = Arc::new(epk.clone());
                self.epks.insert(epk.clone(), Arc::clone(&shared));
                shared
            }
        };
        self.locations.insert(seq, shared);
    }

    /// The policy the index follows.
    pub fn policy(&self) -> &Arc<IndexingPolicy> {
        &self.policy
    }

    /// Enters an item.
    pub fn insert(&mut self, epk: &Epk, item: &StoredItem) {
        if !self.live {
            return;
        }
        self.locate(epk, item.meta.seq);
        self.apply(item, Change::Add);
    }

    /// Removes an item entered earlier (the same bytes and metadata).
    pub fn remove(&mut self, item: &StoredItem) {
        if !self.live {
            return;
        }
        if let Some(epk) = self.locations.remove(&item.meta.seq) {
            // The map's copy and `epk`: the logical partition has no other item.
            if Arc::strong_count(&epk) == 2 {
                self.epks.remove(&*epk);
            }
        }
        self.apply(item, Change::Remove);
    }

    fn apply(&mut self, item: &StoredItem, change: Change) {
        if self.policy.mode == IndexingMode::None {
            return;
        }
        let seq = item.meta.seq;
        let shared = item.doc.shared();
        let policy = Arc::clone(&self.policy);
        let mut path = Vec::new();
        self.root.walk(item.doc.root(), &mut path, shared, seq, change, &policy);
        // `_ts` lives in the metadata, not in the document.
        let ts = self.root.child(Step::Key(b"_ts"), usize::MAX, &[Step::Key(b"_ts")], &policy);
        if let Some(key) = IndexKey::number(item.meta.ts as f64) {
            ts.change(key, seq, change);
        }
        for e in &mut self.spatial {
            e.change(item, change);
        }
        for c in &mut self.composites {
            if let Some(tuple) = c.tuple(item, shared) {
                match change {
                    Change::Collect => c.pending.push((tuple, seq)),
                    Change::Add => match c.values.get_mut(&tuple) {
                        Some(p) => c.entries += usize::from(p.insert(seq)),
                        None => {
                            c.values.insert(tuple, Postings::One(seq));
                            c.entries += 1;
                        }
                    },
                    Change::Remove => {
                        if let Some(p) = c.values.get_mut(&tuple) {
                            let (removed, empty) = p.remove(seq);
                            c.entries -= usize::from(removed);
                            if empty {
                                c.values.remove(&tuple);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Divides the index at a logical partition boundary: entries of items whose EPK is below
    /// `boundary` go left, the others right. Entries are moved, not rebuilt from the items.
    pub fn split(self, boundary: &Epk) -> (PartitionIndex, PartitionIndex) {
        let goes_left = |seq: &u64| self.locations.get(seq).is_some_and(|e| **e < *boundary);
        let (left_root, right_root) = self.root.split(&goes_left);
        let mut left_composites = Vec::new();
        let mut right_composites = Vec::new();
        for c in self.composites {
            let (l, r) = split_values(c.values, &goes_left);
            left_composites.push(CompositeIndex {
                paths: c.paths.clone(),
                descending: c.descending.clone(),
                entries: count(&l),
                values: l,
                pending: Vec::new(),
            });
            right_composites.push(CompositeIndex {
                paths: c.paths,
                descending: c.descending,
                entries: count(&r),
                values: r,
                pending: Vec::new(),
            });
        }
        let (mut left_spatial, mut right_spatial) = (Vec::new(), Vec::new());
        for e in self.spatial {
            let (l, r) = e.split(&goes_left);
            left_spatial.push(l);
            right_spatial.push(r);
        }
        let mut left = PartitionIndex {
            policy: Arc::clone(&self.policy),
            root: left_root,
            composites: left_composites,
            spatial: left_spatial,
            live: self.live,
            locations: HashMap::default(),
            epks: HashMap::default(),
        };
        let mut right = PartitionIndex {
            policy: self.policy,
            root: right_root,
            composites: right_composites,
            spatial: right_spatial,
            live: self.live,
            locations: HashMap::default(),
            epks: HashMap::default(),
        };
        for (epk, shared) in self.epks {
            if epk < *boundary {
                left.epks.insert(epk, shared);
            } else {
                right.epks.insert(epk, shared);
            }
        }
        for (seq, epk) in self.locations {
            let side = if *epk < *boundary { &mut left } else { &mut right };
            side.locations.insert(seq, epk);
        }
        (left, right)
    }

    /// Number of items entered.
    pub fn items(&self) -> usize {
        self.locations.len()
    }

    /// The logical partition of an entered item.
    pub fn location(&self, seq: u64) -> Option<&Epk> {
        self.locations.get(&seq).map(|e| &**e)
    }

    /// The index's one copy of `epk`, the EPK [`PartitionIndex::location`] gives for each item of
    /// that logical partition (so a reference to it names the logical partition); `None` when the
    /// index has no item there.
    pub fn interned(&self, epk: &Epk) -> Option<&Epk> {
        self.epks.get(epk).map(|e| &**e)
    }

    /// Whether the range index at `path` is served: the policy indexes it (and the index was
    /// built for it).
    pub fn serves(&self, path: &[IndexStep]) -> bool {
        self.live && self.policy.is_indexed(path)
    }

    /// How many items have a scalar at `path` (for a path without `[]`, at most one each): when it
    /// equals [`PartitionIndex::items`], the index orders every item.
    pub fn items_with_scalar(&self, path: &[IndexStep]) -> usize {
        self.root.find(path).map_or(0, |n| n.entries)
    }

    /// Sequence numbers of the items a probe matches, sorted and distinct; `None` when a path
    /// it reads is not indexed here.
    pub fn probe(&self, probe: &IndexProbe, work: &mut IndexWork) -> Option<Vec<u64>> {
        match probe {
            IndexProbe::Range { path, lower, upper } => {
                let Some(node) = self.indexed_node(path)? else { return Some(Vec::new()) };
                let mut out = Vec::new();
                let mut keys = 0usize;
                for postings in postings_in(node, lower, upper) {
                    postings.extend_into(&mut out);
                    keys += 1;
                }
                work.entries += out.len() as u64;
                // One key's postings (an equality, ARRAY_CONTAINS) are sorted and distinct already.
                Some(if keys <= 1 { out } else { sorted_distinct(out) })
            }
            IndexProbe::Prefix { path, prefix } => {
                let Some(node) = self.indexed_node(path)? else { return Some(Vec::new()) };
                let mut out = Vec::new();
                let from = IndexKey::string(prefix);
                for (key, postings) in node.values.range(from..) {
                    match key {
                        k if k.str_bytes().is_some_and(|s| s.starts_with(prefix.as_bytes())) => {
                            postings.extend_into(&mut out)
                        }
                        _ => break,
                    }
                }
                work.entries += out.len() as u64;
                Some(sorted_distinct(out))
            }
            IndexProbe::Composite { paths, equal, range } => {
                if !self.live {
                    return None;
                }
                let c = self.composites.iter().find(|c| c.serves(paths) == Some(false))?;
                Some(sorted_distinct(c.probe(equal, range.as_ref(), work)))
            }
            IndexProbe::Spatial { path, area } => {
                if !self.live {
                    return None;
                }
                let entries = self.spatial.iter().find(|e| e.path == *path)?;
                Some(sorted_distinct(entries.probe(area, work)))
            }
            IndexProbe::Strings { path, test } => {
                let Some(node) = self.indexed_node(path)? else { return Some(Vec::new()) };
                let mut out = Vec::new();
                let mut keys = 0u64;
                for (key, postings) in node.values.range(IndexKey::string("")..) {
                    keys += 1;
                    let Some(text) = key.str_bytes().and_then(|b| std::str::from_utf8(b).ok()) else { continue };
                    if (test.test)(text) {
                        postings.extend_into(&mut out);
                    }
                }
                // Every key of the path is read, and the entries of those that match.
                work.entries += keys + out.len() as u64;
                Some(sorted_distinct(out))
            }
            IndexProbe::And(list) => {
                let mut acc: Option<Vec<u64>> = None;
                for p in list {
                    let next = self.probe(p, work)?;
                    acc = Some(match acc {
                        None => next,
                        Some(prev) => intersect(&prev, &next),
                    });
                }
                Some(acc.unwrap_or_default())
            }
            IndexProbe::Or(list) => {
                let mut all = Vec::new();
                for p in list {
                    all.extend(self.probe(p, work)?);
                }
                Some(sorted_distinct(all))
            }
        }
    }

    /// How many items a probe matches (the length of [`PartitionIndex::probe`]'s list), from
    /// the postings' lengths when a range answers it on a path no item holds twice (no `[]`)
    /// or on one key: a `COUNT` listing no item (packed postings need not be decoded).
    pub fn probe_count(&self, probe: &IndexProbe, work: &mut IndexWork) -> Option<usize> {
        if let IndexProbe::Range { path, lower, upper } = probe {
            let Some(node) = self.indexed_node(path)? else { return Some(0) };
            let (mut keys, mut n) = (0usize, 0usize);
            for postings in postings_in(node, lower, upper) {
                keys += 1;
                n += postings.len();
            }
            if keys <= 1 || !path.contains(&IndexStep::Element) {
                work.entries += n as u64;
                return Some(n);
            }
        }
        self.probe(probe, work).map(|seqs| seqs.len())
    }

    /// `None` when the path is not indexed; `Some(None)` when it is but holds nothing.
    fn indexed_node(&self, path: &[IndexStep]) -> Option<Option<&PathNode>> {
        self.serves(path).then(|| self.root.find(path))
    }

    /// The (key, sequence number) entries at `path` after `after` (or from the start), in key
    /// order (descending if `descending`; within a key, sequence numbers in the same direction:
    /// see [`ties`]), at most `limit` of them whose location satisfies `keep`. `None` when the
    /// path is not indexed, or some item has no scalar there (no entry: the walk would miss it).
    pub fn ordered(
        &self,
        path: &[IndexStep],
        descending: bool,
        after: Option<&(IndexKey, u64)>,
        limit: usize,
        keep: &dyn Fn(&Epk) -> bool,
        work: &mut IndexWork,
    ) -> Option<Vec<(IndexKey, u64, &Epk)>> {
        let mut out = Vec::with_capacity(limit.min(MAX_RESERVED_ENTRIES));
        self.ordered_visit((path, None), descending, after, work, |key, seq| {
            if let Some(epk) = self.locations.get(&seq).filter(|epk| keep(epk)) {
                out.push((key.clone(), seq, &**epk));
            }
            out.len() < limit
        })?;
        Some(out)
    }

    /// Hands the entries [`PartitionIndex::ordered`] walks (every one, kept or not: each is
    /// counted as read) to `visit` until it returns false. `None` when the path is not indexed,
    /// or some item has no scalar there. `policy` is a policy the caller has found indexes the
    /// path: when it is this index's own, the path is not looked up in it again.
    pub fn ordered_visit(
        &self,
        (path, policy): (&[IndexStep], Option<&Arc<IndexingPolicy>>),
        descending: bool,
        after: Option<&(IndexKey, u64)>,
        work: &mut IndexWork,
        mut visit: impl FnMut(&IndexKey, u64) -> bool,
    ) -> Option<()> {
        let checked = policy.is_some_and(|p| Arc::ptr_eq(p, &self.policy));
        let found = match checked {
            true => self.live.then(|| self.root.find(path))?,
            false => self.indexed_node(path)?,
        };
        let node = match found {
            Some(node) if node.entries == self.items() => node,
            None if self.items() == 0 => return Some(()),
            _ => return None,
        };
        let mut go = |(key, postings): (&IndexKey, &Postings)| -> bool {
            let after_seq = after.filter(|(k, _)| k == key).map(|(_, s)| *s);
            for seq in ties(postings, descending, after_seq) {
                work.entries += 1;
                if !visit(key, seq) {
                    return false;
                }
            }
            true
        };
        let range = match after {
            None => (Bound::Unbounded, Bound::Unbounded),
            Some((k, _)) if descending => (Bound::Unbounded, Bound::Included(k)),
            Some((k, _)) => (Bound::Included(k), Bound::Unbounded),
        };
        let entries = node.values.range::<IndexKey, _>(range);
        if descending {
            for e in entries.rev() {
                if !go(e) {
                    break;
                }
            }
        } else {
            for e in entries {
                if !go(e) {
                    break;
                }
            }
        }
        Some(())
    }

    /// Like [`PartitionIndex::ordered`] for ORDER BY on several paths (with their directions),
    /// from a composite index that serves that order: tuples in that order, sequence numbers
    /// within a tuple in the first path's direction ([`ties`]). `None` when no composite index serves it, or when some item has
    /// no scalar at one of the paths (it has no tuple: the caller sorts).
    pub fn composite_ordered(
        &self,
        keys: &[(Vec<IndexStep>, bool)],
        prefix: &[IndexKey],
        after: Option<&(Vec<IndexKey>, u64)>,
        limit: usize,
        keep: &dyn Fn(&Epk) -> bool,
        work: &mut IndexWork,
    ) -> Option<Vec<(Vec<IndexKey>, u64, &Epk)>> {
        if !self.live {
            return None;
        }
        let (c, backward) = self.composites.iter().find_map(|c| c.serves(keys).map(|b| (c, b)))?;
        if c.entries != self.items() {
            return None;
        }
        let after_tuple: Option<Box<[CompositeKey]>> = after.map(|(k, _)| {
            k.iter().zip(&c.descending).map(|(key, &descending)| CompositeKey::new(key.clone(), descending)).collect()
        });
        // Only the tuples starting with `prefix` (the filter's equalities on the leading paths).
        let (mut lower, mut upper) = (Bound::Unbounded, Bound::Unbounded);
        if !prefix.is_empty() {
            let mut start: Vec<CompositeKey> =
                prefix.iter().zip(&c.descending).map(|(k, &d)| CompositeKey::new(k.clone(), d)).collect();
            lower = Bound::Included(Box::from(start.clone()));
            start.push(CompositeKey { key: IndexKey::Null, descending: false, last: true });
            upper = Bound::Excluded(Box::from(start));
        }
        match &after_tuple {
            None => {}
            Some(t) if backward => upper = Bound::Included(t.clone()),
            Some(t) => lower = Bound::Included(t.clone()),
        }
        let range = (lower, upper);
        let mut out = Vec::with_capacity(limit.min(MAX_RESERVED_ENTRIES));
        let ties_descending = keys.first().is_some_and(|(_, d)| *d);
        let mut go = |tuple: &[CompositeKey], postings: &Postings| -> bool {
            let after_seq = after.zip(after_tuple.as_deref()).filter(|(_, t)| *t == tuple).map(|((_, s), _)| *s);
            for seq in ties(postings, ties_descending, after_seq) {
                work.entries += 1;
                if let Some(epk) = self.locations.get(&seq).filter(|epk| keep(epk)) {
                    out.push((tuple.iter().map(|c| c.key.clone()).collect(), seq, &**epk));
                    if out.len() >= limit {
                        return false;
                    }
                }
            }
            true
        };
        let entries = c.values.range::<Box<[CompositeKey]>, _>(range);
        if backward {
            for (tuple, postings) in entries.rev() {
                if !go(tuple, postings) {
                    break;
                }
            }
        } else {
            for (tuple, postings) in entries {
                if !go(tuple, postings) {
                    break;
                }
            }
        }
        Some(out)
    }

    /// Distinct keys at `path` whose items satisfy `keep` (for `DISTINCT VALUE`, `MIN`, `MAX`);
    /// `None` when the path is not indexed.
    pub fn keys(&self, path: &[IndexStep], keep: &dyn Fn(&Epk) -> bool, work: &mut IndexWork) -> Option<Vec<IndexKey>> {
        let Some(node) = self.indexed_node(path)? else { return Some(Vec::new()) };
        let mut out = Vec::new();
        for (key, postings) in &node.values {
            for seq in postings.iter() {
                work.entries += 1;
                if self.locations.get(&seq).is_some_and(|e| keep(e)) {
                    out.push(key.clone());
                    break;
                }
            }
        }
        Some(out)
    }

    /// The first key at `path` in key order (the last if `descending`) held by an item that
    /// satisfies `keep` (for `MIN` and `MAX`); `Some(None)` when there is none, `None` when the
    /// path is not indexed.
    pub fn first_key(
        &self,
        path: &[IndexStep],
        descending: bool,
        keep: &dyn Fn(u64, &Epk) -> bool,
        work: &mut IndexWork,
    ) -> Option<Option<IndexKey>> {
        let Some(node) = self.indexed_node(path)? else { return Some(None) };
        let mut holds = |postings: &Postings| {
            postings.iter().any(|seq| {
                work.entries += 1;
                self.locations.get(&seq).is_some_and(|e| keep(seq, e))
            })
        };
        let found = if descending {
            node.values.iter().rev().find(|(_, p)| holds(p))
        } else {
            node.values.iter().find(|(_, p)| holds(p))
        };
        Some(found.map(|(k, _)| k.clone()))
    }

    /// Sizes.
    pub fn stats(&self) -> IndexStats {
        let mut stats = IndexStats::default();
        // A BTreeMap entry costs its key and value plus about a third for node slack and edges.
        let entry = |k: usize, v: usize| ((k + v) * 4 / 3) as u64;
        self.root.visit(&mut Vec::new(), &mut |_, node| {
            stats.entries += node.entries as u64;
            stats.keys += node.values.len() as u64;
            stats.bytes += size_of::<PathNode>() as u64;
            for p in node.values.values() {
                stats.bytes += entry(size_of::<IndexKey>(), size_of::<Postings>());
                stats.bytes += p.heap_bytes() as u64;
            }
        });
        for c in &self.composites {
            stats.entries += c.entries as u64;
            stats.keys += c.values.len() as u64;
            for (k, p) in &c.values {
                stats.bytes += entry(16 + k.len() * size_of::<CompositeKey>(), size_of::<Postings>());
                stats.bytes += p.heap_bytes() as u64;
            }
        }
        for e in &self.spatial {
            let n = (e.points.len() + e.others.len()) as u64;
            stats.entries += n;
            stats.keys += e.points.len() as u64;
            // A B-tree set entry plus about a third for node slack and edges.
            stats.bytes += n * 24 * 4 / 3;
        }
        // A hash map entry (sequence number and EPK) plus its control byte, at 7/8 load.
        let location = (8 + size_of::<Arc<Epk>>() + 1) * 8 / 7;
        stats.bytes += (self.locations.capacity() * location) as u64;
        stats.bytes += (self.epks.len() * (2 * size_of::<Epk>() + 16 + 16)) as u64;
        stats
    }

    /// Every entry, as (path or composite paths, key values, sequence numbers), in a canonical
    /// order: two indexes of the same items under the same policy dump equal.
    pub fn dump(&self) -> Vec<(String, Vec<Value>, Vec<u64>)> {
        let mut out = Vec::new();
        self.root.visit(&mut Vec::new(), &mut |path, node| {
            let name = path_text(path);
            for (k, p) in &node.values {
                out.push((name.clone(), vec![k.to_value()], p.iter().collect()));
            }
        });
        for c in &self.composites {
            let name = c.paths.iter().map(|p| path_text(p)).collect::<Vec<_>>().join(",");
            for (k, p) in &c.values {
                out.push((name.clone(), k.iter().map(|c| c.key.to_value()).collect(), p.iter().collect()));
            }
        }
        for e in &self.spatial {
            let name = format!("<spatial>{}", path_text(&e.path));
            for &(lat, lon, seq) in &e.points {
                out.push((name.clone(), vec![Value::from(lat as f64), Value::from(lon as f64)], vec![seq]));
            }
            out.push((name, Vec::new(), e.others.iter().copied().collect()));
        }
        let mut locations: Vec<_> = self.locations.iter().map(|(s, e)| (*s, e.to_hex())).collect();
        locations.sort();
        for (seq, epk) in locations {
            out.push(("<location>".into(), vec![Value::from(epk)], vec![seq]));
        }
        out
    }
}

#[cfg(test)]
mod tests;
