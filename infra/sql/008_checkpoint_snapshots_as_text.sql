-- A read model's snapshot is JSON text, written whole and read whole, never queried inside: stored
-- as `jsonb`, every save had the server parse it and compress it with pglz (11 to 14 s for the
-- 200 MB snapshot of the tokens read model over 1,000,000 events, measured), and every load print
-- it again. As `text` it is stored as sent, and compressed with lz4 where the server has it
-- (PostgreSQL 14 and later, built with lz4): the same save took 2 s.
--
-- Snapshots saved as `jsonb` by earlier versions wrapped a value whose JSON text `jsonb` refuses
-- (`{"$studio_json": "<json text>"}`); `text` takes any JSON text, so they are unwrapped here.
ALTER TABLE projection_checkpoints ALTER COLUMN state TYPE text USING (
  CASE
    WHEN jsonb_typeof(state) = 'object'
      AND jsonb_typeof(state -> '$studio_json') = 'string'
      AND state - '$studio_json' = '{}'::jsonb
    THEN state ->> '$studio_json'
    ELSE state::text
  END
);

DO $$
BEGIN
  EXECUTE 'ALTER TABLE projection_checkpoints ALTER COLUMN state SET COMPRESSION lz4';
EXCEPTION WHEN OTHERS THEN
  -- An earlier server, or one built without lz4: its default compression then.
  NULL;
END $$;
