import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../shared/crypto.ts';
import { adminOk, asAdmin } from '../support/admin.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';

// Secrets never appear in plaintext in an event, a log line or a response (docs/security.md).
// Env secrets and user tokens are searched for in every byte the gateway leaves behind: the files of
// the SQLite data dir, every table of the PostgreSQL database, the log (at trace level) and every
// response body. Plain (non-secret) values are searched for the same way, to prove each search sees.

const database = await freshPostgresDatabase();
afterAll(async () => {
  await database?.drop();
});

const random = (prefix: string) => `${prefix}${randomBytes(24).toString('base64url')}`;

/** The encodings a careless implementation might store a secret in. */
function encodings(secret: string): Buffer[] {
  const bytes = Buffer.from(secret, 'utf8');
  return [
    bytes,
    Buffer.from(bytes.toString('base64').replace(/=+$/, '')),
    Buffer.from(bytes.toString('base64url')),
    Buffer.from(bytes.toString('hex')),
    Buffer.from(secret, 'utf16le'),
  ];
}

/** Which of `needles` (by label) occur in `haystack`, in any of their encodings. */
function found(haystack: Buffer, needles: Record<string, string>): string[] {
  return Object.entries(needles)
    .filter(([, value]) => encodings(value).some((encoded) => haystack.includes(encoded)))
    .map(([label]) => label);
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

interface StorageScan {
  /** Labels of the needles found anywhere in storage. */
  found(needles: Record<string, string>): string[];
  /** How much was read, so a scan of nothing cannot pass. */
  size: string;
}

function secretsSuite(
  store: 'sqlite' | 'postgres',
  scanStorage: (gw: TestGateway) => Promise<StorageScan>,
  databaseUrl?: string,
) {
  let gw: TestGateway;
  let dataDir: string | undefined;

  // Secrets, each set a different way, and plain values set the same ways as controls.
  const secrets = {
    upserted: random('sk-live-'),
    upsertedExplicit: random('whsec_'),
    imported: random('sk-ant-'),
    importedQuoted: random('pw '),
  };
  const plain = { upserted: random('plain-up-'), imported: random('plain-imp-') };
  // A credential of the machine the gateway runs on, which no service declares: never listed.
  const machineSecret = random('machine-');
  let userToken = '';
  let tokenId = '';

  beforeAll(async () => {
    dataDir = store === 'sqlite' ? await mkdtemp(join(tmpdir(), 'studio-secrets-')) : undefined;
    gw = await startTestGateway({
      store,
      dataDir,
      databaseUrl,
      logLevel: 'trace',
      processEnv: { UNRELATED_SECRET_TOKEN: machineSecret },
    });

    await adminOk(gw, 'POST', '/v1/env/upsert', { key: 'OPENAI_API_KEY', value: secrets.upserted });
    await adminOk(gw, 'POST', '/v1/env/upsert', {
      key: 'WEBHOOK_SIGNING',
      value: secrets.upsertedExplicit,
      secret: true,
    });
    await adminOk(gw, 'POST', '/v1/env/upsert', {
      key: 'PLAIN_SETTING',
      value: plain.upserted,
      secret: false,
    });
    await adminOk(gw, 'POST', '/v1/env/import', {
      content: [
        '# provider keys',
        `ANTHROPIC_API_KEY=${secrets.imported}`,
        `export DB_PASSWORD="${secrets.importedQuoted}"`,
        `PLAIN_IMPORTED=${plain.imported}`,
        '',
      ].join('\n'),
      public: ['PLAIN_IMPORTED'],
    });
    const studio = await adminOk(gw, 'POST', '/v1/studios/create', { name: 'Secretive' });
    const applied = await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: studio.json.id });
    userToken = applied.json.user_token;
    tokenId = applied.json.token.id;
    expect((await gw.api('GET', '/v1/services', { token: userToken })).status).toBe(200);
  });

  afterAll(async () => {
    await gw?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const everySecret = () => ({ ...secrets, machineSecret, userToken, adminKey: gw.adminKey });

  it('responses show secrets masked (•••• + last 4), plain values as they are', async () => {
    const list = await asAdmin(gw, 'GET', '/v1/env/list');
    expect(list.status).toBe(200);
    const byKey = Object.fromEntries((list.json.items as { key: string }[]).map((i) => [i.key, i]));
    const masked = (value: string) => `••••${value.slice(-4)}`;
    expect(byKey.OPENAI_API_KEY).toMatchObject({
      value: masked(secrets.upserted),
      secret: true,
      source: 'store',
    });
    expect(byKey.WEBHOOK_SIGNING).toMatchObject({ value: masked(secrets.upsertedExplicit), secret: true });
    expect(byKey.ANTHROPIC_API_KEY).toMatchObject({ value: masked(secrets.imported), secret: true });
    expect(byKey.DB_PASSWORD).toMatchObject({ value: masked(secrets.importedQuoted), secret: true });
    expect(byKey.PLAIN_SETTING).toMatchObject({ value: plain.upserted, secret: false });
    expect(byKey.PLAIN_IMPORTED).toMatchObject({ value: plain.imported, secret: false });
    expect(byKey.UNRELATED_SECRET_TOKEN).toBeUndefined();

    const upsert = await asAdmin(gw, 'POST', '/v1/env/upsert', {
      key: 'OPENAI_API_KEY',
      value: secrets.upserted,
    });
    expect(upsert.json.item).toMatchObject({
      key: 'OPENAI_API_KEY',
      value: masked(secrets.upserted),
      secret: true,
    });
    const imported = await asAdmin(gw, 'POST', '/v1/env/import', {
      content: `ANTHROPIC_API_KEY=${secrets.imported}\n`,
    });
    expect(imported.json).toMatchObject({ imported: ['ANTHROPIC_API_KEY'], skipped: [], errors: [] });
  });

  it('no response body carries a secret (the user token only in the one apply response)', async () => {
    await asAdmin(gw, 'GET', '/v1/audit/events?limit=1000');
    await asAdmin(gw, 'GET', '/v1/studios/list');
    const bodies = gw.responses.filter((r) => r.path !== '/v1/studios/tokens/apply');
    expect(bodies.length).toBeGreaterThan(8);
    const all = Buffer.from(bodies.map((r) => r.text).join('\n'));
    expect(found(all, everySecret())).toEqual([]);
    expect(found(all, plain)).toEqual(['upserted', 'imported']);
    const applies = gw.responses.filter((r) => r.path === '/v1/studios/tokens/apply');
    expect(applies).toHaveLength(1);
    expect(found(Buffer.from(applies[0]!.text), { userToken })).toEqual(['userToken']);
  });

  it('the audit log holds sealed env values and token hashes only', async () => {
    const audit = await asAdmin(gw, 'GET', '/v1/audit/events?limit=1000');
    const items = audit.json.items as { type: string; data: Record<string, unknown> }[];
    expect(found(Buffer.from(audit.text), everySecret())).toEqual([]);
    const issued = items.find((e) => e.type === 'TokenIssued');
    expect(issued?.data).toMatchObject({ tokenId, tokenHash: sha256Hex(userToken) });
    const sets = items.filter((e) => e.type === 'EnvVariableSet');
    const secretKeys = ['OPENAI_API_KEY', 'WEBHOOK_SIGNING', 'ANTHROPIC_API_KEY', 'DB_PASSWORD'];
    for (const key of secretKeys) {
      const events = sets.filter((e) => e.data.key === key);
      expect(events.length, key).toBeGreaterThan(0);
      for (const event of events) {
        expect(event.data, key).toMatchObject({ secret: true, sealed: expect.any(String) });
        expect(event.data, key).not.toHaveProperty('value');
      }
    }
  });

  it('the log (at trace level) carries no secret, token, admin key or Authorization value', async () => {
    const log = Buffer.from(gw.logs.join('\n'));
    // the log does see the requests: otherwise this test would prove nothing
    expect(gw.logs.length).toBeGreaterThan(10);
    expect(log.includes('/v1/env/upsert')).toBe(true);
    expect(log.includes('/v1/studios/tokens/apply')).toBe(true);
    expect(found(log, everySecret())).toEqual([]);
    expect(
      found(log, { userAuthorization: `Bearer ${userToken}`, adminAuthorization: `Bearer ${gw.adminKey}` }),
    ).toEqual([]);
    expect(log.toString()).not.toMatch(/bearer\s+(stk_|adm_)/i);
  });

  it('storage holds no secret in plaintext, and the secrets still work after a restart', async () => {
    // Closed first, so what a clean stop leaves (the WAL folded into the log's file) is scanned too.
    await gw.restart();
    const scan = await scanStorage(gw);
    expect(scan.found(plain), `scan of ${scan.size} must see the plain values`).toEqual([
      'upserted',
      'imported',
    ]);
    expect(scan.found(everySecret()), `scan of ${scan.size}`).toEqual([]);

    const list = await asAdmin(gw, 'GET', '/v1/env/list');
    const values = Object.fromEntries(
      (list.json.items as { key: string; value: string }[]).map((i) => [i.key, i.value]),
    );
    expect(values).toMatchObject({
      OPENAI_API_KEY: `••••${secrets.upserted.slice(-4)}`,
      WEBHOOK_SIGNING: `••••${secrets.upsertedExplicit.slice(-4)}`,
      ANTHROPIC_API_KEY: `••••${secrets.imported.slice(-4)}`,
      DB_PASSWORD: `••••${secrets.importedQuoted.slice(-4)}`,
      PLAIN_SETTING: plain.upserted,
    });
    expect((await gw.api('GET', '/v1/services', { token: userToken })).status).toBe(200);
    // and the logs of both runs are still clean
    expect(found(Buffer.from(gw.logs.join('\n')), everySecret())).toEqual([]);
  });
}

describe('secrets on SQLite', () => {
  secretsSuite('sqlite', async (gw) => {
    const files = await filesUnder(gw.dataDir);
    const contents = await Promise.all(files.map((f) => readFile(f)));
    const bytes = contents.reduce((n, c) => n + c.length, 0);
    expect(files).toContain(join(gw.dataDir, 'log.sqlite'));
    return {
      size: `${files.length} files, ${bytes} bytes`,
      found: (needles) =>
        [...new Set(contents.flatMap((c) => found(c, needles)))].sort(byNeedleOrder(needles)),
    };
  });
});

describe.skipIf(database === undefined)(
  database ? 'secrets on PostgreSQL' : `secrets on PostgreSQL (skipped: ${postgresUnavailableReason})`,
  () => {
    secretsSuite(
      'postgres',
      async () => {
        const client = new pg.Client({ connectionString: database!.url });
        await client.connect();
        try {
          const tables = await client.query<{ schema: string; name: string }>(
            `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
             WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
          );
          expect(tables.rows.length).toBeGreaterThan(0);
          const dumps: Buffer[] = [];
          let rows = 0;
          for (const { schema, name } of tables.rows) {
            const ident = `${client.escapeIdentifier(schema)}.${client.escapeIdentifier(name)}`;
            const result = await client.query<{ row: string }>(`SELECT t::text AS row FROM ${ident} t`);
            rows += result.rows.length;
            dumps.push(Buffer.from(result.rows.map((r) => r.row).join('\n')));
          }
          const all = Buffer.concat(dumps);
          return {
            size: `${tables.rows.length} tables, ${rows} rows, ${all.length} bytes`,
            found: (needles) => found(all, needles),
          };
        } finally {
          await client.end();
        }
      },
      database?.url,
    );
  },
);

function byNeedleOrder(needles: Record<string, string>) {
  const order = Object.keys(needles);
  return (a: string, b: string) => order.indexOf(a) - order.indexOf(b);
}
