-- aggregates: cases over people (tests/data/people.json, key /city, 2 physical partitions).
-- @container people

-- @name COUNT counts defined values
SELECT VALUE [COUNT(1), COUNT(c.age), COUNT(c.nick), COUNT(c.missing)] FROM c
-- @expect
[[6, 5, 2, 0]]

-- @name SUM over mixed types is undefined
SELECT VALUE {s: SUM(c.age)} FROM c
-- @expect
[{}]

-- @name SUM and AVG over numbers
SELECT VALUE {s: SUM(c.age), a: AVG(c.age)} FROM c WHERE IS_NUMBER(c.age)
-- @expect
[{"s": 122, "a": 30.5}]

-- @name MIN and MAX over mixed scalars use the type order
SELECT VALUE [MIN(c.score), MAX(c.score)] FROM c
-- @expect
[[null, "high"]]

-- @name aggregates over no rows
SELECT COUNT(1) AS n, SUM(c.age) AS s, AVG(c.age) AS a, MIN(c.age) AS lo FROM c WHERE c.city = "Nowhere"
-- @expect
[{"n": 0, "s": 0}]

-- @name GROUP BY with several aggregates
-- @order any
SELECT c.city, COUNT(1) AS n, MAX(c.name) AS last FROM c GROUP BY c.city
-- @expect
[{"city": "Seattle", "n": 2, "last": "Bo"}, {"city": "Portland", "n": 2, "last": "Di"}, {"city": "Boise", "n": 1, "last": "Ed"}, {"n": 1, "last": "Fay"}]

-- @name GROUP BY an expression
-- @order any
SELECT VALUE {big: c.age > 30, n: COUNT(1)} FROM c WHERE IS_NUMBER(c.age) GROUP BY c.age > 30
-- @expect
[{"big": true, "n": 2}, {"big": false, "n": 2}]

-- @name GROUP BY on an iterated array
-- @order any
SELECT t AS tag, COUNT(1) AS n FROM c JOIN t IN c.tags GROUP BY t
-- @expect
[{"tag": "a", "n": 2}, {"tag": "b", "n": 2}, {"tag": "c", "n": 2}, {"tag": "100%", "n": 1}, {"tag": "a_b", "n": 1}]

-- @name GROUP BY with no rows gives no groups
SELECT c.city, COUNT(1) AS n FROM c WHERE c.city = "Nowhere" GROUP BY c.city
-- @expect
[]

-- @name aggregates are not allowed in WHERE
SELECT * FROM c WHERE COUNT(1) > 1
-- @error bind line 1, column 23: the aggregate COUNT is not allowed here
