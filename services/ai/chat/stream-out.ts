import type { ServerResponse } from 'node:http';
import { drainedOrClosed } from '../../../shared/http/backpressure.ts';

/** Frames held for the end of the turn up to this many characters; more are written at once. */
const MOST_PENDING = 64 * 1024;

/**
 * The frames of a relayed stream, written at the end of the turn of the event loop they were made
 * in: the events of one upstream read leave in one write of the answer (one chunk of its body)
 * instead of one each, and none waits longer than that turn. Chunks that are all there at once (a
 * cached answer, a burst) never end a turn, so past `MOST_PENDING` characters the frames are
 * written at once. While the client reads slower than we produce, `write` waits for the answer to
 * drain.
 */
export class FrameWriter {
  #pending: string[] = [];
  #pendingLength = 0;
  #drained: Promise<void> | undefined;

  constructor(private readonly res: ServerResponse) {}

  write(frames: readonly string[]): Promise<void> | undefined {
    for (const frame of frames) {
      if (this.#pending.length === 0) process.nextTick(() => this.flush());
      this.#pending.push(frame);
      this.#pendingLength += frame.length;
    }
    if (this.#pendingLength >= MOST_PENDING) this.flush();
    return this.#drained;
  }

  /** Writes what is pending now; called before anything else is written to the answer. */
  flush(): void {
    if (this.#pending.length === 0) return;
    const text = this.#pending.length === 1 ? this.#pending[0]! : this.#pending.join('');
    this.#pending = [];
    this.#pendingLength = 0;
    if (this.res.write(text) || this.res.destroyed || this.#drained) return;
    this.#drained = drainedOrClosed(this.res).then(() => {
      this.#drained = undefined;
    });
  }
}
