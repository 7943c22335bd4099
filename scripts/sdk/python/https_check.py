"""azure-cosmos over https against `cosmoql serve --tls --cert-out FILE`.

    https_check.py --endpoint https://127.0.0.1:PORT/ --key KEY --cert FILE

Trusting the certificate the server wrote (an `ssl_config` whose CA file is FILE, so the SDK checks
the chain and the host name 127.0.0.1 as it would any server's; without an `ssl_config` it skips
verification for localhost and 127.0.0.1, as for the emulator): creates a database and a container,
writes items, reads one back, runs a cross-partition GROUP BY and a key-scoped ORDER BY, each
answer compared with the known one. With an `ssl_config` that does not name it, the SDK must
refuse the connection (an unknown issuer). Prints a line per check and `python https: N checks passed, M failed`;
exits 1 if any failed.
"""

import argparse
import os
import sys

from azure.core.exceptions import ServiceRequestError
from azure.cosmos import CosmosClient, PartitionKey
from azure.cosmos.documents import SSLConfiguration

from common import run_guarded, show, strip_system


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--cert", required=True)
    args = parser.parse_args()
    passed, failed = 0, 0

    def check(name, fn):
        nonlocal passed, failed
        _, error, hung = run_guarded(fn)
        if hung:
            print(f"FAIL  {name}: no answer within the guard")
            failed += 1
        elif error is not None:
            print(f"FAIL  {name}: {type(error).__name__}: {error}")
            failed += 1
        else:
            print(f"ok    {name}")
            passed += 1

    # The SDK skips verification for localhost and 127.0.0.1 (as for the emulator) unless it is
    # given an SSL configuration: with one, it verifies against the CA file it names.
    trusted = SSLConfiguration()
    trusted.SSLCaCerts = args.cert
    client = CosmosClient(args.endpoint, credential=args.key, ssl_config=trusted)
    state = {}

    def account():
        props = client.get_database_account()
        assert props.WritableLocations[0]["databaseAccountEndpoint"] == args.endpoint, show(props.WritableLocations)

    def create():
        db = client.create_database("https_check")
        state["items"] = db.create_container("orders", PartitionKey("/customer"))
        for i in range(20):
            state["items"].create_item({"id": f"o{i}", "customer": f"c{i % 4}", "total": i})

    def read():
        item = state["items"].read_item("o5", partition_key="c1")
        assert strip_system(item) == {"id": "o5", "customer": "c1", "total": 5}, show(item)

    def group_by():
        rows = list(
            state["items"].query_items(
                "SELECT c.customer, SUM(c.total) AS total FROM c GROUP BY c.customer",
                enable_cross_partition_query=True,
            )
        )
        got = sorted((r["customer"], r["total"]) for r in rows)
        assert got == [("c0", 40), ("c1", 45), ("c2", 50), ("c3", 55)], show(rows)

    def ordered():
        rows = list(
            state["items"].query_items(
                "SELECT VALUE c.total FROM c ORDER BY c.total DESC", partition_key="c2", max_item_count=2
            )
        )
        assert rows == [18, 14, 10, 6, 2], show(rows)

    def untrusted():
        try:
            # The client reads the account as it is made.
            strict = SSLConfiguration()
            CosmosClient(
                args.endpoint, credential=args.key, ssl_config=strict, retry_total=0, retry_connect=0
            ).get_database_account()
        except ServiceRequestError as e:
            assert "CERTIFICATE_VERIFY_FAILED" in str(e) or "certificate" in str(e).lower(), str(e)
            return
        raise AssertionError("the SDK connected without trusting the certificate")

    check("https: the account, its locations with https", account)
    check("https: create a database, a container and 20 items", create)
    check("https: read an item", read)
    check("https: GROUP BY across partitions", group_by)
    check("https: ORDER BY in one partition, pages of 2", ordered)
    check("https: without the certificate the SDK refuses the server", untrusted)
    print(f"python https: {passed} checks passed, {failed} failed")
    sys.stdout.flush()
    # A hung check's thread may still run: end without waiting for it.
    os._exit(1 if failed else 0)


if __name__ == "__main__":
    main()
