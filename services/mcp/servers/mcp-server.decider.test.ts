import { describe, it } from 'vitest';
import { deciderSpec } from '../../../shared/decider-spec.ts';
import { type McpServer, mcpServersDecider } from './mcp-server.ts';

const spec = deciderSpec(mcpServersDecider);
const files: McpServer = {
  id: 'files',
  transport: 'stdio',
  command: 'npx',
  args: ['@modelcontextprotocol/server-filesystem', '/srv/data'],
  encryptedEnv: { LOG: 'v1.iv.tag.body' },
  pricing: { perCallMicroUsd: 0, perToolMicroUsd: {} },
};
const search: McpServer = {
  id: 'search',
  transport: 'http',
  url: 'https://tools.example.com/mcp',
  encryptedHeaders: { authorization: 'v1.iv.tag.body' },
  pricing: { perCallMicroUsd: 1_000, perToolMicroUsd: { deep: 20_000 } },
};

describe('MCP servers decider', () => {
  it('sets a server, replacing one of the same id whole', () => {
    spec
      .given([])
      .when({ type: 'SetMcpServer', server: files })
      .thenEmits([{ type: 'McpServerSet', data: files }]);
    const moved = { ...search, id: 'files' };
    spec
      .given([{ type: 'McpServerSet', data: files }])
      .when({ type: 'SetMcpServer', server: moved })
      .thenEmits([{ type: 'McpServerSet', data: moved }]);
  });

  it('removes a server that exists; one that does not is not found', () => {
    spec
      .given([{ type: 'McpServerSet', data: search }])
      .when({ type: 'RemoveMcpServer', id: 'search' })
      .thenEmits([{ type: 'McpServerRemoved', data: { id: 'search' } }]);
    spec
      .given([
        { type: 'McpServerSet', data: search },
        { type: 'McpServerRemoved', data: { id: 'search' } },
      ])
      .when({ type: 'RemoveMcpServer', id: 'search' })
      .thenFails('not_found');
    spec.given([]).when({ type: 'RemoveMcpServer', id: 'files' }).thenFails('not_found');
  });
});
