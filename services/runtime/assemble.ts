import type { ProcessConfig } from '../../shared/config.ts';
import type { EventStore } from '../../shared/event-store/types.ts';
import { endExpressApp, expressApp } from '../../shared/http/app.ts';
import { mountDocsAssets } from '../../shared/http/docs-page.ts';
import { Drain } from '../../shared/http/drain.ts';
import { EndpointTable } from '../../shared/http/endpoint-table.ts';
import { frontDoor } from '../../shared/http/front-door.ts';
import { OpenStreamLimit } from '../../shared/http/open-streams.ts';
import { hostsOf, originGuard } from '../../shared/http/origin-guard.ts';
import { readinessOf } from '../../shared/http/probes.ts';
import type { Logger } from '../../shared/logger.ts';
import { observeRequests } from '../../shared/observability/http.ts';
import { MetricsRegistry } from '../../shared/observability/metrics.ts';
import { metricsRoute, scrapeSecrets } from '../../shared/observability/metrics-route.ts';
import { observedStore } from '../../shared/observability/observed-store.ts';
import { watchProjectionLag } from '../../shared/observability/projection-lag.ts';
import { tracing } from '../../shared/observability/tracing.ts';
import type { CheckpointStore } from '../../shared/projections/checkpoints.ts';
import { readModelsHealth } from '../../shared/projections/read-models-health.ts';
import { ProjectionRunner } from '../../shared/projections/runner.ts';
import { mountRuntimeConsole } from '../console/pages.ts';
import { LiveBus } from '../sessions/live.ts';
import { sdkRoutes } from '../sessions/routes.ts';
import { SessionService } from '../sessions/service.ts';
import { StreamHub } from '../sessions/stream-hub.ts';
import { agentTurnRunner } from './agent/turn.ts';
import { RUNTIME_DOCUMENT_PATH, runtimeDocsRoutes } from './document.ts';
import { EffectDispatcher } from './effects.ts';
import { GatewayClient } from './gateway-client.ts';
import { runtimeHealth } from './health.ts';
import { RuntimeMcpDoor } from './mcp/door.ts';
import { chatPlugin } from './plugins/chat/index.ts';
import { filesPlugin } from './plugins/files/index.ts';
import { PluginManager } from './plugins/manager.ts';
import { mcpPlugin } from './plugins/mcp/index.ts';
import type { Plugin } from './plugins/types.ts';
import { RUNTIME_PROJECTIONS } from './projections.ts';
import { runtimeAuth } from './routes/auth.ts';
import { addRuntimeRoutes, RUNTIME_POLICY } from './routes/index.ts';

export interface RuntimeAssemblyOptions {
  config: ProcessConfig;
  logger: Logger;
  /** Which gateway the agent calls, and as whom (a user token of one studio). */
  gatewayUrl: string;
  token: string;
  store: { events: EventStore; checkpoints: CheckpointStore };
  processEnv?: NodeJS.ProcessEnv;
  /** More plugins (tests, extensions). */
  plugins?: Plugin[];
  /** Serve the session routes (`/api/sdk/*`) too: `studio start`, `studio agent start --http`. */
  sdkRoutes?: boolean;
}

/**
 * The runtime's parts and its HTTP app, made and wired but not started: nothing reads the log, runs
 * a plugin or listens yet (`startRuntime` does, in order). Writing the API's document needs no more.
 */
export function assembleRuntime(options: RuntimeAssemblyOptions) {
  const { config, logger } = options;
  const metrics = new MetricsRegistry();
  const store = {
    events: observedStore(options.store.events, metrics),
    checkpoints: options.store.checkpoints,
  };
  const env = options.processEnv ?? process.env;
  const projections = new ProjectionRunner(store.events, store.checkpoints, RUNTIME_PROJECTIONS, logger);
  watchProjectionLag(metrics, projections, store.events);
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
  for (const plugin of [filesPlugin, chat.plugin, mcp, ...(options.plugins ?? [])]) plugins.register(plugin);
  const effects = new EffectDispatcher(store.events, store.checkpoints, plugins, logger);
  const hub = options.sdkRoutes ? new StreamHub(store.events, logger) : undefined;
  const mcpDoor = new RuntimeMcpDoor(plugins);

  const { host } = config.runtime;
  const drain = new Drain();
  // Draining ends the MCP sessions, whose streams would otherwise stay open to the end.
  drain.onBegin(() => void mcpDoor.close());
  const isScrapeSecret = scrapeSecrets([config.adminSecretKey, config.metricsToken]);
  const isRuntimeToken = scrapeSecrets([config.runtimeToken]);
  const endpoints = new EndpointTable();
  const docs = runtimeDocsRoutes(() => endpoints.endpoints(), {
    tokenRequired: config.runtimeToken !== undefined,
  });
  endpoints.add(
    [
      metricsRoute(metrics, (bearer) =>
        isScrapeSecret(bearer) ? 'allowed' : isRuntimeToken(bearer) ? 'forbidden' : 'unknown',
      ),
      ...docs.routes,
    ],
    RUNTIME_POLICY,
  );
  addRuntimeRoutes(endpoints, {
    plugins,
    mcp: mcpDoor,
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
    ready: async () => readinessOf(await readModelsHealth(store.events, projections), drain.draining),
  });
  if (hub) {
    endpoints.add(
      sdkRoutes({
        sessions,
        events: store.events,
        hub,
        live,
        agentSystem: () => plugins.agentSystem(),
        model: config.agentModel,
        heartbeatMs: config.sseHeartbeatMs,
        openStreams: new OpenStreamLimit(config.maxStreamsPerClient),
        onDrain: (goAway) => drain.onBegin(goAway),
      }),
      RUNTIME_POLICY,
    );
  }
  // Express serves files alone: the reference page's assets and the console.
  const app = expressApp();
  mountDocsAssets(app, RUNTIME_DOCUMENT_PATH);
  mountRuntimeConsole(app);
  endExpressApp(app, logger);
  const listener = frontDoor({
    logger,
    drain,
    observe: observeRequests(metrics, tracing()),
    ...(config.trustedProxies ? { trustedProxies: config.trustedProxies } : {}),
    guards: [
      originGuard({
        extraHosts: hostsOf(host, config.runtime.publicUrl),
        allowedOrigins: config.runtime.allowedOrigins,
      }),
      runtimeAuth(config.runtimeToken, new Set([RUNTIME_DOCUMENT_PATH])),
    ],
    endpoints: (req, res, path) => endpoints.serve(req, res, path),
    rest: app,
  });

  return {
    projections,
    live,
    plugins,
    sessions,
    effects,
    hub,
    mcp: mcpDoor,
    listener,
    drain,
    routes: endpoints.endpoints(),
    document: docs.describe,
  };
}
