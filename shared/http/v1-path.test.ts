import { describe, expect, it } from 'vitest';
import { isUnderV1, routeKeyOf, v1ActionOf } from './v1-path.ts';

describe('paths under /v1', () => {
  it('is /v1 or below it, case-insensitively, by whole segments', () => {
    expect(['/v1', '/v1/', '/V1/ai/x', '/v1/services'].map(isUnderV1)).toEqual([true, true, true, true]);
    expect(['/v10/ai/x', '/v', '/', '/api/v1/x', '/v1x'].map(isUnderV1)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('finds a GET route by its path in any case, with or without a trailing slash', () => {
    for (const path of ['/v1/services', '/v1/services/', '/V1/Services'])
      expect(routeKeyOf(path)).toBe(routeKeyOf('/v1/services'));
    expect(routeKeyOf('/v1/servic%65s')).not.toBe(routeKeyOf('/v1/services'));
  });

  it('names a service and an action of one or more segments, each percent-decoded', () => {
    expect(v1ActionOf('/v1/ai/chat/completions')).toEqual({ service: 'ai', action: 'chat/completions' });
    expect(v1ActionOf('/v1/ai/responses/resp%5F1')).toEqual({ service: 'ai', action: 'responses/resp_1' });
    // An encoded slash stays inside its segment's name.
    expect(v1ActionOf('/v1/a%2Fb/c')).toEqual({ service: 'a/b', action: 'c' });
  });

  it('is no action without a service or an action', () => {
    for (const path of ['/v1', '/v1/', '/v1/ai', '/v1/ai/', '/v1//chat'])
      expect(v1ActionOf(path)).toBeUndefined();
  });

  it('throws a URIError on a segment that is not percent-encoding (answered 400)', () => {
    expect(() => v1ActionOf('/v1/ai/%E0%A4%A')).toThrow(URIError);
  });
});
