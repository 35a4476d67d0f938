import { type Decider, unknownCase } from '../../../shared/decider.ts';
import { DomainError } from '../../../shared/errors.ts';

/** Every MCP server admins register lives in the single `mcp-servers` stream. */
export const MCP_SERVERS_STREAM = 'mcp-servers';

export const MCP_TRANSPORTS = ['stdio', 'http', 'sse'] as const;
export type McpTransport = (typeof MCP_TRANSPORTS)[number];

/** What a call costs, in micro-dollars: a price for every tool, and prices of single tools that win over it. */
export interface McpPricing {
  perCallMicroUsd: number;
  /** Tool name (as the server names it) → micro-dollars a call. */
  perToolMicroUsd: Record<string, number>;
}

/** How the gateway reaches a tool server: a program it starts, or a URL. Secrets are ciphertext. */
export type McpServerTarget =
  | {
      transport: 'stdio';
      command: string;
      args: string[];
      /** Variable → its value encrypted with the master key: the child's only environment besides PATH and HOME. */
      encryptedEnv: Record<string, string>;
    }
  | {
      transport: 'http' | 'sse';
      url: string;
      /** Header → its value encrypted with the master key. */
      encryptedHeaders: Record<string, string>;
    };

export type McpServer = { id: string; pricing: McpPricing } & McpServerTarget;

export type McpServerEvent =
  | { type: 'McpServerSet'; data: McpServer }
  | { type: 'McpServerRemoved'; data: { id: string } };

export type McpServerCommand =
  | { type: 'SetMcpServer'; server: McpServer }
  | { type: 'RemoveMcpServer'; id: string };

export const MCP_SERVER_EVENT_TYPES = [
  'McpServerSet',
  'McpServerRemoved',
] as const satisfies readonly McpServerEvent['type'][];

/** The server ids that exist. */
export interface McpServersState {
  ids: ReadonlySet<string>;
}

function decide(command: McpServerCommand, state: McpServersState): McpServerEvent[] {
  switch (command.type) {
    case 'SetMcpServer':
      return [{ type: 'McpServerSet', data: command.server }];
    case 'RemoveMcpServer':
      if (!state.ids.has(command.id))
        throw new DomainError('not_found', `MCP server ${command.id} does not exist`);
      return [{ type: 'McpServerRemoved', data: { id: command.id } }];
    default:
      return unknownCase('command', command);
  }
}

function evolve(state: McpServersState, event: McpServerEvent): McpServersState {
  switch (event.type) {
    case 'McpServerSet':
      return { ids: new Set(state.ids).add(event.data.id) };
    case 'McpServerRemoved': {
      const ids = new Set(state.ids);
      ids.delete(event.data.id);
      return { ids };
    }
    default:
      return unknownCase('event', event);
  }
}

export const mcpServersDecider: Decider<McpServerCommand, McpServerEvent, McpServersState> = {
  initialState: () => ({ ids: new Set() }),
  decide,
  evolve,
};
