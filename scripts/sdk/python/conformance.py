#!/usr/bin/env python3
"""Replays the conformance corpus (tests/conformance) through the Python SDK against a running
`cosmoql serve`, as tests/conformance.rs replays it on the embedded engine.

    python conformance.py --endpoint http://127.0.0.1:PORT/ --key KEY [--corpus DIR]

Every case with a `name` counts, as there. The cases' documents are written with create_item into
one container per distinct (documents, partition key, indexing policy, vector policy), so the
many cases over the same items (or over none) share one. Each query runs with
query_items(enable_cross_partition_query=True, parameters=...) once at the default page size and
once page by page with max_item_count=1 (the Rust runner's page-size-1 run); a case passes when
both match its expected results. Prints `python conformance: P passed, F failed of N` and every
failure with expected and actual results. The cases tests/conformance.rs lists as KNOWN_FAILURES
fail in the embedded runner too and so also count as failed here; the exit status is 0 when every
other case passed (and 1 too when a known failure passes, since the Rust runner fails then).
"""

import argparse
import json
import os
import re
import sys
import uuid
from pathlib import Path

from azure.cosmos import CosmosClient, PartitionKey, exceptions

from common import GUARD_SECONDS, difference, run_guarded, same_results, show, strip_system

REPO = Path(__file__).resolve().parents[3]

# The policy a case's container gets when the case sets none but its ORDER BY has several paths
# (the service refuses such a query without the matching composite index; conformance.rs adds it).
DEFAULT_POLICY = {
    "indexingMode": "consistent",
    "automatic": True,
    "includedPaths": [{"path": "/*"}],
    "excludedPaths": [{"path": '/"_etag"/?'}],
}

ORDER_BY_ITEM = re.compile(r"\s*[A-Za-z_]\w*((?:\.[A-Za-z_]\w*)+)(?:\s+(ASC|DESC))?\s*", re.IGNORECASE)


def json_files(folder):
    """The .json files under `folder`, in the order conformance.rs reads them."""
    for path in sorted(folder.iterdir()):
        if path.is_dir():
            yield from json_files(path)
        elif path.suffix == ".json":
            yield path


def known_failures():
    """The case names listed in conformance.rs's KNOWN_FAILURES (the Rust runner tolerates them)."""
    source = (REPO / "tests" / "conformance.rs").read_text(encoding="utf-8")
    block = re.search(r"const KNOWN_FAILURES[^=]*=\s*&\[(.*?)\n\];", source, re.DOTALL)
    return set(re.findall(r'\(\s*"([^"]+)",', block.group(1))) if block else set()


def documents(file, case):
    """The case's documents, with the ids conformance.rs gives them: a non-string id becomes its
    compact JSON text, a missing one `generated-<index>`."""
    if "documents_file" in case:
        items = json.loads((file.parent / case["documents_file"]).read_text(encoding="utf-8"))
    else:
        items = case.get("documents") or []
    out = []
    for i, item in enumerate(items):
        item = dict(item)
        if "id" not in item:
            item["id"] = f"generated-{i}"
        elif not isinstance(item["id"], str):
            item["id"] = json.dumps(item["id"], separators=(",", ":"))
        out.append(item)
    return out


def order_by_composite(sql):
    """The composite index for the query's ORDER BY when it sorts on two or more property paths
    (`c.a.b DESC`); None otherwise, and when an item is an expression rather than a path."""
    match = re.search(r"\bORDER\s+BY\b(.*)$", sql, re.IGNORECASE | re.DOTALL)
    if not match:
        return None
    clause = re.split(r"\b(?:OFFSET|LIMIT)\b", match.group(1), flags=re.IGNORECASE)[0]
    items = clause.split(",")
    if len(items) < 2:
        return None
    composite = []
    for item in items:
        path = ORDER_BY_ITEM.fullmatch(item)
        if not path:
            return None
        composite.append({
            "path": path.group(1).replace(".", "/"),
            "order": "descending" if (path.group(2) or "").upper() == "DESC" else "ascending",
        })
    return composite


def indexing_policy(case):
    """The case container's own policy, or the default with the composite index its ORDER BY needs;
    None leaves the server's default."""
    container = case.get("container") or {}
    if "indexingPolicy" in container:
        return container["indexingPolicy"]
    composite = order_by_composite(case["query"])
    return dict(DEFAULT_POLICY, compositeIndexes=[composite]) if composite else None


class Corpus:
    """The cases, grouped by the container they need."""

    def __init__(self, folder):
        files = list(json_files(folder / "docs")) + list(json_files(folder / "engine" / "cases"))
        self.cases = []
        self.groups = {}  # container key -> (documents, partition key, indexing policy, vector policy)
        for file in files:
            case = json.loads(file.read_text(encoding="utf-8"))
            if "name" not in case:
                continue
            group = (
                documents(file, case),
                case.get("partition_key"),
                indexing_policy(case),
                (case.get("container") or {}).get("vectorEmbeddingPolicy"),
            )
            key = json.dumps(group, sort_keys=True)
            self.groups.setdefault(key, group)
            self.cases.append((case, key))


class LoadError(Exception):
    """A document of a group could not be written."""


def create_container(database, name, group):
    """A container for one group, holding its documents."""
    items, key, policy, vectors = group
    if isinstance(key, list):
        partition_key = PartitionKey(path=key, kind="MultiHash")
    elif key is None:
        partition_key = None  # a container without a key: one logical partition
    else:
        partition_key = PartitionKey(path=key)
    # A keyed container on 3 physical partitions (18,000 RU/s, the service's one per 6,000), as
    # the embedded runner's middle layout: cross-partition merges are exercised.
    options = {} if key is None else {"offer_throughput": 18000}
    if policy is not None:
        options["indexing_policy"] = policy
    if vectors is not None:
        options["vector_embedding_policy"] = vectors
    container = database.create_container(name, partition_key=partition_key, **options)
    for i, item in enumerate(items):
        try:
            container.create_item(item)
        except exceptions.CosmosHttpResponseError as error:
            raise LoadError(f"writing document {i} ({show(item, 120)}): {describe(error)}") from error
    return container


def describe(error):
    if isinstance(error, exceptions.CosmosHttpResponseError):
        return f"status {error.status_code} substatus {error.sub_status}: {(error.message or '').splitlines()[0]}"
    return str(error) if isinstance(error, LoadError) else f"{type(error).__name__}: {error}"


def run_case(container, case):
    """None when the case passes, else what went wrong."""
    expected = case["expected"]
    ordered = case.get("ordered") is True
    tolerance = case.get("float_tolerance") or 0.0
    options = {"enable_cross_partition_query": True}
    if case.get("parameters"):
        options["parameters"] = case["parameters"]
    for label, size in (("", None), (" (max_item_count=1)", 1)):
        try:
            actual = [strip_system(r) for r in container.query_items(case["query"], max_item_count=size, **options)]
        except exceptions.CosmosHttpResponseError as error:
            return f"query failed{label}: {describe(error)}\n     expected {show(expected, 600)}"
        if not same_results(actual, expected, ordered, tolerance):
            return (
                f"{difference(actual, expected, ordered, tolerance)}{label}\n"
                f"     expected {show(expected, 600)}\n     got      {show(actual, 600)}"
            )
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--key", required=True)
    default_corpus = os.environ.get("COSMOQL_CONFORMANCE_DIR") or REPO / "tests" / "conformance"
    parser.add_argument("--corpus", type=Path, default=Path(default_corpus))
    args = parser.parse_args()

    corpus = Corpus(args.corpus)
    known = known_failures()
    client = CosmosClient(args.endpoint, credential=args.key)
    database = client.create_database(f"conformance-{uuid.uuid4().hex[:8]}")
    containers, load_errors = {}, {}
    for index, (key, group) in enumerate(corpus.groups.items()):
        name = f"c{index}"
        container, error, hung = run_guarded(create_container, database, name, group)
        if hung or error is not None:
            cases = sum(1 for _, k in corpus.cases if k == key)
            why = f"no answer within the {GUARD_SECONDS} s guard (a hang)" if hung else describe(error)
            print(f"container {name} ({cases} cases) could not be loaded: {why}")
            load_errors[key] = f"its container {name} could not be loaded (see above)"
        else:
            containers[key] = container

    passed, failures, hung_any = 0, [], False
    for case, key in corpus.cases:
        if key in load_errors:
            failures.append((case, load_errors[key]))
            continue
        why, error, hung = run_guarded(run_case, containers[key], case)
        hung_any = hung_any or hung
        if hung:
            why = f"no answer within the {GUARD_SECONDS} s guard (a hang)"
        elif error is not None:
            why = describe(error)
        if why is None:
            passed += 1
        else:
            failures.append((case, why))
    client.delete_database(database)

    unexpected = [(case, why) for case, why in failures if case["name"] not in known]
    now_passing = sorted(known - {case["name"] for case, _ in failures})
    for case, why in failures:
        tag = "known failure (also in conformance.rs)" if case["name"] in known else "FAILED"
        print(f"{tag} {case['name']}\n  query: {' '.join(case['query'].split())}\n  {why}")
    for name in now_passing:
        print(f"listed in conformance.rs's KNOWN_FAILURES but passing: {name}")
    total = len(corpus.cases)
    print(f"{len(corpus.groups)} containers, {len(unexpected)} failures not known to the embedded runner")
    print(f"python conformance: {passed} passed, {len(failures)} failed of {total}", flush=True)
    status = 0 if not unexpected and not now_passing else 1
    if hung_any:
        os._exit(status)  # a hung query's thread would keep the interpreter's shutdown waiting
    return status


if __name__ == "__main__":
    sys.exit(main())
