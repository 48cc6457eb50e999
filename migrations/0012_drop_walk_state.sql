-- The steady state of a repos root's walk is no longer kept between
-- processes (issue 31): a one-shot query probes each checkout, a process
-- that queries again keeps the state in memory.
DROP TABLE IF EXISTS walk_state;
