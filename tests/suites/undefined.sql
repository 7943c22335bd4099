-- undefined: cases over people (tests/data/people.json, key /city, 2 physical partitions).
-- @container people

-- @name undefined fields are omitted from projections
SELECT c.name, c.nick FROM c WHERE c.city = "Portland"
-- @expect
[{"name": "Cy"}, {"name": "Di", "nick": "D"}]

-- @name SELECT VALUE drops undefined results
-- @order any
SELECT VALUE c.nick FROM c
-- @expect
[null, "D"]

-- @name an array constructor drops undefined elements
SELECT VALUE [c.name, c.nick, c.age] FROM c WHERE c.id = "2"
-- @expect
[["Bo", 28]]

-- @name an object constructor omits undefined properties
SELECT VALUE {n: c.name, x: c.missing} FROM c WHERE c.id = "2"
-- @expect
[{"n": "Bo"}]

-- @name SELECT undefined gives an empty object
SELECT undefined
-- @expect
[{}]

-- @name SELECT VALUE undefined gives nothing
SELECT VALUE undefined
-- @expect
[]

-- @name WHERE keeps only exactly true
SELECT VALUE c.name FROM c WHERE c.score
-- @expect
["Ed"]

-- @name missing property in a path through a non-object
SELECT VALUE c.name.first FROM c
-- @expect
[]

-- @name array index out of range is undefined
SELECT VALUE c.tags[5] FROM c
-- @expect
[]

-- @name unnamed projections are numbered
SELECT c.name, c.age + 1, UPPER(c.name) FROM c WHERE c.id = "1"
-- @expect
[{"name": "Ana", "$1": 35, "$2": "ANA"}]

-- @name IS_DEFINED and IS_NULL tell undefined from null
SELECT VALUE [IS_DEFINED(c.nick), IS_NULL(c.nick)] FROM c WHERE c.city = "Seattle"
-- @expect
[[true, true], [false, false]]

-- @name EXISTS of undefined values
SELECT VALUE [EXISTS(SELECT VALUE undefined), EXISTS(SELECT undefined)]
-- @expect
[[false, true]]

-- @name DocumentId gives distinct numbers for items and undefined for other values
SELECT VALUE [IS_NUMBER(DocumentId(c)), DocumentId(c.name)] FROM c WHERE c.id = "1"
-- @expect
[[true]]

-- @name full-text matching on tokens
SELECT VALUE c.name FROM c WHERE FullTextContainsAny(c.name || " " || c.city, "seattle", "BOISE")
-- @expect
["Ana", "Bo", "Ed"]

-- @name the static clock functions give one value per query
SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE GetCurrentTicksStatic() FROM c) x
-- @expect
[1]
