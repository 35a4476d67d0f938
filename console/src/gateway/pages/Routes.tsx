import { useState } from 'preact/hooks';
import { gateway } from '../../api/gateway.ts';
import { unwrap } from '../../api/http.ts';
import type { RouteView } from '../../api/records.ts';
import { ConfirmDialog, useConfirmation } from '../../ui/ConfirmDialog.tsx';
import { count } from '../../ui/count.ts';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { formatWhen } from '../../ui/format.ts';
import { ListTable } from '../../ui/ListTable.tsx';
import { useAction, useResource } from '../../ui/use-resource.ts';

type Strategy = RouteView['strategy'];
const STRATEGIES: readonly { value: Strategy; label: string }[] = [
  { value: 'fallback', label: 'fallback (in order)' },
  { value: 'weighted', label: 'weighted (at random, by weight)' },
  { value: 'least_busy', label: 'least busy' },
];

/** `model` or `model weight`, one target a line. */
function targetsOf(text: string): { model: string; weight?: number }[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const [model = '', weight] = line.split(/\s+/);
      return weight === undefined ? { model } : { model, weight: Number(weight) };
    });
}
const linesOf = (route: RouteView) =>
  route.targets.map((t) => (t.weight === 1 ? t.model : `${t.model} ${t.weight}`)).join('\n');

/** Routes: model ids over other models, each target's health; upsert, remove after a confirmation. */
export function RoutesPage() {
  const routes = useResource(async () => {
    const answer = unwrap(await gateway.GET('/v1/ai/routes/list', {})) as {
      items: RouteView[];
    };
    return answer.items;
  });
  const [draft, setDraft] = useState({ id: '', strategy: 'fallback' as Strategy, targets: '' });
  const removal = useConfirmation<RouteView>((item) => void remove.act(item.id));
  const remove = useAction(async (id: string) => {
    unwrap(await gateway.POST('/v1/ai/routes/remove', { body: { id } }));
    await routes.reload();
  });
  const save = useAction(async () => {
    unwrap(
      await gateway.POST('/v1/ai/routes/upsert', {
        body: { id: draft.id.trim(), strategy: draft.strategy, targets: targetsOf(draft.targets) },
      }),
    );
    setDraft({ id: '', strategy: 'fallback', targets: '' });
    await routes.reload();
  });

  return (
    <section aria-labelledby="routes-title">
      <h1 id="routes-title">Routes</h1>
      <form
        class="card"
        aria-label="Save a route"
        onSubmit={(event) => {
          event.preventDefault();
          void save.act();
        }}
      >
        <div class="row">
          <div class="field">
            <label for="route-id">Route id</label>
            <input
              id="route-id"
              required
              maxLength={128}
              placeholder="team/fast"
              value={draft.id}
              onInput={(event) => setDraft({ ...draft, id: event.currentTarget.value })}
            />
          </div>
          <div class="field">
            <label for="route-strategy">Strategy</label>
            <select
              id="route-strategy"
              value={draft.strategy}
              onChange={(event) => setDraft({ ...draft, strategy: event.currentTarget.value as Strategy })}
            >
              {STRATEGIES.map((s) => (
                <option key={s.value} value={s.value}>
                  {s.label}
                </option>
              ))}
            </select>
          </div>
        </div>
        <div class="field">
          <label for="route-targets">
            Targets <span class="hint">(one model a line; a weight after a space for weighted)</span>
          </label>
          <textarea
            id="route-targets"
            required
            value={draft.targets}
            onInput={(event) => setDraft({ ...draft, targets: event.currentTarget.value })}
          />
        </div>
        <button type="submit" class="primary" disabled={save.busy}>
          {save.busy ? 'Saving…' : 'Save route'}
        </button>
      </form>
      <ErrorNotice error={save.error ?? remove.error ?? routes.error} />
      <ListTable
        label="Routes"
        list={routes}
        caption={(items) => <>{count(items.length, 'route')}</>}
        empty={{
          what: 'No routes yet.',
          how: 'A route is a model id of your own over other models (fallback, weighted or least busy): save one above.',
        }}
        columns={['Route', 'Strategy', 'Targets and health', 'Updated', 'Actions']}
        row={(route) => (
          <tr key={route.id}>
            <th scope="row">
              <code>{route.id}</code>
              {!route.available && <div class="badge bad">unavailable</div>}
            </th>
            <td>{route.strategy}</td>
            <td>
              <ul class="targets">
                {route.targets.map((target) => (
                  <li key={target.model}>
                    <code>{target.model}</code>
                    {route.strategy === 'weighted' && <span class="muted"> × {target.weight}</span>}{' '}
                    <span class={`badge ${target.state === 'healthy' ? 'ok' : 'warn'}`}>
                      {target.state === 'healthy' ? 'healthy' : 'cooling down'}
                    </span>
                    {!target.callable && <span class="badge bad">not callable</span>}
                    {target.recent_failures > 0 && (
                      <span class="muted"> {count(target.recent_failures, 'recent failure')}</span>
                    )}
                    {target.cooling_until && (
                      <span class="muted"> until {formatWhen(target.cooling_until)}</span>
                    )}
                  </li>
                ))}
              </ul>
            </td>
            <td>{formatWhen(route.updated_at)}</td>
            <td>
              <div class="row">
                <button
                  type="button"
                  onClick={() =>
                    setDraft({ id: route.id, strategy: route.strategy, targets: linesOf(route) })
                  }
                >
                  Edit <span class="skip">{route.id}</span>
                </button>
                <button
                  type="button"
                  class="danger"
                  disabled={remove.busy}
                  onClick={() => removal.ask(route)}
                >
                  Remove <span class="skip">{route.id}</span>
                </button>
              </div>
            </td>
          </tr>
        )}
      />
      <ConfirmDialog
        {...removal.dialog}
        title={`Remove route ${removal.item?.id ?? ''}?`}
        confirmLabel="Remove route"
        danger
      >
        <p>Requests for this model id fail from now on; generations under way through it finish.</p>
      </ConfirmDialog>
    </section>
  );
}
