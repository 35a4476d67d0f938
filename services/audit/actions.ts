import { z } from 'zod';
import { isStorableIdentifier, type StoredEvent } from '../../shared/event-store/types.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import { defineAction, defineService } from '../../shared/http/action.ts';
import { verifyLog } from './verify.ts';

const MAX_LIMIT = 1000;

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

export function auditService(gw: GatewayContext) {
  return defineService({
    id: 'audit',
    name: 'Audit log',
    env: [],
    actions: [
      defineAction({
        service: 'audit',
        action: 'events',
        method: 'GET',
        identities: ['admin'],
        summary: 'Read the event log: every command of every actor, in order',
        input: z.strictObject({
          after: z.coerce.number().int().min(0).default(0),
          limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(100),
          stream: z
            .string()
            .min(1)
            .max(300)
            .refine(isStorableIdentifier, 'a stream id cannot hold a NUL character or an unpaired surrogate')
            .optional(),
          type: z
            .string()
            .regex(/^[A-Za-z0-9_]+(,[A-Za-z0-9_]+)*$/, 'an event type, or several separated by commas')
            .optional(),
        }),
        handler: async ({ after, limit, stream, type }) => {
          const events = await gw.events.readAll({
            after,
            limit,
            ...(stream === undefined ? {} : { streamId: stream }),
            ...(type === undefined ? {} : { types: type.split(',') }),
          });
          return {
            items: events.map(auditView),
            next_after: events.length === limit ? events.at(-1)!.position : null,
          };
        },
      }),
      defineAction({
        service: 'audit',
        action: 'verify',
        method: 'GET',
        identities: ['admin'],
        summary: 'Check the log against its seals: the first edited, missing or unexpected event, if any',
        input: z.strictObject({}),
        handler: () => verifyLog(gw.events),
      }),
    ],
  });
}
