import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type OpenedStore, openStore } from '../../shared/event-store/open.ts';
import { redactUrl } from '../../shared/event-store/redact.ts';

export type TargetKind = 'memory' | 'sqlite' | 'postgres';

export interface Target {
  kind: TargetKind;
  label: string;
  /** Undefined when the target could not be opened; `skipped` says why. */
  store?: OpenedStore;
  skipped?: string;
  /** Facts about the target for the report (server version, settings, where it lives). */
  facts: string[];
  /** Closes the store and removes what the bench created (temp dir, database). Idempotent. */
  dispose(): Promise<void>;
}

const DEFAULT_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EAI_AGAIN',
]);

export function baseDatabaseUrl(): string {
  return process.env.DATABASE_URL || DEFAULT_URL;
}

function once(work: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= work();
    return done;
  };
}

export async function openMemory(): Promise<Target> {
  const store = await openStore({ kind: 'memory', dataDir: '' });
  return { kind: 'memory', label: 'memory', store, facts: [], dispose: once(() => store.close()) };
}

export async function openSqlite(): Promise<Target> {
  const dataDir = await mkdtemp(join(tmpdir(), 'studio-bench-'));
  const remove = () => rm(dataDir, { recursive: true, force: true });
  try {
    const store = await openStore({ kind: 'sqlite', dataDir });
    return {
      kind: 'sqlite',
      label: 'SQLite',
      store,
      facts: [`SQLite data in a temp dir under ${tmpdir()} (removed after)`],
      dispose: once(async () => {
        try {
          await store.close();
        } finally {
          await remove();
        }
      }),
    };
  } catch (error) {
    await remove();
    throw error;
  }
}

function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNREACHABLE.has(code)) return true;
  if (error instanceof AggregateError) return error.errors.some(isUnreachable);
  return error instanceof Error && /timeout|terminated unexpectedly/i.test(error.message);
}

async function adminClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Creates `studio_bench_<random>` on the server and opens the store in it; dropped by dispose. */
export async function openPostgres(): Promise<Target> {
  const baseUrl = baseDatabaseUrl();
  let admin: pg.Client;
  try {
    admin = await adminClient(baseUrl);
  } catch (error) {
    const reason = isUnreachable(error)
      ? 'not run (no PostgreSQL)'
      : `not run (PostgreSQL error: ${error instanceof Error ? error.message : String(error)})`;
    return {
      kind: 'postgres',
      label: 'PostgreSQL',
      skipped: reason,
      facts: [],
      dispose: async () => undefined,
    };
  }

  const name = `studio_bench_${randomBytes(6).toString('hex')}`;
  const facts: string[] = [];
  try {
    const settings = await admin.query<{ name: string; setting: string }>(
      `SELECT name, setting FROM pg_settings
       WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'wal_sync_method', 'commit_delay', 'shared_buffers')
       ORDER BY name`,
    );
    const byName = new Map(settings.rows.map((r) => [r.name, r.setting]));
    facts.push(
      `PostgreSQL ${byName.get('server_version')} at ${redactUrl(baseUrl)}, database ${name} (dropped after); ` +
        `fsync=${byName.get('fsync')}, synchronous_commit=${byName.get('synchronous_commit')}, ` +
        `wal_sync_method=${byName.get('wal_sync_method')}, commit_delay=${byName.get('commit_delay')}`,
    );
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end().catch(() => undefined);
  }

  const drop = async () => {
    const client = await adminClient(baseUrl);
    try {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  try {
    const store = await openStore({ kind: 'postgres', dataDir: '', databaseUrl: url.toString() });
    return {
      kind: 'postgres',
      label: 'PostgreSQL',
      store,
      facts,
      dispose: once(async () => {
        try {
          await store.close();
        } finally {
          await drop();
        }
      }),
    };
  } catch (error) {
    await drop();
    throw error;
  }
}
