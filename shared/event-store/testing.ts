/** Test doubles for code that reads the log: unit tests beside that code and the suites under test/ use them. */
import type { StoreRead, StoreTestHooks } from './types.ts';

/**
 * Store hooks that make chosen reads fail while `failing` is on, the way a reset connection makes a
 * query fail: pass `hooks` to a store, switch `failing`, count `failures`.
 */
export class FailingReads {
  failing = false;
  failures = 0;
  readonly hooks: StoreTestHooks;

  constructor(which: (read: StoreRead) => boolean = (read) => read.kind === 'readAll') {
    this.hooks = {
      beforeRead: async (read) => {
        if (!this.failing || !which(read)) return;
        this.failures++;
        throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
      },
    };
  }
}

/** Polls `check` every few ms until it holds (or fails the test after ~5 s). */
export async function until(check: () => boolean | Promise<boolean>, what = 'the condition'): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`${what} did not hold within 5 s`);
}
