//! What-if: the sample's writes replayed at their times under a candidate key, with a recorded
//! workload's queries at their rates, against a provisioned throughput (the throttling model of
//! [`crate::throughput::Replay`]).
//!
//! Time runs in seconds from the first write to the last. A second with writes runs them in the
//! sample's order, then that second's query runs; a query of rate `r` runs `floor((t + 1) r) -
//! floor(t r)` times in second `t` (so `r` a second on average, whole numbers every second).
//! Between two writes, the first [`WINDOW`] idle seconds are replayed one by one (a quiet one
//! in a single step: every bucket empty and the second's load within each budget); the rest of a
//! longer gap in one step: its runs counted exactly, all admitted if the gap was quiet, else
//! admitted and refused at the rate of the window's last [`TAIL`] seconds (a saturated
//! partition settles within seconds), the buckets left as the window left them. So a replay
//! costs at most [`WINDOW`] seconds per write, however far apart the writes are.

use std::time::Duration;

use super::keys::{layout, place_of, KeyChoice};
use super::sample::Sample;
use crate::throughput::Replay;
use cosmoql_catalog::partition_key::PartitionKey;

/// Idle seconds replayed one by one after each write.
pub const WINDOW: u64 = 300;

/// The window's last seconds, whose rates a longer gap continues.
pub const TAIL: u64 = 60;

/// A query's rate is at most this many runs per second.
pub const MAX_RATE: f64 = 1e6;

/// What replaying the items' writes, in time order, under a candidate key and provisioned
/// throughput predicts.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIf {
    pub writes: u64,
    /// Writes the throttling model refuses (429) at their moment.
    pub throttled: u64,
    /// Query runs replayed from a recorded workload, and those refused.
    pub queries: u64,
    pub queries_throttled: u64,
    /// Each physical partition's peak RU in one second against its budget, in percent (capped
    /// at 100).
    pub peak_normalized: Vec<f64>,
    /// Writes left out for times far from all the others (`0001-01-01` among this year's): they
    /// would stretch the replay, and dilute what it predicts, over the years between.
    pub outliers: u64,
}

impl WhatIf {
    pub fn throttle_rate(&self) -> f64 {
        self.throttled as f64 / self.writes.max(1) as f64
    }
}

/// A recorded query for the what-if: the logical partitions it reads under the candidate key
/// (`None`: it fans out to every partition), how often, and what it costs.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIfQuery {
    pub keys: Option<Vec<PartitionKey>>,
    /// Per second (at most [`MAX_RATE`]).
    pub rate: f64,
    /// Request units per run (a fan-out's are spread over the partitions).
    pub charge: f64,
}

/// Runs of a query of `rate` in the seconds `[from, to)` of the replay.
fn runs_between(rate: f64, from: u64, to: u64) -> u64 {
    let total = |t: u64| (t as f64 * rate).floor();
    let runs = total(to) - total(from);
    if runs.is_finite() && runs > 0.0 {
        runs.min(u64::MAX as f64) as u64
    } else {
        0
    }
}

/// A query as the replay runs it: its partitions and the RU a run costs on each.
struct Target {
    rate: f64,
    slots: Vec<usize>,
    each: f64,
}

/// Replays `sample`'s writes at their times (their finest time path) under `key`, with
/// `ru_per_second` split over `p` physical partitions laid out as splits would lay them out, each
/// write charged `charge(bytes)`, and `queries` at their rates every second, on the partitions
/// each reads; `None` when the items carry no time (or the key does not apply to them).
pub(super) fn replay(
    sample: &Sample,
    key: &KeyChoice,
    (p, ru_per_second): (usize, f64),
    charge: &dyn Fn(u64) -> f64,
    queries: &[WhatIfQuery],
) -> Option<WhatIf> {
    replay_with(sample, key, (p, ru_per_second), charge, queries, true)
}

/// [`replay`]; without `skip`, every second is replayed request by request (what the quiet
/// seconds and the long gaps must equal, or come close to).
fn replay_with(
    sample: &Sample,
    key: &KeyChoice,
    (p, ru_per_second): (usize, f64),
    charge: &dyn Fn(u64) -> f64,
    queries: &[WhatIfQuery],
    skip: bool,
) -> Option<WhatIf> {
    let p = p.max(1);
    let layout = layout(key, sample, p)?;
    let mut writes: Vec<(i64, usize, u64)> =
        (0..sample.n).filter_map(|i| Some((sample.stamp[i]?, layout.slot(i), sample.bytes[i]))).collect();
    if writes.is_empty() {
        return None;
    }
    writes.sort_by_key(|w| w.0);
    let outliers = drop_outliers(&mut writes);
    let start = writes[0].0;
    let offset = |w: &(i64, usize, u64)| u64::try_from(w.0.saturating_sub(start)).unwrap_or(u64::MAX);
    let last = offset(&writes[writes.len() - 1]);
    // Each query's partitions under the candidate: where its keys' EPKs fall, all for a fan-out.
    let definition = key.definition()?;
    let targets: Vec<Target> = queries
        .iter()
        .map(|q| {
            let slots: Vec<usize> = match &q.keys {
                None => (0..p).collect(),
                Some(keys) => {
                    let mut slots: Vec<usize> = keys
                        .iter()
                        .filter_map(|k| place_of(&definition, k).map(|place| layout.slot_of_place(&place)))
                        .collect();
                    slots.sort_unstable();
                    slots.dedup();
                    slots
                }
            };
            let rate = if q.rate.is_finite() { q.rate.clamp(0.0, MAX_RATE) } else { 0.0 };
            let each = q.charge / slots.len().max(1) as f64;
            Target { rate, slots, each }
        })
        .collect();
    let mut model = Replay::new(ru_per_second, p);
    let (mut throttled, mut runs_total, mut refused_total) = (0u64, 0u64, 0u64);
    let mut runs = vec![0u64; targets.len()];
    let mut load = vec![0.0f64; p];
    // The idle seconds since the last write, and the window's tail: admitted runs per query and
    // consumption per partition over its last TAIL seconds, and whether its last second was quiet.
    let mut idle = 0u64;
    let mut tail_admitted = vec![0u64; targets.len()];
    let mut tail_start = vec![0.0f64; p];
    let mut quiet = false;
    let mut next = writes.iter().peekable();
    let mut second = 0u64;
    while second <= last {
        let next_write = next.peek().map_or(last.saturating_add(1), |w| offset(w));
        if skip && !targets.is_empty() && second < next_write && idle >= WINDOW {
            // The rest of a long gap in one step.
            let seconds = next_write - second;
            let mut consumed = vec![0.0f64; p];
            if quiet {
                for t in &targets {
                    let r = runs_between(t.rate, second, next_write);
                    runs_total = runs_total.saturating_add(r);
                    for slot in &t.slots {
                        consumed[*slot] += r as f64 * t.each;
                    }
                }
            } else {
                let now = model.consumed();
                for (i, t) in targets.iter().enumerate() {
                    let r = runs_between(t.rate, second, next_write);
                    let tail_runs = runs_between(t.rate, second - TAIL, second).max(1);
                    let share = (tail_admitted[i] as f64 / tail_runs as f64).min(1.0);
                    let admitted = ((r as f64 * share).round() as u64).min(r);
                    runs_total = runs_total.saturating_add(r);
                    refused_total = refused_total.saturating_add(r - admitted);
                }
                for (slot, c) in consumed.iter_mut().enumerate() {
                    *c = (now[slot] - tail_start[slot]) / TAIL as f64 * seconds as f64;
                }
            }
            model.skip(seconds, &consumed);
            second = next_write;
            continue;
        }
        model.advance(Duration::from_secs(second));
        // This second's runs of each query, and the load they put on each partition.
        load.iter_mut().for_each(|l| *l = 0.0);
        for (i, t) in targets.iter().enumerate() {
            runs[i] = if t.slots.is_empty() { 0 } else { runs_between(t.rate, second, second + 1) };
            for slot in &t.slots {
                load[*slot] += runs[i] as f64 * t.each;
            }
        }
        let writing = next_write <= second;
        if idle == WINDOW - TAIL {
            tail_admitted.iter_mut().for_each(|a| *a = 0);
            tail_start = model.consumed();
        }
        quiet = skip && !writing && !targets.is_empty() && model.quiet(&load);
        if quiet {
            for (i, r) in runs.iter().enumerate() {
                runs_total = runs_total.saturating_add(*r);
                tail_admitted[i] = tail_admitted[i].saturating_add(*r);
            }
        } else {
            while let Some((_, slot, bytes)) = next.next_if(|w| offset(w) <= second) {
                if model.requests(&[*slot], 1, charge(*bytes)) == 0 {
                    throttled += 1;
                }
            }
            for (i, t) in targets.iter().enumerate() {
                if runs[i] > 0 {
                    let admitted = model.requests(&t.slots, runs[i], t.each);
                    runs_total = runs_total.saturating_add(runs[i]);
                    refused_total = refused_total.saturating_add(runs[i] - admitted);
                    tail_admitted[i] = tail_admitted[i].saturating_add(admitted);
                }
            }
        }
        idle = if writing { 0 } else { idle + 1 };
        // Without queries, nothing happens between writes.
        second =
            if targets.is_empty() { next.peek().map_or(last.saturating_add(1), |w| offset(w)) } else { second + 1 };
    }
    Some(WhatIf {
        writes: writes.len() as u64,
        throttled,
        queries: runs_total,
        queries_throttled: refused_total,
        peak_normalized: model.peak_normalized(),
        outliers,
    })
}

/// Leaves out the writes (sorted by time) far from the others: those more than the span of the
/// middle 98% away from it. Returns how many.
fn drop_outliers(writes: &mut Vec<(i64, usize, u64)>) -> u64 {
    let n = writes.len();
    // The middle 98% (of ten writes or more: a few are too few to call one far).
    let k = (n / 100).max(usize::from(n >= 10));
    let (lo, hi) = (writes[k].0, writes[n - 1 - k].0);
    let margin = hi.saturating_sub(lo).max(3600);
    let before = n;
    writes.retain(|w| w.0 >= lo.saturating_sub(margin) && w.0 <= hi.saturating_add(margin));
    (before - writes.len()) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use cosmoql_value::parse_json;

    /// Devices writing every `spacing` seconds on average over `days`.
    fn sample(items: u64, spacing: u64) -> Sample {
        let mut out = Vec::new();
        for i in 0..items {
            let second = (i * 7919 * spacing) % (items * spacing);
            let (day, h, m, s) = (1 + second / 86_400, second / 3600 % 24, second / 60 % 60, second % 60);
            out.push(
                parse_json(&format!(
                    r#"{{"id":"{i}","deviceId":"d{}","date":"2026-11-{day:02}","at":"2026-11-{day:02}T{h:02}:{m:02}:{s:02}Z"}}"#,
                    i % 37
                ))
                .unwrap(),
            );
        }
        Sample::of(&out)
    }

    fn queries(rates: [f64; 2]) -> [WhatIfQuery; 2] {
        [
            WhatIfQuery { keys: Some(vec![PartitionKey::from("d3")]), rate: rates[0], charge: 3.0 },
            WhatIfQuery { keys: None, rate: rates[1], charge: 12.0 },
        ]
    }

    #[test]
    fn quiet_seconds_replay_as_every_second_would() {
        // Writes about a minute apart: every gap fits the window, so the result is exact.
        let sample = sample(3000, 58);
        for (ru, rates) in [(4000.0, [3.0, 1.0]), (4000.0, [2.5, 0.3]), (400.0, [40.0, 7.0]), (150.0, [1.5, 12.25])] {
            for choice in [KeyChoice::Path("/deviceId".into()), KeyChoice::Path("/date".into())] {
                let five = |_: u64| 5.0;
                let fast = replay_with(&sample, &choice, (10, ru), &five, &queries(rates), true).unwrap();
                let slow = replay_with(&sample, &choice, (10, ru), &five, &queries(rates), false).unwrap();
                assert_eq!(fast, slow, "{choice} at {ru} RU/s, rates {rates:?}");
                assert!(fast.queries > 0);
            }
        }
    }

    #[test]
    fn long_gaps_are_replayed_in_a_step_close_to_every_second() {
        // Writes about an hour apart: the gaps run past the window.
        let sample = sample(200, 3600);
        let five = |_: u64| 5.0;
        let key = KeyChoice::Path("/deviceId".into());
        for (ru, rates) in [(4000.0, [2.5, 0.3]), (400.0, [40.0, 7.0]), (150.0, [1.5, 12.25])] {
            let fast = replay_with(&sample, &key, (10, ru), &five, &queries(rates), true).unwrap();
            let slow = replay_with(&sample, &key, (10, ru), &five, &queries(rates), false).unwrap();
            assert_eq!(fast.queries, slow.queries, "runs are counted exactly ({ru}, {rates:?})");
            assert_eq!((fast.writes, fast.throttled), (slow.writes, slow.throttled), "{ru}, {rates:?}");
            let refused = |w: &WhatIf| w.queries_throttled as f64 / w.queries as f64;
            assert!((refused(&fast) - refused(&slow)).abs() < 0.01, "{fast:?} vs {slow:?}");
            assert_eq!(fast.peak_normalized, slow.peak_normalized, "{ru}, {rates:?}");
        }
    }

    #[test]
    fn a_write_far_from_the_rest_does_not_make_the_replay_slow() {
        // One item stamped in year 1 (.NET's DateTime.MinValue): 64 billion idle seconds before
        // the others.
        let mut items: Vec<cosmoql_value::Value> = (0..100)
            .map(|i| {
                parse_json(&format!(r#"{{"id":"{i}","k":"k{}","at":"2026-11-01T00:00:{:02}Z"}}"#, i % 7, i % 60))
                    .unwrap()
            })
            .collect();
        items.push(parse_json(r#"{"id":"old","k":"k1","at":"0001-01-01T00:00:00Z"}"#).unwrap());
        let sample = Sample::of(&items);
        let started = std::time::Instant::now();
        let w = replay(&sample, &KeyChoice::Path("/k".into()), (4, 400.0), &|_| 5.0, &queries([2.5, 0.5])).unwrap();
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        // It is left out, and said to be.
        assert_eq!((w.writes, w.outliers), (100, 1), "{w:?}");
        assert!(w.queries < 1000, "{w:?}");
    }
}
