-- One append in one statement: a round trip instead of eight, and the same rules as before.
-- Outcomes: ok (revision = the stream's new last revision, pos = last position), duplicate (every id
-- already in this stream: the stored result), duplicate_id (clash = an id stored elsewhere),
-- wrong_expected (revision = the stream's actual last revision, -1 when it has none), empty.
CREATE FUNCTION studio_append(
  p_stream text,
  p_expected text,
  p_ids uuid[],
  p_types text[],
  p_data text[],
  p_metadata text,
  p_notify boolean
) RETURNS TABLE (outcome text, revision bigint, pos bigint, clash uuid)
LANGUAGE plpgsql AS $$
DECLARE
  n integer := coalesce(array_length(p_ids, 1), 0);
  actual bigint;
  found_count integer;
  same_count integer;
BEGIN
  -- Appends to one stream queue here before the transaction takes its id (see sql-store.ts).
  PERFORM pg_advisory_xact_lock(8600002, hashtext(p_stream));
  SELECT s.revision INTO actual FROM streams s WHERE s.stream_id = p_stream FOR UPDATE;
  actual := coalesce(actual, -1);

  IF n > 0 THEN
    SELECT count(*), count(*) FILTER (WHERE e.stream_id = p_stream)
      INTO found_count, same_count
      FROM events e WHERE e.event_id = ANY (p_ids);
    IF found_count > 0 THEN
      IF found_count = n AND same_count = n THEN
        RETURN QUERY SELECT 'duplicate'::text, e.revision, e.position, NULL::uuid
          FROM events e WHERE e.event_id = p_ids[n];
        RETURN;
      END IF;
      RETURN QUERY SELECT 'duplicate_id'::text, NULL::bigint, NULL::bigint, e.event_id
        FROM events e WHERE e.event_id = ANY (p_ids)
        ORDER BY (e.stream_id = p_stream), array_position(p_ids, e.event_id) LIMIT 1;
      RETURN;
    END IF;
  END IF;

  IF NOT (p_expected = 'any'
          OR (p_expected = 'no_stream' AND actual = -1)
          OR (p_expected = 'stream_exists' AND actual <> -1)
          OR (p_expected ~ '^[0-9]+$' AND p_expected::bigint = actual)) THEN
    RETURN QUERY SELECT 'wrong_expected'::text, actual, NULL::bigint, NULL::uuid;
    RETURN;
  END IF;

  IF n = 0 THEN
    RETURN QUERY SELECT 'empty'::text, actual,
      coalesce((SELECT e.position FROM events e WHERE e.stream_id = p_stream ORDER BY e.revision DESC LIMIT 1), 0),
      NULL::uuid;
    RETURN;
  END IF;

  IF actual = -1 THEN
    INSERT INTO streams (stream_id, revision) VALUES (p_stream, n - 1);
  ELSE
    UPDATE streams SET revision = actual + n WHERE stream_id = p_stream;
  END IF;
  INSERT INTO events (position, stream_id, revision, event_id, type, data, metadata)
  SELECT (pg_current_xact_id()::text::bigint << 16) + x.i - 1, p_stream, actual + x.i, x.id, x.t, x.d::jsonb, p_metadata::jsonb
  FROM unnest(p_ids, p_types, p_data) WITH ORDINALITY AS x(id, t, d, i);
  IF p_notify THEN
    PERFORM pg_notify('studio_events', p_stream);
  END IF;
  RETURN QUERY SELECT 'ok'::text, actual + n, (pg_current_xact_id()::text::bigint << 16) + n - 1, NULL::uuid;
END;
$$;
