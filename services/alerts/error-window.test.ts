import { describe, expect, it } from 'vitest';
import type { ErrorRateRule } from './error-rate.ts';
import { countRequest, type ErrorWindows } from './error-window.ts';

const rule: ErrorRateRule = { studioId: 'acme', threshold: 0.5, windowMinutes: 5, minRequests: 4 };

describe('error-rate windows', () => {
  it('alerts once a window holds min_requests and failures / requests is above the threshold, once', () => {
    const windows: ErrorWindows = new Map();
    const at = '2026-11-29T10:01:00.000Z';
    expect(countRequest(windows, rule, at, 'failure')).toBeUndefined();
    expect(countRequest(windows, rule, at, 'failure')).toBeUndefined();
    expect(countRequest(windows, rule, at, 'ok')).toBeUndefined();
    // 3 of 4: 0.75 > 0.5 with 4 requests
    expect(countRequest(windows, rule, '2026-11-29T10:04:59.999Z', 'failure')).toEqual({
      studioId: 'acme',
      rate: 0.75,
      requests: 4,
      failures: 3,
      windowStart: '2026-11-29T10:00:00.000Z',
      windowEnd: '2026-11-29T10:05:00.000Z',
    });
    expect(countRequest(windows, rule, at, 'failure')).toBeUndefined();
  });

  it('a rate equal to the threshold is not above it; a new window counts again', () => {
    const windows: ErrorWindows = new Map();
    for (const counted of ['failure', 'ok', 'failure', 'ok'] as const)
      expect(countRequest(windows, rule, '2026-11-29T10:01:00Z', counted)).toBeUndefined();
    for (const counted of ['failure', 'failure', 'failure'] as const)
      expect(countRequest(windows, rule, '2026-11-29T10:06:00Z', counted)).toBeUndefined();
    expect(countRequest(windows, rule, '2026-11-29T10:07:00Z', 'ok')?.windowStart).toBe(
      '2026-11-29T10:05:00.000Z',
    );
    // a request of a window already past is not counted
    expect(countRequest(windows, rule, '2026-11-29T10:01:00Z', 'failure')).toBeUndefined();
    expect(windows.get('acme')?.requests).toBe(4);
  });
});
