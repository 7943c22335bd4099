-- udfs: user-defined functions of the fixture (tests/suites/fixtures.json: people's
-- userDefinedFunctions), over people (key /city, 2 physical partitions).
-- @container people

-- @name a UDF in the projection
-- @order any
SELECT c.id, udf.ageGroup(c.age) AS g FROM c WHERE c.city = "Seattle"
-- @expect
[{"id": "1", "g": "older"}, {"id": "2", "g": "young"}]

-- @name a UDF in the filter, from a file
-- @order any
SELECT VALUE c.name FROM c WHERE udf.REGEX_MATCH(c.city, "^Port")
-- @expect
["Cy", "Di"]

-- @name GROUP BY a UDF's value (Di has no age: the call is skipped, its group undefined)
-- @order any
SELECT udf.ageGroup(c.age) AS g, COUNT(1) AS n FROM c GROUP BY udf.ageGroup(c.age)
-- @expect
[{"g": "young", "n": 2}, {"g": "unknown", "n": 1}, {"n": 1}, {"g": "older", "n": 2}]

-- @name an unknown UDF
SELECT udf.nope(c.age) FROM c
-- @error bind line 1, column 8: 'udf.nope' is not a recognized user-defined function name.
