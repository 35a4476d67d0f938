/**
 * How long does a commit's sync take after the disk was left alone for a while? The embedded store
 * acknowledges an append once its `WalSync` has synced the WAL from libuv's pool. This uses that
 * same `WalSync` on a file of its own: one 4 KiB page written into room made ahead (as the WAL's
 * is), then the sync, timed from the call until it resolves. Between syncs it pauses
 * 0–20 ms, with the main thread either asleep (as Studio's is between requests at an even 100/s),
 * kept busy (so the CPU never idles), or keeping the disk busy (a page written and synced to
 * another file every BENCH_SYNC_KEEP_BUSY_MS, so the storage never idles). The pauses take turns
 * within each repetition, so a machine that drifts moves every row alike.
 *   node --import tsx bench/investigations/idle-sync.ts
 *   BENCH_SYNC_DIR=<dir> (default the system's temporary folder: use the file system that holds
 *   STUDIO_DATA_DIR)   BENCH_SYNC_COUNT=N (syncs per row, default 600)   BENCH_REPS=N (default 3)
 *   BENCH_SYNC_KEEP_BUSY_MS=N (default 2)
 */
import { writeSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WalSync } from '../../shared/event-store/sqlite/wal-sync.ts';
import { positiveFromEnv } from '../lib/env.ts';
import { percentile } from '../lib/stats.ts';

const dir = process.env.BENCH_SYNC_DIR?.trim() || tmpdir();
const count = positiveFromEnv('BENCH_SYNC_COUNT', { integer: true }) ?? 600;
const reps = positiveFromEnv('BENCH_REPS', { integer: true }) ?? 3;
const keepBusyMs = positiveFromEnv('BENCH_SYNC_KEEP_BUSY_MS') ?? 2;
const PAUSES_MS = [0, 1, 2, 5, 10, 20];
const PAGE = Buffer.alloc(4096, 0x5a);
const ROOM = 16 * 1024 * 1024;

type Meanwhile = 'asleep' | 'busy' | 'disk busy';
interface Row {
  pauseMs: number;
  meanwhile: Meanwhile;
  syncsMs: number[];
}

const rows: Row[] = PAUSES_MS.flatMap((pauseMs): Row[] =>
  pauseMs === 0
    ? [{ pauseMs, meanwhile: 'busy', syncsMs: [] }]
    : [
        { pauseMs, meanwhile: 'asleep', syncsMs: [] },
        { pauseMs, meanwhile: 'busy', syncsMs: [] },
        // A pause no longer than the keeping busy's period has no sync of the other file in it.
        ...(pauseMs > keepBusyMs ? [{ pauseMs, meanwhile: 'disk busy' as const, syncsMs: [] }] : []),
      ],
);

function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // keeps this thread, and so its CPU, from idling
  }
}

/** A page written into room made ahead in `log`'s WAL, then synced as the store syncs it. */
async function pageWriter(log: string) {
  const file = await open(`${log}-wal`, 'w+');
  await file.write(Buffer.alloc(ROOM), 0, ROOM, 0);
  await file.sync();
  const wal = new WalSync(log);
  let offset = 0;
  return {
    async writeAndSync(): Promise<void> {
      writeSync(file.fd, PAGE, 0, PAGE.length, offset);
      offset = (offset + PAGE.length) % ROOM;
      await wal.sync();
    },
    async close(): Promise<void> {
      wal.close();
      await file.close();
    },
  };
}

type PageWriter = Awaited<ReturnType<typeof pageWriter>>;

/** Waits `ms`, a page written and synced in `other` every `keepBusyMs` meanwhile (none in flight at the end). */
async function keepDiskBusy(ms: number, other: PageWriter): Promise<void> {
  const end = performance.now() + ms;
  while (performance.now() + keepBusyMs < end) {
    await sleep(keepBusyMs);
    await other.writeAndSync();
  }
  const left = end - performance.now();
  if (left > 0) await sleep(left);
}

const folder = await mkdtemp(join(dir, 'studio-idle-sync-'));
const writers: PageWriter[] = [];
try {
  const timed = await pageWriter(join(folder, 'log.sqlite'));
  writers.push(timed);
  const other = await pageWriter(join(folder, 'other.sqlite'));
  writers.push(other);
  const timedSync = async (): Promise<number> => {
    const start = performance.now();
    await timed.writeAndSync();
    return performance.now() - start;
  };
  const perRep = Math.ceil(count / reps);
  for (let rep = 1; rep <= reps; rep++) {
    for (const row of rows) {
      for (let i = 0; i < 20; i++) await timedSync();
      for (let i = 0; i < perRep; i++) {
        if (row.meanwhile === 'busy') spin(row.pauseMs);
        else if (row.meanwhile === 'disk busy') await keepDiskBusy(row.pauseMs, other);
        else if (row.pauseMs > 0) await sleep(row.pauseMs);
        row.syncsMs.push(await timedSync());
      }
    }
    process.stderr.write(`[bench:idle-sync] repetition ${rep} of ${reps} done\n`);
  }
} finally {
  for (const writer of writers) await writer.close();
  await rm(folder, { recursive: true, force: true });
}

const ms = (sorted: number[], p: number) => percentile(sorted, p).toFixed(3);
const lines = [
  '## A 4 KiB write and its fdatasync after a pause',
  '',
  `In ${dir}; ${reps} repetitions, the rows taking turns in each; the sync made by the embedded store's own \`WalSync\`, from libuv's pool; disk busy: a page written and synced to another file every ${keepBusyMs} ms.`,
  '',
  '| pause before the write | meanwhile | syncs | p50 ms | p90 ms | p99 ms |',
  '|---|---|---|---|---|---|',
  ...rows.map((row) => {
    const sorted = row.syncsMs.toSorted((a, b) => a - b);
    const pause = row.pauseMs === 0 ? 'none (back to back)' : `${row.pauseMs} ms`;
    const meanwhile = row.pauseMs === 0 ? '–' : row.meanwhile;
    return `| ${pause} | ${meanwhile} | ${sorted.length} | ${ms(sorted, 50)} | ${ms(sorted, 90)} | ${ms(sorted, 99)} |`;
  }),
];
process.stdout.write(`${lines.join('\n')}\n`);
