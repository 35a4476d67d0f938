import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpServerRecord } from '../../services/mcp/servers/read-model.ts';
import { McpUpstreams, UpstreamFailure } from '../../services/mcp/upstreams.ts';
import { SecretBox } from '../../shared/crypto.ts';
import { createLogger } from '../../shared/logger.ts';
import { startToolServer, type ToolServer } from './support/tool-server.ts';

// The gateway's connections to tool servers on their own: the deadline of a request, the bound on
// an answer, the connection made again after a failure, headers decrypted only on the wire.

let tools: ToolServer;
const secrets = new SecretBox(randomBytes(32));
const logger = createLogger('silent');
let server: Extract<McpServerRecord, { transport: 'http' | 'sse' }>;

beforeAll(async () => {
  tools = await startToolServer();
  server = {
    id: 'web',
    transport: 'http',
    url: tools.url,
    encryptedHeaders: { authorization: secrets.encrypt('Bearer on-the-wire-only') },
    pricing: { perCallMicroUsd: 0, perToolMicroUsd: {} },
    updated_at: '2026-11-29T00:00:00.000Z',
  };
});

afterAll(async () => {
  await tools?.close();
});

describe('McpUpstreams', () => {
  it('a request past its deadline is an upstream failure naming the server; the next connects again', async () => {
    const upstreams = new McpUpstreams({ secrets, logger }, () => undefined, { callTimeoutMs: 300 });
    try {
      const late = await upstreams
        .request(server, (client, options) =>
          client.callTool({ name: 'slow', arguments: {} }, undefined, options),
        )
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(late).toBeInstanceOf(UpstreamFailure);
      expect((late as Error).message).toBe('MCP server web did not answer within 0.3 s');
      const before = tools.authorizations.length;
      const echo = await upstreams.request(server, (client, options) =>
        client.callTool({ name: 'echo', arguments: { text: 'again' } }, undefined, options),
      );
      expect(echo.content).toEqual([{ type: 'text', text: 'echo: again' }]);
      // a new session: initialize, initialized, the call
      expect(tools.authorizations.slice(before).every((a) => a === 'Bearer on-the-wire-only')).toBe(true);
      expect(tools.authorizations.length - before).toBeGreaterThanOrEqual(3);
    } finally {
      await upstreams.close();
    }
  });

  it('an answer larger than the bound is refused, not passed on', async () => {
    const upstreams = new McpUpstreams({ secrets, logger }, () => undefined, { maxResultBytes: 16 * 1024 });
    try {
      const big = await upstreams
        .request(server, (client, options) =>
          client.callTool({ name: 'big', arguments: {} }, undefined, options),
        )
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(big).toBeInstanceOf(UpstreamFailure);
      expect((big as Error).message).toMatch(
        /^MCP server web answered \d+ bytes, more than the 16384 passed on$/,
      );
    } finally {
      await upstreams.close();
    }
  });

  it('a server that cannot be reached is an upstream failure, and is tried again on the next use', async () => {
    const upstreams = new McpUpstreams({ secrets, logger }, () => undefined, { connectTimeoutMs: 2_000 });
    const nowhere: McpServerRecord = { ...server, id: 'nowhere', url: 'http://127.0.0.1:9/mcp' };
    try {
      for (let i = 0; i < 2; i++) {
        const failed = await upstreams
          .request(nowhere, (client) => client.listTools())
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        expect(failed).toBeInstanceOf(UpstreamFailure);
        expect((failed as Error).message).toContain('MCP server nowhere could not be reached');
      }
    } finally {
      await upstreams.close();
    }
  });

  it('a stdio server registered while stdio was allowed is not started once it is not', async () => {
    const upstreams = new McpUpstreams({ secrets, logger }, () => undefined, { stdioAllowed: false });
    const program: McpServerRecord = {
      id: 'program',
      transport: 'stdio',
      command: process.execPath,
      args: ['--version'],
      encryptedEnv: {},
      pricing: { perCallMicroUsd: 0, perToolMicroUsd: {} },
      updated_at: server.updated_at,
    };
    try {
      const refused = await upstreams
        .request(program, (client) => client.listTools())
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(refused).toBeInstanceOf(UpstreamFailure);
      expect((refused as Error).message).toContain('STUDIO_MCP_STDIO=allow');
    } finally {
      await upstreams.close();
    }
  });
});
