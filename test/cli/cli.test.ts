import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../shared/event-store/testing.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';
import { adminCalls, startGatewayProcess, studio, waitFor } from '../support/studio-cli.ts';

// Each step starts a process that opens PGlite (seconds on a loaded 2-core machine).
describe('studio CLI on the embedded store', { timeout: 120_000 }, () => {
  let dataDir: string;
  let server: ChildProcess | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'studio-cli-'));
  });
  afterAll(async () => {
    server?.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it('start prints the URL and the admin key file (0600), answers /health, and stops cleanly', async () => {
    const run = studio(['start', '--port', '0', '--runtime-port', '0'], { STUDIO_DATA_DIR: dataDir });
    server = run.child;
    await waitFor(() => /Studio gateway\s+http:\/\/127\.0\.0\.1:\d+/.test(run.output()), 'the banner');
    const url = /Studio gateway\s+(http:\/\/\S+)/.exec(run.output())![1]!;
    const keyPath = join(dataDir, 'admin.key');
    expect(run.output()).toContain(`Admin key        ${keyPath}`);
    expect((await stat(keyPath)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dataDir, 'master.key'))).mode & 0o777).toBe(0o600);

    // The banner names the console and the API reference, and both answer.
    expect(run.output()).toContain(`Console          ${url}/console/`);
    expect((await fetch(`${url}/console/`)).status).toBe(200);
    expect((await fetch(`${url}/docs`)).status).toBe(200);

    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', event_store: { kind: 'pglite' } });

    // A second process on the same data dir is refused with a clear message.
    const second = studio(['gateway', 'start', '--port', '0'], { STUDIO_DATA_DIR: dataDir });
    expect(await second.exited).toBe(2);
    expect(second.output()).toMatch(/in use by process \d+/);

    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    server = undefined;
  });

  it('projections rebuild replays every read model in one pass, with a progress bar', async () => {
    const run = studio(['projections', 'rebuild'], { STUDIO_DATA_DIR: dataDir });
    expect(await run.exited).toBe(0);
    expect(run.output()).toMatch(/12 read models\s+\[[^\]]*\] 100%/);
    expect(run.output()).toMatch(/\d+ events read in \d+ ms \(\d+ events\/s\), one pass for all/);
    for (const name of [
      'studios',
      'tokens',
      'env',
      'usage',
      'jobs',
      'accounts',
      'prices',
      'budgets',
      'limits',
      'routes',
      'sessions',
      'chat',
    ]) {
      expect(run.output()).toMatch(new RegExp(`  ${name}: \\d+ events\n`));
    }
  });

  it('rebuild of an unknown projection names the known ones', async () => {
    const run = studio(['projections', 'rebuild', 'nope'], { STUDIO_DATA_DIR: dataDir });
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain(
      'unknown projection "nope"; known: studios, tokens, env, usage, jobs, accounts, prices, budgets, limits, routes, sessions, chat',
    );
  });

  it('audit verify checks the log a gateway sealed, with progress on stderr and the report on stdout', async () => {
    const run = studio(['start', '--port', '0', '--runtime-port', '0'], { STUDIO_DATA_DIR: dataDir });
    server = run.child;
    await waitFor(() => /Studio gateway\s+http:\/\/127\.0\.0\.1:\d+/.test(run.output()), 'the banner');
    const url = /Studio gateway\s+(http:\/\/\S+)/.exec(run.output())![1]!;
    const headers = {
      authorization: `Bearer ${(await readFile(join(dataDir, 'admin.key'), 'utf8')).trim()}`,
    };
    const created = await fetch(`${url}/v1/studios/create`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Acme', studio_id: 'acme' }),
    });
    expect(created.status).toBe(201);
    let sealed = false;
    const deadline = Date.now() + 20_000;
    while (!sealed && Date.now() < deadline) {
      const report = (await (await fetch(`${url}/v1/audit/verify`, { headers })).json()) as {
        ok: boolean;
        unsealed: number;
        events_checked: number;
      };
      sealed = report.ok === true && report.unsealed === 0 && report.events_checked > 0;
      if (!sealed) await new Promise((r) => setTimeout(r, 100));
    }
    expect(sealed).toBe(true);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    server = undefined;

    const verify = studio(['audit', 'verify'], { STUDIO_DATA_DIR: dataDir });
    expect(await verify.exited).toBe(0);
    const report = JSON.parse(verify.stdout());
    expect(report).toMatchObject({ ok: true, unsealed: 0, breaks: 0 });
    expect(report.events_checked).toBeGreaterThan(0);
    expect(verify.output()).toMatch(/verifying \[[^\]]*\] 100%/);
    expect(verify.output()).toContain(
      `ok: ${report.events_checked} events in ${report.seals_checked} seals verified`,
    );
  });

  it('stops with 1 when the embedded database stops on a PANIC, and starts again with every acknowledged write', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'studio-cli-panic-'));
    const adminKey = `adm_${randomBytes(24).toString('base64url')}`;
    const env = { STUDIO_DATA_DIR: dir, ADMIN_SECRET_KEY: adminKey };
    const startGateway = () => startGatewayProcess(env);
    const { post, envKeys } = adminCalls(adminKey);
    try {
      const first = await startGateway();
      server = first.run.child;
      // A directory where PostgreSQL makes its next WAL file: the write that needs it fails, and
      // PostgreSQL PANICs (as it does on a full disk). Sealed 48 KB values fill the WAL file.
      await mkdir(join(dir, 'pglite', 'pg_wal', 'xlogtemp.42'));
      const acknowledged: string[] = [];
      let refusal: Response | undefined;
      for (let i = 0; i < 1_000; i++) {
        const key = `FILL_${i}`;
        const res = await post(first.url, '/v1/env/upsert', {
          key,
          value: randomBytes(36 * 1024).toString('base64'),
        });
        if (res?.ok) acknowledged.push(key);
        else {
          refusal = res;
          break;
        }
      }
      // The request that met the PANIC: the server's state, not the client's fault, and worth a retry.
      expect(refusal?.status).toBe(503);
      expect(await refusal?.json()).toMatchObject({ error: { code: 'unavailable' } });
      expect(await first.run.exited).toBe(1);
      server = undefined;
      expect(first.run.output()).toMatch(/the event log stopped/);
      // The first PANIC is the cause (a second one may follow it inside the same transaction).
      expect(first.run.output()).toMatch(
        /the embedded database stopped \(PANIC: could not create file pg_wal\/xlogtemp\.42: File exists/,
      );
      expect(acknowledged.length).toBeGreaterThan(0);

      // Recovery needs that file too: the start fails, saying why in one line, not a stack.
      const refused = studio(['gateway', 'start', '--port', '0'], env);
      expect(await refused.exited).toBe(1);
      expect(refused.output()).toMatch(
        /studio: the embedded event log \(.*pglite\) did not open: PGlite failed to initialize properly: FATAL: could not create file "pg_wal\/xlogtemp\.42"/,
      );
      expect(refused.output()).not.toMatch(/^\s+at /m);

      await rm(join(dir, 'pglite', 'pg_wal', 'xlogtemp.42'), { recursive: true });
      const again = await startGateway();
      server = again.run.child;
      expect(await envKeys(again.url)).toEqual(expect.arrayContaining(acknowledged));
      again.run.child.kill('SIGTERM');
      expect(await again.run.exited).toBe(0);
      server = undefined;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('bad configuration is refused with the variable named', async () => {
    const run = studio(['start'], { STUDIO_DATA_DIR: dataDir, ADMIN_SECRET_KEY: 'short' });
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('ADMIN_SECRET_KEY must be at least 32 characters');
  });
});

const database = await freshPostgresDatabase();

describe.skipIf(database === undefined)(
  `studio audit verify on PostgreSQL ${database ? '' : `(not run: ${postgresUnavailableReason})`}`,
  { timeout: 60_000 },
  () => {
    let gw: TestGateway | undefined;
    afterAll(async () => {
      await gw?.close();
      await database?.drop();
    });

    it('names an edited row and exits 1, while a gateway keeps serving the same database', async () => {
      gw = await startTestGateway({
        store: 'postgres',
        databaseUrl: database!.url,
        sealing: { sealAfterMs: 50 },
        logLevel: 'warn',
      });
      const admin = { token: gw.adminKey };
      expect((await gw.api('POST', '/v1/studios/create', { ...admin, body: { name: 'Acme' } })).status).toBe(
        201,
      );
      await until(
        async () => (await gw!.api('GET', '/v1/audit/verify', admin)).json.unsealed === 0,
        'sealed',
      );
      const [created] = (await gw.api('GET', '/v1/audit/events?type=StudioCreated', admin)).json.items;
      const sql = new pg.Client({ connectionString: database!.url });
      await sql.connect();
      try {
        await sql.query(`UPDATE events SET data = data || '{"name": "Mallory"}' WHERE position = $1`, [
          created.position,
        ]);
      } finally {
        await sql.end();
      }

      const verify = studio(['audit', 'verify'], {
        STUDIO_EVENT_STORE: 'postgres',
        DATABASE_URL: database!.url,
        STUDIO_DATA_DIR: join(tmpdir(), 'studio-cli-unused'),
      });
      expect(await verify.exited).toBe(1);
      expect(JSON.parse(verify.stdout())).toMatchObject({
        ok: false,
        first_break: { position: created.position, reason: 'edited' },
      });
      expect(verify.output()).toContain(`BROKEN: edited at position ${created.position}`);
    });
  },
);
