import { defineProjection } from '../../../shared/projections/projection.ts';
import { MCP_SERVER_EVENT_TYPES, type McpServer, type McpServerEvent } from './mcp-server.ts';

export type McpServerRecord = McpServer & { updated_at: string };

/** The registered MCP servers by id. */
export interface McpServersReadModel {
  byId: Map<string, McpServerRecord>;
}

export const mcpServersProjection = defineProjection<McpServersReadModel, McpServerEvent>({
  name: 'mcp-servers',
  schemaVersion: 1,
  handles: MCP_SERVER_EVENT_TYPES,
  initialState: () => ({ byId: new Map() }),
  toSnapshot: (state) => ({ byId: [...state.byId] }),
  fromSnapshot: (snapshot) => ({ byId: new Map((snapshot as { byId: [string, McpServerRecord][] }).byId) }),
  apply(state, event) {
    switch (event.type) {
      case 'McpServerSet':
        state.byId.set(event.data.id, { ...event.data, updated_at: event.createdAt });
        return;
      case 'McpServerRemoved':
        state.byId.delete(event.data.id);
        return;
      default:
        return;
    }
  },
});
