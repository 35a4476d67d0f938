import { useState } from 'preact/hooks';
import { gateway } from '../../api/gateway.ts';
import { unwrap } from '../../api/http.ts';
import type { StudioRecord } from '../../api/records.ts';
import { ConfirmDialog, useConfirmation } from '../../ui/ConfirmDialog.tsx';
import { count } from '../../ui/count.ts';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { ListTable } from '../../ui/ListTable.tsx';
import { useAction, useResource } from '../../ui/use-resource.ts';

const STATUS_BADGE = { active: 'ok', paused: 'warn', removed: 'bad' } as const;

/** Studios: create, pause with a reason, activate, remove (after a confirmation). */
export function StudiosPage() {
  const studios = useResource(async () => {
    const answer = unwrap(await gateway.GET('/v1/studios/list', { params: { query: {} } })) as {
      items: StudioRecord[];
    };
    return answer.items;
  });
  const removal = useConfirmation<StudioRecord>(
    (studio) =>
      void change.act(async () =>
        unwrap(await gateway.POST('/v1/studios/remove', { body: { studio_id: studio.id } })),
      ),
  );
  const change = useAction(async (run: () => Promise<unknown>) => {
    await run();
    await studios.reload();
  });
  const create = useAction(async (form: HTMLFormElement) => {
    const data = new FormData(form);
    const studioId = String(data.get('studio_id') ?? '').trim();
    unwrap(
      await gateway.POST('/v1/studios/create', {
        body: { name: String(data.get('name') ?? ''), ...(studioId ? { studio_id: studioId } : {}) },
      }),
    );
    form.reset();
    await studios.reload();
  });

  return (
    <section aria-labelledby="studios-title">
      <h1 id="studios-title">Studios</h1>
      <form
        class="card row"
        aria-label="Create a studio"
        onSubmit={(event) => {
          event.preventDefault();
          void create.act(event.currentTarget);
        }}
      >
        <div class="field">
          <label for="studio-name">Name</label>
          <input id="studio-name" name="name" required maxLength={200} />
        </div>
        <div class="field">
          <label for="studio-id">
            Id <span class="hint">(optional)</span>
          </label>
          <input id="studio-id" name="studio_id" maxLength={64} />
        </div>
        <div class="field">
          <button type="submit" class="primary" disabled={create.busy}>
            {create.busy ? 'Creating…' : 'Create studio'}
          </button>
        </div>
      </form>
      <ErrorNotice error={create.error ?? change.error ?? studios.error} />
      <ListTable
        label="Studios"
        list={studios}
        caption={(items) => <>{count(items.length, 'studio')}</>}
        empty={{
          what: 'No studios yet.',
          how: 'A studio holds tokens, budgets and usage: create the first one above.',
        }}
        columns={['Id', 'Name', 'Status', 'Created', 'Actions']}
        row={(studio) => (
          <tr key={studio.id}>
            <td>
              <code>{studio.id}</code>
            </td>
            <td>{studio.name}</td>
            <td>
              <span class={`badge ${STATUS_BADGE[studio.status]}`}>{studio.status}</span>
              {studio.paused_reason && <div class="muted">{studio.paused_reason}</div>}
            </td>
            <td>{new Date(studio.created_at).toLocaleString()}</td>
            <td>
              <StudioActions
                studio={studio}
                busy={change.busy}
                onPause={(reason) =>
                  change.act(async () =>
                    unwrap(
                      await gateway.POST('/v1/studios/pause', {
                        body: { studio_id: studio.id, ...(reason ? { reason } : {}) },
                      }),
                    ),
                  )
                }
                onActivate={() =>
                  change.act(async () =>
                    unwrap(await gateway.POST('/v1/studios/activate', { body: { studio_id: studio.id } })),
                  )
                }
                onRemove={() => removal.ask(studio)}
              />
            </td>
          </tr>
        )}
      />
      <ConfirmDialog
        {...removal.dialog}
        title={`Remove studio ${removal.item?.id ?? ''}?`}
        confirmLabel="Remove for good"
        danger
      >
        <p>Its tokens are revoked at once and it cannot be activated again. Its history stays in the log.</p>
      </ConfirmDialog>
    </section>
  );
}

function StudioActions(props: {
  studio: StudioRecord;
  busy: boolean;
  onPause(reason: string): void;
  onActivate(): void;
  onRemove(): void;
}) {
  const [reason, setReason] = useState('');
  const { studio } = props;
  if (studio.status === 'removed') return <span class="muted">removed</span>;
  const reasonId = `pause-reason-${studio.id}`;
  return (
    <div class="row">
      {studio.status === 'active' ? (
        <>
          <label class="skip" for={reasonId}>
            Reason to pause {studio.id}
          </label>
          <input
            id={reasonId}
            placeholder="Reason to pause"
            value={reason}
            maxLength={500}
            onInput={(event) => setReason(event.currentTarget.value)}
          />
          <button type="button" disabled={props.busy} onClick={() => props.onPause(reason)}>
            Pause
          </button>
        </>
      ) : (
        <button type="button" disabled={props.busy} onClick={props.onActivate}>
          Activate
        </button>
      )}
      <button type="button" class="danger" disabled={props.busy} onClick={props.onRemove}>
        Remove
      </button>
    </div>
  );
}
