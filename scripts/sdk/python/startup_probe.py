#!/usr/bin/env python3
"""Measures the start-up of `cosmoql serve` as an app sees it: from the server's start to the first
successful account read (the GET / that the CosmosClient constructor makes).

run.sh starts this program before the server, so that Python's start and the SDK's import are not
counted: it prints `ready`, then reads one line `URL KEY START_NS` from standard input (START_NS is
the wall clock in nanoseconds, `date +%s%N`, just before the server was started), connects and
prints `start-up: N ms`.
"""

import sys
import time

from azure.cosmos import CosmosClient

print("ready", flush=True)
url, key, start_ns = sys.stdin.readline().split()
CosmosClient(url, credential=key)
print(f"start-up: {(time.time_ns() - int(start_ns)) / 1e6:.0f} ms", flush=True)
