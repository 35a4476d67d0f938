import { createParser } from 'eventsource-parser';
import OpenAI from 'openai';
import { builtinAiProviders } from '../../../services/ai/providers/index.ts';
import { UpstreamClient, type UpstreamOptions } from '../../../services/ai/upstream.ts';
import { waitUntil } from '../../../shared/testing/wait.ts';
import { ok } from '../../governance/support.ts';
import { adminOk, studioWithToken } from '../../support/admin.ts';
import { type ApiResponse, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { type Json, openAiMock, type WireMock } from '../../support/mock-ai-upstreams.ts';

/** Fast upstream options for tests: small backoff, short timeouts (undici checks them every ~0.5 s). */
export const FAST_UPSTREAM: UpstreamOptions = {
  timeoutMs: 300,
  idleTimeoutMs: 300,
  retries: 2,
  retryBaseMs: 1,
};

export interface ProviderGateway {
  gw: TestGateway;
  /** A user token of studio `p`. */
  token: string;
  admin: string;
  /** The official `openai` client pointed at the gateway. */
  client(): OpenAI;
  /** POST with the user token. */
  post(path: string, body: unknown): Promise<ApiResponse>;
  get(path: string, token?: string): Promise<ApiResponse>;
  /** POST with the user token, answer read as SSE: the raw response, its events as they arrive. */
  stream(
    path: string,
    body: unknown,
    signal?: AbortSignal,
  ): Promise<{ response: Response; events: SseEvents }>;
  setEnv(key: string, value: string): Promise<void>;
  removeEnv(key: string): Promise<void>;
  /** Model ids in `GET /v1/ai/models` for the user. */
  userModelIds(): Promise<string[]>;
  close(): Promise<void>;
}

/** The real gateway (memory store) with the built-in providers, a studio `p` and a user token. */
export async function startProviderGateway(options: {
  processEnv?: NodeJS.ProcessEnv;
  upstream?: Partial<UpstreamOptions>;
}): Promise<ProviderGateway> {
  const gw = await startTestGateway({
    store: 'memory',
    logLevel: 'silent',
    processEnv: options.processEnv ?? {},
    ai: {
      upstream: new UpstreamClient({ ...FAST_UPSTREAM, ...options.upstream }),
      providers: builtinAiProviders,
      jobPollMs: 5,
    },
  });
  const admin = gw.adminKey;
  const { token } = await studioWithToken(gw, 'p');

  return {
    gw,
    token,
    admin,
    client: () => new OpenAI({ baseURL: `${gw.url}/v1/ai`, apiKey: token, maxRetries: 0 }),
    post: (path, body) => gw.api('POST', path, { token, body }),
    get: (path, as = token) => gw.api('GET', path, { token: as }),
    async stream(path, body, signal) {
      const response = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
      return { response, events: new SseEvents(response) };
    },
    async setEnv(key, value) {
      await adminOk(gw, 'POST', '/v1/env/upsert', { key, value });
    },
    async removeEnv(key) {
      await adminOk(gw, 'POST', '/v1/env/remove', { key });
    },
    async userModelIds() {
      return ok(await gw.api('GET', '/v1/ai/models', { token })).json.items.map((m: { id: string }) => m.id);
    },
    close: () => gw.close(),
  };
}

export interface SseEvent {
  event: string | undefined;
  /** The data, parsed when it is JSON (`[DONE]` stays a string). */
  data: Json;
}

/** Server-sent events of a fetch response, read one at a time as they arrive. */
export class SseEvents {
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #pending: SseEvent[] = [];
  #decoder = new TextDecoder();
  #parser = createParser({
    onEvent: ({ event, data }) => {
      let parsed: unknown = data;
      try {
        parsed = JSON.parse(data);
      } catch {
        // `[DONE]`
      }
      this.#pending.push({ event, data: parsed });
    },
  });

  constructor(response: Response) {
    if (!response.body) throw new Error('no body');
    this.#reader = response.body.getReader();
  }

  /** The next event, or undefined once the body has ended. */
  async next(): Promise<SseEvent | undefined> {
    while (this.#pending.length === 0) {
      const { done, value } = await this.#reader.read();
      if (done) return undefined;
      this.#parser.feed(this.#decoder.decode(value, { stream: true }));
    }
    return this.#pending.shift();
  }

  /** Every remaining event. */
  async rest(): Promise<SseEvent[]> {
    const all: SseEvent[] = [];
    for (let e = await this.next(); e; e = await this.next()) all.push(e);
    return all;
  }
}

/** The gateway with OpenAI's base URL at an OpenAI mock, and its key set. */
export async function startOpenAiGateway(key: string): Promise<{ mock: WireMock; pg: ProviderGateway }> {
  const mock = await openAiMock();
  const pg = await startProviderGateway({ processEnv: { OPENAI_BASE_URL: `${mock.url}/v1/` } });
  await pg.setEnv('OPENAI_API_KEY', key);
  return { mock, pg };
}

/** Polls `jobs/get` until the job satisfies `done` (2 s at most); answers it. */
export async function waitForJob(
  pg: ProviderGateway,
  id: string,
  done: (job: Json) => boolean,
): Promise<Json> {
  let job: Json;
  try {
    await waitUntil(
      async () => {
        job = (await pg.get(`/v1/ai/jobs/get?id=${id}`)).json.job;
        return done(job);
      },
      `job ${id} is as the test wants`,
      2_000,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}: it is still ${JSON.stringify(job)}`);
  }
  return job;
}
