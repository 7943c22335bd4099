-- order by, equal keys: cases over ties (tests/data/ties.json, key /pk, 2 physical partitions;
-- the items were created in the file's order). Rows with equal ORDER BY keys come in `_rid`
-- order (creation order) in the direction of the first ORDER BY key, as the service's index
-- gives them within a partition; the SDKs' ORDER BY resume filters count on it
-- (cosmoql_storage::tie_order cites them). The cases stay in one logical partition, where the
-- service's order is the engine's whatever the client merges.
-- @container ties

-- @name ascending: equal keys in creation order
SELECT VALUE c.id FROM c WHERE c.pk = "a" ORDER BY c.v
-- @expect
["a2", "a4", "a1", "a3", "a5"]

-- @name descending: equal keys in reverse creation order
SELECT VALUE c.id FROM c WHERE c.pk = "a" ORDER BY c.v DESC
-- @expect
["a5", "a3", "a1", "a4", "a2"]

-- @name TOP inside a run of equal keys
SELECT TOP 2 VALUE c.id FROM c WHERE c.pk = "a" ORDER BY c.v DESC
-- @expect
["a5", "a3"]

-- @name OFFSET LIMIT across a run of equal keys
SELECT VALUE c.id FROM c WHERE c.pk = "a" ORDER BY c.v DESC OFFSET 1 LIMIT 3
-- @expect
["a3", "a1", "a4"]

-- @name two keys, the first descending: equal pairs in reverse creation order
SELECT VALUE c.id FROM c WHERE c.pk = "a" ORDER BY c.v DESC, c.w
-- @expect
["a5", "a3", "a1", "a2", "a4"]

-- @name two keys, the first ascending (the same composite index walked backward): creation order
SELECT VALUE c.id FROM c WHERE c.pk = "a" ORDER BY c.v, c.w DESC
-- @expect
["a4", "a2", "a1", "a3", "a5"]


-- @name paged one by one, resuming inside the runs of equal keys
-- @pagesize 1
SELECT VALUE c.id FROM c WHERE c.pk = "a" ORDER BY c.v DESC
-- @expect
["a5", "a3", "a1", "a4", "a2"]

-- @name two keys, the first descending, paged
-- @pagesize 2
SELECT VALUE c.id FROM c WHERE c.pk = "a" ORDER BY c.v DESC, c.w
-- @expect
["a5", "a3", "a1", "a2", "a4"]

-- @name two keys, the first ascending, paged
-- @pagesize 2
SELECT VALUE c.id FROM c WHERE c.pk = "a" ORDER BY c.v, c.w DESC
-- @expect
["a4", "a2", "a1", "a3", "a5"]
