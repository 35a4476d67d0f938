/**
 * The one way anything here waits before trying again (a store, a broker, an upstream, a
 * subscription, the SDK's reconnection): exponential backoff, doubling from `initialMs` up to
 * `maxMs`, ±20 % jitter.
 */
export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
}

export const DEFAULT_BACKOFF = { initialMs: 100, maxMs: 5_000 } as const;

/** How long to wait after the `failures`-th failure in a row (1 for the first). */
export function backoffDelay(failures: number, options: BackoffOptions = {}): number {
  const initialMs = options.initialMs ?? DEFAULT_BACKOFF.initialMs;
  const maxMs = options.maxMs ?? DEFAULT_BACKOFF.maxMs;
  const base = Math.min(maxMs, initialMs * 2 ** Math.min(Math.max(failures, 1) - 1, 30));
  // Jitter: processes that lost the same database do not all come back in the same millisecond.
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/**
 * Sleeps `ms`, or less when `signal` aborts. `unref`: the wait does not keep the process alive
 * (a retry nobody waits for).
 */
export function pause(ms: number, signal?: AbortSignal, { unref = false } = {}): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    if (unref) timer.unref();
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
