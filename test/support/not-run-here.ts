/**
 * For a suite that needs what a fresh machine may lack (Chromium, espeak-ng, a database): the reason
 * it cannot run here, or undefined when it can. Outside CI the suite is skipped, its reason printed;
 * under `CI=true`, where .ci/run installs everything, a missing piece fails the run instead.
 */
export function notRunHere(suite: string, reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined;
  if (process.env.CI === 'true') throw new Error(`${suite} must run in CI, but: ${reason}`);
  console.warn(`[test] skipping ${suite}: ${reason}`);
  return reason;
}
