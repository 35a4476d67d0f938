import { startGateway } from '../services/gateway/gateway.ts';
import type { StudioConfig } from '../shared/config.ts';
import { createLogger } from '../shared/logger.ts';

export async function startCommand(config: StudioConfig): Promise<void> {
  const logger = createLogger(config.logLevel);
  const gateway = await startGateway({ config, logger });
  const lines = [
    '',
    `  Studio gateway   ${gateway.url}`,
    `  Health           ${gateway.url}/health`,
    `  Event store      ${config.eventStore} (${gateway.storeLocation})`,
    `  Admin key        ${gateway.adminKeySource}`,
    '',
    `  Try: curl -H "Authorization: Bearer $(cat ${gateway.adminKeySource.startsWith('/') ? gateway.adminKeySource : '<admin key>'})" ${gateway.url}/v1/studios/list`,
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    await gateway.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
