import { join } from 'node:path';
import { ConfigError } from '../../shared/config.ts';
import { lockDataDir } from '../../shared/data-dir-lock.ts';
import { openStore } from '../../shared/event-store/open.ts';
import type { AnyPathEndpoint } from '../../shared/http/action.ts';
import { type DrainOutcome, finishDraining } from '../../shared/http/drain.ts';
import { listen } from '../../shared/http/server.ts';
import { startTracing, tracing } from '../../shared/observability/tracing.ts';
import type { LiveBus } from '../sessions/live.ts';
import type { SessionService } from '../sessions/service.ts';
import { assembleRuntime, type RuntimeAssemblyOptions } from './assemble.ts';
import type { PluginManager } from './plugins/manager.ts';

export interface RuntimeOptions extends Omit<RuntimeAssemblyOptions, 'store'> {
  /** The log to use; by default the runtime opens its own (embedded: `<data dir>/runtime`). */
  store?: RuntimeAssemblyOptions['store'];
}

export interface RunningRuntime {
  url: string;
  sessions: SessionService;
  plugins: PluginManager;
  live: LiveBus;
  /** With a log of its own: resolves, with why, if it is gone for good in this process (`OpenedStore.lost`). */
  storeLost?: Promise<Error>;
  /** Every route it serves (for tests that walk them all). */
  routes: readonly AnyPathEndpoint[];
  /**
   * Stops without cutting anyone off (see `Drain`): new requests refused, session event streams told
   * to reconnect elsewhere, the turns queued run until `deadline`, the rest cut.
   */
  drain(deadline: AbortSignal): Promise<DrainOutcome>;
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
  const cleanups: (() => Promise<void>)[] = [];
  let cleaned: Promise<boolean> | undefined;
  /** Undoes what was set up, last first, once; whether every step succeeded. */
  const cleanup = (): Promise<boolean> =>
    (cleaned ??= (async () => {
      let clean = true;
      for (const fn of cleanups.reverse())
        await fn().catch((error) => {
          clean = false;
          logger.warn({ err: error }, 'runtime cleanup failed');
        });
      return clean;
    })());

  try {
    await startTracing(config.otlpEndpoint);
    cleanups.push(() => tracing().flush());
    let store = options.store;
    let storeLost: Promise<Error> | undefined;
    if (!store) {
      const dataDir = join(config.dataDir, 'runtime');
      if (config.eventStore === 'sqlite') {
        const lock = await lockDataDir(dataDir);
        cleanups.push(() => lock.release());
      }
      const opened = await openStore({
        kind: config.eventStore,
        dataDir,
        synchronous: config.sqliteSynchronous,
        databaseUrl: config.databaseUrl,
      });
      cleanups.push(() => opened.close());
      store = opened;
      storeLost = opened.lost;
    }
    const { projections, live, plugins, sessions, effects, hub, mcp, listener, drain, routes } =
      assembleRuntime({
        ...options,
        store,
      });
    await projections.start();
    cleanups.push(() => projections.stop());
    await plugins.startAll();
    cleanups.push(() => plugins.stopAll());
    cleanups.push(() => sessions.close());
    await effects.start();
    cleanups.push(() => effects.stop());
    if (hub) cleanups.push(async () => hub.close());
    cleanups.push(() => mcp.close());

    const { server, url } = await listen(listener, host, port, logger);
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    await sessions.resume();
    return {
      url,
      sessions,
      plugins,
      live,
      routes,
      ...(storeLost ? { storeLost } : {}),
      drain: (deadline) =>
        finishDraining(server, drain, deadline, {
          settled: (until) => sessions.turnsDone(until),
          // Turns still running are cancelled, and their end recorded, by closing the sessions.
          cut: () => void sessions.close(),
          stop: async () => ({ durable: await cleanup() }),
        }),
      close: async () => void (await cleanup()),
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
