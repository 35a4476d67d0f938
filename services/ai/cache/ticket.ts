import type { ChatChunk, ChatCompletion } from '../chat/wire.ts';
import { MAX_ENTRY_BYTES } from './store.ts';

export type CacheStatus = 'hit' | 'miss' | 'bypass';

/**
 * One generation's use of the response cache, from its lookup to storing its answer. A hit hands
 * the cached answer in place of the upstream call; a miss keeps what the call answered (a stream's
 * chunks as they pass) so that `store` can keep it once the generation is recorded.
 */
export class CacheTicket {
  #answer: unknown;

  constructor(
    readonly status: CacheStatus,
    private readonly found?: unknown,
    private readonly save?: (answer: unknown) => Promise<void>,
  ) {}

  /** A hit: the generation costs nothing and reserves nothing (`Generation.start` reads this). */
  get cached(): boolean {
    return this.status === 'hit';
  }

  /** The cached answer (a chat completion, or a Messages API message), or what `call` answers. */
  async completion<T = ChatCompletion>(call: () => Promise<T>): Promise<T> {
    if (this.cached) return this.found as T;
    const completion = await call();
    if (this.save) this.#answer = completion;
    return completion;
  }

  /**
   * The cached stream's chunks (or Messages API events) replayed, or the ones `call` streams
   * (recorded on a miss).
   */
  async chunks<T = ChatChunk>(call: () => Promise<AsyncIterable<T>>): Promise<AsyncIterable<T>> {
    if (this.cached) return replay(this.found as T[]);
    const chunks = await call();
    return this.save ? this.#recording(chunks) : chunks;
  }

  /** The answer's usage, saying `cached: true` on a hit. */
  mark<Usage extends object | null | undefined>(usage: Usage): Usage {
    return this.cached && usage ? { ...usage, cached: true } : usage;
  }

  /**
   * Keeps a miss's answer, once its generation is recorded. Not an answer cut short by a cap its
   * budget imposed: that is not the answer to the request as it was asked.
   */
  async store(
    generation: { readonly outputCap: number | undefined },
    finishReason: string | null,
  ): Promise<void> {
    if (!this.save || this.#answer === undefined) return;
    if (generation.outputCap !== undefined && finishReason === 'length') return;
    await this.save(this.#answer);
  }

  /** Passes `chunks` on, keeping them for `store` when the stream ends whole and not too large. */
  async *#recording<T>(chunks: AsyncIterable<T>): AsyncIterable<T> {
    const recorded: T[] = [];
    let bytes = 0;
    for await (const chunk of chunks) {
      if (bytes <= MAX_ENTRY_BYTES) {
        recorded.push(chunk);
        bytes += JSON.stringify(chunk).length;
      }
      yield chunk;
    }
    if (bytes <= MAX_ENTRY_BYTES) this.#answer = recorded;
  }
}

/** A chat chunk's usage says `cached: true` (a Messages event's usage is marked where it is written). */
async function* replay<T>(chunks: readonly T[]): AsyncIterable<T> {
  for (const chunk of chunks) {
    const usage = (chunk as { usage?: unknown }).usage;
    yield typeof usage === 'object' && usage !== null
      ? { ...chunk, usage: { ...usage, cached: true } }
      : chunk;
  }
}
