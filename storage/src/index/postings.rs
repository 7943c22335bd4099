//! Postings: the item sequences under one index key, and the set helpers that combine them.

/// The items holding one key: sorted, distinct sequence numbers (one inline). Several are
/// behind one thin pointer, so that a key's postings take 16 bytes in the index's nodes, not 24
/// (most keys have one item: 3.2 million keys of 1,000,000 telemetry items).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Postings {
    One(u64),
    #[allow(clippy::box_collection)]
    Many(Box<Vec<u64>>),
}

impl Postings {
    /// Adds `seq`; false if it was there.
    pub(super) fn insert(&mut self, seq: u64) -> bool {
        match self {
            Postings::One(s) if *s == seq => false,
            Postings::One(s) => {
                let s = *s;
                *self = Postings::Many(Box::new(if s < seq { vec![s, seq] } else { vec![seq, s] }));
                true
            }
            Postings::Many(v) => match v.last() {
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
            },
        }
    }

    /// Removes `seq`; returns (whether it was there, whether none is left).
    pub(super) fn remove(&mut self, seq: u64) -> (bool, bool) {
        match self {
            Postings::One(s) => (*s == seq, *s == seq),
            Postings::Many(v) => match v.binary_search(&seq) {
                Ok(at) => {
                    v.remove(at);
                    if v.len() == 1 {
                        *self = Postings::One(v[0]);
                    }
                    (true, false)
                }
                Err(_) => (false, false),
            },
        }
    }

    /// Postings of sorted, distinct sequence numbers; `None` for none.
    pub(super) fn from_vec(mut v: Vec<u64>) -> Option<Postings> {
        match v.len() {
            0 => None,
            1 => Some(Postings::One(v[0])),
            _ => {
                v.shrink_to_fit();
                Some(Postings::Many(Box::new(v)))
            }
        }
    }

    pub(super) fn as_slice(&self) -> &[u64] {
        match self {
            Postings::One(s) => std::slice::from_ref(s),
            Postings::Many(v) => v,
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        match self {
            Postings::One(_) => 0,
            Postings::Many(v) => size_of::<Vec<u64>>() + v.capacity() * 8,
        }
    }
}

// A key's postings are 16 bytes in the index's B-tree nodes.
const _: () = assert!(size_of::<Postings>() == 16);
