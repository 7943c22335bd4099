-- joins subqueries: cases over people (tests/data/people.json, key /city, 2 physical partitions).
-- @container people

-- @name JOIN iterates an array per item
-- @order any
SELECT c.name, p.kind FROM c JOIN p IN c.pets
-- @expect
[{"name": "Ana", "kind": "cat"}, {"name": "Cy", "kind": "dog"}, {"name": "Cy", "kind": "cat"}, {"name": "Ed", "kind": "fish"}]

-- @name two JOINs are a cross product
SELECT VALUE [t, p.kind] FROM c JOIN t IN c.tags JOIN p IN c.pets
-- @expect
[["a", "cat"], ["b", "cat"], ["c", "fish"]]

-- @name FROM x IN iterates without the item
-- @order any
SELECT VALUE t FROM t IN c.tags
-- @expect
["a", "b", "b", "a", "c", "c", "100%", "a_b"]

-- @name FROM a sub-path
SELECT * FROM c.address a
-- @expect
[{"zip": "98101"}, {"zip": "98102"}]

-- @name correlated EXISTS
-- @order any
SELECT VALUE c.name FROM c WHERE EXISTS(SELECT VALUE p FROM p IN c.pets WHERE p.kind = "cat")
-- @expect
["Ana", "Cy"]

-- @name ARRAY subquery
SELECT VALUE {n: c.name, kinds: ARRAY(SELECT VALUE p.kind FROM p IN c.pets)} FROM c WHERE c.city = "Portland"
-- @expect
[{"n": "Cy", "kinds": ["dog", "cat"]}, {"n": "Di", "kinds": []}]

-- @name scalar subquery with an aggregate
SELECT VALUE {n: c.name, pets: (SELECT VALUE COUNT(1) FROM p IN c.pets)} FROM c WHERE c.city = "Seattle"
-- @expect
[{"n": "Ana", "pets": 1}, {"n": "Bo", "pets": 0}]

-- @name JOIN on a subquery filters items
SELECT VALUE c.name FROM c JOIN (SELECT VALUE t FROM t IN c.tags WHERE t = "c") x
-- @expect
["Di", "Ed"]

-- @name FROM a subquery
SELECT VALUE x.n FROM (SELECT c.name AS n, c.age AS a FROM c) x WHERE x.a > 30
-- @expect
["Ana", "Ed"]

-- @name an unknown alias is a bind error with a span
SELECT VALUE d.name FROM c
-- @error bind line 1, column 14: Identifier 'd' could not be resolved.

-- @name an unknown function
SELECT VALUE NOPE(c.name) FROM c
-- @error bind line 1, column 14: 'NOPE' is not a recognized built-in function name.

-- @name a wrong argument count
SELECT VALUE UPPER(c.name, 1) FROM c
-- @error bind line 1, column 14: The UPPER function requires 1 argument(s).

-- @name a missing parameter
SELECT VALUE @nope
-- @error bind line 1, column 14: the parameter @nope is not defined

-- @name SELECT * with JOIN is invalid
SELECT * FROM c JOIN t IN c.tags
-- @error bind line 1, column 8: 'SELECT *' is only valid with a single input set.

-- @name parameters of every type
-- @param @s = "Ana"
-- @param @n = 34
-- @param @arr = ["Bo", "Cy"]
-- @param @obj = {"k": 1}
SELECT VALUE [c.name = @s, c.age = @n, ARRAY_CONTAINS(@arr, c.name), @obj.k] FROM c WHERE c.id IN ("1", "2")
-- @expect
[[true, true, false, 1], [false, false, true, 1]]
