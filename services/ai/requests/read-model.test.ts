import { describe, expect, it } from 'vitest';
import { REQUEST_LOG_ROWS_PER_STUDIO, requestsProjection } from './read-model.ts';

const completed = (n: number) => ({
  type: 'GenerationCompleted' as const,
  data: {
    studioId: 'acme',
    tokenId: 'tok_1',
    requestId: `req_${n}`,
    model: 'dev/echo',
    modality: 'chat' as const,
    inputTokens: 1,
    outputTokens: 2,
    latencyMs: 3,
    costMicroUsd: 4,
    status: 200,
  },
  createdAt: new Date(Date.UTC(2026, 10, 29) + n).toISOString(),
  revision: n,
  position: n + 1,
});

describe('the request log read model', () => {
  it('keeps at least the newest 10,000 requests of a studio, and forgets the ids of those it drops', () => {
    const state = requestsProjection.initialState();
    const total = REQUEST_LOG_ROWS_PER_STUDIO * 1.25;
    for (let n = 0; n < total; n++)
      requestsProjection.apply(state, completed(n) as Parameters<typeof requestsProjection.apply>[1]);
    const rows = state.byStudio.get('acme')!;
    expect(rows.length).toBeGreaterThanOrEqual(REQUEST_LOG_ROWS_PER_STUDIO);
    expect(rows.length).toBeLessThan(REQUEST_LOG_ROWS_PER_STUDIO * 1.1);
    expect(rows.at(-1)!.id).toBe(`req_${total - 1}`);
    expect(rows[0]!.id).toBe(`req_${total - rows.length}`);
    expect(state.byId.size).toBe(rows.length);
    expect(state.byId.has('req_0')).toBe(false);
  });
});
