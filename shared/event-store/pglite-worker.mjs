// The embedded PGlite database, run in a worker thread by `pglite-thread.ts` so that PostgreSQL's
// WASM and PGlite's protocol code take no time from the event loop serving requests. Plain
// JavaScript, so the worker needs no TypeScript loader wherever Studio runs (sources or build).
//
// Messages in: { id, op: 'query', sql, params, tx } | { id, op: 'exec', sql, tx } | { id, op: 'begin' }
//            | { id, op: 'commit' | 'rollback', tx } | { id, op: 'close' }
// Messages out: { id, result } | { id, error: { message, code, detail, name } }
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { SyncedNodeFS } from './pglite-synced-fs.mjs';

const port = parentPort;
if (!port) throw new Error('pglite-worker runs as a worker thread');

const db = new PGlite({
  // In memory when there is no directory; on disk, with commits that wait for the disk.
  ...(workerData.dataDir === undefined ? {} : { fs: new SyncedNodeFS(workerData.dataDir) }),
  startParams: [...PGlite.defaultStartParams, ...workerData.settings],
});
/** Open transactions by id: their executor, how to end them, and `done` once they ended. */
const transactions = new Map();
let nextTx = 1;

const executorOf = (tx) => {
  if (tx === undefined) return db;
  const open = transactions.get(tx);
  if (!open) throw new Error(`transaction ${tx} is not open`);
  return open.executor;
};

/** Starts a transaction and answers its id once it holds PGlite; it lasts until commit or rollback. */
async function begin() {
  const tx = nextTx++;
  let holding;
  const held = new Promise((resolve) => {
    holding = resolve;
  });
  const ending = {};
  const ended = new Promise((commit, rollback) => {
    Object.assign(ending, { commit, rollback });
  });
  const done = db.transaction(async (executor) => {
    holding(executor);
    await ended;
  });
  const executor = await Promise.race([held, done.then(() => Promise.reject(new Error('no transaction')))]);
  transactions.set(tx, { executor, ...ending, done });
  return tx;
}

async function run(message) {
  switch (message.op) {
    case 'query':
      return (await executorOf(message.tx).query(message.sql, message.params)).rows;
    case 'exec':
      await executorOf(message.tx).exec(message.sql);
      return null;
    case 'begin':
      return begin();
    case 'commit':
    case 'rollback': {
      const open = transactions.get(message.tx);
      if (!open) throw new Error(`transaction ${message.tx} is not open`);
      transactions.delete(message.tx);
      if (message.op === 'commit') {
        open.commit();
        await open.done;
      } else {
        open.rollback(new Error('rolled back'));
        await open.done.catch(() => {});
      }
      return null;
    }
    case 'close':
      await db.close();
      return null;
    default:
      throw new Error(`unknown operation ${message.op}`);
  }
}

const errorOf = (error) => ({
  name: error?.name ?? 'Error',
  message: error?.message ?? String(error),
  code: typeof error?.code === 'string' ? error.code : undefined,
  detail: typeof error?.detail === 'string' ? error.detail : undefined,
});

db.waitReady.then(
  () => port.postMessage({ id: 0, result: null }),
  (error) => port.postMessage({ id: 0, error: errorOf(error) }),
);
port.on('message', (message) => {
  run(message).then(
    (result) => port.postMessage({ id: message.id, result }),
    (error) => port.postMessage({ id: message.id, error: errorOf(error) }),
  );
});
