import { describe, expect, it } from 'vitest';
import { ApiError } from '../../shared/errors.ts';
import { FairShare, type Release } from './fair-share.ts';

const never = new AbortController().signal;

/** Acquires for `tenant`, noting the order in which grants arrive. */
function acquirer(share: FairShare, granted: string[]) {
  return (tenant: string, signal = never) =>
    share.acquire(tenant, signal).then((release) => {
      granted.push(tenant);
      return release;
    });
}

const oneTick = () => new Promise((resolve) => setImmediate(resolve));

describe('FairShare', () => {
  it('a tenant holds at most maxPerTenant slots; others get the rest at once', async () => {
    const granted: string[] = [];
    const share = new FairShare({ capacity: 4, maxPerTenant: 2, queueTimeoutMs: 60_000 });
    const acquire = acquirer(share, granted);
    for (let i = 0; i < 5; i++) void acquire('a');
    await oneTick();
    expect(granted).toEqual(['a', 'a']);
    await acquire('b');
    expect(granted).toEqual(['a', 'a', 'b']);
    expect(share.held('a')).toBe(2);
  });

  it('a freed slot goes to the waiting tenant holding the fewest; ties in turn', async () => {
    const granted: string[] = [];
    const share = new FairShare({ capacity: 3, maxPerTenant: 3, queueTimeoutMs: 60_000 });
    const acquire = acquirer(share, granted);
    const held: Release[] = [await acquire('a'), await acquire('a'), await acquire('a')];
    const waiting = [acquire('a'), acquire('b'), acquire('c'), acquire('a'), acquire('b')];
    held[0]!();
    await oneTick();
    expect(granted.slice(3)).toEqual(['b']); // b and c hold none; b asked first
    held[1]!();
    await oneTick();
    expect(granted.slice(3)).toEqual(['b', 'c']);
    held[2]!();
    await oneTick();
    expect(granted.slice(3)).toEqual(['b', 'c', 'a']); // each holds one now; a waited longest
    for (const release of await Promise.all(waiting.slice(0, 3))) release();
    await Promise.all(waiting);
    expect(granted.slice(3)).toEqual(['b', 'c', 'a', 'a', 'b']);
  });

  it('waiting longer than queueTimeoutMs is a 503 overloaded with Retry-After, and frees its place', async () => {
    const share = new FairShare({ capacity: 1, maxPerTenant: 1, queueTimeoutMs: 20 });
    const release = await share.acquire('a', never);
    const refused = await share.acquire('b', never).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(503);
    expect((refused as ApiError).code).toBe('overloaded');
    expect((refused as ApiError).options.headers?.['Retry-After']).toMatch(/^\d+$/);
    release();
    expect(share.held('a')).toBe(0);
    const again = await share.acquire('b', never);
    expect(share.held('b')).toBe(1);
    again();
    again(); // a second release changes nothing
    expect(share.held('b')).toBe(0);
  });

  it('a waiter whose client goes away leaves the queue', async () => {
    const granted: string[] = [];
    const share = new FairShare({ capacity: 1, maxPerTenant: 1, queueTimeoutMs: 60_000 });
    const acquire = acquirer(share, granted);
    const release = await acquire('a');
    const controller = new AbortController();
    const gone = acquire('b', controller.signal).catch(() => 'aborted');
    const next = acquire('c');
    controller.abort();
    expect(await gone).toBe('aborted');
    release();
    await next;
    expect(granted).toEqual(['a', 'c']);
  });
});
