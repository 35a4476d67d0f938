import { type Decider, unknownCase } from '../../shared/decider.ts';

/** One webhook's deliveries, every attempt of each alert: `deliveries-<webhook>`. */
export const deliveriesStreamId = (webhookId: string) => `deliveries-${webhookId}`;

/** What one attempt came to: the receiver's status, or why no status came. */
export type AttemptOutcome = { status: number } | { error: string };

export interface AttemptData {
  webhookId: string;
  /** The alert event's id. */
  eventId: string;
  /** 1 for the first. */
  attempt: number;
  status?: number;
  error?: string;
  latencyMs: number;
}

export interface DeliveryEndData {
  webhookId: string;
  eventId: string;
  attempts: number;
}

export type DeliveryEvent =
  | { type: 'WebhookDeliveryAttempted'; data: AttemptData }
  | { type: 'WebhookDelivered'; data: DeliveryEndData }
  | { type: 'WebhookGaveUp'; data: DeliveryEndData };

export const DELIVERY_EVENT_TYPES = [
  'WebhookDeliveryAttempted',
  'WebhookDelivered',
  'WebhookGaveUp',
] as const satisfies readonly DeliveryEvent['type'][];

export interface DeliveryCommand {
  type: 'RecordAttempt';
  webhookId: string;
  eventId: string;
  outcome: AttemptOutcome;
  latencyMs: number;
  /** After this many failed attempts the alert is given up for this webhook. */
  maxAttempts: number;
}

/** Per alert event id: attempts made, and whether it is over (delivered or given up). */
export type DeliveriesState = ReadonlyMap<string, { attempts: number; done: boolean }>;

export const delivered = (outcome: AttemptOutcome) =>
  'status' in outcome && outcome.status >= 200 && outcome.status < 300;

function decide(command: DeliveryCommand, state: DeliveriesState): DeliveryEvent[] {
  switch (command.type) {
    case 'RecordAttempt': {
      const { webhookId, eventId, outcome, latencyMs, maxAttempts } = command;
      const before = state.get(eventId) ?? { attempts: 0, done: false };
      // Over already (recorded by a run that stopped before its checkpoint moved): nothing more.
      if (before.done) return [];
      const attempt = before.attempts + 1;
      const attempted: DeliveryEvent = {
        type: 'WebhookDeliveryAttempted',
        data: { webhookId, eventId, attempt, ...outcome, latencyMs },
      };
      const end = { webhookId, eventId, attempts: attempt };
      if (delivered(outcome)) return [attempted, { type: 'WebhookDelivered', data: end }];
      if (attempt >= maxAttempts) return [attempted, { type: 'WebhookGaveUp', data: end }];
      return [attempted];
    }
    default:
      return unknownCase('command', command.type);
  }
}

function evolve(state: DeliveriesState, event: DeliveryEvent): DeliveriesState {
  const next = new Map(state);
  const { eventId } = event.data;
  switch (event.type) {
    case 'WebhookDeliveryAttempted':
      next.set(eventId, { attempts: event.data.attempt, done: false });
      return next;
    case 'WebhookDelivered':
    case 'WebhookGaveUp':
      next.set(eventId, { attempts: event.data.attempts, done: true });
      return next;
    default:
      return unknownCase('event', event);
  }
}

export const deliveriesDecider: Decider<DeliveryCommand, DeliveryEvent, DeliveriesState> = {
  initialState: () => new Map(),
  decide,
  evolve,
};
