import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { fromRoot } from '../../paths.ts';

export interface CheckpointerOptions {
  file: string;
  synchronous: 'full' | 'normal';
  /** A checkpoint once the WAL holds this much. */
  walBytes: number;
  /** And once this long has passed since the last one with commits since. */
  everyMs: number;
  pollMs: number;
}

export const CHECKPOINTS: Omit<CheckpointerOptions, 'file' | 'synchronous'> = {
  walBytes: 32 * 1024 * 1024,
  everyMs: 5 * 60_000,
  pollMs: 250,
};

/** What the checkpointer thread reports. */
export type CheckpointerMessage =
  | {
      type: 'checkpointed';
      reason: 'wal' | 'time' | 'asked';
      busy: number;
      log: number;
      checkpointed: number;
    }
  | { type: 'failed'; message: string; code?: string };

/**
 * The embedded log's checkpoints, made by a thread of its own (checkpointer-worker.mjs), as
 * PostgreSQL's checkpointer makes them: SQLite would otherwise copy the WAL into the database file
 * after a commit, on the thread that committed, every 4 MiB, and the event loop would wait for that
 * copy and its sync. A checkpoint that fails for an I/O error stops the log (`onFailure`).
 */
export class Checkpointer {
  readonly #worker: Worker;
  /** Callers of `checkpointNow` waiting for the thread's next report. */
  #asked: (() => void)[] = [];

  constructor(options: CheckpointerOptions, onFailure: (error: Error) => void) {
    this.#worker = new Worker(fromRoot('shared', 'event-store', 'sqlite', 'checkpointer-worker.mjs'), {
      workerData: options,
    });
    this.#worker.unref();
    this.#worker.on('message', (message: CheckpointerMessage) => {
      if (message.type === 'failed') {
        onFailure(Object.assign(new Error(message.message), { code: message.code, name: 'SqliteError' }));
      }
      for (const done of this.#asked.splice(0)) done();
    });
    this.#worker.on('error', (error) => {
      onFailure(error);
      for (const done of this.#asked.splice(0)) done();
    });
  }

  /** A checkpoint at once; resolves once the thread has made it (or failed, which stops the log). */
  checkpointNow(): Promise<void> {
    return new Promise((resolve) => {
      this.#asked.push(resolve);
      this.#worker.postMessage({ type: 'checkpoint' });
    });
  }

  /** Ends the thread at once, whatever it is doing. */
  async abandon(): Promise<void> {
    await this.#worker.terminate();
  }

  /** Stops the thread after the checkpoint it may be making. */
  async close(): Promise<void> {
    const closed = once(this.#worker, 'exit');
    this.#worker.postMessage({ type: 'close' });
    const timer = setTimeout(() => void this.#worker.terminate(), 5_000);
    await closed;
    clearTimeout(timer);
  }
}
