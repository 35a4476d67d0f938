-- The event log. `position` is the global order: (transaction id << 16) + index in the append, so
-- positions follow transaction ids. Readers only take rows whose transaction is older than every
-- transaction still open (pg_snapshot_xmin), so a transaction that commits late can never land
-- behind a position a reader has already passed. Positions are monotonic, not dense.
CREATE TABLE streams (
  stream_id text PRIMARY KEY,
  revision  bigint NOT NULL
);

CREATE TABLE events (
  position       bigint PRIMARY KEY,
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  stream_id      text NOT NULL,
  revision       bigint NOT NULL,
  event_id       uuid NOT NULL UNIQUE,
  type           text NOT NULL,
  data           jsonb NOT NULL,
  metadata       jsonb NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (stream_id, revision)
);

CREATE INDEX events_type_position ON events (type, position);

-- Checkpoints of projections, with an optional snapshot of an in-memory read model's state.
CREATE TABLE projection_checkpoints (
  name       text PRIMARY KEY,
  version    integer NOT NULL,
  position   bigint NOT NULL,
  state      jsonb,
  updated_at timestamptz NOT NULL DEFAULT now()
);
