/**
 * How long does a commit's sync take after the disk was left alone for a while? The embedded store
 * acknowledges an append once its `WalSync` has synced the WAL from libuv's pool. This uses that
 * same `WalSync` on a file of its own: one 4 KiB page written into room made ahead (as the WAL's
 * is), then the sync, timed from the call until it resolves. Between syncs it pauses
 * 0–20 ms, with the main thread either asleep (as Studio's is between requests at an even 100/s)
 * or kept busy (so the CPU never idles). The pauses take turns within each repetition, so a machine
 * that drifts moves every row alike.
 *   node --import tsx bench/investigations/idle-sync.ts
 *   BENCH_SYNC_DIR=<dir> (default the system's temporary folder: use the file system that holds
 *   STUDIO_DATA_DIR)   BENCH_SYNC_COUNT=N (syncs per row, default 600)   BENCH_REPS=N (default 3)
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
const PAUSES_MS = [0, 1, 2, 5, 10, 20];
const PAGE = Buffer.alloc(4096, 0x5a);
const ROOM = 16 * 1024 * 1024;

type Meanwhile = 'asleep' | 'busy';
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
      ],
);

function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // keeps this thread, and so its CPU, from idling
  }
}

const folder = await mkdtemp(join(dir, 'studio-idle-sync-'));
const log = join(folder, 'log.sqlite');
const file = await open(`${log}-wal`, 'w+');
let wal: WalSync | undefined;
try {
  await file.write(Buffer.alloc(ROOM), 0, ROOM, 0);
  await file.sync();
  wal = new WalSync(log);
  const sync = wal;
  const fd = file.fd;
  let offset = 0;
  const timedSync = async (): Promise<number> => {
    writeSync(fd, PAGE, 0, PAGE.length, offset);
    offset = (offset + PAGE.length) % ROOM;
    const start = performance.now();
    await sync.sync();
    return performance.now() - start;
  };
  const perRep = Math.ceil(count / reps);
  for (let rep = 1; rep <= reps; rep++) {
    for (const row of rows) {
      for (let i = 0; i < 20; i++) await timedSync();
      for (let i = 0; i < perRep; i++) {
        if (row.pauseMs > 0) {
          if (row.meanwhile === 'busy') spin(row.pauseMs);
          else await sleep(row.pauseMs);
        }
        row.syncsMs.push(await timedSync());
      }
    }
    process.stderr.write(`[bench:idle-sync] repetition ${rep} of ${reps} done\n`);
  }
} finally {
  wal?.close();
  await file.close();
  await rm(folder, { recursive: true, force: true });
}

const ms = (sorted: number[], p: number) => percentile(sorted, p).toFixed(3);
const lines = [
  '## A 4 KiB write and its fdatasync after a pause',
  '',
  `In ${dir}; ${reps} repetitions, the rows taking turns in each; the sync made by the embedded store's own \`WalSync\`, from libuv's pool.`,
  '',
  '| pause before the write | main thread meanwhile | syncs | p50 ms | p90 ms | p99 ms |',
  '|---|---|---|---|---|---|',
  ...rows.map((row) => {
    const sorted = row.syncsMs.toSorted((a, b) => a - b);
    const pause = row.pauseMs === 0 ? 'none (back to back)' : `${row.pauseMs} ms`;
    const meanwhile = row.pauseMs === 0 ? '–' : row.meanwhile;
    return `| ${pause} | ${meanwhile} | ${sorted.length} | ${ms(sorted, 50)} | ${ms(sorted, 90)} | ${ms(sorted, 99)} |`;
  }),
];
process.stdout.write(`${lines.join('\n')}\n`);
