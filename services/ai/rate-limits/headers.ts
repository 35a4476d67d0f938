/** Where one limit of one scope stands in its current minute. */
export interface LimitReading {
  limit: number;
  used: number;
  /** Milliseconds until the minute's count starts again from zero. */
  resetMs: number;
}

export const remainingOf = (reading: LimitReading) => Math.max(0, reading.limit - reading.used);

/** The reading with the least remaining: the one the client runs into first. */
export const tightest = (readings: readonly LimitReading[]): LimitReading | undefined =>
  readings.reduce<LimitReading | undefined>(
    (tight, r) => (tight === undefined || remainingOf(r) < remainingOf(tight) ? r : tight),
    undefined,
  );

/**
 * A duration as OpenAI writes its reset headers (Go's notation): `250ms`, `6s`, `1.5s`, `1m0s`,
 * `1h0m0s`.
 */
export function formatReset(ms: number): string {
  const total = Math.max(0, Math.round(ms));
  if (total < 1000) return total === 0 ? '0s' : `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const seconds = `${Number(((total % 60_000) / 1000).toFixed(3))}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  return minutes > 0 ? `${minutes}m${seconds}` : seconds;
}

/** OpenAI's `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` for the tightest limit of each kind. */
export function rateLimitHeaders(
  requests: readonly LimitReading[],
  tokens: readonly LimitReading[],
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [kind, readings] of [
    ['requests', requests],
    ['tokens', tokens],
  ] as const) {
    const reading = tightest(readings);
    if (!reading) continue;
    headers[`x-ratelimit-limit-${kind}`] = String(reading.limit);
    headers[`x-ratelimit-remaining-${kind}`] = String(remainingOf(reading));
    headers[`x-ratelimit-reset-${kind}`] = formatReset(reading.resetMs);
  }
  return headers;
}
