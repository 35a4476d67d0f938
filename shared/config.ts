import { resolve } from 'node:path';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65_535);
const blankToUndefined = (value: unknown) => (value === '' ? undefined : value);
const optionalString = z.preprocess(blankToUndefined, z.string().optional());

/** The environment variables of DESIGN.md section 5, parsed once at start. */
const EnvSchema = z.object({
  STUDIO_DATA_DIR: z.preprocess(blankToUndefined, z.string().default('./.studio')),
  STUDIO_EVENT_STORE: z.preprocess(
    blankToUndefined,
    z.enum(['pglite', 'postgres', 'kurrentdb', 'memory']).default('pglite'),
  ),
  DATABASE_URL: optionalString,
  KURRENTDB_URL: optionalString,
  KAFKA_BROKERS: optionalString,
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
  STUDIO_GATEWAY_URL: optionalString,
  STUDIO_TOKEN: optionalString,
  STUDIO_RUNTIME_TOKEN: z.preprocess(
    blankToUndefined,
    z.string().min(16, 'STUDIO_RUNTIME_TOKEN must be at least 16 characters').optional(),
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
  STUDIO_WORKSPACE: optionalString,
  STUDIO_MCP_CONFIG: optionalString,
  STUDIO_PLUGINS_DISABLED: optionalString,
  LOG_LEVEL: z.preprocess(
    blankToUndefined,
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ),
});

export type StudioConfig = ReturnType<typeof loadConfig>;

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
  if (e.STUDIO_EVENT_STORE === 'postgres' && !e.DATABASE_URL) {
    throw new ConfigError('invalid configuration:\n  STUDIO_EVENT_STORE=postgres needs DATABASE_URL');
  }
  return {
    dataDir: resolve(e.STUDIO_DATA_DIR),
    eventStore: e.STUDIO_EVENT_STORE,
    databaseUrl: e.DATABASE_URL,
    kurrentdbUrl: e.KURRENTDB_URL,
    kafkaBrokers: e.KAFKA_BROKERS,
    adminSecretKey: e.ADMIN_SECRET_KEY,
    masterKey: e.STUDIO_MASTER_KEY,
    gateway: { host: e.STUDIO_GATEWAY_HOST, port: e.STUDIO_GATEWAY_PORT },
    runtime: { host: e.STUDIO_RUNTIME_HOST, port: e.STUDIO_RUNTIME_PORT },
    publicUrl: e.STUDIO_PUBLIC_URL,
    gatewayUrl: e.STUDIO_GATEWAY_URL,
    studioToken: e.STUDIO_TOKEN,
    runtimeToken: e.STUDIO_RUNTIME_TOKEN,
    agentModel: e.STUDIO_AGENT_MODEL,
    agentMaxSteps: e.STUDIO_AGENT_MAX_STEPS,
    maxQueuedTurns: e.STUDIO_MAX_QUEUED_TURNS,
    sseHeartbeatMs: e.STUDIO_SSE_HEARTBEAT_MS,
    workspace: resolve(e.STUDIO_WORKSPACE ?? `${e.STUDIO_DATA_DIR}/workspace`),
    mcpConfig: resolve(e.STUDIO_MCP_CONFIG ?? `${e.STUDIO_DATA_DIR}/mcp.json`),
    pluginsDisabled: (e.STUDIO_PLUGINS_DISABLED ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    logLevel: e.LOG_LEVEL,
  };
}
