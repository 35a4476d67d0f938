import { afterAll, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../shared/errors.ts';
import { UpstreamClient } from './upstream.ts';
import { isRefusedAddress, isRefusedHost } from './upstream-address.ts';

/** `rebound.test` resolves to a public address and a metadata one, as a rebinding name would. */
vi.mock('node:dns', async (importOriginal) => {
  const dns = await importOriginal<typeof import('node:dns')>();
  const lookup = ((hostname: string, options: object, callback: (...args: unknown[]) => void) => {
    if (hostname !== 'rebound.test') return dns.lookup(hostname, options, callback as never);
    const addresses = [
      { address: '93.184.216.34', family: 4 },
      { address: '169.254.169.254', family: 4 },
    ];
    callback(null, addresses);
  }) as typeof dns.lookup;
  return { ...dns, default: { ...dns, lookup }, lookup };
});

const upstream = new UpstreamClient({ timeoutMs: 2_000, idleTimeoutMs: 2_000, retries: 0, retryBaseMs: 1 });
afterAll(() => upstream.close());

const send = (url: string, client = upstream, signal = new AbortController().signal) =>
  client.send({
    url,
    headers: {},
    body: '{}',
    signal,
    secrets: [],
    tenant: 'p',
    baseUrlVariable: 'OPENAI_BASE_URL',
  });

describe('link-local and cloud metadata addresses', () => {
  it.each([
    '169.254.169.254',
    '169.254.0.1',
    '100.100.100.200',
    'fe80::1',
    'fd00:ec2::254',
    '::ffff:169.254.169.254',
  ])('%s is refused', (address) => {
    expect(isRefusedAddress(address)).toBe(true);
  });

  it.each(['127.0.0.1', '::1', '10.0.0.5', '192.168.1.20', '172.17.0.1', '93.184.216.34', 'fd00::1'])(
    '%s is allowed (loopback and private networks are where local servers live)',
    (address) => {
      expect(isRefusedAddress(address)).toBe(false);
    },
  );

  it('hosts: metadata names (any case, trailing dot) and bracketed literals', () => {
    expect(isRefusedHost('metadata.google.internal')).toBe(true);
    expect(isRefusedHost('METADATA.google.internal.')).toBe(true);
    expect(isRefusedHost('[fe80::1]')).toBe(true);
    expect(isRefusedHost('[::1]')).toBe(false);
    expect(isRefusedHost('localhost')).toBe(false);
  });

  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/latest/meta-data/',
    'http://metadata.google.internal/computeMetadata/v1/',
  ])(
    'a base URL at %s is a 502 upstream_not_allowed naming the variable, before any connection',
    async (url) => {
      const refused = await send(url).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).code).toBe('upstream_not_allowed');
      expect((refused as ApiError).status).toBe(502);
      expect((refused as ApiError).message).toMatch(
        /^OPENAI_BASE_URL points at .+STUDIO_ALLOW_PRIVATE_UPSTREAMS=true/,
      );
    },
  );

  it('a name that resolves to a metadata address among others is refused when connecting', async () => {
    const refused = await send('http://rebound.test:8080/v1/chat/completions').catch(
      (error: unknown) => error,
    );
    expect((refused as ApiError).code).toBe('upstream_not_allowed');
    expect((refused as ApiError).message).toContain('rebound.test');
  });

  it('STUDIO_ALLOW_PRIVATE_UPSTREAMS lets them through', async () => {
    const allowing = new UpstreamClient({ ...upstream.options, allowPrivateUpstreams: true });
    const outcome = await send('http://169.254.169.254:9/', allowing, AbortSignal.timeout(300)).catch(
      (error: unknown) => error,
    );
    await allowing.close();
    expect((outcome as { code?: string }).code).not.toBe('upstream_not_allowed');
  });
});
