/**
 * Which command a benchmark starts Studio as (BENCH_STUDIO_START): `studio` is `studio start`
 * (`npm start`: the gateway and the agent runtime in one process), `gateway` is
 * `studio gateway start` (the gateway alone). Kept apart from studio.ts so the launcher, which is
 * compiled as the server is, does not bundle what the benchmark itself needs.
 */
const STARTS = ['studio', 'gateway'] as const;
export type StudioStart = (typeof STARTS)[number];

/** How each start is named in reports. */
export const START_COMMAND: Record<StudioStart, string> = {
  studio: '`studio start`',
  gateway: '`studio gateway start`',
};

/** BENCH_STUDIO_START: `studio` (as users start it) unless set; anything else is refused by name. */
export function studioStartFromEnv(value = process.env.BENCH_STUDIO_START): StudioStart {
  if (value === undefined || value === '') return 'studio';
  const start = STARTS.find((s) => s === value);
  if (!start) throw new Error(`BENCH_STUDIO_START must be one of ${STARTS.join(', ')}, not "${value}"`);
  return start;
}
