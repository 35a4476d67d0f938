import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ServedRequest, ServedResponse } from '../../../shared/http/request.ts';
import { STUDIO_VERSION } from '../../../shared/paths.ts';
import type { McpSdk } from '../../mcp/sdk.ts';
import { McpSessions } from '../../mcp/sessions.ts';
import type { PluginManager } from '../plugins/manager.ts';
import { ACTION_DEADLINE_MS, actionTools, callActionTool } from './tools.ts';

/** Sessions held at once; a new one past that closes the oldest. */
const MAX_SESSIONS = 64;

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
  readonly #sessions = new McpSessions({
    servedBy: 'runtime',
    perHolder: MAX_SESSIONS,
    serverOf: (sdk) => this.#serverOf(sdk),
  });
  readonly #unsubscribe: () => void;
  /** The tool list last told to clients, to tell them only when it changes. */
  #told: string;

  constructor(
    private readonly plugins: PluginManager,
    private readonly options: RuntimeMcpOptions = {},
  ) {
    this.#told = this.#toolsKey();
    this.#unsubscribe = plugins.onChange(() => this.#toolsMayHaveChanged());
  }

  /** Serves one request: a new session's `initialize`, or a request of a session. */
  async handle(req: ServedRequest, res: ServedResponse): Promise<void> {
    await this.#sessions.serve(await this.#sessions.sessionOf(req), req, res);
  }

  /** Ends every session (their streams close; clients initialize again) and stops following the plugins. */
  async close(): Promise<void> {
    this.#unsubscribe();
    await this.#sessions.close();
  }

  #toolsKey(): string {
    return JSON.stringify(actionTools(this.plugins));
  }

  #toolsMayHaveChanged(): void {
    const key = this.#toolsKey();
    if (key === this.#told) return;
    this.#told = key;
    this.#sessions.toolsChanged();
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
