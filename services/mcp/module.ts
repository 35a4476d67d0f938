import type { GatewayContext } from '../../shared/gateway-context.ts';
import type { ServedRequest } from '../../shared/http/request.ts';
import type { PayloadCapture } from '../ai/payloads/payload-capture.ts';
import type { RateLimits } from '../ai/rate-limits/rate-limits.ts';
import type { UsageRecorder } from '../ai/usage/recorder.ts';
import { McpDoor } from './door.ts';
import { MCP_PATH, mcpChallenge, mcpRoutes } from './routes.ts';
import { mcpServerActions } from './servers/actions.ts';
import { type McpUpstreamOptions, McpUpstreams } from './upstreams.ts';

export interface McpModuleOptions {
  /** `STUDIO_MCP_STDIO=allow`: servers the gateway starts as programs may be registered. */
  stdioAllowed: boolean;
  /** `STUDIO_ALLOW_PRIVATE_UPSTREAMS`: HTTP servers may be at link-local and cloud metadata addresses. */
  allowPrivateUpstreams: boolean;
  /** `STUDIO_PUBLIC_URL`: the base of the resource metadata's URLs (default: the request's Host). */
  publicUrl?: string | undefined;
  limits: RateLimits;
  usage: UsageRecorder;
  /** Where a tool call's arguments and result are kept when its studio captures payloads. */
  payloads: Pick<PayloadCapture, 'keep'>;
  upstream?: McpUpstreamOptions;
}

/** The MCP gateway: `/v1/mcp`, its resource metadata, the admin actions of its servers, their connections. */
export function createMcpModule(gw: GatewayContext, options: McpModuleOptions) {
  const upstreams = new McpUpstreams(gw, () => door.toolsChanged(), {
    stdioAllowed: options.stdioAllowed,
    allowPrivateUpstreams: options.allowPrivateUpstreams,
    ...options.upstream,
  });
  const door = new McpDoor({
    gw,
    upstreams,
    limits: options.limits,
    usage: options.usage,
    payloads: options.payloads,
  });
  const routes = mcpRoutes(door, options.publicUrl);
  return {
    actions: mcpServerActions(gw, {
      stdioAllowed: options.stdioAllowed,
      allowPrivateUpstreams: options.allowPrivateUpstreams,
      changed: (id) => {
        upstreams.forget(id);
        door.toolsChanged();
      },
    }),
    /** Endpoints under /v1 (`/v1/mcp`) and at paths of their own (the resource metadata). */
    routes,
    /** The challenge of a 401 at `path`, where MCP clients need one. */
    challengeAt: (req: ServedRequest, path: string) =>
      path.replace(/\/+$/, '').toLowerCase() === MCP_PATH ? mcpChallenge(req, options.publicUrl) : undefined,
    /** Sessions ended (their streams closed), then every tool server's connection. */
    async close() {
      await door.close();
      await upstreams.close();
    },
  };
}

export type McpModule = ReturnType<typeof createMcpModule>;
