import type { ErrorRateData } from './alerts.ts';
import type { ErrorRateRule } from './error-rate.ts';

/** One studio's requests and failures in its current window (fixed windows, aligned on the epoch). */
export interface WindowCount {
  windowStart: string;
  windowMinutes: number;
  requests: number;
  failures: number;
  /** The alert of this window was decided already (its command sent). */
  raised: boolean;
}

/** Studio id → its current window. */
export type ErrorWindows = Map<string, WindowCount>;

/** What a request counted for the error rate came to. */
export type Counted = 'ok' | 'failure';

/**
 * Counts one request of a studio at `iso` in its window (a new window starts the counts again;
 * a request of a window already past is not counted), and answers the alert the window now calls
 * for, once per window.
 */
export function countRequest(
  windows: ErrorWindows,
  rule: ErrorRateRule,
  iso: string,
  counted: Counted,
): ErrorRateData | undefined {
  const windowMs = rule.windowMinutes * 60_000;
  const start = Math.floor(Date.parse(iso) / windowMs) * windowMs;
  const windowStart = new Date(start).toISOString();
  let current = windows.get(rule.studioId);
  if (
    current === undefined ||
    current.windowMinutes !== rule.windowMinutes ||
    Date.parse(current.windowStart) < start
  ) {
    current = { windowStart, windowMinutes: rule.windowMinutes, requests: 0, failures: 0, raised: false };
    windows.set(rule.studioId, current);
  } else if (current.windowStart !== windowStart) return undefined;
  current.requests++;
  if (counted === 'failure') current.failures++;
  if (current.raised || current.requests < rule.minRequests) return undefined;
  const rate = current.failures / current.requests;
  if (!(rate > rule.threshold)) return undefined;
  current.raised = true;
  return {
    studioId: rule.studioId,
    rate,
    requests: current.requests,
    failures: current.failures,
    windowStart,
    windowEnd: new Date(start + windowMs).toISOString(),
  };
}
