import type { EventStore } from '../../shared/event-store/types.ts';
import { type AuditEventView, auditView } from './view.ts';

/** The bytes of events one page answers, at most (always at least one event, whatever its size). */
export const PAGE_BYTES = 8 * 1024 * 1024;
/** Events read from the store at once while a page fills: what a page holds in memory beyond it. */
const READ_AT_ONCE = 50;

export interface PageAsked {
  after: number;
  limit: number;
  streamId?: string;
  types?: string[];
}

/**
 * A page of the log after `after`: up to `limit` events, or fewer once their JSON comes to
 * `PAGE_BYTES`. `next_after` is where the next page starts, or null at the log's end.
 */
export async function readAuditPage(
  events: EventStore,
  { after, limit, ...filter }: PageAsked,
): Promise<{ items: AuditEventView[]; next_after: number | null }> {
  const items: AuditEventView[] = [];
  let bytes = 0;
  let cursor = after;
  while (items.length < limit && bytes < PAGE_BYTES) {
    const asked = Math.min(READ_AT_ONCE, limit - items.length);
    const read = await events.readAll({ after: cursor, limit: asked, ...filter });
    for (const event of read) {
      const view = auditView(event);
      items.push(view);
      cursor = event.position;
      bytes += Buffer.byteLength(JSON.stringify(view));
      if (bytes >= PAGE_BYTES) break;
    }
    const atEnd = read.length < asked && cursor === read.at(-1)?.position;
    if (atEnd || read.length === 0) return { items, next_after: null };
  }
  return { items, next_after: cursor };
}
