import { studiosProjection } from '../../projections/studios.ts';
import { tokensProjection } from '../../projections/tokens.ts';
import type { StudioConfig } from '../../shared/config.ts';
import { lockDataDir } from '../../shared/data-dir-lock.ts';
import { type OpenedStore, openStore } from '../../shared/event-store/open.ts';
import type { StoreTestHooks } from '../../shared/event-store/types.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import { createHttpApp } from '../../shared/http/app.ts';
import { Authenticator, type TokenLookup } from '../../shared/http/identity.ts';
import { ActionRegistry } from '../../shared/http/registry.ts';
import { type Listening, listen } from '../../shared/http/server.ts';
import { runAlone, runAsLeader } from '../../shared/leadership.ts';
import { createLogger, type Logger } from '../../shared/logger.ts';
import { ProjectionRunner, type ProjectionRunnerOptions } from '../../shared/projections/runner.ts';
import { type CounterStore, openCounters } from '../../shared/rate-limit/counters.ts';
import { accountsService } from '../accounts/actions.ts';
import { type AiModule, type AiModuleOptions, createAiModule } from '../ai/module.ts';
import { auditService } from '../audit/actions.ts';
import { gatewaySealer, type SealingOptions } from '../audit/sealing.ts';
import { envService } from '../env/actions.ts';
import { forwarderHealth, gatewayForwarder } from '../forwarder/gateway.ts';
import { studiosService } from '../studios/actions.ts';
import { isReady, readModelsHealth } from './health.ts';
import { loadKeys } from './keys.ts';
import { GATEWAY_PROJECTIONS } from './projections.ts';

export interface GatewayOptions {
  config: StudioConfig;
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
  ctx: GatewayContext;
  /** Every action served, for tools and tests that walk the API. */
  registry: ActionRegistry;
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
  const lock = config.eventStore === 'pglite' ? await lockDataDir(config.dataDir) : undefined;
  let counters: CounterStore | undefined;
  try {
    const keys = await loadKeys(config);
    // Before the store: a counter store that cannot be reached (REDIS_URL) leaves nothing open.
    counters = await openCounters(config);
    const store = await openStore({
      kind: config.eventStore,
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      hooks: options.storeHooks,
    });
    const projections = new ProjectionRunner(
      store.events,
      store.checkpoints,
      GATEWAY_PROJECTIONS,
      logger,
      options.readModels,
    );
    await projections.start();
    const ctx: GatewayContext = {
      events: store.events,
      checkpoints: store.checkpoints,
      projections,
      secrets: keys.secrets,
      counters,
      logger,
      processEnv: options.processEnv ?? process.env,
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
        await lock?.release();
      },
    };
  } catch (error) {
    await counters?.close();
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

export function buildRegistry(ctx: GatewayContext, ai: AiModule): ActionRegistry {
  const registry = new ActionRegistry();
  const declaredKeys = () => registry.services().flatMap((s) => s.env.map((e) => e.key));
  registry
    .register(ai.service)
    .register(studiosService(ctx))
    .register(envService(ctx, declaredKeys))
    .register(auditService(ctx))
    .register(accountsService(ctx));
  return registry;
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const opened = await openGatewayContext(options);
  const { ctx } = opened;
  const ai = createAiModule(ctx, {
    dataDir: options.config.dataDir,
    allowPrivateUpstreams: options.config.allowPrivateUpstreams,
    ...options.ai,
    cache: {
      maxBytes: options.config.cacheMaxBytes,
      redisUrl: options.config.redisUrl,
      ...options.ai?.cache,
    },
  });
  const registry = buildRegistry(ctx, ai);
  const forwarder = gatewayForwarder(options.config, ctx); // KAFKA_BROKERS set: the Kafka forwarder
  const sealer = gatewaySealer(ctx, options.sealing);
  const app = createHttpApp({
    registry,
    authenticator: new Authenticator(opened.adminKey, tokenLookup(ctx)),
    logger: ctx.logger,
    largeBodiesBudgetBytes: options.config.largeBodiesBudgetBytes,
    assertServing: () => ctx.projections.liveness.assertFresh('this request'),
    health: async () => {
      const { status, ...rest } = await readModelsHealth(ctx.events, ctx.projections);
      // The forwarder's status reads the log too: while the log is unreachable, it is left out.
      const forwarding = await forwarderHealth(forwarder).catch(() => ({}));
      return { status, timestamp: new Date().toISOString(), ...rest, ...forwarding };
    },
    ready: async () => {
      const health = await readModelsHealth(ctx.events, ctx.projections);
      const ready = isReady(health);
      return {
        ready,
        body: {
          status: ready ? 'ready' : 'not_ready',
          timestamp: new Date().toISOString(),
          event_store: health.event_store,
          read_models: health.read_models,
          projections: health.projections,
        },
      };
    },
  });
  const { host, port } = options.config.gateway;
  let listening: Listening;
  try {
    listening = await listen(app, host, port, ctx.logger);
  } catch (error) {
    await ai.close();
    await opened.close();
    throw error;
  }
  const { server } = listening;
  ai.start();
  forwarder?.start();
  sealer.start();
  return {
    url: listening.url,
    adminKeySource: opened.adminKeySource,
    storeLocation: opened.store.location,
    ctx,
    registry,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await forwarder?.stop();
      await sealer.stop();
      await ai.close();
      await opened.close();
    },
  };
}
