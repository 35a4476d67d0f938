import { useEffect, useState } from 'preact/hooks';
import { gateway } from '../../api/gateway.ts';
import { unwrap } from '../../api/http.ts';
import type { Price } from '../../api/records.ts';
import { Busy } from '../../ui/Busy.tsx';
import { CardForm } from '../../ui/CardForm.tsx';
import { ConfirmDialog, useConfirmation } from '../../ui/ConfirmDialog.tsx';
import { count } from '../../ui/count.ts';
import { EmptyState } from '../../ui/EmptyState.tsx';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { TableScroll } from '../../ui/TableScroll.tsx';
import { useAction, useResource } from '../../ui/use-resource.ts';
import type { PageProps } from './index.ts';

type PriceItem = Price & { model: string; source: 'default' | 'override' };

const FIELDS: readonly (readonly [keyof Price, string])[] = [
  ['input_per_mtok', 'Input / M tokens'],
  ['output_per_mtok', 'Output / M tokens'],
  ['per_image', 'Per image'],
  ['per_audio_second', 'Per audio second'],
  ['per_video_second', 'Per video second'],
];

const usd = (amount: number) => (amount === 0 ? '—' : `$${amount}`);

/**
 * Prices in USD. The admin sees every model's, overrides fields of one (the rest stay) and removes
 * an override (back to the built-in default); a studio's user reads the prices of what it may call.
 */
export function PricesPage({ identity }: PageProps) {
  const admin = identity.kind === 'admin';
  const [editing, setEditing] = useState<PriceItem | undefined>(undefined);
  const removal = useConfirmation<string>((item) => void remove.act(item));
  useEffect(() => {
    if (editing) document.getElementById('price-model')?.focus();
  }, [editing]);
  const prices = useResource(async () => {
    const answer = unwrap(await gateway.GET('/v1/ai/prices')) as {
      items: PriceItem[];
    };
    return answer.items;
  });
  const upsert = useAction(async (form: HTMLFormElement) => {
    const data = new FormData(form);
    const fields: Partial<Price> = {};
    for (const [field] of FIELDS) {
      const value = String(data.get(field) ?? '').trim();
      if (value !== '') fields[field] = Number(value);
    }
    unwrap(
      await gateway.POST('/v1/ai/prices/upsert', {
        body: { model: String(data.get('model') ?? '').trim(), ...fields },
      }),
    );
    setEditing(undefined);
    form.reset();
    await prices.reload();
  });
  const remove = useAction(async (model: string) => {
    unwrap(await gateway.POST('/v1/ai/prices/remove', { body: { model } }));
    await prices.reload();
  });

  return (
    <section aria-labelledby="prices-title">
      <h1 id="prices-title">Prices</h1>
      <p class="muted">In USD. A new price applies to generations that start after it is set.</p>
      {admin && (
        <CardForm
          title="Set a price"
          // A new key when another row is edited: the fields start from that row's values.
          key={editing?.model ?? 'new'}
          onSubmit={(form) => void upsert.act(form)}
        >
          <div class="row">
            <div class="field">
              <label for="price-model">Model</label>
              <input
                id="price-model"
                name="model"
                required
                maxLength={200}
                list="price-models"
                defaultValue={editing?.model ?? ''}
                autoComplete="off"
              />
              <datalist id="price-models">
                {(prices.data ?? []).map((item) => (
                  <option key={item.model} value={item.model} />
                ))}
              </datalist>
            </div>
            {FIELDS.map(([field, label]) => (
              <div class="field" key={field}>
                <label for={`price-${field}`}>{label}</label>
                <input
                  id={`price-${field}`}
                  name={field}
                  type="number"
                  min={0}
                  step="any"
                  placeholder="unchanged"
                  defaultValue={editing ? String(editing[field]) : ''}
                />
              </div>
            ))}
            <div class="field">
              <button type="submit" class="primary" disabled={upsert.busy}>
                {upsert.busy ? 'Saving…' : 'Set price'}
              </button>
            </div>
          </div>
        </CardForm>
      )}
      <ErrorNotice error={upsert.error ?? remove.error ?? prices.error} />
      {prices.loading && !prices.data && <Busy label="Loading prices" />}
      {prices.data?.length === 0 && (
        <EmptyState
          what="No prices yet."
          how={
            admin
              ? 'Prices come with the models of the providers set up (Env); set one for any model above.'
              : 'Prices appear for the models this token may call once an admin sets providers up.'
          }
        />
      )}
      {prices.data && prices.data.length > 0 && (
        <TableScroll label="Prices">
          <table>
            <caption class="muted">{count(prices.data.length, 'model')}</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                {FIELDS.map(([field, label]) => (
                  <th scope="col" key={field}>
                    {label}
                  </th>
                ))}
                <th scope="col">Source</th>
                {admin && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {prices.data.map((item) => (
                <tr key={item.model}>
                  <td>
                    <code>{item.model}</code>
                  </td>
                  {FIELDS.map(([field]) => (
                    <td key={field}>{usd(item[field])}</td>
                  ))}
                  <td>
                    <span class={`badge ${item.source === 'override' ? 'warn' : ''}`}>{item.source}</span>
                  </td>
                  {admin && (
                    <td>
                      <div class="row">
                        <button
                          type="button"
                          aria-label={`Edit ${item.model}`}
                          onClick={() => setEditing(item)}
                        >
                          Edit
                        </button>
                        {item.source === 'override' && (
                          <button
                            type="button"
                            class="danger"
                            disabled={remove.busy}
                            aria-label={`Remove override of ${item.model}`}
                            onClick={() => removal.ask(item.model)}
                          >
                            Remove override
                          </button>
                        )}
                      </div>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <ConfirmDialog
        {...removal.dialog}
        title={`Remove the price override of ${removal.item ?? ''}?`}
        confirmLabel="Remove override"
        danger
      >
        <p>Its built-in default price applies again to generations that start after.</p>
      </ConfirmDialog>
    </section>
  );
}
