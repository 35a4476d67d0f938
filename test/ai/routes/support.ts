import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { StoredEvent } from '../../../shared/event-store/types.ts';
import type { ApiResponse } from '../../support/gateway.ts';
import {
  type Json,
  type MockHandler,
  openAiDefault,
  openAiMock,
  openAiWire,
  sse,
  type WireMock,
} from '../../support/mock-ai-upstreams.ts';
import { type ProviderGateway, startProviderGateway } from '../providers/support.ts';

/**
 * A gateway whose `compat/a`, `compat/b` and `compat/c` are served by one OpenAI-compatible mock
 * that a test scripts per model (`script('a', …)`); a model with nothing scripted echoes. The
 * upstream client retries twice on its own, so a test sees whether a route's attempts do.
 */
export interface RoutedGateway {
  pg: ProviderGateway;
  mock: WireMock;
  /** The next requests for `compat/<model>` are answered by these handlers, one each. */
  script(model: string, ...handlers: MockHandler[]): void;
  /** The upstream model of every request the mock received, in order. */
  calls(): string[];
  reset(): void;
  admin(method: string, path: string, body?: unknown): Promise<ApiResponse>;
  /** `routes/upsert`, which must succeed. */
  upsert(route: Record<string, unknown>): Promise<Json>;
  /** The usage events (generations, reservations, releases) of a request, from the log. */
  usageOf(requestId: string, studioId?: string): Promise<StoredEvent[]>;
  close(): Promise<void>;
}

/** The file's routed gateway: started before its tests, its scripts and requests forgotten before each, closed after. */
export function useRoutedGateway(): RoutedGateway {
  let started: RoutedGateway | undefined;
  beforeAll(async () => {
    started = await startRoutedGateway();
  });
  beforeEach(() => started?.reset());
  afterAll(async () => {
    await started?.close();
  });
  const current = () => {
    if (!started) throw new Error('the routed gateway is not started yet');
    return started;
  };
  return {
    get pg() {
      return current().pg;
    },
    get mock() {
      return current().mock;
    },
    script: (model, ...handlers) => current().script(model, ...handlers),
    calls: () => current().calls(),
    reset: () => current().reset(),
    admin: (method, path, body) => current().admin(method, path, body),
    upsert: (route) => current().upsert(route),
    usageOf: (requestId, studioId) => current().usageOf(requestId, studioId),
    close: () => current().close(),
  };
}

async function startRoutedGateway(): Promise<RoutedGateway> {
  const mock = await openAiMock();
  const scripts = new Map<string, MockHandler[]>();
  const modelOf = (body: Buffer) => String(JSON.parse(body.toString()).model);
  mock.reply((req, res) => (scripts.get(modelOf(req.body))?.shift() ?? openAiDefault)(req, res));
  const pg = await startProviderGateway({
    processEnv: {
      OPENAI_COMPATIBLE_BASE_URL: `${mock.url}/v1`,
      OPENAI_COMPATIBLE_MODELS: 'a,b,c',
    },
    upstream: { timeoutMs: 2_000, idleTimeoutMs: 2_000, retries: 2, retryBaseMs: 1 },
  });
  const admin = (method: string, path: string, body?: unknown) =>
    pg.gw.api(method, path, { token: pg.admin, ...(body === undefined ? {} : { body }) });
  return {
    pg,
    mock,
    script(model, ...handlers) {
      scripts.set(model, [...(scripts.get(model) ?? []), ...handlers]);
    },
    calls: () => mock.requests.map((r) => modelOf(r.body)),
    reset() {
      scripts.clear();
      mock.requests.length = 0;
    },
    admin,
    async upsert(route) {
      const res = await admin('POST', '/v1/ai/routes/upsert', route);
      if (res.status !== 200) throw new Error(`routes/upsert: ${res.status} ${res.text}`);
      return res.json;
    },
    async usageOf(requestId, studioId = 'p') {
      const events = await pg.gw.running.ctx.events.readStream(`usage-${studioId}`);
      return events.filter((e) => (e.data as { requestId?: string }).requestId === requestId);
    },
    async close() {
      await pg.close();
      await mock.close();
    },
  };
}

/** The generation events of a request (a route's request has exactly one). */
export const generations = (events: StoredEvent[]) =>
  events.filter((e) => e.type === 'GenerationCompleted' || e.type === 'GenerationFailed');

/** Answers `status` with OpenAI's error body. */
export const failWith =
  (status: number): MockHandler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(openAiWire.error(`failed with ${status}`, 'server_error')));
  };

/** Accepts a stream (200 and its headers), then drops the connection before its first event. */
export const resetBeforeFirstChunk: MockHandler = (_req, res) => {
  sse(res);
  setTimeout(() => res.destroy(), 20);
};

/** Sends the first chunk of a stream, then drops the connection. */
export const resetAfterFirstChunk: MockHandler = (_req, res) => {
  sse(res).send(openAiWire.chunk({ role: 'assistant', content: 'Hel' }));
  setTimeout(() => res.destroy(), 20);
};
