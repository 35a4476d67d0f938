import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type GatewayOptions, type RunningGateway, startGateway } from '../../services/gateway/gateway.ts';
import { loadConfig } from '../../shared/config.ts';
import { createLogger } from '../../shared/logger.ts';

export type TestStoreKind = 'memory' | 'sqlite' | 'postgres';

export interface TestGatewayOptions {
  store: TestStoreKind;
  /** SQLite: the data dir to use (the caller owns it). Without one a temp dir is made and removed on close. */
  dataDir?: string;
  /** PostgreSQL: the database (e.g. from `freshPostgresDatabase()`). */
  databaseUrl?: string;
  /** REDIS_URL: rate-limit counters in Redis (e.g. from `reachableRedis()`). */
  redisUrl?: string;
  /** REDIS_CACHE_URL: the response cache in Redis. */
  redisCacheUrl?: string;
  /** The process env the gateway sees (env list, model requirements). Default `{}`: nothing of this machine leaks in. */
  processEnv?: NodeJS.ProcessEnv;
  /** LOG_LEVEL of the gateway. Default `trace`, so every log line that can exist is captured. */
  logLevel?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Upstream client and providers of the `ai` service (e.g. pointing at mock upstreams). */
  ai?: GatewayOptions['ai'];
  /** STUDIO_MASTER_KEY (64 hex): gateways sharing one database must share it. Default: a random one. */
  masterKey?: string;
  /** Store test hooks (e.g. reads that fail on demand). */
  storeHooks?: GatewayOptions['storeHooks'];
  /** The read models' retry backoff and stale bound. */
  readModels?: GatewayOptions['readModels'];
  /** How often the log is sealed (default every 1,000 events or 1 s). */
  sealing?: GatewayOptions['sealing'];
  /** More settings, as environment variables (`STUDIO_MAX_STREAMS_PER_CLIENT`, …). */
  settings?: Record<string, string>;
}

export interface ApiRequest {
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Serialized as JSON with `Content-Type: application/json`. */
  body?: unknown;
  /** Sent as is, with `Content-Type: application/json` unless `headers` say otherwise (a Uint8Array gets none). */
  rawBody?: string | Uint8Array;
  /** Extra headers; they win over the ones above. */
  headers?: Record<string, string>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: a parsed JSON body, checked by the tests that read it.
  json: any;
  text: string;
}

export interface RecordedExchange {
  method: string;
  path: string;
  status: number;
  /** The response body as received. */
  text: string;
}

export interface TestGateway {
  /** Base URL (changes on restart: a free port is taken each time). */
  readonly url: string;
  readonly adminKey: string;
  /** SQLite: the data dir (the log is `<dataDir>/log.sqlite`). */
  readonly dataDir: string;
  /** Every pino line the gateway wrote, across restarts. */
  readonly logs: string[];
  /** Every response `api` received, across restarts. */
  readonly responses: RecordedExchange[];
  /** The running gateway (its context: projections, store). */
  readonly running: RunningGateway;
  /** A request over real HTTP. Throws when the response has no `x-request-id` (every response must). */
  api(method: string, path: string, request?: ApiRequest): Promise<ApiResponse>;
  /** Closes the gateway and starts it again on the same data dir / database (memory: an empty store). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the real gateway on 127.0.0.1 with a free port, fixed keys and a captured log. */
export async function startTestGateway(options: TestGatewayOptions): Promise<TestGateway> {
  if (options.store === 'postgres' && !options.databaseUrl)
    throw new Error('startTestGateway: postgres needs databaseUrl');
  const ownDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), `studio-e2e-${options.store}-`)));
  const adminKey = `adm_${randomBytes(32).toString('base64url')}`;
  const masterKey = options.masterKey ?? randomBytes(32).toString('hex');
  const config = loadConfig({
    STUDIO_EVENT_STORE: options.store,
    STUDIO_DATA_DIR: dataDir,
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl,
    REDIS_CACHE_URL: options.redisCacheUrl,
    ADMIN_SECRET_KEY: adminKey,
    STUDIO_MASTER_KEY: masterKey,
    STUDIO_GATEWAY_HOST: '127.0.0.1',
    STUDIO_GATEWAY_PORT: '0',
    LOG_LEVEL: options.logLevel ?? 'trace',
    ...options.settings,
  });
  const logs: string[] = [];
  const responses: RecordedExchange[] = [];
  const logger = createLogger(config.logLevel, {
    write(line: string) {
      logs.push(line.endsWith('\n') ? line.slice(0, -1) : line);
    },
  });
  const processEnv = options.processEnv ?? {};
  const { ai, storeHooks, readModels, sealing } = options;
  const start = () => startGateway({ config, logger, processEnv, ai, storeHooks, readModels, sealing });

  let running: RunningGateway | undefined;
  try {
    running = await start();
  } catch (error) {
    if (ownDataDir) await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  let closed = false;

  const current = () => {
    if (!running) throw new Error('the test gateway is not running');
    return running;
  };

  return {
    get url() {
      return current().url;
    },
    adminKey,
    dataDir,
    logs,
    responses,
    get running() {
      return current();
    },
    async api(method, path, request = {}) {
      const headers = new Headers();
      let body: string | Uint8Array | undefined;
      if (request.token !== undefined) headers.set('authorization', `Bearer ${request.token}`);
      if (request.rawBody !== undefined) {
        body = request.rawBody;
        if (typeof body === 'string') headers.set('content-type', 'application/json');
      } else if (request.body !== undefined) {
        body = JSON.stringify(request.body);
        headers.set('content-type', 'application/json');
      }
      for (const [name, value] of Object.entries(request.headers ?? {})) headers.set(name, value);
      const res = await fetch(`${current().url}${path}`, { method, headers, body });
      const text = await res.text();
      const json = jsonOrUndefined(text);
      responses.push({ method, path, status: res.status, text });
      if (!res.headers.get('x-request-id')) {
        throw new Error(`${method} ${path} → ${res.status} without an x-request-id header`);
      }
      return { status: res.status, headers: res.headers, json, text };
    },
    async restart() {
      const previous = current();
      running = undefined;
      await previous.close();
      running = await start();
    },
    async close() {
      if (closed) return;
      closed = true;
      const last = running;
      running = undefined;
      try {
        await last?.close();
      } finally {
        if (ownDataDir) await rm(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/** A response body parsed as JSON, or undefined when it is empty or not JSON. */
export function jsonOrUndefined(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Waits `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const ENVELOPE_KEYS = ['type', 'code', 'message', 'request_id', 'param', 'details'];

/**
 * Checks the one error envelope (`ApiError`, shared/errors.ts): `{error: {type, code, message, request_id, param?, details?}}`,
 * the status, and that `request_id` is the response's `x-request-id`. Returns the `error` object.
 */
// biome-ignore lint/suspicious/noExplicitAny: the envelope, for further checks by the caller.
export function expectApiError(res: ApiResponse, status: number, code: string): any {
  const context = `${res.status} ${res.text.slice(0, 300)}`;
  expect(res.status, context).toBe(status);
  expect(res.headers.get('content-type') ?? '', context).toMatch(/^application\/json/);
  expect(Object.keys(res.json ?? {}), context).toEqual(['error']);
  const error = res.json.error;
  expect(ENVELOPE_KEYS, context).toEqual(expect.arrayContaining(Object.keys(error)));
  expect(error.code, context).toBe(code);
  expect(typeof error.type, context).toBe('string');
  expect(error.type.length, context).toBeGreaterThan(0);
  expect(typeof error.message, context).toBe('string');
  expect(error.message.length, context).toBeGreaterThan(0);
  expect(error.message, 'no stack traces in errors').not.toMatch(/\n\s+at /);
  expect(error.request_id, context).toBe(res.headers.get('x-request-id'));
  expect(error.request_id, context).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  return error;
}
