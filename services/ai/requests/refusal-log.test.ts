import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../../shared/event-store/memory.ts';
import type { RefusalData } from './events.ts';
import { RefusalLog } from './refusal-log.ts';

const refusal = (tokenId: string, errorCode: string, n: number): RefusalData => ({
  studioId: 'acme',
  tokenId,
  requestId: `req_${tokenId}_${errorCode}_${n}`,
  format: 'chat/completions',
  model: 'dev/echo',
  modality: 'chat',
  status: 429,
  errorCode,
  errorMessage: 'too many',
  latencyMs: 1,
});

describe('RefusalLog', () => {
  it('records the first refusals of a token and code each minute one by one, and counts the rest in one event', async () => {
    const store = new MemoryEventStore();
    let now = Date.parse('2026-11-29T10:00:10Z');
    const log = new RefusalLog(store, pino({ level: 'silent' }), { perMinute: 3, now: () => now });
    for (let n = 0; n < 10; n++) log.refused(refusal('t1', 'rate_limited', n));
    for (let n = 0; n < 2; n++) log.refused(refusal('t1', 'budget_exceeded', n));
    for (let n = 0; n < 4; n++) log.refused(refusal('t2', 'rate_limited', n));
    now = Date.parse('2026-11-29T10:01:00Z');
    log.refused(refusal('t1', 'rate_limited', 99));
    await log.close();

    const events = await store.readStream('refusals-acme');
    const refused = events.filter((e) => e.type === 'GenerationRefused');
    const counted = events.filter((e) => e.type === 'GenerationRefusalsCounted').map((e) => e.data);
    expect(refused).toHaveLength(3 + 2 + 3 + 1);
    expect(counted).toEqual([
      expect.objectContaining({
        tokenId: 't1',
        errorCode: 'rate_limited',
        count: 7,
        minute: '2026-11-29T10:00',
      }),
      expect.objectContaining({
        tokenId: 't2',
        errorCode: 'rate_limited',
        count: 1,
        minute: '2026-11-29T10:00',
      }),
    ]);
  });
});
