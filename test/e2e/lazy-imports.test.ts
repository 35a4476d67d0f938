import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { reachableRedis, redisUnavailableReason } from '../support/redis.ts';

// The event-store adapters, kafkajs and ioredis weigh tens of MB once loaded: a gateway loads only
// the ones its configuration uses (shared/event-store/open.ts, services/forwarder/gateway.ts,
// shared/rate-limit/counters.ts), OpenTelemetry only when traces are asked for
// (shared/observability/tracing.ts), and the AWS SDK's signer, event stream codec and credential
// chain only when a Bedrock model is called (services/ai/providers/bedrock/): every MB a process
// holds for good lets V8 grow its heap about four MB further before collecting it.

const root = join(import.meta.dirname, '..', '..');
const LIBRARIES =
  /\/node_modules\/(better-sqlite3|pg|pg-pool|@electric-sql\/pglite|@kurrent\/[^/]+|kafkajs|ioredis|@opentelemetry\/[^/]+|@smithy\/[^/]+|@aws-crypto\/[^/]+|@aws-sdk\/[^/]+)\//;
const redisUrl = await reachableRedis();

async function librariesLoaded(store: 'memory' | 'sqlite', redis?: string, otlp?: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'test/support/loaded-modules.ts'],
    {
      cwd: root,
      env: {
        ...process.env,
        LOADED_STORE: store,
        LOADED_REDIS_URL: redis ?? '',
        LOADED_OTLP_ENDPOINT: otlp ?? '',
      },
    },
  );
  const urls: string[] = JSON.parse(stdout);
  expect(urls.some((url) => url.endsWith('/services/gateway/gateway.ts'))).toBe(true);
  return [...new Set(urls.map((url) => LIBRARIES.exec(url)?.[1]).filter((name) => name !== undefined))];
}

describe('a gateway loads only the libraries its configuration needs', () => {
  it('memory store, no Kafka, no traces: no store client, no kafkajs, no OpenTelemetry', async () => {
    expect(await librariesLoaded('memory')).toEqual([]);
  });

  it('SQLite store, no Kafka: better-sqlite3 and nothing else (never PGlite, which only `studio log copy` reads)', async () => {
    expect(await librariesLoaded('sqlite')).toEqual(['better-sqlite3']);
  });

  it('with OTEL_EXPORTER_OTLP_ENDPOINT: the OpenTelemetry SDK and its OTLP/HTTP exporter', async () => {
    // Nothing listens there: the gateway starts and closes without having exported anything.
    const loaded = await librariesLoaded('memory', undefined, 'http://127.0.0.1:9');
    expect(loaded).toEqual(
      expect.arrayContaining(['@opentelemetry/sdk-node', '@opentelemetry/exporter-trace-otlp-http']),
    );
    expect(loaded.every((name) => name.startsWith('@opentelemetry/'))).toBe(true);
  });

  it.skipIf(redisUrl === undefined)(
    `memory store with REDIS_URL: ioredis only ${redisUrl ? '' : `(not run: ${redisUnavailableReason})`}`,
    async () => {
      expect(await librariesLoaded('memory', redisUrl)).toEqual(['ioredis']);
    },
  );
});
