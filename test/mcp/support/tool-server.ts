import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/**
 * A tool server over Streamable HTTP, or over the legacy HTTP+SSE transport (`GET /sse` opens the
 * stream, which names where to POST), the SDK's server side, as a test needs one behind the gateway.
 */
export interface ToolServer {
  url: string;
  /** Every request's Authorization header, as received. */
  authorizations: (string | undefined)[];
  /** Tool name → calls that reached it. */
  calls: Map<string, number>;
  /** Resolves when the tool `name` is next called. */
  called(name: string): Promise<void>;
  /** Adds a tool to every session, which tells its client the tools changed. */
  addTool(name: string): void;
  close(): Promise<void>;
}

export async function startToolServer(kind: 'http' | 'sse' = 'http'): Promise<ToolServer> {
  const authorizations: (string | undefined)[] = [];
  const calls = new Map<string, number>();
  const waiting = new Map<string, (() => void)[]>();
  const counted = (name: string) => {
    calls.set(name, (calls.get(name) ?? 0) + 1);
    for (const resolve of waiting.get(name) ?? []) resolve();
    waiting.delete(name);
  };
  const servers: McpServer[] = [];
  const extraTools: string[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  const build = () => {
    const server = new McpServer({ name: 'test-tools', version: '1.0.0' });
    server.registerTool(
      'echo',
      { description: 'Answers its text', inputSchema: { text: z.string() } },
      async ({ text }) => {
        counted('echo');
        return { content: [{ type: 'text', text: `echo: ${text}` }] };
      },
    );
    server.registerTool(
      'add',
      { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
      async ({ a, b }) => {
        counted('add');
        return { content: [{ type: 'text', text: String(a + b) }] };
      },
    );
    server.registerTool('slow', { description: 'Answers once its call is cancelled' }, async (extra) => {
      counted('slow');
      await new Promise<void>((resolve) => extra.signal.addEventListener('abort', () => resolve()));
      return { content: [{ type: 'text', text: 'too late' }] };
    });
    server.registerTool('big', { description: 'Answers 64 KiB of text' }, async () => ({
      content: [{ type: 'text', text: 'x'.repeat(64 * 1024) }],
    }));
    server.registerTool('priced', { description: 'A tool that costs money' }, async () => {
      counted('priced');
      return { content: [{ type: 'text', text: 'paid for' }] };
    });
    for (const name of extraTools) registerExtra(server, name);
    server.registerResource(
      'note',
      'memo://note',
      { description: 'A note', mimeType: 'text/plain' },
      async (uri) => ({ contents: [{ uri: uri.href, text: 'remember the milk' }] }),
    );
    server.registerPrompt(
      'greet',
      { description: 'Greets someone', argsSchema: { who: z.string() } },
      ({ who }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${who}` } }] }),
    );
    servers.push(server);
    return server;
  };
  const registerExtra = (server: McpServer, name: string) =>
    server.registerTool(name, { description: `${name}, added later` }, async () => {
      counted(name);
      return { content: [{ type: 'text', text: name }] };
    });

  const legacy = new Map<string, SSEServerTransport>();
  const http = createServer(async (req: IncomingMessage, res) => {
    authorizations.push(req.headers.authorization);
    if (kind === 'sse') {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (req.method === 'GET' && url.pathname === '/sse') {
        const opened = new SSEServerTransport('/messages', res);
        legacy.set(opened.sessionId, opened);
        res.on('close', () => legacy.delete(opened.sessionId));
        await build().connect(opened);
        return;
      }
      const session = legacy.get(url.searchParams.get('sessionId') ?? '');
      if (req.method !== 'POST' || url.pathname !== '/messages' || !session) {
        res.writeHead(404).end();
        return;
      }
      await session.handlePostMessage(req, res);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (typeof sessionId === 'string') {
        res.writeHead(404).end();
        return;
      }
      const opened = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, opened);
        },
      });
      await build().connect(opened);
      transport = opened;
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/${kind === 'sse' ? 'sse' : 'mcp'}`,
    authorizations,
    calls,
    called: (name) =>
      new Promise<void>((resolve) => waiting.set(name, [...(waiting.get(name) ?? []), resolve])),
    addTool(name) {
      extraTools.push(name);
      for (const server of servers) registerExtra(server, name);
    },
    async close() {
      await Promise.allSettled([...sessions.values(), ...legacy.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
