-- operators: cases over people (tests/data/people.json, key /city, 2 physical partitions).
-- @container people

-- @name IN with a list
SELECT VALUE c.name FROM c WHERE c.age IN (28, 41, 99)
-- @expect
["Bo", "Ed"]

-- @name NOT IN skips undefined and keeps other types (a string is not 28 or 41)
-- @order any
SELECT VALUE c.name FROM c WHERE c.age NOT IN (28, 41)
-- @expect
["Ana", "Cy", "Fay"]

-- @name IN across types is not a match
SELECT VALUE c.name FROM c WHERE c.age IN ("34", "unknown")
-- @expect
["Cy"]

-- @name BETWEEN on numbers only
SELECT VALUE c.name FROM c WHERE c.age BETWEEN 20 AND 40
-- @expect
["Ana", "Bo"]

-- @name NOT BETWEEN
-- @order any
SELECT VALUE c.name FROM c WHERE c.age NOT BETWEEN 20 AND 40
-- @expect
["Ed", "Fay"]

-- @name BETWEEN inside AND
SELECT VALUE c.name FROM c WHERE c.age BETWEEN 20 AND 40 AND c.city = "Seattle"
-- @expect
["Ana", "Bo"]

-- @name LIKE with % and _
SELECT VALUE c.name FROM c WHERE c.name LIKE "_o" OR c.name LIKE "A%"
-- @expect
["Ana", "Bo"]

-- @name LIKE with ESCAPE matches a literal percent
SELECT VALUE c.name FROM c JOIN t IN c.tags WHERE t LIKE "100!%" ESCAPE "!"
-- @expect
["Fay"]

-- @name LIKE with ESCAPE matches a literal underscore
SELECT VALUE t FROM c JOIN t IN c.tags WHERE t LIKE "a!_%" ESCAPE "!"
-- @expect
["a_b"]

-- @name LIKE is case-sensitive and needs strings
SELECT VALUE c.name FROM c WHERE c.name LIKE "ana" OR c.age LIKE "3%"
-- @expect
[]

-- @name coalesce replaces undefined but keeps null
SELECT VALUE {name: c.name, nick: c.nick ?? "none"} FROM c WHERE c.city = "Seattle"
-- @expect
[{"name": "Ana", "nick": null}, {"name": "Bo", "nick": "none"}]

-- @name coalesce chains
SELECT VALUE c.missing ?? c.other ?? c.name FROM c WHERE c.id = "1"
-- @expect
["Ana"]

-- @name conditional operator
-- @order any
SELECT VALUE c.age > 30 ? "older" : "younger" FROM c WHERE IS_NUMBER(c.age)
-- @expect
["older", "younger", "older", "younger"]

-- @name a non-boolean condition takes the else branch
SELECT VALUE c.age ? "yes" : "no" FROM c WHERE c.id = "1"
-- @expect
["no"]

-- @name arithmetic needs numbers
-- @order any
SELECT VALUE {a: c.age + 1, s: c.name + 1} FROM c WHERE c.id IN ("1", "3")
-- @expect
[{"a": 35}, {}]

-- @name string concatenation
SELECT VALUE c.name || "-" || c.city FROM c WHERE c.id IN ("1", "6")
-- @expect
["Ana-Seattle"]

-- @name comparison across types is undefined, so NOT does not select it
SELECT VALUE c.name FROM c WHERE NOT (c.score > 8)
-- @expect
["Bo"]

-- @name equality with null
SELECT VALUE c.name FROM c WHERE c.score = null
-- @expect
["Di"]

-- @name inequality across two defined types is true, with an undefined side undefined
-- The service's rule, not the docs page's: value/src/ops.rs has the recorded evidence.
-- @order any
SELECT VALUE c.name FROM c WHERE c.score != 7
-- @expect
["Ana", "Cy", "Di", "Ed", "Fay"]

-- @name != null holds for every defined non-null value and not for a missing one
-- @order any
SELECT VALUE c.name FROM c WHERE c.age != null
-- @expect
["Ana", "Bo", "Cy", "Ed", "Fay"]

-- @name NOT of a cross-type equality is true
-- @order any
SELECT VALUE c.name FROM c WHERE NOT (c.age = "unknown")
-- @expect
["Ana", "Bo", "Ed", "Fay"]

-- @name a ternary on a cross-type equality takes the false branch
-- @order any
SELECT VALUE {"n": c.name, "s": (c.score = "high" ? "word" : "other")} FROM c
-- @expect
[{"n": "Ana", "s": "other"}, {"n": "Bo", "s": "other"}, {"n": "Cy", "s": "other"}, {"n": "Di", "s": "other"}, {"n": "Ed", "s": "other"}, {"n": "Fay", "s": "word"}]

-- @name < across types stays undefined
-- @order any
SELECT VALUE c.name FROM c WHERE NOT (c.score < 8)
-- @expect
["Ana", "Cy"]

-- @name three-valued OR
-- @order any
SELECT VALUE c.name FROM c WHERE c.score > 9 OR c.age < 20
-- @expect
["Ana", "Fay"]

-- @name bitwise operators follow 32-bit integers
SELECT VALUE [5 & 3, 5 | 3, 5 ^ 3, ~5, 1 << 3, -16 >> 2, -16 >>> 28]
-- @expect
[[1, 7, 6, -6, 8, -4, 15]]

-- @name precedence of NOT, AND, OR
SELECT VALUE c.name FROM c WHERE NOT c.city = "Seattle" AND c.age > 30 OR c.name = "Bo"
-- @expect
["Bo", "Ed"]
