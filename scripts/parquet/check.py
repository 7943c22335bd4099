#!/usr/bin/env python3
"""Reads `cosmoql export-parquet`'s files with DuckDB and with pyarrow, and compares what they
hold with what `cosmoql analyze` answers on the live mirror (given as JSON).

    check.py DIR EXPECTED_JSON

DIR is <out>/<database>/<container>; EXPECTED_JSON is the array `cosmoql analyze` printed for
"SELECT COUNT(*) AS n, SUM(metricValue) AS s, COUNT(DISTINCT deviceId) AS d FROM c". Exits 0 when
both readers agree with it, the hive column names the ranges and the metadata holds the schema mode.
"""

import json
import math
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq


def close(a, b):
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)


def main():
    folder, expected = Path(sys.argv[1]), json.loads(sys.argv[2])[0]
    failures = []
    files = sorted(folder.glob("pkrange=*/part-0.parquet"))
    if not files:
        failures.append(f"no files under {folder}")

    glob = str(folder / "*" / "*.parquet")
    n, s, d, ranges = duckdb.sql(
        f"SELECT COUNT(*), SUM(metricValue), COUNT(DISTINCT deviceId), COUNT(DISTINCT pkrange) "
        f"FROM read_parquet('{glob}', hive_partitioning = true)"
    ).fetchall()[0]
    if n != expected["n"] or not close(s, expected["s"]) or d != expected["d"]:
        failures.append(f"duckdb read {n} rows, sum {s}, {d} devices; the mirror {expected}")
    if ranges != len(files):
        failures.append(f"duckdb saw {ranges} ranges in the pkrange column, {len(files)} files")
    (mode,) = duckdb.sql(
        f"SELECT decode(value) FROM parquet_kv_metadata('{files[0]}') WHERE decode(key) = 'cosmoql.schema_mode'"
    ).fetchall()[0]
    if mode != "well-defined":
        failures.append(f"duckdb read the schema mode {mode!r}")

    table = pq.read_table(folder, partitioning="hive")
    values = table.column("metricValue").to_pylist()
    total = sum(v for v in values if v is not None)
    devices = len(set(table.column("deviceId").to_pylist()))
    if table.num_rows != expected["n"] or not close(total, expected["s"]) or devices != expected["d"]:
        failures.append(f"pyarrow read {table.num_rows} rows, sum {total}, {devices} devices; the mirror {expected}")
    metadata = pq.read_metadata(files[0]).metadata or {}
    if metadata.get(b"cosmoql.schema_mode") != b"well-defined":
        failures.append(f"pyarrow read the metadata {metadata}")
    location = table.schema.field("location").type
    if str(location) != "struct<city: string, zip: string>":
        failures.append(f"pyarrow read location as {location}")

    for f in failures:
        print(f"FAIL  {f}")
    print(f"parquet read-back: duckdb {duckdb.__version__} and pyarrow, {len(files)} files, "
          f"{expected['n']} rows: {'ok' if not failures else 'FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
