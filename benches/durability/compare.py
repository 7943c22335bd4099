#!/usr/bin/env python3
"""Durable writes and reopening: cosmoql's database directory beside SQLite in WAL mode
(synchronous FULL and NORMAL), measured in the same run on the same machine.

Usage: python3 benches/durability/compare.py [--writes 20000] [--items 1000000] [--dir /tmp]

- writes: W writers (1 and 8) each insert their share of `--writes` telemetry items one at a
  time, every insert its own durable transaction (SQLite: autocommit INSERT, one connection per
  thread; cosmoql: one create per item, `benches/durability.rs`).
- import/reopen: `--items` telemetry items (benches/data/gen_telemetry.py) loaded from NDJSON in
  one go (SQLite: executemany in one transaction into items(pk, id, doc) with its primary key;
  cosmoql: `import` into a database directory, synced at the end), then the database closed and
  opened again (SQLite: open and read every doc; cosmoql: replay the log and rebuild every
  index), and the bytes on disk against the NDJSON's.

Prints one table with ratios cosmoql/SQLite (higher is better for writes/s, lower for seconds).
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def item(w, i):
    return json.dumps({
        "id": "%d-%d" % (w, i), "deviceId": "dev-%05d" % ((i * 7 + w) % 2000),
        "readingTime": "2024-06-03T17:21:09.412Z", "date": "2024-06-03", "metricType": "Temperature",
        "unit": "celsius", "metricValue": (i % 100) + 0.5, "tags": ["critical", "outdoor"],
        "location": {"city": "Seattle", "zip": "98101"}}, separators=(",", ":"))


def fresh(path):
    for suffix in ("", "-wal", "-shm"):
        try:
            os.remove(path + suffix)
        except FileNotFoundError:
            pass


def sqlite_writes(path, writers, count, sync):
    fresh(path)
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE items(pk TEXT, id TEXT, doc TEXT, PRIMARY KEY(pk, id))")
    con.commit()
    con.close()

    def run(w):
        c = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        c.execute("PRAGMA synchronous=%s" % sync)
        for i in range(count // writers):
            doc = item(w, i)
            c.execute("INSERT INTO items VALUES (?, ?, ?)", ("dev-%05d" % ((i * 7 + w) % 2000), "%d-%d" % (w, i), doc))
        c.close()

    threads = [threading.Thread(target=run, args=(w,)) for w in range(writers)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    fresh(path)
    return count // writers * writers / seconds


def sqlite_import(path, ndjson, sync):
    fresh(path)
    started = time.perf_counter()
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=%s" % sync)
    con.execute("CREATE TABLE items(pk TEXT, id TEXT, doc TEXT, PRIMARY KEY(pk, id))")
    with open(ndjson) as f:
        rows = ((d["deviceId"], d["id"], line) for line in f for d in [json.loads(line)])
        con.executemany("INSERT INTO items VALUES (?, ?, ?)", rows)
    con.commit()
    con.close()
    import_seconds = time.perf_counter() - started
    started = time.perf_counter()
    con = sqlite3.connect(path)
    n = 0
    for (doc,) in con.execute("SELECT doc FROM items"):
        n += 1
    con.close()
    reopen_seconds = time.perf_counter() - started
    size = sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))
    fresh(path)
    return {"items": n, "import_seconds": import_seconds, "reopen_seconds": reopen_seconds, "db_bytes": size}


def cosmoql(bench, *args):
    out = subprocess.run([bench, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--writes", type=int, default=20000)
    p.add_argument("--items", type=int, default=1000000)
    p.add_argument("--dir", default="/tmp")
    a = p.parse_args()
    subprocess.run(["cargo", "build", "--release", "--bench", "durability"], cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    deps = os.path.join(target, "release", "deps")
    bench = max((os.path.join(deps, f) for f in os.listdir(deps) if f.startswith("durability-") and "." not in f),
                key=os.path.getmtime)
    ndjson = os.path.join(a.dir, "durability-telemetry-%d.ndjson" % a.items)
    if not os.path.exists(ndjson):
        with open(ndjson, "w") as f:
            subprocess.run([sys.executable, os.path.join(ROOT, "benches", "data", "gen_telemetry.py"),
                            "--n", str(a.items)], stdout=f, check=True)
    cdir = os.path.join(a.dir, "durability-cosmoql")
    sdb = os.path.join(a.dir, "durability-sqlite.db")
    rows = []
    for sync in ("FULL", "NORMAL"):
        for writers in (1, 8):
            c = cosmoql(bench, "writes", "--writers", str(writers), "--count", str(a.writes), "--sync", sync.lower(),
                        "--dir", cdir)["writes_per_sec"]
            s = sqlite_writes(sdb, writers, a.writes, sync)
            rows.append(("durable writes/s, %d writer%s, %s" % (writers, "s" if writers > 1 else "", sync),
                         "%.0f" % c, "%.0f" % s, c / s))
    c = cosmoql(bench, "import", "--ndjson", ndjson, "--dir", cdir)
    c.update(cosmoql(bench, "import-memory", "--ndjson", ndjson))
    s = sqlite_import(sdb, ndjson, "FULL")
    ndjson_bytes = os.path.getsize(ndjson)
    rows.append(("import %d items, s" % a.items, "%.2f" % c["import_seconds"], "%.2f" % s["import_seconds"],
                 c["import_seconds"] / s["import_seconds"]))
    rows.append(("reopen (cosmoql: replay + indexes; SQLite: read every doc), s", "%.2f" % c["reopen_seconds"],
                 "%.2f" % s["reopen_seconds"], c["reopen_seconds"] / s["reopen_seconds"]))
    rows.append(("cosmoql reopen / its own import", "%.2f" % (c["reopen_seconds"] / c["import_seconds"]), "", None))
    rows.append(("cosmoql import into a directory / into memory", "%.2f" % (c["import_seconds"] / c["memory_import_seconds"]),
                 "", None))
    rows.append(("bytes on disk / NDJSON bytes", "%.2f" % (c["db_bytes"] / ndjson_bytes),
                 "%.2f" % (s["db_bytes"] / ndjson_bytes), c["db_bytes"] / s["db_bytes"]))
    rows.append(("  after a checkpoint", "%.2f" % (c["checkpoint_bytes"] / ndjson_bytes), "", None))
    print("%s, %d writes, %d items (NDJSON %d bytes)" % (time.strftime("%Y-%m-%d"), a.writes, a.items, ndjson_bytes))
    print("| measure | cosmoql | SQLite WAL | cosmoql/SQLite |")
    print("| --- | --- | --- | --- |")
    for name, c, s, r in rows:
        print("| %s | %s | %s | %s |" % (name, c, s, "" if r is None else "%.2f" % r))


if __name__ == "__main__":
    main()
