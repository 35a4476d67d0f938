import { describe, it } from 'vitest';
import { deciderSpec } from '../../shared/decider-spec.ts';
import { type Webhook, webhooksDecider } from './webhooks.ts';

const spec = deciderSpec(webhooksDecider);
const pager: Webhook = {
  id: 'pager',
  url: 'https://hooks.example.com/studio',
  encryptedSecret: 'v1.iv.tag.body',
  studioId: null,
  events: ['budget_threshold', 'error_rate'],
};

describe('webhooks decider', () => {
  it('sets a webhook, replacing one of the same id whole', () => {
    spec
      .given([])
      .when({ type: 'SetWebhook', webhook: pager })
      .thenEmits([{ type: 'WebhookSet', data: pager }]);
    const narrowed = { ...pager, studioId: 'acme', events: ['error_rate' as const] };
    spec
      .given([{ type: 'WebhookSet', data: pager }])
      .when({ type: 'SetWebhook', webhook: narrowed })
      .thenEmits([{ type: 'WebhookSet', data: narrowed }]);
  });

  it('setting a webhook as it is changes nothing', () => {
    spec
      .given([{ type: 'WebhookSet', data: pager }])
      .when({ type: 'SetWebhook', webhook: { ...pager } })
      .thenEmits([]);
  });

  it('removes a webhook that exists; one that does not is not found', () => {
    spec
      .given([{ type: 'WebhookSet', data: pager }])
      .when({ type: 'RemoveWebhook', id: 'pager' })
      .thenEmits([{ type: 'WebhookRemoved', data: { id: 'pager' } }]);
    spec
      .given([
        { type: 'WebhookSet', data: pager },
        { type: 'WebhookRemoved', data: { id: 'pager' } },
      ])
      .when({ type: 'RemoveWebhook', id: 'pager' })
      .thenFails('not_found');
  });
});
