import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ServerResult } from '@modelcontextprotocol/sdk/types.js';
import { messageOf } from '../../shared/errors.ts';
import type { ServedRequest, ServedResponse } from '../../shared/http/request.ts';
import { allowsTool, mayReach, mcpAccessProjection } from './access.ts';
import { type Caller, CallRefused, callNote, type GovernedCallDeps, governedCall } from './calls.ts';
import type { McpSdk } from './sdk.ts';
import { type McpServerRecord, mcpServersProjection } from './servers/read-model.ts';
import { McpSessions } from './sessions.ts';
import { McpUpstreams, UpstreamFailure } from './upstreams.ts';

/** The sessions one token may hold at once; a new one past that closes its oldest. */
const SESSIONS_PER_TOKEN = 32;
/** Pages of a tool server's list read at most (a server that pages forever is cut there). */
const MAX_PAGES = 20;
/** `<server>__<name>`: server ids hold no `_`, so the first `__` ends the server's. */
const SEPARATOR = '__';

export interface McpDoorDeps extends GovernedCallDeps {
  upstreams: McpUpstreams;
}

/**
 * `/v1/mcp`: one MCP server (the SDK's, over Streamable HTTP, a session per client) in front of
 * every registered tool server. What it offers is theirs, namespaced `<server>__<name>`, and only
 * what the token's `tools` patterns allow: tools and prompts by their namespaced name, resources by
 * their namespaced URI. Tool calls are governed and recorded (`governedCall`). A session is held by
 * the token that opened it, and only by it.
 */
export class McpDoor {
  readonly #sessions = new McpSessions({
    servedBy: 'gateway',
    perHolder: SESSIONS_PER_TOKEN,
    serverOf: (sdk) => this.#serverOf(sdk),
  });

  constructor(private readonly deps: McpDoorDeps) {}

  /** Serves one request of a user token: a new session's `initialize`, or a request of its session. */
  async handle(caller: Caller, req: ServedRequest, res: ServedResponse, signal: AbortSignal): Promise<void> {
    const session = await this.#sessions.sessionOf(req, caller.tokenId);
    const withAuth = req as ServedRequest & {
      auth?: { token: string; clientId: string; scopes: string[]; extra: Record<string, unknown> };
    };
    withAuth.auth = { token: '', clientId: caller.tokenId, scopes: [], extra: { ...caller } };
    // Its caller lost its rights (a token revoked, a studio paused) while a stream was open: it ends.
    signal.addEventListener('abort', () => res.destroy(), { once: true });
    await this.#sessions.serve(session, withAuth, res);
  }

  /** Tells every session that the tools changed (a tool server said so). */
  toolsChanged(): void {
    this.#sessions.toolsChanged();
  }

  /** Ends every session (their streams close; clients initialize again). */
  close(): Promise<void> {
    return this.#sessions.close();
  }

  #serverOf(sdk: McpSdk): Server {
    const { types } = sdk;
    const server = new sdk.Server(
      { name: 'studio-gateway', version: '1.0.0' },
      {
        capabilities: { tools: { listChanged: true }, resources: {}, prompts: {} },
        instructions:
          'Tools, resources and prompts of the tool servers behind this gateway, named <server>__<name>.',
      },
    );
    const { gw, upstreams } = this.deps;
    const servers = () => [...gw.projections.state(mcpServersProjection).byId.values()];
    const patternsOf = (caller: Caller) => gw.projections.state(mcpAccessProjection).get(caller.tokenId);
    const named = (namespaced: string) => {
      const at = namespaced.indexOf(SEPARATOR);
      const server =
        at > 0 ? gw.projections.state(mcpServersProjection).byId.get(namespaced.slice(0, at)) : undefined;
      return server && { server, name: namespaced.slice(at + SEPARATOR.length) };
    };
    const ns = (server: McpServerRecord, name: string) => `${server.id}${SEPARATOR}${name}`;
    const refused = (what: string, name: string) =>
      new types.McpError(types.ErrorCode.InvalidParams, `no ${what} ${name} this token may use`);
    /** Every server's items of one list, namespaced and filtered; a server that fails is left out. */
    const everyServer = async <T>(
      caller: Caller,
      capability: 'tools' | 'resources' | 'prompts',
      list: (
        client: Client,
        cursor: string | undefined,
        options: { timeout: number },
      ) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
      rename: (server: McpServerRecord, item: T) => T & { access: string },
    ): Promise<T[]> => {
      const patterns = patternsOf(caller);
      const reachable = servers().filter((server) => mayReach(patterns, server.id));
      const lists = await Promise.all(
        reachable.map(async (server) => {
          try {
            const items = await upstreams.request(server, async (client, options) => {
              if (!client.getServerCapabilities()?.[capability]) return [];
              const all: T[] = [];
              let cursor: string | undefined;
              for (let page = 0; page < MAX_PAGES; page++) {
                const answer = await list(client, cursor, options);
                all.push(...answer.items);
                cursor = answer.nextCursor;
                if (cursor === undefined) break;
              }
              return all;
            });
            return items
              .map((item) => rename(server, item))
              .filter((item) => allowsTool(patterns, item.access));
          } catch (error) {
            gw.logger.warn({ server: server.id, err: error }, `MCP server left out of ${capability}`);
            return [];
          }
        }),
      );
      return lists.flat().map(({ access: _access, ...item }) => item as T);
    };
    const callerOf = (extra: { authInfo?: { extra?: Record<string, unknown> } }): Caller => {
      const said = extra.authInfo?.extra ?? {};
      const { studioId, tokenId, requestId } = said;
      if (typeof studioId !== 'string' || typeof tokenId !== 'string' || typeof requestId !== 'string')
        throw new types.McpError(types.ErrorCode.InvalidRequest, 'no credential with this request');
      return { studioId, tokenId, requestId };
    };
    const mcpError = (error: unknown) => {
      if (error instanceof types.McpError) return error;
      if (error instanceof CallRefused)
        return new types.McpError(types.ErrorCode.InvalidRequest, error.message, { code: error.status });
      if (error instanceof UpstreamFailure)
        return new types.McpError(types.ErrorCode.InternalError, error.message);
      gw.logger.error({ err: error }, 'MCP request failed');
      return new types.McpError(types.ErrorCode.InternalError, `the gateway failed: ${messageOf(error)}`);
    };
    const guarded =
      <R, E>(work: (request: R, extra: E) => Promise<ServerResult>) =>
      async (request: R, extra: E): Promise<ServerResult> => {
        try {
          return await work(request, extra);
        } catch (error) {
          throw mcpError(error);
        }
      };

    server.setRequestHandler(
      types.ListToolsRequestSchema,
      guarded(async (_request, extra) => ({
        tools: await everyServer(
          callerOf(extra),
          'tools',
          async (client, cursor, options) => {
            const answer = await client.listTools(cursor === undefined ? {} : { cursor }, options);
            return { items: answer.tools, nextCursor: answer.nextCursor };
          },
          (server, tool) => ({ ...tool, name: ns(server, tool.name), access: ns(server, tool.name) }),
        ),
      })),
    );
    server.setRequestHandler(
      types.CallToolRequestSchema,
      guarded(async (request, extra) => {
        const caller = callerOf(extra);
        const { name } = request.params;
        const args = request.params.arguments ?? {};
        const found = named(name);
        if (!found || !allowsTool(patternsOf(caller), name)) {
          await callNote(gw, caller, found?.server.id ?? '', found?.name ?? name, args)('not_allowed');
          throw refused('tool', name);
        }
        return governedCall(this.deps, caller, found.server, found.name, args, async () => {
          const result = await upstreams.request(
            found.server,
            (client, options) => client.callTool({ name: found.name, arguments: args }, undefined, options),
            extra.signal,
          );
          return { result, isError: result.isError === true, bytes: McpUpstreams.sizeOf(result) };
        });
      }),
    );
    server.setRequestHandler(
      types.ListResourcesRequestSchema,
      guarded(async (_request, extra) => ({
        resources: await everyServer(
          callerOf(extra),
          'resources',
          async (client, cursor, options) => {
            const answer = await client.listResources(cursor === undefined ? {} : { cursor }, options);
            return { items: answer.resources, nextCursor: answer.nextCursor };
          },
          (server, resource) => ({
            ...resource,
            uri: ns(server, resource.uri),
            name: ns(server, resource.name),
            access: ns(server, resource.uri),
          }),
        ),
      })),
    );
    server.setRequestHandler(
      types.ListResourceTemplatesRequestSchema,
      guarded(async (_request, extra) => ({
        resourceTemplates: await everyServer(
          callerOf(extra),
          'resources',
          async (client, cursor, options) => {
            const answer = await client.listResourceTemplates(
              cursor === undefined ? {} : { cursor },
              options,
            );
            return { items: answer.resourceTemplates, nextCursor: answer.nextCursor };
          },
          (server, template) => ({
            ...template,
            uriTemplate: ns(server, template.uriTemplate),
            name: ns(server, template.name),
            access: ns(server, template.uriTemplate),
          }),
        ),
      })),
    );
    server.setRequestHandler(
      types.ReadResourceRequestSchema,
      guarded(async (request, extra) => {
        const { uri } = request.params;
        const found = named(uri);
        if (!found || !allowsTool(patternsOf(callerOf(extra)), uri)) throw refused('resource', uri);
        const answer = await upstreams.request(
          found.server,
          (client, options) => client.readResource({ uri: found.name }, options),
          extra.signal,
        );
        return {
          ...answer,
          contents: answer.contents.map((content) => ({ ...content, uri: ns(found.server, content.uri) })),
        };
      }),
    );
    server.setRequestHandler(
      types.ListPromptsRequestSchema,
      guarded(async (_request, extra) => ({
        prompts: await everyServer(
          callerOf(extra),
          'prompts',
          async (client, cursor, options) => {
            const answer = await client.listPrompts(cursor === undefined ? {} : { cursor }, options);
            return { items: answer.prompts, nextCursor: answer.nextCursor };
          },
          (server, prompt) => ({ ...prompt, name: ns(server, prompt.name), access: ns(server, prompt.name) }),
        ),
      })),
    );
    server.setRequestHandler(
      types.GetPromptRequestSchema,
      guarded(async (request, extra) => {
        const { name } = request.params;
        const found = named(name);
        if (!found || !allowsTool(patternsOf(callerOf(extra)), name)) throw refused('prompt', name);
        return upstreams.request(
          found.server,
          (client, options) =>
            client.getPrompt(
              {
                name: found.name,
                ...(request.params.arguments ? { arguments: request.params.arguments } : {}),
              },
              options,
            ),
          extra.signal,
        );
      }),
    );
    return server;
  }
}
