import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SingleBar } from 'cli-progress';
import {
  type CompareReport,
  compareLogs,
  copyLog,
  type LogReader,
  NotACopy,
} from '../services/audit/log-copy.ts';
import { type VerifyReport, verifyLog } from '../services/audit/verify.ts';
import type { ProcessConfig } from '../shared/config.ts';
import { DataDirInUse, type DataDirLock, lockDataDir } from '../shared/data-dir-lock.ts';
import { messageOf } from '../shared/errors.ts';
import { sqliteLogFile } from '../shared/event-store/open.ts';
import { redactConnectionString, redactUrl } from '../shared/event-store/redact.ts';
import type { EventStore, ImportingStore } from '../shared/event-store/types.ts';

/** Where a log lives, as `--from` and `--to` name it. */
export type LogSpec =
  | { kind: 'sqlite'; file: string }
  | { kind: 'postgres'; url: string }
  | { kind: 'kurrentdb'; url: string }
  | { kind: 'pglite'; dir: string };

export class LogSpecError extends Error {
  override readonly name = 'LogSpecError';
}

const FORMS =
  'sqlite:<data dir or .sqlite file>, postgres://…, kurrentdb://… (or esdb://…), pglite:<data dir> (to read only)';

/** Parses `sqlite:PATH`, a PostgreSQL or KurrentDB URL, or `pglite:DIR`. */
export function parseLogSpec(spec: string): LogSpec {
  const [scheme = '', ...rest] = spec.split(':');
  const path = rest.join(':');
  switch (scheme.toLowerCase()) {
    case 'sqlite':
      if (!path) break;
      return {
        kind: 'sqlite',
        file: /\.(sqlite|db)$/.test(path) ? resolve(path) : sqliteLogFile(resolve(path)),
      };
    case 'pglite':
      if (!path) break;
      return { kind: 'pglite', dir: resolve(path) };
    case 'postgres':
    case 'postgresql':
      return { kind: 'postgres', url: spec };
    case 'kurrentdb':
    case 'kurrentdb+discover':
    case 'kdb':
    case 'kdb+discover':
    case 'esdb':
    case 'esdb+discover':
      return { kind: 'kurrentdb', url: spec };
  }
  throw new LogSpecError(`"${spec}" names no log; use one of ${FORMS}`);
}

/** The log the configuration names (what `studio start` opens). */
export function configuredLog(config: ProcessConfig): LogSpec {
  switch (config.eventStore) {
    case 'sqlite':
      return { kind: 'sqlite', file: sqliteLogFile(config.dataDir) };
    case 'postgres':
      return { kind: 'postgres', url: config.databaseUrl! };
    case 'kurrentdb':
      if (!config.kurrentdbUrl) throw new LogSpecError('STUDIO_EVENT_STORE=kurrentdb needs KURRENTDB_URL');
      return { kind: 'kurrentdb', url: config.kurrentdbUrl };
    case 'memory':
      throw new LogSpecError(
        'the memory store keeps nothing between processes; name the log to copy with --from',
      );
  }
}

const describe = (spec: LogSpec): string => {
  switch (spec.kind) {
    case 'sqlite':
      return `sqlite:${spec.file}`;
    case 'pglite':
      return `pglite:${spec.dir}`;
    case 'postgres':
      return redactUrl(spec.url);
    case 'kurrentdb':
      return redactConnectionString(spec.url);
  }
};

interface Opened<Store> {
  store: Store;
  close(): Promise<void>;
}

/** An embedded log is locked as a server would lock it: no gateway may run on it meanwhile. */
async function locked<Store>(file: string, open: () => Promise<Opened<Store>>): Promise<Opened<Store>> {
  const lock: DataDirLock = await lockDataDir(dirname(file));
  try {
    const opened = await open();
    return {
      store: opened.store,
      close: async () => {
        await opened.close();
        await lock.release();
      },
    };
  } catch (error) {
    await lock.release();
    throw error;
  }
}

async function openTarget(spec: LogSpec): Promise<Opened<ImportingStore>> {
  switch (spec.kind) {
    case 'sqlite': {
      const { openSqliteLog } = await import('../shared/event-store/sqlite/open.ts');
      return locked(spec.file, async () => {
        const log = openSqliteLog(spec.file);
        return { store: log.store, close: () => log.close() };
      });
    }
    case 'postgres': {
      const { openPostgresStore } = await import('../shared/event-store/postgres.ts');
      const { store } = await openPostgresStore({ connectionString: spec.url });
      return { store, close: () => store.close() };
    }
    default:
      throw new LogSpecError(unwritable(spec)!);
  }
}

/** Why a copy cannot go to `spec`, or undefined when it can. */
function unwritable(spec: LogSpec): string | undefined {
  switch (spec.kind) {
    case 'kurrentdb':
      return (
        'a copy cannot go to KurrentDB: it gives every event a position and a time of its own, so the ' +
        "copy's events would not digest as their seals say; copy to sqlite:… or postgres://…"
      );
    case 'pglite':
      return 'pglite:… can only be read (--from): Studio no longer writes PGlite logs';
    default:
      return undefined;
  }
}

async function openSource(spec: LogSpec): Promise<Opened<LogReader>> {
  switch (spec.kind) {
    case 'pglite': {
      const { openEarlierLog } = await import('../shared/event-store/pglite-reader.ts');
      const log = await openEarlierLog(spec.dir);
      return { store: log, close: () => log.close() };
    }
    case 'kurrentdb': {
      const { openKurrentDbStore } = await import('../shared/event-store/kurrentdb/open.ts');
      const store: EventStore = await openKurrentDbStore({ connectionString: spec.url });
      return { store, close: () => store.close() };
    }
    case 'sqlite':
      // A source that is not there is a mistake in its name, not an empty log to make.
      if (!existsSync(spec.file))
        throw new LogSpecError(`${spec.file} does not exist: there is no log to copy there`);
      return openTarget(spec);
    default:
      return openTarget(spec);
  }
}

/** Opens one side, saying which and why in one line when it cannot be (an unreachable server…). */
async function opening<Store>(spec: LogSpec, open: (spec: LogSpec) => Promise<Opened<Store>>) {
  try {
    return await open(spec);
  } catch (error) {
    if (error instanceof LogSpecError || error instanceof DataDirInUse) throw error;
    const code = (error as { code?: unknown } | null)?.code;
    const why = messageOf(error) || (typeof code === 'string' ? code : 'unknown error');
    throw new LogSpecError(`cannot open ${describe(spec)}: ${why}`, { cause: error });
  }
}

export interface LogCopyReport {
  ok: boolean;
  from: string;
  to: string;
  /** Events written by this run, and the target's head before it (an interrupted run's). */
  copied: number;
  resumed_after: number;
  compared: { source_events: number; target_events: number; mismatches: number; first_mismatch?: number };
  verify: VerifyReport;
}

/**
 * `studio log copy`: the whole log, in log order, into another store, each event as it was (ids,
 * positions, times); then both logs read side by side, every event's digest compared, and the
 * target's seals verified. A run that was interrupted is continued by running it again.
 */
export async function logCopyCommand(
  config: ProcessConfig,
  from: string | undefined,
  to: string,
): Promise<void> {
  let source: LogSpec;
  let target: LogSpec;
  try {
    source = from === undefined ? configuredLog(config) : parseLogSpec(from);
    target = parseLogSpec(to);
    const refused = unwritable(target);
    if (refused) throw new LogSpecError(refused);
    if (describe(source) === describe(target)) throw new LogSpecError('--from and --to name the same log');
  } catch (error) {
    if (!(error instanceof LogSpecError)) throw error;
    console.error(`studio: ${error.message}`);
    process.exitCode = 2;
    return;
  }
  const bar = new SingleBar({
    format: '  {step} [{bar}] {percentage}% | {events} events',
    hideCursor: true,
    stream: process.stderr,
    noTTYOutput: true,
    notTTYSchedule: 1000,
  });
  const step = (name: string) => bar.start(100, 0, { step: name.padEnd(9), events: 0 });
  const onProgress = (p: { events: number; fraction: number }) =>
    bar.update(Math.round(p.fraction * 100), { events: p.events });

  let opened: Opened<LogReader> | undefined;
  let written: Opened<ImportingStore> | undefined;
  try {
    opened = await opening(source, openSource);
    written = await opening(target, openTarget);
    console.error(`  from ${describe(source)}\n  to   ${describe(target)}`);
    step('copying');
    const copy = await copyLog(opened.store, written.store, { onProgress });
    bar.update(100);
    bar.stop();
    step('comparing');
    const compared: CompareReport = await compareLogs(opened.store, written.store, onProgress);
    bar.update(100);
    bar.stop();
    step('verifying');
    const verify = await verifyLog(written.store, { onProgress });
    bar.update(100);
    bar.stop();
    const report: LogCopyReport = {
      ok: compared.mismatches === 0 && verify.ok,
      from: describe(source),
      to: describe(target),
      copied: copy.copied,
      resumed_after: copy.resumedAfter,
      compared: {
        source_events: compared.source,
        target_events: compared.target,
        mismatches: compared.mismatches,
        ...(compared.firstMismatch === undefined ? {} : { first_mismatch: compared.firstMismatch }),
      },
      verify,
    };
    console.error(
      `  ${report.ok ? 'ok' : 'NOT A FAITHFUL COPY'}: ${copy.copied} events copied` +
        (copy.resumedAfter > 0 ? ` after position ${copy.resumedAfter} (already there)` : '') +
        `; ${compared.target} events compared, ${compared.mismatches} differ; ` +
        `seals ${verify.ok ? 'verify' : 'BROKEN'} (${verify.events_checked} events in ${verify.seals_checked} seals)`,
    );
    console.log(JSON.stringify(report, null, 2));
    if (!report.ok) process.exitCode = 1;
  } catch (error) {
    bar.stop();
    if (!(error instanceof NotACopy || error instanceof LogSpecError)) throw error;
    console.error(`studio: ${error.message}`);
    process.exitCode = 1;
  } finally {
    await written?.close();
    await opened?.close();
  }
}
