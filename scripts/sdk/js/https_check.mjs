// @azure/cosmos over https against `cosmoql serve --tls --cert-out FILE`:
//
//   node https_check.mjs --endpoint https://127.0.0.1:PORT/ --key KEY --cert FILE --modules DIR
//
// Trusting the certificate the server wrote (an https.Agent whose `ca` is FILE, as a program
// passes `agent` in CosmosClientOptions; NODE_EXTRA_CA_CERTS=FILE does the same process-wide):
// creates a database and a container, writes items, reads one back, runs a cross-partition GROUP
// BY and a key-scoped ORDER BY, each answer compared with the known one. With the default agent
// the SDK must refuse the server (a self-signed certificate it does not trust). Prints a line per
// check and `js https: N checks passed, M failed`; exits 1 if any failed.

import { readFileSync } from "node:fs";
import { Agent } from "node:https";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";

import { runGuarded, same, show, stripSystem } from "./common.mjs";

const { values: args } = parseArgs({
  options: {
    endpoint: { type: "string" },
    key: { type: "string" },
    cert: { type: "string" },
    modules: { type: "string" },
  },
});
const require = createRequire(join(dirname(args.modules), "package.json"));
const { CosmosClient } = require("@azure/cosmos");

let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await runGuarded(fn);
    console.log(`ok    ${name}`);
    passed += 1;
  } catch (error) {
    console.log(`FAIL  ${name}: ${error?.message ?? error}`);
    failed += 1;
  }
}
function expect(condition, message) {
  if (!condition) throw new Error(message);
}

const agent = new Agent({ ca: readFileSync(args.cert, "utf8"), keepAlive: true });
const client = new CosmosClient({ endpoint: args.endpoint, key: args.key, agent });
let items;

await check("https: the account, its locations with https", async () => {
  const { resource } = await client.getDatabaseAccount();
  const endpoint = resource.writableLocations[0]?.databaseAccountEndpoint;
  expect(endpoint === args.endpoint, `writable location ${endpoint}`);
});
await check("https: create a database, a container and 20 items", async () => {
  const { database } = await client.databases.create({ id: "https_check" });
  ({ container: items } = await database.containers.create({ id: "orders", partitionKey: "/customer" }));
  for (let i = 0; i < 20; i++) {
    await items.items.create({ id: `o${i}`, customer: `c${i % 4}`, total: i });
  }
});
await check("https: read an item", async () => {
  const { resource } = await items.item("o5", "c1").read();
  expect(same(stripSystem(resource), { id: "o5", customer: "c1", total: 5 }), show(resource));
});
await check("https: GROUP BY across partitions", async () => {
  const { resources } = await items.items
    .query("SELECT c.customer, SUM(c.total) AS total FROM c GROUP BY c.customer")
    .fetchAll();
  const got = resources.map((r) => [r.customer, r.total]).sort();
  const want = [["c0", 40], ["c1", 45], ["c2", 50], ["c3", 55]];
  expect(same(got, want), show(resources));
});
await check("https: ORDER BY in one partition, pages of 2", async () => {
  const { resources } = await items.items
    .query("SELECT VALUE c.total FROM c ORDER BY c.total DESC", { partitionKey: "c2", maxItemCount: 2 })
    .fetchAll();
  expect(same(resources, [18, 14, 10, 6, 2]), show(resources));
});
await check("https: without the certificate the SDK refuses the server", async () => {
  const strict = new CosmosClient({ endpoint: args.endpoint, key: args.key, connectionPolicy: { retryOptions: { maxRetryAttemptCount: 0 } } });
  try {
    await strict.getDatabaseAccount();
  } catch (error) {
    const text = `${error?.message} ${error?.code} ${error?.cause?.code ?? ""}`;
    expect(/self[- ]signed|certificate|CERT/i.test(text), `refused, but not for the certificate: ${text}`);
    return;
  }
  throw new Error("the SDK connected without trusting the certificate");
});
agent.destroy();
console.log(`js https: ${passed} checks passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
