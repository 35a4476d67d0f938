import type { ActionContext } from '../../../shared/http/action.ts';
import { mcpTransportEndpoints } from '../../mcp/transport-endpoints.ts';
import type { RuntimeMcpDoor } from '../mcp/door.ts';

export const RUNTIME_MCP_PATH = '/api/mcp';

/** `POST|GET /api/mcp` (Streamable HTTP: requests, and a session's SSE stream): the plugin actions as MCP tools. */
export function mcpRoutes(door: RuntimeMcpDoor) {
  const handler = async (_input: unknown, ctx: ActionContext) => door.handle(ctx.req, ctx.res);
  return mcpTransportEndpoints(
    { path: RUNTIME_MCP_PATH, errors: ['not_found', 'validation_failed', 'unavailable'] },
    handler,
  );
}
