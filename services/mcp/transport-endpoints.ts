import { z } from 'zod';
import { type ActionContext, defineEndpoint, noInput, type PathEndpoint } from '../../shared/http/action.ts';

/** What an MCP door's two endpoints share: where, who may call, the errors its handler answers. */
export type McpEndpointsAt = Pick<PathEndpoint, 'path' | 'identities' | 'errors'>;

/**
 * The endpoints of an MCP server over Streamable HTTP: `POST` (a JSON-RPC message, or a batch of
 * them, which the MCP SDK reads), `GET` (a session's SSE stream) and `DELETE` (a client ending its
 * session), all answered by `handler`.
 */
export function mcpTransportEndpoints(
  at: McpEndpointsAt,
  handler: (input: unknown, ctx: ActionContext) => Promise<void>,
) {
  const common = { ...at, produces: ['application/json', 'text/event-stream'] } as const;
  return [
    defineEndpoint({
      ...common,
      method: 'POST',
      input: z.union([z.looseObject({}), z.array(z.unknown())]),
      bodyLimitBytes: 4 * 1024 * 1024,
      handler,
    }),
    defineEndpoint({ ...common, method: 'GET', input: noInput, handler }),
    defineEndpoint({ ...common, method: 'DELETE', input: noInput, handler }),
  ];
}
