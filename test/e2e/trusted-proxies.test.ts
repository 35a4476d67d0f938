/**
 * Behind a proxy every connection comes from the proxy: per-address limits count the client it
 * names in `X-Forwarded-For` when, and only when, it is a trusted proxy (`STUDIO_TRUSTED_PROXIES`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

/** Opens a follow as the admin from `forwardedFor`; answers its status and how to close it. */
async function follow(from: string) {
  const controller = new AbortController();
  const res = await fetch(`${gw!.url}/v1/audit/events/follow`, {
    headers: { authorization: `Bearer ${gw!.adminKey}`, 'x-forwarded-for': from },
    signal: controller.signal,
  });
  return { status: res.status, close: () => controller.abort() };
}

describe('per-address limits behind a proxy', () => {
  it('count each forwarded client apart when the proxy is trusted', async () => {
    gw = await startTestGateway({
      store: 'memory',
      logLevel: 'silent',
      settings: { STUDIO_TRUSTED_PROXIES: '127.0.0.1, ::1', STUDIO_MAX_STREAMS_PER_CLIENT: '1' },
    });
    const a = await follow('198.51.100.1');
    const b = await follow('198.51.100.2');
    const again = await follow('198.51.100.1');
    expect([a.status, b.status, again.status]).toEqual([200, 200, 429]);
    for (const f of [a, b, again]) f.close();
  });

  it('ignore X-Forwarded-For from a peer that is not trusted: one address, one limit', async () => {
    gw = await startTestGateway({
      store: 'memory',
      logLevel: 'silent',
      settings: { STUDIO_MAX_STREAMS_PER_CLIENT: '1' },
    });
    const a = await follow('198.51.100.1');
    const b = await follow('198.51.100.2');
    expect([a.status, b.status]).toEqual([200, 429]);
    for (const f of [a, b]) f.close();
  });

  it('a bad STUDIO_TRUSTED_PROXIES is refused at start, naming the item', async () => {
    await expect(
      startTestGateway({
        store: 'memory',
        logLevel: 'silent',
        settings: { STUDIO_TRUSTED_PROXIES: '10.0.0.0/8, proxy' },
      }),
    ).rejects.toThrow(/"proxy" is not an address or CIDR/);
  });
});
