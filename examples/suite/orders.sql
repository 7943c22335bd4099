-- Every case of this file runs on `orders` (hierarchical key /tenant, /customer).
-- @container orders

-- @name one logical partition (tenant and customer)
-- @pk ["acme", "3"]
SELECT VALUE o.total FROM o
-- @expect
[40]

-- @name big orders, serial
-- @maxdop 1
-- @param @min = 20
SELECT o.id, o.total FROM o WHERE o.total > @min ORDER BY o.total DESC
-- @expect
[{"id": "o4", "total": 99.99}, {"id": "o2", "total": 40}, {"id": "o3", "total": 25}]

-- @name order lines
SELECT VALUE line FROM o JOIN line IN o.lines WHERE o.tenant = "acme"
-- @order any
-- @expect
["pen", "ink", "desk"]

-- @name an unknown function
SELECT VALUE NOPE(o.total) FROM o
-- @error bind 'NOPE' is not a recognized built-in function name.
