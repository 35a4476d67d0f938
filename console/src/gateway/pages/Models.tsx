import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { gateway } from '../../api/gateway.ts';
import { unwrap } from '../../api/http.ts';
import { Busy } from '../../ui/Busy.tsx';
import { count } from '../../ui/count.ts';
import { EmptyState } from '../../ui/EmptyState.tsx';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { TableScroll } from '../../ui/TableScroll.tsx';
import { useResource } from '../../ui/use-resource.ts';
import type { PageProps } from './index.ts';

/** An item of `GET /v1/ai/models`; the availability fields are in the admin's answer only. */
interface ModelItem {
  id: string;
  name: string;
  description?: string;
  modalities: string[];
  tags: string[];
  available?: boolean;
  missing_env?: string[];
  missing_programs?: string[];
}

/**
 * The model catalog. The admin sees every model, whether it can be called now and the env keys
 * (or programs) an unavailable one is missing; a studio's user sees the models its token may call.
 */
export function ModelsPage({ identity }: PageProps) {
  const admin = identity.kind === 'admin';
  const [filter, setFilter] = useState('');
  const [onlyAvailable, setOnlyAvailable] = useState(false);
  const models = useResource(async () => {
    const answer = unwrap(await gateway.GET('/v1/ai/models')) as {
      items: ModelItem[];
    };
    return answer.items;
  });
  const needle = filter.trim().toLowerCase();
  const shown = (models.data ?? []).filter(
    (model) =>
      (needle === '' || `${model.id} ${model.name} ${model.tags.join(' ')}`.toLowerCase().includes(needle)) &&
      (!onlyAvailable || model.available !== false),
  );

  return (
    <section aria-labelledby="models-title">
      <h1 id="models-title">Models</h1>
      {identity.kind === 'user' && (
        <p class="muted">
          The models this token may call now
          {identity.models === null ? ' (every model)' : `: ${identity.models.join(', ')}`}.
        </p>
      )}
      <div class="row">
        <div class="field">
          <label for="models-filter">Filter</label>
          <input
            id="models-filter"
            type="search"
            value={filter}
            onInput={(event) => setFilter(event.currentTarget.value)}
          />
        </div>
        {admin && (
          <div class="field">
            <label for="models-available">
              <input
                id="models-available"
                type="checkbox"
                checked={onlyAvailable}
                onChange={(event) => setOnlyAvailable(event.currentTarget.checked)}
              />{' '}
              Only available
            </label>
          </div>
        )}
      </div>
      <ErrorNotice error={models.error} />
      {models.loading && !models.data && <Busy label="Loading models" />}
      {models.data && shown.length === 0 && (
        <EmptyState
          what={models.data.length === 0 ? 'No models yet.' : 'No model matches.'}
          how={
            models.data.length > 0 ? (
              'Clear the filter (or "Only available") to see the others.'
            ) : admin ? (
              <>
                Models come from providers: set a provider's key in <Link href="/env">Env</Link>.
              </>
            ) : (
              'This token may call none yet: an admin decides which models it may call.'
            )
          }
        />
      )}
      {models.data && shown.length > 0 && (
        <TableScroll label="Models">
          <table>
            <caption class="muted">
              {shown.length} of {count(models.data.length, 'model')}
            </caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Modalities</th>
                {admin && <th scope="col">Availability</th>}
              </tr>
            </thead>
            <tbody>
              {shown.map((model) => (
                <tr key={model.id}>
                  <td>
                    <code>{model.id}</code>
                    <div>{model.name}</div>
                    {model.description && <div class="muted">{model.description}</div>}
                  </td>
                  <td>{model.modalities.join(', ')}</td>
                  {admin && (
                    <td>
                      <Availability model={model} />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </section>
  );
}

function Availability({ model }: { model: ModelItem }) {
  if (model.available) return <span class="badge ok">available</span>;
  const env = model.missing_env ?? [];
  const programs = model.missing_programs ?? [];
  return (
    <>
      <span class="badge bad">unavailable</span>
      {env.length > 0 && (
        <div>
          Missing env: <code>{env.join(', ')}</code> (<Link href="/env">set in Env</Link>)
        </div>
      )}
      {programs.length > 0 && (
        <div>
          Missing programs: <code>{programs.join(', ')}</code>
        </div>
      )}
    </>
  );
}
