import { gateway } from '../../api/gateway.ts';
import { unwrap } from '../../api/http.ts';
import type { LimitRecord } from '../../api/records.ts';
import { ConfirmDialog, useConfirmation } from '../../ui/ConfirmDialog.tsx';
import { count } from '../../ui/count.ts';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { formatWhen } from '../../ui/format.ts';
import { ListTable } from '../../ui/ListTable.tsx';
import { useAction, useResource } from '../../ui/use-resource.ts';
import { useStudioChoice } from '../StudioPicker.tsx';
import { useTokenScope } from '../TokenScope.tsx';
import type { PageProps } from './index.ts';

const shown = (value: number | null) => (value === null ? '–' : value.toLocaleString());

/** A field's whole number, or nothing when left empty. */
function optionalCount(data: FormData, name: string): number | undefined {
  const raw = String(data.get(name) ?? '').trim();
  return raw === '' ? undefined : Number(raw);
}

/** A studio's rate limits (its own and its tokens'): set, remove after a confirmation. */
export function LimitsPage({ identity }: PageProps) {
  const { studioId, picker } = useStudioChoice(identity, 'limits-studio');
  const { field: scopeField, scopeOf } = useTokenScope(studioId, 'limit-token');
  const limits = useResource(async () => {
    if (studioId === undefined) return undefined;
    const answer = unwrap(
      await gateway.GET('/v1/studios/limits/list', { params: { query: { studio_id: studioId } } }),
    ) as { items: LimitRecord[] };
    return answer.items;
  }, [studioId]);
  const removal = useConfirmation<LimitRecord>((item) => void remove.act(item));
  const remove = useAction(async (limit: LimitRecord) => {
    unwrap(
      await gateway.POST('/v1/studios/limits/remove', {
        body: { studio_id: limit.studio_id, ...(limit.token_id ? { token_id: limit.token_id } : {}) },
      }),
    );
    await limits.reload();
  });
  const set = useAction(async (form: HTMLFormElement) => {
    if (studioId === undefined) return;
    const data = new FormData(form);
    const tokenId = String(data.get('token_id') ?? '').trim();
    const rpm = optionalCount(data, 'rpm');
    const tpm = optionalCount(data, 'tpm');
    const maxConcurrent = optionalCount(data, 'max_concurrent');
    unwrap(
      await gateway.POST('/v1/studios/limits/set', {
        body: {
          studio_id: studioId,
          ...(tokenId ? { token_id: tokenId } : {}),
          ...(rpm === undefined ? {} : { rpm }),
          ...(tpm === undefined ? {} : { tpm }),
          ...(maxConcurrent === undefined ? {} : { max_concurrent: maxConcurrent }),
        },
      }),
    );
    await limits.reload();
  });

  return (
    <section aria-labelledby="limits-title">
      <h1 id="limits-title">Rate limits</h1>
      {picker}
      <form
        class="card row"
        aria-label="Set rate limits"
        onSubmit={(event) => {
          event.preventDefault();
          void set.act(event.currentTarget);
        }}
      >
        {scopeField}
        <div class="field">
          <label for="limit-rpm">Requests per minute</label>
          <input id="limit-rpm" name="rpm" type="number" min={1} step={1} />
        </div>
        <div class="field">
          <label for="limit-tpm">Tokens per minute</label>
          <input id="limit-tpm" name="tpm" type="number" min={1} step={1} />
        </div>
        <div class="field">
          <label for="limit-concurrent">At once</label>
          <input id="limit-concurrent" name="max_concurrent" type="number" min={1} step={1} />
        </div>
        <div class="field">
          <button type="submit" class="primary" disabled={set.busy || studioId === undefined}>
            {set.busy ? 'Setting…' : 'Set limits'}
          </button>
        </div>
      </form>
      <ErrorNotice error={set.error ?? remove.error ?? limits.error} />
      <ListTable
        label="Limits"
        list={limits}
        caption={(items) => (
          <>
            {count(items.length, 'limit')} of {studioId}
          </>
        )}
        empty={{
          what: `No rate limits for ${studioId} yet.`,
          how: 'Its generations are not rate-limited. Set some above, for the whole studio or one of its tokens.',
        }}
        columns={['Scope', 'Requests / min', 'Tokens / min', 'At once', 'Updated', 'Actions']}
        row={(limit) => (
          <tr key={limit.token_id ?? ''}>
            <th scope="row">{scopeOf(limit)}</th>
            <td>{shown(limit.rpm)}</td>
            <td>{shown(limit.tpm)}</td>
            <td>{shown(limit.max_concurrent)}</td>
            <td>{formatWhen(limit.updated_at)}</td>
            <td>
              <button type="button" class="danger" disabled={remove.busy} onClick={() => removal.ask(limit)}>
                Remove
              </button>
            </td>
          </tr>
        )}
      />
      <ConfirmDialog
        {...removal.dialog}
        title={`Remove the limits of ${removal.item ? scopeOf(removal.item) : ''}?`}
        confirmLabel="Remove limits"
        danger
      >
        <p>Its generations are no longer rate-limited at this scope.</p>
      </ConfirmDialog>
    </section>
  );
}
