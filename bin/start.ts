import { type RunningGateway, startGateway } from '../services/gateway/gateway.ts';
import { provisionLocalToken } from '../services/runtime/provision.ts';
import { type RunningRuntime, startRuntime } from '../services/runtime/runtime.ts';
import { ConfigError, type StudioConfig } from '../shared/config.ts';
import { createLogger } from '../shared/logger.ts';

export interface StartChoice {
  gateway: boolean;
  runtime: boolean;
  /** The session routes; on by default when gateway and runtime share the process. */
  sdkRoutes?: boolean;
}

/** `studio start` (both), `studio gateway start`, `studio agent start`: prints where things are, stops on signals. */
export async function startCommand(config: StudioConfig, choice: StartChoice): Promise<void> {
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
      `  Agent runtime    ${runtime.url}  (model ${config.agentModel}, via ${gatewayUrl})`,
      `  Workspace        ${config.workspace}`,
      `  Try              curl -X POST ${runtime.url}/api/execute -H 'content-type: application/json' -d '{"instructions":"hello"}'`,
    );
  }
  lines.push('');
  process.stdout.write(`${lines.join('\n')}\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    await runtime?.close();
    await gateway?.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
