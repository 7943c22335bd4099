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

Three more rows: Q6 written in Cosmos SQL, which `cosmoql bench` routes to the analytical store
(the container given an `analyticalStorageTtl`) and then runs on the row engine (`--row-engine`)
for comparison; and a join of two containers (the readings and a `devices` container made from
the same file, one item a device) in a database directory, beside DuckDB's join of two tables.
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
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


Q6_COSMOS = "SELECT c.metricType, COUNT(1) AS n, AVG(c.metricValue) AS avgValue FROM c GROUP BY c.metricType"
Q6_DUCK = QUERIES[0][2]

JOIN_MIRROR = ("SELECT d.model, COUNT(*) AS n, AVG(r.metricValue) AS a FROM readings r JOIN devices d "
               "ON r.deviceId = d.deviceId WHERE r.metricType = 'Temperature' GROUP BY d.model")
JOIN_DUCK = ("SELECT d.model, count(*), avg(r.metricValue) FROM docs r JOIN devices d "
             "ON r.deviceId = d.deviceId WHERE r.metricType = 'Temperature' GROUP BY d.model")


def cosmoql(binary, args, sql, repeat):
    out = subprocess.run([binary, "bench", *args, "--repeat", str(repeat), sql],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def devices(data, out):
    """One item a device of the telemetry: its id, city, a model and the year it was installed."""
    seen = {}
    with open(data) as f:
        for line in f:
            d = json.loads(line)
            if d["deviceId"] not in seen:
                n = int(d["deviceId"].split("-")[1])
                seen[d["deviceId"]] = {"id": d["deviceId"], "deviceId": d["deviceId"], "city": d["location"]["city"],
                                       "model": ["A100", "B200", "C300", "D400"][n % 4], "installed": 2018 + n % 6}
    with open(out, "w") as f:
        for d in seen.values():
            f.write(json.dumps(d) + "\n")


def duck_median(con, sql, repeat):
    con.execute(sql).fetchall()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        con.execute(sql).fetchall()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    binary, data = sys.argv[1], sys.argv[2]
    repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 11
    con = duckdb.connect(":memory:")
    t0 = time.perf_counter()
    con.execute(f"CREATE TABLE docs AS SELECT * FROM read_json_auto('{data}')")
    duck_load = time.perf_counter() - t0
    rows = []
    first = None
    mirror = ["--analytics", "--data", data, "--partition-key", "/deviceId"]
    for name, ours, theirs in QUERIES:
        line = cosmoql(binary, mirror, ours, repeat)
        first = first or line
        rows.append((name, line["medianSeconds"] * 1000, duck_median(con, theirs, repeat) * 1000, line["results"]))
    work = tempfile.mkdtemp(prefix="bench-analytics-")
    # Q6 in Cosmos SQL: routed to the analytical store, then on the row engine.
    props = os.path.join(work, "container.json")
    with open(props, "w") as f:
        json.dump({"id": "c", "partitionKey": {"paths": ["/deviceId"], "kind": "Hash"}, "analyticalStorageTtl": -1}, f)
    duck = duck_median(con, Q6_DUCK, repeat) * 1000
    for name, extra in (("Q6 in Cosmos SQL, routed to the mirror", []), ("Q6 in Cosmos SQL, row engine", ["--row-engine"])):
        line = cosmoql(binary, ["--data", data, "--container", props, *extra], Q6_COSMOS, repeat)
        rows.append((name, line["medianSeconds"] * 1000, duck, line["results"]))
    # Two containers joined.
    dev = os.path.join(work, "devices.ndjson")
    devices(data, dev)
    db = os.path.join(work, "db")
    for into, path in (("readings", data), ("devices", dev)):
        subprocess.run([binary, "import", "--db", db, "--into", into, "--partition-key", "/deviceId", "--fail-fast", path],
                       check=True, capture_output=True)
    for name in ("readings", "devices"):
        subprocess.run([binary, "analyze", "--db", db, "--use", name, "--enable", "SELECT 1"], check=True,
                       capture_output=True)
    line = cosmoql(binary, ["--analytics", "--db", db, "--use", "readings"], JOIN_MIRROR, repeat)
    con.execute(f"CREATE TABLE devices AS SELECT * FROM read_json_auto('{dev}')")
    rows.append(("join of two containers (readings, devices)", line["medianSeconds"] * 1000,
                 duck_median(con, JOIN_DUCK, repeat) * 1000, line["results"]))
    print("| query | cosmoql ms | DuckDB ms | ratio | rows |")
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
