#!/usr/bin/env python3
"""Writes trips.ndjson and workload.json, the inputs of the README's `cosmoql advise` example.

A fleet of 40 vehicles reports a trip at the top of every hour for three days (2,880 items):
`vin`, `date`, `at` (the moment, within the hour's first three minutes), `km` and a `status`
that changes. The workload reads one vehicle's day by date and VIN, sums a vehicle's kilometres
for a day, counts stopped vehicles, creates trips and patches their status. Deterministic (seed 7).
"""
import json
import random

rng = random.Random(7)
lines = []
statuses = ["started", "moving", "stopped"]
for day in (1, 2, 3):
    for hour in range(24):
        for v in range(40):
            minute = rng.randrange(0, 3)
            lines.append(json.dumps({
                "id": f"2026-11-0{day}-{hour:02}-{v:02}",
                "vin": f"VIN{v:04}",
                "date": f"2026-11-0{day}",
                "at": f"2026-11-0{day}T{hour:02}:{minute:02}:{rng.randrange(0, 60):02}Z",
                "km": round(rng.uniform(0.5, 60.0), 1),
                "status": statuses[(hour + v) % 3],
            }, separators=(",", ":")))
with open("trips.ndjson", "w") as f:
    f.write("\n".join(lines) + "\n")
workload = [
    {"query": "SELECT * FROM c WHERE c.date = '2026-11-02' AND c.vin = 'VIN0007'", "rate": 5},
    {"query": "SELECT VALUE SUM(c.km) FROM c WHERE c.vin = 'VIN0003' AND c.date = '2026-11-01'", "rate": 1},
    {"query": "SELECT VALUE COUNT(1) FROM c WHERE c.status = 'stopped'", "rate": 0.5},
    {"write": "create", "rate": 20},
    {"write": "patch", "paths": ["/status"], "rate": 2},
]
with open("workload.json", "w") as f:
    f.write(json.dumps(workload, indent=2) + "\n")
