import { resolve } from 'node:path';
import { z } from 'zod';
import { parseTrustedProxies } from './http/client-key.ts';

const port = z.coerce.number().int().min(0).max(65_535);

/** `10.0.0.0/8, fd00::/8` → the proxies they name. */
const trustedProxyList = z.string().transform((value, ctx) => {
  const parsed = parseTrustedProxies(value);
  if ('proxies' in parsed) return parsed.proxies;
  ctx.addIssue({ code: 'custom', message: `"${parsed.bad}" is not an address or CIDR such as 10.0.0.0/8` });
  return z.NEVER;
});
const blankToUndefined = (value: unknown) => (value === '' ? undefined : value);
const optionalString = z.preprocess(blankToUndefined, z.string().optional());

/** `a, b` → the origins of those URLs (http or https only, nothing after the origin). */
const originList = z.string().transform((value, ctx) => {
  const origins: string[] = [];
  for (const item of value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    let url: URL | undefined;
    try {
      url = new URL(item);
    } catch {}
    if (!url || !/^https?:$/.test(url.protocol) || url.origin !== item.replace(/\/$/, '')) {
      ctx.addIssue({
        code: 'custom',
        message: `"${item}" is not an origin such as https://console.example.com`,
      });
      return z.NEVER;
    }
    origins.push(url.origin);
  }
  return origins;
});

/** The environment variables (README, "Configuration"), parsed once at start. */
const EnvSchema = z.object({
  STUDIO_DATA_DIR: z.preprocess(blankToUndefined, z.string().default('./.studio')),
  STUDIO_EVENT_STORE: z.preprocess(
    blankToUndefined,
    z
      .enum(['sqlite', 'postgres', 'kurrentdb', 'memory'], {
        error: (issue) =>
          issue.input === 'pglite'
            ? 'pglite is no longer a store: the embedded store is sqlite (the default); ' +
              '`studio log copy --from pglite:DIR` brings an earlier log over'
            : 'STUDIO_EVENT_STORE is one of sqlite, postgres, kurrentdb, memory',
      })
      .default('sqlite'),
  ),
  /**
   * The embedded store: `full` (an append returns once its commit is on disk) or `normal` (it
   * survives a crash of the process, not a power loss): docs/decisions.md, "The embedded store".
   */
  STUDIO_SQLITE_SYNCHRONOUS: z.preprocess(blankToUndefined, z.enum(['full', 'normal']).default('full')),
  DATABASE_URL: optionalString,
  KURRENTDB_URL: optionalString,
  /** Rate-limit and login counters in Redis, shared by every gateway that names the same database. */
  REDIS_URL: z.preprocess(
    blankToUndefined,
    z.url({ protocol: /^rediss?$/, error: 'REDIS_URL is a redis:// or rediss:// URL' }).optional(),
  ),
  /** The response cache in Redis, shared by every gateway naming it: never the counters' Redis (its eviction would take them). */
  REDIS_CACHE_URL: z.preprocess(
    blankToUndefined,
    z.url({ protocol: /^rediss?$/, error: 'REDIS_CACHE_URL is a redis:// or rediss:// URL' }).optional(),
  ),
  KAFKA_BROKERS: optionalString,
  /** Topic the forwarder publishes every event to (Kafka's legal topic names). */
  KAFKA_TOPIC: z.preprocess(
    blankToUndefined,
    z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,249}$/, 'KAFKA_TOPIC may hold letters, digits, ".", "_" and "-" only')
      .default('studio.events'),
  ),
  KAFKA_CLIENT_ID: z.preprocess(blankToUndefined, z.string().default('studio')),
  ADMIN_SECRET_KEY: z.preprocess(
    blankToUndefined,
    z.string().min(32, 'ADMIN_SECRET_KEY must be at least 32 characters').optional(),
  ),
  STUDIO_MASTER_KEY: optionalString,
  STUDIO_GATEWAY_HOST: z.preprocess(blankToUndefined, z.string().default('127.0.0.1')),
  STUDIO_GATEWAY_PORT: z.preprocess(blankToUndefined, port.default(8600)),
  STUDIO_RUNTIME_HOST: z.preprocess(blankToUndefined, z.string().default('127.0.0.1')),
  STUDIO_RUNTIME_PORT: z.preprocess(blankToUndefined, port.default(8601)),
  STUDIO_PUBLIC_URL: optionalString,
  /** The runtime's URL as clients reach it when that is not loopback (its host is accepted in `Host`). */
  STUDIO_RUNTIME_PUBLIC_URL: z.preprocess(blankToUndefined, z.url({ protocol: /^https?$/ }).optional()),
  /** Proxies (CIDRs or addresses) whose `X-Forwarded-For` names the client: per-address limits count that client. */
  STUDIO_TRUSTED_PROXIES: z.preprocess(blankToUndefined, trustedProxyList.optional()),
  /** Browser origins that may call the runtime and the session API (CORS). */
  STUDIO_ALLOWED_ORIGINS: z.preprocess(blankToUndefined, originList.default([])),
  STUDIO_GATEWAY_URL: optionalString,
  STUDIO_TOKEN: optionalString,
  STUDIO_RUNTIME_TOKEN: z.preprocess(
    blankToUndefined,
    z.string().min(16, 'STUDIO_RUNTIME_TOKEN must be at least 16 characters').optional(),
  ),
  /** A bearer that may read GET /metrics (besides the admin key), for a Prometheus that holds no admin key. */
  STUDIO_METRICS_TOKEN: z.preprocess(
    blankToUndefined,
    z.string().min(16, 'STUDIO_METRICS_TOKEN must be at least 16 characters').optional(),
  ),
  /** Traces: the OTLP/HTTP collector's base URL (spans go to `<it>/v1/traces`); unset, no tracing is loaded. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.preprocess(
    blankToUndefined,
    z.url({ protocol: /^https?$/, error: 'OTEL_EXPORTER_OTLP_ENDPOINT is an http(s) URL' }).optional(),
  ),
  STUDIO_AGENT_MODEL: z.preprocess(blankToUndefined, z.string().default('dev/echo')),
  STUDIO_AGENT_MAX_STEPS: z.preprocess(blankToUndefined, z.coerce.number().int().min(1).max(1000).default(8)),
  STUDIO_MAX_QUEUED_TURNS: z.preprocess(
    blankToUndefined,
    z.coerce.number().int().min(1).max(100_000).default(100),
  ),
  STUDIO_SSE_HEARTBEAT_MS: z.preprocess(
    blankToUndefined,
    z.coerce.number().int().min(10).max(3_600_000).default(15_000),
  ),
  /** Streams (SSE) one client address may hold open at once: session events on the runtime, log follows on the gateway. */
  STUDIO_MAX_STREAMS_PER_CLIENT: z.preprocess(
    blankToUndefined,
    z.coerce.number().int().min(1).max(1_000_000).default(256),
  ),
  /** Bytes of request bodies over 1 MiB being received and handled at once, over all clients. */
  STUDIO_LARGE_BODIES_BUDGET_BYTES: z.preprocess(
    blankToUndefined,
    z.coerce
      .number()
      .int()
      .min(1024 * 1024)
      .default(256 * 1024 * 1024),
  ),
  /** Bytes of answers the response cache keeps in this process (without REDIS_URL), least recently used out first. */
  STUDIO_CACHE_MAX_BYTES: z.preprocess(
    blankToUndefined,
    z.coerce
      .number()
      .int()
      .min(1024 * 1024)
      .default(64 * 1024 * 1024),
  ),
  /** Bytes of answers one studio's entries may hold in the response cache, in memory or in Redis. */
  STUDIO_CACHE_MAX_BYTES_PER_STUDIO: z.preprocess(
    blankToUndefined,
    z.coerce
      .number()
      .int()
      .min(64 * 1024)
      .default(16 * 1024 * 1024),
  ),
  /** Lets AI base URLs lead to link-local and cloud metadata addresses (refused by default). */
  STUDIO_ALLOW_PRIVATE_UPSTREAMS: z.preprocess(
    blankToUndefined,
    z
      .enum(['true', 'false', '1', '0'], 'STUDIO_ALLOW_PRIVATE_UPSTREAMS is true or false')
      .default('false')
      .transform((value) => value === 'true' || value === '1'),
  ),
  /** Seconds a stopping process (SIGTERM) gives requests, streams and turns in flight to finish. */
  STUDIO_DRAIN_S: z.preprocess(blankToUndefined, z.coerce.number().int().min(0).max(3600).default(30)),
  STUDIO_WORKSPACE: optionalString,
  STUDIO_MCP_CONFIG: optionalString,
  /** `allow`: the gateway's MCP servers may be programs it starts (stdio); off by default (docs/decisions.md). */
  STUDIO_MCP_STDIO: z.preprocess(
    blankToUndefined,
    z.enum(['allow', 'deny'], 'STUDIO_MCP_STDIO is allow or deny').default('deny'),
  ),
  STUDIO_PLUGINS_DISABLED: optionalString,
  LOG_LEVEL: z.preprocess(
    blankToUndefined,
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ),
});

const TEN_YEARS_S = 10 * 365 * 24 * 3600;

/** `closed`, `open`, or the email domains (comma-separated) whose verified addresses may sign up. */
const signupPolicy = z.string().transform((value, ctx) => {
  const v = value.trim().toLowerCase();
  if (v === 'closed' || v === 'open') return { mode: v } as const;
  const domains = v
    .split(',')
    .map((s) => s.trim().replace(/^@/, ''))
    .filter(Boolean);
  if (domains.length === 0 || !domains.every((d) => /^[a-z0-9.-]+\.[a-z]{2,}$/.test(d))) {
    ctx.addIssue({
      code: 'custom',
      message: 'closed, open, or email domains such as example.com,example.org',
    });
    return z.NEVER;
  }
  return { mode: 'domains', domains } as const;
});

/**
 * Settings of the `accounts` service. The service reads them when it uses them, through the env
 * store over the process env (so `env upsert` changes them without a restart); `loadConfig` checks
 * the process env's values at start too.
 */
export const AccountsEnvSchema = z.object({
  /** The gateway's public URL: OAuth callbacks are `<it>/v1/accounts/oauth/callback`. */
  STUDIO_PUBLIC_URL: z.preprocess(blankToUndefined, z.url({ protocol: /^https?$/ }).optional()),
  /** Origins that `oauth/start {redirect_to}` may send the browser back to. */
  STUDIO_OAUTH_REDIRECT_ALLOWLIST: z.preprocess(blankToUndefined, originList.default([])),
  /** Whether a first OAuth sign-in may create an account. */
  STUDIO_OAUTH_SIGNUP: z.preprocess(blankToUndefined, signupPolicy.default({ mode: 'closed' })),
  /** Lifetime of the user token a sign-in (password or OAuth) issues. */
  STUDIO_LOGIN_TTL_S: z.preprocess(
    blankToUndefined,
    z.coerce
      .number()
      .int()
      .min(1)
      .max(TEN_YEARS_S)
      .default(30 * 24 * 3600),
  ),
  /** How long an OAuth sign-in may take, and how long its result then waits to be claimed. */
  STUDIO_OAUTH_STATE_TTL_S: z.preprocess(
    blankToUndefined,
    z.coerce.number().int().min(1).max(3600).default(600),
  ),
});

export type AccountsEnv = z.infer<typeof AccountsEnvSchema>;

/** Parses the accounts settings from any source of env values; a bad value is a ConfigError naming it. */
export function parseAccountsEnv(get: (key: string) => string | undefined): AccountsEnv {
  const raw = Object.fromEntries(Object.keys(AccountsEnvSchema.shape).map((key) => [key, get(key)]));
  const parsed = AccountsEnvSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/** Every environment variable the configuration reads (deployment manifests are checked against it). */
export const CONFIG_VARIABLES: readonly string[] = [
  ...Object.keys(EnvSchema.shape),
  ...Object.keys(AccountsEnvSchema.shape),
];

export type ProcessConfig = ReturnType<typeof loadConfig>;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  parseAccountsEnv((key) => env[key]);
  if (e.STUDIO_EVENT_STORE === 'postgres' && !e.DATABASE_URL) {
    throw new ConfigError('invalid configuration:\n  STUDIO_EVENT_STORE=postgres needs DATABASE_URL');
  }
  return {
    dataDir: resolve(e.STUDIO_DATA_DIR),
    eventStore: e.STUDIO_EVENT_STORE,
    sqliteSynchronous: e.STUDIO_SQLITE_SYNCHRONOUS,
    databaseUrl: e.DATABASE_URL,
    kurrentdbUrl: e.KURRENTDB_URL,
    redisUrl: e.REDIS_URL,
    kafkaBrokers: e.KAFKA_BROKERS,
    kafkaTopic: e.KAFKA_TOPIC,
    kafkaClientId: e.KAFKA_CLIENT_ID,
    adminSecretKey: e.ADMIN_SECRET_KEY,
    masterKey: e.STUDIO_MASTER_KEY,
    gateway: { host: e.STUDIO_GATEWAY_HOST, port: e.STUDIO_GATEWAY_PORT },
    runtime: {
      host: e.STUDIO_RUNTIME_HOST,
      port: e.STUDIO_RUNTIME_PORT,
      publicUrl: e.STUDIO_RUNTIME_PUBLIC_URL,
      allowedOrigins: e.STUDIO_ALLOWED_ORIGINS,
    },
    publicUrl: e.STUDIO_PUBLIC_URL,
    gatewayUrl: e.STUDIO_GATEWAY_URL,
    studioToken: e.STUDIO_TOKEN,
    runtimeToken: e.STUDIO_RUNTIME_TOKEN,
    metricsToken: e.STUDIO_METRICS_TOKEN,
    otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
    agentModel: e.STUDIO_AGENT_MODEL,
    agentMaxSteps: e.STUDIO_AGENT_MAX_STEPS,
    maxQueuedTurns: e.STUDIO_MAX_QUEUED_TURNS,
    sseHeartbeatMs: e.STUDIO_SSE_HEARTBEAT_MS,
    maxStreamsPerClient: e.STUDIO_MAX_STREAMS_PER_CLIENT,
    trustedProxies: e.STUDIO_TRUSTED_PROXIES,
    largeBodiesBudgetBytes: e.STUDIO_LARGE_BODIES_BUDGET_BYTES,
    cacheMaxBytes: e.STUDIO_CACHE_MAX_BYTES,
    cacheStudioMaxBytes: e.STUDIO_CACHE_MAX_BYTES_PER_STUDIO,
    redisCacheUrl: e.REDIS_CACHE_URL,
    allowPrivateUpstreams: e.STUDIO_ALLOW_PRIVATE_UPSTREAMS,
    drainSeconds: e.STUDIO_DRAIN_S,
    workspace: resolve(e.STUDIO_WORKSPACE ?? `${e.STUDIO_DATA_DIR}/workspace`),
    mcpStdio: e.STUDIO_MCP_STDIO === 'allow',
    mcpConfig: resolve(e.STUDIO_MCP_CONFIG ?? `${e.STUDIO_DATA_DIR}/mcp.json`),
    pluginsDisabled: (e.STUDIO_PLUGINS_DISABLED ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    logLevel: e.LOG_LEVEL,
  };
}
