import { verifyLog } from '../../services/audit/verify.ts';
import type { EventStore } from '../../shared/event-store/types.ts';
import { waitUntil } from '../../shared/testing/wait.ts';

/**
 * Waits until every event up to `through` (a position at or after the last one written) is sealed.
 * `unsealed === 0` alone is not enough: verify reads up to the head it sees, and a seal still being
 * appended holds that head back (readers see nothing past an append in flight).
 */
export async function untilSealed(store: EventStore, through: number): Promise<void> {
  await waitUntil(async () => {
    const report = await verifyLog(store);
    return report.head >= through && report.unsealed === 0;
  }, `the log sealed through ${through}`);
}
