//! What the REPL reports about a container: `.stats` (memory, partitions, the largest logical
//! partitions and the skew), a partition key in words, and counts in words.

use std::fmt::Write;

use cosmoql::{ContainerClient, PartitionKeyDefinition, SyntheticKind};

use crate::render;
use crate::text;

/// A partition key definition in words: `/deviceId`, `/a, /b (hierarchical)`, `none`, synthetic.
pub fn describe_key(d: &PartitionKeyDefinition) -> String {
    if d.is_none() {
        return "none".into();
    }
    if let Some(s) = d.synthetic_key() {
        let what = match &s.kind {
            SyntheticKind::Concat { paths, separator } => format!(
                "concat({}) with {separator:?}",
                paths.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", ")
            ),
            SyntheticKind::RandomSuffix { base, buckets, .. } => format!("{base} + random suffix 1..{buckets}"),
            SyntheticKind::HashSuffix { base, source, buckets } => format!("{base} + hash({source}) % {buckets} + 1"),
        };
        return format!("/{} (synthetic: {what})", s.property);
    }
    let paths: Vec<String> = d.paths().iter().map(|p| p.to_string()).collect();
    if paths.len() > 1 {
        format!("{} (hierarchical)", paths.join(", "))
    } else {
        paths.join(", ")
    }
}

/// `1 item`, `2 items`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// `.stats`: the container's items and bytes, memory per item, each physical partition as bars,
/// the largest logical partitions (one scan) and how skewed they are.
pub fn stats(container: &ContainerClient) -> String {
    let parts = container.partitions();
    let total_items: usize = parts.iter().map(|p| p.items).sum();
    let total_bytes: u64 = parts.iter().map(|p| p.bytes).sum();
    let max_items = parts.iter().map(|p| p.items).max().unwrap_or(0).max(1);
    let max_bytes = parts.iter().map(|p| p.bytes).max().unwrap_or(0).max(1);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} items, {} in {} physical partitions ({} splits), key {}",
        container.id(),
        total_items,
        render::bytes(total_bytes),
        parts.len(),
        container.split_count(),
        describe_key(container.partition_key_definition())
    );
    let memory = container.memory();
    let index = memory.index;
    let per_item = |bytes: u64| if total_items == 0 { 0 } else { bytes / total_items as u64 };
    let _ = writeln!(
        out,
        "memory: data {} ({} B per item; {} in memory, {} B per item), indexes {} ({} B per item, {} entries, {} keys){}",
        render::bytes(total_bytes),
        per_item(total_bytes),
        render::bytes(memory.data_memory_bytes),
        per_item(memory.data_memory_bytes),
        render::bytes(index.bytes),
        per_item(index.bytes),
        index.entries,
        index.keys,
        match container.index_transformation_progress() {
            100 => String::new(),
            p => format!(", index transformation {p}%"),
        }
    );
    let _ = writeln!(out, "\n  {:<19} {:<32}  bytes", "physical partition", "items");
    for p in &parts {
        let _ = writeln!(
            out,
            "  {:>3} ({:>5} logical) {} {:>7}  {} {:>9}",
            p.id,
            p.logical_partitions,
            render::bar(p.items as f64 / max_items as f64, 24),
            p.items,
            render::bar(p.bytes as f64 / max_bytes as f64, 16),
            render::bytes(p.bytes)
        );
    }
    // Logical partition sizes, as the partitions keep them.
    let largest = container.logical_partition_sizes();
    let _ = writeln!(out, "\nlargest logical partitions ({} in all)", largest.len());
    let top = largest.first().map_or(1, |l| l.items).max(1);
    for l in largest.iter().take(10) {
        let _ = writeln!(
            out,
            "  {:<24} {} {:>7} items {:>9}",
            render::truncate(&text::printable(&l.key), 24),
            render::bar(l.items as f64 / top as f64, 24),
            l.items,
            render::bytes(l.bytes)
        );
    }
    if total_items > 0 && parts.len() > 1 {
        let hottest = parts.iter().max_by_key(|p| p.items).expect("at least one partition");
        let share = hottest.items as f64 / total_items as f64;
        let even = 1.0 / parts.len() as f64;
        let _ = writeln!(
            out,
            "\nskew: partition {} holds {:.0}% of the items (an even spread would be {:.0}%, {:.1}x)",
            hottest.id,
            share * 100.0,
            even * 100.0,
            share / even
        );
    }
    if let Some(l) = largest.first() {
        if total_items > 0 {
            let _ = writeln!(
                out,
                "skew: logical partition {} holds {:.1}% of the items (the mean is {:.1} items)",
                text::printable(&l.key),
                l.items as f64 * 100.0 / total_items as f64,
                total_items as f64 / largest.len().max(1) as f64
            );
        }
    }
    out
}
