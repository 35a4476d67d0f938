/** How soon commits to streams a filtered waiter does not follow wake it, to move its position on. */
export const OTHER_COMMITS_SETTLE_MS = 100;

/**
 * Wakes subscribers when new events may be visible. A version counter closes the race between
 * "read found nothing new" and "start waiting": a waiter that missed a notification returns at once.
 * A notification may name the stream categories committed to: a waiter for some categories is then
 * woken at once only by theirs (or by a notification naming none), and by the others at most every
 * `OTHER_COMMITS_SETTLE_MS`, in one wake for all of them.
 */
export class ChangeNotifier {
  #version = 0;
  /** The version of the last notification naming no category (every waiter's concern). */
  #unnamed = 0;
  readonly #byCategory = new Map<string, number>();
  #waiters = new Set<Waiter>();
  /**
   * The waiters of each signal, all woken by one listener that stays on it: a subscription waits on
   * the same signal after every commit, and adding and removing a listener each time was about a
   * quarter of what a wake cost.
   */
  readonly #bySignal = new WeakMap<AbortSignal, Set<Waiter>>();

  get version(): number {
    return this.#version;
  }

  /** The version a waiter for `categories` compares (all of them, when undefined). */
  versionFor(categories?: readonly string[]): number {
    if (categories === undefined) return this.#version;
    let version = this.#unnamed;
    for (const category of categories) version = Math.max(version, this.#byCategory.get(category) ?? 0);
    return version;
  }

  /** Something was committed; to streams of the categories `named`, when given. */
  notify(named?: ReadonlySet<string>): void {
    const version = ++this.#version;
    if (named === undefined) this.#unnamed = version;
    else for (const category of named) this.#byCategory.set(category, version);
    const waiters = [...this.#waiters];
    for (const waiter of waiters) {
      if (
        waiter.categories === undefined ||
        named === undefined ||
        waiter.categories.some((c) => named.has(c))
      )
        waiter.wake();
      else waiter.otherCommit();
    }
  }

  /**
   * Resolves when a notification newer than `seen` (a `versionFor(categories)`) arrives, the signal
   * aborts or `timeoutMs` passes. A waiter for `categories` also wakes once other commits have
   * settled: those notified from now on, or since `version` was `seenAll` (its read began).
   */
  waitForChange(
    seen: number,
    signal: AbortSignal,
    timeoutMs?: number,
    filter?: { categories: readonly string[]; seenAll: number },
  ): Promise<void> {
    const categories = filter?.categories;
    if (this.versionFor(categories) !== seen || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      let settle: NodeJS.Timeout | undefined;
      const waiter: Waiter = {
        categories,
        wake: () => {
          clearTimeout(timer);
          clearTimeout(settle);
          this.#waiters.delete(waiter);
          ofSignal.delete(waiter);
          resolve();
        },
        otherCommit: () => {
          settle ??= setTimeout(waiter.wake, OTHER_COMMITS_SETTLE_MS);
        },
      };
      const ofSignal = this.#waitersOf(signal);
      this.#waiters.add(waiter);
      ofSignal.add(waiter);
      if (filter !== undefined && filter.seenAll !== this.#version) waiter.otherCommit();
      if (timeoutMs !== undefined) timer = setTimeout(waiter.wake, timeoutMs);
    });
  }

  #waitersOf(signal: AbortSignal): Set<Waiter> {
    const known = this.#bySignal.get(signal);
    if (known !== undefined) return known;
    const waiters = new Set<Waiter>();
    signal.addEventListener(
      'abort',
      () => {
        for (const waiter of waiters) waiter.wake();
      },
      { once: true },
    );
    this.#bySignal.set(signal, waiters);
    return waiters;
  }
}

interface Waiter {
  categories: readonly string[] | undefined;
  wake(): void;
  otherCommit(): void;
}
