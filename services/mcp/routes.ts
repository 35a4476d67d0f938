import { z } from 'zod';
import { ApiError } from '../../shared/errors.ts';
import { type ActionContext, defineEndpoint, noInput } from '../../shared/http/action.ts';
import type { ServedRequest } from '../../shared/http/request.ts';
import type { McpDoor } from './door.ts';
import { mcpTransportEndpoints } from './transport-endpoints.ts';

export const MCP_PATH = '/v1/mcp';
/** RFC 9728's metadata of `/v1/mcp`: at the root's well-known path, and at the one the resource's path names. */
export const RESOURCE_METADATA_PATHS = [
  '/.well-known/oauth-protected-resource',
  `/.well-known/oauth-protected-resource${MCP_PATH}`,
] as const;

/** Where this gateway is reached: `STUDIO_PUBLIC_URL`, else the request's own Host. */
const baseOf = (req: ServedRequest, publicUrl: string | undefined) =>
  (publicUrl ?? `http://${req.headers.host ?? 'localhost'}`).replace(/\/+$/, '');

/** The `WWW-Authenticate` of a 401 at `/v1/mcp`: a bearer token, described at its resource metadata. */
export const mcpChallenge = (req: ServedRequest, publicUrl: string | undefined) =>
  `Bearer resource_metadata="${baseOf(req, publicUrl)}${RESOURCE_METADATA_PATHS[1]}"`;

/** A 401 refusal that tells an MCP client where the resource's metadata is. */
export function challenged(error: unknown, challenge: string): unknown {
  if (!(error instanceof ApiError) || error.status !== 401) return error;
  return new ApiError(error.code, error.message, {
    ...error.options,
    headers: { ...error.options.headers, 'WWW-Authenticate': challenge },
  });
}

/**
 * `POST|GET /v1/mcp` (Streamable HTTP: requests, and the session's SSE stream) for user tokens,
 * and the resource metadata that points clients at their bearer token.
 */
export function mcpRoutes(door: McpDoor, publicUrl: string | undefined) {
  const handler = async (_input: unknown, ctx: ActionContext) => {
    const { identity } = ctx;
    if (identity.kind === 'guest')
      throw challenged(
        new ApiError(
          'unauthenticated',
          'the MCP gateway needs a studio user token: Authorization: Bearer <token>',
        ),
        mcpChallenge(ctx.req, publicUrl),
      );
    if (identity.kind !== 'user')
      throw new ApiError('forbidden', 'the MCP gateway is for studio user tokens, not the admin key');
    await door.handle(
      { studioId: identity.studioId, tokenId: identity.tokenId, requestId: ctx.requestId },
      ctx.req,
      ctx.res,
      ctx.signal,
    );
  };
  return {
    v1: mcpTransportEndpoints(
      {
        path: MCP_PATH,
        // Guests are answered by the handler, with the challenge MCP clients read.
        identities: [],
        errors: ['unauthenticated', 'forbidden', 'not_found', 'validation_failed'],
      },
      handler,
    ),
    open: RESOURCE_METADATA_PATHS.map((path) =>
      defineEndpoint({
        method: 'GET',
        path,
        identities: [],
        input: noInput,
        output: z.object({
          resource: z.string(),
          authorization_servers: z.array(z.string()),
          bearer_methods_supported: z.array(z.string()),
          resource_name: z.string(),
        }),
        handler: (_input, ctx) => ({
          resource: `${baseOf(ctx.req, publicUrl)}${MCP_PATH}`,
          // Tokens are issued by the gateway's admins (POST /v1/studios/tokens/apply), not by OAuth.
          authorization_servers: [],
          bearer_methods_supported: ['header'],
          resource_name: 'Studio MCP gateway',
        }),
      }),
    ),
  };
}
