import { beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../../shared/testing/wait.ts';
import { expectApiError } from '../../support/gateway.ts';
import { faults, type Json } from '../../support/mock-ai-upstreams.ts';
import {
  failWith,
  generations,
  resetAfterFirstChunk,
  resetBeforeFirstChunk,
  useRoutedGateway,
} from './support.ts';

/**
 * What a route does with failures: the order of its attempts, which failures move on, that the
 * request is recorded and charged once (for the target that answered), and that a stream is never
 * retried once its first byte went to the client.
 */
const r = useRoutedGateway();
let n = 0;
/** A fresh fallback route over these compat models (so no breaker state is shared between tests). */
async function route(models: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const id = `fb${++n}`;
  await r.upsert({
    id,
    strategy: 'fallback',
    targets: models.map((m) => ({ model: `compat/${m}` })),
    ...extra,
  });
  return id;
}

const chat = (model: string, extra: Record<string, unknown> = {}) =>
  r.pg.post('/v1/ai/chat/completions', {
    model,
    messages: [{ role: 'user', content: 'hi there' }],
    ...extra,
  });

/** Polls `done` (2 s at most). */
beforeAll(async () => {
  // Distinct prices, so a charge names the target it was for.
  for (const [model, input] of [
    ['a', 100],
    ['b', 200],
    ['c', 300],
  ] as const) {
    await r.admin('POST', '/v1/ai/prices/upsert', {
      model: `compat/${model}`,
      input_per_mtok: input,
      output_per_mtok: input,
    });
  }
});

describe('fallback', () => {
  it('tries the targets in order, once each, and records one generation for the target that answered', async () => {
    const id = await route(['a', 'b', 'c']);
    r.script('a', failWith(503));
    r.script('b', failWith(429));
    const res = await chat(id);
    expect(res.status, res.text).toBe(200);
    expect(res.json.model).toBe('compat/c');
    expect(res.json.choices[0].message.content).toBe('Echo: hi there');
    // The upstream client's own retries are off for a route's attempts: the route is the retry.
    expect(r.calls()).toEqual(['a', 'b', 'c']);

    const events = await r.usageOf(res.headers.get('x-request-id')!);
    expect(events.map((e) => e.type)).toEqual(['GenerationCompleted']);
    const data = events[0]!.data as Json;
    expect(data).toMatchObject({
      model: 'compat/c',
      route: id,
      status: 200,
      inputTokens: 2,
      outputTokens: 3,
    });
    // Charged once, at c's price: (2 + 3) tokens × 300 micro-dollars.
    expect(data.costMicroUsd).toBe(1_500);
    expect(data.attempts).toEqual([
      { model: 'compat/a', outcome: 'moved_on', latencyMs: expect.any(Number), reason: 'status 503' },
      { model: 'compat/b', outcome: 'moved_on', latencyMs: expect.any(Number), reason: 'status 429' },
      { model: 'compat/c', outcome: 'answered', latencyMs: expect.any(Number) },
    ]);
  });

  it('moves on after a connection error and a timeout', async () => {
    const id = await route(['a', 'b', 'c'], { timeout_ms: 300 });
    r.script('a', (_req, res) => res.destroy());
    r.script('b', faults.silence());
    const res = await r.pg.post('/v1/ai/text', { model: id, prompt: 'hi' });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ model: 'compat/c', parts: [{ type: 'text', text: 'Echo: hi' }] });
    const [event] = generations(await r.usageOf(res.headers.get('x-request-id')!));
    const attempts = (event!.data as Json).attempts;
    expect(attempts.map((a: Json) => [a.model, a.outcome, a.reason])).toEqual([
      ['compat/a', 'moved_on', 'connection_error'],
      ['compat/b', 'moved_on', 'timeout'],
      ['compat/c', 'answered', undefined],
    ]);
    expect(attempts[1].latencyMs).toBeGreaterThanOrEqual(290);
  });

  it('does not move on after a failure that is not in retry_on, and answers with it', async () => {
    const id = await route(['a', 'b'], { retry_on: [503] });
    r.script('a', failWith(429));
    const res = await chat(id);
    const error = expectApiError(res, 502, 'upstream_error');
    expect(error.details).toEqual({ upstream_status: 429 });
    expect(r.calls()).toEqual(['a']);
    const events = await r.usageOf(res.headers.get('x-request-id')!);
    expect(events.map((e) => e.type)).toEqual(['GenerationFailed']);
    expect(events[0]!.data).toMatchObject({
      model: 'compat/a',
      route: id,
      costMicroUsd: 0,
      attempts: [{ model: 'compat/a', outcome: 'failed', reason: 'status 429' }],
    });
  });

  it('never moves on after a request the upstream refused as bad (4xx)', async () => {
    const id = await route(['a', 'b']);
    r.script('a', failWith(400));
    expectApiError(await chat(id), 502, 'upstream_error');
    expect(r.calls()).toEqual(['a']);
  });

  it('answers the last failure when every target failed, recorded once with every attempt', async () => {
    const id = await route(['a', 'b']);
    r.script('a', failWith(500));
    r.script('b', failWith(502));
    const res = await chat(id);
    expect(expectApiError(res, 502, 'upstream_error').details).toEqual({ upstream_status: 502 });
    const events = await r.usageOf(res.headers.get('x-request-id')!);
    expect(events.map((e) => e.type)).toEqual(['GenerationFailed']);
    expect((events[0]!.data as Json).attempts.map((a: Json) => a.outcome)).toEqual(['moved_on', 'failed']);
  });

  it('stops when the client goes away, recorded as 499 with the attempt under way', async () => {
    const id = await route(['a', 'b']);
    r.script('a', faults.silence());
    const controller = new AbortController();
    const answer = fetch(`${r.pg.gw.url}/v1/ai/text`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${r.pg.token}`,
        'content-type': 'application/json',
        'x-request-id': `gone-${id}`,
      },
      body: JSON.stringify({ model: id, prompt: 'hi' }),
      signal: controller.signal,
    }).catch(() => undefined);
    await waitUntil(async () => r.calls().length === 1, 'the upstream was called');
    controller.abort();
    await answer;
    await waitUntil(async () => (await r.usageOf(`gone-${id}`)).length === 1, 'the usage event is recorded');
    const [event] = await r.usageOf(`gone-${id}`);
    expect(event!.data).toMatchObject({
      status: 499,
      errorCode: 'client_closed_request',
      attempts: [{ model: 'compat/a', outcome: 'failed', reason: 'client_closed_request' }],
    });
    expect(r.calls()).toEqual(['a']);
  });

  it('tries at most max_attempts targets', async () => {
    const id = await route(['a', 'b', 'c'], { max_attempts: 2 });
    r.script('a', failWith(503));
    r.script('b', failWith(503));
    expectApiError(await chat(id), 502, 'upstream_error');
    expect(r.calls()).toEqual(['a', 'b']);
  });
});

describe('streams through a route', () => {
  it('move on when a target fails before the stream starts, and relay the next one whole', async () => {
    const id = await route(['a', 'b', 'c']);
    r.script('a', failWith(500));
    r.script('b', resetBeforeFirstChunk);
    const { response, events } = await r.pg.stream('/v1/ai/chat/completions', {
      model: id,
      stream: true,
      messages: [{ role: 'user', content: 'hi there' }],
    });
    expect(response.status).toBe(200);
    const frames = await events.rest();
    expect(frames.at(-1)!.data).toBe('[DONE]');
    expect(frames.slice(0, -1).every((f) => f.data.model === 'compat/c')).toBe(true);
    expect(r.calls()).toEqual(['a', 'b', 'c']);
    const usage = await r.usageOf(response.headers.get('x-request-id')!);
    expect(usage.map((e) => e.type)).toEqual(['GenerationCompleted']);
    expect((usage[0]!.data as Json).attempts.map((a: Json) => [a.outcome, a.reason])).toEqual([
      ['moved_on', 'status 500'],
      ['moved_on', 'connection_error'],
      ['answered', undefined],
    ]);
  });

  it('are not retried once their first byte went out: the stream ends with an error event', async () => {
    const id = await route(['a', 'b']);
    r.script('a', resetAfterFirstChunk);
    const { response, events } = await r.pg.stream('/v1/ai/stream', { model: id, prompt: 'hi' });
    expect(response.status).toBe(200);
    const frames = await events.rest();
    expect(frames[0]).toEqual({ event: 'delta', data: { text: 'Hel' } });
    expect(frames.at(-1)).toMatchObject({ event: 'error', data: { error: { code: 'upstream_error' } } });
    expect(r.calls()).toEqual(['a']);
    const usage = await r.usageOf(response.headers.get('x-request-id')!);
    expect(usage.map((e) => e.type)).toEqual(['GenerationFailed']);
    expect(usage[0]!.data).toMatchObject({
      model: 'compat/a',
      route: id,
      attempts: [{ model: 'compat/a', outcome: 'answered' }],
    });
  });
});
