import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ApiError } from '../../../shared/errors.ts';
import type { ServedRequest, ServedResponse } from '../../../shared/http/request.ts';
import { STUDIO_VERSION } from '../../../shared/paths.ts';
import { ResumeStore } from '../../mcp/resume-store.ts';
import { type McpSdk, mcpSdk } from '../../mcp/sdk.ts';
import type { PluginManager } from '../plugins/manager.ts';
import { ACTION_DEADLINE_MS, actionTools, callActionTool } from './tools.ts';

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
}

/** Sessions held at once; a new one past that closes the oldest. */
const MAX_SESSIONS = 64;
/** Events each session keeps for clients resuming a stream. */
const RESUMABLE_EVENTS = 1_000;

export interface RuntimeMcpOptions {
  /** How long a tool call may wait for its action (default `ACTION_DEADLINE_MS`). */
  deadlineMs?: number;
}

/**
 * `/api/mcp`: the runtime's plugin actions as one MCP server (the SDK's, over Streamable HTTP, a
 * session per client). Its tools are the running plugins' actions, `<plugin>__<action>`; a call
 * runs the action as `/api/plugins/action` does. Whoever got past the runtime's guards may use it:
 * the runtime has no identities, so any session is anyone's who names it.
 */
export class RuntimeMcpDoor {
  readonly #sessions = new Map<string, Session>();
  /** Answers under way (the sessions' SSE streams among them), ended when the door closes. */
  readonly #answering = new Set<ServedResponse>();
  readonly #unsubscribe: () => void;
  /** The tool list last told to clients, to tell them only when it changes. */
  #told: string;
  #closed = false;

  constructor(
    private readonly plugins: PluginManager,
    private readonly options: RuntimeMcpOptions = {},
  ) {
    this.#told = this.#toolsKey();
    this.#unsubscribe = plugins.onChange(() => this.#toolsMayHaveChanged());
  }

  /** Serves one request: a new session's `initialize`, or a request of a session. */
  async handle(req: ServedRequest, res: ServedResponse): Promise<void> {
    if (this.#closed) throw new ApiError('unavailable', 'the runtime is stopping: connect again shortly');
    const sdk = await mcpSdk();
    const sessionId = req.headers['mcp-session-id'];
    let session: Session | undefined;
    if (typeof sessionId === 'string') {
      session = this.#sessions.get(sessionId);
      if (!session)
        throw new ApiError(
          'not_found',
          'no such MCP session (it ended, or the runtime restarted): initialize again',
        );
    } else if (req.method === 'POST' && sdk.types.isInitializeRequest(req.body)) {
      session = await this.#open(sdk);
    } else {
      throw new ApiError(
        'validation_failed',
        'send initialize first, then its Mcp-Session-Id header with every request',
      );
    }
    this.#answering.add(res);
    res.once('close', () => this.#answering.delete(res));
    await session.transport.handleRequest(req, res, req.body);
  }

  /** Ends every session (their streams close; clients initialize again) and stops following the plugins. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#unsubscribe();
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(sessions.map((session) => session.transport.close()));
    for (const res of this.#answering) res.destroy();
    this.#answering.clear();
  }

  #toolsKey(): string {
    return JSON.stringify(actionTools(this.plugins));
  }

  #toolsMayHaveChanged(): void {
    const key = this.#toolsKey();
    if (key === this.#told) return;
    this.#told = key;
    for (const session of this.#sessions.values())
      session.server.sendToolListChanged().catch(() => undefined);
  }

  async #open(sdk: McpSdk): Promise<Session> {
    if (this.#sessions.size >= MAX_SESSIONS) {
      const [oldestId, oldest] = this.#sessions.entries().next().value!;
      this.#sessions.delete(oldestId);
      void oldest.transport.close();
    }
    const server = this.#serverOf(sdk);
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
    const session: Session = { transport, server };
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined && this.#sessions.get(id) === session) this.#sessions.delete(id);
    };
    await server.connect(transport);
    return session;
  }

  #serverOf(sdk: McpSdk): Server {
    const { types } = sdk;
    const server = new sdk.Server(
      { name: 'studio-runtime', version: STUDIO_VERSION },
      {
        capabilities: { tools: { listChanged: true } },
        instructions: "The agent runtime's plugin actions, named <plugin>__<action>.",
      },
    );
    server.setRequestHandler(types.ListToolsRequestSchema, async () => ({
      tools: actionTools(this.plugins),
    }));
    server.setRequestHandler(types.CallToolRequestSchema, async (request, extra) =>
      callActionTool(this.plugins, request.params.name, request.params.arguments ?? {}, {
        signal: extra.signal,
        deadlineMs: this.options.deadlineMs ?? ACTION_DEADLINE_MS,
      }),
    );
    return server;
  }
}
