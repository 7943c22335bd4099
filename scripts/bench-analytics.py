#!/usr/bin/env python3
"""The analytical store beside DuckDB, in one run on the same items (issue 25).

    scripts/bench-analytics.py COSMOQL_BIN DATA.ndjson [REPEAT]

DATA is the shared telemetry (../shared/bench/gen_telemetry.py). For each query of the analytical
set, `COSMOQL_BIN bench --analytics` times standard SQL on the mirror (the items loaded once, the
mirror built once, then a warm-up and REPEAT timed runs: each syncs, plans, runs and converts
the rows to values) and DuckDB times its twin on `read_json_auto`'s table (a warm-up and REPEAT
runs of fetchall). Prints a Markdown table of medians and ratios, then the mirror's build rate
and both processes' peak memory. Needs duckdb: the Parquet check's venv
(`scripts/sdk/python/setup.sh scripts/parquet/requirements.txt` prints its path; run this script
with that venv's python).
"""

import json
import resource
import statistics
import subprocess
import sys
import time

import duckdb

# (name, standard SQL on the mirror `c`, DuckDB's twin on `docs`)
QUERIES = [
    ("Q6 GROUP BY",
     "SELECT metricType, COUNT(*) AS n, AVG(metricValue) AS avgValue FROM c GROUP BY metricType",
     "SELECT metricType, count(*), avg(metricValue) FROM docs GROUP BY metricType"),
    ("two-key GROUP BY, AVG, percentiles",
     "SELECT metricType, location.city AS city, COUNT(*) AS n, AVG(metricValue) AS a, "
     "approx_percentile_cont(metricValue, 0.5) AS p50, approx_percentile_cont(metricValue, 0.95) AS p95 "
     "FROM c GROUP BY metricType, location.city",
     "SELECT metricType, location.city, count(*), avg(metricValue), approx_quantile(metricValue, 0.5), "
     "approx_quantile(metricValue, 0.95) FROM docs GROUP BY ALL"),
    ("time buckets (hour)",
     "SELECT date_trunc('hour', CAST(readingTime AS TIMESTAMP)) AS h, COUNT(*) AS n, AVG(metricValue) AS a "
     "FROM c GROUP BY 1",
     "SELECT date_trunc('hour', readingTime) AS h, count(*), avg(metricValue) FROM docs GROUP BY 1"),
    ("join (items with their device's maximum)",
     "SELECT a.metricType, COUNT(*) AS n FROM c a JOIN (SELECT deviceId, MAX(metricValue) AS m FROM c "
     "GROUP BY deviceId) b ON a.deviceId = b.deviceId AND a.metricValue = b.m GROUP BY a.metricType",
     "SELECT a.metricType, count(*) FROM docs a JOIN (SELECT deviceId, max(metricValue) AS m FROM docs "
     "GROUP BY deviceId) b ON a.deviceId = b.deviceId AND a.metricValue = b.m GROUP BY a.metricType"),
    ("window (a jump over the previous reading)",
     "SELECT COUNT(*) AS n FROM (SELECT metricValue - LAG(metricValue) OVER (PARTITION BY deviceId "
     "ORDER BY readingTime) AS d FROM c) t WHERE d > 50",
     "SELECT count(*) FROM (SELECT metricValue - lag(metricValue) OVER (PARTITION BY deviceId "
     "ORDER BY readingTime) AS d FROM docs) t WHERE d > 50"),
]


def cosmoql(binary, data, sql, repeat):
    out = subprocess.run(
        [binary, "bench", "--analytics", "--data", data, "--partition-key", "/deviceId", "--repeat", str(repeat), sql],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    binary, data = sys.argv[1], sys.argv[2]
    repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 11
    con = duckdb.connect(":memory:")
    t0 = time.perf_counter()
    con.execute(f"CREATE TABLE docs AS SELECT * FROM read_json_auto('{data}')")
    duck_load = time.perf_counter() - t0
    rows = []
    first = None
    for name, ours, theirs in QUERIES:
        line = cosmoql(binary, data, ours, repeat)
        first = first or line
        con.execute(theirs).fetchall()
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            con.execute(theirs).fetchall()
            times.append(time.perf_counter() - t0)
        duck = statistics.median(times)
        rows.append((name, line["medianSeconds"] * 1000, duck * 1000, line["results"]))
    print(f"| query | cosmoql mirror ms | DuckDB ms | ratio | rows |")
    print("|---|---|---|---|---|")
    for name, ours, theirs, n in rows:
        print(f"| {name} | {ours:.1f} | {theirs:.1f} | {ours / theirs:.2f} | {n} |")
    items = first["items"]
    print(f"\nmirror built from {items} items in {first['mirrorSeconds']:.2f} s "
          f"({items / first['mirrorSeconds']:,.0f} items/s); load {first['loadSeconds']:.2f} s; "
          f"DuckDB read_json_auto {duck_load:.2f} s")
    duck_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"memory: the mirror {first['mirrorBytes'] / 2**20:.0f} MiB (cosmoql's peak RSS, with the items "
          f"and their indexes, {first['peakRssBytes'] / 2**20:.0f} MiB); DuckDB's process peak RSS "
          f"{duck_rss / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
