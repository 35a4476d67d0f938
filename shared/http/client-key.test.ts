import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddressOf, clientKeyOf, parseTrustedProxies } from './client-key.ts';

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

describe('clientAddressOf', () => {
  const request = (peer: string, forwarded?: string) =>
    ({
      socket: { remoteAddress: peer },
      headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
    }) as unknown as IncomingMessage;
  const parsed = parseTrustedProxies('10.0.0.0/8, 192.0.2.7, fd00::/8');
  if (!('proxies' in parsed)) throw new Error('the list parses');
  const trusted = parsed.proxies;

  it('without trusted proxies: the socket peer, whatever X-Forwarded-For says', () => {
    expect(clientAddressOf(request('::ffff:203.0.113.9', '198.51.100.1'), undefined)).toBe('203.0.113.9');
  });

  it('from a trusted proxy: the rightmost address that is not a trusted proxy', () => {
    expect(clientAddressOf(request('10.1.2.3', '198.51.100.1'), trusted)).toBe('198.51.100.1');
    // The client wrote the leftmost one itself: never believed past an untrusted hop.
    expect(clientAddressOf(request('10.1.2.3', '6.6.6.6, 198.51.100.1, 192.0.2.7'), trusted)).toBe(
      '198.51.100.1',
    );
    expect(clientAddressOf(request('fd00::5', '2001:db8::1'), trusted)).toBe('2001:db8::1');
    // Every hop a trusted proxy: the first.
    expect(clientAddressOf(request('10.1.2.3', '10.9.9.9'), trusted)).toBe('10.9.9.9');
    // No header, or a hop that is not an address: the peer.
    expect(clientAddressOf(request('10.1.2.3'), trusted)).toBe('10.1.2.3');
    expect(clientAddressOf(request('10.1.2.3', 'unknown, 198.51.100.1'), trusted)).toBe('198.51.100.1');
    expect(clientAddressOf(request('10.1.2.3', '198.51.100.1, garbage'), trusted)).toBe('10.1.2.3');
  });

  it('from a peer that is not trusted: the peer, whatever it forwards', () => {
    expect(clientAddressOf(request('203.0.113.9', '198.51.100.1'), trusted)).toBe('203.0.113.9');
  });

  it('refuses a list with something that is not an address or CIDR, naming it', () => {
    expect(parseTrustedProxies('10.0.0.0/8, ten.0.0.0/8')).toEqual({ bad: 'ten.0.0.0/8' });
    expect(parseTrustedProxies('10.0.0.0/33')).toEqual({ bad: '10.0.0.0/33' });
  });
});
