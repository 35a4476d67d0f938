import { z } from 'zod';
import { isStorableIdentifier, type StoredEvent } from '../../shared/event-store/types.ts';

/** An event as the audit log shows it. Secrets were never in the log: env values are sealed, tokens hashed. */
export function auditView(event: StoredEvent) {
  return {
    position: event.position,
    stream: event.streamId,
    revision: event.revision,
    id: event.id,
    type: event.type,
    data: event.data,
    actor: event.metadata.actor,
    request_id: event.metadata.requestId ?? null,
    correlation_id: event.metadata.correlationId ?? null,
    causation_id: event.metadata.causationId ?? null,
    time: event.createdAt,
  };
}

export type AuditEventView = ReturnType<typeof auditView>;

/** `stream=`: one stream id of the log. */
export const streamFilter = z
  .string()
  .min(1)
  .max(300)
  .refine(isStorableIdentifier, 'a stream id cannot hold a NUL character or an unpaired surrogate');

/** `type=`: an event type, or several separated by commas. */
export const typeFilter = z
  .string()
  .regex(/^[A-Za-z0-9_]+(,[A-Za-z0-9_]+)*$/, 'an event type, or several separated by commas');
