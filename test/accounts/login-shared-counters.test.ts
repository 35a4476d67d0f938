import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COUNTERS_TABLE } from '../../shared/rate-limit/postgres-admissions.ts';
import { adminOk, createStudio } from '../support/admin.ts';
import { expectApiError, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';
import { closeAgents, fromAddress } from './support/from-address.ts';

// Two gateways on one PostgreSQL database count login attempts against the same numbers: a
// deployment of N gateways does not allow N times as many guesses.

const database = await freshPostgresDatabase();
const studio = 'shared-limits';
const password = 'correct horse battery staple';

describe.skipIf(database === undefined)(
  `login limits shared by gateways on one PostgreSQL ${database ? '' : `(not run: ${postgresUnavailableReason})`}`,
  { timeout: 60_000 },
  () => {
    let a: TestGateway;
    let b: TestGateway;
    const login = (gw: TestGateway, body: unknown, from: string) =>
      fromAddress(from, `${gw.url}/v1/accounts/login`, body);

    beforeAll(async () => {
      // One deployment: one database, one master key.
      const options = {
        store: 'postgres',
        databaseUrl: database!.url,
        masterKey: randomBytes(32).toString('hex'),
        logLevel: 'warn',
      } as const;
      a = await startTestGateway(options);
      b = await startTestGateway(options);
      await createStudio(a, studio);
      await adminOk(a, 'POST', '/v1/accounts/create', {
        studio_id: studio,
        email: 'ada@example.com',
        password,
      });
    });

    afterAll(async () => {
      await closeAgents();
      await a?.close();
      await b?.close();
      await database?.drop();
    });

    it('3 failures through A and 2 through B spend the account: the right password is a 429 on both', async () => {
      const wrong = (gw: TestGateway, i: number) =>
        login(
          gw,
          { studio_id: studio, email: 'ada@example.com', password: `guess-${i}` },
          `127.0.1.${i + 1}`,
        );
      for (let i = 0; i < 3; i++) expect((await wrong(a, i)).status).toBe(401);
      for (let i = 3; i < 5; i++) expect((await wrong(b, i)).status).toBe(401);
      const right = { studio_id: studio, email: 'ada@example.com', password };
      expectApiError(await login(b, right, '127.0.1.9'), 429, 'rate_limited');
      expectApiError(await login(a, right, '127.0.1.9'), 429, 'rate_limited');
    });

    it('per address too: 10 failures through each gateway refuse the address on both', async () => {
      const from = '127.0.1.20';
      for (let i = 0; i < 20; i++) {
        const gw = i % 2 === 0 ? a : b;
        const res = await login(
          gw,
          { studio_id: studio, email: `spray${i}@example.com`, password: 'x' },
          from,
        );
        expect(res.status).toBe(401);
      }
      const right = { studio_id: studio, email: 'someone@example.com', password };
      expectApiError(await login(a, right, from), 429, 'rate_limited');
      expectApiError(await login(b, right, from), 429, 'rate_limited');
    });

    it('the counters are rows of one table, keyed by digests: no email or address in it', async () => {
      const client = new pg.Client({ connectionString: database!.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ key: string }>(`SELECT key FROM ${COUNTERS_TABLE}`);
        expect(rows.length).toBeGreaterThan(2);
        const keys = rows.map((r) => r.key).join('\n');
        expect(keys).not.toMatch(/example\.com|127\.0\.1/);
      } finally {
        await client.end();
      }
    });
  },
);
