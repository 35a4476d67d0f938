import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { backoffDelay, pause } from '../shared/retry.js';
import type {
  ApiErrorBody,
  Attachment,
  CompletedTurn,
  HistoryEvent,
  HistoryPage,
  Message,
  Page,
  PartDelta,
  QueuedTurn,
  Session,
  SessionStreamItem,
  SystemInfo,
} from './types.js';

export type * from './types.js';

/** A non-2xx answer of the runtime, with the error envelope's fields. */
export class RemoteAgentError extends Error {
  override readonly name = 'RemoteAgentError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId?: string,
  ) {
    super(message);
  }
}

export interface RemoteAgentOptions {
  /** The runtime's base URL, e.g. `http://127.0.0.1:8601`. */
  baseUrl: string;
  /** STUDIO_RUNTIME_TOKEN, when the runtime requires one. */
  token?: string;
  fetch?: typeof fetch;
}

export interface EventsOptions {
  /** Resume after this revision (default: from the start). */
  after?: number;
  signal?: AbortSignal;
  /** Wait before reconnecting after a dropped connection (default 250 ms, doubling to 5 s). */
  retryMs?: number;
}

/**
 * A typed client of the session routes: keeps a remote program aligned with a local agent.
 * `events()` follows a session and resumes by itself from the last revision it saw.
 */
export class RemoteAgent {
  readonly #base: string;
  readonly #fetch: typeof fetch;
  readonly #headers: Record<string, string>;

  constructor(options: RemoteAgentOptions) {
    this.#base = options.baseUrl.replace(/\/+$/, '');
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#headers = options.token ? { authorization: `Bearer ${options.token}` } : {};
  }

  async #request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const response = await this.#fetch(`${this.#base}${path}`, {
      method,
      headers: { ...this.#headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const json = text ? (JSON.parse(text) as unknown) : undefined;
    if (!response.ok) {
      const error = (json as ApiErrorBody | undefined)?.error;
      throw new RemoteAgentError(
        response.status,
        error?.code ?? 'http_error',
        error?.message ?? text,
        error?.request_id,
      );
    }
    return json as T;
  }

  create(input: { title?: string; model?: string; system?: string } = {}): Promise<Session> {
    return this.#request('POST', '/api/sdk/sessions', input);
  }

  list(page: { limit?: number; cursor?: string } = {}): Promise<Page<Session>> {
    return this.#request('GET', `/api/sdk/sessions${query(page)}`);
  }

  get(sessionId: string): Promise<Session> {
    return this.#request('GET', `/api/sdk/sessions/${encodeURIComponent(sessionId)}`);
  }

  /** Runs one turn and returns its final message; with `wait: false`, queues it and returns at once. */
  prompt(
    sessionId: string,
    input: { text: string; attachments?: Attachment[]; wait?: true },
  ): Promise<CompletedTurn>;
  prompt(
    sessionId: string,
    input: { text: string; attachments?: Attachment[]; wait: false },
  ): Promise<QueuedTurn>;
  prompt(
    sessionId: string,
    input: { text: string; attachments?: Attachment[]; wait?: boolean },
  ): Promise<CompletedTurn | QueuedTurn> {
    return this.#request('POST', `/api/sdk/sessions/${encodeURIComponent(sessionId)}/prompt`, input);
  }

  history(sessionId: string, page: { after?: number; limit?: number } = {}): Promise<HistoryPage> {
    return this.#request('GET', `/api/sdk/sessions/${encodeURIComponent(sessionId)}/history${query(page)}`);
  }

  /** Every stored event of a session, page by page. */
  async allHistory(sessionId: string): Promise<HistoryEvent[]> {
    const all: HistoryEvent[] = [];
    let after = -1;
    for (;;) {
      const page = await this.history(sessionId, { after, limit: 1000 });
      all.push(...page.items);
      if (page.next_after === null) return all;
      after = page.next_after;
    }
  }

  messages(sessionId: string, page: { limit?: number; cursor?: string } = {}): Promise<Page<Message>> {
    return this.#request('GET', `/api/sdk/sessions/${encodeURIComponent(sessionId)}/messages${query(page)}`);
  }

  system(sessionId: string): Promise<SystemInfo> {
    return this.#request('GET', `/api/sdk/sessions/${encodeURIComponent(sessionId)}/system`);
  }

  fork(sessionId: string, input: { at_revision?: number } = {}): Promise<Session> {
    return this.#request('POST', `/api/sdk/sessions/${encodeURIComponent(sessionId)}/fork`, input);
  }

  /**
   * Follows a session: stored events after `after`, then live ones, each stored event once and in
   * order, reconnecting with `Last-Event-ID` whenever the connection drops. Ends when `signal` aborts.
   */
  async *events(sessionId: string, options: EventsOptions = {}): AsyncGenerator<SessionStreamItem> {
    let last = options.after ?? -1;
    const backoff = { initialMs: options.retryMs ?? 250, maxMs: 5_000 };
    let failures = 0;
    let goingAway = false;
    while (!options.signal?.aborted) {
      try {
        const response = await this.#fetch(
          `${this.#base}/api/sdk/sessions/${encodeURIComponent(sessionId)}/events`,
          {
            headers: { ...this.#headers, accept: 'text/event-stream', 'last-event-id': String(last) },
            signal: options.signal,
          },
        );
        if (!response.ok || !response.body) {
          const body = (await response.json().catch(() => undefined)) as ApiErrorBody | undefined;
          // 4xx will not get better by retrying: the session does not exist, the id is malformed.
          if (response.status >= 400 && response.status < 500) {
            throw new RemoteAgentError(
              response.status,
              body?.error.code ?? 'http_error',
              body?.error.message ?? '',
              body?.error.request_id,
            );
          }
          throw new Error(`the runtime answered ${response.status}`);
        }
        failures = 0;
        goingAway = false;
        for await (const message of readEvents(response.body)) {
          // The runtime is stopping: reconnect at once (through a load balancer, to another one).
          if (message.event === 'server.going_away') {
            goingAway = true;
            continue;
          }
          if (message.event === 'part.delta') {
            const delta = JSON.parse(message.data) as PartDelta;
            yield { kind: 'delta', messageId: delta.messageId, partId: delta.partId, delta: delta.delta };
            continue;
          }
          const event = JSON.parse(message.data) as HistoryEvent;
          if (event.revision <= last) continue;
          last = event.revision;
          yield { kind: 'event', ...event };
        }
      } catch (error) {
        if (options.signal?.aborted) return;
        if (error instanceof RemoteAgentError) throw error;
      }
      failures++;
      await pause(goingAway ? 0 : backoffDelay(failures, backoff), options.signal);
      goingAway = false;
    }
  }
}

async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<EventSourceMessage> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      parser.feed(decoder.decode(value, { stream: true }));
      while (pending.length > 0) yield pending.shift()!;
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}

function query(params: Record<string, string | number | undefined>): string {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined) as [string, string | number][];
  return entries.length === 0
    ? ''
    : `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString()}`;
}
