#!/usr/bin/env bash
# The Parquet export read back by DuckDB and pyarrow (in a venv this makes or reuses, as the SDK
# suites' setup.sh does): generated telemetry in 3 physical partitions, exported by
# `cosmoql export-parquet`, compared with `cosmoql analyze` on the live mirror.
#
#   scripts/parquet/check.sh [COSMOQL_BIN]    (default: ${CARGO_TARGET_DIR:-target}/debug/cosmoql)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=${1:-${CARGO_TARGET_DIR:-$repo/target}/debug/cosmoql}
venv=$("$repo/scripts/sdk/python/setup.sh" "$here/requirements.txt")
work=$(mktemp -d "${TMPDIR:-/tmp}/cosmoql-parquet.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 "$repo/benches/data/gen_telemetry.py" --n 5000 --seed 7 > "$work/items.ndjson"
load=(--data "$work/items.ndjson" --partition-key /deviceId --partitions 3)
"$bin" export-parquet "${load[@]}" --out "$work/out" > /dev/null
expected=$("$bin" analyze "${load[@]}" \
  "SELECT COUNT(*) AS n, SUM(metricValue) AS s, COUNT(DISTINCT deviceId) AS d FROM c")
"$venv/bin/python" "$here/check.py" "$work/out/db/c" "$expected"
