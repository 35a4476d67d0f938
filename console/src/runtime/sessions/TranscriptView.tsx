import type { Part } from '../../../../sdk/types.ts';
import { count } from '../../ui/count.ts';
import { EmptyState } from '../../ui/EmptyState.tsx';
import { formatUsd } from '../../ui/format.ts';
import { type Transcript, type TranscriptMessage, type TranscriptTurn, turnUsage } from './transcript.ts';

const TOOL_BADGE = { pending: 'warn', running: 'warn', completed: 'ok', error: 'bad' } as const;
const TURN_BADGE = {
  queued: 'warn',
  running: 'warn',
  completed: 'ok',
  failed: 'bad',
  cancelled: 'bad',
} as const;

/** The turns that have begun, each with its messages: stored parts, text still being typed, tool calls. */
export function TranscriptView({ transcript }: { transcript: Transcript }) {
  const started = [...transcript.turns.values()].filter((turn) => turn.state !== 'queued');
  const turnIds = new Set(started.map((turn) => turn.id));
  const loose = transcript.messages.filter((m) => !turnIds.has(m.turnId));
  return (
    <section aria-labelledby="transcript-title">
      <h2 id="transcript-title">Transcript</h2>
      {started.length === 0 && loose.length === 0 && (
        <EmptyState
          what="Nothing said yet."
          how="Send a prompt below: the answer appears here as it is written."
        />
      )}
      <ol class="transcript">
        {started.map((turn, index) => (
          <TurnItem
            key={turn.id}
            turn={turn}
            number={index + 1}
            messages={transcript.messages.filter((m) => m.turnId === turn.id)}
          />
        ))}
        {loose.map((message) => (
          <li key={message.id}>
            <MessageView message={message} />
          </li>
        ))}
      </ol>
    </section>
  );
}

function TurnItem(props: { turn: TranscriptTurn; number: number; messages: TranscriptMessage[] }) {
  const { turn } = props;
  return (
    <li>
      <article aria-label={`Turn ${props.number}`} aria-busy={turn.state === 'running'}>
        <p class="row">
          <span class="muted">Turn {props.number}</span>
          <span class={`badge ${TURN_BADGE[turn.state]}`}>{turn.state}</span>
        </p>
        {props.messages.map((message) => (
          <MessageView key={message.id} message={message} />
        ))}
        {turn.error && (
          <p class="notice error">
            Turn {turn.state}: {turn.error}
          </p>
        )}
        <TurnUsageLine number={props.number} messages={props.messages} />
      </article>
    </li>
  );
}

const seconds = (ms: number) => `${(ms / 1000).toLocaleString(undefined, { maximumFractionDigits: 1 })} s`;

/**
 * What the turn's model calls took: tokens in and out (as the gateway reported them), their cost (at
 * the gateway's prices, as the runtime recorded it) and the time from its first call to its last
 * answer. No cost is shown when a call's was not recorded: the runtime could not read the prices.
 */
function TurnUsageLine({ number, messages }: { number: number; messages: TranscriptMessage[] }) {
  const answers = messages.filter((m) => m.role === 'assistant' && m.completed);
  if (answers.length === 0) return null;
  const usage = turnUsage(messages);
  const reported = answers.some((m) => m.usage !== null);
  return (
    <p class="muted row turn-usage" data-turn={number}>
      {reported ? (
        <>
          <span data-field="input-tokens">{count(usage.inputTokens, 'token')} in</span>
          <span data-field="output-tokens">{count(usage.outputTokens, 'token')} out</span>
          {usage.costUsd !== undefined && <span data-field="cost">{formatUsd(usage.costUsd)}</span>}
        </>
      ) : (
        <span>tokens not reported</span>
      )}
      {usage.latencyMs !== undefined && <span data-field="latency">{seconds(usage.latencyMs)}</span>}
    </p>
  );
}

function MessageView({ message }: { message: TranscriptMessage }) {
  const drafts = [...message.drafts.entries()];
  return (
    <article class={`message ${message.role}`} aria-label={message.role === 'user' ? 'You' : 'Agent'}>
      <p class="muted row">
        <strong>{message.role === 'user' ? 'You' : 'Agent'}</strong>
        <span>revision {message.revision}</span>
      </p>
      {message.parts.map((part) => (
        <PartView key={part.id} part={part} />
      ))}
      {drafts.map(([partId, text]) => (
        <div key={partId} class="text draft" role="note" aria-label="Being written">
          {text}
        </div>
      ))}
    </article>
  );
}

/** What the agent is told of attachments is their content in tags: the transcript shows the words after them. */
const withoutFileTags = (text: string) => text.replace(/<file [^>]*>[\s\S]*?<\/file>\n*/g, '');

function PartView({ part }: { part: Part }) {
  switch (part.type) {
    case 'text':
      return <p class="text">{withoutFileTags(part.text)}</p>;
    case 'reasoning':
      return (
        <details>
          <summary>Reasoning</summary>
          <p class="text muted">{part.text}</p>
        </details>
      );
    case 'file':
      return (
        <p class="file">
          Attached <strong>{part.name}</strong> <span class="muted">({part.mime_type})</span> at{' '}
          <code>{part.path}</code>
        </p>
      );
    case 'tool':
      return (
        <details class="tool" open>
          <summary>
            Tool <code>{part.tool}</code> <span class={`badge ${TOOL_BADGE[part.state]}`}>{part.state}</span>
          </summary>
          <h4>Input</h4>
          <pre class="secret">{JSON.stringify(part.input, null, 2)}</pre>
          {part.output !== undefined && (
            <>
              <h4>Result</h4>
              <pre class="secret">{JSON.stringify(part.output, null, 2)}</pre>
            </>
          )}
          {part.error && <p class="notice error">{part.error}</p>}
        </details>
      );
  }
}
