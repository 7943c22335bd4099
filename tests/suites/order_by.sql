-- order by: cases over people (tests/data/people.json, key /city, 2 physical partitions).
-- @container people

-- @name mixed types sort by type: null < booleans < numbers < strings
SELECT VALUE c.id FROM c ORDER BY c.score
-- @expect
["4", "5", "2", "3", "1", "6"]

-- @name items without the sort property come first, ascending
SELECT VALUE c.id FROM c ORDER BY c.age
-- @expect
["4", "6", "2", "1", "5", "3"]

-- @name mixed types descending
SELECT VALUE c.id FROM c ORDER BY c.age DESC
-- @expect
["3", "5", "1", "2", "6", "4"]

-- @name several keys
SELECT VALUE c.name FROM c ORDER BY c.city, c.name DESC
-- @expect
["Fay", "Ed", "Di", "Cy", "Bo", "Ana"]

-- @name several keys, all directions inverted: the same composite index serves them
SELECT VALUE c.name FROM c ORDER BY c.city DESC, c.name
-- @expect
["Ana", "Bo", "Cy", "Di", "Ed", "Fay"]

-- @name several keys need a composite index with the same paths and directions
SELECT VALUE c.name FROM c ORDER BY c.city, c.name
-- @error bind line 1, column 37: The order by query does not have a corresponding composite index that it can be served from.

-- @name one key needs its path indexed
SELECT VALUE c.name FROM c ORDER BY c.nick
-- @error bind line 1, column 37: The index path corresponding to the specified order-by item is excluded.

-- @name a filter on an excluded path still answers (by scanning)
SELECT VALUE c.name FROM c WHERE c.nick = "D"
-- @expect
["Di"]

-- @name TOP with ORDER BY
SELECT TOP 2 VALUE c.name FROM c ORDER BY c.name DESC
-- @expect
["Fay", "Ed"]

-- @name OFFSET LIMIT with ORDER BY
SELECT VALUE c.name FROM c ORDER BY c.name OFFSET 2 LIMIT 3
-- @expect
["Cy", "Di", "Ed"]

-- @name OFFSET past the end
SELECT VALUE c.name FROM c ORDER BY c.name OFFSET 10 LIMIT 3
-- @expect
[]

-- @name TOP and OFFSET LIMIT from parameters
-- @param @n = 2
-- @param @skip = 1
SELECT TOP @n VALUE c.name FROM c ORDER BY c.name OFFSET @skip LIMIT 10
-- @expect
["Bo", "Cy"]

-- @name ORDER BY over an iterated array
SELECT VALUE p.kind FROM c JOIN p IN c.pets ORDER BY p.age DESC
-- @expect
["dog", "cat", "cat", "fish"]

-- @name DISTINCT with ORDER BY keeps the first of each value
SELECT DISTINCT VALUE c.city FROM c ORDER BY c.city
-- @expect
["Boise", "Portland", "Seattle"]
