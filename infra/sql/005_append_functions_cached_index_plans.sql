-- The append functions' plans are cached again, and always use the indexes. Planning every call
-- (migration 004) kept the check for event ids already stored from becoming a sequential scan, but
-- it planned each of the function's statements at every call: on the embedded PGlite that was a
-- fifth of the store's CPU per append. Every statement of these functions has an index to use, so
-- with sequential scans off the plan PL/pgSQL caches (made, on a new database, while `events` is
-- still empty) looks rows up by index however large the log grows.
ALTER FUNCTION studio_append_batch(text[], text[], integer[], uuid[], text[], text[], text[], boolean)
  RESET plan_cache_mode;
ALTER FUNCTION studio_append_batch(text[], text[], integer[], uuid[], text[], text[], text[], boolean)
  SET enable_seqscan = off;
ALTER FUNCTION studio_append(text, text, uuid[], text[], text[], text, boolean)
  RESET plan_cache_mode;
ALTER FUNCTION studio_append(text, text, uuid[], text[], text[], text, boolean)
  SET enable_seqscan = off;
