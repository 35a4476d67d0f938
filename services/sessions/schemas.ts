import { z } from 'zod';

/**
 * The shapes of a session as the session routes (`/api/sdk/*`) answer them: the one source of the
 * server's views (`projections/sessions.ts`), the session events' parts and the SDK's types
 * (`sdk/types.ts` infers from here). This module imports nothing but zod and the zod-only error
 * envelope of `shared/`: the SDK build compiles it.
 */

export const ToolState = z.enum(['pending', 'running', 'completed', 'error']);
export type ToolState = z.infer<typeof ToolState>;

/** A message is made of parts (OpenCode's model): text, files, tool calls, reasoning. */
export const Part = z.discriminatedUnion('type', [
  z.strictObject({ id: z.string(), type: z.literal('text'), text: z.string() }),
  z.strictObject({ id: z.string(), type: z.literal('reasoning'), text: z.string() }),
  z.strictObject({
    id: z.string(),
    type: z.literal('file'),
    name: z.string(),
    path: z.string(),
    mime_type: z.string(),
  }),
  z.strictObject({
    id: z.string(),
    type: z.literal('tool'),
    call_id: z.string(),
    tool: z.string(),
    state: ToolState,
    input: z.unknown(),
    output: z.unknown().optional(),
    error: z.string().optional(),
  }),
]);
export type Part = z.infer<typeof Part>;

export const SessionKind = z.enum(['api', 'dashboard', 'chat', 'sdk']);
export type SessionKind = z.infer<typeof SessionKind>;

export const MessageRole = z.enum(['user', 'assistant']);
export type MessageRole = z.infer<typeof MessageRole>;

const revision = z.number().int().min(0);

export const Session = z.strictObject({
  id: z.string(),
  title: z.string(),
  model: z.string(),
  system: z.string(),
  kind: SessionKind,
  chat_id: z.string().nullable(),
  status: z.enum(['idle', 'busy']),
  parent_id: z.string().nullable(),
  forked_from: z.strictObject({ session_id: z.string(), revision }).nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  /** The revision of the session's stream this record reflects. */
  revision,
});
export type Session = z.infer<typeof Session>;

export const Message = z.strictObject({
  id: z.string(),
  role: MessageRole,
  parts: z.array(Part),
  created_at: z.string(),
});
export type Message = z.infer<typeof Message>;

/**
 * What an assistant message's model call used, as its `MessageCompleted` event records it (`usage`,
 * null for a user's message or a call that reported none).
 */
export const MessageUsage = z.strictObject({
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  /**
   * The call's cost in USD at the gateway's price of its model, 0 when the model has none. Absent
   * when the runtime could not read the gateway's prices, and in events recorded before it did.
   */
  costUsd: z.number().min(0).optional(),
});
export type MessageUsage = z.infer<typeof MessageUsage>;

/** One stored event of a session's stream: a `/history` item, and the data of an SSE frame with an id. */
export const HistoryEvent = z.strictObject({
  type: z.string(),
  data: z.record(z.string(), z.unknown()),
  revision,
  time: z.string(),
});
export type HistoryEvent = z.infer<typeof HistoryEvent>;

/** A token delta of a part being written: the data of a `part.delta` SSE frame, never stored. */
export const PartDelta = z.strictObject({
  type: z.literal('part.delta'),
  sessionId: z.string(),
  messageId: z.string(),
  partId: z.string(),
  delta: z.string(),
});
export type PartDelta = z.infer<typeof PartDelta>;

/** An attachment given inline with a prompt. */
export const Attachment = z.strictObject({
  type: z.string().min(1).max(50),
  fileName: z.string().min(1).max(255),
  contentType: z.string().min(1).max(200),
  content: z.string(),
});
export type Attachment = z.infer<typeof Attachment>;

export const SystemInfo = z.strictObject({
  model: z.string(),
  system: z.string(),
  plugin_system: z.string(),
  plugins: z.array(z.string()),
  tools: z.array(z.strictObject({ name: z.string(), description: z.string() })),
});
export type SystemInfo = z.infer<typeof SystemInfo>;

/** The answer to a prompt that waited for its turn. */
export const CompletedTurn = z.strictObject({
  turn_id: z.string(),
  status: z.literal('completed'),
  message: Message.nullable(),
});
export type CompletedTurn = z.infer<typeof CompletedTurn>;

/** What `DELETE /api/sdk/sessions/:id` answers. */
export const DeletedSession = z.strictObject({ id: z.string(), deleted: z.literal(true) });
export type DeletedSession = z.infer<typeof DeletedSession>;

/** The answer to a prompt with `wait: false` (202). */
export const QueuedTurn = z.strictObject({
  queued: z.literal(true),
  queueItemId: z.string(),
  queuePosition: z.number().int(),
});
export type QueuedTurn = z.infer<typeof QueuedTurn>;

/** A page of a list ordered by an opaque cursor (sessions, messages). */
export const pageOf = <Item extends z.ZodType>(item: Item) =>
  z.strictObject({ items: z.array(item), next_cursor: z.string().nullable() });

/** A page of `/history`: `next_after` is the revision to read after, null at the end. */
export const HistoryPage = z.strictObject({
  items: z.array(HistoryEvent),
  next_after: revision.nullable(),
});
export type HistoryPage = z.infer<typeof HistoryPage>;

/** A page of a list ordered by an opaque cursor (sessions, messages). */
export type Page<Item> = z.infer<ReturnType<typeof pageOf<z.ZodType<Item>>>>;

/** The error envelope of every non-2xx answer, shared with the gateway (`shared/error-envelope.ts`). */
export { ApiErrorBody } from '../../shared/error-envelope.ts';
