// The JavaScript SDK acceptance suite's data: the items each container gets, the container
// policies, and the queries run over them with what the SDK's own merge is known not to do
// (sdk_acceptance.mjs runs them).

/** 60 items over 5 logical partitions with mixed values: `n` a number (integer, half, negative),
 * null or missing; `s` a string or missing; nested objects of changing shape, arrays and unicode
 * ids (the Python suite's items, fewer). */
export function mixedItems() {
  const cats = ["red", "green", "blue", "Red", "grün"];
  const specialIds = { 11: "a b+é", 22: "ü-ñ 😀", 33: "日本語", 44: "with'quote", 55: "semi;colon=&" };
  const items = [];
  for (let i = 0; i < 60; i++) {
    const item = {
      id: specialIds[i] ?? `item-${String(i).padStart(3, "0")}`,
      pk: `p${i % 5}`,
      cat: cats[Math.floor(i / 3) % 5],
    };
    const kind = i % 10;
    if (kind === 5) item.n = i + 0.5;
    else if (kind === 7) item.n = null;
    else if (kind === 9) item.n = -i;
    else if (kind !== 3) item.n = i;
    if (i % 3 === 0) item.s = `s${i}`;
    else if (i % 3 === 1) item.s = `é${i}`;
    if (i % 4 === 1) {
      item.nested = i;
    } else {
      item.nested = { a: { b: i % 3 }, tags: Array.from({ length: i % 3 }, (_, j) => `t${j}`) };
    }
    item.flag = i % 2 === 0;
    items.push(item);
  }
  return items;
}

/** 36 items keyed on (t, u): 3 values of t times 4 of u, 3 items each, plus one id repeated under
 * two keys. */
export function hierarchicalItems() {
  const items = Array.from({ length: 36 }, (_, i) => ({
    id: `h-${String(i).padStart(2, "0")}`,
    t: `t${i % 3}`,
    u: `u${Math.floor(i / 3) % 4}`,
    n: i,
    even: i % 2 === 0,
  }));
  items.push({ id: "twice", t: "t0", u: "u0", n: 100 });
  items.push({ id: "twice", t: "t1", u: "u1", n: 101 });
  return items;
}

export const KEYED = { paths: ["/pk"], kind: "Hash", version: 2 };
export const HIERARCHICAL = { paths: ["/t", "/u"], kind: "MultiHash", version: 2 };

// A vector container: euclidean by its policy, so VectorDistance orders nearest first, and with
// a cosine similarity given in the query, most similar first (descending).
export const VECTOR_POLICY = {
  vectorEmbeddings: [{ path: "/embedding", dataType: "float32", dimensions: 3, distanceFunction: "euclidean" }],
};
export const VECTOR_INDEXING = {
  indexingMode: "consistent",
  automatic: true,
  includedPaths: [{ path: "/*" }],
  excludedPaths: [{ path: '/"_etag"/?' }, { path: "/embedding/*" }],
  vectorIndexes: [{ path: "/embedding", type: "flat" }],
};

/** 8 items at distinct distances from [1, 0, 0], whose 4 nearest by euclidean distance are not the
 * 4 most similar by cosine (as the Python suite's). */
export function vectorItems() {
  return Array.from({ length: 8 }, (_, i) => ({
    id: `v${i}`,
    pk: `p${i % 2}`,
    embedding: [(1 + i) * (1 - i / 8), i / 4, (i % 3) / 2 + i / 100],
  }));
}

// VectorDistance ORDER BY: the service's non-streaming plan (each range's best, buffered and
// sorted by the SDK), which needs TOP or LIMIT.
export const VECTOR_QUERIES = [
  ["ORDER BY VectorDistance (euclidean), TOP", "SELECT TOP 4 c.id FROM c ORDER BY VectorDistance(c.embedding, [1, 0, 0])"],
  [
    "ORDER BY VectorDistance (cosine: most similar first), TOP",
    'SELECT TOP 4 c.id FROM c ORDER BY VectorDistance(c.embedding, [1, 0, 0], false, {"distanceFunction": "cosine"})',
  ],
  [
    "ORDER BY VectorDistance with its score, OFFSET LIMIT",
    "SELECT c.id, VectorDistance(c.embedding, [0, 1, 0]) AS d FROM c ORDER BY VectorDistance(c.embedding, [0, 1, 0]) OFFSET 1 LIMIT 3",
  ],
];

// Hybrid search: texts with a full-text policy and index, and vectors (cosine: most similar
// first). The ranking queries' plans are the service's hybridSearchQueryInfo.
export const FULL_TEXT_POLICY = { defaultLanguage: "en-US", fullTextPaths: [{ path: "/text", language: "en-US" }] };
export const TEXT_VECTOR_POLICY = {
  vectorEmbeddings: [{ path: "/v", dataType: "float32", dimensions: 2, distanceFunction: "cosine" }],
};
export const TEXT_INDEXING = {
  indexingMode: "consistent",
  automatic: true,
  includedPaths: [{ path: "/*" }],
  excludedPaths: [{ path: '/"_etag"/?' }, { path: "/v/*" }],
  fullTextIndexes: [{ path: "/text" }],
  vectorIndexes: [{ path: "/v", type: "flat" }],
};

/** 16 texts over 4 keys, each of its own length (so that equal counts of a term score apart: the
 * order of equal scores is the SDK's merge's, which the service leaves open), with 2-dimensional
 * vectors. */
export function textItems() {
  const words = ["red", "blue", "green", "bike", "car", "tree", "road", "sky"];
  return Array.from({ length: 16 }, (_, i) => {
    const text = Array.from({ length: 2 + i }, (_, j) => words[(i * 3 + j * (1 + (i % 3))) % words.length]);
    const item = { id: `x${String(i).padStart(2, "0")}`, pk: `p${i % 4}`, v: [Math.cos(i / 5), Math.sin(i / 5)] };
    return i === 7 ? { ...item, title: "no text" } : { ...item, text: text.join(" ") };
  });
}

export const HYBRID_QUERIES = [
  ["ORDER BY RANK FullTextScore, TOP", 'SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.text, "red", "bike")'],
  [
    "ORDER BY RANK FullTextScore, OFFSET LIMIT",
    'SELECT c.id, c.text FROM c ORDER BY RANK FullTextScore(c.text, "blue") OFFSET 2 LIMIT 4',
  ],
  [
    "ORDER BY RANK RRF(FullTextScore, VectorDistance), TOP, filtered",
    'SELECT TOP 8 c.id FROM c WHERE c.pk != "p1" ORDER BY RANK RRF(FullTextScore(c.text, "green", "road"), VectorDistance(c.v, [1, 0]))',
  ],
  [
    "ORDER BY RANK RRF with weights, one negative, OFFSET LIMIT",
    'SELECT * FROM c ORDER BY RANK RRF(VectorDistance(c.v, [0, 1]), FullTextScore(c.text, "sky"), [-1, 2]) OFFSET 1 LIMIT 6',
  ],
];

export const COMPOSITE_POLICY = {
  indexingMode: "consistent",
  automatic: true,
  includedPaths: [{ path: "/*" }],
  excludedPaths: [{ path: '/"_etag"/?' }],
  compositeIndexes: [
    [
      { path: "/cat", order: "ascending" },
      { path: "/n", order: "descending" },
    ],
    [
      { path: "/cat", order: "ascending" },
      { path: "/n", order: "ascending" },
    ],
  ],
};

// What @azure/cosmos's client-side ORDER BY merge refuses (queryExecutionContext/orderByComparator.js:
// keys of different types across ranges, null or object keys) and what its continuation tokens
// cannot carry (order-by values outside Latin-1 in the x-ms-continuation header).
export const MIXED_KEYS = /Cannot execute cross partition order-by queries on mixed types|unrecognizable type object/;
export const NON_LATIN1_TOKEN = /Invalid character in header content/;
// Resuming the SDK's merge from its token, where what it sends cannot give the results back:
// on two or more ORDER BY paths its resume filter is the conjunction of one condition per path
// (OrderByQueryRangeStrategy.createRangeFilterCondition: `c.a >= x AND c.b <= y`), which drops
// items the lexicographic order still owes, against any server; and with an ordered DISTINCT its
// token lags its output: after pages that delivered "green" and "grün" it resumes every range
// with `c.cat >= 'blue'` (its own orderByItems, recorded with COSMOQL_SDK_HTTP_LOG), so the
// values past "blue" come twice.
export const MULTI_PATH_RESUME =
  "the SDK's resume filter on several ORDER BY paths is one condition per path joined by AND (an SDK defect)";
export const DISTINCT_RESUME =
  "the SDK's token for an ordered DISTINCT lags the values its pages delivered, so they come again (an SDK defect)";

// Cross-partition queries whose per-range results simply concatenate: filters, projections,
// parameters, IN, functions, JOIN. Served in both modes.
export const CONCATENATING_QUERIES = [
  ["SELECT *", "SELECT * FROM c"],
  ["filter", "SELECT * FROM c WHERE c.n >= 10"],
  ["filter nested", "SELECT c.id, c.nested.a.b AS b FROM c WHERE c.nested.a.b = 1"],
  ["filter string function", 'SELECT VALUE c.id FROM c WHERE STARTSWITH(c.s, "s")'],
  ["filter undefined", "SELECT VALUE c.id FROM c WHERE NOT IS_DEFINED(c.n)"],
  ["filter null", "SELECT VALUE c.id FROM c WHERE c.n = null"],
  ["filter IN and LIKE", 'SELECT VALUE c.id FROM c WHERE c.cat IN ("red", "blue") AND c.s LIKE "s%"'],
  ["filter unicode id", 'SELECT * FROM c WHERE c.id = "a b+é"'],
  ["projection", "SELECT c.id, c.n, c.nested.a FROM c"],
  ["VALUE projection", "SELECT VALUE c.cat FROM c"],
  [
    "functions",
    "SELECT c.id, UPPER(c.cat) AS up, ARRAY_LENGTH(c.nested.tags) AS tags, c.n * 2 AS twice, " +
      'IS_DEFINED(c.s) AS hasS, CONCAT(c.pk, "-", c.cat) AS label FROM c WHERE IS_NUMBER(c.n)',
  ],
  ["JOIN", "SELECT c.id, t FROM c JOIN t IN c.nested.tags"],
  ["FROM a path", "SELECT VALUE n.a FROM c.nested n WHERE IS_OBJECT(n)"],
  ["FROM IN", "SELECT VALUE t FROM t IN c.nested.tags"],
  ["FROM a subquery", "SELECT x.id, x.twice FROM (SELECT c.id, c.n * 2 AS twice FROM c WHERE c.n > 10) x"],
  ["key-pinned WHERE", 'SELECT * FROM c WHERE c.pk = "p2"'],
  ["key-pinned WHERE and filter", 'SELECT c.id FROM c WHERE c.pk = "p3" AND c.n > 10'],
  [
    "parameters",
    {
      query: "SELECT * FROM c WHERE c.cat = @cat AND c.n > @min",
      parameters: [
        { name: "@cat", value: "red" },
        { name: "@min", value: 20 },
      ],
    },
  ],
  [
    "array parameter",
    {
      query: "SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(@ids, c.id)",
      parameters: [{ name: "@ids", value: ["item-000", "a b+é", "日本語", "absent"] }],
    },
  ],
  [
    "IN parameters",
    {
      query: "SELECT c.id, c.cat FROM c WHERE c.cat IN (@a, @b)",
      parameters: [
        { name: "@a", value: "grün" },
        { name: "@b", value: "Red" },
      ],
    },
  ],
];

// Queries whose per-range results need the SDK's merge (ORDER BY, TOP, OFFSET LIMIT, aggregates,
// DISTINCT, GROUP BY): across partitions only in single mode; scoped to a key in both.
export const MERGING_QUERIES = [
  ["ORDER BY ASC", "SELECT c.id, c.n FROM c WHERE IS_NUMBER(c.n) ORDER BY c.n"],
  ["ORDER BY DESC", "SELECT c.id, c.n FROM c WHERE IS_NUMBER(c.n) ORDER BY c.n DESC"],
  ["ORDER BY mixed types", "SELECT c.n FROM c ORDER BY c.n", { sdkRefuses: MIXED_KEYS }],
  ["ORDER BY id, SELECT *", "SELECT * FROM c ORDER BY c.id DESC", { sdkRefuses: NON_LATIN1_TOKEN }],
  ["TOP with ORDER BY", "SELECT TOP 5 c.id FROM c WHERE IS_NUMBER(c.n) ORDER BY c.n"],
  ["OFFSET LIMIT", "SELECT c.id FROM c WHERE IS_NUMBER(c.n) ORDER BY c.n OFFSET 7 LIMIT 5"],
  ["VALUE COUNT", "SELECT VALUE COUNT(1) FROM c"],
  ["VALUE COUNT path", "SELECT VALUE COUNT(c.n) FROM c"],
  ["VALUE SUM", "SELECT VALUE SUM(c.n) FROM c WHERE IS_NUMBER(c.n)"],
  ["VALUE SUM over nulls", "SELECT VALUE SUM(c.n) FROM c"],
  ["VALUE MIN", "SELECT VALUE MIN(c.n) FROM c"],
  ["VALUE MAX", "SELECT VALUE MAX(c.n) FROM c"],
  ["VALUE AVG", "SELECT VALUE AVG(c.n) FROM c WHERE IS_NUMBER(c.n)"],
  ["VALUE MIN string", "SELECT VALUE MIN(c.s) FROM c"],
  ["VALUE COUNT empty", "SELECT VALUE COUNT(1) FROM c WHERE c.n > 100000"],
  ["VALUE COUNT over IN", "SELECT VALUE COUNT(1) FROM t IN c.nested.tags"],
  ["VALUE MAX over a FROM subquery", "SELECT VALUE MAX(x.n) FROM (SELECT c.n FROM c WHERE IS_NUMBER(c.n)) x"],
  ["VALUE AVG empty", "SELECT VALUE AVG(c.n) FROM c WHERE c.n > 100000"],
  [
    "aggregates non-VALUE",
    "SELECT COUNT(1) AS cnt, SUM(c.n) AS total, MIN(c.n) AS lo, MAX(c.n) AS hi, AVG(c.n) AS mean " +
      "FROM c WHERE IS_NUMBER(c.n)",
  ],
  ["COUNT non-VALUE", "SELECT COUNT(1) AS cnt FROM c"],
  ["VALUE COUNTIF", "SELECT VALUE COUNTIF(c.n > 10) FROM c"],
  ["COUNTIF non-VALUE", "SELECT COUNTIF(c.n > 10) AS big, COUNTIF(IS_STRING(c.s)) AS named FROM c"],
  ["DISTINCT", "SELECT DISTINCT c.cat FROM c"],
  ["DISTINCT VALUE", "SELECT DISTINCT VALUE c.cat FROM c"],
  ["DISTINCT VALUE ORDER BY", "SELECT DISTINCT VALUE c.cat FROM c ORDER BY c.cat", { resumeGap: DISTINCT_RESUME }],
  ["DISTINCT VALUE objects", "SELECT DISTINCT VALUE c.nested FROM c"],
  [
    "GROUP BY",
    "SELECT c.cat, COUNT(1) AS cnt, SUM(c.n) AS total, MIN(c.n) AS lo, MAX(c.n) AS hi, AVG(c.n) AS mean " +
      "FROM c WHERE IS_NUMBER(c.n) GROUP BY c.cat",
  ],
  ["GROUP BY key", "SELECT c.pk, COUNT(1) AS cnt FROM c GROUP BY c.pk"],
  ["GROUP BY VALUE", "SELECT VALUE COUNT(1) FROM c GROUP BY c.cat"],
];

// ORDER BY over two paths: needs the container's composite index.
export const COMPOSITE_QUERIES = [
  ["ORDER BY two paths", "SELECT c.cat, c.n FROM c ORDER BY c.cat, c.n DESC", { sdkRefuses: MIXED_KEYS }],
  ["ORDER BY two paths reversed", "SELECT c.cat, c.n FROM c ORDER BY c.cat DESC, c.n ASC", { sdkRefuses: MIXED_KEYS }],
  ["ORDER BY two paths ascending", "SELECT c.cat, c.n FROM c ORDER BY c.cat ASC, c.n ASC", { sdkRefuses: MIXED_KEYS }],
  [
    "ORDER BY two paths, keys of one type",
    "SELECT c.id, c.cat, c.n FROM c WHERE IS_STRING(c.cat) AND IS_NUMBER(c.n) ORDER BY c.cat, c.n DESC",
    { resumeGap: MULTI_PATH_RESUME },
  ],
  [
    "TOP with ORDER BY two paths",
    "SELECT TOP 7 c.id, c.cat, c.n FROM c WHERE IS_NUMBER(c.n) ORDER BY c.cat ASC, c.n DESC",
  ],
];
