import { join } from 'node:path';
import { ConfigError, type StudioConfig } from '../../shared/config.ts';
import { lockDataDir } from '../../shared/data-dir-lock.ts';
import { ApiError } from '../../shared/errors.ts';
import { openStore } from '../../shared/event-store/open.ts';
import type { EventStore } from '../../shared/event-store/types.ts';
import type { AnyRoute } from '../../shared/http/action.ts';
import { baseApp } from '../../shared/http/app.ts';
import { errorMiddleware, sendError } from '../../shared/http/errors.ts';
import { OpenStreamLimit } from '../../shared/http/open-streams.ts';
import { hostsOf, originGuard } from '../../shared/http/origin-guard.ts';
import { mountRoutes } from '../../shared/http/serve.ts';
import { listen } from '../../shared/http/server.ts';
import type { Logger } from '../../shared/logger.ts';
import type { CheckpointStore } from '../../shared/projections/checkpoints.ts';
import { ProjectionRunner } from '../../shared/projections/runner.ts';
import { LiveBus } from '../sessions/live.ts';
import { sdkRoutes } from '../sessions/routes.ts';
import { SessionService } from '../sessions/service.ts';
import { StreamHub } from '../sessions/stream-hub.ts';
import { agentTurnRunner } from './agent/turn.ts';
import { EffectDispatcher } from './effects.ts';
import { GatewayClient } from './gateway-client.ts';
import { runtimeHealth } from './health.ts';
import { chatPlugin } from './plugins/chat/index.ts';
import { filesPlugin } from './plugins/files/index.ts';
import { PluginManager } from './plugins/manager.ts';
import { mcpPlugin } from './plugins/mcp/index.ts';
import type { Plugin } from './plugins/types.ts';
import { RUNTIME_PROJECTIONS } from './projections.ts';
import { mountRuntimeRoutes, RUNTIME_POLICY } from './routes/index.ts';

export interface RuntimeOptions {
  config: StudioConfig;
  logger: Logger;
  /** Which gateway the agent calls, and as whom (a user token of one studio). */
  gatewayUrl: string;
  token: string;
  /** The log to use; by default the runtime opens its own (embedded: `<data dir>/runtime`). */
  store?: { events: EventStore; checkpoints: CheckpointStore };
  processEnv?: NodeJS.ProcessEnv;
  /** More plugins (tests, extensions). */
  plugins?: Plugin[];
  /** Serve the session routes (`/api/sdk/*`) too: `studio start`, `studio agent start --http`. */
  sdkRoutes?: boolean;
}

export interface RunningRuntime {
  url: string;
  sessions: SessionService;
  plugins: PluginManager;
  live: LiveBus;
  /** Every route it serves (for tests that walk them all). */
  routes: readonly AnyRoute[];
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export async function startRuntime(options: RuntimeOptions): Promise<RunningRuntime> {
  const { config, logger } = options;
  const { host, port } = config.runtime;
  if (!LOOPBACK.has(host) && !config.runtimeToken) {
    throw new ConfigError(
      `refusing to bind the runtime to ${host} without STUDIO_RUNTIME_TOKEN: beyond loopback every /api route needs a token`,
    );
  }
  const env = options.processEnv ?? process.env;
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse())
      await fn().catch((error) => logger.warn({ err: error }, 'runtime cleanup failed'));
  };

  try {
    let store = options.store;
    if (!store) {
      const dataDir = join(config.dataDir, 'runtime');
      if (config.eventStore === 'pglite') {
        const lock = await lockDataDir(dataDir);
        cleanups.push(() => lock.release());
      }
      const opened = await openStore({ kind: config.eventStore, dataDir, databaseUrl: config.databaseUrl });
      cleanups.push(() => opened.close());
      store = opened;
    }
    const projections = new ProjectionRunner(store.events, store.checkpoints, RUNTIME_PROJECTIONS, logger);
    await projections.start();
    cleanups.push(() => projections.stop());

    const live = new LiveBus();
    const plugins = new PluginManager({
      workspace: config.workspace,
      env: (key) => env[key] || undefined,
      logger,
      disabled: config.pluginsDisabled,
    });
    const gateway = new GatewayClient(options.gatewayUrl, options.token);
    let sessions: SessionService;
    const chat = chatPlugin({
      events: store.events,
      projections,
      sessions: () => sessions,
      model: config.agentModel,
    });
    sessions = new SessionService({
      events: store.events,
      projections,
      logger,
      workspace: config.workspace,
      maxQueue: config.maxQueuedTurns,
      runTurn: agentTurnRunner({
        gateway,
        plugins,
        sessions: () => sessions,
        live,
        maxSteps: config.agentMaxSteps,
      }),
    });
    const mcp = mcpPlugin({
      configPath: config.mcpConfig,
      onFailure: (error) => plugins.markFailed('mcp', error),
    });
    for (const plugin of [filesPlugin, chat.plugin, mcp, ...(options.plugins ?? [])])
      plugins.register(plugin);
    await plugins.startAll();
    cleanups.push(() => plugins.stopAll());
    cleanups.push(() => sessions.close());

    const effects = new EffectDispatcher(store.events, store.checkpoints, plugins, logger);
    await effects.start();
    cleanups.push(() => effects.stop());

    const hub = options.sdkRoutes ? new StreamHub(store.events, logger) : undefined;
    if (hub) cleanups.push(async () => hub.close());
    const app = baseApp(logger);
    app.use(
      originGuard({
        extraHosts: hostsOf(host, config.runtime.publicUrl),
        allowedOrigins: config.runtime.allowedOrigins,
      }),
    );
    const routes: AnyRoute[] = mountRuntimeRoutes(app, {
      plugins,
      sessions,
      workspace: config.workspace,
      model: config.agentModel,
      runtimeToken: config.runtimeToken,
      chat,
      status: () => ({
        gateway: options.gatewayUrl,
        model: config.agentModel,
        sessions: sessions.list().length,
      }),
      health: () => runtimeHealth(projections, hub),
    });
    if (hub) {
      const sessionRoutes = sdkRoutes({
        sessions,
        events: store.events,
        hub,
        live,
        agentSystem: () => plugins.agentSystem(),
        model: config.agentModel,
        heartbeatMs: config.sseHeartbeatMs,
        openStreams: new OpenStreamLimit(config.maxStreamsPerClient),
      });
      mountRoutes(app, sessionRoutes, RUNTIME_POLICY);
      routes.push(...sessionRoutes);
    }
    app.use((req, res) => sendError(res, new ApiError('not_found', `no route ${req.method} ${req.path}`)));
    app.use(errorMiddleware(logger));

    const { server, url } = await listen(app, host, port, logger);
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    await sessions.resume();
    return { url, sessions, plugins, live, routes, close: cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
