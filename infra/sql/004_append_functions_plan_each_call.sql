-- The append functions' statements are planned at each call, with the tables as they are then.
-- PL/pgSQL caches a generic plan per connection after a few calls: planned while the log was small
-- (a new database), the check for event ids already stored was a sequential scan of `events`, kept
-- by a pooled connection for its whole life, so every append read the whole log: loading 100,000
-- events took 48 s and 200,000 took 211 s. A plan made per call sees the table's current size and
-- uses the event id index.
ALTER FUNCTION studio_append_batch(text[], text[], integer[], uuid[], text[], text[], text[], boolean)
  SET plan_cache_mode = force_custom_plan;
ALTER FUNCTION studio_append(text, text, uuid[], text[], text[], text, boolean)
  SET plan_cache_mode = force_custom_plan;
