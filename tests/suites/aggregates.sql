-- aggregates: cases over people (tests/data/people.json, key /city, 2 physical partitions).
-- @container people

-- @name COUNT counts defined values
SELECT COUNT(1) AS n, COUNT(c.age) AS age, COUNT(c.nick) AS nick, COUNT(c.missing) AS missing FROM c
-- @expect
[{"n": 6, "age": 5, "nick": 2, "missing": 0}]

-- @name COUNTIF counts the rows whose condition is true
SELECT COUNTIF(c.age > 30) AS older, COUNTIF(IS_DEFINED(c.nick)) AS nick, COUNTIF(c.age) AS notBoolean FROM c
-- @expect
[{"older": 2, "nick": 2, "notBoolean": 0}]

-- @name COUNTIF as a VALUE
SELECT VALUE COUNTIF(ARRAY_CONTAINS(c.tags, "a")) FROM c
-- @expect
[2]

-- @name SUM over mixed types is undefined
SELECT SUM(c.age) AS s FROM c
-- @expect
[{}]

-- @name SUM and AVG over numbers
SELECT SUM(c.age) AS s, AVG(c.age) AS a FROM c WHERE IS_NUMBER(c.age)
-- @expect
[{"s": 122, "a": 30.5}]

-- @name MIN and MAX over mixed scalars use the type order
SELECT MIN(c.score) AS lo, MAX(c.score) AS hi FROM c
-- @expect
[{"lo": null, "hi": "high"}]

-- @name compositions of aggregates are rejected across partitions
SELECT VALUE [MIN(c.score), MAX(c.score)] FROM c
-- @error bind line 1, column 15: Compositions of aggregates and other expressions are not allowed.

-- @name compositions of aggregates run in one logical partition
-- @pk "Seattle"
SELECT VALUE [COUNT(1), MAX(c.score), SUM(c.age) / COUNT(c.age)] FROM c
-- @expect
[[2, 9.5, 31]]

-- @name MAKELIST keeps every value, MAKESET the distinct ones, across partitions
SELECT MAKELIST(t) AS every, MAKESET(t) AS once FROM c JOIN t IN c.tags WHERE t IN ("a", "b")
-- @expect
[{"every": ["a", "a", "b", "b"], "once": ["a", "b"]}]

-- @name MAKELIST and MAKESET skip undefined and keep null
SELECT MAKELIST(c.nick) AS nicks, MAKESET(c.missing) AS none FROM c
-- @expect
[{"nicks": ["D", null], "none": []}]

-- @name MAKESET per group
-- @order any
SELECT c.city, MAKESET(c.name) AS names FROM c WHERE IS_DEFINED(c.city) GROUP BY c.city
-- @expect
[{"city": "Seattle", "names": ["Ana", "Bo"]}, {"city": "Portland", "names": ["Cy", "Di"]}, {"city": "Boise", "names": ["Ed"]}]

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
SELECT c.age > 30 AS big, COUNT(1) AS n FROM c WHERE IS_NUMBER(c.age) GROUP BY c.age > 30
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
