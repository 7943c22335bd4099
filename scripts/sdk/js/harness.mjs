// The JavaScript SDK acceptance suite's harness: expectations, the tally of checks, the HTTP
// log, the oracle (the embedded engine's answers), and the target a group of checks runs on
// (sdk_acceptance.mjs runs them).

import { execFileSync } from "node:child_process";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { GUARD_SECONDS, Hang, difference, runGuarded, same, sameResults, stripSystem } from "./common.mjs";

// Checks of features the server does not implement yet, and which: a failure there is printed as
// `xfail` and not counted; a pass is counted as a failure, so that the entry is removed.
export const NOT_IMPLEMENTED = {};

export class CheckFailed extends Error {}

export function expect(condition, message) {
  if (!condition) {
    throw new CheckFailed(message);
  }
}

export function expectResults(actual, expected, ordered, context = "") {
  if (!sameResults(actual, expected, ordered)) {
    throw new CheckFailed(context + difference(actual, expected, ordered));
  }
}

/** Awaits `fn()`, which must fail with HTTP `status` (the SDK's ErrorResponse `code`); returns the
 * error. */
export async function expectError(status, fn, what = "the call") {
  try {
    await fn();
  } catch (error) {
    if (error instanceof CheckFailed || error instanceof Hang) throw error;
    expect(error.code === status, `${what}: expected status ${status}, got ${describe(error)}`);
    return error;
  }
  throw new CheckFailed(`${what}: expected status ${status}, but it succeeded`);
}

/** One line (or a few) saying what went wrong. */
export function describe(error) {
  if (error instanceof CheckFailed || error instanceof Hang) {
    return error.message;
  }
  if (error && typeof error.code === "number") {
    const message = String(error.body?.message ?? error.message ?? "").split("\n")[0];
    const substatus = error.substatus !== undefined ? ` substatus ${error.substatus}` : "";
    return `${error.name ?? "ErrorResponse"} status ${error.code}${substatus}: ${message.slice(0, 400)}`;
  }
  const cause = error?.cause ? ` (cause: ${describe(error.cause)})` : "";
  const frame = String(error?.stack ?? "")
    .split("\n")
    .slice(1)
    .find((line) => line.includes("sdk_acceptance.mjs"));
  const where = frame ? ` at ${frame.trim().replace(/^at /, "").replace(/.*\//, "").replace(/\)$/, "")}` : "";
  return `${error?.name ?? "Error"}${where}: ${error?.message ?? error}${cause}`;
}

// ---------------------------------------------------------------------------------------------
// The run's state: the tally, the oracle, the HTTP log.

export class Suite {
  constructor(httpLog) {
    this.passed = 0;
    this.failed = 0;
    this.expectedFailures = 0;
    this.skipped = 0;
    this.httpLog = httpLog;
  }

  /** Runs one check under the guard, unless `skip` says why this mode cannot; returns its value
   * (undefined when it failed or was skipped). A check may return a Noted to add a note to its
   * `ok` line. A hung check is left running: main() ends the process once the summary is out. */
  async check(name, fn, { skip } = {}) {
    if (skip) {
      this.skipped += 1;
      console.log(`skip  ${name}: ${skip}`);
      return undefined;
    }
    this.httpLog?.mark(name);
    let failure;
    let outcome;
    try {
      outcome = await runGuarded(fn);
    } catch (error) {
      failure = describe(error);
    }
    const missing = NOT_IMPLEMENTED[name];
    if (missing && failure) {
      this.expectedFailures += 1;
      console.log(`xfail ${name}: not implemented yet (${missing}): ${failure}`);
    } else if (missing) {
      this.failed += 1;
      console.log(`FAIL  ${name}: passes now; remove it from NOT_IMPLEMENTED`);
    } else if (failure) {
      this.failed += 1;
      console.log(`FAIL  ${name}: ${failure}`);
    } else {
      this.passed += 1;
      const note = outcome instanceof Noted ? ` (${outcome.note})` : "";
      console.log(`ok    ${name}${note}`);
    }
    return outcome instanceof Noted ? outcome.value : outcome;
  }
}

/** A check's value with a note for its `ok` line. */
export class Noted {
  constructor(value, note) {
    this.value = value;
    this.note = note;
  }
}

/** Every request the SDK sends and its answer, written to a file (--http-log), under the name of
 * the check that made it. */
export class HttpLog {
  constructor(file) {
    this.file = file;
    writeFileSync(file, "");
  }

  mark(name) {
    appendFileSync(this.file, `\n### ${name}\n`);
  }

  static headers(headers, skip) {
    return Object.entries(headers.toJSON())
      .filter(([k]) => !skip.includes(k.toLowerCase()))
      .map(([k, v]) => `${k}: ${v}`)
      .join(" | ");
  }

  static body(body, limit = 1500) {
    if (body === undefined || body === null) return "";
    const text = typeof body === "string" ? body : Buffer.isBuffer(body) ? body.toString("utf8") : String(body);
    return text.length <= limit ? text : `${text.slice(0, limit)}... (${text.length} characters)`;
  }

  /** An HttpClient (@azure/core-rest-pipeline) that logs and forwards to `inner`. */
  wrap(inner) {
    return {
      sendRequest: async (request) => {
        const headers = HttpLog.headers(request.headers, ["authorization", "x-ms-date", "user-agent", "accept"]);
        appendFileSync(this.file, `>> ${request.method} ${request.url} | ${headers}\n`);
        if (request.body) appendFileSync(this.file, `   body ${HttpLog.body(request.body)}\n`);
        try {
          const response = await inner.sendRequest(request);
          const answer = HttpLog.headers(response.headers, [
            "date",
            "content-length",
            "x-ms-activity-id",
            "connection",
          ]);
          appendFileSync(this.file, `<< ${response.status} | ${answer}\n`);
          if (response.bodyAsText) appendFileSync(this.file, `   body ${HttpLog.body(response.bodyAsText)}\n`);
          return response;
        } catch (error) {
          appendFileSync(this.file, `<< transport error: ${error.message}\n`);
          throw error;
        }
      },
    };
  }
}

/** The embedded engine: `BIN query` run once per query over an NDJSON copy of the items. */
export class Oracle {
  constructor(binary, workdir) {
    this.binary = binary;
    this.workdir = workdir;
  }

  /** The items as an NDJSON file named after `name`. */
  write(name, items) {
    const path = join(this.workdir, `${name}.ndjson`);
    writeFileSync(path, items.map((item) => JSON.stringify(item) + "\n").join(""), "utf8");
    return path;
  }

  writeProperties(name, properties) {
    const path = join(this.workdir, `${name}.container.json`);
    writeFileSync(path, JSON.stringify(properties), "utf8");
    return path;
  }

  answer(data, keys, spec, partitionKey, properties) {
    const args = ["query", "--data", data];
    for (const key of keys) args.push("--partition-key", key);
    if (properties !== undefined) args.push("--container", properties);
    for (const parameter of spec.parameters ?? []) {
      args.push("--param", `${parameter.name}=${JSON.stringify(parameter.value)}`);
    }
    if (partitionKey !== undefined) args.push("--pk", JSON.stringify(partitionKey));
    args.push(spec.query);
    let stdout;
    try {
      stdout = execFileSync(this.binary, args, {
        encoding: "utf8",
        timeout: GUARD_SECONDS * 1000,
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (error) {
      throw new CheckFailed(
        `the embedded engine refused the query: ${String(error.stderr ?? error.message)
          .trim()
          .slice(0, 600)}`,
      );
    }
    return stripSystem(JSON.parse(stdout));
  }
}

/** A container the suite wrote, and the same items as the oracle loads them. */
export class Target {
  constructor(container, items, data, keys, properties) {
    Object.assign(this, { container, items, data, keys, properties });
  }
}

export function connectionString(endpoint, key) {
  return `AccountEndpoint=${endpoint};AccountKey=${key};`;
}
