import { SingleBar } from 'cli-progress';
import { GATEWAY_PROJECTIONS } from '../services/gateway/projections.ts';
import { RUNTIME_PROJECTIONS } from '../services/runtime/projections.ts';
import type { ProcessConfig } from '../shared/config.ts';
import { rebuildProjections } from '../shared/projections/rebuild.ts';
import { withLog } from './open-log.ts';

/** `studio projections rebuild [name]`: replays from the log and saves fresh checkpoints. */
export async function rebuildCommand(config: ProcessConfig, name: string | undefined): Promise<void> {
  const all = [...GATEWAY_PROJECTIONS, ...RUNTIME_PROJECTIONS];
  const chosen = name === undefined ? all : all.filter((p) => p.name === name);
  if (chosen.length === 0) {
    const known = all.map((p) => p.name).join(', ');
    console.error(`studio: unknown projection "${name}"; known: ${known}`);
    process.exitCode = 2;
    return;
  }
  await withLog(config, 'rebuild', async (store) => {
    const bar = new SingleBar({
      format: `  ${chosen.length} read model${chosen.length === 1 ? '' : 's'} [{bar}] {percentage}% | {events} events`,
      hideCursor: true,
      // Draw even without a terminal, so CI logs and pipes show progress too.
      noTTYOutput: true,
      notTTYSchedule: 1000,
    });
    bar.start(100, 0, { events: 0 });
    // One pass over the log for all of them.
    const report = await rebuildProjections(store.events, store.checkpoints, chosen, (p) =>
      bar.update(Math.round(p.fraction * 100), { events: p.events }),
    );
    bar.stop();
    for (const p of report.projections) console.log(`  ${p.name}: ${p.events} events`);
    const rate = report.ms > 0 ? Math.round((report.events / report.ms) * 1000) : report.events;
    console.log(
      `  ${report.events} events read in ${Math.round(report.ms)} ms (${rate} events/s), one pass for all`,
    );
  });
}
