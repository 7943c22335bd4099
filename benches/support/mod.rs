//! Shared by the benchmarks: the telemetry workload, generated once per item count.

use std::path::PathBuf;
use std::process::Command;

/// Items to load (`COSMOQL_BENCH_ITEMS`, default 1,000,000).
pub fn items() -> usize {
    items_or(1_000_000)
}

/// Items to load (`COSMOQL_BENCH_ITEMS`, default `default`).
pub fn items_or(default: usize) -> usize {
    std::env::var("COSMOQL_BENCH_ITEMS").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The NDJSON telemetry file of `n` items (`benches/data/gen_telemetry.py`, seed 42), cached
/// under the target directory.
pub fn data(n: usize) -> Vec<u8> {
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join("bench-data");
    std::fs::create_dir_all(&dir).expect("bench data dir");
    let path = dir.join(format!("telemetry-{n}.ndjson"));
    if !path.exists() {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/data/gen_telemetry.py");
        eprintln!("generating {} ...", path.display());
        let out = Command::new("python3")
            .arg(&script)
            .args(["--n", &n.to_string(), "--seed", "42"])
            .output()
            .expect("python3 runs the telemetry generator");
        assert!(out.status.success(), "generator failed: {}", String::from_utf8_lossy(&out.stderr));
        std::fs::write(&path, &out.stdout).expect("write bench data");
    }
    std::fs::read(&path).expect("read bench data")
}
