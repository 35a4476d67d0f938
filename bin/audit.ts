import { SingleBar } from 'cli-progress';
import { type VerifyReport, verifyLog } from '../services/audit/verify.ts';
import type { ProcessConfig } from '../shared/config.ts';
import { withLog } from './open-log.ts';

/**
 * `studio audit verify`: checks the log against its seals. The report (JSON) goes to stdout, the
 * progress bar and a one-line summary to stderr. Exit code 0 when the sealed part is intact, 1 when
 * it is broken.
 */
export async function verifyCommand(config: ProcessConfig): Promise<void> {
  await withLog(config, 'verify', async (store) => {
    const bar = new SingleBar({
      format: '  verifying [{bar}] {percentage}% | {events} events',
      hideCursor: true,
      stream: process.stderr,
      // Draw even without a terminal, so CI logs and pipes show progress too.
      noTTYOutput: true,
      notTTYSchedule: 1000,
    });
    bar.start(100, 0, { events: 0 });
    const report = await verifyLog(store.events, {
      onProgress: (p) => bar.update(Math.round(p.fraction * 100), { events: p.events }),
    });
    bar.update(100);
    bar.stop();
    console.error(`  ${summary(report)}`);
    console.log(JSON.stringify(report, null, 2));
    if (!report.ok) process.exitCode = 1;
  });
}

function summary(report: VerifyReport): string {
  const unsealed = `${report.unsealed} unsealed event${report.unsealed === 1 ? '' : 's'} after position ${report.sealed_through}, not verified`;
  if (report.first_break) {
    const { position, reason } = report.first_break;
    return `BROKEN: ${reason} at position ${position} (${report.breaks} break${report.breaks === 1 ? '' : 's'}); ${unsealed}`;
  }
  return `ok: ${report.events_checked} events in ${report.seals_checked} seals verified; ${unsealed}`;
}
