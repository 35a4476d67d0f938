import { useState } from 'preact/hooks';
import { gateway } from '../../api/gateway.ts';
import { unwrap } from '../../api/http.ts';
import { CardForm } from '../../ui/CardForm.tsx';
import { ConfirmDialog, useConfirmation } from '../../ui/ConfirmDialog.tsx';
import { CopyButton } from '../../ui/CopyButton.tsx';
import { count } from '../../ui/count.ts';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { formatUsd, formatWhen } from '../../ui/format.ts';
import { ListTable } from '../../ui/ListTable.tsx';
import { useAction, useResource } from '../../ui/use-resource.ts';
import type { PageProps } from './index.ts';

/** An alert as `GET /v1/alerts` answers it. */
interface AlertView {
  id: string;
  type: 'BudgetThresholdCrossed' | 'ErrorRateExceeded';
  studio_id: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** A webhook as `GET /v1/alerts/webhooks/list` answers it. */
interface WebhookView {
  id: string;
  url: string;
  secret: string;
  studio_id: string | null;
  events: string[];
  last_delivery: {
    event_id: string;
    state: 'retrying' | 'delivered' | 'gave_up';
    attempts: number;
    status: number | null;
    error: string | null;
    at: string;
  } | null;
}

const KINDS = [
  { value: 'budget_threshold', label: 'Budget thresholds (50, 80, 100 %)' },
  { value: 'error_rate', label: 'Error rate' },
] as const;

const DELIVERY_BADGE = { delivered: 'ok', retrying: 'warn', gave_up: 'bad' } as const;

/** What an alert says, in a line. */
function summaryOf(alert: AlertView): string {
  const d = alert.data;
  if (alert.type === 'BudgetThresholdCrossed') {
    const whose = d.tokenId === null ? 'studio budget' : `token ${String(d.tokenId)}'s budget`;
    return `${String(d.threshold)} % of the ${whose} (${String(d.windowKey)}): ${formatUsd(
      Number(d.spentMicroUsd) / 1e6,
    )} of ${formatUsd(Number(d.amountMicroUsd) / 1e6)}`;
  }
  return `error rate ${(Number(d.rate) * 100).toFixed(1)} % (${String(d.failures)} of ${String(
    d.requests,
  )} requests) from ${formatWhen(String(d.windowStart))}`;
}

/**
 * Alerts: the recent ones (a user: its studio's), and for the admin the webhooks they are POSTed to,
 * each with its last delivery, and a form to add one (its secret shown once when the gateway makes it).
 */
export function AlertsPage({ identity }: PageProps) {
  const admin = identity.kind === 'admin';
  const alerts = useResource(async () => {
    const answer = unwrap(await gateway.GET('/v1/alerts', { params: { query: { limit: 100 } } })) as {
      items: AlertView[];
    };
    return answer.items;
  });
  const webhooks = useResource(async () => {
    if (!admin) return [];
    const answer = unwrap(await gateway.GET('/v1/alerts/webhooks/list', {})) as { items: WebhookView[] };
    return answer.items;
  }, [admin]);
  const [shownSecret, setShownSecret] = useState<{ id: string; secret: string } | undefined>(undefined);
  const upsert = useAction(async (form: HTMLFormElement) => {
    const data = new FormData(form);
    const secret = String(data.get('secret') ?? '');
    const studio = String(data.get('studio_id') ?? '').trim();
    const events = KINDS.map((k) => k.value).filter((kind) => data.get(kind) === 'on');
    const answer = unwrap(
      await gateway.POST('/v1/alerts/webhooks/upsert', {
        body: {
          id: String(data.get('id') ?? '').trim(),
          url: String(data.get('url') ?? '').trim(),
          ...(secret === '' ? {} : { secret }),
          ...(studio === '' ? {} : { studio_id: studio }),
          ...(events.length === 0 ? {} : { events }),
        },
      }),
    ) as WebhookView;
    setShownSecret(
      secret === '' && !answer.secret.startsWith('••••')
        ? { id: answer.id, secret: answer.secret }
        : undefined,
    );
    form.reset();
    await webhooks.reload();
  });
  const removal = useConfirmation<WebhookView>((item) => void remove.act(item.id));
  const remove = useAction(async (id: string) => {
    unwrap(await gateway.POST('/v1/alerts/webhooks/remove', { body: { id } }));
    await webhooks.reload();
  });

  return (
    <section aria-labelledby="alerts-title">
      <h1 id="alerts-title">Alerts</h1>
      <p class="muted">
        Budget thresholds crossed and error rates exceeded, newest first; each one is POSTed, signed, to the
        webhooks that match it.
      </p>
      <ErrorNotice error={alerts.error ?? webhooks.error ?? upsert.error ?? remove.error} />
      <ListTable
        label="Alerts"
        list={alerts}
        caption={(items) => <>{count(items.length, 'recent alert')}</>}
        empty={{
          what: 'No alerts yet.',
          how: 'Alerts come from budgets (Budgets page) and from error-rate settings (POST /v1/alerts/error-rate/set).',
        }}
        columns={['When', 'Studio', 'Alert', 'What']}
        row={(alert) => (
          <tr key={alert.id}>
            <td>{formatWhen(alert.created_at)}</td>
            <td>
              <code>{alert.studio_id}</code>
            </td>
            <td>
              <span class={`badge ${alert.type === 'ErrorRateExceeded' ? 'bad' : 'warn'}`}>
                {alert.type === 'ErrorRateExceeded' ? 'error rate' : 'budget'}
              </span>
            </td>
            <td>{summaryOf(alert)}</td>
          </tr>
        )}
      />
      {admin && (
        <>
          <h2>Webhooks</h2>
          <CardForm title="Add a webhook" onSubmit={(form) => void upsert.act(form)}>
            <div class="row">
              <div class="field">
                <label for="webhook-id">Id</label>
                <input
                  id="webhook-id"
                  name="id"
                  required
                  maxLength={63}
                  placeholder="ops-pager"
                  autoComplete="off"
                />
              </div>
              <div class="field">
                <label for="webhook-url">URL</label>
                <input
                  id="webhook-url"
                  name="url"
                  type="url"
                  required
                  placeholder="https://hooks.example.com/studio"
                />
              </div>
              <div class="field">
                <label for="webhook-studio">
                  Studio <span class="hint">(empty: every studio)</span>
                </label>
                <input id="webhook-studio" name="studio_id" maxLength={64} autoComplete="off" />
              </div>
              <div class="field">
                <label for="webhook-secret">
                  Secret <span class="hint">(empty: one is made and shown once)</span>
                </label>
                <input id="webhook-secret" name="secret" type="password" minLength={16} autoComplete="off" />
              </div>
            </div>
            <fieldset class="row">
              <legend>
                Alerts <span class="hint">(none ticked: every kind)</span>
              </legend>
              {KINDS.map((kind) => (
                <label key={kind.value} for={`webhook-${kind.value}`}>
                  <input id={`webhook-${kind.value}`} name={kind.value} type="checkbox" /> {kind.label}
                </label>
              ))}
            </fieldset>
            <button type="submit" class="primary" disabled={upsert.busy}>
              {upsert.busy ? 'Saving…' : 'Save webhook'}
            </button>
          </CardForm>
          {shownSecret && (
            <div class="card" role="status">
              <p>
                The signing secret of <code>{shownSecret.id}</code>, shown this once: verify each delivery's{' '}
                <code>x-studio-signature</code> with it.
              </p>
              <p class="row">
                <code>{shownSecret.secret}</code> <CopyButton text={shownSecret.secret} />
              </p>
            </div>
          )}
          <ListTable
            label="Webhooks"
            list={webhooks}
            caption={(items) => <>{count(items.length, 'webhook')}</>}
            empty={{
              what: 'No webhooks yet.',
              how: 'Add one above: alerts are POSTed to it as they are raised.',
            }}
            columns={['Id', 'URL', 'Studio', 'Alerts', 'Last delivery', 'Actions']}
            row={(webhook) => (
              <tr key={webhook.id}>
                <td>
                  <code>{webhook.id}</code>
                </td>
                <td>
                  <code>{webhook.url}</code>
                </td>
                <td>{webhook.studio_id ?? <span class="muted">every studio</span>}</td>
                <td>{webhook.events.join(', ')}</td>
                <td>
                  {webhook.last_delivery ? (
                    <>
                      <span class={`badge ${DELIVERY_BADGE[webhook.last_delivery.state]}`}>
                        {webhook.last_delivery.state.replace('_', ' ')}
                      </span>{' '}
                      {count(webhook.last_delivery.attempts, 'attempt')},{' '}
                      {webhook.last_delivery.status ?? webhook.last_delivery.error},{' '}
                      {formatWhen(webhook.last_delivery.at)}
                    </>
                  ) : (
                    <span class="muted">none yet</span>
                  )}
                </td>
                <td>
                  <button
                    type="button"
                    class="danger"
                    disabled={remove.busy}
                    aria-label={`Remove ${webhook.id}`}
                    onClick={() => removal.ask(webhook)}
                  >
                    Remove
                  </button>
                </td>
              </tr>
            )}
          />
          <ConfirmDialog
            {...removal.dialog}
            title={`Remove ${removal.item?.id ?? ''}?`}
            confirmLabel="Remove webhook"
            danger
          >
            <p>Alerts are no longer sent to it; deliveries under way stop.</p>
          </ConfirmDialog>
        </>
      )}
    </section>
  );
}
