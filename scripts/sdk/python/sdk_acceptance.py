#!/usr/bin/env python3
"""Acceptance suite of `cosmoql serve` through the official Python SDK (azure-cosmos).

    python sdk_acceptance.py --endpoint http://127.0.0.1:PORT/ --key KEY --bin PATH/TO/cosmoql

Connects to a running server, then exercises accounts, databases, containers, items, patches,
transactional batches and every query shape. Every query result is compared with the embedded
engine's answer (`cosmoql query` over the same items written to an NDJSON file), at every page size
of PAGE_SIZES, and paged with by_page() resumed from page 2's token in a new iterator.

Prints one line per check (`ok`, `FAIL`, `xfail` for a feature the server does not implement yet,
or `skip` for one this SDK version cannot exercise) and the summary
`python sdk acceptance: N checks passed, M failed`; exits 0 only when nothing failed.
"""

import argparse
import inspect
import json
import logging
import os
import re
import subprocess
import sys
import tempfile
import traceback
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import azure.cosmos
from azure.core import MatchConditions
from azure.cosmos import ContainerProxy, CosmosClient, PartitionKey, documents, exceptions

from common import GUARD_SECONDS, difference, run_guarded, same, same_results, show, strip_system
from suite_data import (
    COMPOSITE_POLICY,
    COMPOSITE_QUERIES,
    hierarchical_items,
    mixed_items,
    MIXED_QUERIES,
    VECTOR_INDEXING,
    vector_items,
    VECTOR_POLICY,
    VECTOR_QUERIES,
)

# Page sizes every query runs at (None: the SDK's default, no max_item_count).
PAGE_SIZES = (None, 1, 3, 1000)

# Checks of features the server does not implement yet, and which: a failure there is printed as
# `xfail` and not counted; a pass is counted as a failure, so that the entry is removed.
NOT_IMPLEMENTED = {}

# More pages than a change feed of the suite's items can have.
CHANGE_FEED_PAGES = 20

# Whether this SDK's query_items takes a feed range (4.9.0 does not: there only the change feed does).
QUERY_TAKES_FEED_RANGE = "feed_range" in inspect.getsource(ContainerProxy.query_items)
NO_FEED_RANGE = f"azure-cosmos {azure.cosmos.__version__}'s query_items has no feed_range keyword"

ORDER_BY = re.compile(r"\border\s+by\b", re.IGNORECASE)


class CheckFailed(Exception):
    """A check's own assertion failed; the message says what was expected and what came."""


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


def expect_error(error_type, status, fn, *args, **kwargs):
    """Calls fn, which must raise `error_type` with HTTP `status`; returns the error."""
    try:
        fn(*args, **kwargs)
    except error_type as error:
        expect(error.status_code == status, f"{error_type.__name__} with status {error.status_code}, not {status}")
        return error
    except exceptions.CosmosHttpResponseError as error:
        raise CheckFailed(f"expected {error_type.__name__} ({status}), got {describe(error)}") from error
    raise CheckFailed(f"expected {error_type.__name__} ({status}), but the call succeeded")


def expect_results(actual, expected, ordered, context=""):
    """The results must match (in order, or as multisets); the failure says how they differ."""
    if not same_results(actual, expected, ordered):
        raise CheckFailed(context + difference(actual, expected, ordered))


def describe(error):
    """One line (or a few) saying what went wrong."""
    if isinstance(error, CheckFailed):
        return str(error)
    if isinstance(error, exceptions.CosmosHttpResponseError):
        message = (error.message or "").split("\n")[0]
        return f"{type(error).__name__} status {error.status_code} substatus {error.sub_status}: {message[:400]}"
    frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return f"{type(error).__name__}{where}: {error}"


class Suite:
    """Runs checks one at a time under the guard and keeps the tally."""

    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.expected_failures = 0
        self.skipped = 0
        self.hung = False

    def check(self, name, fn, *args, skip=None):
        """Runs one check, unless `skip` says why this SDK cannot; returns its value (None when it
        failed or was skipped)."""
        if skip:
            self.skipped += 1
            print(f"skip  {name}: {skip}", flush=True)
            return None
        value, error, hung = run_guarded(fn, *args)
        if hung:
            self.hung = True
            failure = f"no answer within the {GUARD_SECONDS} s guard (a hang)"
        else:
            failure = describe(error) if error is not None else None
        missing = NOT_IMPLEMENTED.get(name)
        if missing and failure:
            self.expected_failures += 1
            print(f"xfail {name}: not implemented yet ({missing}): {failure}", flush=True)
        elif missing:
            self.failed += 1
            print(f"FAIL  {name}: passes now; remove it from NOT_IMPLEMENTED", flush=True)
        elif failure:
            self.failed += 1
            print(f"FAIL  {name}: {failure}", flush=True)
        else:
            self.passed += 1
            print(f"ok    {name}", flush=True)
        return value


@dataclass
class Target:
    """A container the suite wrote, and the same items as the oracle loads them."""

    container: object
    items: list
    data: Path
    keys: list
    properties: Optional[Path] = None


class Oracle:
    """The embedded engine: `BIN query` run once per query over an NDJSON copy of the items."""

    def __init__(self, binary, workdir):
        self.binary = binary
        self.workdir = Path(workdir)

    def write(self, name, items):
        """The items as an NDJSON file named after `name`."""
        path = self.workdir / f"{name}.ndjson"
        path.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items), encoding="utf-8")
        return path

    def write_properties(self, name, properties):
        path = self.workdir / f"{name}.container.json"
        path.write_text(json.dumps(properties), encoding="utf-8")
        return path

    def answer(self, data, keys, sql, parameters=None, partition_key=None, properties=None):
        command = [self.binary, "query", "--data", str(data)]
        for key in keys:
            command += ["--partition-key", key]
        if properties is not None:
            command += ["--container", str(properties)]
        for parameter in parameters or []:
            command += ["--param", f"{parameter['name']}={json.dumps(parameter['value'])}"]
        if partition_key is not None:
            command += ["--pk", json.dumps(partition_key)]
        command.append(sql)
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
        if done.returncode != 0:
            raise CheckFailed(f"the embedded engine refused the query: {done.stderr.strip()[:600]}")
        return [strip_system(item) for item in json.loads(done.stdout)]


def connection_string(endpoint, key):
    return f"AccountEndpoint={endpoint};AccountKey={key};"


# ---------------------------------------------------------------------------------------------
# Account, databases, containers


def check_connect_key(endpoint, key):
    client = CosmosClient(endpoint, credential=key)
    expect(client.get_database_account() is not None, "no database account")
    return client


def check_connect_string(endpoint, key):
    client = CosmosClient.from_connection_string(connection_string(endpoint, key))
    list(client.list_databases())


def check_wrong_key(endpoint, key):
    wrong = "A" * 86 + "=="
    expect(wrong != key, "the test's wrong key is the server's key")
    try:
        client = CosmosClient(endpoint, credential=wrong)
        list(client.list_databases())
    except exceptions.CosmosHttpResponseError as error:
        expect(error.status_code == 401, f"status {error.status_code}, not 401: {describe(error)}")
        return
    raise CheckFailed("a client with a wrong key was served")


def check_create_database(client, name):
    database = client.create_database_if_not_exists(name)
    again = client.create_database_if_not_exists(name)
    expect(database.id == again.id == name, "create_database_if_not_exists named another database")
    return database


def check_list_databases(client, name):
    ids = [d["id"] for d in client.list_databases()]
    expect(name in ids, f"{name} not in list_databases: {ids}")


def check_read_database(database):
    properties = database.read()
    expect(properties["id"] == database.id and properties.get("_rid"), f"read gave {show(properties)}")


def check_create_container(database, name, partition_key, indexing_policy=None, vector_policy=None):
    """Creates the container twice over (if not exists); its properties echo the key and indexes sent.
    40,000 RU/s start it on 7 physical partitions (the service's one per 6,000), so queries and
    feed ranges span several."""
    options = {"offer_throughput": 40000}
    if indexing_policy:
        options["indexing_policy"] = indexing_policy
    if vector_policy:
        options["vector_embedding_policy"] = vector_policy
    container = database.create_container_if_not_exists(name, partition_key=partition_key, **options)
    again = database.create_container_if_not_exists(name, partition_key=partition_key, **options)
    expect(again.id == name, "create_container_if_not_exists named another container")
    properties = container.read()
    expect(properties.get("_rid"), f"no _rid in {show(properties)}")
    expect(
        properties.get("partitionKey") == dict(partition_key),
        f"partitionKey sent {show(dict(partition_key))}, read back {show(properties.get('partitionKey'))}",
    )
    for policy_key in ("compositeIndexes", "vectorIndexes"):
        if indexing_policy and policy_key in indexing_policy:
            got = properties.get("indexingPolicy", {}).get(policy_key)
            expect(same(got, indexing_policy[policy_key]), f"{policy_key} read back as {show(got)}")
    return container


def check_vector_policy(container):
    got = container.read().get("vectorEmbeddingPolicy")
    expect(same(got, VECTOR_POLICY), f"vectorEmbeddingPolicy sent, read back as {show(got)}")


def check_list_containers(database, names):
    ids = [c["id"] for c in database.list_containers()]
    expect(set(names) <= set(ids), f"list_containers gave {ids}, missing {set(names) - set(ids)}")


def check_query_databases(client, name):
    parameters = [{"name": "@id", "value": name}]
    found = list(client.query_databases("SELECT * FROM r WHERE r.id = @id", parameters=parameters))
    expect([d["id"] for d in found] == [name], f"query_databases gave {show(found)}")


def check_query_containers(database, name):
    parameters = [{"name": "@id", "value": name}]
    found = list(database.query_containers("SELECT * FROM r WHERE r.id = @id", parameters=parameters))
    expect([c["id"] for c in found] == [name], f"query_containers gave {show(found)}")


def check_change_feed(target):
    """The feed from the beginning holds every item once and then ends (the SDK stops at the
    service's 304 Not Modified); resumed from its continuation after three writes, it holds exactly
    those three items in their latest versions. At most CHANGE_FEED_PAGES pages are read, so a
    feed that never ends fails at once instead of hanging."""

    def drain(iterator):
        changes = []
        pages = iterator.by_page()
        for _ in range(CHANGE_FEED_PAGES):
            page = next(pages, None)
            if page is None:
                # Where the feed stands after its last (empty) read, as the SDK's samples take it
                # (`change_feed_management.py`): the pager's own token is the last non-empty
                # page's, which misses ranges read after it.
                return changes, target.container.client_connection.last_response_headers["etag"]
            # `_lsn` is a system property of change feed items only.
            changes += [{k: v for k, v in strip_system(d).items() if k != "_lsn"} for d in page]
        raise CheckFailed(f"the feed did not end after {CHANGE_FEED_PAGES} pages (no 304 Not Modified)")

    changes, token = drain(target.container.query_items_change_feed(start_time="Beginning"))
    expect_results(changes, target.items, ordered=False)
    written = [dict(target.items[0], changed=True), {"id": "cf-new-1", "pk": "p0"}, {"id": "cf-new-2", "pk": "p1"}]
    for item in written:
        target.container.upsert_item(item)
    try:
        later, _ = drain(target.container.query_items_change_feed(continuation=token))
        expect_results(later, written, ordered=False)
    finally:
        target.container.upsert_item(target.items[0])
        for item in written[1:]:
            target.container.delete_item(item["id"], partition_key=item["pk"])


def check_get_throughput(database):
    """A container created with 400 RU/s reads back that throughput."""
    container = database.create_container_if_not_exists("throughput", PartitionKey(path="/pk"), offer_throughput=400)
    got = container.get_throughput().offer_throughput
    expect(got == 400, f"offer_throughput {got}, not 400")


def check_replace_throughput(database):
    container = database.get_container_client("throughput")
    container.replace_throughput(500)
    got = container.get_throughput().offer_throughput
    expect(got == 500, f"offer_throughput {got} after replace_throughput(500)")


def check_analytical_storage_ttl(database):
    """A container made with an analytical store (`analytical_storage_ttl`, written as the
    service's `analyticalStorageTtl`) reads it back, and a replace changes it."""
    container = database.create_container("analytical", PartitionKey(path="/pk"), analytical_storage_ttl=-1)
    got = container.read().get("analyticalStorageTtl")
    expect(got == -1, f"analyticalStorageTtl {got!r}, not -1")
    database.replace_container(container, PartitionKey(path="/pk"), analytical_storage_ttl=3600)
    got = database.get_container_client("analytical").read().get("analyticalStorageTtl")
    expect(got == 3600, f"analyticalStorageTtl {got!r} after a replace with 3600")
    database.delete_container("analytical")


def split_items():
    return [{"id": f"s{i:03}", "pk": f"k{i % 12}", "n": i} for i in range(60)]


def check_split(database):
    """A container split while clients hold tokens (raising its throughput from 400 to 40,000 RU/s
    splits its one physical partition, as the service does past 10,000 RU/s per partition): the
    SDK sees the new ranges; its change feed token from before the split gives exactly the
    changes made after it, once; a query paged before the split resumes from its token with the
    rest of the results in order, none repeated or lost; the feed from the beginning still holds
    every item once."""
    container = database.create_container("splitting", PartitionKey(path="/pk"), offer_throughput=400)
    items = split_items()
    for item in items:
        container.create_item(item)
    before = list(container.read_feed_ranges())
    expect(len(before) == 1, f"{len(before)} feed ranges at 400 RU/s, not 1")
    for _ in container.query_items_change_feed(start_time="Beginning"):
        pass
    feed_token = container.client_connection.last_response_headers["etag"]
    sql = "SELECT c.id, c.n FROM c ORDER BY c.n"
    pages = container.query_items(sql, enable_cross_partition_query=True, max_item_count=7).by_page()
    first = list(next(pages))
    query_token = pages.continuation_token
    expect(len(first) == 7 and query_token, f"page 1: {len(first)} results, token {query_token!r}")

    container.replace_throughput(40000)
    after = list(container.read_feed_ranges(force_refresh=True))
    expect(len(after) > 1, f"{len(after)} feed range(s) after raising the throughput to 40,000 RU/s")

    written = [dict(items[3], changed=True), {"id": "s-new-1", "pk": "k1", "n": 100}, {"id": "s-new-2", "pk": "k7", "n": 101}]
    for item in written:
        container.upsert_item(item)
    changes = []
    pages_read = container.query_items_change_feed(continuation=feed_token).by_page()
    for _ in range(CHANGE_FEED_PAGES):
        page = next(pages_read, None)
        if page is None:
            break
        changes += [{k: v for k, v in strip_system(d).items() if k != "_lsn"} for d in page]
    expect_results(changes, written, ordered=False, context="the change feed resumed across the split: ")

    rest = []
    for page in container.query_items(sql, enable_cross_partition_query=True, max_item_count=7).by_page(query_token):
        rest += list(page)
    want = sorted(
        [{"id": i["id"], "n": i["n"]} for i in items] + [{"id": w["id"], "n": w["n"]} for w in written[1:]],
        key=lambda r: r["n"],
    )
    expect_results([strip_system(r) for r in first + rest], want, ordered=True,
                   context="a query paged across the split: ")

    everything = [strip_system(d) for d in container.query_items_change_feed(start_time="Beginning")]
    everything = [{k: v for k, v in d.items() if k != "_lsn"} for d in everything]
    expect_results(everything, [written[0]] + items[:3] + items[4:] + written[1:], ordered=False,
                   context="the change feed from the beginning after the split: ")


class ThrottleCount(logging.Handler):
    """Counts the 429 answers the SDK's HTTP logging reports (`Response status: 429`)."""

    def __init__(self):
        super().__init__()
        self.throttled = 0

    def emit(self, record):
        if re.search(r"Response status: \D?429", record.getMessage()):
            self.throttled += 1


def check_throttling(database, endpoint, key):
    """At 400 RU/s, writes from 8 clients at once are throttled: the SDK's retry policy waits the
    server's x-ms-retry-after-ms after each 429 and every write is acknowledged (the 429s show in
    the SDK's own HTTP log, `logging_enable`); clients whose policy allows no retry get the 429
    itself, with the retry-after header. (The patient policy allows more attempts than the default
    9: 8 writers wake together after each wait and one gets the budget, so with 9 attempts some
    would give up, against the service as here.)"""
    database.create_container("throttled", PartitionKey(path="/pk"), offer_throughput=400)
    writers, per_writer = 8, 40

    def write(w, policy):
        client = CosmosClient(endpoint, credential=key, connection_policy=policy, logging_enable=True)
        target = client.get_database_client(database.id).get_container_client("throttled")
        refused = []
        for i in range(per_writer):
            try:
                target.create_item({"id": f"w{w}-{i:03}-{uuid.uuid4().hex[:6]}", "pk": f"k{i % 5}", "pad": "x" * 1000})
            except exceptions.CosmosHttpResponseError as e:
                refused.append(e)
        return refused

    counter = ThrottleCount()
    log = logging.getLogger("azure")
    level, propagate = log.level, log.propagate
    log.setLevel(logging.INFO)
    log.propagate = False
    log.addHandler(counter)
    try:
        patient = documents.ConnectionPolicy()
        patient.RetryOptions = documents.RetryOptions(max_retry_attempt_count=1000, max_wait_time_in_seconds=120)
        with ThreadPoolExecutor(writers) as pool:
            refused = [e for errors in pool.map(lambda w: write(w, patient), range(writers)) for e in errors]
    finally:
        log.removeHandler(counter)
        log.setLevel(level)
        log.propagate = propagate
    expect(not refused, f"writes failed under a patient retry policy: {[describe(e) for e in refused[:3]]}")
    expect(counter.throttled > 0, f"none of {writers * per_writer} writes at once at 400 RU/s was answered 429")
    container = database.get_container_client("throttled")
    count = list(container.query_items("SELECT VALUE COUNT(1) FROM c", enable_cross_partition_query=True))
    expect(count == [writers * per_writer], f"COUNT {count} after {writers * per_writer} acknowledged writes "
                                            f"({counter.throttled} 429s retried)")

    impatient = documents.ConnectionPolicy()
    impatient.RetryOptions = documents.RetryOptions(max_retry_attempt_count=0)
    with ThreadPoolExecutor(writers) as pool:
        refused = [e for errors in pool.map(lambda w: write(w, impatient), range(writers)) for e in errors]
    expect(refused, f"{writers * per_writer} writes at once at 400 RU/s and no 429 reached clients that do not retry")
    for e in refused:
        expect(e.status_code == 429, f"status {e.status_code}, not 429: {describe(e)}")
        after = (e.headers or {}).get("x-ms-retry-after-ms")
        expect(after is not None and int(after) > 0, f"a 429 without x-ms-retry-after-ms: {e.headers}")


def check_delete_database(client, database):
    client.delete_database(database)
    expect_error(exceptions.CosmosResourceNotFoundError, 404, database.read)
    ids = [d["id"] for d in client.list_databases()]
    expect(database.id not in ids, f"{database.id} still listed after its delete")


# ---------------------------------------------------------------------------------------------
# Items


def check_load(target):
    """Creates every item with create_item; the server's copy is the item plus system properties."""
    for item in target.items:
        created = target.container.create_item(item)
        expect(same(strip_system(created), item), f"create_item returned {show(created)} for {show(item)}")
        expect(all(created.get(p) for p in ("_rid", "_etag", "_ts", "_self")), f"system properties: {show(created)}")


def check_read_all(target):
    got = [strip_system(d) for d in target.container.read_all_items()]
    expect_results(got, target.items, ordered=False)


def check_point_reads(target):
    for item in target.items:
        got = target.container.read_item(item["id"], partition_key=item["pk"])
        expect(same(strip_system(got), item), f"read_item({item['id']!r}) gave {show(got)}")


# Whether this SDK reads many items at once (read_items, azure-cosmos 4.10 and later).
HAS_READ_ITEMS = hasattr(ContainerProxy, "read_items")
NO_READ_ITEMS = f"azure-cosmos {azure.cosmos.__version__} has no read_items"


def check_read_many(target):
    """read_items (ReadMany) of every item and an absent one: each present item once, in its
    stored form; the absent one left out, as the SDK documents."""
    wanted = [(item["id"], item["pk"]) for item in target.items] + [("absent", "p0")]
    got = [strip_system(d) for d in target.container.read_items(wanted)]
    expect_results(got, target.items, ordered=False, context="read_items: ")


class HeaderCheck:
    """A response_hook that checks the charge header and that `etag` is the body's `_etag`."""

    def __init__(self):
        self.calls = 0

    def __call__(self, headers, body):
        self.calls += 1
        charge = headers.get("x-ms-request-charge")
        try:
            float(charge)
        except (TypeError, ValueError) as error:
            raise CheckFailed(f"x-ms-request-charge {charge!r} is not a number") from error
        if isinstance(body, dict) and "_etag" in body:
            expect(headers.get("etag") == body["_etag"], f"etag header {headers.get('etag')} != _etag {body['_etag']}")


def check_crud(container):
    """create, duplicate create, same id under another key, replace with etag, upsert, delete."""
    hook = HeaderCheck()
    first = {"id": "a b+é", "pk": "k1", "n": 1, "s": "first"}
    created = container.create_item(first, response_hook=hook)
    read = container.read_item(first["id"], partition_key="k1", response_hook=hook)
    expect(hook.calls == 2, f"response_hook called {hook.calls} times, not 2")
    expect(same(strip_system(read), first) and read["_etag"] == created["_etag"], f"read_item gave {show(read)}")

    expect_error(exceptions.CosmosResourceExistsError, 409, container.create_item, dict(first, n=2))
    other = dict(first, pk="k2", s="other key")
    container.create_item(other)
    expect(same(strip_system(container.read_item(first["id"], partition_key="k2")), other), "same id, key k2")
    expect(same(strip_system(container.read_item(first["id"], partition_key="k1")), first), "same id, key k1")

    replaced = container.replace_item(
        first["id"], dict(first, n=10), etag=created["_etag"], match_condition=MatchConditions.IfNotModified
    )
    expect(replaced["n"] == 10 and replaced["_etag"] != created["_etag"], f"replace_item gave {show(replaced)}")
    expect_error(
        exceptions.CosmosAccessConditionFailedError,
        412,
        container.replace_item,
        first["id"],
        dict(first, n=11),
        etag=created["_etag"],
        match_condition=MatchConditions.IfNotModified,
    )
    expect(container.read_item(first["id"], partition_key="k1")["n"] == 10, "a stale replace was applied")

    upserted = container.upsert_item({"id": "up", "pk": "k1", "n": 1}, response_hook=hook)
    expect(upserted["n"] == 1, f"upsert (new) gave {show(upserted)}")
    upserted = container.upsert_item({"id": "up", "pk": "k1", "n": 2}, response_hook=hook)
    expect(upserted["n"] == 2, f"upsert (existing) gave {show(upserted)}")
    expect(container.read_item("up", partition_key="k1")["n"] == 2, "upsert not applied")

    container.delete_item("up", partition_key="k1")
    expect_error(exceptions.CosmosResourceNotFoundError, 404, container.read_item, "up", partition_key="k1")
    expect_error(exceptions.CosmosResourceNotFoundError, 404, container.delete_item, "up", partition_key="k1")


def check_patch(container):
    container.create_item({"id": "patched", "pk": "k1", "n": 5, "s": "gone", "nested": {"keep": 1}})
    operations = [
        {"op": "incr", "path": "/n", "value": 3},
        {"op": "set", "path": "/nested/x", "value": "y"},
        {"op": "remove", "path": "/s"},
    ]
    patched = container.patch_item("patched", partition_key="k1", patch_operations=operations)
    want = {"id": "patched", "pk": "k1", "n": 8, "nested": {"keep": 1, "x": "y"}}
    expect(same(strip_system(patched), want), f"patch gave {show(patched)}, expected {show(want)}")
    expect(same(strip_system(container.read_item("patched", partition_key="k1")), want), "patch not stored")


def check_conditional_patch(container):
    operations = [{"op": "incr", "path": "/n", "value": 1}]
    expect_error(
        exceptions.CosmosAccessConditionFailedError,
        412,
        container.patch_item,
        "patched",
        partition_key="k1",
        patch_operations=operations,
        filter_predicate="FROM c WHERE c.n > 1000",
    )
    expect(container.read_item("patched", partition_key="k1")["n"] == 8, "a false condition's patch was applied")
    patched = container.patch_item(
        "patched", partition_key="k1", patch_operations=operations, filter_predicate="FROM c WHERE c.n > 1"
    )
    expect(patched["n"] == 9, f"a true condition's patch gave {show(patched)}")


def check_key_mismatch(container):
    """An item whose key differs from the request's partition key header is refused (400). The
    public methods take the key from the body; the connection's CreateItem takes it as an option."""
    link = container.container_link
    expect_error(
        exceptions.CosmosHttpResponseError,
        400,
        container.client_connection.CreateItem,
        link,
        {"id": "mismatch", "pk": "k1"},
        {"partitionKey": "k2"},
    )
    expect_error(exceptions.CosmosResourceNotFoundError, 404, container.read_item, "mismatch", partition_key="k1")


def check_batch(container):
    container.create_item({"id": "b-replace", "pk": "kb", "n": 1})
    container.create_item({"id": "b-delete", "pk": "kb", "n": 1})
    operations = [
        ("create", ({"id": "b-new", "pk": "kb", "n": 1},)),
        ("upsert", ({"id": "b-up", "pk": "kb", "n": 2},)),
        ("replace", ("b-replace", {"id": "b-replace", "pk": "kb", "n": 3})),
        ("read", ("b-replace",)),
        ("patch", ("b-new", [{"op": "incr", "path": "/n", "value": 10}])),
        ("delete", ("b-delete",)),
    ]
    results = container.execute_item_batch(operations, partition_key="kb")
    codes = [r.get("statusCode") for r in results]
    expect(codes == [201, 201, 200, 200, 200, 204], f"batch status codes {codes}")
    expect(results[3]["resourceBody"]["n"] == 3, f"the batch's read saw {show(results[3])}")
    expect(container.read_item("b-new", partition_key="kb")["n"] == 11, "batch create+patch not stored")
    expect_error(exceptions.CosmosResourceNotFoundError, 404, container.read_item, "b-delete", partition_key="kb")


def check_failing_batch(container):
    operations = [
        ("create", ({"id": "b-never", "pk": "kb", "n": 1},)),
        ("upsert", ({"id": "b-up", "pk": "kb", "n": 99},)),
        ("create", ({"id": "b-new", "pk": "kb", "n": 1},)),  # exists: 409 fails the whole batch
    ]
    try:
        container.execute_item_batch(operations, partition_key="kb")
    except exceptions.CosmosBatchOperationError as error:
        expect(error.error_index == 2, f"error_index {error.error_index}, not 2")
        codes = [r.get("statusCode") for r in error.operation_responses]
        expect(codes[2] == 409, f"operation status codes {codes}")
    else:
        raise CheckFailed("a batch with a duplicate create succeeded")
    expect_error(exceptions.CosmosResourceNotFoundError, 404, container.read_item, "b-never", partition_key="kb")
    expect(container.read_item("b-up", partition_key="kb")["n"] == 2, "a failed batch's upsert was applied")


# The documented bulk import procedure, as examples/scripts/ keeps it.
BULK_IMPORT = (Path(__file__).resolve().parents[3] / "examples" / "scripts" / "bulk_import.js").read_text()


def check_scripts(container):
    """Stored procedures, triggers and UDFs through the SDK's container.scripts (issue 26)."""
    scripts = container.scripts
    sproc = scripts.create_stored_procedure({"id": "bulkImport", "body": BULK_IMPORT})
    expect(sproc["id"] == "bulkImport" and sproc["_etag"], f"create_stored_procedure gave {show(sproc)}")
    docs = [{"id": f"s{i}", "pk": "ks", "n": i} for i in range(5)]
    count = scripts.execute_stored_procedure("bulkImport", partition_key="ks", params=[docs])
    expect(count == 5, f"bulkImport returned {count!r}")
    expect(container.read_item("s4", partition_key="ks")["n"] == 4, "bulkImport's items are not there")
    expect([p["id"] for p in scripts.list_stored_procedures()] == ["bulkImport"], "list_stored_procedures")

    # The SDK tests' logging check: the header is the URL-encoded log.
    scripts.create_stored_procedure(
        {"id": "log", "body": "function () { console.log('The value of %s is %s.', 'x', 1); }"}
    )
    scripts.execute_stored_procedure("log", partition_key="ks", enable_script_logging=True)
    headers = container.client_connection.last_response_headers
    logged = headers.get("x-ms-documentdb-script-log-results")
    expect(logged == "The%20value%20of%20x%20is%201.", f"script log header {logged!r}")

    # A throw: 400 with the thrown number as the substatus, nothing written.
    scripts.create_stored_procedure({"id": "thrower", "body": (
        "function () { var c = getContext().getCollection();"
        " c.createDocument(c.getSelfLink(), {id: 'never', pk: 'ks'}, function () {"
        " throw new Error(409, 'refused on purpose'); }); }")})
    try:
        scripts.execute_stored_procedure("thrower", partition_key="ks")
    except exceptions.CosmosHttpResponseError as error:
        expect(error.status_code == 400, f"status {error.status_code}")
        expect("refused on purpose" in str(error), f"message {error}")
    else:
        raise CheckFailed("a throwing procedure succeeded")
    expect_error(exceptions.CosmosResourceNotFoundError, 404, container.read_item, "never", partition_key="ks")

    # A pre-trigger on create, named through the SDK's option.
    scripts.create_trigger({
        "id": "t1",
        "body": "function() { var item = getContext().getRequest().getBody();"
                " item.id = item.id.toUpperCase() + 't1'; getContext().getRequest().setBody(item); }",
        "triggerType": documents.TriggerType.Pre,
        "triggerOperation": documents.TriggerOperation.All,
    })
    created = container.create_item({"id": "doc1", "pk": "ks"}, pre_trigger_include="t1")
    expect(created["id"] == "DOC1t1", f"the pre-trigger gave {show(created)}")

    # A UDF in a query.
    scripts.create_user_defined_function({"id": "double", "body": "function (x) { return 2 * x; }"})
    doubled = list(container.query_items("SELECT VALUE udf.double(c.n) FROM c WHERE c.pk = 'ks' AND c.n >= 3",
                                         partition_key="ks"))
    expect(sorted(doubled) == [6, 8], f"udf.double gave {doubled}")
    scripts.delete_user_defined_function("double")
    scripts.delete_trigger("t1")
    for name in ["bulkImport", "log", "thrower"]:
        scripts.delete_stored_procedure(name)
    expect(list(scripts.list_stored_procedures()) == [], "procedures left after deleting them")


def check_feed_ranges(target):
    """Queries scoped to each of read_feed_ranges() together return every item once."""
    ranges = list(target.container.read_feed_ranges())
    expect(ranges, "read_feed_ranges gave no range")
    got = []
    for feed_range in ranges:
        got += [strip_system(d) for d in target.container.query_items("SELECT * FROM c", feed_range=feed_range)]
    expect_results(got, target.items, ordered=False, context=f"over {len(ranges)} feed range(s): ")


def check_hierarchical_point_read(target):
    got = target.container.read_item("twice", partition_key=["t1", "u1"])
    expect(got["n"] == 101, f"read_item('twice', ['t1','u1']) gave {show(got)}")
    got = target.container.read_item("twice", partition_key=["t0", "u0"])
    expect(got["n"] == 100, f"read_item('twice', ['t0','u0']) gave {show(got)}")


def check_keyless_container(database):
    """A container created without a partition key holds items under no key (one logical partition)."""
    container = database.create_container_if_not_exists("keyless", partition_key=None)
    container.upsert_item({"id": "only", "n": 1})
    got = [strip_system(d) for d in container.query_items("SELECT * FROM c", enable_cross_partition_query=True)]
    expect(same(got, [{"id": "only", "n": 1}]), f"query gave {show(got)}")


def check_order_by_without_composite(target):
    expect_error(
        exceptions.CosmosHttpResponseError,
        400,
        lambda: list(
            target.container.query_items("SELECT * FROM c ORDER BY c.cat, c.n DESC", enable_cross_partition_query=True)
        ),
    )


# ---------------------------------------------------------------------------------------------
# Queries


def check_query_at(target, sql, parameters, scope, size, expected):
    """The query's results at page size `size` equal the oracle's; with a size, its pages are at
    most that long, and pages 1-2 followed by a new iterator resumed from page 2's token give the
    same results again."""
    ordered = ORDER_BY.search(sql) is not None
    options = {"enable_cross_partition_query": True, **scope}
    if parameters is not None:
        options["parameters"] = parameters
    if size is not None:
        options["max_item_count"] = size
    container = target.container
    full = [strip_system(d) for d in container.query_items(sql, **options)]
    want = expected()
    expect_results(full, want, ordered)
    if size is None:
        return

    def page_list(page):
        items = [strip_system(d) for d in page]
        expect(len(items) <= size, f"a page of {len(items)} items at max_item_count={size}")
        return items

    pager = container.query_items(sql, **options).by_page()
    head, token = [], None
    for _ in range(2):
        page = next(pager, None)
        if page is None:
            break
        head += page_list(page)
        token = pager.continuation_token
        if token is None:
            break
    rest = []
    if token is not None:
        for page in container.query_items(sql, **options).by_page(token):
            rest += page_list(page)
    expect_results(head + rest, full, ordered, "pages 1-2 and the rest resumed from page 2's token: ")


def query_checks(suite, oracle, label, target, sql, parameters=None, scope=None, oracle_key=None, oracle_data=None,
                 skip=None):
    """Runs `sql` on `target` at every page size against the oracle's answer.

    `scope` holds the SDK's keywords that narrow the query (partition_key, feed_range); the oracle
    gets the same narrowing as `oracle_key` (its --pk) or as `oracle_data`, an NDJSON file of just
    the items in scope (a key prefix's, which --pk cannot select)."""
    answer = {}

    def expected():
        if "value" not in answer:
            data = target.data if oracle_data is None else oracle_data
            answer["value"] = oracle.answer(data, target.keys, sql, parameters, oracle_key, target.properties)
        return answer["value"]

    for size in PAGE_SIZES:
        suite.check(f"query {label} [max_item_count={size}]", check_query_at, target, sql, parameters, scope or {},
                    size, expected, skip=skip)


def mixed_query_checks(suite, oracle, target):
    for label, sql in MIXED_QUERIES:
        query_checks(suite, oracle, label, target, sql)
    parameters = [{"name": "@cat", "value": "red"}, {"name": "@min", "value": 20}]
    query_checks(suite, oracle, "parameters", target, "SELECT * FROM c WHERE c.cat = @cat AND c.n > @min", parameters)
    ids = [{"name": "@ids", "value": ["item-000", "a b+é", "日本語", "absent"]}]
    query_checks(suite, oracle, "array parameter", target, "SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(@ids, c.id)",
                 ids)
    query_checks(suite, oracle, "partition_key", target, "SELECT * FROM c", scope={"partition_key": "p1"},
                 oracle_key="p1")
    query_checks(suite, oracle, "partition_key COUNT", target, "SELECT VALUE COUNT(1) FROM c",
                 scope={"partition_key": "p2"}, oracle_key="p2")
    query_checks(suite, oracle, "partition_key ORDER BY", target, "SELECT c.id FROM c ORDER BY c.id DESC",
                 scope={"partition_key": "p3"}, oracle_key="p3")
    feed_range = suite.check("feed ranges: feed_range_from_partition_key",
                             target.container.feed_range_from_partition_key, "p4")
    query_checks(suite, oracle, "feed_range of a key", target, "SELECT * FROM c", scope={"feed_range": feed_range},
                 oracle_key="p4", skip=None if QUERY_TAKES_FEED_RANGE else NO_FEED_RANGE)
    suite.check("feed ranges: the container's feed ranges together hold every item", check_feed_ranges, target,
                skip=None if QUERY_TAKES_FEED_RANGE else NO_FEED_RANGE)


def hierarchical_query_checks(suite, oracle, target):
    query_checks(suite, oracle, "hierarchical full key", target, "SELECT * FROM c",
                 scope={"partition_key": ["t1", "u1"]}, oracle_key=["t1", "u1"])
    prefix = oracle.write("hierarchical-t1", [item for item in target.items if item["t"] == "t1"])
    query_checks(suite, oracle, "hierarchical prefix", target, "SELECT * FROM c", scope={"partition_key": ["t1"]},
                 oracle_data=prefix)
    query_checks(suite, oracle, "hierarchical prefix ORDER BY", target, "SELECT c.id, c.n FROM c ORDER BY c.n",
                 scope={"partition_key": ["t1"]}, oracle_data=prefix)
    feed_range = suite.check("feed ranges: feed_range_from_partition_key (prefix)",
                             target.container.feed_range_from_partition_key, ["t1"])
    query_checks(suite, oracle, "hierarchical feed_range of a prefix", target, "SELECT * FROM c",
                 scope={"feed_range": feed_range}, oracle_data=prefix,
                 skip=None if QUERY_TAKES_FEED_RANGE else NO_FEED_RANGE)
    query_checks(suite, oracle, "hierarchical GROUP BY", target,
                 "SELECT c.t, c.u, COUNT(1) AS cnt, SUM(c.n) AS total FROM c GROUP BY c.t, c.u")
    query_checks(suite, oracle, "hierarchical key-pinned WHERE", target,
                 'SELECT * FROM c WHERE c.t = "t2" AND c.u = "u3"')
    query_checks(suite, oracle, "hierarchical prefix-pinned WHERE", target,
                 'SELECT VALUE c.id FROM c WHERE c.t = "t0"')


# ---------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", required=True, help="the server's URL, http://127.0.0.1:PORT/")
    parser.add_argument("--key", required=True, help="the account key")
    parser.add_argument("--bin", required=True, help="the cosmoql binary (the oracle: `BIN query`)")
    parser.add_argument("--split-only", action="store_true",
                        help="only the split check (for a server started with --retired-ranges gone, where the SDK "
                             "repairs its requests for the retired range itself)")
    args = parser.parse_args()
    print(f"python sdk acceptance: azure-cosmos {azure.cosmos.__version__} against {args.endpoint}", flush=True)

    suite = Suite()
    with tempfile.TemporaryDirectory(prefix="cosmoql-sdk-") as workdir:
        oracle = Oracle(args.bin, workdir)
        if args.split_only:
            run_split_only(suite, args)
        else:
            run(suite, oracle, args)
    print(f"{suite.expected_failures} expected failures (features not implemented yet), {suite.skipped} skipped")
    print(f"python sdk acceptance: {suite.passed} checks passed, {suite.failed} failed", flush=True)
    status = 0 if suite.failed == 0 else 1
    if suite.hung:
        os._exit(status)  # a hung check's thread would keep the interpreter's shutdown waiting
    return status


def connect_and_create_database(suite, args, prefix, before_database=()):
    """The client (a check), then the checks `before_database` with the endpoint and key, then a
    database named for the run (a check); `(client, database)`, None where a check failed."""
    client = suite.check("connect: CosmosClient(url, credential=key)", check_connect_key, args.endpoint, args.key)
    for label, check in before_database:
        suite.check(label, check, args.endpoint, args.key)
    if client is None:
        return None, None
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    return client, suite.check("databases: create_database_if_not_exists twice", check_create_database, client, name)


def run_split_only(suite, args):
    client, database = connect_and_create_database(suite, args, "sdk-split")
    if database is None:
        return
    suite.check("split: change feed and paged query tokens from before a split, retired range gone (410/1002)",
                check_split, database)
    suite.check("databases: delete", check_delete_database, client, database)


def run(suite, oracle, args):
    client, database = connect_and_create_database(suite, args, "sdk-acceptance", (
        ("connect: CosmosClient.from_connection_string", check_connect_string),
        ("connect: a wrong key gives 401", check_wrong_key),
    ))
    if database is None:
        return
    suite.check("databases: list_databases", check_list_databases, client, database.id)
    suite.check("databases: read", check_read_database, database)
    suite.check("databases: query_databases", check_query_databases, client, database.id)

    keyed = PartitionKey(path="/pk")
    items = suite.check("containers: /pk", check_create_container, database, "items", keyed)
    crud = suite.check("containers: /pk for CRUD", check_create_container, database, "crud", keyed)
    composite = suite.check(
        "containers: composite index", check_create_container, database, "composite", keyed, COMPOSITE_POLICY
    )
    hierarchical = suite.check(
        "containers: hierarchical /t, /u", check_create_container, database, "hierarchical",
        PartitionKey(path=["/t", "/u"], kind="MultiHash"),
    )
    vectors = suite.check(
        "containers: vector indexes", check_create_container, database, "vectors", keyed, VECTOR_INDEXING,
        VECTOR_POLICY,
    )
    if vectors is not None:
        suite.check("containers: vector embedding policy", check_vector_policy, vectors)
    suite.check("containers: list_containers", check_list_containers, database,
                ["items", "crud", "composite", "hierarchical", "vectors"])
    suite.check("containers: query_containers", check_query_containers, database, "items")
    suite.check("containers: without a partition key", check_keyless_container, database)
    suite.check("throughput: get_throughput", check_get_throughput, database)
    suite.check("throughput: replace_throughput", check_replace_throughput, database)
    suite.check("containers: analytical_storage_ttl", check_analytical_storage_ttl, database)
    suite.check("throughput: 429s retried by the SDK's policy, or surfaced with retry-after", check_throttling,
                database, args.endpoint, args.key)
    suite.check("split: change feed and paged query tokens from before a split", check_split, database)

    if crud is not None:
        suite.check("items: create, read, duplicate, same id other key, replace with etag, upsert, delete",
                    check_crud, crud)
        suite.check("items: patch incr, set, remove", check_patch, crud)
        suite.check("items: conditional patch (filter_predicate)", check_conditional_patch, crud)
        suite.check("items: body key differs from the request's key -> 400", check_key_mismatch, crud)
        suite.check("batch: execute_item_batch", check_batch, crud)
        suite.check("batch: a failing batch applies nothing", check_failing_batch, crud)
        suite.check("scripts: stored procedures, triggers and UDFs (container.scripts)", check_scripts, crud)

    mixed = mixed_items()
    if items is not None:
        target = Target(items, mixed, oracle.write("items", mixed), ["/pk"])
        suite.check(f"items: create_item x{len(mixed)}", check_load, target)
        suite.check("items: read_item each", check_point_reads, target)
        suite.check("items: read_items (ReadMany), one absent", check_read_many, target,
                    skip=None if HAS_READ_ITEMS else NO_READ_ITEMS)
        suite.check("items: read_all_items", check_read_all, target)
        suite.check("change feed: query_items_change_feed", check_change_feed, target)
        suite.check("query: ORDER BY two paths without a composite index -> 400", check_order_by_without_composite,
                    target)
        mixed_query_checks(suite, oracle, target)

    if composite is not None:
        properties = {"id": "composite", "partitionKey": dict(keyed), "indexingPolicy": COMPOSITE_POLICY}
        target = Target(composite, mixed, oracle.write("composite", mixed), ["/pk"],
                        oracle.write_properties("composite", properties))
        suite.check(f"items: create_item x{len(mixed)} (composite)", check_load, target)
        for label, sql in COMPOSITE_QUERIES:
            query_checks(suite, oracle, label, target, sql)

    if vectors is not None:
        rows = vector_items()
        properties = {"id": "vectors", "partitionKey": dict(keyed), "indexingPolicy": VECTOR_INDEXING,
                      "vectorEmbeddingPolicy": VECTOR_POLICY}
        target = Target(vectors, rows, oracle.write("vectors", rows), ["/pk"],
                        oracle.write_properties("vectors", properties))
        suite.check(f"items: create_item x{len(rows)} (vectors)", check_load, target)
        for label, sql in VECTOR_QUERIES:
            query_checks(suite, oracle, label, target, sql)

    if hierarchical is not None:
        rows = hierarchical_items()
        target = Target(hierarchical, rows, oracle.write("hierarchical", rows), ["/t", "/u"])
        suite.check(f"items: create_item x{len(rows)} (hierarchical)", check_load, target)
        suite.check("items: hierarchical point reads", check_hierarchical_point_read, target)
        hierarchical_query_checks(suite, oracle, target)

    suite.check("databases: delete", check_delete_database, client, database)


if __name__ == "__main__":
    sys.exit(main())
