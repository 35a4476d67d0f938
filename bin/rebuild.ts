import { SingleBar } from 'cli-progress';
import { GATEWAY_PROJECTIONS } from '../services/gateway/projections.ts';
import { RUNTIME_PROJECTIONS } from '../services/runtime/projections.ts';
import type { StudioConfig } from '../shared/config.ts';
import { rebuildProjection } from '../shared/projections/rebuild.ts';
import { withLog } from './open-log.ts';

/** `studio projections rebuild [name]`: replays from the log and saves fresh checkpoints. */
export async function rebuildCommand(config: StudioConfig, name: string | undefined): Promise<void> {
  const all = [...GATEWAY_PROJECTIONS, ...RUNTIME_PROJECTIONS];
  const chosen = name === undefined ? all : all.filter((p) => p.name === name);
  if (chosen.length === 0) {
    const known = all.map((p) => p.name).join(', ');
    console.error(`studio: unknown projection "${name}"; known: ${known}`);
    process.exitCode = 2;
    return;
  }
  await withLog(config, 'rebuild', async (store) => {
    for (const projection of chosen) {
      const bar = new SingleBar({
        format: `  ${projection.name.padEnd(10)} [{bar}] {percentage}% | {events} events`,
        hideCursor: true,
        // Draw even without a terminal, so CI logs and pipes show progress too.
        noTTYOutput: true,
        notTTYSchedule: 1000,
      });
      bar.start(100, 0, { events: 0 });
      const result = await rebuildProjection(store.events, store.checkpoints, projection, (p) =>
        bar.update(Math.round(p.fraction * 100), { events: p.events }),
      );
      bar.stop();
      const rate = result.ms > 0 ? Math.round((result.events / result.ms) * 1000) : result.events;
      console.log(
        `  ${projection.name}: ${result.events} events in ${Math.round(result.ms)} ms (${rate} events/s)`,
      );
    }
  });
}
