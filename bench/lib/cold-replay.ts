/**
 * One cold replay in a process of its own, as a gateway restarting on PostgreSQL replays: opens the
 * store at BENCH_REPLAY_DATABASE_URL, replays the whole log into the gateway read models
 * (`measureRunnerStart`, checkpoints reset first) and prints the result as JSON on stdout. The
 * process doing the bench's other work would carry its garbage (the data set it loaded, the read
 * models of earlier repetitions) into the replay's collections. Run by `coldReplay`.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { openStore } from '../../shared/event-store/open.ts';
import { planDataset } from './dataset.ts';
import { measureRunnerStart, type ReplayResult } from './measures.ts';

/** Replays the data set of `events` events at `databaseUrl` in a new `node` process. */
export async function coldReplay(databaseUrl: string, events: number): Promise<ReplayResult> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url)],
    { env: { ...process.env, BENCH_REPLAY_DATABASE_URL: databaseUrl, BENCH_REPLAY_EVENTS: String(events) } },
  );
  return JSON.parse(stdout) as ReplayResult;
}

async function main(databaseUrl: string, events: number): Promise<void> {
  const store = await openStore({ kind: 'postgres', dataDir: '', databaseUrl });
  try {
    const result = await measureRunnerStart(
      store.events,
      store.checkpoints,
      planDataset(events).shape,
      events,
    );
    process.stdout.write(JSON.stringify(result));
  } finally {
    await store.close();
  }
}

const url = process.env.BENCH_REPLAY_DATABASE_URL;
if (url && process.argv[1] === fileURLToPath(import.meta.url))
  await main(url, Number(process.env.BENCH_REPLAY_EVENTS));
