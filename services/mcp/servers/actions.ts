import { z } from 'zod';
import { type CommandHandler, commandHandler } from '../../../shared/command-handler.ts';
import { ApiError } from '../../../shared/errors.ts';
import type { GatewayContext } from '../../../shared/gateway-context.ts';
import { defineAction } from '../../../shared/http/action.ts';
import { isRefusedHost } from '../../ai/upstream-address.ts';
import { mask } from '../../env/reader.ts';
import {
  MCP_SERVERS_STREAM,
  type McpServer,
  type McpServerCommand,
  type McpServerEvent,
  type McpServersState,
  type McpServerTarget,
  mcpServersDecider,
} from './mcp-server.ts';
import { type McpServerRecord, mcpServersProjection } from './read-model.ts';

const admin = ['admin'] as const;
/** No `_` in an id: a tool is offered as `<server>__<name>`, split at the first `__`. */
export const serverId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a server id: lower-case letters, digits and dashes, e.g. files');
const usd = z.number().min(0).max(1_000);
const secrets = (what: string) =>
  z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_-]{0,127}$/, `a ${what} name`), z.string().max(8_192))
    .refine((record) => Object.keys(record).length <= 64, `at most 64 ${what}s`);
const pricing = {
  /** What every call of a tool of this server costs, in USD (default 0). */
  price_per_call_usd: usd.optional(),
  /** Prices of single tools (as the server names them), in USD a call: they win over `price_per_call_usd`. */
  tool_prices_usd: z
    .record(z.string().min(1).max(200), usd)
    .refine((record) => Object.keys(record).length <= 500, 'at most 500 tool prices')
    .optional(),
};

const UpsertInput = z.discriminatedUnion('transport', [
  z.strictObject({
    id: serverId,
    transport: z.literal('stdio'),
    command: z.string().min(1).max(1_000),
    args: z.array(z.string().max(4_096)).max(100).optional(),
    /** The child's environment besides PATH and HOME; kept encrypted. Left out on an update: kept. */
    env: secrets('variable').optional(),
    ...pricing,
  }),
  z.strictObject({
    id: serverId,
    transport: z.enum(['http', 'sse']),
    url: z.url({ protocol: /^https?$/, message: 'url: an http(s) URL' }).max(2_000),
    /** Headers sent with every request (an upstream's credential); kept encrypted. Left out on an update: kept. */
    headers: secrets('header').optional(),
    ...pricing,
  }),
]);
type UpsertInput = z.infer<typeof UpsertInput>;

export interface McpServerActionsOptions {
  /** `STUDIO_MCP_STDIO=allow`: servers the gateway starts as programs may be registered. */
  stdioAllowed: boolean;
  /** `STUDIO_ALLOW_PRIVATE_UPSTREAMS`: URLs may name link-local and cloud metadata addresses. */
  allowPrivateUpstreams: boolean;
  /** Told after a server was changed or removed: its upstream connection is closed. */
  changed(id: string): void;
}

export type McpServerCommands = CommandHandler<McpServerCommand, McpServerEvent, McpServersState>;

/** `/v1/mcp/servers/*`: the tool servers behind `/v1/mcp`, registered by admins. */
export function mcpServerActions(gw: GatewayContext, options: McpServerActionsOptions) {
  const servers = () => gw.projections.state(mcpServersProjection).byId;
  const run: McpServerCommands = commandHandler(mcpServersDecider, {
    events: gw.events,
    streamOf: () => MCP_SERVERS_STREAM,
    readModels: gw.projections,
  });
  const masked = (encrypted: Record<string, string>) =>
    Object.fromEntries(Object.entries(encrypted).map(([k, v]) => [k, mask(gw.secrets.decrypt(v))]));
  const encrypted = (clear: Record<string, string>) =>
    Object.fromEntries(Object.entries(clear).map(([k, v]) => [k, gw.secrets.encrypt(v)]));
  const view = (server: McpServerRecord) => ({
    id: server.id,
    transport: server.transport,
    ...(server.transport === 'stdio'
      ? { command: server.command, args: server.args, env: masked(server.encryptedEnv) }
      : { url: server.url, headers: masked(server.encryptedHeaders) }),
    price_per_call_usd: server.pricing.perCallMicroUsd / 1_000_000,
    tool_prices_usd: Object.fromEntries(
      Object.entries(server.pricing.perToolMicroUsd).map(([tool, micro]) => [tool, micro / 1_000_000]),
    ),
    updated_at: server.updated_at,
  });
  const targetOf = (input: UpsertInput, before: McpServerRecord | undefined): McpServerTarget => {
    if (input.transport === 'stdio') {
      if (!options.stdioAllowed)
        throw new ApiError(
          'validation_failed',
          'transport: stdio servers run programs on the gateway and are off; set STUDIO_MCP_STDIO=allow to register them',
          { param: 'transport' },
        );
      const kept = before?.transport === 'stdio' ? before.encryptedEnv : {};
      return {
        transport: 'stdio',
        command: input.command,
        args: input.args ?? [],
        encryptedEnv: input.env === undefined ? kept : encrypted(input.env),
      };
    }
    const host = new URL(input.url).hostname;
    if (!options.allowPrivateUpstreams && isRefusedHost(host))
      throw new ApiError(
        'validation_failed',
        `url: ${host} is a link-local or cloud metadata address; the gateway calls none unless STUDIO_ALLOW_PRIVATE_UPSTREAMS=true`,
        { param: 'url' },
      );
    const kept = before !== undefined && before.transport !== 'stdio' ? before.encryptedHeaders : {};
    return {
      transport: input.transport,
      url: input.url,
      encryptedHeaders: input.headers === undefined ? kept : encrypted(input.headers),
    };
  };
  const micro = (dollars: number) => Math.round(dollars * 1_000_000);
  return [
    defineAction({
      service: 'mcp',
      action: 'servers/list',
      method: 'GET',
      identities: admin,
      summary: 'The MCP servers behind /v1/mcp (env values and headers masked)',
      input: z.strictObject({}),
      handler: () => ({ items: [...servers().values()].map(view) }),
    }),
    defineAction({
      service: 'mcp',
      action: 'servers/upsert',
      method: 'POST',
      identities: admin,
      summary: 'Register an MCP server (stdio, http or sse): replaced whole, its connection restarted',
      input: UpsertInput,
      handler: async (input, ctx) => {
        const server: McpServer = {
          id: input.id,
          pricing: {
            perCallMicroUsd: micro(input.price_per_call_usd ?? 0),
            perToolMicroUsd: Object.fromEntries(
              Object.entries(input.tool_prices_usd ?? {}).map(([tool, usd]) => [tool, micro(usd)]),
            ),
          },
          ...targetOf(input, servers().get(input.id)),
        };
        await run({ type: 'SetMcpServer', server }, ctx.metadata);
        options.changed(input.id);
        return view(servers().get(input.id)!);
      },
    }),
    defineAction({
      service: 'mcp',
      action: 'servers/remove',
      method: 'POST',
      identities: admin,
      summary: 'Remove an MCP server: its tools leave /v1/mcp and its connection is closed',
      input: z.strictObject({ id: serverId }),
      handler: async (input, ctx) => {
        await run({ type: 'RemoveMcpServer', id: input.id }, ctx.metadata);
        options.changed(input.id);
        return { id: input.id, removed: true };
      },
    }),
  ];
}
