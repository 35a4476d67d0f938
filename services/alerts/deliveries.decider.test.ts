import { describe, it } from 'vitest';
import { deciderSpec } from '../../shared/decider-spec.ts';
import { type DeliveryCommand, type DeliveryEvent, deliveriesDecider } from './deliveries.ts';

const spec = deciderSpec(deliveriesDecider);
const attempt = (outcome: DeliveryCommand['outcome']): DeliveryCommand => ({
  type: 'RecordAttempt',
  webhookId: 'pager',
  eventId: 'e1',
  outcome,
  latencyMs: 12,
  maxAttempts: 3,
});
const attempted = (n: number, outcome: { status: number } | { error: string }): DeliveryEvent => ({
  type: 'WebhookDeliveryAttempted',
  data: { webhookId: 'pager', eventId: 'e1', attempt: n, ...outcome, latencyMs: 12 },
});
const end = (type: 'WebhookDelivered' | 'WebhookGaveUp', attempts: number): DeliveryEvent => ({
  type,
  data: { webhookId: 'pager', eventId: 'e1', attempts },
});

describe('deliveries decider', () => {
  it('a 2xx is an attempt and the delivery', () => {
    spec
      .given([])
      .when(attempt({ status: 204 }))
      .thenEmits([attempted(1, { status: 204 }), end('WebhookDelivered', 1)]);
  });

  it('a failure is an attempt, counted after those before', () => {
    spec
      .given([attempted(1, { status: 500 })])
      .when(attempt({ error: 'connection refused' }))
      .thenEmits([attempted(2, { error: 'connection refused' })]);
  });

  it('the last attempt allowed that fails gives the delivery up', () => {
    spec
      .given([attempted(1, { status: 500 }), attempted(2, { status: 503 })])
      .when(attempt({ status: 500 }))
      .thenEmits([attempted(3, { status: 500 }), end('WebhookGaveUp', 3)]);
  });

  it('a delivery over (delivered or given up) takes no more attempts', () => {
    spec
      .given([attempted(1, { status: 200 }), end('WebhookDelivered', 1)])
      .when(attempt({ status: 200 }))
      .thenEmits([]);
    spec
      .given([attempted(1, { status: 500 }), end('WebhookGaveUp', 1)])
      .when(attempt({ status: 200 }))
      .thenEmits([]);
  });
});
