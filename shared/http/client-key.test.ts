import { describe, expect, it } from 'vitest';
import { clientKeyOf } from './client-key.ts';

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
