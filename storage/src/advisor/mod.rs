//! The partition-key advisor: given items (a container's, or a sample with the total they stand
//! for), which partition key would spread storage and writes best, and why.
//!
//! Candidates: every scalar path the items almost all have; synthetic concatenations of two of
//! them; hierarchical pairs (and a third level where a pair is still too big); a hash suffix (on
//! a chosen source path) and a random suffix on time-derived paths. For each, computed exactly
//! from the items with the real EPK hash: cardinality, the largest logical partition against the
//! cap (scaled to the total), the storage and write-RU spread over `P` physical partitions (the
//! keys in EPK order cut into `P` ranges of about equal bytes, as splits follow the data, never
//! inside a logical partition), and for time-stamped data the write concentration (the share of
//! each hour's, and each second's, writes landing on the busiest partition). The ranking
//! penalizes what the service's documents warn about (few keys, a logical partition over its cap,
//! hot partitions, writes that all go to the key of "now") and says why.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use cosmoql_value::{to_json_string, Value};

use crate::epk::Epk;
use crate::partition_key::{hash_bucket, PartitionKey, PartitionKeyDefinition};
use crate::skew::Spread;

/// A candidate key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum KeyChoice {
    /// One path (`/deviceId`).
    Path(String),
    /// A synthetic key: the values of two paths joined with `-` (`/deviceId-/date`).
    Concat(String, String),
    /// A hierarchical key of two or three paths (`[/tenantId, /userId]`).
    Hierarchical(Vec<String>),
    /// A base path's value, a dot and `hash(source) % buckets + 1` (`SyntheticKind::HashSuffix`).
    HashSuffix(String, String, u32),
    /// A base path's value, a dot and a random number from 1 to `buckets`, drawn at each write
    /// (`SyntheticKind::RandomSuffix`): writes spread, but a read by the base value fans out.
    RandomSuffix(String, u32),
}

impl KeyChoice {
    /// The item paths the key's value comes from.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            KeyChoice::Path(a) | KeyChoice::RandomSuffix(a, _) => vec![a],
            KeyChoice::HashSuffix(a, source, _) => vec![a, source],
            KeyChoice::Concat(a, b) => vec![a, b],
            KeyChoice::Hierarchical(levels) => levels.iter().map(String::as_str).collect(),
        }
    }
}

impl fmt::Display for KeyChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyChoice::Path(p) => write!(f, "{p}"),
            KeyChoice::Concat(a, b) => write!(f, "{a} + \"-\" + {b} (synthetic)"),
            KeyChoice::Hierarchical(levels) => write!(f, "[{}] (hierarchical)", levels.join(", ")),
            KeyChoice::RandomSuffix(p, n) => write!(f, "{p} + \".\" + random(1..{n}) (synthetic)"),
            KeyChoice::HashSuffix(p, source, n) => {
                write!(f, "{p} + \".\" + hash({source}) % {n} + 1 (synthetic)")
            }
        }
    }
}

/// What the advisor measured for one candidate, and its verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub key: KeyChoice,
    /// Distinct key values among the items.
    pub cardinality: usize,
    /// The largest logical partition, scaled to the total the items stand for, in bytes.
    pub largest_bytes: u64,
    /// Storage spread over the physical partitions.
    pub storage: Spread,
    /// The spread of the request units of writing the items (priced by
    /// [`AdvisorOptions::write_charge`]).
    pub writes: Spread,
    /// For time-stamped items: the average share of an hour's writes landing on the busiest
    /// partition (`1 / P` is even, 1 is one partition taking them all).
    pub write_concentration: Option<f64>,
    /// For items stamped to the second: the same per second, over the seconds with at least two
    /// writes (what a throughput budget, counted per second, sees).
    pub write_concentration_per_second: Option<f64>,
    /// Lower is better; `f64::INFINITY` rules the key out.
    pub penalty: f64,
    pub reasons: Vec<String>,
}

/// Advisor settings.
#[derive(Debug, Clone, Copy)]
pub struct AdvisorOptions {
    /// Physical partitions to spread over.
    pub partitions: usize,
    /// How many items the given ones stand for (a sample); `None`: exactly those.
    pub total_items: Option<u64>,
    /// The logical partition cap, in bytes (20 GB).
    pub logical_partition_cap: u64,
    /// Buckets of a hash suffix.
    pub suffix_buckets: u32,
    /// The request units of writing an item of this many bytes (the embedded API passes the
    /// request-charge model; by default, the bytes themselves).
    pub write_charge: fn(u64) -> f64,
}

impl Default for AdvisorOptions {
    fn default() -> Self {
        AdvisorOptions {
            partitions: 10,
            total_items: None,
            logical_partition_cap: 20 * 1024 * 1024 * 1024,
            suffix_buckets: 40,
            write_charge: |bytes| bytes as f64,
        }
    }
}

/// Scalar leaves of an item, by path (`/a/b`), as text; arrays are not walked.
fn scalars(v: &Value, prefix: &str, depth: usize, out: &mut Vec<(String, String)>) {
    if let Value::Object(map) = v {
        for (k, child) in map.iter() {
            if depth == 0 && crate::doc::SYSTEM_PROPERTIES.contains(&k.as_str()) {
                continue;
            }
            let path = format!("{prefix}/{k}");
            match child {
                Value::Object(_) if depth < 3 => scalars(child, &path, depth + 1, out),
                Value::String(s) => out.push((path, s.to_string())),
                Value::Number(_) | Value::Bool(_) => out.push((path, to_json_string(child).unwrap_or_default())),
                _ => {}
            }
        }
    }
}

/// A value that looks like an ISO date or timestamp (`2026-11-23`, `2026-11-23T10:00:00Z`).
fn is_time(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit)
}

struct Item {
    /// The item's place in the sample.
    seq: u64,
    bytes: u64,
    /// The item's finest time, as written.
    stamp: Option<String>,
    fields: HashMap<String, String>,
    hour: Option<String>,
    /// The item's second (`None` when its time has no seconds).
    second: Option<String>,
}

/// At most this many items are read by [`advise_container`]: a sample beyond.
pub const SAMPLE: usize = 100_000;

/// Ranks candidate keys for a container's items (an even sample of at most [`SAMPLE`], standing
/// for all of them), over its current number of physical partitions.
pub fn advise_container(container: &crate::Container, options: &AdvisorOptions) -> Vec<Candidate> {
    let total = container.item_count();
    let step = total.div_ceil(SAMPLE).max(1);
    let items: Vec<Value> = container.scan().items().step_by(step).map(|item| container.materialize(&item)).collect();
    let options = AdvisorOptions { total_items: Some(total as u64), ..*options };
    advise(&items, &options)
}

/// The ranking as text: a line per candidate, best first, with the reasons.
pub fn render(ranked: &[Candidate], top: usize) -> String {
    let mut out = String::new();
    for (i, c) in ranked.iter().take(top).enumerate() {
        let verdict = if c.penalty.is_infinite() { "ruled out".to_string() } else { format!("{:.2}", c.penalty) };
        out.push_str(&format!(
            "{:>2}. {}  ({} values, largest logical partition {} B, storage max/mean {:.2}, write RU max/mean {:.2}{}; penalty {verdict})\n    {}\n",
            i + 1,
            c.key,
            c.cardinality,
            c.largest_bytes,
            c.storage.max_over_mean,
            c.writes.max_over_mean,
            match (c.write_concentration, c.write_concentration_per_second) {
                (Some(h), Some(s)) => format!(
                    ", writes on the busiest partition {:.0}% of each hour's, {:.0}% of each second's",
                    h * 100.0,
                    s * 100.0
                ),
                (Some(h), None) => format!(", hourly writes on the busiest partition {:.0}%", h * 100.0),
                _ => String::new(),
            },
            c.reasons.join("; ")
        ));
    }
    out
}

/// Ranks candidate partition keys for `items` (JSON objects), best first.
/// The items as scalar fields, the paths nearly all of them have, which of those hold times and
/// which measured numbers; each item stamped with its finest time (and its hour).
struct Parsed {
    items: Vec<Item>,
    common: Vec<String>,
    time_paths: BTreeSet<String>,
    measured: BTreeSet<String>,
}

/// A fixed scramble of `n` (SplitMix64's finalizer): stands for a random draw, repeatably.
fn scramble(n: u64) -> u64 {
    let mut z = n.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn parse(items: &[Value]) -> Parsed {
    let parsed: Vec<Item> = items
        .iter()
        .enumerate()
        .map(|(seq, v)| {
            let mut leaves = Vec::new();
            scalars(v, "", 0, &mut leaves);
            let fields: HashMap<String, String> = leaves.into_iter().collect();
            Item {
                seq: seq as u64,
                bytes: to_json_string(v).map_or(0, |s| s.len() as u64),
                hour: None,
                second: None,
                stamp: None,
                fields,
            }
        })
        .collect();
    let n = parsed.len();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut times: BTreeMap<&str, usize> = BTreeMap::new();
    for item in &parsed {
        for (path, value) in &item.fields {
            *counts.entry(path).or_default() += 1;
            if is_time(value) {
                *times.entry(path).or_default() += 1;
            }
        }
    }
    let common: Vec<String> = counts.iter().filter(|(_, c)| **c * 100 >= n * 95).map(|(p, _)| p.to_string()).collect();
    let time_paths: BTreeSet<String> =
        times.iter().filter(|(_, c)| **c * 100 >= n * 95).map(|(p, _)| p.to_string()).collect();
    // Paths holding measured numbers (mostly not whole): values, not identifiers.
    let measured: BTreeSet<String> = common
        .iter()
        .filter(|p| {
            let fractional = parsed
                .iter()
                .filter_map(|i| i.fields.get(*p))
                .filter(|v| v.parse::<f64>().is_ok_and(|x| x.fract() != 0.0))
                .count();
            fractional * 2 >= n
        })
        .cloned()
        .collect();
    // The finest time path (the longest values) stamps each write.
    let stamp = time_paths
        .iter()
        .max_by_key(|p| parsed.iter().map(|i| i.fields.get(*p).map_or(0, String::len)).sum::<usize>())
        .cloned();
    let items = parsed
        .into_iter()
        .map(|mut i| {
            i.stamp = stamp.as_ref().and_then(|s| i.fields.get(s)).cloned();
            i.hour = i.stamp.as_ref().map(|t| t.chars().take(13).collect());
            i.second = i.stamp.as_ref().filter(|t| t.len() >= 19).map(|t| t.chars().take(19).collect());
            i
        })
        .collect();
    Parsed { items, common, time_paths, measured }
}

/// Seconds since 1970 of an ISO time (`2026-11-23`, `2026-11-23T10:20:30Z`); `None` otherwise.
fn seconds(text: &str) -> Option<i64> {
    let num = |r: std::ops::Range<usize>| text.get(r).and_then(|t| t.parse::<i64>().ok());
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = if text.len() >= 19 { (num(11..13)?, num(14..16)?, num(17..19)?) } else { (0, 0, 0) };
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + mi * 60 + se)
}

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

/// Replays `items` as writes at their timestamps (their finest time path) under `key`, with
/// `ru_per_second` split over `options.partitions` physical partitions laid out as splits would
/// lay them out, each write charged `charge(bytes)`; `None` when the items carry no time.
pub fn what_if(
    items: &[Value],
    key: &KeyChoice,
    options: &AdvisorOptions,
    ru_per_second: f64,
    charge: &dyn Fn(u64) -> f64,
) -> Option<WhatIf> {
    what_if_with_queries(items, key, options, ru_per_second, charge, &[])
}

/// [`what_if`] with a recorded workload's queries replayed alongside the writes, each at its
/// rate every second of the replay, on the partitions it reads under the candidate key.
pub fn what_if_with_queries(
    items: &[Value],
    key: &KeyChoice,
    options: &AdvisorOptions,
    ru_per_second: f64,
    charge: &dyn Fn(u64) -> f64,
    queries: &[WhatIfQuery],
) -> Option<WhatIf> {
    let p = options.partitions.max(1);
    let parsed = parse(items);
    let Layout { keys, group_of, .. } = layout(key, &parsed.items, p)?;
    let mut writes: Vec<(i64, usize, u64)> = parsed
        .items
        .iter()
        .zip(&keys)
        .filter_map(|(item, (k, _))| Some((seconds(item.stamp.as_ref()?)?, *group_of.get(k)?, item.bytes)))
        .collect();
    if writes.is_empty() {
        return None;
    }
    writes.sort_by_key(|w| w.0);
    let clock = std::sync::Arc::new(crate::throughput::ManualClock::default());
    let throttle = crate::throughput::Throttle::new(ru_per_second, clock.clone());
    let start = writes[0].0;
    let mut throttled = 0;
    // Each query's partitions under the candidate (the keys' groups; all for a fan-out).
    let targets: Vec<Vec<u32>> = queries
        .iter()
        .map(|q| match &q.keys {
            None => (0..p as u32).collect(),
            Some(keys) => {
                let mut slots: Vec<u32> =
                    keys.iter().filter_map(|k| group_of.get(&k.to_string()).map(|g| *g as u32)).collect();
                slots.sort_unstable();
                slots.dedup();
                slots
            }
        })
        .collect();
    let mut owed = vec![0.0f64; queries.len()];
    let (mut query_runs, mut queries_throttled) = (0u64, 0u64);
    let mut second = 0u64;
    let mut run_queries = |upto: u64, clock: &crate::throughput::ManualClock| {
        // The queries of every second before `upto`, spread over the second.
        while second < upto {
            for (i, q) in queries.iter().enumerate() {
                owed[i] += q.rate;
                let runs = owed[i].floor();
                owed[i] -= runs;
                for _ in 0..runs as u64 {
                    let slots = &targets[i];
                    if slots.is_empty() {
                        continue;
                    }
                    query_runs += 1;
                    if slots.iter().all(|s| throttle.admit(*s, p).is_ok()) {
                        for s in slots {
                            throttle.consume(*s, p, q.charge / slots.len() as f64, None);
                        }
                    } else {
                        queries_throttled += 1;
                    }
                }
            }
            second += 1;
            let next = std::time::Duration::from_secs(second);
            clock.advance(next.saturating_sub(crate::throughput::Clock::now(clock)));
        }
    };
    for (at, slot, bytes) in &writes {
        let offset = u64::try_from(at - start).unwrap_or(0);
        run_queries(offset, &clock);
        let now = std::time::Duration::from_secs(offset);
        let elapsed = now.saturating_sub(crate::throughput::Clock::now(&*clock));
        clock.advance(elapsed);
        match throttle.admit(*slot as u32, p) {
            Ok(()) => throttle.consume(*slot as u32, p, charge(*bytes), None),
            Err(_) => throttled += 1,
        }
    }
    let last = u64::try_from(writes[writes.len() - 1].0 - start).unwrap_or(0);
    run_queries(last + 1, &clock);
    let budget = throttle.partition_budget(p);
    let usage = throttle.usage();
    let peak_normalized = (0..p as u32)
        .map(|id| {
            usage.iter().find(|(i, _)| *i == id).map_or(0.0, |(_, u)| (u.peak_second_ru / budget * 100.0).min(100.0))
        })
        .collect();
    Some(WhatIf { writes: writes.len() as u64, throttled, queries: query_runs, queries_throttled, peak_normalized })
}

pub fn advise(items: &[Value], options: &AdvisorOptions) -> Vec<Candidate> {
    let p = options.partitions.max(1);
    let Parsed { items: parsed, common, time_paths, measured } = parse(items);
    let n = parsed.len();
    if n == 0 {
        return Vec::new();
    }
    let cardinality = |path: &String| parsed.iter().filter_map(|i| i.fields.get(path)).collect::<BTreeSet<_>>().len();
    let mut choices: Vec<KeyChoice> = common.iter().map(|p| KeyChoice::Path(p.clone())).collect();
    // Synthetic pairs: a time path or a low-cardinality path with another path.
    for a in &common {
        for b in &common {
            if a != b && a != "/id" && b != "/id" && (time_paths.contains(b) || cardinality(a) < cardinality(b)) {
                choices.push(KeyChoice::Concat(a.clone(), b.clone()));
            }
        }
    }
    for t in &time_paths {
        for source in &common {
            if source != t && !time_paths.contains(source) && cardinality(source) >= 10 {
                choices.push(KeyChoice::HashSuffix(t.clone(), source.clone(), options.suffix_buckets));
            }
        }
    }
    for t in &time_paths {
        choices.push(KeyChoice::RandomSuffix(t.clone(), options.suffix_buckets));
    }
    for a in &common {
        for b in &common {
            if a != b && a != "/id" && !time_paths.contains(a) && cardinality(a) < cardinality(b) {
                choices.push(KeyChoice::Hierarchical(vec![a.clone(), b.clone()]));
            }
        }
    }
    let scale = options.total_items.map_or(1.0, |t| t as f64 / n as f64);
    let context = Context { time_paths: &time_paths, measured: &measured, options, p, scale };
    let mut out: Vec<Candidate> = choices.into_iter().filter_map(|key| measure(key, &parsed, &context)).collect();
    // A hierarchical key is worth its next level when the levels before it are too big for a
    // logical partition: a third level for a pair still too big.
    let half_cap = 0.5 * options.logical_partition_cap as f64;
    let too_big: BTreeSet<Vec<String>> = out
        .iter()
        .filter(|c| c.largest_bytes as f64 > half_cap)
        .filter_map(|c| match &c.key {
            KeyChoice::Path(path) => Some(vec![path.clone()]),
            KeyChoice::Hierarchical(levels) => Some(levels.clone()),
            _ => None,
        })
        .collect();
    let mut deeper = Vec::new();
    for pair in too_big.iter().filter(|levels| levels.len() == 2) {
        for c in &common {
            if !pair.contains(c) && !time_paths.contains(c) && cardinality(c) > cardinality(&pair[1]) {
                let mut levels = pair.clone();
                levels.push(c.clone());
                deeper.extend(measure(KeyChoice::Hierarchical(levels), &parsed, &context));
            }
        }
    }
    out.extend(deeper);
    for c in &mut out {
        if let KeyChoice::Hierarchical(levels) = &c.key {
            let prefix = &levels[..levels.len() - 1];
            if too_big.contains(prefix) && c.penalty.is_finite() {
                c.penalty -= 0.5;
                let named = prefix.join(" + ");
                c.reasons.insert(
                    0,
                    format!(
                        "{named} alone is too big for a logical partition; the next level splits it while queries by \
                         {named} read only its prefix's partitions"
                    ),
                );
            }
        }
    }
    out.sort_by(|a, b| a.penalty.total_cmp(&b.penalty).then_with(|| a.key.cmp(&b.key)));
    out
}

/// Where a candidate key puts the items: each item's key (and EPK), each key's bytes, and the
/// physical partitions, formed as splits form them: the keys in EPK order cut into `p` ranges of
/// about equal bytes, never inside a logical partition.
struct Layout {
    keys: Vec<(String, Epk)>,
    per_key: HashMap<String, u64>,
    per_partition: Vec<u64>,
    group_of: HashMap<String, usize>,
}

fn key_of(key: &KeyChoice, item: &Item) -> Option<PartitionKey> {
    Some(match key {
        KeyChoice::Path(path) => PartitionKey::from(item.fields.get(path)?.as_str()),
        KeyChoice::Concat(a, b) => PartitionKey::from(format!("{}-{}", item.fields.get(a)?, item.fields.get(b)?)),
        KeyChoice::Hierarchical(levels) => PartitionKey::from_values(
            &levels.iter().map(|l| item.fields.get(l).map(|v| Value::from(v.as_str()))).collect::<Option<Vec<_>>>()?,
        )
        .ok()?,
        // A random draw at each write: the sample's draws are a fixed scramble of the item's
        // place in the sample, so the measure is repeatable.
        KeyChoice::RandomSuffix(path, buckets) => {
            PartitionKey::from(format!("{}.{}", item.fields.get(path)?, scramble(item.seq) % u64::from(*buckets) + 1))
        }
        KeyChoice::HashSuffix(path, source, buckets) => PartitionKey::from(format!(
            "{}.{}",
            item.fields.get(path)?,
            hash_bucket(item.fields.get(source)?, *buckets)
        )),
    })
}

fn layout(key: &KeyChoice, items: &[Item], p: usize) -> Option<Layout> {
    let definition = match key {
        KeyChoice::Hierarchical(_) => PartitionKeyDefinition::from_paths(&key.paths()).ok()?,
        _ => PartitionKeyDefinition::hash("/k").ok()?,
    };
    let mut keys: Vec<(String, Epk)> = Vec::with_capacity(items.len());
    let mut per_key: HashMap<String, (Epk, u64)> = HashMap::new();
    for item in items {
        let k = key_of(key, item)?;
        let epk = definition.epk(&k).ok()?;
        let text = k.to_string();
        per_key.entry(text.clone()).or_insert_with(|| (epk.clone(), 0)).1 += item.bytes;
        keys.push((text, epk));
    }
    let mut by_epk: Vec<(&String, &(Epk, u64))> = per_key.iter().collect();
    by_epk.sort_by(|a, b| a.1 .0.cmp(&b.1 .0));
    let total: u64 = by_epk.iter().map(|(_, (_, b))| *b).sum();
    let target = total as f64 / p as f64;
    let mut group_of: HashMap<String, usize> = HashMap::new();
    let mut per_partition = vec![0u64; p];
    let mut group = 0;
    for (k, (_, bytes)) in by_epk {
        if per_partition[group] > 0 && per_partition[group] as f64 + *bytes as f64 / 2.0 > target && group + 1 < p {
            group += 1;
        }
        per_partition[group] += bytes;
        group_of.insert(k.clone(), group);
    }
    let per_key = per_key.into_iter().map(|(k, (_, b))| (k, b)).collect();
    Some(Layout { keys, per_key, per_partition, group_of })
}

/// What every candidate is measured against.
struct Context<'a> {
    time_paths: &'a BTreeSet<String>,
    measured: &'a BTreeSet<String>,
    options: &'a AdvisorOptions,
    p: usize,
    scale: f64,
}

fn measure(key: KeyChoice, items: &[Item], context: &Context<'_>) -> Option<Candidate> {
    let (time_paths, options, p, scale) = (context.time_paths, context.options, context.p, context.scale);
    let Layout { keys, per_key, per_partition, group_of } = layout(&key, items, p)?;
    let mut per_hour: HashMap<&str, Vec<u64>> = HashMap::new();
    let mut per_second: HashMap<&str, Vec<u64>> = HashMap::new();
    for (item, (key, _)) in items.iter().zip(&keys) {
        if let (Some(hour), Some(slot)) = (&item.hour, group_of.get(key)) {
            per_hour.entry(hour.as_str()).or_insert_with(|| vec![0; p])[*slot] += 1;
            if let Some(second) = &item.second {
                per_second.entry(second.as_str()).or_insert_with(|| vec![0; p])[*slot] += 1;
            }
        }
    }
    // The busiest partition's share of the writes of each second that has several, weighted by
    // the writes.
    let (busiest, several): (u64, u64) = per_second
        .values()
        .map(|counts| (counts.iter().copied().max().unwrap_or(0), counts.iter().sum::<u64>()))
        .filter(|(_, total)| *total >= 2)
        .fold((0, 0), |(b, t), (max, total)| (b + max, t + total));
    let write_concentration_per_second = (several > 0).then(|| busiest as f64 / several as f64);

    let largest = per_key.values().copied().max().unwrap_or(0);
    let largest_bytes = (largest as f64 * scale) as u64;
    let storage = crate::skew::spread(&per_partition.iter().map(|b| *b as f64).collect::<Vec<_>>());
    // The request units of writing the items, per partition.
    let mut ru = vec![0.0; p];
    for (item, (key, _)) in items.iter().zip(&keys) {
        if let Some(slot) = group_of.get(key) {
            ru[*slot] += (options.write_charge)(item.bytes);
        }
    }
    let writes = crate::skew::spread(&ru);
    let write_concentration = (!per_hour.is_empty()).then(|| {
        let shares: Vec<f64> = per_hour
            .values()
            .map(|counts| {
                let total: u64 = counts.iter().sum();
                *counts.iter().max().unwrap_or(&0) as f64 / total.max(1) as f64
            })
            .collect();
        shares.iter().sum::<f64>() / shares.len() as f64
    });
    let cardinality = per_key.len();
    let mut penalty = 0.0;
    let mut reasons = Vec::new();
    if largest_bytes > options.logical_partition_cap {
        penalty = f64::INFINITY;
        reasons.push(format!(
            "its largest logical partition would hold {:.1} GB, over the {:.0} GB cap",
            largest_bytes as f64 / 1e9,
            options.logical_partition_cap as f64 / 1e9
        ));
    } else if largest_bytes as f64 > 0.5 * options.logical_partition_cap as f64 {
        penalty += 5.0;
        reasons.push("its largest logical partition would hold over half the cap".into());
    }
    if cardinality < p {
        penalty += 10.0 * (1.0 - cardinality as f64 / p as f64) + 2.0;
        reasons.push(format!("only {cardinality} distinct values for {p} partitions: some partitions stay empty"));
    } else if cardinality < p * 10 {
        penalty += 2.0 * (1.0 - cardinality as f64 / (p * 10) as f64);
        reasons.push(format!("only {cardinality} distinct values for {p} partitions: few keys spread unevenly"));
    }
    penalty += 2.0 * (storage.max_over_mean - 1.0).max(0.0);
    if storage.max_over_mean > 1.5 {
        reasons.push(format!("storage is uneven: the fullest partition holds {:.1}x the mean", storage.max_over_mean));
    }
    let key_paths: Vec<&str> = match &key {
        KeyChoice::Path(a) | KeyChoice::HashSuffix(a, _, _) | KeyChoice::RandomSuffix(a, _) => vec![a],
        other => other.paths(),
    };
    if let Some(c) = write_concentration {
        penalty += 10.0 * (c - 1.0 / p as f64).max(0.0);
        if c > 2.0 / p as f64 {
            let time_only = !matches!(key, KeyChoice::HashSuffix(..) | KeyChoice::RandomSuffix(..))
                && key_paths.iter().all(|k| time_paths.contains(*k));
            reasons.push(format!(
                "hot writes: each hour {:.0}% of the writes go to one partition{}",
                c * 100.0,
                if time_only {
                    " (a key derived from time sends every write of the moment to the same key)"
                } else {
                    ""
                }
            ));
        }
    }
    if cardinality * 100 >= items.len() * 99 && items.len() > 1 {
        penalty += 0.5;
        reasons.push(
            "(almost) every item is its own logical partition: no transactions across items, and queries by \
             anything else fan out"
                .into(),
        );
    }
    if let Some(m) = key_paths.iter().find(|k| context.measured.contains(**k)) {
        penalty += 3.0;
        reasons.push(format!("{m} holds measured numbers: values that change, not an identifier to look items up by"));
    }
    if reasons.is_empty() || penalty < 0.5 {
        reasons.push("spreads storage and writes evenly".into());
    }
    Some(Candidate {
        key,
        cardinality,
        largest_bytes,
        storage,
        writes,
        write_concentration,
        write_concentration_per_second,
        penalty,
        reasons,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cosmoql_value::parse_json;

    fn iot() -> Vec<Value> {
        let mut items = Vec::new();
        for day in 1..=3 {
            for hour in 0..24 {
                for device in 0..40 {
                    let id = items.len();
                    items.push(
                        parse_json(&format!(
                            r#"{{"id":"r{id}","deviceId":"dev-{device:02}","date":"2026-11-0{day}","readingTime":"2026-11-0{day}T{hour:02}:{:02}:00Z","value":{}}}"#,
                            device % 60,
                            (id * 7) % 100
                        ))
                        .unwrap(),
                    );
                }
            }
        }
        items
    }

    #[test]
    fn readings_keyed_by_date_are_hot_and_lose_to_the_device() {
        let ranked = advise(&iot(), &AdvisorOptions::default());
        let position = |k: &KeyChoice| ranked.iter().position(|c| &c.key == k).unwrap();
        let date = position(&KeyChoice::Path("/date".into()));
        let device = position(&KeyChoice::Path("/deviceId".into()));
        let device_date = position(&KeyChoice::Concat("/deviceId".into(), "/date".into()));
        assert!(device < date && device_date < date, "{ranked:#?}");
        let reasons = ranked[date].reasons.join("; ");
        assert!(reasons.contains("hot writes"), "{reasons}");
        assert!(reasons.contains("derived from time"), "{reasons}");
        // A hash suffix spreads the date's writes.
        let suffix = position(&KeyChoice::HashSuffix("/date".into(), "/deviceId".into(), 40));
        assert!(suffix < date);
    }

    #[test]
    fn replaying_writes_predicts_the_date_key_throttled_and_the_device_key_not() {
        // 200 devices writing every second for a minute: 200 writes of 5 RU per second.
        let mut items = Vec::new();
        for second in 0..60 {
            for device in 0..200 {
                items.push(
                    parse_json(&format!(
                        r#"{{"id":"{second}-{device}","deviceId":"d{device}","date":"2026-11-01","at":"2026-11-01T10:00:{second:02}Z"}}"#
                    ))
                    .unwrap(),
                );
            }
        }
        let options = AdvisorOptions::default();
        let five = |_: u64| 5.0;
        let date = what_if(&items, &KeyChoice::Path("/date".into()), &options, 1500.0, &five).unwrap();
        let device = what_if(&items, &KeyChoice::Path("/deviceId".into()), &options, 1500.0, &five).unwrap();
        assert_eq!((date.writes, device.writes), (12_000, 12_000));
        // The date sends 1,000 RU/s into one partition's 150 RU/s.
        assert!(date.throttle_rate() > 0.8, "{date:?}");
        assert_eq!(date.peak_normalized.iter().filter(|p| **p >= 100.0).count(), 1);
        assert!(device.throttle_rate() < 0.05, "{device:?}");
        assert_eq!(seconds("1970-01-02T00:00:01Z"), Some(86_401));
        assert_eq!(seconds("2026-11-23"), Some(1_795_392_000));
    }

    #[test]
    fn a_huge_tenant_suggests_a_hierarchical_key() {
        let mut items = Vec::new();
        for i in 0..2000 {
            let tenant = if i % 10 < 8 { "contoso".to_string() } else { format!("t{}", i % 37) };
            items
                .push(parse_json(&format!(r#"{{"id":"{i}","tenantId":"{tenant}","userId":"u{}"}}"#, i % 400)).unwrap());
        }
        // The 2,000 items stand for 2 billion: the big tenant alone would pass the 20 GB cap.
        let options = AdvisorOptions { total_items: Some(2_000_000_000), ..AdvisorOptions::default() };
        let ranked = advise(&items, &options);
        assert_eq!(ranked[0].key, KeyChoice::Hierarchical(vec!["/tenantId".into(), "/userId".into()]), "{ranked:#?}");
        let tenant = ranked.iter().find(|c| c.key == KeyChoice::Path("/tenantId".into())).unwrap();
        assert_eq!(tenant.penalty, f64::INFINITY);
        assert!(tenant.reasons[0].contains("cap"), "{:?}", tenant.reasons);
    }

    #[test]
    fn write_units_spread_as_the_requests_do_not_as_the_bytes() {
        // Two kinds: a few large items and many small ones, each group under its own kind.
        let mut items = Vec::new();
        for i in 0..200 {
            let (kind, pad) = if i < 10 { ("large", 20_000) } else { ("small", 10) };
            items.push(parse_json(&format!(r#"{{"id":"{i}","kind":"{kind}","pad":"{}"}}"#, "x".repeat(pad))).unwrap());
        }
        // Every write costs the same: the RU follow the item counts, the storage the bytes.
        let options = AdvisorOptions { partitions: 2, write_charge: |_| 1.0, ..AdvisorOptions::default() };
        let ranked = advise(&items, &options);
        let kind = ranked.iter().find(|c| c.key == KeyChoice::Path("/kind".into())).unwrap();
        assert!((kind.writes.max_over_mean - 190.0 / 100.0).abs() < 1e-9, "{kind:?}");
        assert!(kind.storage.max_over_mean > 1.9 && kind.storage.max_over_mean < 2.0, "{kind:?}");
        let large_share = 200_000.0 / (200_000.0 + 190.0 * 60.0);
        assert!((kind.storage.max_over_mean / 2.0 - large_share).abs() < 0.02, "{kind:?}");
        // By default the writes are priced by their bytes: the same spread as storage.
        let by_bytes = advise(&items, &AdvisorOptions { partitions: 2, ..AdvisorOptions::default() });
        let kind = by_bytes.iter().find(|c| c.key == KeyChoice::Path("/kind".into())).unwrap();
        assert!((kind.writes.max_over_mean - kind.storage.max_over_mean).abs() < 1e-9);
    }

    #[test]
    fn a_huge_user_of_a_huge_tenant_suggests_a_third_level() {
        let mut items = Vec::new();
        for i in 0..3000 {
            // Contoso holds 80% of the items, and one of its users 80% of those.
            let tenant = if i % 10 < 8 { "contoso".to_string() } else { format!("t{}", i % 37) };
            let user = if tenant == "contoso" && i % 5 != 0 { "u-big".to_string() } else { format!("u{}", i % 300) };
            items.push(
                parse_json(&format!(
                    r#"{{"id":"{i}","tenantId":"{tenant}","userId":"{user}","sessionId":"s{}"}}"#,
                    i % 1000
                ))
                .unwrap(),
            );
        }
        let options = AdvisorOptions { total_items: Some(3_000_000_000), ..AdvisorOptions::default() };
        let ranked = advise(&items, &options);
        let three = KeyChoice::Hierarchical(vec!["/tenantId".into(), "/userId".into(), "/sessionId".into()]);
        assert_eq!(ranked[0].key, three, "{ranked:#?}");
        assert!(ranked[0].reasons[0].starts_with("/tenantId + /userId alone is too big"), "{:?}", ranked[0].reasons);
        assert_eq!(three.to_string(), "[/tenantId, /userId, /sessionId] (hierarchical)");
        let two = ranked.iter().find(|c| c.key == KeyChoice::Hierarchical(vec!["/tenantId".into(), "/userId".into()]));
        assert!(two.is_some_and(|c| c.penalty.is_infinite()), "{two:?}");
    }
}
