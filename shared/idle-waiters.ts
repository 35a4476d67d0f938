/** Who waits for some work to be over, each until its own deadline. */
export class IdleWaiters {
  readonly #waiting = new Set<() => void>();

  constructor(private readonly isIdle: () => boolean) {}

  /** Resolves true once the work is over (checked at each `check`), false if `deadline` aborts first. */
  wait(deadline: AbortSignal): Promise<boolean> {
    if (this.isIdle()) return Promise.resolve(true);
    if (deadline.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (value: boolean) => {
        this.#waiting.delete(onIdle);
        deadline.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const onIdle = () => done(true);
      const onAbort = () => done(false);
      this.#waiting.add(onIdle);
      deadline.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** To be called whenever the work may have ended. */
  check(): void {
    if (!this.isIdle()) return;
    for (const idle of [...this.#waiting]) idle();
  }
}
