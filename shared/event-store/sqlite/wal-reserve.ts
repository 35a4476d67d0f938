import { closeSync, fstatSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { readWalIndex, walBytesOf } from './wal-index.mjs';

const ZEROS = Buffer.alloc(1024 * 1024);

/**
 * Keeps room made ahead of the WAL's last frame: zeros written and synced at the end of the file
 * before any commit needs them, as PostgreSQL makes its WAL segments before it writes to them. A
 * commit then writes into blocks the file already has, and its sync is one of data alone, never
 * one that must also record a larger file (which a file system on a failing device was seen to
 * report done and then lose, with the commit in it). Called only while no commit runs (from the
 * writer's queue), so nothing else writes past the last frame meanwhile. SQLite reads the zeros as
 * no frame at all.
 */
export class WalReserve {
  readonly #wal: number;
  readonly #index: number;

  constructor(
    private readonly file: string,
    private readonly pageSize: number,
    /** At least this much room ahead; topped up by twice as much. */
    private readonly headroom: number,
    /**
     * Past this size the WAL is not let grow: commits wait for a checkpoint (`catchUp`) that copies
     * all of it, and the next starts it again from its beginning. Under a load that never pauses,
     * the checkpointer alone may never find the WAL copied to its end before the next commit.
     */
    private readonly most: number,
    private readonly catchUp: () => Promise<void>,
  ) {
    this.#wal = openSync(`${file}-wal`, 'r');
    this.#index = openSync(`${file}-shm`, 'r');
  }

  /** Makes the room, unless there is enough of it (the usual case: a read of the index, a stat). */
  async ensure(): Promise<void> {
    let { frames, copied } = readWalIndex(this.#index);
    if (walBytesOf(frames, this.pageSize) > this.most && copied < frames) {
      await this.catchUp();
      ({ frames, copied } = readWalIndex(this.#index));
    }
    if (fstatSync(this.#wal).size - walBytesOf(frames, this.pageSize) >= this.headroom) return;
    const handle = await open(`${this.file}-wal`, 'r+');
    try {
      let at = (await handle.stat()).size;
      const end = at + 2 * this.headroom;
      while (at < end)
        at += (await handle.write(ZEROS, 0, Math.min(ZEROS.length, end - at), at)).bytesWritten;
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  close(): void {
    closeSync(this.#wal);
    closeSync(this.#index);
  }
}
