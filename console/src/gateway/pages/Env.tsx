import { gateway } from '../../api/gateway.ts';
import { unwrap } from '../../api/http.ts';
import type { EnvListItem } from '../../api/records.ts';
import { Busy } from '../../ui/Busy.tsx';
import { CardForm } from '../../ui/CardForm.tsx';
import { ConfirmDialog, useConfirmation } from '../../ui/ConfirmDialog.tsx';
import { count } from '../../ui/count.ts';
import { EmptyState } from '../../ui/EmptyState.tsx';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { TableScroll } from '../../ui/TableScroll.tsx';
import { useAction, useResource } from '../../ui/use-resource.ts';
import { EnvImport } from './EnvImport.tsx';

/**
 * The gateway's env: values as the API shows them (encrypted ones masked), set one, remove one after a
 * confirmation, or import a .env file (EnvImport). Values typed here go to the gateway only.
 */
export function EnvPage() {
  const env = useResource(async () => {
    const answer = unwrap(await gateway.GET('/v1/env/list')) as {
      items: EnvListItem[];
    };
    return answer.items;
  });
  const removal = useConfirmation<string>((item) => void remove.act(item));
  const upsert = useAction(async (form: HTMLFormElement) => {
    const data = new FormData(form);
    unwrap(
      await gateway.POST('/v1/env/upsert', {
        body: {
          key: String(data.get('key') ?? '').trim(),
          value: String(data.get('value') ?? ''),
          secret: data.get('public') !== 'on',
        },
      }),
    );
    form.reset();
    await env.reload();
  });
  const remove = useAction(async (key: string) => {
    unwrap(await gateway.POST('/v1/env/remove', { body: { key } }));
    await env.reload();
  });

  return (
    <section aria-labelledby="env-title">
      <h1 id="env-title">Env</h1>
      <p class="muted">
        Keys the gateway and its providers read (API keys, base URLs). Values are encrypted unless marked
        public; encrypted values are never shown again.
      </p>
      <CardForm title="Set a variable" onSubmit={(form) => void upsert.act(form)}>
        <div class="row">
          <div class="field">
            <label for="env-key">Key</label>
            <input id="env-key" name="key" required maxLength={200} autoComplete="off" spellcheck={false} />
          </div>
          <div class="field">
            <label for="env-value">Value</label>
            <input id="env-value" name="value" type="password" autoComplete="off" />
          </div>
          <div class="field">
            <label for="env-public">
              <input id="env-public" name="public" type="checkbox" /> Public{' '}
              <span class="hint">(stored in clear, shown in the list)</span>
            </label>
          </div>
          <div class="field">
            <button type="submit" class="primary" disabled={upsert.busy}>
              {upsert.busy ? 'Saving…' : 'Set variable'}
            </button>
          </div>
        </div>
      </CardForm>
      <ErrorNotice error={upsert.error ?? remove.error ?? env.error} />
      {env.loading && !env.data && <Busy label="Loading env" />}
      {env.data?.length === 0 && (
        <EmptyState
          what="No variables yet."
          how="Providers need their keys here (OPENAI_API_KEY, …): set one above, or import a .env file below."
        />
      )}
      {env.data && env.data.length > 0 && (
        <TableScroll label="Variables">
          <table>
            <caption class="muted">{count(env.data.length, 'variable')}</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Value</th>
                <th scope="col">Kind</th>
                <th scope="col">Updated</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {env.data.map((item) => (
                <tr key={item.key}>
                  <td>
                    <code>{item.key}</code>
                  </td>
                  <td>
                    <code>{item.value}</code>
                  </td>
                  <td>
                    <span class={`badge ${item.secret ? 'warn' : 'ok'}`}>
                      {item.secret ? 'encrypted' : 'public'}
                    </span>{' '}
                    {item.source === 'process' && <span class="badge">process env</span>}
                  </td>
                  <td>{item.updated_at ? new Date(item.updated_at).toLocaleString() : '—'}</td>
                  <td>
                    {item.source === 'store' ? (
                      <button
                        type="button"
                        class="danger"
                        disabled={remove.busy}
                        aria-label={`Remove ${item.key}`}
                        onClick={() => removal.ask(item.key)}
                      >
                        Remove
                      </button>
                    ) : (
                      <span class="muted">set outside Studio</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <EnvImport onImported={env.reload} />
      <ConfirmDialog
        {...removal.dialog}
        title={`Remove ${removal.item ?? ''}?`}
        confirmLabel="Remove variable"
        danger
      >
        <p>Models and plugins that need it become unavailable until it is set again.</p>
      </ConfirmDialog>
    </section>
  );
}
