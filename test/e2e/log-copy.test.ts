import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyLog, type LogWriter } from '../../services/audit/log-copy.ts';
import { SEALS_STREAM } from '../../services/audit/seal.ts';
import { LogSealer } from '../../services/audit/sealer.ts';
import { verifyLog } from '../../services/audit/verify.ts';
import { openEarlierLog } from '../../shared/event-store/pglite-reader.ts';
import { openSqliteLog } from '../../shared/event-store/sqlite/open.ts';
import type { StoredEvent } from '../../shared/event-store/types.ts';
import { createLogger } from '../../shared/logger.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { untilSealed } from '../audit/until-sealed.ts';
import { adminOk } from '../support/admin.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { earlierPgliteLog } from '../support/pglite-log.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';
import { studio } from '../support/studio-cli.ts';

// A history kept by an earlier Studio (PGlite) reaches SQLite and then PostgreSQL through
// `studio log copy`, event for event, and a gateway on each copy serves the same studios, tokens
// and balances, its seals verified.

const database = await freshPostgresDatabase();
const masterKey = randomBytes(32).toString('hex');
let root: string;
let token: string;
/** What the first gateway showed; every copy must show the same. */
let before: { studios: unknown; budgets: unknown; tokens: unknown };
let earlierEvents: StoredEvent[];
/** Events the earlier log's seals cover, as verified on its first copy. */
let sealedEvents: number;

async function shown(gw: TestGateway) {
  return {
    studios: (await adminOk(gw, 'GET', '/v1/studios/list')).json.items,
    budgets: (await adminOk(gw, 'GET', '/v1/studios/budgets/list?studio_id=acme')).json.items,
    tokens: (await adminOk(gw, 'GET', '/v1/studios/tokens/list?studio_id=acme')).json.items,
  };
}

async function chat(gw: TestGateway): Promise<number> {
  const res = await gw.api('POST', '/v1/ai/chat/completions', {
    token,
    body: { model: 'dev/echo', messages: [{ role: 'user', content: 'a long enough question to cost' }] },
  });
  return res.status;
}

/** `studio log copy`, its JSON report and what it printed. */
async function logCopy(args: string[]) {
  const run = studio(['log', 'copy', ...args], { STUDIO_MASTER_KEY: masterKey });
  const code = await run.exited;
  return { code, output: run.output(), report: code === 2 ? undefined : JSON.parse(run.stdout() || 'null') };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'studio-log-copy-'));
  // A gateway's real history: a studio, a token, a price, a hard budget, generations charged to it.
  const gw = await startTestGateway({
    store: 'sqlite',
    dataDir: join(root, 'first'),
    masterKey,
    logLevel: 'silent',
  });
  try {
    await adminOk(gw, 'POST', '/v1/studios/create', { name: 'Acme', studio_id: 'acme' });
    token = (await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'acme' })).json.user_token;
    await adminOk(gw, 'POST', '/v1/ai/prices/upsert', {
      model: 'dev/echo',
      input_per_mtok: 5000,
      output_per_mtok: 9000,
    });
    await adminOk(gw, 'POST', '/v1/studios/budgets/set', {
      studio_id: 'acme',
      amount_usd: 10,
      window: 'total',
      mode: 'hard',
    });
    for (let i = 0; i < 12; i++) expect(await chat(gw)).toBe(200);
    before = await shown(gw);
  } finally {
    await gw.close();
  }
  expect((before.budgets as { spent_usd: number }[])[0]?.spent_usd).toBeGreaterThan(0);

  // The same events as an earlier Studio kept them: in PGlite, at positions PostgreSQL made from
  // transaction ids (far apart, and past any this cluster has made yet), at their own times; then
  // sealed there.
  const first = openSqliteLog(join(root, 'first', 'log.sqlite'));
  const history = (await first.store.readAll()).filter((e) => e.streamId !== SEALS_STREAM);
  await first.close();
  const earlier = await earlierPgliteLog(join(root, 'earlier', 'pglite'));
  await earlier.importEvents(
    history.map((event, i) => ({ ...event, position: (50_000_000 + 2 * i) * 65_536 })),
  );
  const sealer = new LogSealer({
    events: earlier,
    logger: createLogger('silent'),
    sealEvery: 7,
    sealAfterMs: 20,
  });
  const stop = new AbortController();
  const sealing = sealer.run(stop.signal);
  await untilSealed(earlier, await earlier.headPosition());
  stop.abort();
  await sealing;
  earlierEvents = await earlier.readAll();
  await earlier.close();
  // Positions as PostgreSQL made them: far apart, nothing like a dense count.
  expect(earlierEvents.at(-1)!.position).toBeGreaterThan(65_536);
}, 120_000);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
  await database?.drop();
});

describe('studio log copy', { timeout: 120_000 }, () => {
  it('copies an earlier PGlite log into SQLite, resuming where an interrupted copy stopped', async () => {
    const target = join(root, 'second');
    // An interrupted run: the third page of five failed to commit, the two before it stayed.
    const source = await openEarlierLog(join(root, 'earlier'));
    const log = openSqliteLog(join(target, 'log.sqlite'));
    let pages = 0;
    const failing: LogWriter = {
      readAll: (options) => log.store.readAll(options),
      headPosition: () => log.store.headPosition(),
      importEvents: async (events) => {
        if (++pages === 3) throw new Error('the machine went down');
        await log.store.importEvents(events);
      },
    };
    await expect(copyLog(source, failing, { pageSize: 5 })).rejects.toThrow('the machine went down');
    await log.close();
    await source.close();

    const resumed = await logCopy(['--from', `pglite:${join(root, 'earlier')}`, '--to', `sqlite:${target}`]);
    expect(resumed.code, resumed.output).toBe(0);
    expect(resumed.report).toMatchObject({
      ok: true,
      resumed_after: earlierEvents[9]!.position,
      copied: earlierEvents.length - 10,
      compared: { source_events: earlierEvents.length, target_events: earlierEvents.length, mismatches: 0 },
      verify: { ok: true, breaks: 0, unsealed: 0 },
    });
    sealedEvents = resumed.report.verify.events_checked;
    expect(sealedEvents).toBeGreaterThan(10);
    expect(resumed.output).toMatch(/copying\s+\[[^\]]*\] 100%/);

    // Once more: nothing left to copy, the same verdict.
    const again = await logCopy(['--from', `pglite:${join(root, 'earlier')}`, '--to', `sqlite:${target}`]);
    expect(again.code, again.output).toBe(0);
    expect(again.report).toMatchObject({ ok: true, copied: 0, compared: { mismatches: 0 } });

    // Every event as the earlier Studio stored it: ids, positions, times, content.
    const copied = openSqliteLog(join(target, 'log.sqlite'));
    expect(await copied.store.readAll()).toEqual(earlierEvents);
    await copied.close();
  });

  it('a gateway on the SQLite copy serves the same studios, tokens and balances, and goes on from there', async () => {
    const gw = await startTestGateway({
      store: 'sqlite',
      dataDir: join(root, 'second'),
      masterKey,
      logLevel: 'silent',
    });
    try {
      expect(await shown(gw)).toStrictEqual(before);
      expect((await adminOk(gw, 'GET', '/v1/audit/verify')).json.ok).toBe(true);
      expect(await chat(gw)).toBe(200);
      const head = await gw.running.ctx.events.headPosition();
      expect(head).toBeGreaterThan(earlierEvents.at(-1)!.position);
    } finally {
      await gw.close();
    }
  });

  it('refuses a target that holds another log, writing nothing to it', async () => {
    const other = await startTestGateway({
      store: 'sqlite',
      dataDir: join(root, 'other'),
      logLevel: 'silent',
    });
    await adminOk(other, 'POST', '/v1/studios/create', { name: 'Other', studio_id: 'other' });
    await other.close();
    const refused = await logCopy([
      '--from',
      `pglite:${join(root, 'earlier')}`,
      '--to',
      `sqlite:${join(root, 'other')}`,
    ]);
    expect(refused.code, refused.output).toBe(1);
    expect(refused.output).toMatch(/is not a copy of this log, so nothing was written/);
    const bad = await logCopy(['--from', 'nowhere', '--to', `sqlite:${join(root, 'x')}`]);
    expect(bad.code).toBe(2);
    expect(bad.output).toContain('"nowhere" names no log');
    const kurrent = await logCopy([
      '--from',
      `sqlite:${join(root, 'second')}`,
      '--to',
      'kurrentdb://127.0.0.1:9',
    ]);
    expect(kurrent.code).toBe(2);
    expect(kurrent.output).toContain('a copy cannot go to KurrentDB');
    // A source that is not there is not made empty; a server that cannot be reached is named.
    const missing = await logCopy([
      '--from',
      `sqlite:${join(root, 'missing')}`,
      '--to',
      `sqlite:${join(root, 'y')}`,
    ]);
    expect(missing.code).toBe(1);
    expect(missing.output).toContain(`${join(root, 'missing', 'log.sqlite')} does not exist`);
    expect(existsSync(join(root, 'missing'))).toBe(false);
    const unreachable = await logCopy([
      '--from',
      `sqlite:${join(root, 'second')}`,
      '--to',
      'postgres://studio@127.0.0.1:1/nowhere',
    ]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.output).toMatch(/^studio: cannot open postgres:\/\/studio@127\.0\.0\.1:1\/nowhere: /m);
    expect(unreachable.output).not.toMatch(/^\s+at /m);
  });

  describe.skipIf(database === undefined)(
    database ? 'on to PostgreSQL' : `on to PostgreSQL (skipped: ${postgresUnavailableReason})`,
    () => {
      it('copies the SQLite log into PostgreSQL, where gateways serve the same and positions go on after it', async () => {
        const copied = await logCopy(['--from', `sqlite:${join(root, 'second')}`, '--to', database!.url]);
        expect(copied.code, copied.output).toBe(0);
        expect(copied.report).toMatchObject({ ok: true, resumed_after: 0, compared: { mismatches: 0 } });
        expect(copied.report.copied).toBeGreaterThan(earlierEvents.length);
        expect(copied.output).not.toContain(new URL(database!.url).password || '\u0000');

        const gw = await startTestGateway({
          store: 'postgres',
          databaseUrl: database!.url,
          masterKey,
          logLevel: 'silent',
        });
        try {
          const now = await shown(gw);
          expect(now.studios).toEqual(before.studios);
          expect(now.tokens).toEqual(before.tokens);
          // One more generation was charged on the SQLite copy.
          expect((now.budgets as { spent_usd: number }[])[0]!.spent_usd).toBeGreaterThan(
            (before.budgets as { spent_usd: number }[])[0]!.spent_usd,
          );
          const head = await gw.running.ctx.events.headPosition();
          expect(await chat(gw)).toBe(200);
          // PostgreSQL shows an event once every older transaction has ended, in any database of the
          // server: another suite's open transaction may hold it back a moment.
          let after: { position: number }[] = [];
          await waitUntil(async () => {
            after = await gw.running.ctx.events.readAll({ after: head });
            return after.length > 0;
          }, "the generation's events are read back");
          expect(after.every((e) => e.position > head)).toBe(true);
          const report = await verifyLog(gw.running.ctx.events);
          expect(report).toMatchObject({ ok: true, breaks: 0 });
          expect(report.events_checked).toBeGreaterThanOrEqual(sealedEvents);
        } finally {
          await gw.close();
        }
      });
    },
  );
});
