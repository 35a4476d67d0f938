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
