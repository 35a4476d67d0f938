import { isIPv6 } from 'node:net';
import { ApiError } from '../errors.ts';

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

/** Bounds the long-lived streams (SSE) one client holds open at once. */
export class OpenStreamLimit {
  readonly #open = new Map<string, number>();

  constructor(readonly max: number) {}

  /** Counts one more stream of `client`, or throws 429 when it already holds `max`; call the answer when it closes. */
  acquire(client: string): () => void {
    const open = this.#open.get(client) ?? 0;
    if (open >= this.max) {
      throw new ApiError(
        'rate_limited',
        `this client already holds ${this.max} open streams; close one before opening another`,
        { headers: { 'Retry-After': '1' } },
      );
    }
    this.#open.set(client, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#open.get(client) ?? 1) - 1;
      if (left === 0) this.#open.delete(client);
      else this.#open.set(client, left);
    };
  }

  openBy(client: string): number {
    return this.#open.get(client) ?? 0;
  }
}
