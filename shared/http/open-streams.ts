import { ApiError } from '../errors.ts';

/** Bounds the long-lived streams (SSE) one holder (a client address, a token) holds open at once. */
export class OpenStreamLimit {
  readonly #open = new Map<string, number>();

  constructor(
    readonly max: number,
    /** How a refusal names the holder. */
    private readonly holder = 'client',
  ) {}

  /** Counts one more stream of `client`, or throws 429 when it already holds `max`; call the answer when it closes. */
  acquire(client: string): () => void {
    const open = this.#open.get(client) ?? 0;
    if (open >= this.max) {
      throw new ApiError(
        'rate_limited',
        `this ${this.holder} already holds ${this.max} open streams; close one before opening another`,
        { headers: { 'Retry-After': '1' } },
      );
    }
    this.#open.set(client, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#open.get(client) ?? 1) - 1;
      if (left === 0) this.#open.delete(client);
      else this.#open.set(client, left);
    };
  }

  openBy(client: string): number {
    return this.#open.get(client) ?? 0;
  }
}
