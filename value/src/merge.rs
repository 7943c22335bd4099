//! The k-way merge of sorted runs: partitions' rows in ORDER BY order, partitions' index keys,
//! a physical partition's index entries per child range. Every merge of sorted inputs in the
//! project is this one, with the order its caller gives.

use std::cmp::Ordering;

/// Merges inputs each sorted by `cmp` into one sorted stream, reading an input's next element
/// only once its previous one is returned (so a merge that stops early reads little). Elements
/// that compare equal come in the order of their inputs.
///
/// A tournament of losers: each element taken costs one match per level of a balanced tree over
/// the inputs (7 for 89 partitions) and moves only input numbers, where a binary heap took about
/// ten comparisons and moved the elements.
pub struct KWayMerge<I: Iterator, F> {
    inputs: Vec<I>,
    /// Each input's next element; `None` once it is exhausted.
    heads: Vec<Option<I::Item>>,
    /// `tree[0]`: the input whose head comes first. `tree[n]` for `n` in `1..k`: the input that
    /// lost the match at node `n` of a complete binary tree whose leaves `k..2k` are the inputs.
    tree: Vec<usize>,
    cmp: F,
}

/// Whether input `a`'s head comes before input `b`'s: by `cmp`, then by input; an exhausted
/// input comes last.
#[inline]
fn beats<T, F: Fn(&T, &T) -> Ordering>(heads: &[Option<T>], cmp: &F, a: usize, b: usize) -> bool {
    match (heads.get(a).and_then(Option::as_ref), heads.get(b).and_then(Option::as_ref)) {
        (Some(x), Some(y)) => match cmp(x, y) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => a < b,
        },
        (Some(_), None) => true,
        (None, Some(_)) => false,
        (None, None) => a < b,
    }
}

impl<I: Iterator, F> std::fmt::Debug for KWayMerge<I, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pending = self.heads.iter().filter(|h| h.is_some()).count();
        write!(f, "KWayMerge({} inputs, {} pending)", self.inputs.len(), pending)
    }
}

impl<I: Iterator, F: Fn(&I::Item, &I::Item) -> Ordering> KWayMerge<I, F> {
    pub fn new(inputs: Vec<I>, cmp: F) -> Self {
        let mut inputs = inputs;
        let heads: Vec<Option<I::Item>> = inputs.iter_mut().map(Iterator::next).collect();
        let k = inputs.len();
        let mut tree = vec![0; k];
        // Play every match bottom-up: a node's winner goes up, its loser stays.
        let mut winners = vec![0; k];
        for n in (1..k).rev() {
            let side = |m: usize| if m >= k { m - k } else { winners.get(m).copied().unwrap_or(0) };
            let (a, b) = (side(2 * n), side(2 * n + 1));
            let (won, lost) = if beats(&heads, &cmp, a, b) { (a, b) } else { (b, a) };
            winners[n] = won;
            tree[n] = lost;
        }
        if k > 1 {
            tree[0] = winners[1];
        }
        KWayMerge { inputs, heads, tree, cmp }
    }

    /// The next element and the number of the input it came from.
    pub fn next_with_input(&mut self) -> Option<(usize, I::Item)> {
        let first = *self.tree.first()?;
        // The first input is exhausted only when all are.
        let item = self.heads.get_mut(first)?.take()?;
        self.heads[first] = self.inputs[first].next();
        // Replay its matches from its leaf up.
        let mut winner = first;
        let mut node = (self.inputs.len() + first) / 2;
        while node >= 1 {
            let other = self.tree[node];
            if beats(&self.heads, &self.cmp, other, winner) {
                self.tree[node] = winner;
                winner = other;
            }
            node /= 2;
        }
        self.tree[0] = winner;
        Some((first, item))
    }
}

impl<I: Iterator, F: Fn(&I::Item, &I::Item) -> Ordering> Iterator for KWayMerge<I, F> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        self.next_with_input().map(|(_, item)| item)
    }

    /// The pending heads and what the inputs say they hold (so `collect` allocates once).
    fn size_hint(&self) -> (usize, Option<usize>) {
        let pending = self.heads.iter().filter(|h| h.is_some()).count();
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
        let mut sized = KWayMerge::new(vec![vec![1, 2].into_iter(), vec![0, 3, 4].into_iter()], i32::cmp);
        assert_eq!(sized.size_hint(), (5, Some(5)));
        // Each element with the input it came from.
        let from: Vec<(usize, i32)> = std::iter::from_fn(|| sized.next_with_input()).collect();
        assert_eq!(from, [(1, 0), (0, 1), (0, 2), (1, 3), (1, 4)]);
    }

    #[test]
    fn any_number_of_random_runs_merge_to_the_sort() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        for k in 0..40 {
            let mut runs: Vec<Vec<u32>> = (0..k).map(|_| (0..next() % 30).map(|_| next() % 50).collect()).collect();
            for r in &mut runs {
                r.sort_unstable();
            }
            let mut all: Vec<u32> = runs.iter().flatten().copied().collect();
            all.sort_unstable();
            let merged: Vec<u32> =
                KWayMerge::new(runs.iter().cloned().map(Vec::into_iter).collect(), u32::cmp).collect();
            assert_eq!(merged, all);
            // Equal elements in the order of their inputs, then of their places in them.
            let tagged: Vec<Vec<(u32, usize, usize)>> = runs
                .iter()
                .enumerate()
                .map(|(i, r)| r.iter().enumerate().map(|(j, &v)| (v / 4, i, j)).collect())
                .collect();
            let mut expected: Vec<(u32, usize, usize)> = tagged.iter().flatten().copied().collect();
            expected.sort_unstable();
            let merged: Vec<(u32, usize, usize)> =
                KWayMerge::new(tagged.into_iter().map(Vec::into_iter).collect(), |a: &(u32, usize, usize), b| {
                    a.0.cmp(&b.0)
                })
                .collect();
            assert_eq!(merged, expected, "{k} inputs");
        }
    }
}
