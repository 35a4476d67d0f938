import type { ImportingStore, StoredEvent } from '../../shared/event-store/types.ts';
import { backoffDelay, pause } from '../../shared/retry.ts';
import { eventDigest } from './digest.ts';

/** What a copy reads: any store, or the log of an earlier Studio. */
export interface LogReader {
  readAll(options: { after: number; limit: number }): Promise<StoredEvent[]>;
  headPosition(): Promise<number>;
}

/** What a copy writes to. */
export type LogWriter = LogReader & Pick<ImportingStore, 'importEvents'>;

export interface LogProgress {
  /** Events handled so far. */
  events: number;
  /** 0..1, by position from the first event to the head. */
  fraction: number;
}

export interface CopyReport {
  /** Events written to the target by this run. */
  copied: number;
  /** The target's head before this run: what an earlier, interrupted run had copied. */
  resumedAfter: number;
  /** The source's head: the copy holds everything up to it. */
  head: number;
}

export interface CompareReport {
  /** Events read from each side. */
  source: number;
  target: number;
  /** Positions where the two logs differ (an event missing on one side, or digesting otherwise). */
  mismatches: number;
  firstMismatch?: number;
}

/** The target holds something that is not a copy of the source: it is left alone. */
export class NotACopy extends Error {
  override readonly name = 'NotACopy';
}

const PAGE = 500;
/** How long a compare waits for the target to show every copied event. */
const SHOWN_WITHIN_MS = 60_000;

/**
 * Waits until `log` shows events up to `position`. On PostgreSQL an event is read only once every
 * transaction older than its own has ended, in any database of the server: another client's open
 * transaction holds back what readers see, though the copy is committed.
 */
async function untilShown(log: LogReader, position: number, withinMs = SHOWN_WITHIN_MS): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (let tries = 1; (await log.headPosition()) < position; tries++) {
    if (Date.now() > deadline) {
      throw new NotACopy(
        `the target does not show the copied events after ${withinMs / 1000} s: a transaction left open on its database server holds back what readers see; end it, then run the copy again to compare (nothing is copied twice)`,
      );
    }
    await pause(backoffDelay(tries, { initialMs: 50, maxMs: 2_000 }));
  }
}

/**
 * Copies the source's events, in log order, into the target exactly as stored (`importEvents`), a
 * page per transaction. A target that already holds a copy's beginning (an interrupted run) is
 * continued after its head; a copy that is complete is left as it is.
 */
export async function copyLog(
  source: LogReader,
  target: LogWriter,
  options: { onProgress?: (progress: LogProgress) => void; pageSize?: number } = {},
): Promise<CopyReport> {
  const { onProgress, pageSize = PAGE } = options;
  const head = await source.headPosition();
  const resumedAfter = await target.headPosition();
  if (resumedAfter > 0) await assertSameEventAt(source, target, resumedAfter);
  const progress = await tracker(source, head, onProgress);
  let after = resumedAfter;
  let copied = 0;
  for (;;) {
    const page = (await source.readAll({ after, limit: pageSize })).filter((e) => e.position <= head);
    if (page.length === 0) break;
    await target.importEvents(page);
    copied += page.length;
    after = page.at(-1)!.position;
    progress(copied, after);
  }
  return { copied, resumedAfter, head };
}

/** Reads both logs side by side, event by event, and compares positions and digests. */
export async function compareLogs(
  source: LogReader,
  target: LogReader,
  onProgress?: (progress: LogProgress) => void,
): Promise<CompareReport> {
  await untilShown(target, await source.headPosition());
  const head = Math.max(await source.headPosition(), await target.headPosition());
  const progress = await tracker(source, head, onProgress);
  const left = pages(source);
  const right = pages(target);
  const report: CompareReport = { source: 0, target: 0, mismatches: 0 };
  const mismatch = (position: number) => {
    report.mismatches++;
    report.firstMismatch ??= position;
  };
  let a = await left.next();
  let b = await right.next();
  while (!a.done || !b.done) {
    if (b.done || (!a.done && a.value.position < b.value.position)) {
      mismatch(a.value!.position);
      report.source++;
      a = await left.next();
      continue;
    }
    if (a.done || b.value.position < a.value.position) {
      mismatch(b.value.position);
      report.target++;
      b = await right.next();
      continue;
    }
    if (eventDigest(a.value) !== eventDigest(b.value)) mismatch(a.value.position);
    report.source++;
    report.target++;
    progress(report.source, a.value.position);
    a = await left.next();
    b = await right.next();
  }
  return report;
}

async function assertSameEventAt(source: LogReader, target: LogReader, position: number): Promise<void> {
  const [there] = await target.readAll({ after: position - 1, limit: 1 });
  const [here] = await source.readAll({ after: position - 1, limit: 1 });
  if (!there || !here || here.position !== position || eventDigest(here) !== eventDigest(there)) {
    throw new NotACopy(
      `the target already holds events, and its last (position ${position}) is not the source's: ` +
        'it is not a copy of this log, so nothing was written; choose an empty target',
    );
  }
}

async function* pages(log: LogReader): AsyncGenerator<StoredEvent> {
  let after = 0;
  for (;;) {
    const page = await log.readAll({ after, limit: PAGE });
    yield* page;
    if (page.length < PAGE) return;
    after = page.at(-1)!.position;
  }
}

/** Reports progress as a fraction of the positions from the source's first event to `head`. */
async function tracker(source: LogReader, head: number, onProgress?: (progress: LogProgress) => void) {
  const [first] = onProgress ? await source.readAll({ after: 0, limit: 1 }) : [];
  const from = first?.position ?? head;
  return (events: number, position: number) =>
    onProgress?.({ events, fraction: head > from ? (position - from) / (head - from) : 1 });
}
