import { Command, InvalidArgumentError } from 'commander';
import { config as loadDotenv } from 'dotenv';
import { ConfigError, loadConfig, type ProcessConfig } from '../shared/config.ts';
import { DataDirInUse } from '../shared/data-dir-lock.ts';
import { EventLogWontOpen } from '../shared/event-store/types.ts';
import { EmptyKeyFile } from '../shared/key-files.ts';
import type { StartChoice } from './start.ts';

// Each command's module is loaded when that command runs: `studio start` does not load what
// `db migrate`, `projections rebuild` or `audit verify` need (nor they what start needs).
async function startCommand(config: ProcessConfig, choice: StartChoice): Promise<void> {
  await (await import('./start.ts')).startCommand(config, choice);
}

loadDotenv({ quiet: true });

const program = new Command('studio')
  .description('Studio: an AI gateway with a local agent runtime, event-sourced end to end')
  .showHelpAfterError();

const port = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new InvalidArgumentError('a port is an integer from 0 to 65535');
  return String(n);
};

/** Command-line flags win over env variables; both are parsed by the one config schema. */
function configWith(overrides: Record<string, string | undefined>): ProcessConfig {
  const env = { ...process.env };
  for (const [key, value] of Object.entries(overrides)) if (value !== undefined) env[key] = value;
  return loadConfig(env);
}

program
  .command('start')
  .description('start Studio on this machine: the gateway and the agent runtime in one process')
  .option('--port <port>', 'gateway port (STUDIO_GATEWAY_PORT, default 8600)', port)
  .option('--host <host>', 'gateway host (STUDIO_GATEWAY_HOST, default 127.0.0.1)')
  .option('--runtime-port <port>', 'runtime port (STUDIO_RUNTIME_PORT, default 8601)', port)
  .action(async (opts: { port?: string; host?: string; runtimePort?: string }) => {
    const config = configWith({
      STUDIO_GATEWAY_PORT: opts.port,
      STUDIO_GATEWAY_HOST: opts.host,
      STUDIO_RUNTIME_PORT: opts.runtimePort,
    });
    await startCommand(config, { gateway: true, runtime: true });
  });

const gateway = program.command('gateway').description('the gateway alone');
gateway
  .command('start')
  .description('start the gateway')
  .option('--port <port>', 'port (STUDIO_GATEWAY_PORT, default 8600)', port)
  .option('--host <host>', 'host (STUDIO_GATEWAY_HOST, default 127.0.0.1)')
  .action(async (opts: { port?: string; host?: string }) => {
    const config = configWith({ STUDIO_GATEWAY_PORT: opts.port, STUDIO_GATEWAY_HOST: opts.host });
    await startCommand(config, { gateway: true, runtime: false });
  });

const agent = program.command('agent').description('the local agent runtime alone');
agent
  .command('start')
  .description('start the agent runtime (STUDIO_GATEWAY_URL and STUDIO_TOKEN say which gateway and studio)')
  .option('--port <port>', 'port (STUDIO_RUNTIME_PORT, default 8601)', port)
  .option(
    '--host <host>',
    'host (STUDIO_RUNTIME_HOST, default 127.0.0.1; beyond loopback needs STUDIO_RUNTIME_TOKEN)',
  )
  .option('--http', 'serve the session routes (/api/sdk/*) too')
  .action(async (opts: { port?: string; host?: string; http?: boolean }) => {
    const config = configWith({ STUDIO_RUNTIME_PORT: opts.port, STUDIO_RUNTIME_HOST: opts.host });
    await startCommand(config, { gateway: false, runtime: true, sdkRoutes: opts.http === true });
  });

const db = program.command('db').description('the PostgreSQL database of the log');
db.command('migrate')
  .description(
    'apply the SQL migrations of infra/sql that the database does not have yet (also done at every start)',
  )
  .action(async () => {
    await (await import('./migrate.ts')).migrateCommand(configWith({}));
  });

const projections = program.command('projections').description('read models built from the log');
projections
  .command('rebuild [name]')
  .description('reset and replay one read model, or all of them, from the log (with a progress bar)')
  .action(async (name: string | undefined) => {
    await (await import('./rebuild.ts')).rebuildCommand(configWith({}), name);
  });

const audit = program.command('audit').description('the audit log: the event log and its seals');
audit
  .command('verify')
  .description(
    'check the log against its seals: names the first edited, missing or unexpected event (exit code 1), counts unsealed ones',
  )
  .action(async () => {
    await (await import('./audit.ts')).verifyCommand(configWith({}));
  });

const log = program.command('log').description('the event log as a whole');
log
  .command('copy')
  .description(
    'copy the whole log, each event as it was, into another store (an empty one, or one an interrupted copy began), then compare both and verify the seals there',
  )
  .requiredOption('--to <log>', 'sqlite:<data dir or file>, or a postgres:// URL')
  .option(
    '--from <log>',
    'the log to copy (default: the configured store): sqlite:…, postgres://…, kurrentdb://…, or pglite:<data dir> of an earlier Studio',
  )
  .action(async (opts: { from?: string; to: string }) => {
    await (await import('./log-copy.ts')).logCopyCommand(configWith({}), opts.from, opts.to);
  });

program
  .command('apply')
  .description(
    'bring a running gateway to a setup file (providers, prices, routes, studios, tokens, budgets, limits): each change an admin call; applying it twice changes nothing',
  )
  .requiredOption(
    '-f, --file <file>',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the help text shows the setup file's ${NAME} syntax
    'the setup file (YAML); ${NAME} in it is the environment variable NAME',
  )
  .option('--dry-run', 'print what would change, change nothing')
  .option('--url <url>', "the gateway (default STUDIO_GATEWAY_URL, else this machine's)")
  .action(async (opts: { file: string; dryRun?: boolean; url?: string }) => {
    await (await import('./apply.ts')).applyCommand(configWith({}), opts);
  });

program
  .command('export')
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the help text shows the setup file's ${NAME} syntax
  .description("write a running gateway's state as a setup file (keys as ${…} references, tokens by name)")
  .option('-o, --out <file>', 'the file to write (default: standard output)')
  .option('--url <url>', "the gateway (default STUDIO_GATEWAY_URL, else this machine's)")
  .action(async (opts: { out?: string; url?: string }) => {
    await (await import('./apply.ts')).exportCommand(configWith({}), opts);
  });

try {
  await program.parseAsync();
} catch (error) {
  if (error instanceof ConfigError || error instanceof DataDirInUse || error instanceof EmptyKeyFile) {
    console.error(`studio: ${error.message}`);
    process.exit(2);
  }
  // Not a usage error, and nothing the stack would explain better than the message.
  if (error instanceof EventLogWontOpen) {
    console.error(`studio: ${error.message}`);
    process.exit(1);
  }
  throw error;
}
