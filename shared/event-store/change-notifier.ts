/**
 * Wakes subscribers when new events may be visible. A version counter closes the race between
 * "read found nothing new" and "start waiting": a waiter that missed a notification returns at once.
 */
export class ChangeNotifier {
  #version = 0;
  #waiters = new Set<() => void>();

  get version(): number {
    return this.#version;
  }

  notify(): void {
    this.#version++;
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }

  /** Resolves when a notification newer than `seen` arrives, the signal aborts or `timeoutMs` passes. */
  waitForChange(seen: number, signal: AbortSignal, timeoutMs?: number): Promise<void> {
    if (this.#version !== seen || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const wake = () => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      this.#waiters.add(wake);
      signal.addEventListener('abort', wake, { once: true });
      if (timeoutMs !== undefined) timer = setTimeout(wake, timeoutMs);
    });
  }
}
