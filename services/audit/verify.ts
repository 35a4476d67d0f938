import type { EventStore, StoredEvent } from '../../shared/event-store/types.ts';
import { eventDigest } from './digest.ts';
import { type LogSealedData, LogSealedSchema, SEALS_STREAM, sealDecider, sealHash } from './seal.ts';

/** Why verification failed at a position. */
export type BreakReason =
  /** The event at a position its seal lists does not digest to what the seal holds. */
  | 'edited'
  /** A position its seal lists has no event. */
  | 'missing'
  /** An event inside a sealed range that its seal does not list. */
  | 'unexpected'
  /** An event of the seals stream that is not a well-formed seal. */
  | 'seal_unreadable'
  /** A seal whose hash is not the hash of what it holds. */
  | 'seal_edited'
  /** A seal that does not name the previous seal's hash, or covers positions the previous one did. */
  | 'seal_chain_broken';

export interface LogBreak {
  position: number;
  reason: BreakReason;
  /** Position of the seal whose range (or which itself) is broken. */
  seal: number;
}

export interface VerifyReport {
  /** No break in the sealed part of the log (events after the last seal are counted in `unsealed`). */
  ok: boolean;
  /** Sealed events found as their seal lists them. */
  events_checked: number;
  seals_checked: number;
  /** The last position the seals cover (0: none yet). */
  sealed_through: number;
  /** Events after the last seal: not verified, not proven either. */
  unsealed: number;
  /** The log's head when verification started; nothing after it was read. */
  head: number;
  /** How many breaks were found; the first is named. */
  breaks: number;
  first_break?: LogBreak;
}

export interface VerifyProgress {
  /** Events read so far. */
  events: number;
  /** 0..1, by position from the first event to the head. */
  fraction: number;
}

export interface VerifyOptions {
  /** Events per read of the log. Default 1,000. */
  pageSize?: number;
  onProgress?: (progress: VerifyProgress) => void;
}

const SEALS_PER_READ = 50;

/**
 * Checks the log against its seals up to its current head, reading both in pages: every seal must
 * chain to the one before it and hash to what it holds, and every range must hold exactly the events
 * its seal lists, each digesting as listed. Each seal is checked before its range, so a deleted or
 * inserted seal is named as the break, not the events its loss leaves unaccounted for. Verification
 * goes on after a break (all are counted; the first is named).
 */
export async function verifyLog(store: EventStore, options: VerifyOptions = {}): Promise<VerifyReport> {
  const head = await store.headPosition();
  const log = new LogCursor(store, head, options.pageSize ?? 1_000, options.onProgress);
  let breaks = 0;
  let firstBreak: LogBreak | undefined;
  const found = (position: number, reason: BreakReason, seal: number) => {
    breaks++;
    firstBreak ??= { position, reason, seal };
  };
  let chain = sealDecider.initialState();
  let eventsChecked = 0;
  let sealsChecked = 0;

  for await (const stored of sealsUpTo(store, head)) {
    const parsed = stored.type === 'LogSealed' ? LogSealedSchema.safeParse(stored.data) : undefined;
    if (!parsed?.success) {
      found(stored.position, 'seal_unreadable', stored.position);
      continue;
    }
    const seal: LogSealedData = parsed.data;
    sealsChecked++;
    const { hash, ...body } = seal;
    if (sealHash(body) !== hash) found(stored.position, 'seal_edited', stored.position);
    if (body.previous !== chain.hash || body.first <= chain.last)
      found(stored.position, 'seal_chain_broken', stored.position);

    for (const [position, digest] of body.events) {
      if (position <= log.taken) continue; // covered by an earlier range: the chain break says so
      for (let event = await log.peek(); event && event.position < position; event = await log.peek()) {
        found(event.position, 'unexpected', stored.position);
        log.take();
      }
      const event = await log.peek();
      if (event?.position !== position) {
        found(position, 'missing', stored.position);
        continue;
      }
      log.take();
      if (eventDigest(event) === digest) eventsChecked++;
      else found(position, 'edited', stored.position);
    }
    chain = { hash, last: Math.max(chain.last, body.last) };
  }

  let unsealed = 0;
  while (await log.peek()) {
    log.take();
    unsealed++;
  }
  return {
    ok: breaks === 0,
    events_checked: eventsChecked,
    seals_checked: sealsChecked,
    sealed_through: chain.last,
    unsealed,
    head,
    breaks,
    ...(firstBreak === undefined ? {} : { first_break: firstBreak }),
  };
}

/** The events of the seals stream, in order, up to the head. */
async function* sealsUpTo(store: EventStore, head: number): AsyncGenerator<StoredEvent> {
  let after = -1;
  for (;;) {
    const page = await store.readStream(SEALS_STREAM, { after, limit: SEALS_PER_READ });
    for (const seal of page) {
      if (seal.position > head) return;
      yield seal;
    }
    if (page.length < SEALS_PER_READ) return;
    after = page.at(-1)!.revision;
  }
}

/** The log up to `head`, without the seals stream, one event at a time, read in pages. */
class LogCursor {
  #page: StoredEvent[] = [];
  #index = 0;
  #after = 0;
  #ended = false;
  #read = 0;
  #first: number | undefined;
  /** Position of the last event taken (0: none yet). */
  taken = 0;

  constructor(
    private readonly store: EventStore,
    private readonly head: number,
    private readonly pageSize: number,
    private readonly onProgress?: (progress: VerifyProgress) => void,
  ) {}

  async peek(): Promise<StoredEvent | undefined> {
    while (this.#index >= this.#page.length && !this.#ended) await this.#readPage();
    return this.#page[this.#index];
  }

  take(): void {
    const event = this.#page[this.#index++];
    if (event) this.taken = event.position;
  }

  async #readPage(): Promise<void> {
    const page = await this.store.readAll({ after: this.#after, limit: this.pageSize });
    this.#after = page.at(-1)?.position ?? this.#after;
    this.#ended = page.length < this.pageSize || this.#after >= this.head;
    this.#page = page.filter((e) => e.position <= this.head && e.streamId !== SEALS_STREAM);
    this.#index = 0;
    this.#read += page.length;
    this.#first ??= page[0]?.position ?? this.head;
    const span = this.head - this.#first;
    const fraction = span <= 0 ? 1 : Math.min(1, Math.max(0, (this.#after - this.#first) / span));
    this.onProgress?.({ events: this.#read, fraction });
  }
}
