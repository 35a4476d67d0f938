/**
 * The "thin proxy" reference of the gateway benchmark: express 5 and one undici keep-alive Pool,
 * forwarding the request body as it comes and piping the answer back. About the least any Node
 * gateway can add. Plain JavaScript run with plain `node`, as such a proxy's users run it (no
 * TypeScript loader at run time). Run in its own process:
 *   UPSTREAM=http://127.0.0.1:PORT node bench/gateway/thin-proxy.mjs
 *   → prints `READY {"url":"http://127.0.0.1:…"}`
 */
import { pipeline } from 'node:stream/promises';
import express from 'express';
import { Pool } from 'undici';

const upstream = process.env.UPSTREAM;
if (!upstream) throw new Error('UPSTREAM (the mock upstream origin) is required');

const pool = new Pool(upstream, { connections: 128, keepAliveTimeout: 30_000, pipelining: 1 });
const app = express();
app.disable('x-powered-by');
app.set('etag', false);

app.post('/v1/chat/completions', async (req, res, next) => {
  try {
    /** @type {Record<string, string>} */
    const headers = {
      'content-type': req.headers['content-type'] ?? 'application/json',
    };
    if (req.headers['content-length']) headers['content-length'] = req.headers['content-length'];
    if (req.headers.authorization) headers.authorization = req.headers.authorization;
    const answer = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers, body: req });
    res.status(answer.statusCode);
    const type = answer.headers['content-type'];
    if (typeof type === 'string') res.setHeader('content-type', type);
    await pipeline(answer.body, res);
  } catch (error) {
    next(error);
  }
});

// A client that leaves mid-answer (autocannon stopping) is not worth a stack trace per request.
app.use((/** @type {Error} */ error, _req, /** @type {import('express').Response} */ res, _next) => {
  if (res.headersSent) res.destroy();
  else res.status(502).json({ error: { message: error.message } });
});

const server = app.listen(0, '127.0.0.1', () => {
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(`READY ${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
server.keepAliveTimeout = 65_000;

process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool.close().then(() => process.exit(0));
});
