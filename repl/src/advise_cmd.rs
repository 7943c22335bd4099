//! `cosmoql advise` and the REPL's `.advise`: candidate partition keys for a container's items,
//! ranked with the reasons, judged against a recorded workload, and replayed under provisioned
//! throughput (`--what-if`). Long runs show their progress on a terminal.

use std::path::PathBuf;
use std::sync::Arc;

use cosmoql::value::Value;
use cosmoql::{Candidate, ContainerClient, KeyAdvisor};

use crate::query_cmd::{load, DataArgs};

/// Options of `cosmoql advise`.
#[derive(Debug, clap::Args)]
pub struct AdviseArgs {
    #[command(flatten)]
    data: DataArgs,
    /// Physical partitions to plan for (default: as many as the container has, at least 10: over
    /// one partition every key spreads perfectly).
    #[arg(long = "for-partitions", value_name = "P", allow_negative_numbers = true)]
    for_partitions: Option<i64>,
    /// Candidates to show.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    top: u64,
    /// A recorded workload: a JSON array of `{"query": "SELECT ...", "rate": 100}` (per
    /// second), `{"write": "create", "rate": 200}` and `{"write": "patch", "paths": ["/status"],
    /// "rate": 5}`; each candidate is also judged by the share of the queries it keeps on one
    /// logical partition, the load the creates put on its busiest partition, and whether the
    /// writes change its value.
    #[arg(long, value_name = "FILE")]
    workload: Option<PathBuf>,
    /// Print the ranking (and the what-if) as one JSON object.
    #[arg(long)]
    json: bool,
    /// Also replay the items' writes at their timestamps under each shown candidate with this
    /// provisioned throughput (RU/s), and print the predicted 429 rate and peak partition load.
    #[arg(long = "what-if", value_name = "RU_PER_SECOND", allow_negative_numbers = true)]
    what_if: Option<f64>,
}

/// A progress bar for `len` steps on standard error when it is a terminal (nothing otherwise).
fn bar(len: usize, what: &str) -> indicatif::ProgressBar {
    crate::progress::steps_bar(len as u64, what)
}

/// A workload's error, naming the file (a query's error shows the query and the caret).
pub fn workload_error(path: &std::path::Path, e: &cosmoql::Error) -> String {
    match e {
        cosmoql::Error::Query { sql, .. } => format!("{}: the query `{sql}`:\n{e}", path.display()),
        e => format!("{}: {e}", path.display()),
    }
}

/// The ranking, best first, each with the share of the workload's queries it keeps on one
/// logical partition when there is a workload with queries.
pub type Ranked = Vec<(Candidate, Option<f64>)>;

/// Ranks the candidates of `advisor` (a workload judges them too), with a progress bar.
pub fn rank(
    advisor: &KeyAdvisor,
    partitions: usize,
    workload: Option<&cosmoql::Workload>,
) -> Result<Ranked, cosmoql::Error> {
    // Drawn once the number of candidates is known; each call is one more measured (the
    // threads report out of order).
    let progress = std::sync::OnceLock::new();
    let tick = |_done: usize, of: usize| {
        let bar = progress.get_or_init(|| bar(of, "measuring candidate keys"));
        bar.set_length(of as u64);
        bar.inc(1);
    };
    let ranked = match workload {
        None => advisor.rank(Some(partitions), &tick).into_iter().map(|c| (c, None)).collect(),
        Some(w) => advisor
            .rank_for(Some(partitions), w, &tick)?
            .into_iter()
            .map(|(c, share)| (c, (!w.queries.is_empty()).then_some(share)))
            .collect(),
    };
    if let Some(bar) = progress.get() {
        bar.finish_and_clear();
    }
    Ok(ranked)
}

/// The line that says what the ranking plans for.
pub fn header(client: &ContainerClient, advisor: &KeyAdvisor, partitions: usize) -> String {
    let has = client.partition_count();
    let total = client.item_count();
    let read = if advisor.sampled() < total {
        format!("a sample of {} of its {total} items", advisor.sampled())
    } else {
        format!("its {total} items")
    };
    format!(
        "candidate keys for {read} over {} (it has {has}; --for-partitions P plans for another count), best first:",
        crate::reports::plural(partitions as u64, "physical partition", "physical partitions")
    )
}

/// `cosmoql advise`: candidate partition keys for the loaded items, ranked, with reasons.
pub fn run(args: &AdviseArgs) -> Result<(), String> {
    let for_partitions = match args.for_partitions {
        None => None,
        Some(p) => match usize::try_from(p) {
            Ok(p) if (1..=cosmoql::MAX_PARTITIONS).contains(&p) => Some(p),
            _ => return Err(format!("--for-partitions must be from 1 to {}, not {p}", cosmoql::MAX_PARTITIONS)),
        },
    };
    if let Some(ru) = args.what_if.filter(|ru| !(ru.is_finite() && *ru > 0.0)) {
        return Err(format!(
            "--what-if takes the provisioned throughput in RU/s, a number more than 0, not {}",
            cosmoql::value::format_number(ru)
        ));
    }
    let workload = args.workload.as_ref().map(|p| cosmoql::read_workload(p)).transpose()?;
    let loaded = load(&args.data)?;
    let reading = crate::progress::spinner("reading the items");
    let advisor = loaded.client.key_advisor();
    reading.finish_and_clear();
    let partitions = advisor.partitions(for_partitions);
    let ranked = rank(&advisor, partitions, workload.as_ref()).map_err(|e| match &args.workload {
        Some(path) => workload_error(path, &e),
        None => e.to_string(),
    })?;
    let top = usize::try_from(args.top).unwrap_or(usize::MAX);
    let shown = &ranked[..ranked.len().min(top)];
    let mut what_ifs = Vec::new();
    if let Some(ru) = args.what_if {
        // One replay per shown key, on as many threads as there are cores.
        let progress = bar(shown.len(), "replaying writes under each key");
        let next = std::sync::atomic::AtomicUsize::new(0);
        let threads = std::thread::available_parallelism().map_or(1, usize::from).min(shown.len()).max(1);
        let mut replayed: Vec<(usize, Result<_, cosmoql::Error>)> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut out = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some((c, _)) = shown.get(i) else { break };
                            let w = advisor.what_if(&c.key, ru, partitions, workload.as_ref());
                            out.push((i, w));
                            progress.inc(1);
                        }
                        out
                    })
                })
                .collect();
            workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        });
        progress.finish_and_clear();
        replayed.sort_by_key(|(i, _)| *i);
        for (i, w) in replayed {
            let w = w.map_err(|e| match &args.workload {
                Some(path) => workload_error(path, &e),
                None => e.to_string(),
            })?;
            what_ifs.push((&shown[i].0, w));
        }
    }
    if args.json {
        let mut json = cosmoql::ranking_json(shown);
        if let (Some(ru), Value::Object(map)) = (args.what_if, &mut json) {
            let list = what_ifs
                .iter()
                .map(|(c, w)| {
                    let mut fields = vec![("key".to_string(), Value::from(c.key.to_string()))];
                    if let Some(w) = w {
                        fields.push(("writes".to_string(), Value::from(w.writes as f64)));
                        fields.push(("throttled".to_string(), Value::from(w.throttled as f64)));
                        fields.push(("queries".to_string(), Value::from(w.queries as f64)));
                        fields.push(("queriesThrottled".to_string(), Value::from(w.queries_throttled as f64)));
                        fields.push(("throttleRate".to_string(), Value::from((w.throttle_rate() * 1e4).round() / 1e4)));
                        let peak = w.peak_normalized.iter().map(|p| Value::from(p.round())).collect::<Vec<_>>();
                        fields.push(("peakNormalizedRuPercent".to_string(), Value::Array(peak.into())));
                    }
                    Value::object(fields)
                })
                .collect::<Vec<_>>();
            let what_if = Value::object([
                ("ruPerSecond".to_string(), Value::from(ru)),
                ("partitions".to_string(), Value::from(partitions as f64)),
                ("candidates".to_string(), Value::Array(list.into())),
            ]);
            Arc::make_mut(map).insert("whatIf".into(), what_if);
        }
        outln!("{}", cosmoql::value::to_json_string(&json).unwrap_or_default());
        return Ok(());
    }
    outln!("{}", header(&loaded.client, &advisor, partitions));
    let candidates: Vec<Candidate> = shown.iter().map(|(c, _)| c.clone()).collect();
    outln!("{}", cosmoql::ranking_table(&candidates, top).trim_end());
    if let Some(ru) = args.what_if {
        let replayed = if workload.is_some() {
            "the items' writes replayed at their timestamps, the workload's queries at their rates"
        } else {
            "the items' writes replayed at their timestamps"
        };
        outln!(
            "what-if at {} RU/s over {} ({replayed}):",
            cosmoql::value::format_number(ru),
            crate::reports::plural(partitions as u64, "partition", "partitions")
        );
        for (c, w) in &what_ifs {
            match w {
                Some(w) => outln!(
                    "  {}: {:.1}% of {} writes throttled{}, busiest partition at {:.0}% of its RU/s",
                    c.key,
                    w.throttle_rate() * 100.0,
                    w.writes,
                    if w.queries > 0 {
                        format!(
                            ", {:.1}% of {} queries",
                            w.queries_throttled as f64 / w.queries as f64 * 100.0,
                            w.queries
                        )
                    } else {
                        String::new()
                    },
                    w.peak_normalized.iter().copied().fold(0.0, f64::max)
                ),
                None => outln!("  {}: the items carry no timestamp to replay", c.key),
            }
        }
        if let Some(far) = what_ifs.iter().filter_map(|(_, w)| w.as_ref()).map(|w| w.outliers).max().filter(|n| *n > 0)
        {
            outln!(
                "  ({} with a time far from all the others left out: it would stretch the replay over the years between)",
                crate::reports::plural(far, "write", "writes")
            );
        }
    }
    Ok(())
}
