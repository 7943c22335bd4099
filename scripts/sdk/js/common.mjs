// What the JavaScript SDK suite shares with the Python one (scripts/sdk/python/common.py): result
// comparison and the 30 s guard.
//
// Results are compared as the conformance runner (tests/conformance.rs) compares them: numbers by
// value (every JavaScript number is a double, so `20.0` equals `20`; booleans are not numbers),
// objects ignoring key order, arrays in order, and a result list in order or as a multiset.

// The properties the service adds to every stored item; stripped before comparing.
export const SYSTEM_PROPERTIES = new Set(["_rid", "_ts", "_etag", "_self", "_attachments"]);

// A check (one query and its pages, one CRUD step) that has not finished by then has hung.
export const GUARD_SECONDS = 30;

/** `value` without the service's system properties (and `also`), at any depth (as the Rust runners
 * strip them: `SELECT c AS doc` nests an item's). */
export function stripSystem(value, also = []) {
  if (Array.isArray(value)) {
    return value.map((v) => stripSystem(v, also));
  }
  if (value !== null && typeof value === "object") {
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      if (!SYSTEM_PROPERTIES.has(k) && !also.includes(k)) {
        out[k] = stripSystem(v, also);
      }
    }
    return out;
  }
  return value;
}

function kind(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** Equality of two JSON values, numbers by value. */
export function same(a, b) {
  const ka = kind(a);
  if (ka !== kind(b)) return false;
  if (ka === "array") {
    return a.length === b.length && a.every((x, i) => same(x, b[i]));
  }
  if (ka === "object") {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same(a[k], b[k]))
    );
  }
  return a === b;
}

/** The multiset difference: [expected results that no actual one matched, actual results that
 * matched no expected one]. */
export function unmatched(actual, expected) {
  const missing = [...expected];
  const unexpected = [];
  for (const a of actual) {
    const at = missing.findIndex((e) => same(a, e));
    if (at < 0) {
      unexpected.push(a);
    } else {
      missing.splice(at, 1);
    }
  }
  return [missing, unexpected];
}

/** Whether two result lists match: in order, or as multisets. */
export function sameResults(actual, expected, ordered) {
  if (actual.length !== expected.length) return false;
  if (ordered) return actual.every((a, i) => same(a, expected[i]));
  const [missing, unexpected] = unmatched(actual, expected);
  return missing.length === 0 && unexpected.length === 0;
}

/** How two result lists that do not match differ, in a line or two. */
export function difference(actual, expected, ordered) {
  const [missing, unexpected] = unmatched(actual, expected);
  if (missing.length === 0 && unexpected.length === 0) {
    const at = actual.findIndex((a, i) => !same(a, expected[i]));
    return (
      `the same results in another order: at ${at} expected ${show(expected[at], 300)}, ` +
      `got ${show(actual[at], 300)}`
    );
  }
  return (
    `${actual.length} results where ${expected.length} were expected; ` +
    `missing ${show(missing, 600)}; unexpected ${show(unexpected, 600)}`
  );
}

function sorted(value) {
  if (Array.isArray(value)) return value.map(sorted);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sorted(value[k])]),
    );
  }
  return value;
}

/** Compact JSON of `value` for a failure message, cut at `limit` characters. */
export function show(value, limit = 2000) {
  const text = value === undefined ? "undefined" : JSON.stringify(sorted(value));
  return text.length <= limit ? text : `${text.slice(0, limit)}... (${text.length} characters)`;
}

/** The guard's failure: the check did not settle within GUARD_SECONDS. */
export class Hang extends Error {}

/** Runs the async `fn` for at most GUARD_SECONDS; a hung call is left running (the caller ends the
 * process with process.exit once it has printed its summary). */
export async function runGuarded(fn) {
  let timer;
  const guard = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new Hang(`no answer within the ${GUARD_SECONDS} s guard (a hang)`)),
      GUARD_SECONDS * 1000,
    );
  });
  try {
    return await Promise.race([Promise.resolve().then(fn), guard]);
  } finally {
    clearTimeout(timer);
  }
}
