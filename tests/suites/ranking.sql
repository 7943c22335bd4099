-- ranking: cases over texts (tests/data/texts.json, no partition key, 2 physical partitions).
-- @container texts

-- @name FullTextScore ranks by BM25, most relevant first, equal scores latest first, items without text last
SELECT VALUE c.id FROM c ORDER BY RANK FullTextScore(c.text, "red")
-- @expect
["1", "3", "4", "2", "5"]

-- @name TOP with ORDER BY RANK
SELECT TOP 2 VALUE c.id FROM c ORDER BY RANK FullTextScore(c.text, "red")
-- @expect
["1", "3"]

-- @name terms as an array
SELECT TOP 1 VALUE c.id FROM c ORDER BY RANK FullTextScore(c.text, ["green", "tree"])
-- @expect
["4"]

-- @name RRF fuses a text ranking and a vector ranking with weights
-- Ranks are dense (3 and 4 both score 0 for "bike": both rank 3), so 4, second by vector, comes
-- before 3; 5, with neither score, ranks last in both.
SELECT VALUE c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, "bike"), VectorDistance(c.v, [1, 0]), [2, 1])
-- @expect
["2", "1", "4", "3", "5"]

-- @name a negative RRF weight ranks its score the other way: least similar first
SELECT VALUE c.id FROM c ORDER BY RANK RRF(VectorDistance(c.v, [1, 0]), FullTextScore(c.text, "red"), [-1, 1])
-- @expect
["1", "3", "4", "2", "5"]

-- @name the statistics are the container's, whatever the WHERE
-- "blue" is in one text of five, "red" in two, so "blue bike" outranks "red car"; under the
-- statistics of the four rows filtered, both terms would be in one text and the tie would put
-- 3 (the later) first.
SELECT VALUE c.id FROM c WHERE c.id != "1" ORDER BY RANK FullTextScore(c.text, "red", "blue")
-- @expect
["2", "3", "4", "5"]

-- @name FullTextScore outside ORDER BY RANK
SELECT FullTextScore(c.text, "red") FROM c
-- @error bind line 1, column 8: The FullTextScore function is only allowed in the ORDER BY RANK clause.

-- @name ORDER BY RANK needs a scoring function
SELECT * FROM c ORDER BY RANK LOWER(c.text)
-- @error bind line 1, column 31: The ORDER BY RANK clause must be followed by a VectorDistance and/or a FullTextScore function call.

-- @name FullTextContains filters
SELECT VALUE c.id FROM c WHERE FullTextContains(c.text, "RED BIKE")
-- @expect
["1"]

-- @name ORDER BY VectorDistance: most similar first (cosine), the best two
SELECT TOP 2 VALUE c.id FROM c ORDER BY VectorDistance(c.v, [1, 0])
-- @expect
["2", "4"]

-- @name ORDER BY VectorDistance with its score, OFFSET LIMIT
SELECT c.id, VectorDistance(c.v, [0, 1]) AS score FROM c ORDER BY VectorDistance(c.v, [0, 1]) OFFSET 1 LIMIT 2
-- @expect
[{"id": "3", "score": 0.7071067811865475}, {"id": "4", "score": 0.09950372048903948}]

-- @name the internal word count the hybrid search statistics sum
SELECT VALUE SUM(_FullTextWordCount(c.text)) FROM c
-- @expect
[11]

-- @name the hit counts of the hybrid search statistics
SELECT VALUE COUNTIF(FullTextContains(c.text, "red")) FROM c
-- @expect
[2]

-- @name ORDER BY the internal full-text score, under the statistics given
SELECT TOP 2 VALUE c.id FROM c ORDER BY _FullTextScore(c.text, ["red"], 5, 11, [2]) DESC
-- @expect
["1", "3"]

-- @name ORDER BY the internal vector score: as VectorDistance, most similar first
SELECT TOP 2 VALUE c.id FROM c ORDER BY _VectorScore(c.v, [1, 0])
-- @expect
["2", "4"]
