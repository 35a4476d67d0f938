import type { IncomingMessage } from 'node:http';
import { BlockList, isIP, isIPv6 } from 'node:net';

/** A client by its address; IPv6 by its /64, since one host is usually handed a whole /64. */
export function clientKeyOf(address: string | undefined): string {
  if (!address) return 'unknown';
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (v4) return v4[1]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`;
}

/** `10.0.0.0/8, fd00::/8, 192.0.2.7` → the proxies they name, or the first item that is not a CIDR or address. */
export function parseTrustedProxies(list: string): { proxies: BlockList } | { bad: string } {
  const proxies = new BlockList();
  for (const item of list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [address = '', bits] = item.split('/');
    const family = isIP(address);
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (family === 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32))
      return { bad: item };
    proxies.addSubnet(address, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return { proxies };
}

const unmapped = (address: string) => (address.startsWith('::ffff:') ? address.slice(7) : address);
const isTrusted = (proxies: BlockList, address: string) =>
  proxies.check(address, isIPv6(address) ? 'ipv6' : 'ipv4');

/**
 * Whom a request came from: its socket's peer, unless that is a trusted proxy; then the address
 * `X-Forwarded-For` names, read from the right past every trusted proxy (the left of it is whatever
 * the client wrote, never believed). Without trusted proxies the header is ignored.
 */
export function clientAddressOf(req: IncomingMessage, trusted: BlockList | undefined): string {
  const peer = unmapped(req.socket.remoteAddress ?? 'unknown');
  if (!trusted || isIP(peer) === 0 || !isTrusted(trusted, peer)) return peer;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((s) => unmapped(s.trim()));
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (isIP(hop) === 0) return peer; // a hop that is not an address: believe nothing past it
    if (!isTrusted(trusted, hop)) return hop;
  }
  return hops[0] && isIP(hops[0]) ? hops[0] : peer;
}
