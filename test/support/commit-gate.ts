import type { StoreTestHooks } from '../../shared/event-store/types.ts';

export interface HeldCommit {
  /** Resolves when the append has taken its positions and is waiting to commit. */
  readonly entered: Promise<void>;
  /** Lets the append commit. */
  release(): void;
  /** Makes the append fail (and roll back) with `error`. */
  fail(error: Error): void;
}

/**
 * `StoreTestHooks` whose `beforeCommit` holds the next append to a chosen stream open until the
 * test releases it. Appends to streams that are not held pass straight through.
 */
export class CommitGate {
  #held = new Map<string, { enter: () => void; outcome: Promise<void> }>();

  readonly hooks: StoreTestHooks = {
    beforeCommit: async (streamId) => {
      const held = this.#held.get(streamId);
      if (!held) return;
      this.#held.delete(streamId);
      held.enter();
      await held.outcome;
    },
  };

  /** Holds the next append to `streamId` just before it commits. */
  hold(streamId: string): HeldCommit {
    if (this.#held.has(streamId)) throw new Error(`stream ${streamId} is already held`);
    let enter!: () => void;
    const entered = new Promise<void>((resolve) => {
      enter = resolve;
    });
    let release!: () => void;
    let fail!: (error: Error) => void;
    const outcome = new Promise<void>((resolve, reject) => {
      release = resolve;
      fail = reject;
    });
    outcome.catch(() => undefined);
    this.#held.set(streamId, { enter, outcome });
    return { entered, release, fail };
  }
}
