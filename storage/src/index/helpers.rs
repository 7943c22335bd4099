//! Small helpers of the partition index: splitting values, counting, printing paths, ranges and position lists.

use super::*;

/// Splits a key map's postings in two; keys left without postings are dropped. The maps are
/// built from sorted entries (a bulk load).
pub(super) fn split_values<K: Ord + Clone>(
    values: BTreeMap<K, Postings>,
    goes_left: &dyn Fn(&u64) -> bool,
) -> (BTreeMap<K, Postings>, BTreeMap<K, Postings>) {
    let mut left = Vec::new();
    let mut right = Vec::new();
    for (key, postings) in values {
        let (l, r): (Vec<u64>, Vec<u64>) = postings.iter().partition(|s| goes_left(s));
        match (Postings::from_sorted(&l), Postings::from_sorted(&r)) {
            (Some(l), Some(r)) => {
                left.push((key.clone(), l));
                right.push((key, r));
            }
            (Some(l), None) => left.push((key, l)),
            (None, Some(r)) => right.push((key, r)),
            (None, None) => {}
        }
    }
    (left.into_iter().collect(), right.into_iter().collect())
}

pub(super) fn count<K>(values: &BTreeMap<K, Postings>) -> usize {
    values.values().map(Postings::len).sum()
}

pub(super) fn path_text(path: &[IndexStep]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            IndexStep::Key(k) => {
                s.push('/');
                s.push_str(k);
            }
            IndexStep::Element => s.push_str("/[]"),
        }
    }
    s
}

/// The postings of a node's keys within bounds, in key order; none for bounds that hold no key
/// (which `BTreeMap::range` would refuse).
pub(super) fn postings_in<'n>(
    node: &'n PathNode,
    lower: &Bound<IndexKey>,
    upper: &Bound<IndexKey>,
) -> impl Iterator<Item = &'n Postings> + 'n {
    let range = (!range_is_empty(lower, upper)).then(|| node.values.range((lower.clone(), upper.clone())));
    range.into_iter().flatten().map(|(_, postings)| postings)
}

pub(super) fn range_is_empty(lower: &Bound<IndexKey>, upper: &Bound<IndexKey>) -> bool {
    match (lower, upper) {
        (Bound::Included(a), Bound::Included(b)) => a > b,
        (Bound::Included(a), Bound::Excluded(b))
        | (Bound::Excluded(a), Bound::Included(b))
        | (Bound::Excluded(a), Bound::Excluded(b)) => a >= b,
        _ => false,
    }
}

pub(super) fn sorted_distinct(mut v: Vec<u64>) -> Vec<u64> {
    v.sort_unstable();
    v.dedup();
    v
}

pub(super) fn intersect(a: &[u64], b: &[u64]) -> Vec<u64> {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    small.iter().copied().filter(|s| large.binary_search(s).is_ok()).collect()
}

/// The index key of a scalar inside an item's bytes (`shared`), sharing them for long strings;
/// `None` for undefined, arrays, objects and non-finite numbers.
pub(super) fn key_of_doc(v: &DocRef<'_>, shared: &Arc<[u8]>) -> Option<IndexKey> {
    key_of_node(v.node()?, shared)
}

/// [`key_of_doc`] of a value already looked at.
pub(super) fn key_of_node(v: Node<'_>, shared: &Arc<[u8]>) -> Option<IndexKey> {
    match v {
        Node::Null => Some(IndexKey::Null),
        Node::Bool(b) => Some(IndexKey::Bool(b)),
        Node::Number(n) => IndexKey::number(n),
        Node::String(s) => Some(IndexKey::string_in(shared, s)),
        Node::Array(_) | Node::Object(_) => None,
    }
}
