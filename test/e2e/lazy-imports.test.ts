import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// The event-store adapters and kafkajs weigh tens of MB once loaded: a gateway loads only the ones
// its configuration uses (shared/event-store/open.ts, services/forwarder/gateway.ts).

const root = join(import.meta.dirname, '..', '..');
const LIBRARIES = /\/node_modules\/(pg|pg-pool|@electric-sql\/pglite|@kurrent\/[^/]+|kafkajs)\//;

async function librariesLoaded(store: 'memory' | 'pglite'): Promise<string[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'test/support/loaded-modules.ts'],
    { cwd: root, env: { ...process.env, LOADED_STORE: store } },
  );
  const urls: string[] = JSON.parse(stdout);
  expect(urls.some((url) => url.endsWith('/services/gateway/gateway.ts'))).toBe(true);
  return [...new Set(urls.map((url) => LIBRARIES.exec(url)?.[1]).filter((name) => name !== undefined))];
}

describe('a gateway loads only the libraries its configuration needs', () => {
  it('memory store, no Kafka: no store client and no kafkajs', async () => {
    expect(await librariesLoaded('memory')).toEqual([]);
  });

  it('PGlite store, no Kafka: PGlite only', async () => {
    expect(await librariesLoaded('pglite')).toEqual(['@electric-sql/pglite']);
  });
});
