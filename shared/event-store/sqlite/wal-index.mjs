// Where the WAL stands, read from the wal-index: the `-shm` file SQLite shares between the
// connections of a log. Its layout is part of SQLite's documented file format: the header's
// mxFrame (the last valid frame) at byte 16, the checkpoint's nBackfill (frames copied into the
// database file) at byte 96, both in the machine's byte order. Plain JavaScript, for the
// checkpointer's thread as well.
import { readSync } from 'node:fs';
import { endianness } from 'node:os';

const HEADER_BYTES = 136;
const little = endianness() === 'LE';

/** Reads the wal-index of the open `-shm` file `fd`: `{ frames, copied }`, zeros while it is empty. */
export function readWalIndex(fd, buffer = Buffer.alloc(HEADER_BYTES)) {
  if (readSync(fd, buffer, 0, HEADER_BYTES, 0) < HEADER_BYTES) return { frames: 0, copied: 0 };
  const read = (offset) => (little ? buffer.readUInt32LE(offset) : buffer.readUInt32BE(offset));
  return { frames: read(16), copied: read(96) };
}

/** Bytes of a WAL holding `frames` frames of `pageSize` pages: a 32-byte header, then 24 bytes a frame. */
export const walBytesOf = (frames, pageSize) => 32 + frames * (pageSize + 24);
