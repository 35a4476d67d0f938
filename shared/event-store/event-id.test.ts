import { afterEach, describe, expect, it, vi } from 'vitest';
import { newEventId } from './event-id.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const millisOf = (id: string) => Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

afterEach(() => {
  vi.useRealTimers();
});

describe('newEventId', () => {
  it('is a UUIDv7 (RFC 9562): version 7, variant 10, the Unix time in milliseconds in its first 48 bits', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-29T12:00:00.123Z'));
    const id = newEventId();
    expect(id).toMatch(UUID_V7);
    expect(millisOf(id)).toBe(Date.parse('2026-11-29T12:00:00.123Z'));
  });

  it('sorts as text in the order of its milliseconds, and never repeats', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const ids: string[] = [];
    for (const millis of [1, 255, 256, 65_535, 2 ** 40, 2 ** 47 + 5, 2 ** 48 - 1]) {
      vi.setSystemTime(millis);
      ids.push(newEventId(), newEventId());
    }
    expect(ids.map(millisOf)).toEqual([
      1,
      1,
      255,
      255,
      256,
      256,
      65_535,
      65_535,
      2 ** 40,
      2 ** 40,
      2 ** 47 + 5,
      2 ** 47 + 5,
      2 ** 48 - 1,
      2 ** 48 - 1,
    ]);
    for (let i = 2; i < ids.length; i += 2) expect(ids[i]! > ids[i - 1]!).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(UUID_V7);
  });
});
