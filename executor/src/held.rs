//! Results held between the pages of a query whose shape cannot resume from a position:
//! DISTINCT, GROUP BY and aggregates, ranking, FROM subqueries ([`Paging::Replay`]).
//!
//! Their first page computes every result (it must, to know the groups or the distinct values),
//! returns the page and holds the rest here under a random id its continuation token carries
//! (signed, see [`crate::continuation`]); the next pages are slices of them. Paging is linear (the
//! query runs once, not once per page), and the pages are one snapshot: a result is returned
//! exactly once whatever is written between pages.
//!
//! Held results are bounded: [`MAX_QUERY_HELD_RESULTS`] and [`MAX_QUERY_HELD_BYTES`] for one
//! query, [`MAX_HELD_BYTES`] for all of them (the least recently used are let go first), and a
//! query's results are let go after its last page or [`IDLE`] without a page. A page whose
//! results were let go (or too many to hold) runs the query again and skips what was returned:
//! exact when nothing was written between pages, otherwise a result may repeat or be missed.
//!
//! [`Paging::Replay`]: cosmoql_planner::Paging::Replay

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::output::Output;

/// Results one query may hold between its pages.
pub const MAX_QUERY_HELD_RESULTS: u64 = 1 << 20;
/// Bytes of results one query may hold between its pages.
pub const MAX_QUERY_HELD_BYTES: u64 = 64 << 20;
/// Bytes of results all queries together hold between their pages.
pub const MAX_HELD_BYTES: u64 = 256 << 20;
/// Held results are let go after this long without a page.
pub const IDLE: Duration = Duration::from_secs(300);

struct Held {
    /// Results the pages had returned when these were held: `results[0]` is result `base`.
    base: u64,
    results: Arc<[Output]>,
    bytes: u64,
    used: Instant,
}

#[derive(Default)]
struct Table {
    held: HashMap<u64, Held>,
    bytes: u64,
}

impl Table {
    fn remove(&mut self, id: u64) {
        if let Some(h) = self.held.remove(&id) {
            self.bytes -= h.bytes;
        }
    }

    fn expire(&mut self, now: Instant) {
        let idle: Vec<u64> =
            self.held.iter().filter(|(_, h)| now.duration_since(h.used) > IDLE).map(|(id, _)| *id).collect();
        for id in idle {
            self.remove(id);
        }
    }
}

fn table() -> std::sync::MutexGuard<'static, Table> {
    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
    // A panic while holding the lock leaves a consistent table (every change is one statement).
    TABLE.get_or_init(Mutex::default).lock().unwrap_or_else(|e| e.into_inner())
}

/// An id nobody can guess: 64 bits of the operating system's randomness.
fn new_id() -> u64 {
    let key = crate::continuation::random_key();
    u64::from_le_bytes(key[..8].try_into().unwrap_or_default())
}

/// Holds `results` (of `bytes` bytes; the first is result number `base` of the query) for the
/// next pages; their id, or the results back when they do not fit.
pub fn hold(base: u64, results: Vec<Output>, bytes: u64) -> Result<u64, Vec<Output>> {
    if bytes > MAX_QUERY_HELD_BYTES || results.len() as u64 > MAX_QUERY_HELD_RESULTS {
        return Err(results);
    }
    let now = Instant::now();
    let mut table = table();
    table.expire(now);
    while table.bytes + bytes > MAX_HELD_BYTES {
        let Some(oldest) = table.held.iter().min_by_key(|(_, h)| h.used).map(|(id, _)| *id) else { break };
        table.remove(oldest);
    }
    if table.bytes + bytes > MAX_HELD_BYTES {
        return Err(results);
    }
    let id = new_id();
    table.bytes += bytes;
    table.held.insert(id, Held { base, results: results.into(), bytes, used: now });
    Ok(id)
}

/// Results `from` to `from + n` of the query holding `id`, and whether more follow; `None` when
/// they were let go. After the last page they are let go.
pub fn page(id: u64, from: u64, n: usize) -> Option<(Vec<Output>, bool)> {
    let now = Instant::now();
    let mut table = table();
    table.expire(now);
    let held = table.held.get_mut(&id)?;
    let start = usize::try_from(from.checked_sub(held.base)?).ok()?;
    if start > held.results.len() {
        return None;
    }
    let end = start.saturating_add(n).min(held.results.len());
    let items = held.results[start..end].to_vec();
    held.used = now;
    let more = end < held.results.len();
    if !more {
        table.remove(id);
    }
    Some((items, more))
}

/// Bytes held now, by all queries (tests and metrics).
pub fn held_bytes() -> u64 {
    table().bytes
}

/// Lets go of every query's held results (their next pages run the query again).
pub fn let_go_all() {
    let mut table = table();
    table.held.clear();
    table.bytes = 0;
}

#[cfg(test)]
mod tests {
    use super::*;
    use cosmoql_value::Value;

    fn values(n: usize) -> Vec<Value> {
        (0..n).map(|i| Value::from(i as f64)).collect()
    }

    fn outputs(n: usize) -> Vec<Output> {
        values(n).into_iter().map(Output::Value).collect()
    }

    /// [`page`], its results as values.
    fn page_of(id: u64, from: u64, n: usize) -> Option<(Vec<Value>, bool)> {
        page(id, from, n).map(|(results, more)| (results.into_iter().map(Output::into_value).collect(), more))
    }

    #[test]
    fn pages_are_slices_and_the_last_one_lets_go() {
        let id = hold(10, outputs(5), 40).unwrap();
        assert_eq!(page_of(id, 10, 2), Some((values(2), true)));
        // A page asked for again (a retry) is the same page.
        assert_eq!(page_of(id, 10, 2), Some((values(2), true)));
        assert_eq!(page_of(id, 12, 2).unwrap().0, vec![Value::from(2.0), Value::from(3.0)]);
        // Before what was held, or past it: not from here.
        assert_eq!(page_of(id, 9, 1), None);
        assert_eq!(page_of(id, 16, 1), None);
        assert_eq!(page_of(id, 14, 10), Some((vec![Value::from(4.0)], false)));
        assert_eq!(page_of(id, 10, 1), None, "let go after the last page");
        assert_eq!(page_of(new_id(), 0, 1), None);
    }

    #[test]
    fn one_query_and_all_of_them_are_bounded() {
        assert!(hold(0, outputs(1), MAX_QUERY_HELD_BYTES + 1).is_err());
        // Over the bound for all queries, the least recently used are let go first.
        let quarter = MAX_HELD_BYTES / 4;
        let ids: Vec<u64> = (0..4).map(|_| hold(0, outputs(2), quarter).unwrap()).collect();
        assert!(page(ids[0], 0, 1).is_some(), "used last now");
        let newest = hold(0, outputs(2), quarter).unwrap();
        assert!(held_bytes() <= MAX_HELD_BYTES);
        assert!(page(ids[1], 0, 1).is_none(), "the least recently used was let go");
        assert!(page(ids[0], 0, 1).is_some() && page(newest, 0, 1).is_some());
        let_go_all();
        assert_eq!(held_bytes(), 0);
    }
}
