import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ApiError } from '../../shared/errors.ts';
import type { ServedRequest, ServedResponse } from '../../shared/http/request.ts';
import { ResumeStore } from './resume-store.ts';
import { type McpSdk, mcpSdk } from './sdk.ts';

/** Events each session keeps for clients resuming a stream. */
const RESUMABLE_EVENTS = 1_000;

/** A client's session: its own SDK server over the SDK's Streamable HTTP transport. */
export interface McpSession {
  transport: StreamableHTTPServerTransport;
  server: Server;
  /** Who opened it, and alone may use it (`undefined` where there are no identities). */
  holder: string | undefined;
}

export interface McpSessionsOptions {
  /** What serves them, as said in errors: `gateway`, `runtime`. */
  servedBy: string;
  /** The sessions one holder may hold at once; a new one past that closes its oldest. */
  perHolder: number;
  /** A new session's server, its handlers set. */
  serverOf(sdk: McpSdk): Server;
}

/**
 * The sessions of an MCP endpoint over Streamable HTTP, by their `Mcp-Session-Id`: one opened by
 * each `initialize`, forgotten when it ends, all ended by `close`. Answers under way (the sessions'
 * SSE streams among them) are ended with them.
 */
export class McpSessions {
  readonly #sessions = new Map<string, McpSession>();
  readonly #answering = new Set<ServedResponse>();
  #closed = false;

  constructor(private readonly options: McpSessionsOptions) {}

  /**
   * The session a request is for: its `Mcp-Session-Id`'s (another holder's is answered as if it did
   * not exist), or a new one for an `initialize`.
   */
  async sessionOf(req: ServedRequest, holder?: string): Promise<McpSession> {
    const { servedBy } = this.options;
    if (this.#closed) throw new ApiError('unavailable', `the ${servedBy} is stopping: connect again shortly`);
    const sdk = await mcpSdk();
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = this.#sessions.get(sessionId);
      if (!session || session.holder !== holder)
        throw new ApiError(
          'not_found',
          `no such MCP session (it ended, or the ${servedBy} restarted): initialize again`,
        );
      return session;
    }
    if (req.method === 'POST' && sdk.types.isInitializeRequest(req.body)) return this.#open(sdk, holder);
    throw new ApiError(
      'validation_failed',
      'send initialize first, then its Mcp-Session-Id header with every request',
    );
  }

  /** Answers a request of `session` (its answer ended by `close` if still under way). */
  async serve(session: McpSession, req: ServedRequest, res: ServedResponse): Promise<void> {
    this.#answering.add(res);
    res.once('close', () => this.#answering.delete(res));
    await session.transport.handleRequest(req, res, req.body);
  }

  /** Tells every session that the tools changed. */
  toolsChanged(): void {
    for (const session of this.#sessions.values())
      session.server.sendToolListChanged().catch(() => undefined);
  }

  /** Ends every session (their streams close; clients initialize again). */
  async close(): Promise<void> {
    this.#closed = true;
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(sessions.map((session) => session.transport.close()));
    // Their connections too: a client's stream would otherwise hold the server's close open.
    for (const res of this.#answering) res.destroy();
    this.#answering.clear();
  }

  async #open(sdk: McpSdk, holder: string | undefined): Promise<McpSession> {
    const held = [...this.#sessions].filter(([, s]) => s.holder === holder);
    if (held.length >= this.options.perHolder) {
      const [oldestId, oldest] = held[0]!;
      this.#sessions.delete(oldestId);
      void oldest.transport.close();
    }
    const server = this.options.serverOf(sdk);
    const transport: StreamableHTTPServerTransport = new sdk.StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new ResumeStore(RESUMABLE_EVENTS),
      onsessioninitialized: (id) => {
        this.#sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        this.#sessions.delete(id);
      },
    });
    const session: McpSession = { transport, server, holder };
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined && this.#sessions.get(id) === session) this.#sessions.delete(id);
    };
    await server.connect(transport);
    return session;
  }
}
