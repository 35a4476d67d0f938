import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.ts';
import { clientKeyOf, OpenStreamLimit } from './open-streams.ts';

describe('clientKeyOf', () => {
  it('keeps IPv4 addresses, mapped ones included, and groups IPv6 by /64', () => {
    expect(clientKeyOf('127.0.0.1')).toBe('127.0.0.1');
    expect(clientKeyOf('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(clientKeyOf('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKeyOf('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(clientKeyOf('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKeyOf('::1')).toBe('0:0:0:0::/64');
    expect(clientKeyOf(undefined)).toBe('unknown');
  });
});

describe('OpenStreamLimit', () => {
  it('refuses the stream past the bound with 429 and Retry-After, and counts releases once', () => {
    const limit = new OpenStreamLimit(2);
    const first = limit.acquire('a');
    limit.acquire('a');
    const refused = (() => {
      try {
        limit.acquire('a');
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(429);
    expect((refused as ApiError).options.headers?.['Retry-After']).toBe('1');
    expect(() => limit.acquire('b')).not.toThrow();
    first();
    first();
    expect(limit.openBy('a')).toBe(1);
    expect(() => limit.acquire('a')).not.toThrow();
  });
});
