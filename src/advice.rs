//! The partition-key advisor through the embedded API: the storage layer's candidates and
//! measures ([`cosmoql_storage::advisor`]), judged here against a recorded [`Workload`] with the
//! planner's own pruning and the request-charge model.

use cosmoql_executor::cost::{item_charge, Consistency, ItemWork};
use cosmoql_executor::QueryError;
use cosmoql_storage::{Advisor, AdvisorOptions, Candidate, KeyChoice, PartitionKeyDefinition};
use cosmoql_value::Value;

use crate::client::ContainerClient;
use crate::Error;

/// What an application does to a container, per second: queries (Cosmos SQL with literal
/// values), item creates, and writes that change given paths of existing items (patches and
/// replaces).
///
/// As JSON (`cosmoql advise --workload FILE`): an array of
/// `{"query": "SELECT ...", "rate": 100}`, `{"write": "create", "rate": 200}` and
/// `{"write": "patch", "paths": ["/status"], "rate": 5}` (`"replace"` too); a missing rate is 1.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Workload {
    /// Queries with their rates.
    pub queries: Vec<(String, f64)>,
    /// Items created per second.
    pub creates: f64,
    /// Paths existing items have changed, with the writes per second that change them.
    pub changes: Vec<(String, f64)>,
}

impl Workload {
    /// Queries only.
    pub fn of_queries(queries: &[(String, f64)]) -> Self {
        Workload { queries: queries.to_vec(), ..Workload::default() }
    }

    /// Reads the JSON form; the error says which entry is wrong and how.
    pub fn from_json(json: &Value) -> Result<Workload, String> {
        let entries = json.as_array().ok_or("a workload is a JSON array of entries")?;
        let mut workload = Workload::default();
        for (i, entry) in entries.iter().enumerate() {
            let at = format!("entry {}", i + 1);
            let rate = match entry.get("rate") {
                Value::Undefined => 1.0,
                r => r
                    .as_f64()
                    .filter(|r| r.is_finite() && (0.0..=cosmoql_storage::advisor::MAX_RATE).contains(r))
                    .ok_or(format!(
                        "{at}: \"rate\" must be a number of operations per second from 0 to {}",
                        cosmoql_storage::advisor::MAX_RATE
                    ))?,
            };
            match (entry.get("query"), entry.get("write")) {
                (Value::String(sql), Value::Undefined) => workload.queries.push((sql.to_string(), rate)),
                (Value::Undefined, Value::String(kind)) => match kind.as_ref() {
                    "create" | "insert" => workload.creates += rate,
                    "patch" | "replace" | "upsert" => {
                        let paths = entry.get("paths");
                        let paths = paths.as_array().ok_or(format!(
                            "{at}: a \"{kind}\" write lists the \"paths\" it changes, e.g. [\"/status\"]"
                        ))?;
                        for p in paths.iter() {
                            let p = p
                                .as_str()
                                .filter(|p| p.starts_with('/'))
                                .ok_or(format!("{at}: each path is a string starting with /, e.g. \"/status\""))?;
                            workload.changes.push((p.to_string(), rate));
                        }
                    }
                    other => {
                        return Err(format!(
                            "{at}: unknown write \"{other}\" (expected create, patch, replace or upsert)"
                        ))
                    }
                },
                _ => return Err(format!("{at}: expected {{\"query\": \"SELECT ...\"}} or {{\"write\": \"create\"}}")),
            }
        }
        Ok(workload)
    }

    fn is_empty(&self) -> bool {
        self.queries.is_empty() && self.creates == 0.0 && self.changes.is_empty()
    }
}

/// The partition key definition a candidate stands for: a path, the engine's synthetic keys, or a
/// hierarchical key.
fn key_definition(key: &KeyChoice) -> Option<PartitionKeyDefinition> {
    use cosmoql_storage::{PartitionKeyPath, SyntheticKey, SyntheticKind};
    let path = |p: &str| PartitionKeyPath::parse(p).ok();
    match key {
        KeyChoice::Path(p) => PartitionKeyDefinition::hash(p).ok(),
        KeyChoice::Hierarchical(_) => PartitionKeyDefinition::from_paths(&key.paths()).ok(),
        KeyChoice::RandomSuffix(base, buckets) => {
            PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::RandomSuffix {
                base: path(base)?,
                buckets: *buckets,
                seed: 0,
            }))
            .ok()
        }
        KeyChoice::Concat(a, b) => PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::Concat {
            paths: vec![path(a)?, path(b)?],
            separator: "-".into(),
        }))
        .ok(),
        KeyChoice::HashSuffix(base, source, buckets) => {
            PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::HashSuffix {
                base: path(base)?,
                source: path(source)?,
                buckets: *buckets,
            }))
            .ok()
        }
    }
}

/// The charge of creating an item of `bytes` (no index terms counted: the advisor compares keys).
fn create_charge(bytes: u64) -> f64 {
    let work = ItemWork {
        kind: cosmoql_storage::OperationKind::Create,
        bytes: usize::try_from(bytes).unwrap_or(usize::MAX),
        indexed_terms: 0,
    };
    item_charge(&work, Consistency::Session)
}

pub use cosmoql_storage::advisor::{MAX_PARTITIONS, PLAN_PARTITIONS};

/// The partition-key advisor over one container's items, read once (an even sample of at most
/// 100,000, standing for all): ranks candidate keys, judges them against a recorded [`Workload`]
/// with the planner's own pruning, and replays writes and queries under one
/// ([`ContainerClient::key_advisor`]).
#[derive(Debug)]
pub struct KeyAdvisor {
    client: ContainerClient,
    advisor: Advisor,
}

/// Progress of a long step: how many of how many are done (a terminal's progress bar).
pub type Progress<'a> = cosmoql_storage::advisor::Progress<'a>;

impl ContainerClient {
    /// Reads the container's items for the advisor (a sample of at most 100,000).
    pub fn key_advisor(&self) -> KeyAdvisor {
        KeyAdvisor { client: self.clone(), advisor: Advisor::of_container(&self.container) }
    }

    /// Ranks candidate partition keys for the container's items over `partitions` physical
    /// partitions ([`KeyAdvisor::partitions`] when `None`), best first, each with what was
    /// measured and why.
    pub fn advise_partition_key(&self, partitions: Option<usize>) -> Vec<Candidate> {
        self.key_advisor().rank(partitions, &|_, _| {})
    }

    /// [`KeyAdvisor::rank_for`] on a fresh read of the items.
    pub fn advise_partition_key_for(
        &self,
        partitions: Option<usize>,
        workload: &Workload,
    ) -> Result<Vec<(Candidate, f64)>, Error> {
        self.key_advisor().rank_for(partitions, workload, &|_, _| {})
    }

    /// What-if: replays the container's items (a sample of at most 100,000) as writes at their
    /// timestamps under `key`, with `ru_per_second` over `partitions` physical partitions, each
    /// write charged as a create of its size; predicts the 429 rate and each partition's peak
    /// normalized RU. `None` when the items carry no timestamp.
    pub fn what_if(
        &self,
        key: &KeyChoice,
        ru_per_second: f64,
        partitions: usize,
    ) -> Option<cosmoql_storage::advisor::WhatIf> {
        self.key_advisor().what_if(key, ru_per_second, partitions, None).ok().flatten()
    }

    /// [`Self::what_if`] with a recorded workload's queries replayed too (see
    /// [`KeyAdvisor::what_if`]).
    pub fn what_if_workload(
        &self,
        key: &KeyChoice,
        ru_per_second: f64,
        partitions: usize,
        workload: &Workload,
    ) -> Result<Option<cosmoql_storage::advisor::WhatIf>, Error> {
        self.key_advisor().what_if(key, ru_per_second, partitions, Some(workload))
    }
}

/// Parses and binds a workload's queries (no parameters: a workload's queries name their values).
fn bind_queries(workload: &Workload) -> Result<Vec<(cosmoql_planner::BoundQuery, f64)>, Error> {
    let parameters = std::collections::HashMap::new();
    workload
        .queries
        .iter()
        .map(|(sql, rate)| {
            let query = cosmoql_parser::parse(sql).map_err(|e| Error::Query {
                sql: sql.clone(),
                error: QueryError::from(cosmoql_planner::PlanError::syntax(e, sql)),
            })?;
            let context = cosmoql_planner::BindContext { parameters: &parameters, vector_policies: &[], udfs: &[] };
            let query = cosmoql_planner::bind(&query, context)
                .map_err(|e| Error::Query { sql: sql.clone(), error: QueryError::from(e) })?;
            Ok((query, rate.max(0.0)))
        })
        .collect()
}

impl KeyAdvisor {
    /// The container's items' average size, in bytes.
    fn average_item_bytes(&self) -> u64 {
        let (items, bytes) = self
            .client
            .container
            .partitions()
            .iter()
            .fold((0u64, 0u64), |(i, b), part| (i + part.items as u64, b.saturating_add(part.bytes)));
        bytes / items.max(1)
    }

    /// The items read (at most 100,000).
    pub fn sampled(&self) -> usize {
        self.advisor.sampled()
    }

    /// The physical partitions to plan for: `asked`, else the container's own count, at least
    /// [`PLAN_PARTITIONS`] (and at most [`MAX_PARTITIONS`]).
    pub fn partitions(&self, asked: Option<usize>) -> usize {
        asked.unwrap_or_else(|| self.client.container.partition_count().max(PLAN_PARTITIONS)).clamp(1, MAX_PARTITIONS)
    }

    fn options(&self, partitions: Option<usize>) -> AdvisorOptions {
        AdvisorOptions {
            partitions: self.partitions(partitions),
            logical_partition_cap: self.client.container.logical_partition_cap(),
            write_charge: create_charge,
            ..AdvisorOptions::default()
        }
    }

    /// Ranks candidate keys over `partitions` physical partitions ([`Self::partitions`]), best
    /// first; `progress` hears of each candidate measured.
    pub fn rank(&self, partitions: Option<usize>, progress: Progress<'_>) -> Vec<Candidate> {
        self.advisor.rank(&self.options(partitions), progress)
    }

    /// [`Self::rank`] judged against a recorded workload, each candidate with the share of the
    /// workload's queries (by rate) that would read one logical partition (one key, or one
    /// hierarchical prefix), measured with the planner's own pruning:
    /// - queries that would fan out add to the penalty;
    /// - creates land on the partitions as the items do (per hour for time-stamped items): a
    ///   candidate whose busiest partition would need more than a physical partition serves
    ///   (10,000 RU/s) is ruled out, and the load is given as a reason;
    /// - a key whose value the workload changes is penalized: a key cannot change in place.
    pub fn rank_for(
        &self,
        partitions: Option<usize>,
        workload: &Workload,
        progress: Progress<'_>,
    ) -> Result<Vec<(Candidate, f64)>, Error> {
        let bound = bind_queries(workload)?;
        let total: f64 = bound.iter().map(|(_, r)| r).fold(0.0, |a, b| a + b);
        let p = self.partitions(partitions);
        let per_create = create_charge(self.average_item_bytes());
        let mut ranked: Vec<(Candidate, f64)> = self
            .rank(Some(p), progress)
            .into_iter()
            .map(|c| judge(c, &bound, total, p, per_create, workload))
            .collect();
        ranked.sort_by(|a, b| a.0.penalty.total_cmp(&b.0.penalty).then_with(|| a.0.key.cmp(&b.0.key)));
        Ok(ranked)
    }

    /// What-if: replays the items as writes at their timestamps under `key`, with
    /// `ru_per_second` over `partitions` physical partitions, each write charged as a create of
    /// its size; with a workload, its queries too, each at its rate every second of the replay on
    /// the partitions the planner's pruning says it reads under `key` (one key's partition, or
    /// all for a fan-out), each run charged as a query returning one item of the container's
    /// average size (an estimate: the model's fixed costs dominate). Predicts the 429 rates and
    /// each partition's peak normalized RU; `None` when the items carry no timestamp.
    pub fn what_if(
        &self,
        key: &KeyChoice,
        ru_per_second: f64,
        partitions: usize,
        workload: Option<&Workload>,
    ) -> Result<Option<cosmoql_storage::advisor::WhatIf>, Error> {
        let definition = key_definition(key);
        let average = self.average_item_bytes();
        let bound = match workload {
            Some(w) => bind_queries(w)?,
            None => Vec::new(),
        };
        let queries: Vec<cosmoql_storage::advisor::WhatIfQuery> = bound
            .iter()
            .map(|(query, rate)| {
                let keys = definition.as_ref().and_then(|d| match cosmoql_planner::prune(query, None, d).targets {
                    cosmoql_planner::Targets::Keys(keys) => Some(keys),
                    _ => None,
                });
                let reads = keys.as_ref().map_or(partitions.max(1), Vec::len);
                let work = cosmoql_executor::cost::QueryWork {
                    partitions: reads,
                    index_entries: 1,
                    retrieved: 1,
                    retrieved_bytes: average,
                    output: 1,
                    output_bytes: average,
                };
                cosmoql_storage::advisor::WhatIfQuery {
                    keys,
                    rate: *rate,
                    charge: cosmoql_executor::cost::query_charge(&work),
                }
            })
            .collect();
        let options = AdvisorOptions { partitions, ..AdvisorOptions::default() };
        Ok(self.advisor.what_if(key, &options, ru_per_second, &create_charge, &queries))
    }
}

/// A candidate judged against a workload: the share of its queries (by rate) one logical
/// partition answers, and the penalties and reasons of [`KeyAdvisor::rank_for`].
fn judge(
    mut c: Candidate,
    bound: &[(cosmoql_planner::BoundQuery, f64)],
    total: f64,
    p: usize,
    per_create: f64,
    workload: &Workload,
) -> (Candidate, f64) {
    let single = |q: &cosmoql_planner::BoundQuery, definition: &PartitionKeyDefinition| match cosmoql_planner::prune(
        q, None, definition,
    )
    .targets
    {
        cosmoql_planner::Targets::Keys(k) => k.len() == 1,
        cosmoql_planner::Targets::Ranges(r) => r.len() == 1,
        _ => false,
    };
    let share = match key_definition(&c.key) {
        Some(definition) if total > 0.0 => {
            let targeted: f64 =
                bound.iter().filter(|(q, _)| single(q, &definition)).map(|(_, r)| r).fold(0.0, |a, b| a + b);
            targeted / total
        }
        _ => 0.0,
    };
    if !c.penalty.is_finite() || workload.is_empty() {
        return (c, share);
    }
    let mut reasons = Vec::new();
    if total > 0.0 {
        c.penalty += 3.0 * (1.0 - share);
        reasons.push(format!("{:.0}% of the workload's queries read one logical partition", share * 100.0));
    }
    if workload.creates > 0.0 {
        // Writes land where the items do: per second (or hour) for time-stamped items, else as
        // storage spreads.
        let busiest = c
            .write_concentration_per_second
            .or(c.write_concentration)
            .unwrap_or(c.storage.max_over_mean / p as f64)
            .min(1.0);
        let ru = workload.creates * busiest * per_create;
        if ru > cosmoql_storage::throughput::MAX_RU_PER_PARTITION {
            c.penalty = f64::INFINITY;
            reasons.push(format!(
                "at {} creates/s the busiest partition would need {ru:.0} RU/s, more than the 10,000 RU/s a \
                 physical partition serves",
                workload.creates
            ));
        } else {
            reasons.push(format!(
                "at {} creates/s the busiest partition takes {:.0}% of them, {ru:.0} RU/s",
                workload.creates,
                busiest * 100.0
            ));
        }
    }
    let key_paths = c.key.paths().into_iter().map(str::to_string).collect::<Vec<_>>();
    for (path, rate) in &workload.changes {
        if key_paths.iter().any(|k| k == path) && c.penalty.is_finite() {
            c.penalty += 5.0;
            reasons.push(format!(
                "the workload changes {path} ({rate} writes/s): a partition key cannot change in place, each \
                 change is a delete and a create"
            ));
        }
    }
    c.reasons.splice(0..0, reasons);
    (c, share)
}

/// Reads a workload file (see [`Workload`]); errors name the file.
pub fn read_workload(path: &std::path::Path) -> Result<Workload, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json = cosmoql_value::parse_json(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Workload::from_json(&json).map_err(|e| format!("{}: {e}", path.display()))
}

/// The ranking as one JSON object: `{"candidates": [...]}`, each with its measures, penalty
/// (`null` when ruled out), the workload's single-partition share when one was given, and reasons.
pub fn ranking_json(ranked: &[(Candidate, Option<f64>)]) -> Value {
    let num = |v: f64| Value::from((v * 1000.0).round() / 1000.0);
    let candidates = ranked
        .iter()
        .enumerate()
        .map(|(i, (c, share))| {
            let mut fields = vec![
                ("rank".to_string(), Value::from((i + 1) as f64)),
                ("key".to_string(), Value::from(c.key.to_string())),
                (
                    "paths".to_string(),
                    Value::Array(c.key.paths().into_iter().map(Value::from).collect::<Vec<_>>().into()),
                ),
                ("cardinality".to_string(), Value::from(c.cardinality as f64)),
                ("largestLogicalPartitionBytes".to_string(), Value::from(c.largest_bytes as f64)),
                ("storageMaxOverMean".to_string(), num(c.storage.max_over_mean)),
                ("storageCv".to_string(), num(c.storage.cv)),
                ("writeRuMaxOverMean".to_string(), num(c.writes.max_over_mean)),
                ("writeRuCv".to_string(), num(c.writes.cv)),
                ("writeConcentration".to_string(), c.write_concentration.map_or(Value::Null, num)),
                ("writeConcentrationPerSecond".to_string(), c.write_concentration_per_second.map_or(Value::Null, num)),
                ("penalty".to_string(), if c.penalty.is_finite() { num(c.penalty) } else { Value::Null }),
                ("ruledOut".to_string(), Value::from(!c.penalty.is_finite())),
            ];
            if let Some(s) = share {
                fields.push(("singlePartitionQueryShare".to_string(), num(*s)));
            }
            fields.push((
                "reasons".to_string(),
                Value::Array(c.reasons.iter().map(|r| Value::from(r.as_str())).collect::<Vec<_>>().into()),
            ));
            Value::object(fields)
        })
        .collect::<Vec<_>>();
    Value::object([("candidates".to_string(), Value::Array(candidates.into()))])
}
