-- Queries over `people` (the first container of fixtures.json, so no `-- @container`).

-- @name adults, oldest first
-- @param @min = 18
SELECT VALUE p.name
FROM p
WHERE p.age >= @min
ORDER BY p.age DESC
-- @expect
["Leo", "Ana", "Mia"]

-- @name people per city
-- @order any
SELECT p.city, COUNT(1) AS n FROM p GROUP BY p.city
-- @expect
[{"city": "Lisbon", "n": 2}, {"city": "Porto", "n": 2}, {"city": "Braga", "n": 1}]

-- @name the same on eight partitions, one page at a time
-- @partitions 8
-- @pagesize 1
SELECT VALUE p.id FROM p ORDER BY p.id
-- @expect
["1", "2", "3", "4", "5"]

-- @name a missing age is undefined, not null
SELECT p.name, p.age FROM p WHERE p.city = "Porto" ORDER BY p.name
-- @expect
[{"name": "Eva"}, {"name": "Mia", "age": 25}]

-- @name a typo is a syntax error
SELECT VALUE p.name FROM p WHER p.age > 1
-- @error syntax line 1, column 33
