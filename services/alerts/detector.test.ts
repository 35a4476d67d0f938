import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../shared/event-store/types.ts';
import { countedAs } from './detector.ts';

const event = (type: string, data: Record<string, unknown> = {}): StoredEvent =>
  ({
    id: 'e',
    streamId: 's-acme',
    revision: 0,
    position: 1,
    type,
    data,
    metadata: { actor: 'gateway' },
    createdAt: '',
  }) as StoredEvent;

describe('what counts against the error rate', () => {
  it('a completed generation is a request, a failed one a failure', () => {
    expect(countedAs(event('GenerationCompleted'))).toBe('ok');
    expect(countedAs(event('GenerationFailed'))).toBe('failure');
  });

  it("a refusal is a failure when it is the gateway's, an upstream's or a rate limit's (5xx, 429), else a request", () => {
    expect(countedAs(event('GenerationRefused', { status: 429 }))).toBe('failure');
    expect(countedAs(event('GenerationRefused', { status: 503 }))).toBe('failure');
    for (const status of [400, 402, 403, 404])
      expect(countedAs(event('GenerationRefused', { status }))).toBe('ok');
  });

  it('anything else is not a request', () => {
    for (const type of ['GenerationRefusalsCounted', 'BudgetReserved', 'BudgetExceeded'])
      expect(countedAs(event(type))).toBeUndefined();
  });
});
