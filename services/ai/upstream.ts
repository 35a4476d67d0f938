import { setTimeout as sleep } from 'node:timers/promises';
import { errors, Pool } from 'undici';
import { ApiError, messageOf } from '../../shared/errors.ts';
import { tracing } from '../../shared/observability/tracing.ts';
import { backoffDelay } from '../../shared/retry.ts';
import { scrubCredentials } from '../../shared/scrub-credentials.ts';
import { FairShare, type Release } from './fair-share.ts';
import { guardedLookup, isRefusedHost, RefusedUpstreamAddress, refusedUpstream } from './upstream-address.ts';

export interface UpstreamRequest {
  /** Full URL, e.g. `https://api.openai.com/v1/chat/completions`. */
  url: string;
  method?: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string | Buffer;
  signal: AbortSignal;
  /** Secrets to scrub from any upstream message we pass on. */
  secrets: readonly (string | undefined)[];
  /** Who the call is for (a studio id, or `admin`): connections are shared fairly between them. */
  tenant: string;
  /** The env variable the URL's base comes from, named when the address is refused. */
  baseUrlVariable: string;
  /** Extra attempts after a 429, a 5xx or a refused connection, in place of the client's `retries`. */
  retries?: number;
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
  /** Connections per upstream origin. Default 128. */
  connections?: number;
  /** Most of an origin's connections one tenant may hold at once. Default half of them. */
  maxPerTenant?: number;
  /** Longest wait for a connection before a 503 `overloaded`. Default 10 s. */
  queueTimeoutMs?: number;
  /** Lets base URLs lead to link-local and cloud metadata addresses. Default false. */
  allowPrivateUpstreams?: boolean;
}

export const DEFAULT_UPSTREAM_OPTIONS: UpstreamOptions = {
  timeoutMs: 60_000,
  idleTimeoutMs: 120_000,
  retries: 2,
  retryBaseMs: 250,
};
const DEFAULT_CONNECTIONS = 128;
const DEFAULT_QUEUE_TIMEOUT_MS = 10_000;
/** Longest upstream message passed on to a client. */
export const MAX_UPSTREAM_MESSAGE = 300;
const MAX_ERROR_BODY = 64 * 1024;
const MAX_RETRY_AFTER_MS = 5_000;

interface Origin {
  pool: Pool;
  share: FairShare;
}

/**
 * Calls upstream APIs over one keep-alive pool per origin, its connections shared fairly between
 * tenants (`FairShare`): a connection is held from the request until its body is read or dropped.
 * Retries 429 and 5xx with backoff; this happens before anything reaches our client, since a
 * response is only returned once its status is final. Maps failures to 502 `upstream_error` and
 * 504 `upstream_timeout`. Link-local and metadata addresses are refused unless allowed.
 */
export class UpstreamClient {
  #origins = new Map<string, Origin>();

  constructor(readonly options: UpstreamOptions = DEFAULT_UPSTREAM_OPTIONS) {}

  #origin(origin: string): Origin {
    let entry = this.#origins.get(origin);
    if (!entry) {
      const connections = this.options.connections ?? DEFAULT_CONNECTIONS;
      entry = {
        pool: new Pool(origin, {
          connections,
          keepAliveTimeout: 30_000,
          pipelining: 1,
          ...(this.options.allowPrivateUpstreams ? {} : { connect: { lookup: guardedLookup } }),
        }),
        share: new FairShare({
          capacity: connections,
          maxPerTenant: this.options.maxPerTenant ?? Math.max(1, Math.ceil(connections / 2)),
          queueTimeoutMs: this.options.queueTimeoutMs ?? DEFAULT_QUEUE_TIMEOUT_MS,
        }),
      };
      this.#origins.set(origin, entry);
    }
    return entry;
  }

  /**
   * Sends the request; resolves with a 2xx response whose body is still to be read. Traced as a
   * client span until the response's headers (its host and path, never its query: keys go there).
   */
  send(request: UpstreamRequest): Promise<UpstreamResponse> {
    const t = tracing();
    if (!t.enabled) return this.#send(request);
    const url = new URL(request.url);
    const method = request.method ?? 'POST';
    const attributes = {
      'http.request.method': method,
      'server.address': url.hostname,
      'url.path': url.pathname,
    };
    return t.span(
      `${method} upstream`,
      attributes,
      async (span) => {
        const response = await this.#send(request);
        span.set({ 'http.response.status_code': response.status });
        return response;
      },
      'client',
    );
  }

  async #send(request: UpstreamRequest): Promise<UpstreamResponse> {
    const url = new URL(request.url);
    if (!this.options.allowPrivateUpstreams && isRefusedHost(url.hostname))
      throw refusedUpstream(request.baseUrlVariable, url.hostname);
    const { pool, share } = this.#origin(url.origin);
    const retries = request.retries ?? this.options.retries;
    for (let attempt = 0; ; attempt++) {
      const release = await share.acquire(request.tenant, request.signal);
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
        release();
        if (request.signal.aborted) throw error;
        if (error instanceof RefusedUpstreamAddress)
          throw refusedUpstream(request.baseUrlVariable, url.hostname);
        if (error instanceof errors.HeadersTimeoutError) {
          throw new ApiError(
            'upstream_timeout',
            `the upstream did not answer within ${this.options.timeoutMs} ms`,
          );
        }
        if (attempt < retries && isConnectionError(error)) {
          await sleep(this.#backoff(attempt), undefined, { signal: request.signal });
          continue;
        }
        throw new ApiError(
          'upstream_error',
          `could not reach the upstream: ${upstreamMessage(messageOf(error), request.secrets)}`,
        );
      }
      if (response.statusCode < 300) {
        releaseWhenClosed(response.body, release);
        return { status: response.statusCode, headers: response.headers, body: response.body };
      }

      const text = await readErrorBody(response.body);
      release();
      const retryable = response.statusCode === 429 || response.statusCode >= 500;
      if (retryable && attempt < retries) {
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
    return backoffDelay(attempt + 1, { initialMs: this.options.retryBaseMs, maxMs: MAX_RETRY_AFTER_MS });
  }

  async close(): Promise<void> {
    await Promise.all([...this.#origins.values()].map(({ pool }) => pool.close()));
    this.#origins.clear();
  }
}

/** An error body, up to 64 KiB: enough for any message, and an upstream cannot make us hold more. */
async function readErrorBody(body: Awaited<ReturnType<Pool['request']>>['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= MAX_ERROR_BODY) break; // leaving the loop destroys the body
    }
  } catch {
    // what arrived is enough
  }
  return Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY).toString('utf8');
}

/** The connection is the tenant's until the body has been read to its end or dropped. */
function releaseWhenClosed(body: Awaited<ReturnType<Pool['request']>>['body'], release: Release): void {
  if (body.closed) release();
  else body.once('close', release);
}

/** 502 carrying the upstream's own message (OpenAI and Anthropic both say `error.message`). */
export function upstreamError(
  status: number,
  body: string,
  secrets: readonly (string | undefined)[],
): ApiError {
  let message = body;
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const inner = typeof parsed.error === 'object' ? parsed.error?.message : (parsed.error ?? parsed.message);
    if (typeof inner === 'string') message = inner;
  } catch {
    // not JSON: keep the text
  }
  return new ApiError(
    'upstream_error',
    `upstream answered ${status}: ${upstreamMessage(message, secrets) || 'no message'}`,
    {
      details: { upstream_status: status },
    },
  );
}

/**
 * An upstream's message as a client may see it: credentials scrubbed, on one line, at most
 * `MAX_UPSTREAM_MESSAGE` characters. Upstreams echo whatever they were sent (prompts, keys, headers).
 */
export function upstreamMessage(message: string, secrets: readonly (string | undefined)[]): string {
  // Scrubbed before it is cut, so a cut cannot leave a credential's head unrecognised.
  const line = scrubCredentials(message, secrets)
    .replace(/[\p{Cc}\s]+/gu, ' ')
    .trim();
  if (line.length <= MAX_UPSTREAM_MESSAGE) return line;
  let end = MAX_UPSTREAM_MESSAGE - 1;
  if (/[\ud800-\udbff]/.test(line[end - 1]!)) end--; // never half a surrogate pair
  return `${line.slice(0, end)}…`;
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
