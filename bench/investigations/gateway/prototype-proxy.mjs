/**
 * The thin proxy's forwarding (one undici keep-alive Pool, the body passed on, the answer piped
 * back) served four ways, to measure what express's change of each request's and response's
 * prototypes costs (bench/investigations/gateway/express-prototypes.ts). VARIANT:
 *   node        plain `node:http`
 *   node+proto  plain `node:http`, with the two `Object.setPrototypeOf` calls express makes per request
 *   express     express 5 (as bench/gateway/thin-proxy.mjs)
 *   express-copied  express 5 whose request and response methods are copied onto Node's prototypes
 *                   and whose `app.handle` changes no prototype
 *   UPSTREAM=http://127.0.0.1:PORT VARIANT=node node bench/investigations/gateway/prototype-proxy.mjs
 */
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import express from 'express';
import { Pool } from 'undici';

const upstream = process.env.UPSTREAM;
const variant = process.env.VARIANT ?? 'node';
if (!upstream) throw new Error('UPSTREAM (the mock upstream origin) is required');

const pool = new Pool(upstream, { connections: 128, keepAliveTimeout: 30_000, pipelining: 1 });
const app = express();
app.disable('x-powered-by');
app.set('etag', false);

/** @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res */
async function forward(req, res) {
  try {
    /** @type {Record<string, string>} */
    const headers = { 'content-type': req.headers['content-type'] ?? 'application/json' };
    if (req.headers['content-length']) headers['content-length'] = req.headers['content-length'];
    const answer = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers, body: req });
    res.statusCode = answer.statusCode;
    const type = answer.headers['content-type'];
    if (typeof type === 'string') res.setHeader('content-type', type);
    await pipeline(answer.body, res);
  } catch {
    if (res.headersSent) res.destroy();
    else {
      res.statusCode = 502;
      res.end();
    }
  }
}

/** @type {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void} */
let listener;
if (variant === 'node') listener = forward;
else if (variant === 'node+proto')
  listener = (req, res) => {
    Object.setPrototypeOf(req, app.request);
    Object.setPrototypeOf(res, app.response);
    void forward(req, res);
  };
else if (variant === 'express' || variant === 'express-copied') {
  app.post('/v1/chat/completions', (req, res) => void forward(req, res));
  if (variant === 'express-copied') {
    const copies = [
      [Object.getPrototypeOf(app.request), IncomingMessage.prototype],
      [Object.getPrototypeOf(app.response), ServerResponse.prototype],
    ];
    for (const [from, to] of copies)
      for (const key of Reflect.ownKeys(from))
        Object.defineProperty(
          to,
          key,
          /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(from, key)),
        );
    for (const to of [IncomingMessage.prototype, ServerResponse.prototype])
      Object.defineProperty(to, 'app', { value: app, configurable: true });
    // express's own `handle`, less its two `setPrototypeOf` calls.
    /** @type {any} */ (app).handle = function handle(/** @type {any} */ req, /** @type {any} */ res) {
      req.res = res;
      res.req = req;
      res.locals ??= Object.create(null);
      this.router.handle(req, res, () => {
        res.statusCode = 404;
        res.end();
      });
    };
  }
  listener = app;
} else throw new Error(`VARIANT must be node, node+proto, express or express-copied, not ${variant}`);

const server = createServer(listener).listen(0, '127.0.0.1', () => {
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(`READY ${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
server.keepAliveTimeout = 65_000;

process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool.close().then(() => process.exit(0));
});
