// The embedded PGlite database, run in a worker thread by `pglite-thread.ts` so that PostgreSQL's
// WASM and PGlite's protocol code take no time from the event loop serving requests. Plain
// JavaScript, so the worker needs no TypeScript loader wherever Studio runs (sources or build).
//
// Messages in: { id, op: 'query', sql, params, tx } | { id, op: 'exec', sql, tx } | { id, op: 'begin' }
//            | { id, op: 'commit' | 'rollback', tx } | { id, op: 'close' }
// Messages out: { id, result } | { id, error: { message, code, detail, name, severity } }; when
//               PostgreSQL PANICs, { id: -1, error } with its lines in `stopped`, and the thread ends.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PreparedStatements } from './pglite-statements.mjs';
import { SyncedNodeFS } from './pglite-synced-fs.mjs';
import { dropTemplateDatabases } from './pglite-templates.mjs';

const port = parentPort;
if (!port) throw new Error('pglite-worker runs as a worker thread');

/**
 * PostgreSQL's last FATAL and PANIC lines on stderr, without their time and process prefix (nor the
 * statements that follow them): why it stopped, or would not start. PGlite's errors do not always
 * say: a start that fails is "PGlite failed to initialize properly", and a PANIC inside a transaction
 * reaches the caller as the PANIC it causes next ("XLogBeginInsert was already called").
 */
const stopLines = [];
const STOP_LINES = 10;
/** A line PostgreSQL logs at FATAL or PANIC (`[pid] LEVEL:  message`), not a statement quoted after one. */
const STOP_LINE = /\[\d+\] (FATAL|PANIC):\s+(.*)$/;

const db = new PGlite({
  // In memory when there is no directory; on disk, with commits that wait for the disk.
  ...(workerData.dataDir === undefined ? {} : { fs: new SyncedNodeFS(workerData.dataDir) }),
  startParams: [...PGlite.defaultStartParams, ...workerData.settings],
  onStderr: (line) => {
    const stopped = STOP_LINE.exec(line);
    if (stopped) stopLines.push(`${stopped[1]}: ${stopped[2]}`);
    if (stopLines.length > STOP_LINES) stopLines.shift();
    if (stopped?.[1] === 'PANIC') stopAtPanic(stopped[2]);
    return false;
  },
});

/**
 * After a PANIC (a WAL or data file it could not write or sync, say) PostgreSQL has stopped; it
 * recovers from its WAL at the next start. PGlite's instance does not stop with it: the call that met
 * the PANIC, or the next one, can loop in PGlite forever without returning (a transaction's commit
 * does, and so does any query after a PANIC). So the thread ends here, at the PANIC's own log line,
 * before PGlite runs on: the reason goes to the event loop's side first, which refuses every call
 * with it from then on (pglite-thread.ts).
 */
function stopAtPanic(message) {
  port.postMessage({ id: -1, error: { name: 'error', message, stopped: stopReasons() } });
  process.exit(1);
}

/**
 * PGlite runs PostgreSQL alone in this thread, without the server processes that look after its
 * files, so this thread does their work, looking every `checkEveryMs`. Its statements take their
 * turn in PGlite as any call's do (never inside a transaction).
 *
 * Checkpoints: PostgreSQL's checkpointer asks for them; a standalone backend checkpoints only when it
 * shuts down. Without them the WAL grows with every commit, on disk for good, and a crash replays
 * all of it at the next start. So the thread asks once `walBytes` of WAL were written since the last
 * checkpoint, or `everyMs` after it if anything was written.
 *
 * Vacuum: autovacuum is absent too. Without it the old versions of rows updated in place (and their
 * TOAST) are never reclaimed, and PostgreSQL's transaction-id wraparound guard stops all writes
 * ~2 billion transactions after the oldest unfrozen row (each commit spends one). So every
 * `freezeWalBytes` of WAL the thread vacuums the database's own tables, freezing every row: pages
 * already frozen are skipped, and the pages written since the last pass are still in PostgreSQL's
 * buffers, so each pass is short (a long one holds every append behind it). The catalogs'
 * rows count too; they change only with the schema, and are frozen with everything else once the
 * database's oldest unfrozen transaction is `freezeAllAtAge` old.
 */
const { walBytes, everyMs, checkEveryMs, freezeWalBytes, freezeAllAtAge } = workerData.maintenance;
const WAL_NOW = `SELECT pg_current_wal_insert_lsn()::text AS at,
  pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::float8 AS since_checkpoint,
  pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::float8 AS since_freeze
  FROM pg_control_checkpoint()`;
const XID_AGE = 'SELECT age(datfrozenxid) AS age FROM pg_database WHERE datname = current_database()';
/** The database's own tables (PostgreSQL's catalogs aside), and how old the oldest unfrozen row of each is. */
const OWN_TABLES = `SELECT oid::regclass::text AS name, age(relfrozenxid) AS age FROM pg_class
  WHERE relkind IN ('r', 'm') AND relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)`;
/** When the last checkpoint was asked for, and where the WAL ended after it. */
let lastCheckpoint;
/** Where the WAL ended after the own tables were last frozen. */
let lastFreeze = '0/0';
/** The look under way, if any: one at a time, and `close` waits for it. */
let maintaining;
let closing = false;

const walNow = async () => (await db.query(WAL_NOW, [lastFreeze])).rows[0];

const ownTables = async () => (await db.query(OWN_TABLES)).rows;

/** The whole database, catalogs included, when its oldest unfrozen transaction is old enough. */
async function freezeAllIfOld() {
  const { age } = (await db.query(XID_AGE)).rows[0];
  if (age >= freezeAllAtAge) await db.exec('VACUUM (FREEZE)');
}

/** Freezes the own tables; answers where the WAL is after it (`walNow`). */
async function freezeOwnTables(tables) {
  const names = (tables ?? (await ownTables())).map((table) => table.name).join(', ');
  if (names) await db.exec(`VACUUM (FREEZE, SKIP_DATABASE_STATS) ${names}`);
  const now = await walNow();
  lastFreeze = now.at;
  return now;
}

async function maintainIfDue() {
  await freezeAllIfOld();
  let now = await walNow();
  if (now.since_freeze >= freezeWalBytes) now = await freezeOwnTables();
  const { at, since_checkpoint } = now;
  const late = Date.now() - lastCheckpoint.time >= everyMs && at !== lastCheckpoint.at;
  if (since_checkpoint < walBytes && !late) return;
  await db.exec('CHECKPOINT');
  lastCheckpoint = { time: Date.now(), at: (await walNow()).at };
}

/**
 * How old the oldest unfrozen row of the own tables can be when each run freezes as it goes: between
 * two passes (4 MiB of WAL) go at most a few thousand of the store's commits.
 */
const FROZEN_AS_IT_WENT = 20_000;

/**
 * Freezes what an earlier run left unfrozen (a whole log, if it was written before this thread froze
 * anything) before any caller waits behind it, then starts looking from where the WAL ends. A log
 * frozen as it went is left to the first pass: the first vacuum of a run costs ~0.1 s, most of it
 * compiling PostgreSQL's vacuum code.
 */
async function startMaintenance() {
  // A full disk, say, is no reason not to open (reads still work): later looks try again.
  await freezeAllIfOld()
    .then(async () => {
      const tables = await ownTables();
      if (tables.some((table) => table.age > FROZEN_AS_IT_WENT)) await freezeOwnTables(tables);
    })
    .catch(() => {});
  const { at } = await walNow();
  lastFreeze = at;
  lastCheckpoint = { time: Date.now(), at };
  const timer = setInterval(() => {
    if (maintaining || closing) return;
    maintaining = maintainIfDue()
      // A full disk, say: tried again at the next look, while appends report the same cause to
      // their callers. (A PANIC never gets here: the thread ended at its log line.)
      .catch(() => {})
      .finally(() => {
        maintaining = undefined;
      });
  }, checkEveryMs);
  timer.unref();
}

/** Queries outside transactions: prepared once, each run in one pass (pglite-statements.mjs). */
const statements = new PreparedStatements(db);

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
      if (message.tx === undefined) return statements.query(message.sql, message.params);
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
      closing = true;
      await maintaining;
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
  severity: typeof error?.severity === 'string' ? error.severity : undefined,
});

/** Why PostgreSQL stopped, in its own words, each line once. */
const stopReasons = () => [...new Set(stopLines)];

db.waitReady
  .then(() => dropTemplateDatabases(db))
  .then(startMaintenance)
  .then(
    () => port.postMessage({ id: 0, result: null }),
    (error) => {
      const reasons = stopReasons();
      const message = reasons.length > 0 ? `${error?.message ?? error}: ${reasons.join('; ')}` : undefined;
      port.postMessage({ id: 0, error: { ...errorOf(error), ...(message ? { message } : {}) } });
    },
  );

port.on('message', (message) => {
  run(message).then(
    (result) => port.postMessage({ id: message.id, result }),
    (error) => port.postMessage({ id: message.id, error: errorOf(error) }),
  );
});
