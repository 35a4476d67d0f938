import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../shared/testing/wait.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';
import { studio } from '../support/studio-cli.ts';

// Each step starts a process of its own (a second or two on a loaded 2-core machine).
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
    await waitUntil(
      () => /Studio gateway\s+http:\/\/127\.0\.0\.1:\d+/.test(run.output()),
      'the banner is printed',
      60_000,
    );
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
    expect(await health.json()).toMatchObject({ status: 'ok', event_store: { kind: 'sqlite' } });

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
    expect(run.output()).toMatch(/20 read models\s+\[[^\]]*\] 100%/);
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
      'console-sessions',
      'requests',
      'capture',
      'mcp-servers',
      'mcp-access',
      'alert-settings',
      'alert-history',
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
      'unknown projection "nope"; known: studios, tokens, env, usage, jobs, accounts, prices, connections, budgets, limits, routes, console-sessions, requests, capture, mcp-servers, mcp-access, alert-settings, alert-history, sessions, chat',
    );
  });

  it('audit verify checks the log a gateway sealed, with progress on stderr and the report on stdout', async () => {
    const run = studio(['start', '--port', '0', '--runtime-port', '0'], { STUDIO_DATA_DIR: dataDir });
    server = run.child;
    await waitUntil(
      () => /Studio gateway\s+http:\/\/127\.0\.0\.1:\d+/.test(run.output()),
      'the banner is printed',
      60_000,
    );
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

  it('a log that cannot be opened is refused in one line, naming it and why, with exit code 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'studio-cli-unopenable-'));
    try {
      // A folder where the log's file should be: SQLite cannot open it.
      await mkdir(join(dir, 'log.sqlite'));
      const refused = studio(['gateway', 'start', '--port', '0'], { STUDIO_DATA_DIR: dir });
      expect(await refused.exited).toBe(1);
      expect(refused.output()).toMatch(/studio: the embedded event log \(.*log\.sqlite\) did not open: /);
      expect(refused.output()).not.toMatch(/^\s+at /m);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a data directory that holds an earlier PGlite log is not started empty: it names the copy to run', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'studio-cli-earlier-'));
    try {
      await mkdir(join(dir, 'pglite'));
      await writeFile(join(dir, 'pglite', 'PG_VERSION'), '17\n');
      const refused = studio(['gateway', 'start', '--port', '0'], { STUDIO_DATA_DIR: dir });
      expect(await refused.exited).toBe(1);
      expect(refused.output()).toContain(
        `studio log copy --from pglite:${join(dir, 'pglite')} --to sqlite:${join(dir, 'log.sqlite')}`,
      );
      expect(refused.output()).not.toMatch(/^\s+at /m);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('STUDIO_EVENT_STORE=pglite is refused, saying how to bring an earlier log over', async () => {
    const run = studio(['start'], { STUDIO_DATA_DIR: dataDir, STUDIO_EVENT_STORE: 'pglite' });
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('pglite is no longer a store');
    expect(run.output()).toContain('studio log copy --from pglite:DIR');
  });

  it('starts on the memory store with both keys given and no data dir yet: the runtime keeps its token there', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'studio-cli-memory-')), 'not-yet');
    try {
      const run = studio(['start', '--port', '0', '--runtime-port', '0'], {
        STUDIO_DATA_DIR: dir,
        STUDIO_EVENT_STORE: 'memory',
        ADMIN_SECRET_KEY: `adm_${randomBytes(24).toString('base64url')}`,
        STUDIO_MASTER_KEY: randomBytes(32).toString('hex'),
      });
      server = run.child;
      await waitUntil(
        () => /Agent runtime\s+http:\/\/127\.0\.0\.1:\d+/.test(run.output()),
        'the runtime banner is printed',
        60_000,
      );
      expect((await stat(join(dir, 'runtime.token'))).mode & 0o777).toBe(0o600);
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
      server = undefined;
    } finally {
      await rm(dirname(dir), { recursive: true, force: true });
    }
  });

  it('verify and rebuild where there is no log refuse with exit code 2, and make no data dir', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'studio-no-log-'));
    try {
      for (const args of [
        ['audit', 'verify'],
        ['projections', 'rebuild'],
      ]) {
        const run = studio(args, {}, empty);
        expect(await run.exited).toBe(2);
        expect(run.output()).toContain(`no log at ${join(empty, '.studio', 'log.sqlite')}`);
        expect(run.output()).toContain(`there is nothing to ${args[1] === 'verify' ? 'verify' : 'rebuild'}`);
      }
      await expect(stat(join(empty, '.studio'))).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await rm(empty, { recursive: true, force: true });
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

    it('refuses an empty database with exit code 2, and leaves it empty', async () => {
      const empty = await freshPostgresDatabase();
      try {
        const verify = studio(['audit', 'verify'], {
          STUDIO_EVENT_STORE: 'postgres',
          DATABASE_URL: empty!.url,
        });
        expect(await verify.exited).toBe(2);
        expect(verify.output()).toContain('no Studio log in the database at');
        const sql = new pg.Client({ connectionString: empty!.url });
        await sql.connect();
        try {
          expect((await sql.query("SELECT to_regclass('events') AS t")).rows[0].t).toBeNull();
        } finally {
          await sql.end();
        }
      } finally {
        await empty?.drop();
      }
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
      await waitUntil(
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
