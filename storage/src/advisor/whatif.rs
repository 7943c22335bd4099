//! What-if: the sample's writes replayed at their times under a candidate key, with a recorded
//! workload's queries at their rates, against a provisioned throughput (the throttling model of
//! [`crate::throughput::Replay`]).

use std::collections::HashMap;
use std::time::Duration;

use super::keys::{layout, KeyChoice};
use super::sample::Sample;
use crate::partition_key::PartitionKey;
use crate::throughput::Replay;

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
    /// Per second.
    pub rate: f64,
    /// Request units per run (a fan-out's are spread over the partitions).
    pub charge: f64,
}

/// Replays `sample`'s writes at their times (their finest time path) under `key`, with
/// `ru_per_second` split over `p` physical partitions laid out as splits would lay them out, each
/// write charged `charge(bytes)`, and `queries` at their rates every second, on the partitions
/// each reads; `None` when the items carry no time.
///
/// At each second, its writes come first, in the sample's order, then that second's query runs
/// (a query of rate `r` runs `r` times a second, a fraction carried to the next second).
pub(super) fn replay(
    sample: &Sample,
    key: &KeyChoice,
    p: usize,
    ru_per_second: f64,
    charge: &dyn Fn(u64) -> f64,
    queries: &[WhatIfQuery],
) -> Option<WhatIf> {
    replay_with(sample, key, (p, ru_per_second), charge, queries, true)
}

/// [`replay`]; without `skip_quiet` every second is replayed request by request (what the
/// quiet stretches must equal).
fn replay_with(
    sample: &Sample,
    key: &KeyChoice,
    (p, ru_per_second): (usize, f64),
    charge: &dyn Fn(u64) -> f64,
    queries: &[WhatIfQuery],
    skip_quiet: bool,
) -> Option<WhatIf> {
    let p = p.max(1);
    let layout = layout(key, sample, p, !queries.is_empty())?;
    let mut writes: Vec<(i64, usize, u64)> =
        (0..sample.n).filter_map(|i| Some((sample.stamp[i]?, layout.slot(i), sample.bytes[i]))).collect();
    if writes.is_empty() {
        return None;
    }
    writes.sort_by_key(|w| w.0);
    let start = writes[0].0;
    let last = u64::try_from(writes[writes.len() - 1].0 - start).unwrap_or(0);
    // Each query's partitions under the candidate (the keys' groups; all for a fan-out).
    let group_of: HashMap<&str, u32> =
        layout.key_text.iter().enumerate().map(|(k, text)| (text.as_str(), layout.group_of_key[k])).collect();
    let targets: Vec<Vec<usize>> = queries
        .iter()
        .map(|q| match &q.keys {
            None => (0..p).collect(),
            Some(keys) => {
                let mut slots: Vec<usize> =
                    keys.iter().filter_map(|k| group_of.get(k.to_string().as_str()).map(|g| *g as usize)).collect();
                slots.sort_unstable();
                slots.dedup();
                slots
            }
        })
        .collect();
    let mut model = Replay::new(ru_per_second, p);
    let mut owed = vec![0.0f64; queries.len()];
    let (mut throttled, mut query_runs, mut queries_throttled) = (0u64, 0u64, 0u64);
    // Whole-number rates run alike every second: a quiet stretch is replayed in one step.
    let alike = queries.iter().all(|q| q.rate.fract() == 0.0);
    let mut runs = vec![0u64; queries.len()];
    let mut load = vec![0.0f64; p];
    let mut next = writes.iter().peekable();
    let mut second = 0u64;
    let offset = |w: &(i64, usize, u64)| u64::try_from(w.0 - start).unwrap_or(0);
    loop {
        model.advance(Duration::from_secs(second));
        // This second's runs of each query, and the load they put on each partition.
        load.iter_mut().for_each(|l| *l = 0.0);
        for (i, q) in queries.iter().enumerate() {
            owed[i] += q.rate;
            let whole = owed[i].floor();
            owed[i] -= whole;
            runs[i] = if targets[i].is_empty() { 0 } else { whole.min(u64::MAX as f64) as u64 };
            for slot in &targets[i] {
                load[*slot] += runs[i] as f64 * q.charge / targets[i].len() as f64;
            }
        }
        let writing = next.peek().is_some_and(|w| offset(w) <= second);
        // Until the next write (or the end), when the stretch is quiet.
        let stretch = if alike { next.peek().map_or(last + 1, |w| offset(w)) - second } else { 1 };
        if skip_quiet && !writing && !queries.is_empty() && model.quiet(&load, stretch) {
            for (i, r) in runs.iter().enumerate() {
                query_runs += r * stretch;
                if alike {
                    owed[i] = 0.0;
                }
            }
            second += stretch;
            if second > last {
                break;
            }
            continue;
        }
        while let Some((_, slot, bytes)) = next.next_if(|w| offset(w) <= second) {
            if model.requests(&[*slot], 1, charge(*bytes)) == 0 {
                throttled += 1;
            }
        }
        for (i, q) in queries.iter().enumerate() {
            if runs[i] > 0 {
                query_runs += runs[i];
                let slots = &targets[i];
                queries_throttled += runs[i] - model.requests(slots, runs[i], q.charge / slots.len() as f64);
            }
        }
        if second >= last {
            break;
        }
        // Without queries, nothing happens between writes.
        second = match (queries.is_empty(), next.peek()) {
            (true, Some(w)) => offset(w),
            _ => second + 1,
        };
    }
    Some(WhatIf {
        writes: writes.len() as u64,
        throttled,
        queries: query_runs,
        queries_throttled,
        peak_normalized: model.peak_normalized(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cosmoql_value::parse_json;

    /// Devices writing a few times an hour over two days, some seconds busy.
    fn sample() -> Sample {
        let mut items = Vec::new();
        for i in 0..3000u64 {
            let second = (i * 7919) % (2 * 86_400);
            let (h, m, s) = (second / 3600 % 24, second / 60 % 60, second % 60);
            let day = 1 + second / 86_400;
            items.push(
                parse_json(&format!(
                    r#"{{"id":"{i}","deviceId":"d{}","date":"2026-11-0{day}","at":"2026-11-0{day}T{h:02}:{m:02}:{s:02}Z"}}"#,
                    i % 37
                ))
                .unwrap(),
            );
        }
        Sample::of(&items)
    }

    #[test]
    fn quiet_stretches_replay_as_every_second_would() {
        let sample = sample();
        let key = |k: &str| Some(vec![PartitionKey::from(k)]);
        for (ru, rates) in [(4000.0, [3.0, 1.0]), (4000.0, [2.5, 0.3]), (400.0, [40.0, 7.0]), (150.0, [1.5, 12.25])] {
            let queries = [
                WhatIfQuery { keys: key("d3"), rate: rates[0], charge: 3.0 },
                WhatIfQuery { keys: None, rate: rates[1], charge: 12.0 },
            ];
            for choice in [KeyChoice::Path("/deviceId".into()), KeyChoice::Path("/date".into())] {
                let five = |_: u64| 5.0;
                let fast = replay_with(&sample, &choice, (10, ru), &five, &queries, true).unwrap();
                let slow = replay_with(&sample, &choice, (10, ru), &five, &queries, false).unwrap();
                assert_eq!(fast, slow, "{choice} at {ru} RU/s, rates {rates:?}");
                assert!(fast.queries > 0);
            }
        }
    }
}
