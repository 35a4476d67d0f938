import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { embed, embedMany } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOk } from '../../support/admin.ts';
import { expectApiError, startTestGateway, type TestGateway } from '../../support/gateway.ts';

// `POST /v1/ai/embeddings` with the offline `dev/embed`, through the clients people use (OpenAI's
// official one, the Vercel AI SDK) and raw requests; then the governance every generation meets.

let gw: TestGateway;
let token: string;
let studios = 0;
/** A new studio and a token of it (`models` limits what it may call). */
async function studioToken(models?: string[]): Promise<{ studio: string; token: string }> {
  const studio = `e${++studios}`;
  await adminOk(gw, 'POST', '/v1/studios/create', { name: studio, studio_id: studio });
  const issued = (
    await adminOk(gw, 'POST', '/v1/studios/tokens/apply', {
      studio_id: studio,
      ...(models ? { models } : {}),
    })
  ).json;
  return { studio, token: issued.user_token };
}
const post = (body: unknown, as = token) => gw.api('POST', '/v1/ai/embeddings', { token: as, body });
const client = () => new OpenAI({ baseURL: `${gw.url}/v1/ai`, apiKey: token, maxRetries: 0 });
const norm = (v: ArrayLike<number>) => Math.hypot(...Array.from(v));
const dot = (a: ArrayLike<number>, b: ArrayLike<number>) =>
  Array.from(a).reduce((sum, x, i) => sum + x * b[i]!, 0);

beforeAll(async () => {
  gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
  ({ token } = await studioToken());
});
afterAll(() => gw?.close());

describe('dev/embed through the official openai client', () => {
  it('a string: one unit vector of 256 dimensions, the same for the same text, another for another', async () => {
    const first = await client().embeddings.create({ model: 'dev/embed', input: 'hello world' });
    expect(first).toMatchObject({
      object: 'list',
      model: 'dev/embed',
      usage: { prompt_tokens: 2, total_tokens: 2 },
    });
    expect(first.data).toHaveLength(1);
    const vector = first.data[0]!.embedding;
    expect(vector).toHaveLength(256);
    expect(norm(vector)).toBeCloseTo(1, 5);

    const again = await client().embeddings.create({ model: 'dev/embed', input: 'hello world' });
    expect(again.data[0]!.embedding).toEqual(vector);
    const other = await client().embeddings.create({ model: 'dev/embed', input: 'hello world!' });
    expect(Math.abs(dot(other.data[0]!.embedding, vector))).toBeLessThan(0.5);
  });

  it('an array: one vector per input, in order, each the vector its text has alone', async () => {
    const texts = ['alpha', 'beta gamma', 'alpha'];
    const many = await client().embeddings.create({ model: 'dev/embed', input: texts });
    expect(many.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(many.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    const alone = await client().embeddings.create({ model: 'dev/embed', input: 'beta gamma' });
    expect(many.data[1]!.embedding).toEqual(alone.data[0]!.embedding);
    expect(many.data[0]!.embedding).toEqual(many.data[2]!.embedding);
    expect(many.data[0]!.embedding).not.toEqual(many.data[1]!.embedding);
  });

  it('encoding_format base64: little-endian float32 bytes, the same values as the floats', async () => {
    const b64 = await client().embeddings.create({
      model: 'dev/embed',
      input: 'encode me',
      encoding_format: 'base64',
    });
    const text = b64.data[0]!.embedding as unknown as string;
    expect(typeof text).toBe('string');
    const bytes = Buffer.from(text, 'base64');
    expect(bytes.length).toBe(256 * 4);
    const decoded = Array.from({ length: 256 }, (_, i) => bytes.readFloatLE(i * 4));
    const floats = await client().embeddings.create({
      model: 'dev/embed',
      input: 'encode me',
      encoding_format: 'float',
    });
    expect(floats.data[0]!.embedding).toEqual(decoded);
  });

  it('dimensions: as many values, the first ones of the longer vector, normalized again', async () => {
    const short = await client().embeddings.create({ model: 'dev/embed', input: 'shorter', dimensions: 8 });
    const long = await client().embeddings.create({ model: 'dev/embed', input: 'shorter', dimensions: 1024 });
    const s = short.data[0]!.embedding;
    const l = long.data[0]!.embedding;
    expect(s).toHaveLength(8);
    expect(l).toHaveLength(1024);
    expect(norm(s)).toBeCloseTo(1, 5);
    const head = l.slice(0, 8);
    for (const [i, value] of s.entries()) expect(value).toBeCloseTo(head[i]! / norm(head), 5);
  });
});

describe('dev/embed over raw requests', () => {
  it('encoding_format defaults to float: JSON numbers, as OpenAI answers', async () => {
    const res = await post({ model: 'dev/embed', input: 'plain request' });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      object: 'list',
      model: 'dev/embed',
      data: [{ object: 'embedding', index: 0 }],
      // dev/embed counts 2 words; the tokens charged are never below 12 non-blank characters' 3.
      usage: { prompt_tokens: 3, total_tokens: 3 },
    });
    const vector = res.json.data[0].embedding;
    expect(vector).toHaveLength(256);
    expect(vector.every((x: unknown) => typeof x === 'number')).toBe(true);
    const sdk = await client().embeddings.create({ model: 'dev/embed', input: 'plain request' });
    expect(sdk.data[0]!.embedding).toEqual(vector);
  });

  it('token ids, one list or several: a vector each, a token each counted', async () => {
    const one = await post({ model: 'dev/embed', input: [9906, 1917] });
    expect(one.status).toBe(200);
    expect(one.json.data).toHaveLength(1);
    expect(one.json.usage.prompt_tokens).toBe(2);
    const two = await post({ model: 'dev/embed', input: [[9906, 1917], [15339]] });
    expect(two.json.data).toHaveLength(2);
    expect(two.json.usage.prompt_tokens).toBe(3);
    expect(two.json.data[0].embedding).toEqual(one.json.data[0].embedding);
    // Token ids are not the text of their digits.
    const digits = await post({ model: 'dev/embed', input: '9906,1917' });
    expect(digits.json.data[0].embedding).not.toEqual(one.json.data[0].embedding);
  });

  it('refuses what OpenAI refuses, in the error envelope', async () => {
    for (const body of [
      { model: 'dev/embed', input: '' },
      { model: 'dev/embed', input: [] },
      { model: 'dev/embed', input: ['fine', ''] },
      { model: 'dev/embed', input: [1, -2] },
      { model: 'dev/embed', input: 'x', encoding_format: 'int8' },
      { model: 'dev/embed', input: 'x', dimensions: 0 },
      { model: 'dev/embed', input: Array.from({ length: 2049 }, () => 'x') },
      { model: 'dev/embed', input: 'x', temperature: 1 },
    ]) {
      expectApiError(await post(body), 400, 'validation_failed');
    }
    const tooLong = expectApiError(
      await post({ model: 'dev/embed', input: 'x', dimensions: 4096 }),
      400,
      'validation_failed',
    );
    expect(tooLong.param).toBe('dimensions');
    const chat = expectApiError(await post({ model: 'dev/echo', input: 'x' }), 404, 'model_not_found');
    expect(chat.message).toMatch(/does not support embed/);
  });
});

describe('dev/embed through the Vercel AI SDK (openai-compatible)', () => {
  const studio = () => createOpenAICompatible({ baseURL: `${gw.url}/v1/ai`, apiKey: token, name: 'studio' });

  it('embed and embedMany', async () => {
    const single = await embed({
      model: studio().embeddingModel('dev/embed'),
      value: 'sunny day',
      maxRetries: 0,
    });
    expect(single.embedding).toHaveLength(256);
    expect(single.usage.tokens).toBe(2);
    const many = await embedMany({
      model: studio().textEmbeddingModel('dev/embed'),
      values: ['sunny day', 'rainy night'],
      maxRetries: 0,
    });
    expect(many.embeddings).toHaveLength(2);
    expect(many.embeddings[0]).toEqual(single.embedding);
    expect(many.embeddings[1]).not.toEqual(single.embedding);
  });

  it('dimensions through provider options', async () => {
    const { embedding } = await embed({
      model: studio().embeddingModel('dev/embed'),
      value: 'sunny day',
      providerOptions: { studio: { dimensions: 32 } },
      maxRetries: 0,
    });
    expect(embedding).toHaveLength(32);
  });
});

describe('the size of an answer', () => {
  it('more numbers than one answer carries is a 400 before anything is embedded; the gateway stays quick', async () => {
    const before = (await gw.running.ctx.events.readStream('usage-e1')).length;
    const texts = Array.from({ length: 2048 }, (_, i) => `t${i}`);
    const started = performance.now();
    const [refused, health] = await Promise.all([
      post({ model: 'dev/embed', input: texts, dimensions: 3072 }),
      gw.api('GET', '/health'),
    ]);
    const error = expectApiError(refused, 400, 'validation_failed');
    expect(error.message).toContain(
      '2048 inputs × 3072 dimensions is 6291456 numbers; one answer carries at most 1048576',
    );
    expect(health.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(5_000);
    // Nothing was generated: no usage recorded.
    expect((await gw.running.ctx.events.readStream('usage-e1')).length).toBe(before);
  });

  it('the largest answer allowed arrives whole, a vector at a time, through the official client', async () => {
    // 341 × 3,072 = 1,047,552 numbers: just within.
    const texts = Array.from({ length: 341 }, (_, i) => `text ${i}`);
    const answer = await client().embeddings.create({ model: 'dev/embed', input: texts, dimensions: 3072 });
    expect(answer.data).toHaveLength(341);
    expect(answer.data.map((d) => d.index)).toEqual(texts.map((_, i) => i));
    expect(answer.data[340]!.embedding).toHaveLength(3072);
    expect(answer.usage.prompt_tokens).toBeGreaterThanOrEqual(341);
  });
});

describe('governance: as on chat completions', () => {
  it('usage is recorded as an embed generation, priced per input token', async () => {
    const { studio, token: own } = await studioToken();
    const res = await post({ model: 'dev/embed', input: ['word '.repeat(300), 'word '.repeat(200)] }, own);
    expect(res.status).toBe(200);
    const usage = await gw.api('GET', `/v1/ai/usage?studio_id=${studio}`, { token: gw.adminKey });
    expect(usage.json.items).toEqual([
      expect.objectContaining({
        model: 'dev/embed',
        modality: 'embed',
        requests: 1,
        input_tokens: 500,
        output_tokens: 0,
      }),
    ]);
    // 500 tokens at $0.02 a million: 10 micro-dollars.
    expect(usage.json.totals.cost_usd).toBe(0.00001);
  });

  it('a token limited to other models is refused; its catalog does not show dev/embed', async () => {
    const { token: limited } = await studioToken(['dev/echo']);
    expectApiError(await post({ model: 'dev/embed', input: 'x' }, limited), 403, 'model_not_allowed');
  });

  it('a hard budget that cannot pay for the input refuses before embedding (402)', async () => {
    const { studio, token: own } = await studioToken();
    await adminOk(gw, 'POST', '/v1/studios/budgets/set', {
      studio_id: studio,
      amount_usd: 0.000001,
      window: 'day',
      mode: 'hard',
    });
    // 100 bytes of input at $0.02 a million tokens: 2 micro-dollars, more than the budget's 1.
    expectApiError(await post({ model: 'dev/embed', input: 'y'.repeat(100) }, own), 402, 'budget_exceeded');
    expect((await post({ model: 'dev/embed', input: 'y'.repeat(10) }, own)).status).toBe(200);
  });

  it('rate limits count embeddings: rpm refuses the next one with 429', async () => {
    const { studio, token: own } = await studioToken();
    await adminOk(gw, 'POST', '/v1/studios/limits/set', { studio_id: studio, rpm: 1 });
    const first = await post({ model: 'dev/embed', input: 'x' }, own);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-requests')).toBe('1');
    expectApiError(await post({ model: 'dev/embed', input: 'x' }, own), 429, 'rate_limited');
  });
});
