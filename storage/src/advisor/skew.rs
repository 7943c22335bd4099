//! The skew report: how evenly a container's storage and request units spread over its physical
//! partitions, which logical partitions are the heaviest, and what looks wrong.
//!
//! Storage figures are exact (every logical partition is counted); request units come from the
//! container's provisioned throughput ([`crate::throughput`]), which accounts every charge to its
//! partition and, for key-scoped requests, to its logical partition key (the service samples).

use std::fmt;

use cosmoql_value::{Map, Value};

use crate::container::Container;

/// One physical partition's share.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionSkew {
    pub id: u32,
    /// The EPK range `[min, max)`, in hex.
    pub min: String,
    pub max: String,
    pub items: u64,
    pub bytes: u64,
    pub logical_partitions: u64,
    pub ru_consumed: f64,
    /// The most RU consumed in one second against the partition's budget, in percent (the
    /// service's normalized RU consumption, capped at 100).
    pub peak_normalized_ru: f64,
    pub requests: u64,
    pub throttled: u64,
    /// The partition's budget in RU/s (0 without provisioned throughput).
    pub budget: f64,
}

impl PartitionSkew {
    /// Refused requests per request.
    pub fn throttle_rate(&self) -> f64 {
        if self.requests + self.throttled == 0 {
            0.0
        } else {
            self.throttled as f64 / (self.requests + self.throttled) as f64
        }
    }
}

/// A logical partition by size.
#[derive(Debug, Clone, PartialEq)]
pub struct KeySize {
    pub key: String,
    pub partition: u32,
    pub items: u64,
    pub bytes: u64,
}

/// Spread measures over the physical partitions.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spread {
    /// The largest over the mean (1: even).
    pub max_over_mean: f64,
    /// Coefficient of variation (0: even).
    pub cv: f64,
}

/// The report.
#[derive(Debug, Clone, PartialEq)]
pub struct SkewReport {
    pub partitions: Vec<PartitionSkew>,
    /// Each partition's budget in RU/s under an even split, with provisioned throughput.
    pub budget: Option<f64>,
    /// The throughput in force, described ("4000 RU/s (manual)", "shared with the database",
    /// "burst capacity on", "redistributed").
    pub throughput: Option<String>,
    pub top_keys_by_size: Vec<KeySize>,
    pub top_keys_by_ru: Vec<crate::throughput::KeyUsage>,
    pub items: Spread,
    pub bytes: Spread,
    pub ru: Spread,
    /// The 10 largest logical partitions' share of the bytes (0 to 1).
    pub top10_key_share: f64,
    /// What looks wrong, in words.
    pub flags: Vec<String>,
}

/// Max over mean and coefficient of variation of `values` (all zero when they are).
pub(crate) fn spread(values: &[f64]) -> Spread {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n.max(1.0);
    if values.is_empty() || mean <= 0.0 {
        return Spread::default();
    }
    let max = values.iter().copied().fold(0.0, f64::max);
    let variance = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    Spread { max_over_mean: max / mean, cv: variance.sqrt() / mean }
}

/// The first 16 hex digits of an EPK bound as a number (the EPK space is 128 bits; its top 64
/// are enough to compare range widths). The maximum EPK, `FF`, stands for `end`: the end of the
/// space the hashes occupy.
fn epk_top(hex: &str, end: u128) -> u128 {
    if hex.eq_ignore_ascii_case("FF") {
        return end;
    }
    let top: String = hex.chars().chain(std::iter::repeat('0')).take(16).collect();
    u64::from_str_radix(&top, 16).map_or(0, u128::from)
}

impl SkewReport {
    /// The report of `container` now, with the `top` heaviest logical partitions.
    pub fn of(container: &Container, top: usize) -> SkewReport {
        let throttle = container.throughput();
        let usage = throttle.as_ref().map(|t| t.usage()).unwrap_or_default();
        let budget = throttle.as_ref().map(|t| t.partition_budget(container.partition_count()));
        let partitions: Vec<PartitionSkew> = container
            .partitions()
            .into_iter()
            .map(|p| {
                // The bucket serving the partition: itself, or the shared database's partition.
                let (bucket, b) = match &throttle {
                    Some(t) => {
                        let (buckets, n) = container.throughput_buckets(t, &[p.id]);
                        let bucket = buckets.first().copied().unwrap_or(p.id);
                        (bucket, t.budget_of(bucket, n))
                    }
                    None => (p.id, 0.0),
                };
                let u = usage.iter().find(|(id, _)| *id == bucket).map(|(_, u)| *u).unwrap_or_default();
                let peak = if b > 0.0 { (u.peak_second_ru / b * 100.0).min(100.0) } else { 0.0 };
                PartitionSkew {
                    id: p.id,
                    min: p.min.to_hex(),
                    max: p.max.to_hex(),
                    items: p.items as u64,
                    bytes: p.bytes,
                    logical_partitions: p.logical_partitions as u64,
                    ru_consumed: u.consumed,
                    peak_normalized_ru: peak,
                    requests: u.admitted,
                    throttled: u.throttled,
                    budget: b,
                }
            })
            .collect();
        let mut sizes: Vec<KeySize> = container
            .logical_partition_sizes()
            .into_iter()
            .map(|(partition, key, items, bytes)| KeySize { key: key.to_string(), partition, items, bytes })
            .collect();
        sizes.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.key.cmp(&b.key)));
        let total_bytes: u64 = sizes.iter().map(|k| k.bytes).sum();
        let top10: u64 = sizes.iter().take(10).map(|k| k.bytes).sum();
        let column = |f: fn(&PartitionSkew) -> f64| partitions.iter().map(f).collect::<Vec<f64>>();
        let mut report = SkewReport {
            items: spread(&column(|p| p.items as f64)),
            bytes: spread(&column(|p| p.bytes as f64)),
            ru: spread(&column(|p| p.ru_consumed)),
            top10_key_share: if total_bytes == 0 { 0.0 } else { top10 as f64 / total_bytes as f64 },
            top_keys_by_ru: throttle
                .as_ref()
                .map(|t| t.key_usage().into_iter().take(top).collect())
                .unwrap_or_default(),
            top_keys_by_size: sizes.into_iter().take(top).collect(),
            partitions,
            budget,
            throughput: throttle.as_ref().map(|t| {
                let mut text = t.provisioning().to_string();
                if container.throughput_is_shared() {
                    text.push_str(&format!(", shared with the database over {} partitions", t.shared_partitions()));
                }
                if !t.distribution().is_empty() {
                    text.push_str(", redistributed across partitions");
                }
                if t.burst() {
                    text.push_str(", burst capacity on");
                }
                text
            }),
            flags: Vec::new(),
        };
        report.flags = report.flags(container.logical_partition_cap());
        report
    }

    fn flags(&self, cap: u64) -> Vec<String> {
        let mut flags = Vec::new();
        if self.budget.is_some() && self.partitions.len() > 1 {
            let mut peaks: Vec<f64> = self.partitions.iter().map(|p| p.peak_normalized_ru).collect();
            peaks.sort_by(f64::total_cmp);
            let median = peaks[peaks.len() / 2 - usize::from(peaks.len().is_multiple_of(2))];
            for p in self.partitions.iter().filter(|p| p.peak_normalized_ru >= 100.0) {
                if median <= 30.0 {
                    flags.push(format!(
                        "hot partition {}: it reached 100% of its RU/s while the median partition peaked at {:.0}%",
                        p.id, median
                    ));
                }
            }
        }
        for p in self.partitions.iter().filter(|p| p.throttle_rate() > 0.05) {
            flags.push(format!(
                "partition {} throttled {:.1}% of its requests (429): more than 5%",
                p.id,
                p.throttle_rate() * 100.0
            ));
        }
        for k in self.top_keys_by_size.iter().filter(|k| k.bytes as f64 >= 0.8 * cap as f64) {
            flags.push(format!(
                "logical partition {} holds {} bytes, {:.0}% of the {} byte cap",
                k.key,
                k.bytes,
                k.bytes as f64 / cap as f64 * 100.0,
                cap
            ));
        }
        // Hash version 2 (and hierarchical keys) hash into [00, 40...): the top two bits are 0.
        let v2 = self.partitions.iter().all(|p| epk_top(&p.min, 0) < 1u128 << 62);
        let end = if v2 { 1u128 << 62 } else { 1u128 << 64 };
        let widths: Vec<u128> =
            self.partitions.iter().map(|p| epk_top(&p.max, end).saturating_sub(epk_top(&p.min, end))).collect();
        if let (Some(min), Some(max)) = (widths.iter().min(), widths.iter().max()) {
            if *min > 0 && *max >= 4 * *min {
                flags.push(format!(
                    "uneven key space: the widest partition's EPK range is {:.0} times the narrowest (splits \
                     followed where items accumulated)",
                    *max as f64 / *min as f64
                ));
            }
        }
        flags
    }

    /// The report as JSON.
    pub fn to_json(&self) -> Value {
        let num = |v: f64| Value::from((v * 100.0).round() / 100.0);
        let spread = |s: &Spread| {
            Value::object([("maxOverMean".to_string(), num(s.max_over_mean)), ("cv".to_string(), num(s.cv))])
        };
        let partitions = self
            .partitions
            .iter()
            .map(|p| {
                let mut m = Map::default();
                m.insert("id".into(), Value::from(p.id as f64));
                m.insert("minEpk".into(), Value::from(p.min.as_str()));
                m.insert("maxEpk".into(), Value::from(p.max.as_str()));
                m.insert("items".into(), Value::from(p.items as f64));
                m.insert("bytes".into(), Value::from(p.bytes as f64));
                m.insert("logicalPartitions".into(), Value::from(p.logical_partitions as f64));
                m.insert("ruConsumed".into(), num(p.ru_consumed));
                m.insert("peakNormalizedRuPercent".into(), num(p.peak_normalized_ru));
                m.insert("requests".into(), Value::from(p.requests as f64));
                m.insert("throttled".into(), Value::from(p.throttled as f64));
                m.insert("throttleRate".into(), num(p.throttle_rate()));
                m.insert("budgetRuPerSecond".into(), num(p.budget));
                Value::Object(m.into())
            })
            .collect::<Vec<_>>();
        let by_size = self
            .top_keys_by_size
            .iter()
            .map(|k| {
                Value::object([
                    ("key".to_string(), Value::from(k.key.as_str())),
                    ("partition".to_string(), Value::from(k.partition as f64)),
                    ("items".to_string(), Value::from(k.items as f64)),
                    ("bytes".to_string(), Value::from(k.bytes as f64)),
                ])
            })
            .collect::<Vec<_>>();
        let by_ru = self
            .top_keys_by_ru
            .iter()
            .map(|k| {
                Value::object([
                    ("key".to_string(), Value::from(k.key.as_str())),
                    ("ru".to_string(), num(k.total())),
                    ("read".to_string(), num(k.read)),
                    ("write".to_string(), num(k.write)),
                    ("query".to_string(), num(k.query)),
                    ("batch".to_string(), num(k.batch)),
                ])
            })
            .collect::<Vec<_>>();
        Value::object([
            ("partitions".to_string(), Value::from(partitions)),
            ("partitionBudgetRuPerSecond".to_string(), self.budget.map_or(Value::Null, num)),
            ("throughput".to_string(), self.throughput.as_deref().map_or(Value::Null, Value::from)),
            ("topKeysBySize".to_string(), Value::from(by_size)),
            ("topKeysByRu".to_string(), Value::from(by_ru)),
            ("items".to_string(), spread(&self.items)),
            ("bytes".to_string(), spread(&self.bytes)),
            ("ru".to_string(), spread(&self.ru)),
            ("top10KeyShare".to_string(), num(self.top10_key_share)),
            ("flags".to_string(), Value::from(self.flags.iter().map(|f| Value::from(f.as_str())).collect::<Vec<_>>())),
        ])
    }
}

impl fmt::Display for SkewReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:>4}  {:>9}  {:>11}  {:>7}  {:>11}  {:>6}  {:>9}  {:>6}",
            "part", "items", "bytes", "logical", "RU", "peak%", "throttled", "429%"
        )?;
        for p in &self.partitions {
            writeln!(
                f,
                "{:>4}  {:>9}  {:>11}  {:>7}  {:>11.2}  {:>6.0}  {:>9}  {:>6.1}",
                p.id,
                p.items,
                p.bytes,
                p.logical_partitions,
                p.ru_consumed,
                p.peak_normalized_ru,
                p.throttled,
                p.throttle_rate() * 100.0
            )?;
        }
        writeln!(
            f,
            "spread (max/mean, cv): items {:.2}, {:.2}; bytes {:.2}, {:.2}; RU {:.2}, {:.2}; top 10 keys hold {:.0}% of the bytes",
            self.items.max_over_mean,
            self.items.cv,
            self.bytes.max_over_mean,
            self.bytes.cv,
            self.ru.max_over_mean,
            self.ru.cv,
            self.top10_key_share * 100.0
        )?;
        match (&self.throughput, self.budget) {
            (Some(t), Some(b)) => writeln!(f, "throughput: {t}; each partition's budget: {b:.2} RU/s")?,
            _ => writeln!(f, "no provisioned throughput: request units are not tracked")?,
        }
        if !self.top_keys_by_ru.is_empty() {
            let keys: Vec<String> = self.top_keys_by_ru.iter().map(ToString::to_string).collect();
            writeln!(f, "top keys by RU: {}", keys.join(", "))?;
        }
        let keys: Vec<String> =
            self.top_keys_by_size.iter().map(|k| format!("{} {} items {} B", k.key, k.items, k.bytes)).collect();
        writeln!(f, "top keys by size: {}", keys.join(", "))?;
        if self.flags.is_empty() {
            writeln!(f, "no flags")
        } else {
            self.flags.iter().try_for_each(|flag| writeln!(f, "flag: {flag}"))
        }
    }
}
