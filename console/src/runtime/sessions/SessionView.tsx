import { useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import type { Session } from '../../../../sdk/types.ts';
import { agent } from '../../api/runtime.ts';
import { Busy } from '../../ui/Busy.tsx';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { useAction, useResource } from '../../ui/use-resource.ts';
import { asFailure } from '../failure.ts';
import { PromptBox } from './PromptBox.tsx';
import { QueueList } from './QueueList.tsx';
import { TranscriptView } from './TranscriptView.tsx';
import { useSessionStream } from './use-session-stream.ts';

const STREAM_LABEL = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…' } as const;

/** One session: its transcript as it streams, its queue, a prompt box, and forking at a revision. */
export function SessionView({ sessionId }: { sessionId: string }) {
  const session = useResource(async () => {
    try {
      return await agent().get(sessionId);
    } catch (failure) {
      throw asFailure(failure);
    }
  }, [sessionId]);
  const stream = useSessionStream(sessionId);
  const { transcript } = stream;
  const titleId = 'session-title';
  return (
    <section aria-labelledby={titleId}>
      <p>
        <Link href="/">← Sessions</Link>
      </p>
      <h1 id={titleId}>{session.data?.title || `Session ${sessionId}`}</h1>
      <ErrorNotice error={session.error ?? stream.error} />
      {session.data && <SessionFacts session={session.data} />}
      <p class="row">
        <span class="muted">Stream:</span>
        <span role="status" class={`badge ${stream.state === 'live' ? 'ok' : 'warn'}`}>
          {STREAM_LABEL[stream.state]}
        </span>
        <span class="muted">at revision {transcript.revision}</span>
      </p>
      {stream.state === 'connecting' && transcript.revision < 0 && !stream.error && (
        <Busy label="Loading the transcript" />
      )}
      <TranscriptView transcript={transcript} />
      <QueueList transcript={transcript} />
      {!session.error && <PromptBox sessionId={sessionId} transcript={transcript} />}
      {!session.error && <ForkForm sessionId={sessionId} revision={transcript.revision} />}
    </section>
  );
}

function SessionFacts({ session }: { session: Session }) {
  return (
    <dl class="facts">
      <div>
        <dt class="muted">Id</dt>
        <dd>
          <code>{session.id}</code>
        </dd>
      </div>
      <div>
        <dt class="muted">Model</dt>
        <dd>
          <code>{session.model}</code>
        </dd>
      </div>
      <div>
        <dt class="muted">Kind</dt>
        <dd>{session.kind}</dd>
      </div>
      {session.forked_from && (
        <div>
          <dt class="muted">Forked from</dt>
          <dd>
            <Link href={`/${session.forked_from.session_id}`}>{session.forked_from.session_id}</Link> at
            revision {session.forked_from.revision}
          </dd>
        </div>
      )}
    </dl>
  );
}

/** A new session with this one's history up to a revision (each message shows its own). */
function ForkForm({ sessionId, revision }: { sessionId: string; revision: number }) {
  const [, navigate] = useLocation();
  const [chosen, setChosen] = useState('');
  const fork = useAction(async () => {
    try {
      const at = chosen.trim() === '' ? undefined : Number(chosen);
      const forked = await agent().fork(sessionId, at === undefined ? {} : { at_revision: at });
      navigate(`/${forked.id}`);
    } catch (failure) {
      throw asFailure(failure);
    }
  });
  return (
    <form
      class="card"
      aria-label="Fork this session"
      onSubmit={(event) => {
        event.preventDefault();
        void fork.act();
      }}
    >
      <h2>Fork</h2>
      <div class="row">
        <div class="field">
          <label for="fork-revision">
            At revision <span class="hint">(empty: the latest, {revision})</span>
          </label>
          <input
            id="fork-revision"
            type="number"
            min={0}
            max={Math.max(revision, 0)}
            step={1}
            value={chosen}
            onInput={(event) => setChosen(event.currentTarget.value)}
          />
        </div>
        <div class="field">
          <button type="submit" disabled={fork.busy}>
            {fork.busy ? 'Forking…' : 'Fork session'}
          </button>
        </div>
      </div>
      <ErrorNotice error={fork.error} />
    </form>
  );
}
