import type { StoredEvent } from './types.ts';

/** Binary search in events sorted by position: the index of the first one after `after`. */
export function firstIndexAfter(events: readonly StoredEvent[], after: number): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (events[mid]!.position <= after) low = mid + 1;
    else high = mid;
  }
  return low;
}
