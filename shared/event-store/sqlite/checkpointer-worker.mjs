// The embedded log's checkpointer, in a thread of its own (see checkpointer.ts): it copies the
// WAL's pages into the database file once the WAL holds enough of them, or has held some for a
// while, so the event loop never waits for that I/O. Plain JavaScript: it runs as it
// is under tsx and from the compiled server alike.
import { closeSync, openSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { readWalIndex, walBytesOf } from './wal-index.mjs';

const { file, synchronous, walBytes, everyMs, pollMs } = workerData;
const db = new Database(file, { fileMustExist: true });
db.pragma(`synchronous = ${synchronous}`);
db.pragma(`fullfsync = ${synchronous === 'full' ? 'ON' : 'OFF'}`);
db.pragma(`checkpoint_fullfsync = ${synchronous === 'full' ? 'ON' : 'OFF'}`);
// SQLite's own checkpoints after a commit stay off on this connection too.
db.pragma('wal_autocheckpoint = 0');

const pageSize = db.pragma('page_size', { simple: true });
const index = openSync(`${file}-shm`, 'r');

let lastCheckpoint = Date.now();

function checkpoint(reason) {
  const [result] = db.pragma('wal_checkpoint(PASSIVE)');
  lastCheckpoint = Date.now();
  parentPort.postMessage({ type: 'checkpointed', reason, ...result });
}

function failed(error) {
  clearInterval(timer);
  parentPort.postMessage({ type: 'failed', message: error.message, code: error.code });
}

const timer = setInterval(() => {
  try {
    const { frames, copied } = readWalIndex(index);
    if (frames === copied) return;
    // Half way through the zeros made for it, the WAL is copied as soon as there is anything to
    // copy: once all of it is, the next commit starts it again from its beginning, well before it
    // would have to grow.
    const reason =
      walBytesOf(frames, pageSize) >= walBytes / 2
        ? 'wal'
        : Date.now() - lastCheckpoint >= everyMs
          ? 'time'
          : undefined;
    if (reason !== undefined) checkpoint(reason);
  } catch (error) {
    failed(error);
  }
}, pollMs);

parentPort.on('message', (message) => {
  if (message.type === 'checkpoint') {
    try {
      checkpoint('asked');
    } catch (error) {
      failed(error);
    }
    return;
  }
  if (message.type !== 'close') return;
  clearInterval(timer);
  closeSync(index);
  db.close();
  parentPort.close();
});
