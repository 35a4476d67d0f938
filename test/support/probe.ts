import { jsonOrUndefined } from './gateway.ts';

/** One request sent to see how a server copes with it: answered in time, no 5xx, 4xx in the envelope. */
export interface Probe {
  method: 'GET' | 'POST';
  /** Path and query, already encoded. */
  path: string;
  token?: string;
  /** Sent as is with `Content-Type: application/json` (so bodies may carry keys JSON.stringify would not write). */
  body?: string;
  /** The answer is a page for a browser, not JSON: only its status is checked. */
  page?: boolean;
}

export interface ProbeAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: a parsed JSON body, read by the caller.
  json: any;
  text: string;
}

export const PROBE_TIMEOUT_MS = 5_000;

/**
 * Sends the probe to `baseUrl` and returns its answer, or a sentence saying what is wrong with it.
 * An event stream counts as answered once its headers arrive (it would never end by itself).
 */
export async function sendProbe(
  baseUrl: string,
  probe: Probe,
): Promise<{ answer?: ProbeAnswer; problem?: string }> {
  const label = `${probe.method} ${probe.path}${probe.body === undefined ? '' : ` ${probe.body}`}`;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), PROBE_TIMEOUT_MS);
  try {
    const res = await fetch(`${baseUrl}${probe.path}`, {
      method: probe.method,
      headers: {
        ...(probe.token === undefined ? {} : { authorization: `Bearer ${probe.token}` }),
        ...(probe.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: probe.body,
      signal: controller.signal,
    });
    if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      controller.abort();
      return res.status < 500
        ? { answer: { status: res.status, json: undefined, text: '' } }
        : { problem: `${label} → ${res.status}` };
    }
    const text = await res.text();
    const answer = { status: res.status, json: jsonOrUndefined(text), text };
    if (res.status >= 500) return { answer, problem: `${label} → ${res.status} ${text.slice(0, 200)}` };
    if (res.status >= 400 && !probe.page) {
      const wrong = envelopeProblem(res.headers, answer.json);
      if (wrong) return { answer, problem: `${label} → ${res.status}: ${wrong}: ${text.slice(0, 200)}` };
    }
    return { answer };
  } catch (error) {
    return {
      problem: controller.signal.aborted
        ? `${label}: no answer within ${PROBE_TIMEOUT_MS} ms`
        : `${label}: ${error instanceof Error ? error.message : String(error)}`,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** What is wrong with an error body, when it is not the one error envelope. */
function envelopeProblem(headers: Headers, json: unknown): string | undefined {
  if (!(headers.get('content-type') ?? '').startsWith('application/json')) return 'not JSON';
  if (typeof json !== 'object' || json === null) return 'no JSON object';
  if (Object.keys(json).join() !== 'error') return 'not {error}';
  const error = (json as { error: Record<string, unknown> }).error;
  for (const field of ['type', 'code', 'message', 'request_id']) {
    if (typeof error[field] !== 'string' || error[field] === '') return `no ${field}`;
  }
  if (error.request_id !== headers.get('x-request-id')) return 'request_id is not x-request-id';
  return undefined;
}
