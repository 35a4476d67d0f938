import { useState } from 'preact/hooks';
import { Link, Route, Switch, useLocation } from 'wouter-preact';
import type { Session } from '../../../../sdk/types.ts';
import { agent } from '../../api/runtime.ts';
import { Busy } from '../../ui/Busy.tsx';
import { ConfirmDialog, useConfirmation } from '../../ui/ConfirmDialog.tsx';
import { count } from '../../ui/count.ts';
import { EmptyState } from '../../ui/EmptyState.tsx';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { useAction } from '../../ui/use-resource.ts';
import { asFailure } from '../failure.ts';
import { SessionView } from '../sessions/SessionView.tsx';
import { deleteSession, matches, useFirstMessages } from '../sessions/session-search.ts';
import { useSessionList } from '../sessions/use-session-list.ts';

/**
 * Sessions: the list (newest first, page by page, searched in the page), a new one, and deleting
 * one after a confirmation; `/sessions/<id>` is one session.
 */
export function SessionsPage() {
  return (
    <Switch>
      <Route path="/:id">{(params) => <SessionView key={params.id} sessionId={params.id} />}</Route>
      <Route>
        <SessionList />
      </Route>
    </Switch>
  );
}

function SessionList() {
  const sessions = useSessionList();
  const [, navigate] = useLocation();
  const [query, setQuery] = useState('');
  const firstMessages = useFirstMessages(sessions.items, query.trim() !== '');
  const shown = sessions.items.filter((session) => matches(session, firstMessages.get(session.id), query));
  const removal = useConfirmation<Session>((session) => void remove.act(session));
  const remove = useAction(async (session: Session) => {
    await deleteSession(session.id);
    await sessions.reload();
  });
  const create = useAction(async (form: HTMLFormElement) => {
    const data = new FormData(form);
    const field = (name: string) => String(data.get(name) ?? '').trim();
    try {
      const session = await agent().create({
        title: field('title'),
        ...(field('model') ? { model: field('model') } : {}),
        ...(field('system') ? { system: field('system') } : {}),
      });
      navigate(`/${session.id}`);
    } catch (failure) {
      throw asFailure(failure);
    }
  });
  return (
    <section aria-labelledby="sessions-title">
      <h1 id="sessions-title">Sessions</h1>
      <form
        class="card"
        aria-label="Create a session"
        onSubmit={(event) => {
          event.preventDefault();
          void create.act(event.currentTarget);
        }}
      >
        <div class="row">
          <div class="field">
            <label for="session-title">Title</label>
            <input id="session-title" name="title" maxLength={200} />
          </div>
          <div class="field">
            <label for="session-model">
              Model <span class="hint">(optional: the runtime's)</span>
            </label>
            <input id="session-model" name="model" maxLength={200} />
          </div>
        </div>
        <div class="field">
          <label for="session-system">
            System prompt <span class="hint">(optional)</span>
          </label>
          <textarea id="session-system" name="system" maxLength={100_000} />
        </div>
        <button type="submit" class="primary" disabled={create.busy}>
          {create.busy ? 'Creating…' : 'Create session'}
        </button>
      </form>
      <ErrorNotice error={create.error ?? remove.error ?? sessions.error} />
      <div class="field">
        <label for="session-search">
          Search sessions <span class="hint">(by name, id or first message)</span>
        </label>
        <input
          id="session-search"
          type="search"
          value={query}
          onInput={(event) => setQuery(event.currentTarget.value)}
        />
      </div>
      {sessions.loading && sessions.items.length === 0 && <Busy label="Loading sessions" />}
      {!sessions.loading && sessions.items.length === 0 && !sessions.error && (
        <EmptyState
          what="No sessions yet."
          how="A session is a conversation with the agent: create one above (or through the SDK, or a chat plugin)."
        />
      )}
      {sessions.items.length > 0 && shown.length === 0 && (
        <EmptyState
          what={`No session matches "${query.trim()}".`}
          how={
            sessions.more
              ? 'Load more sessions below to search them too, or change the search.'
              : 'Change the search.'
          }
        />
      )}
      {shown.length > 0 && (
        <SessionTable
          sessions={shown}
          total={sessions.items.length}
          busy={remove.busy}
          onDelete={(session) => removal.ask(session)}
        />
      )}
      {sessions.more && (
        <button type="button" disabled={sessions.loading} onClick={() => void sessions.loadMore()}>
          Load more sessions
        </button>
      )}
      <ConfirmDialog
        {...removal.dialog}
        title={`Delete session ${removal.item?.title || removal.item?.id || ''}?`}
        confirmLabel="Delete session"
        danger
      >
        <p>It leaves this list and can no longer be opened or prompted. Its events stay in the log.</p>
      </ConfirmDialog>
    </section>
  );
}

function SessionTable(props: {
  sessions: Session[];
  /** How many are loaded (the table shows those matching the search). */
  total: number;
  busy: boolean;
  onDelete(session: Session): void;
}) {
  const { sessions } = props;
  return (
    <div class="table-wrap">
      <table>
        <caption class="muted">
          {sessions.length === props.total
            ? count(sessions.length, 'session')
            : `${sessions.length} of ${count(props.total, 'session')}`}
        </caption>
        <thead>
          <tr>
            <th scope="col">Session</th>
            <th scope="col">Model</th>
            <th scope="col">Kind</th>
            <th scope="col">Status</th>
            <th scope="col">Forked from</th>
            <th scope="col">Updated</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {sessions.map((session) => (
            <tr key={session.id}>
              <th scope="row">
                <Link href={`/${session.id}`}>{session.title || session.id}</Link>
                {session.title && (
                  <div class="muted">
                    <code>{session.id}</code>
                  </div>
                )}
              </th>
              <td>
                <code>{session.model}</code>
              </td>
              <td>{session.kind}</td>
              <td>
                <span class={`badge ${session.status === 'busy' ? 'warn' : 'ok'}`}>{session.status}</span>
              </td>
              <td>
                {session.forked_from ? (
                  <>
                    <Link href={`/${session.forked_from.session_id}`}>{session.forked_from.session_id}</Link>{' '}
                    <span class="muted">at revision {session.forked_from.revision}</span>
                  </>
                ) : (
                  <span class="muted">—</span>
                )}
              </td>
              <td>{new Date(session.updated_at).toLocaleString()}</td>
              <td>
                {/* A chat conversation's session goes with its conversation, never alone (a 409). */}
                {session.kind === 'chat' ? (
                  <span class="muted">its chat's</span>
                ) : (
                  <button
                    type="button"
                    class="danger"
                    disabled={props.busy}
                    aria-label={`Delete ${session.title || session.id}`}
                    onClick={() => props.onDelete(session)}
                  >
                    Delete
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
