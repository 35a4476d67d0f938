import type { EventStore, StoredEvent } from './types.ts';

/**
 * The last event of a stream, found without reading the stream through: revisions only grow, so
 * "is there an event after revision k?" is answered by a read of one event and a search (doubling,
 * then halving) needs about 2·log2(n) of them. Works on every adapter, through the port alone.
 */
export async function lastEventOf(store: EventStore, streamId: string): Promise<StoredEvent | undefined> {
  const firstAfter = async (revision: number) =>
    (await store.readStream(streamId, { after: revision, limit: 1 }))[0];
  let last = await firstAfter(-1);
  if (last === undefined) return undefined;
  // Invariant: `last` exists; no event has a revision above `ceiling` once one is known.
  let step = 1;
  let ceiling: number | undefined;
  while (ceiling === undefined) {
    const probe = last.revision + step;
    const found = await firstAfter(probe);
    if (found === undefined) ceiling = probe;
    else {
      last = found;
      step *= 2;
    }
  }
  while (ceiling > last.revision) {
    const middle = Math.floor((last.revision + ceiling) / 2);
    const found = await firstAfter(middle);
    if (found === undefined) ceiling = middle;
    else last = found;
  }
  return last;
}
