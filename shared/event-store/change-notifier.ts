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

  /** Resolves when a notification newer than `seen` arrives or the signal aborts. */
  waitForChange(seen: number, signal: AbortSignal): Promise<void> {
    if (this.#version !== seen || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        this.#waiters.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      this.#waiters.add(wake);
      signal.addEventListener('abort', wake, { once: true });
    });
  }
}
