//! Postings: the item sequences under one index key.

use std::borrow::Cow;

/// The items holding one key: sorted, distinct sequence numbers (one inline). Several are
/// behind one thin pointer, so that a key's postings take 16 bytes in the index's nodes, not 24
/// (most keys have one item: 3.2 million keys of 1,000,000 telemetry items).
///
/// A bulk build packs a long list whose steps all fit in 16 bits as its first number and the
/// steps (`Packed`): 2 bytes a number instead of 8. The paths of few values hold most numbers
/// (a type, a unit, a city, a device: 9 million of 1,000,000 telemetry items' 12 million
/// entries), and within a physical partition their items' numbers are close. A write to a
/// packed list unpacks it first.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Postings {
    One(u64),
    #[allow(clippy::box_collection)]
    Many(Box<Vec<u64>>),
    Packed(Box<Packed>),
}

/// A sorted list as its first number and the steps to each next one.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Packed {
    first: u64,
    steps: Box<[u16]>,
}

/// Lists shorter than this stay unpacked (the few bytes saved would not pay for the decoding).
const PACK_FROM: usize = 16;

impl Postings {
    /// Adds `seq`; false if it was there. A packed list is unpacked.
    pub(super) fn insert(&mut self, seq: u64) -> bool {
        match self {
            Postings::One(s) if *s == seq => false,
            Postings::One(s) => {
                let s = *s;
                *self = Postings::Many(Box::new(if s < seq { vec![s, seq] } else { vec![seq, s] }));
                true
            }
            Postings::Many(v) => insert_sorted(v, seq),
            Postings::Packed(p) => {
                let mut v: Vec<u64> = p.iter().collect();
                let added = insert_sorted(&mut v, seq);
                *self = Postings::Many(Box::new(v));
                added
            }
        }
    }

    /// Removes `seq`; returns (whether it was there, whether none is left). A packed list is
    /// unpacked.
    pub(super) fn remove(&mut self, seq: u64) -> (bool, bool) {
        match self {
            Postings::One(s) => (*s == seq, *s == seq),
            Postings::Many(v) => {
                let found = remove_sorted(v, seq);
                if let [one] = v[..] {
                    *self = Postings::One(one);
                }
                (found, false)
            }
            // At least 16 numbers: more than one stays.
            Postings::Packed(p) => {
                let mut v: Vec<u64> = p.iter().collect();
                let found = remove_sorted(&mut v, seq);
                *self = Postings::Many(Box::new(v));
                (found, false)
            }
        }
    }

    /// Postings of sorted, distinct sequence numbers; `None` for none. Long lists of close
    /// numbers are packed.
    pub(super) fn from_sorted(seqs: &[u64]) -> Option<Postings> {
        match seqs {
            [] => None,
            [one] => Some(Postings::One(*one)),
            _ if seqs.len() >= PACK_FROM => Some(
                Packed::of(seqs)
                    .map_or_else(|| Postings::Many(Box::new(seqs.to_vec())), |p| Postings::Packed(Box::new(p))),
            ),
            _ => Some(Postings::Many(Box::new(seqs.to_vec()))),
        }
    }

    /// How many numbers.
    pub(super) fn len(&self) -> usize {
        match self {
            Postings::One(_) => 1,
            Postings::Many(v) => v.len(),
            Postings::Packed(p) => p.steps.len() + 1,
        }
    }

    /// The numbers in increasing order, read as they are asked for (a search that stops at the
    /// first one it wants decodes no more).
    pub(super) fn iter(&self) -> PostingsIter<'_> {
        match self {
            Postings::One(s) => PostingsIter::Plain(std::slice::from_ref(s).iter()),
            Postings::Many(v) => PostingsIter::Plain(v.iter()),
            Postings::Packed(p) => PostingsIter::Packed { next: Some(p.first), steps: p.steps.iter() },
        }
    }

    /// The numbers as a slice: borrowed, or decoded for a packed list.
    pub(super) fn seqs(&self) -> Cow<'_, [u64]> {
        match self {
            Postings::One(s) => Cow::Borrowed(std::slice::from_ref(s)),
            Postings::Many(v) => Cow::Borrowed(&v[..]),
            Postings::Packed(p) => {
                let mut out = Vec::new();
                p.decode_into(&mut out);
                Cow::Owned(out)
            }
        }
    }

    /// Appends the numbers to `out`.
    pub(super) fn extend_into(&self, out: &mut Vec<u64>) {
        match self {
            Postings::One(s) => out.push(*s),
            Postings::Many(v) => out.extend_from_slice(v),
            Postings::Packed(p) => p.decode_into(out),
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        match self {
            Postings::One(_) => 0,
            Postings::Many(v) => size_of::<Vec<u64>>() + v.capacity() * 8,
            Postings::Packed(p) => size_of::<Packed>() + p.steps.len() * 2,
        }
    }
}

/// Removes `seq` from a sorted list; false if it was not there.
fn remove_sorted(v: &mut Vec<u64>, seq: u64) -> bool {
    match v.binary_search(&seq) {
        Ok(at) => {
            v.remove(at);
            true
        }
        Err(_) => false,
    }
}

/// Adds `seq` to a sorted list; false if it was there.
fn insert_sorted(v: &mut Vec<u64>, seq: u64) -> bool {
    match v.last() {
        Some(last) if *last < seq => {
            v.push(seq);
            true
        }
        _ => match v.binary_search(&seq) {
            Ok(_) => false,
            Err(at) => {
                v.insert(at, seq);
                true
            }
        },
    }
}

impl Packed {
    /// `seqs` (sorted, distinct, at least two) packed; `None` when a step does not fit in 16
    /// bits.
    fn of(seqs: &[u64]) -> Option<Packed> {
        let (&first, _) = seqs.split_first()?;
        let steps =
            seqs.windows(2).map(|w| u16::try_from(w[1].checked_sub(w[0])?).ok()).collect::<Option<Box<[u16]>>>()?;
        Some(Packed { first, steps })
    }

    fn iter(&self) -> PostingsIter<'_> {
        PostingsIter::Packed { next: Some(self.first), steps: self.steps.iter() }
    }

    /// Appends the numbers to `out` (one tight loop, where [`Packed::iter`] is read a number at
    /// a time).
    fn decode_into(&self, out: &mut Vec<u64>) {
        out.reserve(self.steps.len() + 1);
        out.push(self.first);
        // The steps were taken between sorted numbers: their sums never pass the last one.
        let mut at = self.first;
        out.extend(self.steps.iter().map(|&step| {
            at = at.saturating_add(u64::from(step));
            at
        }));
    }
}

/// [`Postings::iter`].
pub(super) enum PostingsIter<'p> {
    Plain(std::slice::Iter<'p, u64>),
    /// The number to give next, and the steps after it.
    Packed {
        next: Option<u64>,
        steps: std::slice::Iter<'p, u16>,
    },
}

impl Iterator for PostingsIter<'_> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        match self {
            PostingsIter::Plain(seqs) => seqs.next().copied(),
            PostingsIter::Packed { next, steps } => {
                let now = (*next)?;
                *next = steps.next().and_then(|&step| now.checked_add(u64::from(step)));
                Some(now)
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match self {
            PostingsIter::Plain(seqs) => seqs.len(),
            PostingsIter::Packed { next, steps } => usize::from(next.is_some()) + steps.len(),
        };
        (n, Some(n))
    }
}

// A key's postings are 16 bytes in the index's B-tree nodes.
const _: () = assert!(size_of::<Postings>() == 16);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the numbers (close, far apart, few, many), the postings hold them: every
        /// reading agrees, and writes after a pack see the same list as writes to a plain one.
        #[test]
        fn postings_hold_their_numbers(
            steps in prop::collection::vec(prop_oneof![1u64..4, 1u64..70_000, Just(65_535u64), Just(65_536u64)], 0..80),
            start in 0u64..(u64::MAX / 2),
            writes in prop::collection::vec((any::<bool>(), 0usize..100), 0..10),
        ) {
            let mut seqs = Vec::new();
            let mut at = start;
            for s in steps {
                seqs.push(at);
                at += s;
            }
            let Some(mut postings) = Postings::from_sorted(&seqs) else {
                prop_assert!(seqs.is_empty());
                return Ok(());
            };
            prop_assert_eq!(postings.len(), seqs.len());
            prop_assert_eq!(postings.iter().collect::<Vec<_>>(), seqs.clone());
            prop_assert_eq!(postings.seqs().into_owned(), seqs.clone());
            let mut out = vec![7];
            postings.extend_into(&mut out);
            prop_assert_eq!(&out[1..], &seqs[..]);
            let fits = seqs.windows(2).all(|w| w[1] - w[0] <= 65_535);
            prop_assert_eq!(matches!(postings, Postings::Packed(_)), seqs.len() >= PACK_FROM && fits);
            let mut plain = seqs.clone();
            for (add, i) in writes {
                let seq = seqs.get(i).copied().unwrap_or(start + i as u64 * 3 + 1);
                if add {
                    let there = plain.binary_search(&seq);
                    prop_assert_eq!(postings.insert(seq), there.is_err());
                    if let Err(at) = there {
                        plain.insert(at, seq);
                    }
                } else {
                    let there = plain.binary_search(&seq);
                    let (found, empty) = postings.remove(seq);
                    prop_assert_eq!(found, there.is_ok());
                    if let Ok(at) = there {
                        if plain.len() == 1 {
                            prop_assert!(empty);
                            return Ok(());
                        }
                        plain.remove(at);
                    }
                }
                prop_assert_eq!(postings.iter().collect::<Vec<_>>(), plain.clone());
            }
        }
    }
}
