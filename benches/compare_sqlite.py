#!/usr/bin/env python3
"""cosmoql next to SQLite's JSON functions on the shared telemetry workload (Q1-Q9 of
../shared/bench/queries.md), measured in the same run on the same data.

Usage: python3 benches/compare_sqlite.py [--n 1000000] [--cosmoql target/release/cosmoql] [--out FILE]

cosmoql runs each query with `cosmoql bench` (one warm-up, then --repeat runs; median), single
threaded (`--max-dop 1`: one partition's producer at a time); SQLite runs in-process on an in-memory table docs(pk, id, body JSON) with only its primary
key, as ../shared/bench/bench_sqlite.py's "noidx" variant. Both return every row to the caller.
Q1-Q3 give cosmoql the partition key in the request options (`--pk`), the SDK's usual form for a
single-partition query; SQLite uses its (pk, id) primary key for them.
"""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def data_file(n):
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    d = os.path.join(target, "bench-data")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "telemetry-%d.ndjson" % n)
    if not os.path.exists(path):
        with open(path, "wb") as f:
            subprocess.run([sys.executable, os.path.join(HERE, "data", "gen_telemetry.py"), "--n", str(n), "--seed", "42"],
                           stdout=f, check=True)
    return path


def params(path):
    with open(path, "rb") as f:
        lines = f.read().count(b"\n")
    with open(path) as f:
        for i, line in enumerate(f):
            if i == lines // 2:
                d = json.loads(line)
                break
    return {"n": lines, "pk": d["deviceId"], "id": d["id"], "dev": "dev-00042", "tag": "critical",
            "thresh": 99.5, "offset": 1000}


def workload(p):
    """name -> (cosmoql SQL, cosmoql extra args, SQLite SQL, SQLite args)."""
    return {
        "scan": ("SELECT c.id, c.metricValue FROM c WHERE c.metricValue > 99.5", [],
                 "SELECT json_extract(body,'$.id'), json_extract(body,'$.metricValue') FROM docs "
                 "WHERE json_extract(body,'$.metricValue') > 99.5", ()),
        "Q1": ("SELECT * FROM c WHERE c.deviceId = @pk AND c.id = @id",
               ["--pk", json.dumps(p["pk"]), "--param", "@pk=" + json.dumps(p["pk"]), "--param", "@id=" + json.dumps(p["id"])],
               "SELECT body FROM docs WHERE pk=? AND id=?", (p["pk"], p["id"])),
        "Q2": ("SELECT * FROM c WHERE c.deviceId = @dev AND c.metricType = 'Temperature'",
               ["--pk", json.dumps(p["dev"]), "--param", "@dev=" + json.dumps(p["dev"])],
               "SELECT body FROM docs WHERE pk=? AND json_extract(body,'$.metricType')='Temperature'", (p["dev"],)),
        "Q3": ("SELECT TOP 10 * FROM c WHERE c.deviceId = @dev ORDER BY c.readingTime DESC",
               ["--pk", json.dumps(p["dev"]), "--param", "@dev=" + json.dumps(p["dev"])],
               "SELECT body FROM docs WHERE pk=? ORDER BY json_extract(body,'$.readingTime') DESC LIMIT 10", (p["dev"],)),
        "Q4": ("SELECT * FROM c WHERE c.metricValue > 99.5", [],
               "SELECT body FROM docs WHERE json_extract(body,'$.metricValue') > 99.5", ()),
        "Q4c": ("SELECT VALUE COUNT(1) FROM c WHERE c.metricValue > 99.5", [],
                "SELECT COUNT(1) FROM docs WHERE json_extract(body,'$.metricValue') > 99.5", ()),
        "Q5": ("SELECT TOP 10 * FROM c ORDER BY c.metricValue DESC", [],
               "SELECT body FROM docs ORDER BY json_extract(body,'$.metricValue') DESC LIMIT 10", ()),
        "Q6": ("SELECT c.metricType, COUNT(1) AS n, AVG(c.metricValue) AS avgValue FROM c GROUP BY c.metricType", [],
               "SELECT json_extract(body,'$.metricType') AS mt, COUNT(1), AVG(json_extract(body,'$.metricValue')) "
               "FROM docs GROUP BY mt", ()),
        "Q7": ("SELECT DISTINCT VALUE c.location.city FROM c", [],
               "SELECT DISTINCT json_extract(body,'$.location.city') FROM docs", ()),
        "Q8": ("SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.tags, @tag)", ["--param", "@tag=" + json.dumps(p["tag"])],
               "SELECT id FROM docs WHERE EXISTS (SELECT 1 FROM json_each(body,'$.tags') WHERE value=?)", (p["tag"],)),
        "Q8c": ("SELECT VALUE COUNT(1) FROM c WHERE ARRAY_CONTAINS(c.tags, @tag)", ["--param", "@tag=" + json.dumps(p["tag"])],
                "SELECT COUNT(1) FROM docs WHERE EXISTS (SELECT 1 FROM json_each(body,'$.tags') WHERE value=?)", (p["tag"],)),
        "Q9": ("SELECT * FROM c ORDER BY c.readingTime OFFSET 1000 LIMIT 10", [],
               "SELECT body FROM docs ORDER BY json_extract(body,'$.readingTime') LIMIT 10 OFFSET ?", (p["offset"],)),
    }


def sqlite_times(path, queries, repeat):
    db = sqlite3.connect(":memory:")
    db.execute("PRAGMA cache_size=-4000000")
    db.execute("CREATE TABLE docs(pk TEXT NOT NULL, id TEXT NOT NULL, body JSON NOT NULL, PRIMARY KEY(pk,id))")
    with open(path) as f:
        db.execute("BEGIN")
        db.executemany("INSERT INTO docs(pk,id,body) VALUES (json_extract(?1,'$.deviceId'), json_extract(?1,'$.id'), ?1)",
                       ((line.rstrip("\n"),) for line in f))
        db.execute("COMMIT")
    out = {}
    for name, (_, _, sql, args) in queries.items():
        rows = db.execute(sql, args).fetchall()  # warm-up
        ts = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            rows = db.execute(sql, args).fetchall()
            ts.append(time.perf_counter() - t0)
        out[name] = (statistics.median(ts), len(rows))
    return out


def cosmoql_times(binary, path, queries, repeat):
    out = {}
    for name, (sql, extra, _, _) in queries.items():
        cmd = [binary, "bench", "--data", path, "--partition-key", "/deviceId", "--repeat", str(repeat),
               "--max-dop", "1"] + extra + [sql]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit("cosmoql failed on %s: %s" % (name, r.stderr))
        m = json.loads(r.stdout)
        out[name] = (m["medianSeconds"], m["results"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cosmoql", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")),
                                                       "release", "cosmoql"))
    ap.add_argument("--out")
    a = ap.parse_args()
    path = data_file(a.n)
    queries = workload(params(path))
    ours = cosmoql_times(a.cosmoql, path, queries, a.repeat)
    theirs = sqlite_times(path, queries, a.repeat)
    rows = []
    print("| query | cosmoql median ms | SQLite median ms | SQLite / cosmoql | rows (cosmoql, SQLite) |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name in queries:
        (c, cr), (s, sr) = ours[name], theirs[name]
        print("| %s | %.3f | %.3f | %.2fx | %d, %d |" % (name, c * 1000, s * 1000, s / c if c else float("inf"), cr, sr))
        rows.append({"query": name, "cosmoql_s": c, "sqlite_s": s, "cosmoql_rows": cr, "sqlite_rows": sr})
    scan = ours["scan"][0]
    print("\nfull scan with filter and projection: cosmoql %.0f items/s, SQLite %.0f items/s (single thread, %d items)"
          % (a.n / scan, a.n / theirs["scan"][0], a.n))
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"n": a.n, "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
