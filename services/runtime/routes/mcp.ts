import { z } from 'zod';
import { type ActionContext, defineEndpoint, noInput } from '../../../shared/http/action.ts';
import type { RuntimeMcpDoor } from '../mcp/door.ts';

export const RUNTIME_MCP_PATH = '/api/mcp';

/** `POST|GET /api/mcp` (Streamable HTTP: requests, and a session's SSE stream): the plugin actions as MCP tools. */
export function mcpRoutes(door: RuntimeMcpDoor) {
  const handler = async (_input: unknown, ctx: ActionContext) => door.handle(ctx.req, ctx.res);
  const common = {
    path: RUNTIME_MCP_PATH,
    produces: ['application/json', 'text/event-stream'],
    errors: ['not_found', 'validation_failed', 'unavailable'],
  } as const;
  return [
    defineEndpoint({
      ...common,
      method: 'POST',
      // A JSON-RPC message (or a batch of them): the MCP SDK reads it.
      input: z.union([z.looseObject({}), z.array(z.unknown())]),
      bodyLimitBytes: 4 * 1024 * 1024,
      handler,
    }),
    defineEndpoint({ ...common, method: 'GET', input: noInput, handler }),
  ];
}
