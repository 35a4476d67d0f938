import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailingReads } from '../../shared/event-store/testing.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { expectApiError } from '../support/gateway.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

/** A gateway and runtime on one log whose reads fail while `reads.failing` is on. */
function stackWithFailingReads() {
  const reads = new FailingReads();
  let started: TestStack | undefined;
  beforeAll(async () => {
    started = await startTestStack({ gateway: { storeHooks: reads.hooks } });
  });
  afterAll(async () => {
    reads.failing = false;
    await started?.close();
  });
  return { reads, stack: () => started! };
}

describe('runtime /health and /ready', () => {
  const { reads, stack } = stackWithFailingReads();

  it('says degraded (and not ready) while its read models cannot read the log, and ok once they follow it again', async () => {
    const ready = await stack().call('GET', '/ready');
    expect(ready.status).toBe(200);
    expect(ready.json).toMatchObject({ status: 'ready', event_store: { reachable: true } });

    const healthy = await stack().call('GET', '/health');
    expect(healthy.status).toBe(200);
    expect(healthy.json).toMatchObject({
      status: 'ok',
      read_models: { state: 'live', stalled_since: null },
      stream_tails: { tails: 0, stalled: 0 },
    });

    reads.failing = true;
    // Any append wakes the runtime's runner (it shares this log); its read fails.
    await stack().gw.api('POST', '/v1/studios/create', {
      token: stack().gw.adminKey,
      body: { name: 'Wake' },
    });
    await waitUntil(() => reads.failures >= 2, 'failed reads');
    const degraded = await stack().call('GET', '/health');
    expect(degraded.status).toBe(200);
    expect(degraded.json).toMatchObject({
      status: 'degraded',
      read_models: { state: 'stalled', last_error: 'Error (ECONNRESET)' },
    });
    expect(Date.parse(degraded.json.read_models.stalled_since)).toBeLessThanOrEqual(Date.now());
    const notReady = await stack().call('GET', '/ready');
    expect(notReady.status).toBe(503);
    expect(notReady.headers.get('retry-after')).toBe('1');
    expect(notReady.json).toMatchObject({ status: 'not_ready', read_models: { state: 'stalled' } });
    expect(notReady.json.not_ready).toEqual(['read_models: stalled, not live']);

    reads.failing = false;
    await waitUntil(async () => (await stack().call('GET', '/health')).json.status === 'ok', 'ok again');
    await waitUntil(async () => (await stack().call('GET', '/ready')).status === 200, 'ready again');
    expect((await stack().call('GET', '/health')).json.read_models).toEqual({
      state: 'live',
      stalled_since: null,
      failed_reads: 0,
      last_error: null,
    });
  });
});

describe('runtime commands while its read models cannot read the log', () => {
  const { reads, stack } = stackWithFailingReads();

  it('a session created while they cannot show it is a 503, not a 404 for the session just made', async () => {
    reads.failing = true;
    const res = await stack().call('POST', '/api/sdk/sessions', { title: 'during the outage' });
    expect(expectApiError(res, 503, 'unavailable').message).toMatch(/was stored/);

    reads.failing = false;
    await waitUntil(async () => (await stack().call('GET', '/health')).json.status === 'ok', 'ok again');
    const sessions = (await stack().call('GET', '/api/sdk/sessions')).json;
    expect(JSON.stringify(sessions)).toContain('during the outage');
    expect((await stack().call('POST', '/api/sdk/sessions', { title: 'after' })).status).toBe(201);
  });
});
