/** What the runtime's plugin routes answer (`services/runtime/routes/plugins.ts`), as the console reads it. */
export interface Availability {
  enabled: boolean;
  available: boolean;
  reasons: string[];
}

export interface PluginActionSummary {
  name: string;
  description: string;
  supportsCommand: boolean;
  supportsApi: boolean;
  apiMethod: string;
  apiPath: string;
  /** The action's input as JSON Schema. */
  input: unknown;
}

/** An item of `GET /api/ui/plugins`. */
export interface PluginSummary {
  name: string;
  actions: string[];
  guards: string[];
  effects: string[];
  pipelines: string[];
  resolves: string[];
  availability: Availability;
  config: { actions: PluginActionSummary[] };
}

/** An item of `GET /api/plugins/list`, and the answer of a control. */
export interface PluginStatus {
  name: string;
  version: string;
  state: 'stopped' | 'starting' | 'running' | 'failed';
  error: string | null;
  started_at: string | null;
  availability: Availability;
}
