import { randomBytes } from 'node:crypto';
import pg from 'pg';

const DEFAULT_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

/** Errors that mean "no server there", as opposed to a server that refuses us (which must be loud). */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EAI_AGAIN',
]);

export interface FreshDatabase {
  /** Connection string of the new, empty database. */
  url: string;
  /** Terminates every connection to the database and drops it. */
  drop(): Promise<void>;
}

/** Why the last call to `freshPostgresDatabase` returned undefined, for skip messages. */
export let postgresUnavailableReason: string | undefined;

export function baseDatabaseUrl(): string {
  return process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || DEFAULT_URL;
}

/**
 * Creates a uniquely named database (`studio_test_<random>`) on the server of `TEST_DATABASE_URL`,
 * `DATABASE_URL` or the local default. When no server answers it returns undefined so the caller
 * can skip visibly, except in CI (`CI=true`), where a missing database is an error.
 */
export async function freshPostgresDatabase(): Promise<FreshDatabase | undefined> {
  const baseUrl = baseDatabaseUrl();
  const admin = new pg.Client({ connectionString: baseUrl, connectionTimeoutMillis: 5_000 });
  admin.on('error', () => undefined);
  try {
    await admin.connect();
  } catch (error) {
    const reason = `PostgreSQL unreachable at ${redact(baseUrl)} (${describe(error)}); set TEST_DATABASE_URL to run these tests`;
    if (process.env.CI === 'true' || !isUnreachable(error)) {
      throw new Error(reason, { cause: error });
    }
    postgresUnavailableReason = reason;
    console.warn(`[test] skipping PostgreSQL tests: ${reason}`);
    return undefined;
  }

  const name = `studio_test_${randomBytes(6).toString('hex')}`;
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end().catch(() => undefined);
  }
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;

  let dropped = false;
  return {
    url: url.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      const client = new pg.Client({ connectionString: baseUrl, connectionTimeoutMillis: 5_000 });
      client.on('error', () => undefined);
      await client.connect();
      try {
        await client.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [name],
        );
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end().catch(() => undefined);
      }
    },
  };
}

function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
  if (error instanceof AggregateError) return error.errors.some(isUnreachable);
  // pg reports its own connect timeout without a code.
  return error instanceof Error && /timeout|terminated unexpectedly/i.test(error.message);
}

function describe(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' && !message.includes(code)
    ? `${code}: ${message}`
    : message || String(code);
}

function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<invalid url>';
  }
}
