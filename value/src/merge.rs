//! The k-way merge of sorted runs: partitions' rows in ORDER BY order, partitions' index keys,
//! a physical partition's index entries per child range. Every merge of sorted inputs in the
//! project is this one, with the order its caller gives.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Merges inputs each sorted by `cmp` into one sorted stream, reading an input's next element
/// only once its previous one is returned (so a merge that stops early reads little). Elements
/// that compare equal come in the order of their inputs. `cmp` is copied into each pending
/// element (a closure over references or plain values is `Copy`), so the standard binary heap
/// orders them.
pub struct KWayMerge<I: Iterator, F> {
    inputs: Vec<I>,
    heap: BinaryHeap<Head<I::Item, F>>,
}

/// An input's next element, ordered for a max-heap so that the least comes first.
struct Head<T, F> {
    item: T,
    input: usize,
    cmp: F,
}

impl<T, F: Fn(&T, &T) -> Ordering> Ord for Head<T, F> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.cmp)(&other.item, &self.item).then(other.input.cmp(&self.input))
    }
}

impl<T, F: Fn(&T, &T) -> Ordering> PartialOrd for Head<T, F> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T, F: Fn(&T, &T) -> Ordering> PartialEq for Head<T, F> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<T, F: Fn(&T, &T) -> Ordering> Eq for Head<T, F> {}

impl<I: Iterator, F> std::fmt::Debug for KWayMerge<I, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KWayMerge({} inputs, {} pending)", self.inputs.len(), self.heap.len())
    }
}

impl<I: Iterator, F: Fn(&I::Item, &I::Item) -> Ordering + Copy> KWayMerge<I, F> {
    pub fn new(inputs: Vec<I>, cmp: F) -> Self {
        let mut inputs = inputs;
        let mut heap = BinaryHeap::with_capacity(inputs.len());
        for (input, it) in inputs.iter_mut().enumerate() {
            if let Some(item) = it.next() {
                heap.push(Head { item, input, cmp });
            }
        }
        KWayMerge { inputs, heap }
    }
}

impl<I: Iterator, F: Fn(&I::Item, &I::Item) -> Ordering + Copy> Iterator for KWayMerge<I, F> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        let head = self.heap.pop()?;
        if let Some(item) = self.inputs[head.input].next() {
            self.heap.push(Head { item, input: head.input, cmp: head.cmp });
        }
        Some(head.item)
    }

    /// The pending heads and what the inputs say they hold (so `collect` allocates once).
    fn size_hint(&self) -> (usize, Option<usize>) {
        let pending = self.heap.len();
        self.inputs.iter().map(Iterator::size_hint).fold((pending, Some(pending)), |(lo, hi), (l, h)| {
            (lo.saturating_add(l), hi.zip(h).and_then(|(a, b)| a.checked_add(b)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_sorted_runs_stably_and_lazily() {
        let runs = [vec![1, 4, 9], vec![], vec![2, 4, 4, 10], vec![0], vec![4]];
        let tagged: Vec<_> =
            runs.iter().enumerate().map(|(i, r)| r.iter().map(move |&v| (v, i)).collect::<Vec<_>>()).collect();
        let merged: Vec<_> =
            KWayMerge::new(tagged.into_iter().map(Vec::into_iter).collect(), |a: &(i32, usize), b| a.0.cmp(&b.0))
                .collect();
        assert_eq!(merged, [(0, 3), (1, 0), (2, 2), (4, 0), (4, 2), (4, 2), (4, 4), (9, 0), (10, 2)]);
        // Descending, by the order given.
        let merged: Vec<i32> =
            KWayMerge::new(vec![vec![9, 3].into_iter(), vec![8, 7, 1].into_iter()], |a: &i32, b| b.cmp(a)).collect();
        assert_eq!(merged, [9, 8, 7, 3, 1]);
        // An input is read only as far as the merge has gone.
        let mut pulled = 0;
        let counted = (0..100).inspect(|_| pulled += 1);
        let first: Vec<i32> =
            KWayMerge::new(vec![Box::new(counted) as Box<dyn Iterator<Item = i32>>], i32::cmp).take(3).collect();
        assert_eq!(first, [0, 1, 2]);
        assert_eq!(pulled, 4);
        let sized = KWayMerge::new(vec![vec![1, 2].into_iter(), vec![0, 3, 4].into_iter()], i32::cmp);
        assert_eq!(sized.size_hint(), (5, Some(5)));
    }

    #[test]
    fn any_number_of_random_runs_merge_to_the_sort() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        for k in 0..20 {
            let mut runs: Vec<Vec<u32>> = (0..k).map(|_| (0..next() % 30).map(|_| next() % 50).collect()).collect();
            for r in &mut runs {
                r.sort_unstable();
            }
            let mut all: Vec<u32> = runs.iter().flatten().copied().collect();
            all.sort_unstable();
            let merged: Vec<u32> = KWayMerge::new(runs.into_iter().map(Vec::into_iter).collect(), u32::cmp).collect();
            assert_eq!(merged, all);
        }
    }
}
