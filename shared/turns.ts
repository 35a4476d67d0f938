import { setImmediate as nextTurn } from 'node:timers/promises';

let lastTurn: Promise<void> = Promise.resolve();

/**
 * Waits for a turn of the event loop of its own, for work that holds the thread a long while (a
 * multi-megabyte event read back and parsed, a long prompt counted). Waiting for `setImmediate`
 * alone is not enough: every caller that waited for it in the same turn resumes in the same check
 * phase, so three long reads would run back to back before the loop polls for I/O again. Turns
 * taken here are handed out one per iteration of the loop, in the order asked, and every
 * iteration polls for I/O first, so other requests are answered between two of them.
 */
export function takeTurn(): Promise<void> {
  const turn = lastTurn.then(() => nextTurn());
  lastTurn = turn;
  return turn;
}
