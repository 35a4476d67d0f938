import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { eventDigest } from '../../services/audit/digest.ts';
import { SEALS_STREAM } from '../../services/audit/seal.ts';
import type { StoredEvent } from '../../shared/event-store/types.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { startTestGateway, type TestGateway, type TestStoreKind } from '../support/gateway.ts';
import { type FreshDatabase, freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';

// GET /v1/audit/verify over real HTTP: the log sealed by the gateway's sealer, checked against its
// seals; on PostgreSQL, rows edited, deleted and inserted behind the gateway's back are named.

const sealing = { sealEvery: 1_000, sealAfterMs: 50 };
const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

interface AuditItem {
  position: number;
  stream: string;
  type: string;
  actor: string;
  data: { events?: [number, string][] };
}

async function sealedGateway(store: TestStoreKind, databaseUrl?: string): Promise<TestGateway> {
  const gw = await startTestGateway({ store, databaseUrl, sealing, logLevel: 'warn' });
  opened.push(gw);
  for (const id of ['acme', 'globex', 'initech']) {
    const created = await gw.api('POST', '/v1/studios/create', {
      token: gw.adminKey,
      body: { name: id, studio_id: id },
    });
    expect(created.status).toBe(201);
  }
  await untilSealed(gw);
  return gw;
}

const verify = async (gw: TestGateway) => {
  const res = await gw.api('GET', '/v1/audit/verify', { token: gw.adminKey });
  expect(res.status).toBe(200);
  return res.json;
};

/** Every event written so far sealed (a write answered by the gateway is visible: it waits for that). */
const untilSealed = (gw: TestGateway) =>
  waitUntil(async () => (await verify(gw)).unsealed === 0, 'every event sealed');

const auditLog = async (gw: TestGateway): Promise<AuditItem[]> =>
  (await gw.api('GET', '/v1/audit/events?limit=1000', { token: gw.adminKey })).json.items;

describe('GET /v1/audit/verify on the memory store', () => {
  it('checks every sealed event; the seals are in the audit log, and the read models ignore them', async () => {
    const gw = await sealedGateway('memory');
    const log = await auditLog(gw);
    const seals = log.filter((e) => e.stream === SEALS_STREAM);
    const sealed = log.filter((e) => e.stream !== SEALS_STREAM);
    expect(seals.length).toBeGreaterThan(0);
    expect(seals.every((e) => e.type === 'LogSealed' && e.actor === 'system')).toBe(true);
    expect(seals.flatMap((s) => s.data.events!.map(([p]) => p))).toEqual(sealed.map((e) => e.position));

    expect(await verify(gw)).toEqual({
      ok: true,
      events_checked: sealed.length,
      seals_checked: seals.length,
      sealed_through: sealed.at(-1)!.position,
      unsealed: 0,
      head: log.at(-1)!.position,
      breaks: 0,
    });
    const studios = (await gw.api('GET', '/v1/studios/list', { token: gw.adminKey })).json.items;
    expect(studios.map((s: { id: string }) => s.id).sort()).toEqual(['acme', 'globex', 'initech']);
  });
});

const database = await freshPostgresDatabase();
afterAll(async () => {
  await database?.drop();
});

describe.skipIf(database === undefined)(
  `GET /v1/audit/verify on PostgreSQL, rows changed directly in the database ${database ? '' : `(not run: ${postgresUnavailableReason})`}`,
  { timeout: 60_000 },
  () => {
    /** A gateway on a database of its own, its log sealed, and a SQL client on that database. */
    async function tamperable() {
      const db: FreshDatabase = (await freshPostgresDatabase())!;
      opened.push({ close: () => db.drop() });
      const gw = await sealedGateway('postgres', db.url);
      const sql = new pg.Client({ connectionString: db.url });
      await sql.connect();
      opened.push({ close: () => sql.end() });
      const log = await auditLog(gw);
      const seals = log.filter((e) => e.stream === SEALS_STREAM);
      const sealed = log.filter((e) => e.stream !== SEALS_STREAM);
      /** The seal whose range lists `position`. */
      const sealOf = (position: number) =>
        seals.find((s) => s.data.events!.some(([p]) => p === position))!.position;
      return { gw, sql, seals, sealed, sealOf };
    }

    it('an edited row: its position, "edited"', async () => {
      const { gw, sql, sealed, sealOf } = await tamperable();
      const target = sealed[1]!;
      await sql.query(`UPDATE events SET data = data || '{"name": "Mallory"}' WHERE position = $1`, [
        target.position,
      ]);
      expect(await verify(gw)).toMatchObject({
        ok: false,
        events_checked: sealed.length - 1,
        breaks: 1,
        first_break: { position: target.position, reason: 'edited', seal: sealOf(target.position) },
      });
    });

    it('a deleted row: its position, "missing"', async () => {
      const { gw, sql, sealed, sealOf } = await tamperable();
      const target = sealed[2]!;
      expect((await sql.query('DELETE FROM events WHERE position = $1', [target.position])).rowCount).toBe(1);
      expect(await verify(gw)).toMatchObject({
        ok: false,
        breaks: 1,
        first_break: { position: target.position, reason: 'missing', seal: sealOf(target.position) },
      });
    });

    it('an inserted row inside a sealed range: its position, "unexpected"', async () => {
      const { gw, sql, sealed, sealOf } = await tamperable();
      // A position no append takes: positions are (transaction id << 16) + index in the append.
      const next = sealed.find((e, i) => i > 0 && e.position % 65_536 === 0)!;
      const position = next.position - 1;
      await sql.query(
        `INSERT INTO events (position, stream_id, revision, event_id, type, data, metadata)
         VALUES ($1, 'studio-intruder', 0, gen_random_uuid(), 'StudioCreated',
                 '{"studioId": "intruder", "name": "Intruder"}', '{"actor": "admin"}')`,
        [position],
      );
      await waitUntil(async () => (await verify(gw)).ok === false, 'the inserted row is visible');
      expect(await verify(gw)).toMatchObject({
        ok: false,
        events_checked: sealed.length,
        breaks: 1,
        first_break: { position, reason: 'unexpected', seal: sealOf(next.position) },
      });
    });

    it('an edited seal: the seal, "seal_edited"', async () => {
      const { gw, sql, seals } = await tamperable();
      const seal = seals[0]!;
      await sql.query(
        `UPDATE events SET data = jsonb_set(data, '{events,0,1}', '"ffffffffffffffff"') WHERE position = $1`,
        [seal.position],
      );
      expect((await verify(gw)).first_break).toEqual({
        position: seal.position,
        reason: 'seal_edited',
        seal: seal.position,
      });
    });

    it('an event read back from PostgreSQL (keys reordered by jsonb) digests as it was appended and sealed', async () => {
      const { gw } = await tamperable();
      const { events } = gw.running.ctx;
      const data = { bb: 1, a: { long_key: true, k: [{ zz: 1, y: 'é' }] } };
      const metadata = { actor: 'admin', requestId: 'req-digest', correlationId: 'corr-1' };
      const id = '3f1e2d4c-5b6a-4978-8a9b-0c1d2e3f4a5b';
      await events.append('studio-digest', [{ id, type: 'Noted', data }], { metadata });
      // Visible once no older append (a seal) is still in flight.
      let stored: StoredEvent | undefined;
      await waitUntil(async () => {
        [stored] = await events.readAll({ streamId: 'studio-digest' });
        return stored !== undefined;
      }, 'the event visible');
      expect(Object.keys(stored!.data as object)).toEqual(['a', 'bb']); // jsonb reordered them
      const asAppended: StoredEvent = { ...stored!, data, metadata };
      expect(JSON.stringify(asAppended)).not.toBe(JSON.stringify(stored));
      expect(eventDigest(stored!)).toBe(eventDigest(asAppended));

      await untilSealed(gw);
      const listed = (await auditLog(gw))
        .filter((e) => e.stream === SEALS_STREAM)
        .flatMap((s) => s.data.events!)
        .find(([p]) => p === stored!.position);
      expect(listed).toEqual([stored!.position, eventDigest(asAppended)]);
      expect((await verify(gw)).ok).toBe(true);
    });
  },
);
