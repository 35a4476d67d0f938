import { z } from 'zod';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import { defineAction, defineService } from '../../shared/http/action.ts';
import { type FollowOptions, followAction } from './follow.ts';
import { readAuditPage } from './page.ts';
import { verifyLog } from './verify.ts';
import { streamFilter, typeFilter } from './view.ts';

const MAX_LIMIT = 1000;

export function auditService(gw: GatewayContext, follow: FollowOptions) {
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
        summary:
          'Read the event log: every command of every actor, in order (a page: `limit` events, or fewer once they come to 8 MiB)',
        input: z.strictObject({
          after: z.coerce.number().int().min(0).default(0),
          limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(100),
          stream: streamFilter.optional(),
          type: typeFilter.optional(),
        }),
        handler: ({ after, limit, stream, type }) =>
          readAuditPage(gw.events, {
            after,
            limit,
            ...(stream === undefined ? {} : { streamId: stream }),
            ...(type === undefined ? {} : { types: type.split(',') }),
          }),
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
      followAction(gw, follow),
    ],
  });
}
