#!/usr/bin/env bash
# Builds every example as a program that depends on cosmoql with no feature, as a user's program
# does: the examples must need nothing but the public surface (no `internals`, `testing` or
# `fault-injection`). Uses the repository's lockfile; offline when the crates are cached.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/bin"
cp "$root"/examples/*.rs "$work/src/bin/"
cp "$root/Cargo.lock" "$work/"
cat > "$work/Cargo.toml" <<TOML
[package]
name = "public-surface-check"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
cosmoql = { path = "$root" }
serde_json = "1"
serde = { version = "1", features = ["derive"] }
futures = "0.3"

[workspace]
TOML
cd "$work"
cargo build -q --offline 2>/dev/null || cargo build -q
echo "public surface: $(ls src/bin | wc -l) examples build with cosmoql and no feature"
# With --run, each example also runs to its end, as a user's program (what CI runs of them).
if [ "${1:-}" = "--run" ]; then
  target="${CARGO_TARGET_DIR:-$work/target}"
  for source in src/bin/*.rs; do
    name=$(basename "$source" .rs)
    echo "-- $name"
    "$target/debug/$name" > /dev/null
  done
fi
