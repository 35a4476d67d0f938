// A stdio tool server that can be killed in the middle of a call: `die` SIGKILLs its own process
// before it answers; `pid` says which process answers; `env` what environment it was given.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const server = new McpServer({ name: 'crash', version: '1.0.0' });
server.registerTool('pid', { description: 'The process id of this server' }, async () => ({
  content: [{ type: 'text', text: String(process.pid) }],
}));
server.registerTool(
  'env',
  { description: 'The names of the variables this server was started with' },
  async () => ({
    content: [
      {
        type: 'text',
        text: JSON.stringify({ names: Object.keys(process.env).sort(), note: process.env.CRASH_NOTE }),
      },
    ],
  }),
);
server.registerTool('die', { description: 'Kills this server mid-call' }, async () => {
  process.kill(process.pid, 'SIGKILL');
  return new Promise(() => {});
});
await server.connect(new StdioServerTransport());
