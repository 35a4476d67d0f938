import type { MessageUsage, Part, SessionStreamItem } from '../../../../sdk/types.ts';

/** A message of the transcript: its stored parts, and the text being typed into parts not stored yet. */
export interface TranscriptMessage {
  id: string;
  role: 'user' | 'assistant';
  turnId: string;
  parts: Part[];
  /** Part id → text received as `part.delta` and not yet replaced by the stored part. */
  drafts: Map<string, string>;
  completed: boolean;
  /** The revision of the last stored event of this message: where a fork after it begins. */
  revision: number;
  /** When it was created and completed (the events' times): an assistant message's latency. */
  createdAt: string;
  completedAt?: string;
  /** The model call's tokens and cost, as its `MessageCompleted` recorded them (none for a user's message). */
  usage: MessageUsage | null;
}

/** What a turn's model calls cost it: tokens and USD summed, and the time from its first call to its last answer. */
export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  /** Undefined when a call's cost was not recorded (the runtime could not read the prices, or an older event). */
  costUsd: number | undefined;
  /** Undefined until an assistant message of the turn completed. */
  latencyMs: number | undefined;
}

export interface TranscriptTurn {
  id: string;
  /** What was asked (attachment tags included, as the agent sees it). */
  text: string;
  state: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
  error?: string;
}

/**
 * What the session's stream has said so far, folded in order: messages with their parts, the turns
 * and their queue. Stored events come once each with their revision; token deltas carry none and
 * are only shown until the stored part arrives.
 */
export interface Transcript {
  /** The last stored revision seen: where a resumed stream goes on from. */
  revision: number;
  messages: TranscriptMessage[];
  turns: Map<string, TranscriptTurn>;
  /** Turns waiting, oldest first. */
  queue: string[];
  running: string | null;
}

export const emptyTranscript = (): Transcript => ({
  revision: -1,
  messages: [],
  turns: new Map(),
  queue: [],
  running: null,
});

/** A queued turn's place: the running turn is 1, the first waiting one after it 2 (as the prompt route answers). */
export const queuePosition = (transcript: Transcript, turnId: string): number =>
  transcript.queue.indexOf(turnId) + 1 + (transcript.running ? 1 : 0);

const ENDED = { TurnCompleted: 'completed', TurnFailed: 'failed', TurnCancelled: 'cancelled' } as const;

/** Applies a batch of stream items; returns a new transcript (the old one is left as it was). */
export function fold(previous: Transcript, items: readonly SessionStreamItem[]): Transcript {
  const next: Transcript = {
    revision: previous.revision,
    messages: previous.messages.map((m) => ({ ...m, parts: [...m.parts], drafts: new Map(m.drafts) })),
    turns: new Map(previous.turns),
    queue: [...previous.queue],
    running: previous.running,
  };
  for (const item of items) {
    if (item.kind === 'delta') applyDelta(next, item);
    else if (item.revision > next.revision) applyEvent(next, item);
  }
  return next;
}

function applyDelta(t: Transcript, delta: Extract<SessionStreamItem, { kind: 'delta' }>): void {
  const message = t.messages.find((m) => m.id === delta.messageId);
  if (!message || message.completed || message.parts.some((p) => p.id === delta.partId)) return;
  message.drafts.set(delta.partId, (message.drafts.get(delta.partId) ?? '') + delta.delta);
}

function applyEvent(t: Transcript, event: Extract<SessionStreamItem, { kind: 'event' }>): void {
  t.revision = event.revision;
  const data = event.data as Record<string, unknown>;
  const text = (key: string) => (typeof data[key] === 'string' ? (data[key] as string) : '');
  const message = () => t.messages.find((m) => m.id === text('messageId'));
  switch (event.type) {
    case 'TurnQueued':
      t.turns.set(text('turnId'), { id: text('turnId'), text: text('text'), state: 'queued' });
      t.queue.push(text('turnId'));
      return;
    case 'TurnStarted':
      t.queue = t.queue.filter((id) => id !== text('turnId'));
      t.running = text('turnId');
      setTurn(t, text('turnId'), { state: 'running' });
      return;
    case 'TurnCompleted':
    case 'TurnFailed':
    case 'TurnCancelled':
      t.queue = t.queue.filter((id) => id !== text('turnId'));
      if (t.running === text('turnId')) t.running = null;
      setTurn(t, text('turnId'), {
        state: ENDED[event.type],
        ...(text('error') || text('reason') ? { error: text('error') || text('reason') } : {}),
      });
      return;
    case 'MessageCreated':
      t.messages.push({
        id: text('messageId'),
        role: text('role') === 'user' ? 'user' : 'assistant',
        turnId: text('turnId'),
        parts: [],
        drafts: new Map(),
        completed: false,
        revision: event.revision,
        createdAt: event.time,
        usage: null,
      });
      return;
    case 'PartUpdated': {
      const target = message();
      const part = data.part as Part | undefined;
      if (!target || !part) return;
      const at = target.parts.findIndex((p) => p.id === part.id);
      if (at === -1) target.parts.push(part);
      else target.parts[at] = part;
      target.drafts.delete(part.id);
      target.revision = event.revision;
      return;
    }
    case 'MessageCompleted': {
      const target = message();
      if (!target) return;
      target.completed = true;
      target.drafts.clear();
      target.revision = event.revision;
      target.completedAt = event.time;
      target.usage = usageOf(data.usage);
      return;
    }
    default:
      return;
  }
}

function usageOf(value: unknown): TranscriptMessage['usage'] {
  if (typeof value !== 'object' || value === null) return null;
  const { inputTokens, outputTokens, costUsd } = value as Record<string, unknown>;
  if (typeof inputTokens !== 'number' || typeof outputTokens !== 'number') return null;
  return typeof costUsd === 'number' ? { inputTokens, outputTokens, costUsd } : { inputTokens, outputTokens };
}

/** The tokens, cost and latency of a turn's assistant messages (the model calls it made). */
export function turnUsage(messages: readonly TranscriptMessage[]): TurnUsage {
  const answers = messages.filter((m) => m.role === 'assistant');
  const done = answers.filter((m) => m.completedAt !== undefined);
  const first = answers[0];
  const last = done.at(-1);
  return {
    inputTokens: answers.reduce((sum, m) => sum + (m.usage?.inputTokens ?? 0), 0),
    outputTokens: answers.reduce((sum, m) => sum + (m.usage?.outputTokens ?? 0), 0),
    costUsd: costOf(answers.filter((m) => m.usage !== null)),
    latencyMs:
      first && last?.completedAt
        ? Math.max(0, Date.parse(last.completedAt) - Date.parse(first.createdAt))
        : undefined,
  };
}

/** The calls' costs summed in micro-dollars (whole, as recorded), so the sum has no float dust. */
function costOf(priced: readonly TranscriptMessage[]): number | undefined {
  if (priced.length === 0 || priced.some((m) => m.usage?.costUsd === undefined)) return undefined;
  return priced.reduce((sum, m) => sum + Math.round((m.usage?.costUsd ?? 0) * 1_000_000), 0) / 1_000_000;
}

function setTurn(t: Transcript, id: string, change: Partial<TranscriptTurn>): void {
  const turn = t.turns.get(id) ?? { id, text: '', state: 'queued' as const };
  t.turns.set(id, { ...turn, ...change });
}
