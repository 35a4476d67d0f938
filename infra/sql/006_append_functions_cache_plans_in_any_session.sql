-- The append functions cache their statements' plans (migration 005) whatever the session's
-- plan_cache_mode says. The embedded store runs with plan_cache_mode = force_custom_plan, so that
-- the statements it prepares once are still planned at each run with their parameters' values, as
-- statements sent unprepared are; inside these two functions every statement has an index to use
-- (sequential scans are off for them), so their cached plans need no such care.
ALTER FUNCTION studio_append_batch(text[], text[], integer[], uuid[], text[], text[], text[], boolean)
  SET plan_cache_mode = auto;
ALTER FUNCTION studio_append(text, text, uuid[], text[], text[], text, boolean)
  SET plan_cache_mode = auto;
