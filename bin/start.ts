import { type RunningGateway, startGateway } from '../services/gateway/gateway.ts';
import { provisionLocalToken } from '../services/runtime/provision.ts';
import { type RunningRuntime, startRuntime } from '../services/runtime/runtime.ts';
import { ConfigError, type ProcessConfig } from '../shared/config.ts';
import type { DrainOutcome } from '../shared/http/drain.ts';
import { createLogger, type Logger } from '../shared/logger.ts';

export interface StartChoice {
  gateway: boolean;
  runtime: boolean;
  /** The session routes; on by default when gateway and runtime share the process. */
  sdkRoutes?: boolean;
}

/** `studio start` (both), `studio gateway start`, `studio agent start`: prints where things are, stops on signals. */
export async function startCommand(config: ProcessConfig, choice: StartChoice): Promise<void> {
  const logger = createLogger(config.logLevel);
  let gateway: RunningGateway | undefined;
  let runtime: RunningRuntime | undefined;
  const lines = [''];

  if (choice.gateway) {
    gateway = await startGateway({ config, logger });
    const keyHint = gateway.adminKeySource.startsWith('/')
      ? `$(cat ${gateway.adminKeySource})`
      : '$ADMIN_SECRET_KEY';
    lines.push(
      `  Studio gateway   ${gateway.url}`,
      `  Console          ${gateway.url}/console/  (sign in with the admin key)`,
      `  API reference    ${gateway.url}/docs`,
      `  Health           ${gateway.url}/health`,
      `  Event store      ${config.eventStore} (${gateway.storeLocation})`,
      `  Admin key        ${gateway.adminKeySource}`,
      `  Try              curl -H "Authorization: Bearer ${keyHint}" ${gateway.url}/v1/studios/list`,
    );
  }
  if (choice.runtime) {
    let gatewayUrl = config.gatewayUrl ?? gateway?.url;
    let token = config.studioToken;
    if (gateway && !token) {
      token = await provisionLocalToken(gateway.ctx, config.dataDir);
      gatewayUrl = gateway.url;
    }
    if (!token)
      throw new ConfigError('the agent runtime needs STUDIO_TOKEN (a user token issued by the gateway)');
    if (!gatewayUrl) gatewayUrl = 'http://127.0.0.1:8600';
    try {
      runtime = await startRuntime({
        config,
        logger,
        gatewayUrl,
        token,
        sdkRoutes: choice.sdkRoutes ?? choice.gateway,
        ...(gateway ? { store: { events: gateway.ctx.events, checkpoints: gateway.ctx.checkpoints } } : {}),
      });
    } catch (error) {
      await gateway?.close();
      throw error;
    }
    lines.push(
      `  Agent runtime    ${runtime.url}  (model ${config.agentModel}, via ${gatewayUrl}; its console at /)`,
      `  Workspace        ${config.workspace}`,
      `  Try              curl -X POST ${runtime.url}/api/execute -H 'content-type: application/json' -d '{"instructions":"hello"}'`,
    );
  }
  // Signals are handled before the banner says Studio is up: whoever reads it may stop it at once.
  const stop = stopOnSignals(config, logger, runtime, gateway);
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  lines.push('');
  process.stdout.write(`${lines.join('\n')}\n`);
  // An embedded log whose database stopped (a disk that would not take its WAL) comes back only
  // through a new start, which recovers it: so the process stops, as a signal would stop it, with 1.
  for (const lost of [gateway?.storeLost, runtime?.storeLost]) {
    void lost?.then((error) => {
      logger.fatal(
        { err: error },
        'the event log stopped; Studio stops now, and its next start recovers the log',
      );
      void stop('event log stopped', { failed: true });
    });
  }
}

/** What the close of the log may take beyond the drain deadline before the process exits anyway. */
export const CLOSE_GRACE_MS = 10_000;

/**
 * The first signal drains (see docs/decisions.md, "Draining"): the runtime first, its turns still
 * calling the gateway, then the gateway, within one deadline of `STUDIO_DRAIN_S`. A second signal
 * cuts what is left. Exit code 0 when everything that had to be written was, cut or not; 1 otherwise,
 * and 1 when it stops because the log stopped (`{ failed: true }`).
 */
function stopOnSignals(
  config: ProcessConfig,
  logger: Logger,
  runtime: RunningRuntime | undefined,
  gateway: RunningGateway | undefined,
): (signal: string, options?: { failed: boolean }) => Promise<void> {
  const cutNow = new AbortController();
  let draining = false;
  let failed = false;
  return async (signal, options) => {
    if (options?.failed) failed = true;
    if (draining) {
      logger.warn({ signal }, 'signalled again: cutting what is left');
      cutNow.abort();
      return;
    }
    draining = true;
    logger.info({ signal, drain_s: config.drainSeconds }, 'draining');
    const deadline = AbortSignal.any([AbortSignal.timeout(config.drainSeconds * 1000), cutNow.signal]);
    deadline.addEventListener('abort', () => {
      setTimeout(() => {
        logger.error('the log did not close in time after the drain; exiting anyway');
        process.exit(1);
      }, CLOSE_GRACE_MS).unref();
    });
    gateway?.announceDrain();
    const outcomes: DrainOutcome[] = [];
    try {
      if (runtime) outcomes.push(await runtime.drain(deadline));
      if (gateway) outcomes.push(await gateway.drain(deadline));
    } catch (error) {
      logger.error({ err: error }, 'stopping failed');
      process.exit(1);
    }
    const finished = outcomes.every((o) => o.finished);
    const durable = outcomes.every((o) => o.durable);
    logger.info({ finished, durable }, 'stopped');
    process.exit(durable && !failed ? 0 : 1);
  };
}
