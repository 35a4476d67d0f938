import { z } from 'zod';
import { studiosProjection } from '../../projections/studios.ts';
import { type CommandHandler, commandHandler } from '../../shared/command-handler.ts';
import { ApiError } from '../../shared/errors.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import { defineAction, defineEndpoint } from '../../shared/http/action.ts';
import { isRefusedHost } from '../ai/upstream-address.ts';
import { mask } from '../env/reader.ts';
import { studioId } from '../studios/studio-id.ts';
import {
  type ErrorRateCommand,
  type ErrorRateEvent,
  type ErrorRateState,
  errorRateDecider,
  errorRateStreamId,
} from './error-rate.ts';
import {
  type AlertRecord,
  alertHistoryProjection,
  alertSettingsProjection,
  type WebhookRecord,
} from './read-model.ts';
import { newWebhookSecret } from './signature.ts';
import {
  ALERT_KINDS,
  WEBHOOKS_STREAM,
  type WebhookCommand,
  type WebhookEvent,
  type WebhooksState,
  webhooksDecider,
} from './webhooks.ts';

const admin = ['admin'] as const;
const webhookId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a webhook id: lower-case letters, digits and dashes, e.g. ops-pager');

export const WebhookInput = z.strictObject({
  id: webhookId,
  url: z.url({ protocol: /^https?$/, message: 'url: an http(s) URL' }).max(2_000),
  /** Signs every delivery; kept encrypted. Left out: one is made and shown once, in this answer. */
  secret: z.string().min(16, 'secret: at least 16 characters').max(256).optional(),
  /** Only this studio's alerts; left out: every studio's. */
  studio_id: studioId.optional(),
  events: z.array(z.enum(ALERT_KINDS)).min(1).max(ALERT_KINDS.length).optional(),
});

const ErrorRateInput = z.strictObject({
  studio_id: studioId,
  threshold: z.number().min(0).max(1),
  window_minutes: z
    .number()
    .int()
    .min(1)
    .max(24 * 60),
  min_requests: z.number().int().min(1).max(1_000_000),
});

export interface AlertActionsOptions {
  /** The gateway may call private (link-local, metadata) addresses: so may a webhook. */
  allowPrivateUpstreams: boolean;
}

/** `/v1/alerts/*`: the webhooks alerts go to, each studio's error-rate alert, and what was delivered. */
export function alertActions(gw: GatewayContext, options: AlertActionsOptions) {
  const settings = () => gw.projections.state(alertSettingsProjection);
  const history = () => gw.projections.state(alertHistoryProjection);
  const runWebhooks: CommandHandler<WebhookCommand, WebhookEvent, WebhooksState> = commandHandler(
    webhooksDecider,
    { events: gw.events, streamOf: () => WEBHOOKS_STREAM, readModels: gw.projections },
  );
  const runErrorRate: CommandHandler<ErrorRateCommand, ErrorRateEvent, ErrorRateState> = commandHandler(
    errorRateDecider,
    {
      events: gw.events,
      streamOf: (command) => errorRateStreamId(command.studioId),
      readModels: gw.projections,
    },
  );
  const view = (webhook: WebhookRecord) => ({
    id: webhook.id,
    url: webhook.url,
    secret: mask(gw.secrets.decrypt(webhook.encryptedSecret)),
    studio_id: webhook.studioId,
    events: webhook.events,
    last_delivery: history().lastDelivery.get(webhook.id) ?? null,
    updated_at: webhook.updated_at,
  });

  return [
    defineAction({
      service: 'alerts',
      action: 'webhooks/upsert',
      method: 'POST',
      identities: admin,
      summary: 'Send alerts to a URL, signed with its secret (made and shown once when none is given)',
      input: WebhookInput,
      handler: async (input, ctx) => {
        const host = new URL(input.url).hostname;
        if (!options.allowPrivateUpstreams && isRefusedHost(host))
          throw new ApiError(
            'validation_failed',
            `url: ${host} is a link-local or cloud metadata address; the gateway calls none unless it allows private upstreams`,
            { param: 'url' },
          );
        if (input.studio_id !== undefined && !studioKnown(gw, input.studio_id))
          throw new ApiError('not_found', `studio ${input.studio_id} does not exist`, { param: 'studio_id' });
        const before = settings().webhooks.get(input.id);
        const made = input.secret === undefined && before === undefined ? newWebhookSecret() : undefined;
        const secret = input.secret ?? made;
        await runWebhooks(
          {
            type: 'SetWebhook',
            webhook: {
              id: input.id,
              url: input.url,
              // Left out on an update: the secret set before stays.
              encryptedSecret: secret === undefined ? before!.encryptedSecret : gw.secrets.encrypt(secret),
              studioId: input.studio_id ?? null,
              events: [...new Set(input.events ?? ALERT_KINDS)],
            },
          },
          ctx.metadata,
        );
        const shown = view(settings().webhooks.get(input.id)!);
        return made === undefined ? shown : { ...shown, secret: made };
      },
    }),
    defineAction({
      service: 'alerts',
      action: 'webhooks/list',
      method: 'GET',
      identities: admin,
      summary: 'The alert webhooks (secrets masked), each with its last delivery',
      input: z.strictObject({}),
      handler: () => ({ items: [...settings().webhooks.values()].map(view) }),
    }),
    defineAction({
      service: 'alerts',
      action: 'webhooks/remove',
      method: 'POST',
      identities: admin,
      summary: 'Stop sending alerts to a webhook',
      input: z.strictObject({ id: webhookId }),
      handler: async (input, ctx) => {
        await runWebhooks({ type: 'RemoveWebhook', id: input.id }, ctx.metadata);
        return { id: input.id, removed: true };
      },
    }),
    defineAction({
      service: 'alerts',
      action: 'error-rate/set',
      method: 'POST',
      identities: admin,
      summary: "Alert when a studio's failures / requests exceed a threshold within a window",
      input: ErrorRateInput,
      handler: async (input, ctx) => {
        if (!studioKnown(gw, input.studio_id))
          throw new ApiError('not_found', `studio ${input.studio_id} does not exist`, { param: 'studio_id' });
        await runErrorRate(
          {
            type: 'SetErrorRateAlert',
            studioId: input.studio_id,
            threshold: input.threshold,
            windowMinutes: input.window_minutes,
            minRequests: input.min_requests,
          },
          ctx.metadata,
        );
        const rule = settings().errorRates.get(input.studio_id)!;
        return {
          studio_id: rule.studioId,
          threshold: rule.threshold,
          window_minutes: rule.windowMinutes,
          min_requests: rule.minRequests,
          updated_at: rule.updated_at,
        };
      },
    }),
    defineAction({
      service: 'alerts',
      action: 'deliveries',
      method: 'GET',
      identities: admin,
      summary: "A webhook's delivery attempts (or every webhook's), newest first",
      input: z.strictObject({
        webhook_id: webhookId.optional(),
        limit: z.coerce.number().int().min(1).max(500).default(100),
      }),
      handler: ({ webhook_id, limit }) => {
        const { attempts } = history();
        const lists = webhook_id === undefined ? [...attempts.values()] : [attempts.get(webhook_id) ?? []];
        const items = lists
          .flat()
          .sort((a, b) => (a.at === b.at ? b.attempt - a.attempt : a.at < b.at ? 1 : -1))
          .slice(0, limit);
        return { items };
      },
    }),
  ];
}

const studioKnown = (gw: GatewayContext, id: string) => gw.projections.state(studiosProjection).has(id);

/** `GET /v1/alerts`: recent alerts, newest first; a user sees its own studio's, an admin any. */
export function alertsEndpoint(gw: GatewayContext) {
  return defineEndpoint({
    method: 'GET',
    path: '/v1/alerts',
    identities: ['admin', 'user'],
    input: z.strictObject({
      studio_id: studioId.optional(),
      limit: z.coerce.number().int().min(1).max(500).default(50),
    }),
    handler: (input, ctx) => {
      const studio = input.studio_id ?? (ctx.identity.kind === 'user' ? ctx.identity.studioId : undefined);
      const { alerts } = gw.projections.state(alertHistoryProjection);
      const lists = studio === undefined ? [...alerts.values()] : [alerts.get(studio) ?? []];
      const items: AlertRecord[] = lists
        .flat()
        .sort((a, b) => b.position - a.position)
        .slice(0, input.limit);
      return { items: items.map(({ position: _position, ...alert }) => alert) };
    },
  });
}
