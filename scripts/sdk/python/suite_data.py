"""The Python SDK acceptance suite's data: the items each container gets, the container
policies, and the queries run over them (sdk_acceptance.py runs them)."""


def mixed_items():
    """100 items over 5 logical partitions with mixed values: `n` a number (integer, half, negative),
    null or missing; strings, nested objects of changing shape, arrays and unicode ids."""
    cats = ["red", "green", "blue", "Red", "grün"]
    special_ids = {11: "a b+é", 22: "ü-ñ 😀", 33: "日本語", 44: "with'quote", 55: "semi;colon=&"}
    items = []
    for i in range(100):
        item = {"id": special_ids.get(i, f"item-{i:03d}"), "pk": f"p{i % 5}", "cat": cats[(i // 3) % 5]}
        kind = i % 10
        if kind == 5:
            item["n"] = i + 0.5
        elif kind == 7:
            item["n"] = None
        elif kind == 9:
            item["n"] = -i
        elif kind != 3:
            item["n"] = i
        if i % 3 == 0:
            item["s"] = f"s{i}"
        elif i % 3 == 1:
            item["s"] = f"é{i}"
        if i % 4 == 1:
            item["nested"] = i
        else:
            item["nested"] = {"a": {"b": i % 3}, "tags": [f"t{j}" for j in range(i % 3)]}
        item["flag"] = i % 2 == 0
        items.append(item)
    return items


def hierarchical_items():
    """36 items keyed on (t, u): 3 values of t times 4 of u, 3 items each, plus one id repeated
    under two keys."""
    items = [
        {"id": f"h-{i:02d}", "t": f"t{i % 3}", "u": f"u{(i // 3) % 4}", "n": i, "even": i % 2 == 0}
        for i in range(36)
    ]
    items.append({"id": "twice", "t": "t0", "u": "u0", "n": 100})
    items.append({"id": "twice", "t": "t1", "u": "u1", "n": 101})
    return items


COMPOSITE_POLICY = {
    "indexingMode": "consistent",
    "automatic": True,
    "includedPaths": [{"path": "/*"}],
    "excludedPaths": [{"path": '/"_etag"/?'}],
    "compositeIndexes": [
        [{"path": "/cat", "order": "ascending"}, {"path": "/n", "order": "descending"}],
        [{"path": "/cat", "order": "ascending"}, {"path": "/n", "order": "ascending"}],
    ],
}


# Euclidean distance, so that a server falling back to the default (cosine) gives other scores.
VECTOR_POLICY = {
    "vectorEmbeddings": [{"path": "/embedding", "dataType": "float32", "dimensions": 3, "distanceFunction": "euclidean"}]
}
VECTOR_INDEXING = {
    "indexingMode": "consistent",
    "automatic": True,
    "includedPaths": [{"path": "/*"}],
    "excludedPaths": [{"path": '/"_etag"/?'}, {"path": "/embedding/*"}],
    "vectorIndexes": [{"path": "/embedding", "type": "flat"}],
}


def vector_items():
    """8 items whose embeddings lie at distinct distances from [1, 0, 0], and whose 4 nearest by
    euclidean distance are not the 4 nearest by cosine similarity."""
    return [
        {"id": f"v{i}", "pk": f"p{i % 2}", "embedding": [(1 + i) * (1 - i / 8), i / 4, (i % 3) / 2 + i / 100]}
        for i in range(8)
    ]


VECTOR_QUERIES = [
    ("VectorDistance", "SELECT c.id, VectorDistance(c.embedding, [1, 0, 0]) AS d FROM c"),
    ("ORDER BY VectorDistance", "SELECT TOP 4 c.id FROM c ORDER BY VectorDistance(c.embedding, [1, 0, 0])"),
]


MIXED_QUERIES = [
    ("filter", "SELECT * FROM c WHERE c.n >= 10"),
    ("filter nested", "SELECT c.id, c.nested.a.b AS b FROM c WHERE c.nested.a.b = 1"),
    ("filter string function", 'SELECT VALUE c.id FROM c WHERE STARTSWITH(c.s, "s")'),
    ("filter undefined", "SELECT VALUE c.id FROM c WHERE NOT IS_DEFINED(c.n)"),
    ("filter null", "SELECT VALUE c.id FROM c WHERE c.n = null"),
    ("filter IN and LIKE", 'SELECT VALUE c.id FROM c WHERE c.cat IN ("red", "blue") AND c.s LIKE "s%"'),
    ("filter unicode id", 'SELECT * FROM c WHERE c.id = "a b+é"'),
    ("JOIN", "SELECT c.id, t FROM c JOIN t IN c.nested.tags"),
    ("ORDER BY ASC", "SELECT c.id, c.n FROM c WHERE IS_NUMBER(c.n) ORDER BY c.n"),
    ("ORDER BY DESC", "SELECT c.id, c.n FROM c WHERE IS_NUMBER(c.n) ORDER BY c.n DESC"),
    ("ORDER BY mixed types", "SELECT c.n FROM c ORDER BY c.n"),
    ("ORDER BY id, SELECT *", "SELECT * FROM c ORDER BY c.id DESC"),
    ("TOP with ORDER BY", "SELECT TOP 5 c.id FROM c WHERE IS_NUMBER(c.n) ORDER BY c.n"),
    ("OFFSET LIMIT", "SELECT c.id FROM c WHERE IS_NUMBER(c.n) ORDER BY c.n OFFSET 7 LIMIT 5"),
    ("VALUE COUNT", "SELECT VALUE COUNT(1) FROM c"),
    ("VALUE COUNT path", "SELECT VALUE COUNT(c.n) FROM c"),
    ("VALUE SUM", "SELECT VALUE SUM(c.n) FROM c WHERE IS_NUMBER(c.n)"),
    ("VALUE SUM over nulls", "SELECT VALUE SUM(c.n) FROM c"),
    ("VALUE MIN", "SELECT VALUE MIN(c.n) FROM c"),
    ("VALUE MAX", "SELECT VALUE MAX(c.n) FROM c"),
    ("VALUE AVG", "SELECT VALUE AVG(c.n) FROM c WHERE IS_NUMBER(c.n)"),
    ("VALUE MIN string", "SELECT VALUE MIN(c.s) FROM c"),
    ("VALUE COUNT empty", "SELECT VALUE COUNT(1) FROM c WHERE c.n > 100000"),
    ("VALUE AVG empty", "SELECT VALUE AVG(c.n) FROM c WHERE c.n > 100000"),
    ("aggregates non-VALUE",
     "SELECT COUNT(1) AS cnt, SUM(c.n) AS total, MIN(c.n) AS lo, MAX(c.n) AS hi, AVG(c.n) AS mean "
     "FROM c WHERE IS_NUMBER(c.n)"),
    ("COUNT non-VALUE", "SELECT COUNT(1) AS cnt FROM c"),
    ("DISTINCT", "SELECT DISTINCT c.cat FROM c"),
    ("DISTINCT VALUE", "SELECT DISTINCT VALUE c.cat FROM c"),
    ("DISTINCT VALUE ORDER BY", "SELECT DISTINCT VALUE c.cat FROM c ORDER BY c.cat"),
    ("DISTINCT VALUE objects", "SELECT DISTINCT VALUE c.nested FROM c"),
    ("GROUP BY",
     "SELECT c.cat, COUNT(1) AS cnt, SUM(c.n) AS total, MIN(c.n) AS lo, MAX(c.n) AS hi, AVG(c.n) AS mean "
     "FROM c WHERE IS_NUMBER(c.n) GROUP BY c.cat"),
    ("GROUP BY key", "SELECT c.pk, COUNT(1) AS cnt FROM c GROUP BY c.pk"),
    ("GROUP BY VALUE", "SELECT VALUE COUNT(1) FROM c GROUP BY c.cat"),
    ("key-pinned WHERE", 'SELECT * FROM c WHERE c.pk = "p2"'),
    ("key-pinned WHERE and filter", 'SELECT c.id FROM c WHERE c.pk = "p3" AND c.n > 10'),
]


COMPOSITE_QUERIES = [
    ("ORDER BY two paths", "SELECT c.cat, c.n FROM c ORDER BY c.cat, c.n DESC"),
    ("ORDER BY two paths reversed", "SELECT c.cat, c.n FROM c ORDER BY c.cat DESC, c.n ASC"),
    ("ORDER BY two paths ascending", "SELECT c.cat, c.n FROM c ORDER BY c.cat ASC, c.n ASC"),
    ("TOP with ORDER BY two paths",
     "SELECT TOP 7 c.id, c.cat, c.n FROM c WHERE IS_NUMBER(c.n) ORDER BY c.cat ASC, c.n DESC"),
]
