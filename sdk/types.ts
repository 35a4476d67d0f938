/**
 * The shapes of the session routes (`/api/sdk/*`), as clients see them: inferred from the schemas
 * the server's views are typed by (`services/sessions/schemas.ts`), so the two cannot drift.
 */
import type { HistoryEvent, PartDelta } from '../services/sessions/schemas.js';

export type {
  ApiErrorBody,
  Attachment,
  CompletedTurn,
  HistoryEvent,
  HistoryPage,
  Message,
  MessageUsage,
  Page,
  Part,
  PartDelta,
  QueuedTurn,
  Session,
  SystemInfo,
  ToolState,
} from '../services/sessions/schemas.js';

/** What `events()` yields: stored events (with their revision) and live token deltas (without). */
export type SessionStreamItem =
  | ({ kind: 'event' } & HistoryEvent)
  | ({ kind: 'delta' } & Pick<PartDelta, 'messageId' | 'partId' | 'delta'>);
