/**
 * The upstream of the gateway benchmark: a plain `node:http` server on loopback that answers
 * `POST …/chat/completions` at once, with a JSON chat completion or (`"stream": true`) an SSE
 * stream of 5 chunks then `data: [DONE]`, each chunk its own write and stamped with when it was
 * written. Run in its own process:
 *   node --import tsx bench/gateway/mock-upstream.ts    → prints `READY {"url":"http://127.0.0.1:…"}`
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const created = Math.floor(Date.now() / 1000);

const COMPLETION = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created,
  model: 'bench',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'Hello! How can I help you today?' },
      logprobs: null,
      finish_reason: 'stop',
    },
  ],
  usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 },
});

const chunk = (delta: Record<string, string>, finish: string | null = null) =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created,
    model: 'bench',
    system_fingerprint: SENT_AT,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  })}\n\n`;

/**
 * Each streamed chunk says when the mock wrote it (`system_fingerprint`, a string field OpenAI's
 * chunks carry): `t<ms since the epoch, to the µs>`. The open-loop client subtracts it from when the
 * chunk reached it, so a proxy holding chunks back shows against the direct path (one clock: the
 * same machine).
 */
const SENT_AT = 't@SENT_AT@';
export const SENT_AT_PATTERN = /"system_fingerprint":"t(\d+(?:\.\d+)?)"/g;
const nowEpochMs = () => performance.timeOrigin + performance.now();

/** Exported for the benchmark's checks: the 5 events of every streamed answer. */
export const STREAM_CHUNKS = [
  chunk({ role: 'assistant', content: 'Hello' }),
  chunk({ content: '!' }),
  chunk({ content: ' How can' }),
  chunk({ content: ' I help?' }),
  chunk({}, 'stop'),
];

function answer(req: IncomingMessage, res: ServerResponse, body: string): void {
  if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"not found"}}');
    return;
  }
  let stream = false;
  try {
    stream = (JSON.parse(body) as { stream?: unknown }).stream === true;
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"invalid JSON"}}');
    return;
  }
  if (!stream) {
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(COMPLETION),
    });
    res.end(COMPLETION);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of STREAM_CHUNKS) res.write(event.replace('@SENT_AT@', nowEpochMs().toFixed(3)));
  res.end('data: [DONE]\n\n');
}

export function startMockUpstream(port = 0): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (part: string) => (body += part));
    req.on('end', () => answer(req, res, body));
  });
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${bound}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const mock = await startMockUpstream();
  process.stdout.write(`READY ${JSON.stringify({ url: mock.url })}\n`);
  process.once('SIGTERM', () => void mock.close().then(() => process.exit(0)));
}
