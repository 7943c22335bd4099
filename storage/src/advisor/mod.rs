//! The partition-key advisor: given items (a container's, or a sample with the total they stand
//! for), which partition key would spread storage and writes best, and why.
//!
//! Candidates: every scalar path the items almost all have; synthetic concatenations of two of
//! them; hierarchical pairs (and a third level where a pair is still too big); a hash suffix (on
//! a chosen source path) and a random suffix on time-derived paths. For each, computed exactly
//! from the items with the service's EPK hash (values keep their types: the number 5 is not the
//! string "5"): cardinality, the largest logical partition against the
//! cap (scaled to the total), the storage and write-RU spread over `P` physical partitions (the
//! keys in EPK order cut into `P` ranges of about equal bytes, as splits follow the data, never
//! inside a logical partition), and for time-stamped data the write concentration (the share of
//! each hour's, and each second's, writes landing on the busiest partition). The ranking
//! penalizes what the service's documents warn about (few keys, a logical partition over its cap,
//! hot partitions, writes that all go to the key of "now") and says why.
//!
//! This module is the one home of "is my key spreading well, and which would be better": the skew
//! report of a live container (`skew.rs`), the candidates and their measures (`keys.rs`, this
//! file), sampling a large container (`sample.rs`) and the what-if replay of a workload under
//! throughput (`whatif.rs`, on `throughput::Replay`). The facade's `KeyAdvisor` adds what needs the
//! planner: judging candidates against a workload's queries with the planner's own pruning.

mod keys;
mod sample;
pub mod skew;
mod whatif;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use cosmoql_value::Value;

use keys::layout;
pub use keys::KeyChoice;
use sample::Sample;
use skew::Spread;
pub use whatif::{WhatIf, WhatIfQuery, MAX_RATE};

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
    /// partition (1 is one partition taking them all; even is what a hash spreading each write on
    /// its own would give the same writes, at least `1 / P`).
    pub write_concentration: Option<f64>,
    /// For items stamped to the second: the same per second, over the seconds with at least as
    /// many writes as partitions (bursts, what a throughput budget, counted per second, sees).
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

/// The advisor plans for at least this many physical partitions unless told otherwise: a key that
/// spreads well over 10 spreads over fewer, while over the 1 a small container has every key
/// looks perfect (10 partitions serve 100,000 RU/s, or hold 500 GB).
pub const PLAN_PARTITIONS: usize = 10;

/// The most physical partitions the advisor plans for (every measure holds a number per
/// partition, and a what-if replays a query that fans out on each): 10,000 partitions serve
/// 100 million RU/s.
pub const MAX_PARTITIONS: usize = 10_000;

/// How far from even (a share, or max over mean) still counts as even.
const EVEN_ENOUGH: f64 = 0.02;

/// Paths made into pairs (synthetic and hierarchical candidates) at most: the pairs grow with
/// the square of the paths, and each candidate reads every item.
pub const MAX_PAIRED_PATHS: usize = 24;

/// Single-path candidates at most.
pub const MAX_PATHS: usize = 256;

impl Default for AdvisorOptions {
    fn default() -> Self {
        AdvisorOptions {
            partitions: PLAN_PARTITIONS,
            total_items: None,
            logical_partition_cap: 20 * 1024 * 1024 * 1024,
            suffix_buckets: 40,
            write_charge: |bytes| bytes as f64,
        }
    }
}

/// At most this many items are read from a container: a sample beyond.
pub const SAMPLE: usize = 100_000;

/// Progress of a long step: how many of how many are done.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// The advisor over a set of items, read once: rank candidate keys, replay writes under one.
#[derive(Debug)]
pub struct Advisor {
    sample: Sample,
    /// How many items the sample stands for.
    total: u64,
}

impl Advisor {
    /// Exactly these items (JSON objects).
    pub fn of_items(items: &[Value]) -> Advisor {
        Advisor { sample: Sample::of(items), total: items.len() as u64 }
    }

    /// A container's items: an even sample of at most [`SAMPLE`], standing for all of them.
    pub fn of_container(container: &crate::Container) -> Advisor {
        let total = container.item_count();
        let step = total.div_ceil(SAMPLE).max(1);
        let mut builder = sample::Builder::default();
        for item in container.scan().items().step_by(step) {
            builder.doc(&item.doc);
        }
        Advisor { sample: builder.finish(), total: total as u64 }
    }

    /// The items read (at most [`SAMPLE`] of a container's).
    pub fn sampled(&self) -> usize {
        self.sample.n
    }

    /// Ranks candidate keys, best first (`options.total_items` is the sample's own total when
    /// unset); `progress` hears of each candidate measured.
    pub fn rank(&self, options: &AdvisorOptions, progress: Progress<'_>) -> Vec<Candidate> {
        let options = AdvisorOptions { total_items: Some(options.total_items.unwrap_or(self.total)), ..*options };
        rank(&self.sample, &options, progress)
    }

    /// Replays the items' writes at their timestamps (their finest time path) under `key`, with
    /// `ru_per_second` split over `options.partitions` physical partitions laid out as splits
    /// would lay them out, each write charged `charge(bytes)`, and `queries` at their rates;
    /// `None` when the items carry no time.
    pub fn what_if(
        &self,
        key: &KeyChoice,
        options: &AdvisorOptions,
        ru_per_second: f64,
        charge: &dyn Fn(u64) -> f64,
        queries: &[WhatIfQuery],
    ) -> Option<WhatIf> {
        let p = options.partitions.clamp(1, MAX_PARTITIONS);
        whatif::replay(&self.sample, key, (p, ru_per_second), charge, queries)
    }
}

/// Ranks candidate keys for a container's items (an even sample of at most [`SAMPLE`], standing
/// for all of them).
pub fn advise_container(container: &crate::Container, options: &AdvisorOptions) -> Vec<Candidate> {
    Advisor::of_container(container).rank(options, &|_, _| {})
}

/// Ranks candidate partition keys for `items` (JSON objects), best first.
pub fn advise(items: &[Value], options: &AdvisorOptions) -> Vec<Candidate> {
    rank(&Sample::of(items), options, &|_, _| {})
}

/// [`Advisor::what_if`] over `items`, without queries.
pub fn what_if(
    items: &[Value],
    key: &KeyChoice,
    options: &AdvisorOptions,
    ru_per_second: f64,
    charge: &dyn Fn(u64) -> f64,
) -> Option<WhatIf> {
    Advisor::of_items(items).what_if(key, options, ru_per_second, charge, &[])
}

/// [`Advisor::what_if`] over `items`.
pub fn what_if_with_queries(
    items: &[Value],
    key: &KeyChoice,
    options: &AdvisorOptions,
    ru_per_second: f64,
    charge: &dyn Fn(u64) -> f64,
    queries: &[WhatIfQuery],
) -> Option<WhatIf> {
    Advisor::of_items(items).what_if(key, options, ru_per_second, charge, queries)
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

/// The busiest partition's share of the writes when `slot_of` places item `i`: averaged over the
/// hours, and over the seconds that have at least `p` writes (bursts that could reach every
/// partition), weighted by their writes.
fn concentrations(sample: &Sample, p: usize, slot_of: impl Fn(usize) -> usize) -> (Option<f64>, Option<f64>) {
    let mut counts = vec![0u64; p];
    // (the busiest partition's writes, all writes) of a group of items.
    let mut busiest_of = |items: &[u32]| -> (u64, u64) {
        for i in items {
            counts[slot_of(*i as usize)] += 1;
        }
        let mut max = 0;
        for i in items {
            let slot = slot_of(*i as usize);
            max = max.max(counts[slot]);
            counts[slot] = 0;
        }
        (max, items.len() as u64)
    };
    let (busiest, burst) = sample
        .busy_seconds
        .iter()
        .filter(|items| items.len() >= p)
        .map(|items| busiest_of(items))
        .fold((0, 0), |(b, t), (max, n)| (b + max, t + n));
    let per_second = (burst > 0).then(|| busiest as f64 / burst as f64);
    let per_hour = (!sample.hours.is_empty()).then(|| {
        let shares: f64 = sample
            .hours
            .iter()
            .map(|items| {
                let (max, n) = busiest_of(items);
                max as f64 / n.max(1) as f64
            })
            .sum();
        shares / sample.hours.len() as f64
    });
    (per_hour, per_second)
}

/// What every candidate is measured against.
struct Context<'a> {
    sample: &'a Sample,
    options: &'a AdvisorOptions,
    p: usize,
    /// How many items each sampled one stands for.
    scale: f64,
    /// The request units of writing each item.
    charges: Vec<f64>,
    /// The hourly concentration of the writes spread as a hash spreads them (each item on a
    /// partition of its own draw): a key is hot by what it adds to that, not to `1 / p` (40
    /// writes over 10 partitions put 8 on the busiest however even the key).
    even_hour: Option<f64>,
}

/// Measures `choices` on as many threads as there are cores; the candidates in `choices`' order.
fn measure_all(
    choices: Vec<KeyChoice>,
    context: &Context<'_>,
    done: &AtomicUsize,
    progress: Progress<'_>,
    of: usize,
) -> Vec<Candidate> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(choices.len()).max(1);
    let next = AtomicUsize::new(0);
    let mut measured: Vec<(usize, Candidate)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(key) = choices.get(i) else { break };
                        if let Some(c) = measure(key.clone(), context) {
                            out.push((i, c));
                        }
                        progress(done.fetch_add(1, Ordering::Relaxed) + 1, of);
                    }
                    out
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    measured.sort_by_key(|(i, _)| *i);
    measured.into_iter().map(|(_, c)| c).collect()
}

fn rank(sample: &Sample, options: &AdvisorOptions, progress: Progress<'_>) -> Vec<Candidate> {
    let p = options.partitions.clamp(1, MAX_PARTITIONS);
    let n = sample.n;
    if n == 0 {
        return Vec::new();
    }
    let time_paths = &sample.time_paths;
    let cardinality = |path: &String| sample.columns.get(path).map_or(0, |c| c.cardinality());
    // With many paths, the most telling ones: time paths first, then the most distinct values.
    let mut ranked: Vec<&String> = sample.common.iter().collect();
    ranked.sort_by_key(|p| (!time_paths.contains(*p), std::cmp::Reverse(cardinality(p))));
    let mut common: Vec<String> = ranked.iter().take(MAX_PATHS).map(|p| p.to_string()).collect();
    common.sort();
    let mut paired: Vec<String> =
        ranked.iter().filter(|p| p.as_str() != "/id").take(MAX_PAIRED_PATHS).map(|p| p.to_string()).collect();
    paired.sort();
    let (common, paired) = (&common, &paired);
    let mut choices: Vec<KeyChoice> = common.iter().map(|p| KeyChoice::Path(p.clone())).collect();
    // Synthetic pairs: a time path or a low-cardinality path with another path.
    for a in paired {
        for b in paired {
            if a != b && a != "/id" && b != "/id" && (time_paths.contains(b) || cardinality(a) < cardinality(b)) {
                choices.push(KeyChoice::Concat(a.clone(), b.clone()));
            }
        }
    }
    for t in time_paths.iter().filter(|t| paired.contains(t)) {
        for source in paired {
            if source != t && !time_paths.contains(source) && cardinality(source) >= 10 {
                choices.push(KeyChoice::HashSuffix(t.clone(), source.clone(), options.suffix_buckets));
            }
        }
    }
    for t in time_paths.iter().filter(|t| paired.contains(t)) {
        choices.push(KeyChoice::RandomSuffix(t.clone(), options.suffix_buckets));
    }
    for a in paired {
        for b in paired {
            if a != b && !time_paths.contains(a) && cardinality(a) < cardinality(b) {
                choices.push(KeyChoice::Hierarchical(vec![a.clone(), b.clone()]));
            }
        }
    }
    let scale = options.total_items.map_or(1.0, |t| t as f64 / n as f64);
    let charges = sample.bytes.iter().map(|b| (options.write_charge)(*b)).collect();
    let even_hour = concentrations(sample, p, |i| (keys::scramble(i as u64) % p as u64) as usize).0;
    let context = Context { sample, options, p, scale, charges, even_hour };
    let done = AtomicUsize::new(0);
    let of = choices.len();
    let mut out = measure_all(choices, &context, &done, progress, of);
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
        for c in paired {
            if !pair.contains(c) && !time_paths.contains(c) && cardinality(c) > cardinality(&pair[1]) {
                let mut levels = pair.clone();
                levels.push(c.clone());
                deeper.push(KeyChoice::Hierarchical(levels));
            }
        }
    }
    let of = of + deeper.len();
    out.extend(measure_all(deeper, &context, &done, progress, of));
    for c in &mut out {
        if let KeyChoice::Hierarchical(levels) = &c.key {
            let prefix = &levels[..levels.len() - 1];
            if too_big.contains(prefix) && c.penalty.is_finite() {
                // The longer the prefix, the more ways to query (by each of its levels) stay on
                // its partitions: tenant, then tenant and user.
                c.penalty -= 0.5 + 0.05 * (prefix.len() - 1) as f64;
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

fn measure(key: KeyChoice, context: &Context<'_>) -> Option<Candidate> {
    let (sample, options, p, scale) = (context.sample, context.options, context.p, context.scale);
    let time_paths = &sample.time_paths;
    let layout = layout(&key, sample, p)?;
    let (write_concentration, write_concentration_per_second) = concentrations(sample, p, |i| layout.slot(i));
    // The items the store would refuse under the key are in a last logical partition of their own.
    let placed = &layout.key_bytes[..layout.key_bytes.len() - usize::from(layout.refused > 0)];
    let largest = placed.iter().copied().max().unwrap_or(0);
    let largest_bytes = (largest as f64 * scale) as u64;
    let storage = skew::spread(&layout.per_partition.iter().map(|b| *b as f64).collect::<Vec<_>>());
    // The request units of writing the items, per partition.
    let mut ru = vec![0.0; p];
    for (i, charge) in context.charges.iter().enumerate() {
        ru[layout.slot(i)] += charge;
    }
    let writes = skew::spread(&ru);
    let cardinality = placed.len();
    // A key of several paths is harder to write and to query by: of two keys that spread alike,
    // the simpler wins.
    let mut penalty = if key.paths().len() > 1 { 0.02 } else { 0.0 };
    let mut reasons = Vec::new();
    if layout.refused > 0 {
        penalty = f64::INFINITY;
        reasons.push(format!(
            "{} of the {} items read lack {} or hold null there: the store refuses their writes under this key",
            layout.refused,
            sample.n,
            layout.refused_path.as_deref().unwrap_or("a path of the key")
        ));
    }
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
    } else if cardinality < p.saturating_mul(10) {
        penalty += 2.0 * (1.0 - cardinality as f64 / (p as f64 * 10.0));
        reasons.push(format!("only {cardinality} distinct values for {p} partitions: few keys spread unevenly"));
    }
    // Within a few percent is even: the sample's own noise is that large, and a penalty on it
    // would rank keys by chance.
    penalty += 2.0 * (storage.max_over_mean - 1.0 - EVEN_ENOUGH).max(0.0);
    if storage.max_over_mean > 1.5 {
        reasons.push(format!("storage is uneven: the fullest partition holds {:.1}x the mean", storage.max_over_mean));
    }
    let key_paths: Vec<&str> = match &key {
        KeyChoice::Path(a) | KeyChoice::HashSuffix(a, _, _) | KeyChoice::RandomSuffix(a, _) => vec![a],
        other => other.paths(),
    };
    if let Some(c) = write_concentration {
        // Hotter than the hash would spread the same writes: a partition's share more.
        let even = context.even_hour.unwrap_or(1.0 / p as f64);
        penalty += 10.0 * (c - even - EVEN_ENOUGH).max(0.0);
        if c > even + 1.0 / p as f64 {
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
    if cardinality * 100 >= sample.n * 99 && sample.n > 1 {
        penalty += 0.5;
        reasons.push(
            "(almost) every item is its own logical partition: no transactions across items, and queries by \
             anything else fan out"
                .into(),
        );
    }
    if let Some(m) = key_paths.iter().find(|k| sample.measured.contains(**k)) {
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
    use sample::seconds;

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
    fn of_keys_that_spread_alike_the_plain_one_wins() {
        // 500 devices reading every hour: the device, and the device with anything, spread
        // alike (within the sample's noise); the simpler key is the advice.
        let mut items = Vec::new();
        for hour in 0..24 {
            for device in 0..500 {
                items.push(
                    parse_json(&format!(
                        r#"{{"id":"{hour}-{device}","deviceId":"dev-{device:03}","unit":"u{}","at":"2026-11-01T{hour:02}:{:02}:00Z"}}"#,
                        device % 4,
                        device % 60
                    ))
                    .unwrap(),
                );
            }
        }
        let ranked = advise(&items, &AdvisorOptions::default());
        assert_eq!(ranked[0].key, KeyChoice::Path("/deviceId".into()), "{:#?}", &ranked[..3]);
    }

    #[test]
    fn writes_spread_as_evenly_as_a_hash_spreads_them_are_not_hot() {
        // 40 vehicles report at the top of each hour: 40 writes over 10 partitions put about 8
        // on the busiest one however even the key.
        let mut items = Vec::new();
        for day in 1..=3 {
            for hour in 0..24 {
                for v in 0..40 {
                    items.push(
                        parse_json(&format!(
                            r#"{{"id":"{day}-{hour}-{v}","vin":"VIN{v:02}","date":"2026-11-0{day}","at":"2026-11-0{day}T{hour:02}:00:{:02}Z"}}"#,
                            v % 3
                        ))
                        .unwrap(),
                    );
                }
            }
        }
        let ranked = advise(&items, &AdvisorOptions::default());
        let find = |k: &KeyChoice| ranked.iter().find(|c| &c.key == k).unwrap();
        let spread = find(&KeyChoice::Concat("/date".into(), "/vin".into()));
        assert!(spread.write_concentration.is_some_and(|c| c > 0.12), "{spread:?}");
        assert!(!spread.reasons.iter().any(|r| r.contains("hot writes")), "{spread:?}");
        assert!(spread.penalty < 0.1, "{spread:?}");
        // The seconds have 13 or 14 writes: bursts that could reach every partition.
        assert!(spread.write_concentration_per_second.is_some(), "{spread:?}");
        let date = find(&KeyChoice::Path("/date".into()));
        assert!(date.reasons.iter().any(|r| r.contains("hot writes")), "{date:?}");
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
