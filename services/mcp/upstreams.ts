import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { Agent, fetch as undiciFetch } from 'undici';
import { messageOf } from '../../shared/errors.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import { guardedLookup } from '../ai/upstream-address.ts';
import { mcpSdk } from './sdk.ts';
import type { McpServerRecord } from './servers/read-model.ts';

export interface McpUpstreamOptions {
  /** A request to a tool server (a call, a list, a read) fails past this. Default 60 s. */
  callTimeoutMs?: number;
  /** Connecting and the MCP handshake fail past this. Default 30 s. */
  connectTimeoutMs?: number;
  /** The largest answer of a tool server passed on, as JSON bytes. Default 4 MiB. */
  maxResultBytes?: number;
  /** `STUDIO_MCP_STDIO=allow`: stdio servers are started; otherwise one registered before is refused. */
  stdioAllowed?: boolean;
  /** `STUDIO_ALLOW_PRIVATE_UPSTREAMS`: URLs may lead to link-local and cloud metadata addresses. */
  allowPrivateUpstreams?: boolean;
}

interface Upstream {
  /** The record it was made from: a changed server is connected again. */
  server: McpServerRecord;
  connected: Promise<Client>;
  close(): Promise<void>;
}

/** A tool server's failure, said to the MCP client as an MCP error. */
export class UpstreamFailure extends Error {
  override readonly name = 'UpstreamFailure';
}

/**
 * One shared MCP client per registered server, connected on first use: restarted on the next use
 * after it died (its program exited, its connection closed), closed when the server is changed or
 * removed and when the gateway closes. Every request has a deadline and a bound on its answer.
 */
export class McpUpstreams {
  readonly #upstreams = new Map<string, Upstream>();
  readonly #callTimeoutMs: number;
  readonly #connectTimeoutMs: number;
  readonly #maxResultBytes: number;
  readonly #options: McpUpstreamOptions;
  /** HTTP servers are reached through it: each name resolved is checked before it is connected to. */
  #guarded: Agent | undefined;
  #closed = false;

  constructor(
    private readonly gw: Pick<GatewayContext, 'secrets' | 'logger'>,
    /** Told when a server says its tools changed (`notifications/tools/list_changed`). */
    private readonly toolsChanged: (serverId: string) => void,
    options: McpUpstreamOptions = {},
  ) {
    this.#callTimeoutMs = options.callTimeoutMs ?? 60_000;
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 30_000;
    this.#maxResultBytes = options.maxResultBytes ?? 4 * 1024 * 1024;
    this.#options = options;
  }

  /**
   * Runs `request` on the server's client with its deadline; a failure (the server gone, too slow,
   * an answer too large) is an `UpstreamFailure` saying which server. MCP errors the server
   * answered pass through as they are.
   */
  async request<T>(
    server: McpServerRecord,
    request: (client: Client, options: { timeout: number; signal?: AbortSignal }) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const { types } = await mcpSdk();
    const client = await this.#client(server);
    let answer: T;
    try {
      answer = await request(client, { timeout: this.#callTimeoutMs, ...(signal ? { signal } : {}) });
    } catch (error) {
      // An error the server answered passes on; its client stays.
      const answered =
        error instanceof types.McpError &&
        error.code !== types.ErrorCode.ConnectionClosed &&
        error.code !== types.ErrorCode.RequestTimeout;
      if (answered || signal?.aborted) throw error;
      // Gone, unreachable or hung: the next use connects (or starts it) again.
      if (this.#upstreams.get(server.id)?.server.updated_at === server.updated_at) this.forget(server.id);
      const timedOut = error instanceof types.McpError && error.code === types.ErrorCode.RequestTimeout;
      throw new UpstreamFailure(
        timedOut
          ? `MCP server ${server.id} did not answer within ${this.#callTimeoutMs / 1000} s`
          : `MCP server ${server.id} failed: ${messageOf(error)}`,
      );
    }
    const size = McpUpstreams.sizeOf(answer);
    if (size > this.#maxResultBytes)
      throw new UpstreamFailure(
        `MCP server ${server.id} answered ${size} bytes, more than the ${this.#maxResultBytes} passed on`,
      );
    return answer;
  }

  /** The JSON size of an answer, as the bound counts it. */
  static sizeOf(answer: unknown): number {
    return Buffer.byteLength(JSON.stringify(answer) ?? '');
  }

  /** Closes the server's connection (changed or removed): the next use connects again. */
  forget(serverId: string): void {
    const upstream = this.#upstreams.get(serverId);
    if (!upstream) return;
    this.#upstreams.delete(serverId);
    void upstream.close();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const closing = [...this.#upstreams.values()];
    this.#upstreams.clear();
    await Promise.allSettled(closing.map((upstream) => upstream.close()));
    // The agent is left open: a closing client may still send (its session's DELETE), and undici
    // keeps no idle socket from holding the process.
  }

  #client(server: McpServerRecord): Promise<Client> {
    if (this.#closed) throw new UpstreamFailure('the gateway is closing');
    const known = this.#upstreams.get(server.id);
    if (known && known.server.updated_at === server.updated_at) return known.connected;
    if (known) this.forget(server.id);
    const upstream = this.#connect(server);
    this.#upstreams.set(server.id, upstream);
    // A connection that could not be made is not kept: the next use tries again.
    upstream.connected.catch(() => {
      if (this.#upstreams.get(server.id) === upstream) this.#upstreams.delete(server.id);
    });
    return upstream.connected;
  }

  #connect(server: McpServerRecord): Upstream {
    let transport: Transport | undefined;
    let client: Client | undefined;
    const upstream: Upstream = {
      server,
      connected: (async () => {
        const sdk = await mcpSdk();
        try {
          transport = await this.#transportOf(server);
        } catch (error) {
          throw new UpstreamFailure(`MCP server ${server.id} cannot be reached: ${messageOf(error)}`);
        }
        client = new sdk.Client({ name: 'studio-gateway', version: '1.0.0' });
        client.setNotificationHandler(sdk.types.ToolListChangedNotificationSchema, () =>
          this.toolsChanged(server.id),
        );
        client.onclose = () => {
          // It died (or was closed): the next use starts it again.
          if (this.#upstreams.get(server.id) === upstream) {
            this.#upstreams.delete(server.id);
            this.gw.logger.warn({ server: server.id }, 'MCP server connection closed');
          }
        };
        try {
          await client.connect(transport, { timeout: this.#connectTimeoutMs });
        } catch (error) {
          await client.close().catch(() => undefined);
          throw new UpstreamFailure(`MCP server ${server.id} could not be reached: ${messageOf(error)}`);
        }
        return client;
      })(),
      close: async () => {
        await upstream.connected.catch(() => undefined);
        await client?.close().catch(() => undefined);
      },
    };
    return upstream;
  }

  async #transportOf(server: McpServerRecord): Promise<Transport> {
    const sdk = await mcpSdk();
    const decrypt = (values: Record<string, string>) =>
      Object.fromEntries(Object.entries(values).map(([k, v]) => [k, this.gw.secrets.decrypt(v)]));
    if (server.transport === 'stdio') {
      if (!this.#options.stdioAllowed)
        throw new Error('stdio servers are off on this gateway (STUDIO_MCP_STDIO=allow turns them on)');
      // Never the gateway's own environment (its keys): PATH and HOME, and the server's variables.
      // The SDK adds a few of the parent's (USER, SHELL …) to any env it is given: each is named
      // here as undefined, which Node leaves out of the child's environment.
      const withheld = Object.fromEntries(sdk.inheritedEnv.map((key) => [key, undefined]));
      const env: Record<string, string | undefined> = {
        ...withheld,
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ...decrypt(server.encryptedEnv),
      };
      return new sdk.StdioClientTransport({
        command: server.command,
        args: server.args,
        env: env as Record<string, string>,
        stderr: 'ignore',
      });
    }
    const options = { requestInit: { headers: decrypt(server.encryptedHeaders) }, fetch: this.#fetch() };
    const url = new URL(server.url);
    return server.transport === 'http'
      ? new sdk.StreamableHTTPClientTransport(url, options)
      : new sdk.SSEClientTransport(url, options);
  }

  /** The fetch HTTP servers are reached with: never to a link-local or metadata address unless allowed. */
  #fetch(): (url: string | URL, init?: RequestInit) => Promise<Response> {
    if (this.#options.allowPrivateUpstreams) return fetch;
    this.#guarded ??= new Agent({ connect: { lookup: guardedLookup } });
    const dispatcher = this.#guarded;
    // undici's own fetch, to go through its Agent: its Request and Response are the web's.
    return async (url, init) =>
      (await undiciFetch(url, {
        ...(init as Parameters<typeof undiciFetch>[1]),
        dispatcher,
      })) as unknown as Response;
  }
}
