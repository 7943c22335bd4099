"""What the Python SDK suites share: result comparison and the 30 s guard.

Results are compared as the conformance runner (tests/conformance.rs) compares them: numbers by
value (`20.0` equals `20`; booleans are not numbers), objects ignoring key order, arrays in order,
and a result list in order or as a multiset.
"""

import json
import threading

# The properties the service adds to every stored item; stripped before comparing.
SYSTEM_PROPERTIES = ("_rid", "_ts", "_etag", "_self", "_attachments")

# A check (one query and its pages, one CRUD step) that has not finished by then has hung.
GUARD_SECONDS = 30


def strip_system(value):
    """`value` without the service's system properties, at any depth (as the Rust runners strip
    them: `SELECT c AS doc` nests an item's)."""
    if isinstance(value, dict):
        return {k: strip_system(v) for k, v in value.items() if k not in SYSTEM_PROPERTIES}
    if isinstance(value, list):
        return [strip_system(v) for v in value]
    return value


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def same(a, b, tolerance=0.0):
    """Equality of two JSON values, numbers by value (within `tolerance`, relative, if given)."""
    if is_number(a) and is_number(b):
        # As doubles, as the service and the Rust runners hold every number.
        a, b = float(a), float(b)
        return a == b or (tolerance > 0 and abs(a - b) <= tolerance * max(abs(a), abs(b), 1.0))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y, tolerance) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(v, b[k], tolerance) for k, v in a.items())
    return type(a) is type(b) and a == b


def unmatched(actual, expected, tolerance=0.0):
    """The multiset difference: (expected results that no actual one matched, actual results that
    matched no expected one)."""
    missing = list(expected)
    unexpected = []
    for a in actual:
        match = next((i for i, e in enumerate(missing) if same(a, e, tolerance)), None)
        if match is None:
            unexpected.append(a)
        else:
            missing.pop(match)
    return missing, unexpected


def same_results(actual, expected, ordered, tolerance=0.0):
    """Whether two result lists match: in order, or as multisets."""
    if len(actual) != len(expected):
        return False
    if ordered:
        return all(same(a, e, tolerance) for a, e in zip(actual, expected))
    return unmatched(actual, expected, tolerance) == ([], [])


def difference(actual, expected, ordered, tolerance=0.0):
    """How two result lists that do not match differ, in a line or two."""
    missing, unexpected = unmatched(actual, expected, tolerance)
    if not missing and not unexpected:
        at = next(i for i, (a, e) in enumerate(zip(actual, expected)) if not same(a, e, tolerance))
        return (
            f"the same results in another order: at {at} expected {show(expected[at], 300)}, "
            f"got {show(actual[at], 300)}"
        )
    return (
        f"{len(actual)} results where {len(expected)} were expected; "
        f"missing {show(missing, 600)}; unexpected {show(unexpected, 600)}"
    )


def show(value, limit=2000):
    """Compact JSON of `value` for a failure message, cut at `limit` characters."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def run_guarded(fn, *args):
    """Runs `fn(*args)` in a daemon thread for at most GUARD_SECONDS.

    Returns (value, error, hung): the error is the exception `fn` raised. A hung call is left
    running (a daemon thread does not keep the process alive); the caller must end the process
    with os._exit once it has printed its summary, since the interpreter's shutdown may still wait
    on the SDK's own threads.
    """
    outcome = {}

    def target():
        try:
            outcome["value"] = fn(*args)
        except BaseException as error:  # reported as the check's failure
            outcome["error"] = error

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(GUARD_SECONDS)
    if worker.is_alive():
        return None, None, True
    return outcome.get("value"), outcome.get("error"), False
