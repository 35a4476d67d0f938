/** The shapes of the session routes (`/api/sdk/*`), as clients see them. */

export type ToolState = 'pending' | 'running' | 'completed' | 'error';

export type Part =
  | { id: string; type: 'text'; text: string }
  | { id: string; type: 'reasoning'; text: string }
  | { id: string; type: 'file'; name: string; path: string; mime_type: string }
  | {
      id: string;
      type: 'tool';
      call_id: string;
      tool: string;
      state: ToolState;
      input: unknown;
      output?: unknown;
      error?: string;
    };

export interface Session {
  id: string;
  title: string;
  model: string;
  system: string;
  kind: 'api' | 'dashboard' | 'chat' | 'sdk';
  chat_id: string | null;
  status: 'idle' | 'busy';
  parent_id: string | null;
  forked_from: { session_id: string; revision: number } | null;
  created_at: string;
  updated_at: string;
  revision: number;
}

export interface Message {
  id: string;
  role: 'user' | 'assistant';
  parts: Part[];
  created_at: string;
}

/** One stored event of a session's stream. */
export interface HistoryEvent {
  type: string;
  data: Record<string, unknown>;
  revision: number;
  time: string;
}

export interface SystemInfo {
  model: string;
  system: string;
  plugin_system: string;
  plugins: string[];
  tools: { name: string; description: string }[];
}

export interface Attachment {
  type: string;
  fileName: string;
  contentType: string;
  content: string;
}

export interface CompletedTurn {
  turn_id: string;
  status: 'completed';
  message: Message | null;
}

export interface QueuedTurn {
  queued: true;
  queueItemId: string;
  queuePosition: number;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** What `events()` yields: stored events (with their revision) and live token deltas (without). */
export type SessionStreamItem =
  | ({ kind: 'event' } & HistoryEvent)
  | { kind: 'delta'; messageId: string; partId: string; delta: string };

export interface ApiErrorBody {
  error: {
    type: string;
    code: string;
    message: string;
    param?: string;
    details?: unknown;
    request_id: string;
  };
}
