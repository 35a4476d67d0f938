import { Link, Route, Switch, useLocation } from 'wouter-preact';
import type { Session } from '../../../../sdk/types.ts';
import { agent } from '../../api/runtime.ts';
import { Busy } from '../../ui/Busy.tsx';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { useAction } from '../../ui/use-resource.ts';
import { asFailure } from '../failure.ts';
import { SessionView } from '../sessions/SessionView.tsx';
import { useSessionList } from '../sessions/use-session-list.ts';

/** Sessions: the list (newest first, page by page) and a new one; `/sessions/<id>` is one session. */
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
      <ErrorNotice error={create.error ?? sessions.error} />
      {sessions.loading && sessions.items.length === 0 && <Busy label="Loading sessions" />}
      <SessionTable sessions={sessions.items} />
      {sessions.more && (
        <button type="button" disabled={sessions.loading} onClick={() => void sessions.loadMore()}>
          Load more sessions
        </button>
      )}
    </section>
  );
}

function SessionTable({ sessions }: { sessions: Session[] }) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="muted">{sessions.length} sessions</caption>
        <thead>
          <tr>
            <th scope="col">Session</th>
            <th scope="col">Model</th>
            <th scope="col">Kind</th>
            <th scope="col">Status</th>
            <th scope="col">Forked from</th>
            <th scope="col">Updated</th>
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
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
