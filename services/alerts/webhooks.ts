import { type Decider, unknownCase } from '../../shared/decider.ts';
import { DomainError } from '../../shared/errors.ts';

/** Every alert webhook lives in the single `webhooks` stream. */
export const WEBHOOKS_STREAM = 'webhooks';

/** The alert kinds a webhook may subscribe to, as its `events` name them. */
export const ALERT_KINDS = ['budget_threshold', 'error_rate'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

/** Where alerts are POSTed: its secret encrypted with the master key, never kept in clear. */
export interface Webhook {
  id: string;
  url: string;
  encryptedSecret: string;
  /** Only this studio's alerts; null: every studio's. */
  studioId: string | null;
  events: AlertKind[];
}

export type WebhookEvent =
  | { type: 'WebhookSet'; data: Webhook }
  | { type: 'WebhookRemoved'; data: { id: string } };

export type WebhookCommand = { type: 'SetWebhook'; webhook: Webhook } | { type: 'RemoveWebhook'; id: string };

export const WEBHOOK_EVENT_TYPES = [
  'WebhookSet',
  'WebhookRemoved',
] as const satisfies readonly WebhookEvent['type'][];

/** Webhook id → the webhook. */
export type WebhooksState = ReadonlyMap<string, Webhook>;

const same = (a: Webhook, b: Webhook) =>
  a.url === b.url &&
  a.encryptedSecret === b.encryptedSecret &&
  a.studioId === b.studioId &&
  a.events.join() === b.events.join();

function decide(command: WebhookCommand, state: WebhooksState): WebhookEvent[] {
  switch (command.type) {
    case 'SetWebhook': {
      const current = state.get(command.webhook.id);
      if (current && same(current, command.webhook)) return [];
      return [{ type: 'WebhookSet', data: command.webhook }];
    }
    case 'RemoveWebhook':
      if (!state.has(command.id)) throw new DomainError('not_found', `webhook ${command.id} does not exist`);
      return [{ type: 'WebhookRemoved', data: { id: command.id } }];
    default:
      return unknownCase('command', command);
  }
}

function evolve(state: WebhooksState, event: WebhookEvent): WebhooksState {
  const next = new Map(state);
  switch (event.type) {
    case 'WebhookSet':
      next.set(event.data.id, event.data);
      return next;
    case 'WebhookRemoved':
      next.delete(event.data.id);
      return next;
    default:
      return unknownCase('event', event);
  }
}

export const webhooksDecider: Decider<WebhookCommand, WebhookEvent, WebhooksState> = {
  initialState: () => new Map(),
  decide,
  evolve,
};
