import { studiosProjection } from '../../projections/studios.ts';
import { tokensProjection } from '../../projections/tokens.ts';
import type { ProcessConfig } from '../../shared/config.ts';
import { lockDataDir } from '../../shared/data-dir-lock.ts';
import { type OpenedStore, openStore } from '../../shared/event-store/open.ts';
import type { StoreTestHooks } from '../../shared/event-store/types.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import { defineService } from '../../shared/http/action.ts';
import { createHttpApp, type HttpAppOptions } from '../../shared/http/app.ts';
import { Drain, type DrainOutcome, finishDraining } from '../../shared/http/drain.ts';
import { Authenticator, type TokenLookup } from '../../shared/http/identity.ts';
import { OpenStreamLimit } from '../../shared/http/open-streams.ts';
import { readinessOf } from '../../shared/http/probes.ts';
import { ActionRegistry } from '../../shared/http/registry.ts';
import { type Listening, listen } from '../../shared/http/server.ts';
import { openKeyVault } from '../../shared/key-vault/open.ts';
import type { KeyVault } from '../../shared/key-vault/types.ts';
import { runAlone, runAsLeader } from '../../shared/leadership.ts';
import { createLogger, type Logger } from '../../shared/logger.ts';
import { MetricsRegistry } from '../../shared/observability/metrics.ts';
import { scrapeSecrets } from '../../shared/observability/metrics-route.ts';
import { observedStore } from '../../shared/observability/observed-store.ts';
import { watchProjectionLag } from '../../shared/observability/projection-lag.ts';
import { startTracing, tracing } from '../../shared/observability/tracing.ts';
import { readModelsHealth } from '../../shared/projections/read-models-health.ts';
import { ProjectionRunner, type ProjectionRunnerOptions } from '../../shared/projections/runner.ts';
import { type CounterStore, openCounters } from '../../shared/rate-limit/counters.ts';
import { accountsService } from '../accounts/actions.ts';
import { budgetActions } from '../ai/budgets/actions.ts';
import { type AiModule, type AiModuleOptions, createAiModule } from '../ai/module.ts';
import { limitActions } from '../ai/rate-limits/actions.ts';
import { StudioRateLimits } from '../ai/rate-limits/rate-limiter.ts';
import { type AlertsModule, createAlertsModule } from '../alerts/module.ts';
import { auditService } from '../audit/actions.ts';
import { type FollowOptions, MAX_FOLLOWS_PER_TOKEN } from '../audit/follow.ts';
import { gatewaySealer, type SealingOptions } from '../audit/sealing.ts';
import { mountGatewayConsole } from '../console/pages.ts';
import { consoleCredential, consoleSessionRoutes, gatewayConsoleSessions } from '../console/session.ts';
import { envService } from '../env/actions.ts';
import { forwarderHealth, type GatewayForwarder, gatewayForwarder } from '../forwarder/gateway.ts';
import { createMcpModule, type McpModule } from '../mcp/module.ts';
import { studiosService } from '../studios/actions.ts';
import { loadKeys } from './keys.ts';
import { GATEWAY_PROJECTIONS } from './projections.ts';

export interface GatewayOptions {
  config: ProcessConfig;
  logger?: Logger;
  processEnv?: NodeJS.ProcessEnv;
  storeHooks?: StoreTestHooks;
  /** Tests: the read models' retry backoff and how long failing reads may last before they are stale. */
  readModels?: ProjectionRunnerOptions;
  /** Overrides for tests: the upstream client and the providers. */
  ai?: Omit<AiModuleOptions, 'dataDir'>;
  /** Tests: how often the log is sealed (default every 1,000 events or 1 s). */
  sealing?: SealingOptions;
}

export interface RunningGateway {
  url: string;
  adminKeySource: string;
  storeLocation: string;
  /** Resolves, with why, if the log is gone for good in this process (`OpenedStore.lost`). */
  storeLost?: Promise<Error>;
  ctx: GatewayContext;
  /** Every action served, for tools and tests that walk the API. */
  registry: ActionRegistry;
  /** /ready says `draining` from now on; requests are still served until `drain`. */
  announceDrain(): void;
  /**
   * Stops without cutting anyone off (see `Drain`): new requests refused, those in flight finished
   * until `deadline`, the rest cut, then every usage event appended before the log closes.
   */
  drain(deadline: AbortSignal): Promise<DrainOutcome>;
  /** Stops now: waits for requests in flight, with no deadline and nothing refused meanwhile. */
  close(): Promise<void>;
}

/** Opens the log (locking an embedded data dir), catches the read models up, and returns the pieces. */
export async function openGatewayContext(options: GatewayOptions): Promise<{
  ctx: GatewayContext;
  store: OpenedStore;
  adminKey: string;
  adminKeySource: string;
  close(): Promise<void>;
}> {
  const { config } = options;
  const logger = options.logger ?? createLogger(config.logLevel);
  const lock = config.eventStore === 'sqlite' ? await lockDataDir(config.dataDir) : undefined;
  let counters: CounterStore | undefined;
  let keyVault: KeyVault | undefined;
  try {
    const keys = await loadKeys(config);
    // Before the store: a counter store that cannot be reached (REDIS_URL) leaves nothing open.
    counters = await openCounters(config);
    keyVault = await openKeyVault(config);
    const store = await openStore({
      kind: config.eventStore,
      dataDir: config.dataDir,
      synchronous: config.sqliteSynchronous,
      databaseUrl: config.databaseUrl,
      hooks: options.storeHooks,
    });
    const metrics = new MetricsRegistry();
    const events = observedStore(store.events, metrics);
    const projections = new ProjectionRunner(
      events,
      store.checkpoints,
      GATEWAY_PROJECTIONS,
      logger,
      options.readModels,
    );
    await projections.start();
    watchProjectionLag(metrics, projections, events);
    const ctx: GatewayContext = {
      events,
      checkpoints: store.checkpoints,
      projections,
      secrets: keys.secrets,
      counters,
      keys: keyVault,
      logger,
      metrics,
      // A copy: nothing outside the process changes its environment, and every request's model
      // lookup reads it (a read of `process.env` itself is a call into the C++ runtime).
      processEnv: options.processEnv ?? { ...process.env },
      singleton: (name, task) =>
        (config.eventStore === 'postgres' || config.eventStore === 'kurrentdb') && config.databaseUrl
          ? runAsLeader(config.databaseUrl, singletonKey(name), task, logger)
          : runAlone(task, logger),
    };
    return {
      ctx,
      store,
      adminKey: keys.adminKey,
      adminKeySource: keys.adminKeySource,
      close: async () => {
        await projections.stop();
        await store.close();
        await ctx.counters.close();
        await ctx.keys.close();
        await lock?.release();
      },
    };
  } catch (error) {
    await counters?.close();
    await keyVault?.close();
    await lock?.release();
    throw error;
  }
}

/** A stable advisory-lock key per singleton name, shared by every process. */
function singletonKey(name: string): number {
  return 8_600_100 + [...name].reduce((sum, c) => (sum * 31 + c.charCodeAt(0)) % 1_000_000, 0);
}

export function tokenLookup(ctx: GatewayContext): TokenLookup {
  return {
    findByHash(hash) {
      // Fail closed: a stale model may still hold a token revoked (or a studio paused) meanwhile.
      ctx.projections.liveness.assertFresh('a token');
      const tokens = ctx.projections.state(tokensProjection);
      const tokenId = tokens.byHash.get(hash);
      const token = tokenId === undefined ? undefined : tokens.byId.get(tokenId);
      if (!token) return undefined;
      const studio = ctx.projections.state(studiosProjection).get(token.studio_id);
      return {
        tokenId: token.id,
        studioId: token.studio_id,
        revoked: token.revoked_at !== null,
        expiresAt: token.expires_at,
        studioStatus: studio?.status ?? 'removed',
        models: token.models,
      };
    },
  };
}

export function buildRegistry(
  ctx: GatewayContext,
  ai: AiModule,
  follow: FollowOptions,
  mcp: McpModule,
  alerts?: AlertsModule,
): ActionRegistry {
  const registry = new ActionRegistry();
  const declaredKeys = () => registry.services().flatMap((s) => s.env.map((e) => e.key));
  registry
    .register(ai.service)
    .register(
      studiosService(ctx, [...budgetActions(ctx, ai.usage), ...limitActions(ctx), ...ai.studioActions]),
    )
    .register(envService(ctx, declaredKeys))
    .register(auditService(ctx, follow))
    .register(accountsService(ctx))
    .register(defineService({ id: 'mcp', name: 'MCP gateway', env: [], actions: mcp.actions }));
  if (alerts) registry.register(alerts.service);
  return registry;
}

/**
 * The gateway's parts and the options of its HTTP app, made but not started: the log is open and the
 * read models caught up, nothing listens, polls or seals yet (`startGateway` does). Writing the
 * API's document needs no more.
 */
export async function assembleGateway(options: GatewayOptions) {
  const opened = await openGatewayContext(options);
  const { ctx } = opened;
  if (options.config.redisUrl && !options.config.redisCacheUrl) {
    // Earlier versions kept the cache in REDIS_URL: say where it is now, once, at start.
    ctx.logger.info(
      'the response cache is in this process: set REDIS_CACHE_URL (a Redis of its own, not REDIS_URL) to share it between gateways',
    );
  }
  const ai = createAiModule(ctx, {
    dataDir: options.config.dataDir,
    allowPrivateUpstreams: options.config.allowPrivateUpstreams,
    ...options.ai,
    cache: {
      maxBytes: options.config.cacheMaxBytes,
      studioMaxBytes: options.config.cacheStudioMaxBytes,
      redisUrl: options.config.redisCacheUrl,
      ...options.ai?.cache,
    },
  });
  const mcp = createMcpModule(ctx, {
    stdioAllowed: options.config.mcpStdio,
    allowPrivateUpstreams: options.config.allowPrivateUpstreams,
    publicUrl: options.config.publicUrl,
    limits: new StudioRateLimits(ctx),
    usage: ai.usage,
    payloads: ai.payloads,
  });
  const alerts = createAlertsModule(ctx, { allowPrivateUpstreams: options.config.allowPrivateUpstreams });
  // Aborted at close or drain: the log's live followers end, so the server's connections can.
  const closing = new AbortController();
  // MCP sessions end with it too: their SSE streams close, and clients initialize again elsewhere.
  closing.signal.addEventListener('abort', () => void mcp.close(), { once: true });
  const registry = buildRegistry(
    ctx,
    ai,
    {
      heartbeatMs: options.config.sseHeartbeatMs,
      openStreams: new OpenStreamLimit(options.config.maxStreamsPerClient),
      followsPerToken: new OpenStreamLimit(MAX_FOLLOWS_PER_TOKEN, 'token'),
      closing: closing.signal,
    },
    mcp,
    alerts,
  );
  const forwarder = gatewayForwarder(options.config, ctx); // KAFKA_BROKERS set: the Kafka forwarder
  const sealer = gatewaySealer(ctx, options.sealing);
  if (forwarder) watchForwarderLag(ctx, forwarder);
  const drain = new Drain();
  // Draining ends the log's follows at once: their clients resume elsewhere with Last-Event-ID.
  drain.onBegin(() => closing.abort());
  const authenticator = new Authenticator(opened.adminKey, tokenLookup(ctx));
  const consoleSessions = gatewayConsoleSessions(ctx, options.config.publicUrl);
  const isScrapeSecret = scrapeSecrets([opened.adminKey, options.config.metricsToken]);
  const http: HttpAppOptions = {
    drain,
    registry,
    authenticator,
    sessionCredential: (req) => consoleCredential(consoleSessions, req),
    routes: [...consoleSessionRoutes({ authenticator, sessions: consoleSessions }), ...mcp.routes.open],
    v1Routes: [...mcp.routes.v1, ...alerts.v1Routes],
    challengeAt: mcp.challengeAt,
    extraRoutes: (app) => mountGatewayConsole(app),
    logger: ctx.logger,
    largeBodiesBudgetBytes: options.config.largeBodiesBudgetBytes,
    ...(options.config.trustedProxies ? { trustedProxies: options.config.trustedProxies } : {}),
    assertServing: () => ctx.projections.liveness.assertFresh('this request'),
    metrics: {
      metrics: ctx.metrics,
      scrapeAccess: (bearer) => {
        if (isScrapeSecret(bearer)) return 'allowed';
        try {
          authenticator.identify(`Bearer ${bearer}`);
          return 'forbidden';
        } catch {
          return 'unknown';
        }
      },
    },
    health: async () => {
      const { status, ...rest } = await readModelsHealth(ctx.events, ctx.projections);
      // The forwarder's status reads the log too: while the log is unreachable, it is left out.
      const forwarding = await forwarderHealth(forwarder).catch(() => ({}));
      return { status, timestamp: new Date().toISOString(), ...rest, ...forwarding };
    },
    ready: async () => readinessOf(await readModelsHealth(ctx.events, ctx.projections), drain.draining),
  };
  return {
    opened,
    ctx,
    ai,
    mcp,
    alerts,
    registry,
    forwarder,
    sealer,
    drain,
    closing,
    http,
    async close() {
      closing.abort();
      await mcp.close();
      await alerts.close();
      await ai.close();
      await opened.close();
    },
  };
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  await startTracing(options.config.otlpEndpoint);
  const assembled = await assembleGateway(options);
  const { opened, ctx, ai, registry, forwarder, sealer, drain, closing, mcp, alerts } = assembled;
  const app = createHttpApp(assembled.http);
  const { host, port } = options.config.gateway;
  let listening: Listening;
  try {
    listening = await listen(app, host, port, ctx.logger);
  } catch (error) {
    await assembled.close();
    throw error;
  }
  const { server } = listening;
  /** After the last request: the background work, then every usage event appended, then the log. */
  const stop = async (): Promise<{ durable: boolean }> => {
    await forwarder?.stop();
    await sealer.stop();
    await alerts.close();
    await mcp.close();
    await ai.close();
    const durable = ai.usage.retrying === 0;
    await opened.close();
    await tracing().flush();
    return { durable };
  };
  ai.start();
  alerts.start();
  forwarder?.start();
  sealer.start();
  return {
    url: listening.url,
    adminKeySource: opened.adminKeySource,
    storeLocation: opened.store.location,
    ...(opened.store.lost ? { storeLost: opened.store.lost } : {}),
    ctx,
    registry,
    announceDrain: () => drain.announce(),
    async drain(deadline) {
      return finishDraining(server, drain, deadline, { stop });
    },
    async close() {
      closing.abort();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await stop();
    },
  };
}

/** `studio_kafka_forwarder_lag_events`: events of the log not yet acknowledged by Kafka (counted up to a cap). */
function watchForwarderLag(ctx: GatewayContext, forwarder: GatewayForwarder): void {
  ctx.metrics.sampled(
    'studio_kafka_forwarder_lag_events',
    'Events of the log the Kafka forwarder has not had acknowledged yet (counted up to 10,000)',
    'topic',
    async () => {
      const status = await forwarder.status().catch(() => undefined);
      return status ? [[status.topic, status.lag]] : [];
    },
  );
}
