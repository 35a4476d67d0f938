import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { z } from 'zod';
import { findExecutable } from '../../../../shared/executables.ts';
import { definePlugin, type Plugin, type PluginAction } from '../types.ts';
import { readMcpConfig } from './config.ts';

export interface McpPluginOptions {
  configPath: string;
  /** Told when a server dies while the plugin runs (the runtime marks the plugin failed). */
  onFailure?: (error: Error) => void;
}

interface Connected {
  name: string;
  client: Client;
  transport: StdioClientTransport;
  tools: { name: string; description: string }[];
}

const ToolInput = z.record(z.string(), z.unknown());

/**
 * Any MCP server of a config file, spoken to over stdio: each of its tools becomes an action
 * `<server>__<tool>` while the plugin runs. Available only when the config is valid and every
 * server's command exists.
 */
export function mcpPlugin(options: McpPluginOptions): Plugin {
  const actions: PluginAction[] = [];
  let servers: Connected[] = [];
  let stopping = false;

  const stopAll = async () => {
    stopping = true;
    const closing = servers;
    servers = [];
    actions.length = 0;
    await Promise.allSettled(closing.map((s) => s.client.close()));
  };

  return definePlugin({
    name: 'mcp',
    version: '1.0.0',
    description: 'Tools of MCP servers (stdio) listed in the MCP config file',
    requires: { env: [], bins: [] },
    actions,

    async availability() {
      const result = await readMcpConfig(options.configPath);
      if (!result.ok) return { available: false, reasons: [result.reason] };
      const missing = Object.entries(result.config.servers)
        .filter(([, server]) => !findExecutable(server.command))
        .map(([name, server]) => `server ${name}: missing command ${server.command}`);
      return missing.length ? { available: false, reasons: missing } : {};
    },

    system() {
      if (servers.length === 0) return undefined;
      const lines = servers.map((s) => `- ${s.name}: ${s.tools.map((t) => t.name).join(', ') || 'no tools'}`);
      return `MCP servers are connected; their tools are named <server>__<tool>:\n${lines.join('\n')}`;
    },

    status: () => ({
      servers: servers.map((s) => ({ name: s.name, pid: s.transport.pid, tools: s.tools.length })),
    }),

    async start(ctx) {
      const result = await readMcpConfig(options.configPath);
      if (!result.ok) throw new Error(result.reason);
      stopping = false;
      // The SDK (and its JSON-schema validator) is loaded only when MCP servers are configured.
      const [{ Client }, { StdioClientTransport }] = await Promise.all([
        import('@modelcontextprotocol/sdk/client/index.js'),
        import('@modelcontextprotocol/sdk/client/stdio.js'),
      ]);
      try {
        for (const [name, server] of Object.entries(result.config.servers)) {
          const transport = new StdioClientTransport({
            command: server.command,
            args: server.args,
            env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...server.env },
            ...(server.cwd ? { cwd: server.cwd } : {}),
            stderr: 'pipe',
          });
          const client = new Client({ name: 'studio-runtime', version: '1.0.0' });
          transport.onclose = () => {
            if (!stopping) options.onFailure?.(new Error(`MCP server ${name} exited`));
          };
          await client.connect(transport);
          const { tools } = await client.listTools();
          const connected: Connected = {
            name,
            client,
            transport,
            tools: tools.map((t) => ({ name: t.name, description: t.description ?? '' })),
          };
          servers.push(connected);
          for (const tool of tools) {
            actions.push({
              name: `${name}__${tool.name}`,
              description: tool.description ?? `${tool.name} of MCP server ${name}`,
              input: ToolInput,
              jsonSchema: tool.inputSchema,
              supportsCommand: true,
              async handler(input) {
                const result = await client.callTool({
                  name: tool.name,
                  arguments: input as Record<string, unknown>,
                });
                const content = (result.content ?? []) as { type: string; text?: string }[];
                if (result.isError) {
                  throw new Error(content.map((c) => c.text ?? '').join('\n') || `${tool.name} failed`);
                }
                return result.structuredContent ?? content;
              },
            });
          }
          ctx.logger.info({ server: name, tools: tools.length }, 'MCP server connected');
        }
      } catch (error) {
        await stopAll();
        throw error;
      }
    },

    stop: stopAll,
  });
}
