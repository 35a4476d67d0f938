import { defineProjection } from '../../shared/projections/projection.ts';
import { type Entries, entriesOf, mapOf } from '../../shared/projections/snapshot.ts';
import { ALERT_EVENT_TYPES, type AlertEvent } from './alerts.ts';
import { DELIVERY_EVENT_TYPES, type DeliveryEvent } from './deliveries.ts';
import { ERROR_RATE_EVENT_TYPES, type ErrorRateEvent, type ErrorRateRule } from './error-rate.ts';
import { WEBHOOK_EVENT_TYPES, type Webhook, type WebhookEvent } from './webhooks.ts';

/** Most alerts kept per studio, and delivery attempts per webhook (the rest stay in the log). */
export const KEPT_ALERTS = 1_000;
export const KEPT_ATTEMPTS = 500;

export type WebhookRecord = Webhook & { updated_at: string };
export type ErrorRateRecord = ErrorRateRule & { updated_at: string };

/** What the alerts service is set up with: its webhooks, and each studio's error-rate alert. */
export interface AlertSettings {
  webhooks: Map<string, WebhookRecord>;
  errorRates: Map<string, ErrorRateRecord>;
}

export const alertSettingsProjection = defineProjection<AlertSettings, WebhookEvent | ErrorRateEvent>({
  name: 'alert-settings',
  schemaVersion: 1,
  handles: [...WEBHOOK_EVENT_TYPES, ...ERROR_RATE_EVENT_TYPES],
  categories: ['webhooks', 'error'],
  initialState: () => ({ webhooks: new Map(), errorRates: new Map() }),
  toSnapshot: (state) => ({ webhooks: entriesOf(state.webhooks), errorRates: entriesOf(state.errorRates) }),
  fromSnapshot: (snapshot) => {
    const { webhooks, errorRates } = snapshot as { webhooks: unknown; errorRates: unknown };
    return {
      webhooks: mapOf<WebhookRecord>(webhooks, 'alert webhooks'),
      errorRates: mapOf<ErrorRateRecord>(errorRates, 'error-rate alerts'),
    };
  },
  apply(state, event) {
    switch (event.type) {
      case 'WebhookSet':
        state.webhooks.set(event.data.id, {
          id: event.data.id,
          url: event.data.url,
          encryptedSecret: event.data.encryptedSecret,
          studioId: event.data.studioId,
          events: [...event.data.events],
          updated_at: event.createdAt,
        });
        return;
      case 'WebhookRemoved':
        state.webhooks.delete(event.data.id);
        return;
      case 'ErrorRateAlertSet':
        state.errorRates.set(event.data.studioId, {
          studioId: event.data.studioId,
          threshold: event.data.threshold,
          windowMinutes: event.data.windowMinutes,
          minRequests: event.data.minRequests,
          updated_at: event.createdAt,
        });
        return;
      default:
        return;
    }
  },
});

export interface AlertRecord {
  id: string;
  type: AlertEvent['type'];
  studio_id: string;
  created_at: string;
  data: AlertEvent['data'];
  position: number;
}

export interface AttemptRecord {
  webhook_id: string;
  event_id: string;
  attempt: number;
  status: number | null;
  error: string | null;
  latency_ms: number;
  at: string;
}

/** The last alert a webhook was sent, and where its delivery stands. */
export interface LastDelivery {
  event_id: string;
  state: 'retrying' | 'delivered' | 'gave_up';
  attempts: number;
  status: number | null;
  error: string | null;
  at: string;
}

/** Recent alerts by studio (oldest first), recent attempts and the last delivery by webhook. */
export interface AlertHistory {
  alerts: Map<string, AlertRecord[]>;
  attempts: Map<string, AttemptRecord[]>;
  lastDelivery: Map<string, LastDelivery>;
}

interface HistorySnapshot {
  alerts: Entries<AlertRecord[]>;
  attempts: Entries<AttemptRecord[]>;
  lastDelivery: Entries<LastDelivery>;
}

const pushKept = <T>(map: Map<string, T[]>, key: string, item: T, kept: number) => {
  let list = map.get(key);
  if (!list) {
    list = [];
    map.set(key, list);
  }
  list.push(item);
  if (list.length > kept) list.splice(0, list.length - kept);
};

export const alertHistoryProjection = defineProjection<AlertHistory, AlertEvent | DeliveryEvent>({
  name: 'alert-history',
  schemaVersion: 1,
  handles: [...ALERT_EVENT_TYPES, ...DELIVERY_EVENT_TYPES],
  categories: ['alerts', 'deliveries'],
  initialState: () => ({ alerts: new Map(), attempts: new Map(), lastDelivery: new Map() }),
  toSnapshot: (state): HistorySnapshot => ({
    alerts: entriesOf(state.alerts),
    attempts: entriesOf(state.attempts),
    lastDelivery: entriesOf(state.lastDelivery),
  }),
  fromSnapshot: (snapshot) => {
    const s = snapshot as HistorySnapshot;
    return {
      alerts: mapOf<AlertRecord[]>(s.alerts, 'alerts'),
      attempts: mapOf<AttemptRecord[]>(s.attempts, 'alert deliveries'),
      lastDelivery: mapOf<LastDelivery>(s.lastDelivery, 'alert deliveries'),
    };
  },
  apply(state, event) {
    switch (event.type) {
      case 'BudgetThresholdCrossed':
      case 'ErrorRateExceeded':
        pushKept(
          state.alerts,
          event.data.studioId,
          {
            id: event.id,
            type: event.type,
            studio_id: event.data.studioId,
            created_at: event.createdAt,
            data: { ...event.data },
            position: event.position,
          },
          KEPT_ALERTS,
        );
        return;
      case 'WebhookDeliveryAttempted': {
        const d = event.data;
        const status = d.status ?? null;
        const error = d.error ?? null;
        pushKept(
          state.attempts,
          d.webhookId,
          {
            webhook_id: d.webhookId,
            event_id: d.eventId,
            attempt: d.attempt,
            status,
            error,
            latency_ms: d.latencyMs,
            at: event.createdAt,
          },
          KEPT_ATTEMPTS,
        );
        state.lastDelivery.set(d.webhookId, {
          event_id: d.eventId,
          state: 'retrying',
          attempts: d.attempt,
          status,
          error,
          at: event.createdAt,
        });
        return;
      }
      case 'WebhookDelivered':
      case 'WebhookGaveUp': {
        const last = state.lastDelivery.get(event.data.webhookId);
        if (last && last.event_id === event.data.eventId)
          last.state = event.type === 'WebhookDelivered' ? 'delivered' : 'gave_up';
        return;
      }
      default:
        return;
    }
  },
});
