"""Two cosmoql binaries (before and after a change) on the telemetry workload Q1-Q9 of
../shared/bench, for docs/performance.md: each query is run by both binaries in ABBA order in
every round (so a drift of the shared machine hits both alike), each run loading the data and
timing its repeats (`cosmoql bench`). Prints, per query, the median of the runs' medians and the
best of the runs' minimums for each binary, and their ratios (after / before).

    python3 scripts/bench-before-after.py BEFORE_BIN AFTER_BIN telemetry.ndjson ROUNDS

(the data: `python3 ../shared/bench/gen_telemetry.py --n 1000000 --seed 42 > telemetry.ndjson`;
the query parameters come from ../shared/bench/benchlib.py, as the peers' scripts take them).
"""
import json, os, subprocess, sys, statistics as st
sys.path.insert(0, os.environ.get("COSMOQL_SHARED_BENCH", os.path.join(os.path.dirname(__file__), "../../shared/bench")))
import benchlib as B

before, after, path, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
P = B.params(path)
Q = {
    "Q1": ("SELECT * FROM c WHERE c.deviceId = @pk AND c.id = @id", {"@pk": P["pk"], "@id": P["id"]}, 201),
    "Q2": ("SELECT * FROM c WHERE c.deviceId = @dev AND c.metricType = 'Temperature'", {"@dev": P["dev"]}, 101),
    "Q3": ("SELECT TOP 10 * FROM c WHERE c.deviceId = @dev ORDER BY c.readingTime DESC", {"@dev": P["dev"]}, 101),
    "Q4": ("SELECT * FROM c WHERE c.metricValue > @t", {"@t": P["thresh"]}, 21),
    "Q4c": ("SELECT VALUE COUNT(1) FROM c WHERE c.metricValue > @t", {"@t": P["thresh"]}, 101),
    "Q5": ("SELECT TOP 10 * FROM c ORDER BY c.metricValue DESC", {}, 101),
    "Q6": ("SELECT c.metricType, COUNT(1) AS n, AVG(c.metricValue) AS avgValue FROM c GROUP BY c.metricType", {}, 7),
    "Q7": ("SELECT DISTINCT VALUE c.location.city FROM c", {}, 101),
    "Q8": ("SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.tags, @tag)", {"@tag": P["tag"]}, 11),
    "Q8c": ("SELECT VALUE COUNT(1) FROM c WHERE ARRAY_CONTAINS(c.tags, @tag)", {"@tag": P["tag"]}, 101),
    "Q9": ("SELECT * FROM c ORDER BY c.readingTime OFFSET 1000 LIMIT 10", {}, 101),
}
res = {q: {"before": [], "after": []} for q in Q}
loads = {"before": [], "after": []}
rss = {"before": [], "after": []}
def run(binary, sql, params, repeat):
    cmd = [binary, "bench", "--data", path, "--partition-key", "/deviceId", "--repeat", str(repeat)]
    for k, v in params.items():
        cmd += ["--param", f"{k}={json.dumps(v)}"]
    cmd.append(sql)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    return json.loads(r.stdout.strip().splitlines()[-1])
for rnd in range(rounds):
    for q, (sql, params, repeat) in Q.items():
        order = [("before", before), ("after", after)]
        if rnd % 2:
            order.reverse()
        for name, binary in order + order[::-1]:
            m = run(binary, sql, params, repeat)
            res[q][name].append((m["minSeconds"] * 1000, m["medianSeconds"] * 1000, m.get("results")))
            loads[name].append(m["loadSeconds"])
            rss[name].append(m["peakRssBytes"] / 2**20)
        print(rnd, q, {k: [round(x[1], 3) for x in v] for k, v in res[q].items()}, flush=True)
print("\n| query | rows | before median (ms) | after median (ms) | after / before | before best (ms) | after best (ms) | after / before |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for q in Q:
    b, a = res[q]["before"], res[q]["after"]
    bm, am = st.median(x[1] for x in b), st.median(x[1] for x in a)
    bb, ab = min(x[0] for x in b), min(x[0] for x in a)
    print(f"| {q} | {b[0][2]} | {bm:.3f} | {am:.3f} | {am/bm:.2f} | {bb:.3f} | {ab:.3f} | {ab/bb:.2f} |")
lb, la = st.median(loads["before"]), st.median(loads["after"])
print(f"| load 1M items (s), median of {len(loads['before'])} | | {lb:.2f} | {la:.2f} | {la/lb:.2f} | {min(loads['before']):.2f} | {min(loads['after']):.2f} | {min(loads['after'])/min(loads['before']):.2f} |")
rb, ra = st.median(rss["before"]), st.median(rss["after"])
print(f"| peak RSS (MB), median | | {rb:.1f} | {ra:.1f} | {ra/rb:.2f} | | | |")
