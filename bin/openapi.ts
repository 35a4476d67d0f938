import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { assembleGateway } from '../services/gateway/gateway.ts';
import { assembleRuntime } from '../services/runtime/assemble.ts';
import { loadConfig } from '../shared/config.ts';
import { openStore } from '../shared/event-store/open.ts';
import { gatewayApiDocument } from '../shared/http/app.ts';
import type { OpenApiDocument } from '../shared/http/openapi.ts';
import { createLogger } from '../shared/logger.ts';

/**
 * The gateway's and the runtime's OpenAPI documents, as their servers serve them, made without a
 * server: both assembled on a memory store with throwaway keys, nothing started, nothing written,
 * nothing of this machine's environment read (clients generate their types from these at build time).
 */
export async function apiDocuments(): Promise<{ gateway: OpenApiDocument; runtime: OpenApiDocument }> {
  const config = loadConfig({
    STUDIO_EVENT_STORE: 'memory',
    // Never created: nothing is started that would write there.
    STUDIO_DATA_DIR: join(tmpdir(), `studio-openapi-${randomBytes(6).toString('hex')}`),
    ADMIN_SECRET_KEY: randomBytes(32).toString('base64url'),
    STUDIO_MASTER_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
  });
  const logger = createLogger('silent');
  const gateway = await assembleGateway({ config, logger, processEnv: {} });
  try {
    const store = await openStore({ kind: 'memory', dataDir: config.dataDir });
    try {
      const runtime = assembleRuntime({
        config,
        logger,
        gatewayUrl: 'http://127.0.0.1',
        token: 'unused',
        store,
        processEnv: {},
        sdkRoutes: true,
      });
      return { gateway: gatewayApiDocument(gateway.http), runtime: runtime.document() };
    } finally {
      await store.close();
    }
  } finally {
    await gateway.close();
  }
}

/** `gateway.openapi.json` and `runtime.openapi.json` in `dir`; returns their paths. */
export async function writeApiDocuments(dir: string): Promise<string[]> {
  const documents = await apiDocuments();
  await mkdir(dir, { recursive: true });
  return Promise.all(
    Object.entries(documents).map(async ([name, document]) => {
      const path = join(dir, `${name}.openapi.json`);
      await writeFile(path, `${JSON.stringify(document, null, 2)}\n`);
      return path;
    }),
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { out: { type: 'string', default: 'dist/openapi' } } });
  const written = await writeApiDocuments(resolve(values.out));
  for (const path of written) console.log(path);
}
