import { AggregateCache } from '../../shared/decider.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import { defineService } from '../../shared/http/action.ts';
import type { Leadership } from '../../shared/leadership.ts';
import { budgetsProjection } from '../ai/budgets/read-model.ts';
import { UpstreamClient } from '../ai/upstream.ts';
import { EnvReader } from '../env/reader.ts';
import { alertActions, alertsEndpoint } from './actions.ts';
import type { AlertsState } from './alerts.ts';
import type { DeliveriesState } from './deliveries.ts';
import { AlertDetector } from './detector.ts';
import { AlertDispatcher, type DeliverySettings, DISPATCHER_CHECKPOINT } from './dispatcher.ts';
import { alertSettingsProjection } from './read-model.ts';
import { sendAlert } from './sender.ts';

export const ALERTS_ATTEMPTS_KEY = 'STUDIO_ALERTS_DELIVERY_ATTEMPTS';
export const ALERTS_RETRY_MS_KEY = 'STUDIO_ALERTS_RETRY_MS';
const DEFAULT_ATTEMPTS = 6;
const DEFAULT_RETRY_MS = 1_000;
const MAX_RETRY_MS = 60_000;
/** A receiver that has not answered within this is an attempt failed. */
const DELIVERY_TIMEOUT_MS = 10_000;

export interface AlertsModuleOptions {
  /** The gateway's `STUDIO_ALLOW_PRIVATE_UPSTREAMS`: webhooks are held to the same rule. */
  allowPrivateUpstreams: boolean;
}

const positiveInt = (value: string | undefined, fallback: number, max: number) => {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 ? Math.min(n, max) : fallback;
};

/**
 * The `alerts` service: its actions, `GET /v1/alerts`, and two followers of the log that run in one
 * process (the detector that decides alerts, the dispatcher that delivers them to webhooks).
 */
export function createAlertsModule(gw: GatewayContext, options: AlertsModuleOptions) {
  const env = new EnvReader(gw);
  const settings = () => gw.projections.state(alertSettingsProjection);
  const client = new UpstreamClient({
    timeoutMs: DELIVERY_TIMEOUT_MS,
    idleTimeoutMs: DELIVERY_TIMEOUT_MS,
    retries: 0,
    retryBaseMs: 250,
    connections: 16,
    allowPrivateUpstreams: options.allowPrivateUpstreams,
  });
  const deliverySettings = (): DeliverySettings => {
    const initialMs = positiveInt(env.get(ALERTS_RETRY_MS_KEY), DEFAULT_RETRY_MS, MAX_RETRY_MS);
    return {
      maxAttempts: positiveInt(env.get(ALERTS_ATTEMPTS_KEY), DEFAULT_ATTEMPTS, 50),
      retry: { initialMs, maxMs: Math.max(initialMs, MAX_RETRY_MS) },
    };
  };
  const logger = gw.logger.child({ component: 'alerts' });
  const detector = new AlertDetector({
    events: gw.events,
    checkpoints: gw.checkpoints,
    logger,
    budgets: () => gw.projections.state(budgetsProjection),
    waitFor: (position) => gw.projections.waitFor(position),
    errorRateOf: (studioId) => settings().errorRates.get(studioId),
    cache: new AggregateCache<AlertsState>(10_000),
  });
  const dispatcher = new AlertDispatcher({
    events: gw.events,
    checkpoints: gw.checkpoints,
    logger,
    webhooks: () => settings().webhooks.values(),
    settings: deliverySettings,
    send: (webhook, studioId, payload, signal) =>
      sendAlert(client, {
        url: webhook.url,
        secret: gw.secrets.decrypt(webhook.encryptedSecret),
        studioId,
        payload,
        signal,
      }),
    cache: new AggregateCache<DeliveriesState>(1_000),
  });

  const service = defineService({
    id: 'alerts',
    name: 'Alerts',
    env: [
      {
        key: ALERTS_ATTEMPTS_KEY,
        description: `Attempts to deliver one alert to one webhook before giving up (default ${DEFAULT_ATTEMPTS})`,
        required: false,
      },
      {
        key: ALERTS_RETRY_MS_KEY,
        description: `First wait between two attempts, doubling up to 60 s (default ${DEFAULT_RETRY_MS} ms)`,
        required: false,
      },
    ],
    actions: alertActions(gw, options),
  });

  let leaders: Leadership[] = [];
  return {
    service,
    /** Endpoints under /v1 beside the registry's actions (`GET /v1/alerts`). */
    v1Routes: [alertsEndpoint(gw)],
    start() {
      if (leaders.length > 0) return;
      leaders = [gw.singleton('alerts-detector', detector), gw.singleton(DISPATCHER_CHECKPOINT, dispatcher)];
    },
    async close() {
      await Promise.all(leaders.map((leader) => leader.stop()));
      leaders = [];
      await client.close();
    },
  };
}

export type AlertsModule = ReturnType<typeof createAlertsModule>;
