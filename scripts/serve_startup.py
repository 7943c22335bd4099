#!/usr/bin/env python3
"""Start-up time of `cosmoql serve`: from starting the process to the first answered account read
(`GET /`, signed with the master key as the SDKs sign it), in memory or on a database directory.

    scripts/serve_startup.py BIN [DIR] [--runs N]

Prints one line per run and the median. Python's standard library only.
"""
import argparse
import base64
import email.utils
import hashlib
import hmac
import http.client
import statistics
import subprocess
import sys
import time
import urllib.parse

KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="


def account_read(port):
    """One signed GET /; True on a 200."""
    date = email.utils.formatdate(usegmt=True)
    payload = f"get\n\n\n{date.lower()}\n\n".encode()
    sig = base64.b64encode(hmac.new(base64.b64decode(KEY), payload, hashlib.sha256).digest()).decode()
    auth = urllib.parse.quote(f"type=master&ver=1.0&sig={sig}", safe="-_.!~*'()")
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", "/", headers={"x-ms-date": date, "authorization": auth})
        return connection.getresponse().status == 200
    finally:
        connection.close()


def one_run(binary, directory):
    args = [binary, "serve", "--port", "0"] + ([directory] if directory else [])
    started = time.perf_counter()
    server = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        if not line.startswith("cosmoql serve: listening on http://127.0.0.1:"):
            sys.exit(f"unexpected first line: {line!r} {server.stderr.read()}")
        port = int(line.rsplit(":", 1)[1].strip().rstrip("/"))
        while not account_read(port):
            time.sleep(0.001)
        return time.perf_counter() - started
    finally:
        server.terminate()
        server.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("directory", nargs="?")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    times = []
    for i in range(args.runs):
        elapsed = one_run(args.binary, args.directory)
        times.append(elapsed)
        print(f"run {i + 1}: {elapsed * 1000:.0f} ms")
    print(f"start-up to the first account read: median {statistics.median(times) * 1000:.0f} ms "
          f"({args.directory or 'in memory'})")


if __name__ == "__main__":
    main()
