/** How soon commits to streams a filtered waiter does not follow wake it, to move its position on. */
export const OTHER_COMMITS_SETTLE_MS = 100;

/**
 * Wakes subscribers when new events may be visible. A version counter closes the race between
 * "read found nothing new" and "start waiting": a waiter that missed a notification returns at once.
 * A notification may name the stream categories committed to: a waiter for some categories is then
 * woken at once only by theirs (or by a notification naming none), and by the others at most every
 * `OTHER_COMMITS_SETTLE_MS`, in one wake for all of them.
 *
 * Waiters are woken once the code that awaited the commit has gone on as far as it can without I/O
 * (the version moves at once), in one wake for the commits notified meanwhile. Woken at once, every
 * follower's read and fold of a commit ran first: an answer held for its usage event waited for the
 * read models to take the event in, about 0.1 ms a commit one at a time. Nothing else comes between:
 * a client that has its answer finds the read models with the event in them.
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
  #wakeScheduled = false;

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
    if (this.#wakeScheduled) return;
    this.#wakeScheduled = true;
    // A tick asked for from a microtask runs once the microtask queue is empty (after every promise
    // settled by now and everything awaiting one); asked for again from that tick, it runs after
    // the ticks they asked for too (an answer's write leaves in one); both before any timer or I/O.
    queueMicrotask(() =>
      process.nextTick(() =>
        process.nextTick(() => {
          this.#wakeScheduled = false;
          this.#wake();
        }),
      ),
    );
  }

  /** Wakes the waiters a notification since they began concerns; tells the others of other commits. */
  #wake(): void {
    for (const waiter of [...this.#waiters]) {
      if (this.versionFor(waiter.categories) !== waiter.seen) waiter.wake();
      else if (this.#version !== waiter.since) waiter.otherCommit();
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
        seen,
        since: this.#version,
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
  /** The `versionFor(categories)` its read began at. */
  seen: number;
  /** The version when it began waiting: later commits to other categories are news to it. */
  since: number;
  wake(): void;
  otherCommit(): void;
}
