import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
} from '@opentelemetry/semantic-conventions/incubating';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinAiProviders } from '../../services/ai/providers/index.ts';
import { UpstreamClient } from '../../services/ai/upstream.ts';
import { tracing } from '../../shared/observability/tracing.ts';
import { FAST_UPSTREAM } from '../ai/providers/support.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { openAiMock, type WireMock } from '../support/mock-ai-upstreams.ts';

/** A span as OTLP/JSON carries it, its attributes flattened. */
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
}

const SERVER = 2;
const CLIENT = 3;

/** An OTLP/HTTP receiver: what the exporter POSTs to /v1/traces, as JSON. */
class Receiver {
  readonly spans: ReceivedSpan[] = [];
  readonly paths: string[] = [];
  readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      this.paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      this.#take(JSON.parse(Buffer.concat(chunks).toString()));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  // biome-ignore lint/suspicious/noExplicitAny: OTLP/JSON as received, read field by field below.
  #take(body: any): void {
    for (const resource of body.resourceSpans ?? [])
      for (const scope of resource.scopeSpans ?? [])
        for (const span of scope.spans ?? []) {
          const attributes: ReceivedSpan['attributes'] = {};
          for (const { key, value } of span.attributes ?? [])
            attributes[key] =
              value.stringValue ?? value.boolValue ?? Number(value.intValue ?? value.doubleValue);
          this.spans.push({ ...span, attributes });
        }
  }
}

const receiver = new Receiver();
let mock: WireMock;
let gw: TestGateway;
let token: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  mock = await openAiMock();
  gw = await startTestGateway({
    store: 'memory',
    logLevel: 'info',
    processEnv: { OPENAI_COMPATIBLE_BASE_URL: `${mock.url}/v1`, OPENAI_COMPATIBLE_MODELS: 'a' },
    ai: { upstream: new UpstreamClient(FAST_UPSTREAM), providers: builtinAiProviders },
    settings: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  });
  await gw.api('POST', '/v1/studios/create', { token: gw.adminKey, body: { name: 'T', studio_id: 't' } });
  token = (await gw.api('POST', '/v1/studios/tokens/apply', { token: gw.adminKey, body: { studio_id: 't' } }))
    .json.user_token;
});
afterAll(async () => {
  await gw?.close();
  await mock?.close();
  await new Promise((resolve) => receiver.server.close(resolve));
});

/** The spans of one trace, once exported. */
async function traceOf(traceId: string): Promise<ReceivedSpan[]> {
  await tracing().flush();
  return receiver.spans.filter((span) => span.traceId === traceId);
}

describe('traces over OTLP/HTTP', () => {
  it('a chat completion: the server span, the generation under it with GenAI attributes, the upstream call and the usage append under that', async () => {
    const res = await gw.api('POST', '/v1/ai/chat/completions', {
      token,
      body: { model: 'compat/a', messages: [{ role: 'user', content: 'hello' }] },
    });
    expect(res.status).toBe(200);
    await tracing().flush();
    const server = receiver.spans.find(
      (span) => span.kind === SERVER && span.name === 'POST /v1/ai/chat/completions',
    );
    expect(server).toBeDefined();
    expect(server?.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/ai/chat/completions',
      'http.response.status_code': 200,
    });
    const spans = await traceOf(server!.traceId);
    const children = (parent: ReceivedSpan | undefined) =>
      spans.filter((span) => parent !== undefined && span.parentSpanId === parent.spanId);

    const generation = children(server).find((span) => span.name === 'chat compat/a');
    expect(generation?.attributes).toMatchObject({
      [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
      [ATTR_GEN_AI_REQUEST_MODEL]: 'compat/a',
      [ATTR_GEN_AI_RESPONSE_MODEL]: 'compat/a',
      'gen_ai.provider.name': 'compat',
      'studio.id': 't',
    });
    expect(generation?.attributes[ATTR_GEN_AI_USAGE_INPUT_TOKENS]).toBeGreaterThan(0);
    expect(generation?.attributes[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]).toBeGreaterThan(0);

    const underGeneration = children(generation);
    const upstream = underGeneration.find((span) => span.kind === CLIENT);
    expect(upstream).toMatchObject({ name: 'POST upstream' });
    expect(upstream?.attributes).toMatchObject({
      'server.address': '127.0.0.1',
      'url.path': '/v1/chat/completions',
      'http.response.status_code': 200,
    });
    expect(underGeneration.map((span) => span.name)).toContain('event_store.append');
    expect(receiver.paths.every((line) => line.startsWith('POST /v1/traces application/json'))).toBe(true);
  });

  it('every log line of the request carries its trace id', async () => {
    const res = await gw.api('GET', '/v1/studios/list', { token: gw.adminKey });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id');
    const line = gw.logs.map((l) => JSON.parse(l)).find((l) => l.req?.id === requestId);
    expect(line?.trace_id).toMatch(/^[0-9a-f]{32}$/);
    const spans = await traceOf(line.trace_id);
    expect(spans.map((span) => span.name)).toEqual(['GET /v1/studios/list']);
  });

  it('continues the trace of a caller that sends traceparent', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parent = '00f067aa0ba902b7';
    await gw.api('GET', '/v1/ai/models', { token, headers: { traceparent: `00-${traceId}-${parent}-01` } });
    const [server] = await traceOf(traceId);
    expect(server).toMatchObject({ name: 'GET /v1/ai/models', parentSpanId: parent, kind: SERVER });
  });
});
