import type { Readiness } from '../../../shared/http/probes.ts';
import type { SessionService } from '../../sessions/service.ts';
import type { RuntimeMcpDoor } from '../mcp/door.ts';
import type { PluginManager } from '../plugins/manager.ts';

export interface RuntimeRouteDeps {
  plugins: PluginManager;
  /** `/api/mcp`: the plugin actions as an MCP server. */
  mcp: RuntimeMcpDoor;
  sessions: SessionService;
  workspace: string;
  model: string;
  /** When set, every `/api/*` route needs `Authorization: Bearer <token>`. */
  runtimeToken: string | undefined;
  chat: {
    isConversation(id: string): boolean;
    receiveFromDashboard(id: string, text: string): Promise<unknown>;
  };
  status: () => Record<string, unknown>;
  /** GET /ready: 200 when the log answers, the read models are live and the runtime is not draining. */
  ready: () => Promise<Readiness>;
  /** The body of GET /health: `status` ok or degraded, and why. */
  health: () => Record<string, unknown>;
}
