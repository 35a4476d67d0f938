/**
 * Starts a gateway (LOADED_STORE: memory or sqlite; LOADED_REDIS_URL: its REDIS_URL, if any;
 * LOADED_OTLP_ENDPOINT: its OTEL_EXPORTER_OTLP_ENDPOINT, if any) in
 * this process, closes it, and prints the URL
 * of every module loaded through `import` meanwhile, as JSON. Run in its own process:
 *   node --import tsx test/support/loaded-modules.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { register } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Loader hooks run off the main thread: they keep the list, and hand it over as the source of one
// made-up module, so that reading it comes after every load before it.
const hooks = `
const loaded = [];
export async function resolve(specifier, context, next) {
  if (specifier === 'loaded-modules:list') return { url: specifier, shortCircuit: true };
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (url === 'loaded-modules:list')
    return { format: 'module', source: 'export default ' + JSON.stringify(loaded), shortCircuit: true };
  loaded.push(url);
  return next(url, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);

const { startGateway } = await import('../../services/gateway/gateway.ts');
const { loadConfig } = await import('../../shared/config.ts');
const dataDir = await mkdtemp(join(tmpdir(), 'studio-loaded-'));
try {
  const config = loadConfig({
    STUDIO_EVENT_STORE: process.env.LOADED_STORE ?? 'memory',
    REDIS_URL: process.env.LOADED_REDIS_URL,
    OTEL_EXPORTER_OTLP_ENDPOINT: process.env.LOADED_OTLP_ENDPOINT,
    STUDIO_DATA_DIR: dataDir,
    ADMIN_SECRET_KEY: `adm_${'k'.repeat(43)}`,
    STUDIO_MASTER_KEY: '0'.repeat(64),
    STUDIO_GATEWAY_HOST: '127.0.0.1',
    STUDIO_GATEWAY_PORT: '0',
    LOG_LEVEL: 'silent',
  });
  const gateway = await startGateway({ config, processEnv: {} });
  await gateway.close();
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
// @ts-expect-error: a module the hooks above make up
const { default: loaded }: { default: string[] } = await import('loaded-modules:list');
process.stdout.write(JSON.stringify(loaded));
