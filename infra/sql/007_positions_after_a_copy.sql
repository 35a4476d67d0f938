-- A log copied in (`studio log copy`) keeps the positions it had, so that its seals, which digest
-- every event with its position, still verify here. Positions this database makes are
-- ((transaction id + studio.xid_offset) << 16) + index: the copy raises the offset, a setting of
-- the database (ALTER DATABASE … SET studio.xid_offset), until they come after every position it
-- wrote; sessions read it as they start. They still follow transaction ids, which is what readers
-- rely on. A setting, not a table: reading a table in this function made every append four to
-- fifteen times slower (16 writers, measured).

-- One append per transaction, from before group commit: nothing calls it any more.
DROP FUNCTION studio_append(text, text, uuid[], text[], text[], text, boolean);

CREATE OR REPLACE FUNCTION studio_append_batch(
  p_streams text[],
  p_expected text[],
  p_counts integer[],
  p_ids uuid[],
  p_types text[],
  p_data text[],
  p_metadata text[],
  p_notify boolean
) RETURNS TABLE (k integer, outcome text, revision bigint, pos bigint, clash uuid)
LANGUAGE plpgsql AS $$
DECLARE
  appends integer := coalesce(array_length(p_streams, 1), 0);
  lock_key integer;
  stream text;
  expected text;
  ids uuid[];
  n integer;
  next_id integer := 1;
  base bigint := 0;
  xid_base bigint;
  actual bigint;
  found_count integer;
  same_count integer;
BEGIN
  -- Every stream lock of the batch before any write takes the transaction id (see sql-store.ts),
  -- in one order, so two batches never wait for each other in a cycle.
  FOR lock_key IN SELECT DISTINCT hashtext(s) FROM unnest(p_streams) AS s ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(8600002, lock_key);
  END LOOP;

  FOR i IN 1 .. appends LOOP
    stream := p_streams[i];
    expected := p_expected[i];
    n := p_counts[i];
    ids := p_ids[next_id : next_id + n - 1];
    next_id := next_id + n;

    SELECT s.revision INTO actual FROM streams s WHERE s.stream_id = stream FOR UPDATE;
    actual := coalesce(actual, -1);

    IF n > 0 THEN
      SELECT count(*), count(*) FILTER (WHERE e.stream_id = stream)
        INTO found_count, same_count
        FROM events e WHERE e.event_id = ANY (ids);
      IF found_count > 0 THEN
        IF found_count = n AND same_count = n THEN
          RETURN QUERY SELECT i, 'duplicate'::text, e.revision, e.position, NULL::uuid
            FROM events e WHERE e.event_id = ids[n];
        ELSE
          RETURN QUERY SELECT i, 'duplicate_id'::text, NULL::bigint, NULL::bigint, e.event_id
            FROM events e WHERE e.event_id = ANY (ids)
            ORDER BY (e.stream_id = stream), array_position(ids, e.event_id) LIMIT 1;
        END IF;
        CONTINUE;
      END IF;
    END IF;

    IF NOT (expected = 'any'
            OR (expected = 'no_stream' AND actual = -1)
            OR (expected = 'stream_exists' AND actual <> -1)
            OR (expected ~ '^[0-9]+$' AND expected::bigint = actual)) THEN
      RETURN QUERY SELECT i, 'wrong_expected'::text, actual, NULL::bigint, NULL::uuid;
      CONTINUE;
    END IF;

    IF n = 0 THEN
      RETURN QUERY SELECT i, 'empty'::text, actual,
        coalesce((SELECT e.position FROM events e WHERE e.stream_id = stream ORDER BY e.revision DESC LIMIT 1), 0),
        NULL::uuid;
      CONTINUE;
    END IF;

    IF base + n > 65536 THEN
      RAISE EXCEPTION 'a batch holds at most 65536 events';
    END IF;
    xid_base := coalesce(xid_base, (pg_current_xact_id()::text::bigint + coalesce(nullif(current_setting('studio.xid_offset', true), ''), '0')::bigint) << 16);
    IF actual = -1 THEN
      INSERT INTO streams (stream_id, revision) VALUES (stream, n - 1);
    ELSE
      UPDATE streams SET revision = actual + n WHERE stream_id = stream;
    END IF;
    INSERT INTO events (position, stream_id, revision, event_id, type, data, metadata)
    SELECT xid_base + base + x.j - 1, stream, actual + x.j, x.id, x.t, x.d::jsonb, p_metadata[i]::jsonb
    FROM unnest(ids, p_types[next_id - n : next_id - 1], p_data[next_id - n : next_id - 1]) WITH ORDINALITY AS x(id, t, d, j);
    base := base + n;
    RETURN QUERY SELECT i, 'ok'::text, actual + n, xid_base + base - 1, NULL::uuid;
  END LOOP;

  IF p_notify AND base > 0 THEN
    PERFORM pg_notify('studio_events', '');
  END IF;
END;
$$;

ALTER FUNCTION studio_append_batch(text[], text[], integer[], uuid[], text[], text[], text[], boolean)
  SET enable_seqscan = off;
ALTER FUNCTION studio_append_batch(text[], text[], integer[], uuid[], text[], text[], text[], boolean)
  SET plan_cache_mode = auto;
