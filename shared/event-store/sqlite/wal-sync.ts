import { closeSync, fdatasync, openSync } from 'node:fs';

/**
 * Puts what the WAL holds on disk from libuv's thread pool, so the event loop goes on meanwhile:
 * the writer commits with SQLite's `synchronous = NORMAL` (no sync of its own) and then waits for
 * this before it acknowledges the commit. A sync covers every frame written before it began, the
 * commit's among them (on macOS libuv's sync is `F_FULLFSYNC`).
 */
export class WalSync {
  readonly #wal: number;

  constructor(file: string) {
    this.#wal = openSync(`${file}-wal`, 'r+');
  }

  sync(): Promise<void> {
    return new Promise((resolve, reject) =>
      fdatasync(this.#wal, (error) => (error ? reject(error) : resolve())),
    );
  }

  close(): void {
    closeSync(this.#wal);
  }
}
