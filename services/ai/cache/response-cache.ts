import type { ActionContext } from '../../../shared/http/action.ts';
import type { Logger } from '../../../shared/logger.ts';
import { assertModelAllowed } from '../governance/model-access.ts';
import { type CacheableRequest, cacheKey } from './normalize.ts';
import { CACHE_HEADER, cachePolicy } from './policy.ts';
import { type CacheStore, MAX_ENTRY_BYTES } from './store.ts';
import { type CacheStatus, CacheTicket } from './ticket.ts';

/** What is kept per answer: when it was stored, to weigh against the TTL the next request accepts. */
interface Entry {
  storedAt: number;
  answer: unknown;
}

/** Failures of the store are logged at most this often: a Redis down must not flood the log. */
const WARN_EVERY_MS = 60_000;

/**
 * Exact-match cache of generations' answers, per studio. The cache is an optimisation: when its
 * store fails, a lookup is a miss and a store is skipped, and the generation goes on.
 */
export class ResponseCache {
  readonly #now: () => number;
  #warnedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly options: {
      store: CacheStore;
      /** The studio's `cache_ttl_s` (0: off). */
      studioTtlS: (studioId: string) => number;
      /** Bytes of answers one studio's entries may hold (`STUDIO_CACHE_MAX_BYTES_PER_STUDIO`). */
      studioMaxBytes: number;
      logger: Logger;
      now?: () => number;
      /** Told each lookup's result (metrics). */
      onLookup?: (status: CacheStatus) => void;
    },
  ) {
    this.#now = options.now ?? Date.now;
  }

  /**
   * Looks the request up and says so in the answer's `x-studio-cache` header. Model access is
   * checked first (to the id asked for: a route's, through one), so a token refused the model
   * learns nothing of what the cache holds.
   */
  async lookup(ctx: ActionContext, request: CacheableRequest): Promise<CacheTicket> {
    assertModelAllowed(ctx.identity, request.model);
    const header = ctx.req.headers[CACHE_HEADER];
    const asked = Array.isArray(header) ? header.join(', ') : header;
    const policy = cachePolicy(ctx.identity, asked, this.options.studioTtlS);
    let ticket: CacheTicket;
    if (!policy.use) {
      ticket = new CacheTicket('bypass');
    } else {
      const key = cacheKey(policy.studioId, request);
      const found = await this.#read(key, policy.ttlS);
      const save = (answer: unknown) => this.#write(key, policy.ttlS, answer, policy.studioId);
      ticket = found === undefined ? new CacheTicket('miss', undefined, save) : new CacheTicket('hit', found);
    }
    ctx.res.setHeader(CACHE_HEADER, ticket.status);
    this.options.onLookup?.(ticket.status);
    return ticket;
  }

  close(): Promise<void> {
    return this.options.store.close();
  }

  /** The answer stored under `key`, unless it is older than `ttlS` seconds. */
  async #read(key: string, ttlS: number): Promise<unknown> {
    const value = await this.options.store.get(key).catch((error: unknown) => this.#warn('read', error));
    if (value === undefined) return undefined;
    const entry = parseEntry(value);
    return entry && this.#now() - entry.storedAt < ttlS * 1000 ? entry.answer : undefined;
  }

  /** Keeps an answer, unless its studio's answers already hold its quota (then it is simply not kept). */
  async #write(key: string, ttlS: number, answer: unknown, studioId: string): Promise<void> {
    const value = JSON.stringify({ storedAt: this.#now(), answer } satisfies Entry);
    if (Buffer.byteLength(value) > MAX_ENTRY_BYTES) return;
    await this.options.store
      .set(key, value, ttlS * 1000, { id: studioId, maxBytes: this.options.studioMaxBytes })
      .catch((error: unknown) => this.#warn('store', error));
  }

  #warn(what: string, error: unknown): undefined {
    const now = Date.now();
    if (now - this.#warnedAt < WARN_EVERY_MS) return;
    this.#warnedAt = now;
    this.options.logger.warn(
      { err: error, store: this.options.store.kind },
      `response cache: could not ${what} an answer; generations go on uncached`,
    );
  }
}

/** An entry as `#write` wrote it; anything else (a key some other program wrote) is a miss. */
function parseEntry(value: string): Entry | undefined {
  try {
    const entry: unknown = JSON.parse(value);
    if (typeof entry === 'object' && entry !== null && 'storedAt' in entry && 'answer' in entry) {
      return typeof entry.storedAt === 'number'
        ? { storedAt: entry.storedAt, answer: entry.answer }
        : undefined;
    }
  } catch {}
  return undefined;
}
