//! The arguments of the REPL's container commands: a partition key for `.create` (paths,
//! hierarchical, synthetic), and `.throughput`'s provisioning and report.

use std::fmt::Write;

use std::sync::Arc;

use cosmoql::{
    ContainerClient, PartitionKeyDefinition, PartitionKeyPath, Provisioned, SyntheticKey, SyntheticKind, SystemClock,
};

/// The key `.create NAME ...` asks for: `/path ...` (none: no key; 2-3: hierarchical), or a
/// synthetic key (`--concat /a,/b [SEP]`, `--random /a N [SEED]`, `--hash /a /b N`).
pub fn key_definition(args: &[&str]) -> Result<PartitionKeyDefinition, String> {
    let wrong = "the key is not one of these forms";
    let path = |p: &str| PartitionKeyPath::parse(p).map_err(|e| e.to_string());
    let number = |t: &str, what: &str| t.parse::<u32>().map_err(|_| format!("{what} must be a number, not {t}"));
    match args {
        ["--concat", paths, more @ ..] => {
            let sep = match more {
                [] => "-".to_string(),
                [s] => s.to_string(),
                _ => return Err(wrong.into()),
            };
            let paths = paths.split(',').map(path).collect::<Result<Vec<_>, _>>()?;
            PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::Concat { paths, separator: sep }))
        }
        ["--random", base, buckets, more @ ..] => {
            let seed = match more {
                [] => 42,
                [s] => s.parse::<u64>().map_err(|_| format!("the seed must be a number, not {s}"))?,
                _ => return Err(wrong.into()),
            };
            PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::RandomSuffix {
                base: path(base)?,
                buckets: number(buckets, "the bucket count")?,
                seed,
            }))
        }
        ["--hash", base, source, buckets] => {
            PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::HashSuffix {
                base: path(base)?,
                source: path(source)?,
                buckets: number(buckets, "the bucket count")?,
            }))
        }
        paths if paths.iter().all(|p| p.starts_with('/')) => PartitionKeyDefinition::from_paths(paths),
        _ => return Err(wrong.to_string()),
    }
    .map_err(|e| e.to_string())
}

/// `.throughput [off | N | autoscale N | burst on|off | redistribute ID=RU... | even]`.
pub fn throughput(client: &ContainerClient, args: &str) -> Result<String, String> {
    let words: Vec<&str> = args.split_whitespace().collect();
    let number = |w: &str| w.parse::<f64>().map_err(|_| format!("`{w}` is not a number of RU/s"));
    let err = |e: cosmoql::Error| e.to_string();
    match words.as_slice() {
        [] => {}
        ["off"] => client.set_throughput(None, Arc::new(SystemClock::default())).map_err(err)?,
        ["autoscale", max] => {
            drop(client.replace_throughput(Provisioned::Autoscale { max: number(max)? }).map_err(err)?)
        }
        ["burst", on @ ("on" | "off")] => client.set_burst_capacity(*on == "on").map_err(err)?,
        ["even"] => drop(client.reset_throughput_distribution().map_err(err)?),
        ["redistribute", targets @ ..] if !targets.is_empty() => {
            let mut list = Vec::new();
            for t in targets {
                let (id, ru) = t.split_once('=').ok_or(format!("`{t}`: write PARTITION=RU, e.g. 0=4000"))?;
                let id = id.parse::<u32>().map_err(|_| format!("`{id}` is not a partition id"))?;
                list.push((id, number(ru)?));
            }
            drop(client.redistribute_throughput(&list).map_err(err)?);
        }
        [ru] => drop(client.replace_throughput(Provisioned::Manual(number(ru)?)).map_err(err)?),
        _ => {
            return Err(
                "usage: .throughput [off | RU | autoscale MAX | burst on|off | redistribute ID=RU... | even]".into()
            )
        }
    }
    let mut out = String::new();
    match client.read_throughput() {
        None => {
            let _ = writeln!(out, "no provisioned throughput: requests are never throttled");
        }
        Some(t) => {
            let _ = writeln!(
                out,
                "{}{}{}; minimum {} RU/s, up to {} RU/s without splits",
                t.provisioned,
                if t.shared { ", shared by the database's containers" } else { "" },
                if t.burst { ", burst capacity on" } else { "" },
                t.minimum,
                t.instant_maximum
            );
            let per: Vec<String> = t.per_partition.iter().map(|(id, ru)| format!("{id}: {ru:.0}")).collect();
            let policy = if t.custom_distribution { "custom" } else { "even" };
            let _ = writeln!(out, "{} physical partitions ({policy}), RU/s each: {}", t.partitions, per.join(", "));
        }
    }
    Ok(out)
}
