import { setTimeout as sleep } from 'node:timers/promises';
import { errors, Pool } from 'undici';
import { ApiError } from '../../shared/errors.ts';
import { scrubCredentials } from '../../shared/scrub-credentials.ts';

export interface UpstreamRequest {
  /** Full URL, e.g. `https://api.openai.com/v1/chat/completions`. */
  url: string;
  method?: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string | Buffer;
  signal: AbortSignal;
  /** Secrets to scrub from any upstream message we pass on. */
  secrets: readonly (string | undefined)[];
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Buffer> & {
    text(): Promise<string>;
    json(): Promise<unknown>;
    arrayBuffer(): Promise<ArrayBuffer>;
  };
}

export interface UpstreamOptions {
  /** Until the upstream's response headers arrive. */
  timeoutMs: number;
  /** Longest silence between two chunks of a body. */
  idleTimeoutMs: number;
  /** Extra attempts after a 429, a 5xx or a refused connection. */
  retries: number;
  retryBaseMs: number;
}

export const DEFAULT_UPSTREAM_OPTIONS: UpstreamOptions = {
  timeoutMs: 60_000,
  idleTimeoutMs: 120_000,
  retries: 2,
  retryBaseMs: 250,
};
const MAX_RETRY_AFTER_MS = 5_000;

/**
 * Calls upstream APIs over one keep-alive pool per origin. Retries 429 and 5xx with backoff; this
 * happens before anything reaches our client, since a response is only returned once its status
 * is final. Maps failures to 502 `upstream_error` and 504 `upstream_timeout`.
 */
export class UpstreamClient {
  #pools = new Map<string, Pool>();

  constructor(readonly options: UpstreamOptions = DEFAULT_UPSTREAM_OPTIONS) {}

  #pool(origin: string): Pool {
    let pool = this.#pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, { connections: 128, keepAliveTimeout: 30_000, pipelining: 1 });
      this.#pools.set(origin, pool);
    }
    return pool;
  }

  /** Sends the request; resolves with a 2xx response whose body is still to be read. */
  async send(request: UpstreamRequest): Promise<UpstreamResponse> {
    const url = new URL(request.url);
    const pool = this.#pool(url.origin);
    for (let attempt = 0; ; attempt++) {
      let response: Awaited<ReturnType<Pool['request']>>;
      try {
        response = await pool.request({
          path: url.pathname + url.search,
          method: request.method ?? 'POST',
          headers: request.headers,
          body: request.body,
          signal: request.signal,
          headersTimeout: this.options.timeoutMs,
          bodyTimeout: this.options.idleTimeoutMs,
        });
      } catch (error) {
        if (request.signal.aborted) throw error;
        if (error instanceof errors.HeadersTimeoutError) {
          throw new ApiError(
            'upstream_timeout',
            `the upstream did not answer within ${this.options.timeoutMs} ms`,
          );
        }
        if (attempt < this.options.retries && isConnectionError(error)) {
          await sleep(this.#backoff(attempt), undefined, { signal: request.signal });
          continue;
        }
        throw new ApiError(
          'upstream_error',
          `could not reach the upstream: ${scrubCredentials(messageOf(error), request.secrets)}`,
        );
      }
      if (response.statusCode < 300)
        return { status: response.statusCode, headers: response.headers, body: response.body };

      const text = await response.body.text().catch(() => '');
      const retryable = response.statusCode === 429 || response.statusCode >= 500;
      if (retryable && attempt < this.options.retries) {
        await sleep(this.#backoff(attempt, response.headers['retry-after']), undefined, {
          signal: request.signal,
        });
        continue;
      }
      throw upstreamError(response.statusCode, text, request.secrets);
    }
  }

  #backoff(attempt: number, retryAfter?: string | string[]): number {
    const seconds = Number(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_RETRY_AFTER_MS);
    const base = this.options.retryBaseMs * 2 ** attempt;
    return base / 2 + Math.random() * (base / 2);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#pools.values()].map((pool) => pool.close()));
    this.#pools.clear();
  }
}

/** 502 carrying the upstream's own message (OpenAI and Anthropic both say `error.message`). */
export function upstreamError(
  status: number,
  body: string,
  secrets: readonly (string | undefined)[],
): ApiError {
  let message = body.slice(0, 2000);
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const inner = typeof parsed.error === 'object' ? parsed.error?.message : (parsed.error ?? parsed.message);
    if (typeof inner === 'string') message = inner;
  } catch {
    // not JSON: keep the text
  }
  return new ApiError(
    'upstream_error',
    `upstream answered ${status}: ${scrubCredentials(message, secrets) || 'no message'}`,
    {
      details: { upstream_status: status },
    },
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return (
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'UND_ERR_SOCKET' ||
    code === 'UND_ERR_CLOSED' ||
    code === 'EPIPE'
  );
}

/** The 504 for a body that went silent mid-way. */
export function isBodyTimeout(error: unknown): boolean {
  return error instanceof errors.BodyTimeoutError;
}
