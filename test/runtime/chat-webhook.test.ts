import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../shared/testing/wait.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

// The outbound webhook's URL may carry credentials (a password, a `?token=`): a failed delivery's
// `ReplyDelivered.error` goes into the log, so it never holds them. A redirect is not followed.

interface Received {
  path: string;
  authorization: string | undefined;
}

/** A server answering every request with `answer`, recording what reached it. */
async function recordingServer(answer: (res: ServerResponse, req: IncomingMessage) => void) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push({ path: req.url ?? '', authorization: req.headers.authorization });
      answer(res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { received, origin, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const PASSWORD = 'pw-9f2c1d7e44';
const TOKEN = 'tok-51ab66c0de';

describe('chat: outbound webhook deliveries', () => {
  const runtimeEnv: Record<string, string | undefined> = {};
  let stack: TestStack;
  let failing: Awaited<ReturnType<typeof recordingServer>>;
  let target: Awaited<ReturnType<typeof recordingServer>>;
  let redirecting: Awaited<ReturnType<typeof recordingServer>>;

  beforeAll(async () => {
    failing = await recordingServer((res) => {
      res.statusCode = 500;
      res.end('no');
    });
    target = await recordingServer((res) => res.end('ok'));
    redirecting = await recordingServer((res) => {
      res.writeHead(302, { location: `http://${target.origin}/stolen?sig=${TOKEN}` });
      res.end();
    });
    stack = await startTestStack({ runtimeEnv });
  });
  afterAll(async () => {
    await stack?.close();
    await Promise.all([failing?.close(), target?.close(), redirecting?.close()]);
  });

  /** Sends one inbound message on a fresh channel and waits for its `ReplyDelivered`. */
  async function deliveryOf(channel: string): Promise<Record<string, unknown>> {
    const inbound = await stack.call('POST', '/api/chat/inbound', { platform: 'slack', channel, text: 'hi' });
    expect(inbound.status, inbound.text).toBe(200);
    const stream = `chat-${inbound.json.conversationId}`;
    let delivered: Record<string, unknown> | undefined;
    await waitUntil(
      async () => {
        const events = await stack.gw.running.ctx.events.readStream(stream);
        delivered = events.find((e) => e.type === 'ReplyDelivered')?.data as
          | Record<string, unknown>
          | undefined;
        return delivered !== undefined;
      },
      `a ReplyDelivered in ${stream}`,
      10_000,
    );
    return delivered!;
  }

  const holdsCredentials = (data: unknown) => {
    const text = JSON.stringify(data);
    return [PASSWORD, TOKEN].filter((secret) => text.includes(secret));
  };

  it('a URL with a password: sent as Basic authorization; the failure names the status, not the password', async () => {
    runtimeEnv.CHAT_OUTBOUND_WEBHOOK_URL = `http://bot:${PASSWORD}@${failing.origin}/hook?token=${TOKEN}`;
    const data = await deliveryOf('with-password');
    expect(data).toMatchObject({ status: 'failed', httpStatus: 500, error: 'the webhook answered 500' });
    expect(holdsCredentials(data)).toEqual([]);
    expect(failing.received.at(-1)).toEqual({
      path: `/hook?token=${TOKEN}`,
      authorization: `Basic ${Buffer.from(`bot:${PASSWORD}`).toString('base64')}`,
    });
  });

  it('a URL fetch cannot parse: the error holds neither its password nor its token', async () => {
    runtimeEnv.CHAT_OUTBOUND_WEBHOOK_URL = `http://bot:${PASSWORD}@127.0.0.1:99999/hook?token=${TOKEN}`;
    const data = await deliveryOf('unparsable');
    expect(data).toMatchObject({ status: 'failed', httpStatus: null });
    expect(data.error).toMatch(/^could not reach the webhook: /);
    expect(holdsCredentials(data)).toEqual([]);
  });

  it('a webhook answering 302 is not followed: the target receives nothing, the delivery failed', async () => {
    runtimeEnv.CHAT_OUTBOUND_WEBHOOK_URL = `http://${redirecting.origin}/hook`;
    const data = await deliveryOf('redirected');
    expect(redirecting.received).toHaveLength(1);
    expect(target.received).toEqual([]);
    expect(data).toMatchObject({ status: 'failed', httpStatus: 302 });
    expect(data.error).toBe(
      `the webhook answered 302, a redirect (not followed) to http://${target.origin}/stolen?sig=***`,
    );
    expect(holdsCredentials(data)).toEqual([]);
  });

  it('a webhook answering 200 is a delivery', async () => {
    runtimeEnv.CHAT_OUTBOUND_WEBHOOK_URL = `http://${target.origin}/hook`;
    const data = await deliveryOf('delivered');
    expect(data).toMatchObject({ status: 'delivered', httpStatus: 200, error: null });
    expect(target.received.map((r) => r.path)).toEqual(['/hook']);
  });
});
