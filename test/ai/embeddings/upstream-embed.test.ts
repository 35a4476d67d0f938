import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { embedMany } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectApiError } from '../../support/gateway.ts';
import {
  faults,
  type Json,
  type MockHandler,
  openAiMock,
  openAiWire,
  sendJson,
  type WireMock,
} from '../../support/mock-ai-upstreams.ts';
import { type ProviderGateway, startProviderGateway } from '../providers/support.ts';

// Embeddings through the `openai` and `compat` providers, against a mock of OpenAI's API: what goes
// up, what comes back in either encoding, usage as the upstream counted it, and upstream faults.

const OPENAI_KEY = 'sk-proj-embeddings-test-key-0123456789';
let mock: WireMock;
let pg: ProviderGateway;

/** Input `i` embeds as [i + 0.5, -1.25, 0.25]: values float32 holds exactly. */
const vectorOf = (i: number) => [i + 0.5, -1.25, 0.25];
const base64Of = (values: number[]) => Buffer.from(Float32Array.from(values).buffer).toString('base64');

/** OpenAI's /v1/embeddings: `encoding` forces the encoding of the answer, else the one asked for. */
function embeddingsUpstream(
  options: { encoding?: 'float' | 'base64'; promptTokens?: number } = {},
): MockHandler {
  return (req, res) => {
    if (req.method !== 'POST' || req.path !== '/v1/embeddings')
      return sendJson(res, 404, openAiWire.error(`Invalid URL (${req.method} ${req.path})`));
    const body = JSON.parse(req.body.toString());
    const inputs: unknown[] =
      typeof body.input === 'string' || typeof body.input[0] === 'number' ? [body.input] : body.input;
    const encoding = options.encoding ?? body.encoding_format ?? 'float';
    return sendJson(res, 200, {
      object: 'list',
      // Out of order, as nothing in the wire forbids: the gateway places each by its index.
      data: inputs
        .map((_, index) => ({
          object: 'embedding',
          index,
          embedding: encoding === 'base64' ? base64Of(vectorOf(index)) : vectorOf(index),
        }))
        .reverse(),
      model: body.model,
      usage: { prompt_tokens: options.promptTokens ?? 1000, total_tokens: options.promptTokens ?? 1000 },
    });
  };
}

beforeAll(async () => {
  mock = await openAiMock();
  pg = await startProviderGateway({ processEnv: { OPENAI_BASE_URL: `${mock.url}/v1` } });
  await pg.setEnv('OPENAI_API_KEY', OPENAI_KEY);
  await pg.setEnv('OPENAI_COMPATIBLE_BASE_URL', `${mock.url}/v1`);
  await pg.setEnv('OPENAI_COMPATIBLE_EMBEDDING_MODELS', 'nomic-embed-text');
});
beforeEach(() => {
  mock.reset();
  mock.reply(embeddingsUpstream());
});
afterAll(async () => {
  await pg?.close();
  await mock?.close();
});

describe('openai embeddings', () => {
  it('the catalog lists the embedding models with their dimensions', async () => {
    const items = (await pg.get('/v1/ai/models')).json.items;
    expect(items.find((m: Json) => m.id === 'openai/text-embedding-3-small')).toMatchObject({
      modalities: ['embed'],
      meta: { dimensions: 1536 },
    });
    expect(items.find((m: Json) => m.id === 'openai/text-embedding-3-large')).toMatchObject({
      meta: { dimensions: 3072 },
    });
  });

  it('the official client: base64 upstream, decoded for the client; dimensions and user go up', async () => {
    const answer = await pg.client().embeddings.create({
      model: 'openai/text-embedding-3-small',
      input: ['first', 'second'],
      dimensions: 3,
      user: 'end-user-1',
    });
    expect(answer.model).toBe('openai/text-embedding-3-small');
    expect(answer.data.map((d) => d.embedding)).toEqual([vectorOf(0), vectorOf(1)]);
    expect(answer.usage).toEqual({ prompt_tokens: 1000, total_tokens: 1000 });
    expect(mock.requests).toHaveLength(1);
    expect(mock.requests[0]!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(mock.body()).toEqual({
      model: 'text-embedding-3-small',
      input: ['first', 'second'],
      encoding_format: 'base64',
      dimensions: 3,
      user: 'end-user-1',
    });
  });

  it('a raw request for floats gets JSON numbers, whatever encoding the upstream answered', async () => {
    for (const encoding of ['base64', 'float'] as const) {
      mock.reply(embeddingsUpstream({ encoding }));
      const res = await pg.post('/v1/ai/embeddings', {
        model: 'openai/text-embedding-3-large',
        input: 'one',
      });
      expect(res.status).toBe(200);
      expect(res.json.data).toEqual([{ object: 'embedding', index: 0, embedding: vectorOf(0) }]);
    }
  });

  it('token ids pass through as they are', async () => {
    await pg.post('/v1/ai/embeddings', { model: 'openai/text-embedding-3-small', input: [[1, 2, 3], [4]] });
    expect(mock.body().input).toEqual([[1, 2, 3], [4]]);
  });

  it('usage and cost as the upstream counted the tokens', async () => {
    mock.reply(embeddingsUpstream({ promptTokens: 5000 }));
    const before = await spent();
    const res = await pg.post('/v1/ai/embeddings', { model: 'openai/text-embedding-3-large', input: 'x' });
    expect(res.json.usage).toEqual({ prompt_tokens: 5000, total_tokens: 5000 });
    // 5,000 tokens at $0.13 a million.
    expect((await spent()) - before).toBeCloseTo(0.00065, 9);
  });

  it('an upstream refusal is a 502 carrying its message; a wrong answer is a 502 too', async () => {
    mock.reply(faults.status(400, openAiWire.error('This model does not support specifying dimensions.')));
    const refused = expectApiError(
      await pg.post('/v1/ai/embeddings', {
        model: 'openai/text-embedding-ada-002',
        input: 'x',
        dimensions: 8,
      }),
      502,
      'upstream_error',
    );
    expect(refused.message).toMatch(/does not support specifying dimensions/);

    mock.reply((_req, res) =>
      sendJson(res, 200, { object: 'list', data: [{ index: 0, embedding: vectorOf(0) }], usage: {} }),
    );
    const short = expectApiError(
      await pg.post('/v1/ai/embeddings', { model: 'openai/text-embedding-3-small', input: ['a', 'b'] }),
      502,
      'upstream_error',
    );
    expect(short.message).toMatch(/1 embeddings for 2 inputs/);

    mock.reply((_req, res) =>
      sendJson(res, 200, { object: 'list', data: [{ index: 0, embedding: 'not base64 float32' }] }),
    );
    expectApiError(
      await pg.post('/v1/ai/embeddings', { model: 'openai/text-embedding-3-small', input: 'a' }),
      502,
      'upstream_error',
    );
  });
});

describe('openai-compatible embeddings', () => {
  it('models named in OPENAI_COMPATIBLE_EMBEDDING_MODELS embed, with no chat models configured', async () => {
    const model = (await pg.get('/v1/ai/models')).json.items.find(
      (m: Json) => m.id === 'compat/nomic-embed-text',
    );
    expect(model).toMatchObject({ modalities: ['embed'] });
  });

  it('the Vercel AI SDK: floats asked upstream, floats back, in order', async () => {
    const studio = createOpenAICompatible({
      baseURL: `${pg.gw.url}/v1/ai`,
      apiKey: pg.token,
      name: 'studio',
    });
    const { embeddings, usage } = await embedMany({
      model: studio.embeddingModel('compat/nomic-embed-text'),
      values: ['a', 'b', 'c'],
      maxRetries: 0,
    });
    expect(embeddings).toEqual([vectorOf(0), vectorOf(1), vectorOf(2)]);
    expect(usage.tokens).toBe(1000);
    expect(mock.body()).toEqual({
      model: 'nomic-embed-text',
      input: ['a', 'b', 'c'],
      encoding_format: 'float',
    });
  });

  it('the official client asks base64; a server that answers floats anyway still serves it', async () => {
    mock.reply(embeddingsUpstream({ encoding: 'float' }));
    const answer = await pg.client().embeddings.create({ model: 'compat/nomic-embed-text', input: 'a' });
    expect(mock.body().encoding_format).toBe('base64');
    expect(answer.data[0]!.embedding).toEqual(vectorOf(0));
  });

  it('a name in both lists chats and embeds', async () => {
    await pg.setEnv('OPENAI_COMPATIBLE_MODELS', 'both');
    await pg.setEnv('OPENAI_COMPATIBLE_EMBEDDING_MODELS', 'both,nomic-embed-text');
    try {
      const model = (await pg.get('/v1/ai/models')).json.items.find((m: Json) => m.id === 'compat/both');
      expect(model.modalities).toEqual(['text', 'stream', 'chat', 'embed']);
      expect((await pg.post('/v1/ai/embeddings', { model: 'compat/both', input: 'x' })).status).toBe(200);
    } finally {
      await pg.removeEnv('OPENAI_COMPATIBLE_MODELS');
      await pg.setEnv('OPENAI_COMPATIBLE_EMBEDDING_MODELS', 'nomic-embed-text');
    }
  });
});

/** Dollars recorded for studio `p`. */
async function spent(): Promise<number> {
  return (await pg.get('/v1/ai/usage?studio_id=p', pg.admin)).json.totals.cost_usd;
}
