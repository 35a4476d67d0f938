import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { adminOk } from '../support/admin.ts';
import type { TestGateway } from '../support/gateway.ts';

export interface Received {
  headers: IncomingHttpHeaders;
  /** The body as received. */
  body: string;
  /** What the receiver answered. */
  status: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** The status of each next request: the first of these, then `otherwise`. */
  answers: number[];
  otherwise: number;
  close(): Promise<void>;
}

/** A webhook receiver over real HTTP: records every request and answers as told. */
export async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    received: [],
    answers: [],
    otherwise: 200,
    close: async () => {},
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const status = receiver.answers.shift() ?? receiver.otherwise;
      receiver.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'not now');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

type Verify = (secret: string, headers: IncomingHttpHeaders, rawBody: string) => boolean;

/** The verification the README's "Alerts" section gives receivers, run as it is written there. */
export function readmeVerify(): Verify {
  const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Alerts'));
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  if (!code) throw new Error('the README has no verification example under "Alerts"');
  const require = createRequire(import.meta.url);
  return new Function('require', `${code}\nreturn verify;`)(require) as Verify;
}

/** dev/echo at $0.10 a token in and out: "one two three four" costs $0.90 (4 tokens in, 5 out). */
export async function priceEcho(gw: TestGateway): Promise<void> {
  await adminOk(gw, 'POST', '/v1/ai/prices/upsert', {
    model: 'dev/echo',
    input_per_mtok: 100_000,
    output_per_mtok: 100_000,
  });
}

/** One chat completion of dev/echo with `token`; answers its status. */
export async function chat(gw: TestGateway, token: string): Promise<number> {
  const res = await gw.api('POST', '/v1/ai/chat/completions', {
    token,
    body: { model: 'dev/echo', messages: [{ role: 'user', content: 'one two three four' }] },
  });
  return res.status;
}

/** Until a follower's checkpoint (`alerts-detector`, `alerts-delivery`) is at the log's head as it is now. */
export async function caughtUp(gw: TestGateway, checkpoint: string): Promise<() => Promise<boolean>> {
  const head = await gw.running.ctx.events.headPosition();
  return async () => ((await gw.running.ctx.checkpoints.load(checkpoint))?.position ?? 0) >= head;
}

/** Until the alert detector has read the log through its head now (its checkpoint is saved every second). */
export const detectorCaughtUp = (gw: TestGateway) => caughtUp(gw, 'alerts-detector');

/** Until the request log shows `count` requests of `studioId` (usage and refusals are appended after the answer). */
export async function requestsRecorded(gw: TestGateway, studioId: string, count: number): Promise<boolean> {
  const res = await adminOk(gw, 'GET', `/v1/ai/requests?studio_id=${studioId}&limit=500`);
  return (res.json.items as unknown[]).length >= count;
}
