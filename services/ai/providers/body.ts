import { ApiError } from '../../../shared/errors.ts';
import { readSseAs, type SSE_END } from '../chat/read-sse.ts';
import { isBodyTimeout, type UpstreamResponse } from '../upstream.ts';

/**
 * Reading upstream bodies. `UpstreamClient.send` maps failures up to the response headers; these map
 * the ones after: a body that goes silent is a 504, one that breaks off or is not what was promised
 * a 502. The client's own disconnect passes through untouched (nobody is left to answer).
 */
function bodyError(error: unknown, signal: AbortSignal): unknown {
  if (signal.aborted || error instanceof ApiError) return error;
  if (isBodyTimeout(error)) return new ApiError('upstream_timeout', 'the upstream went silent mid-answer');
  return new ApiError('upstream_error', 'the upstream connection broke off mid-answer');
}

export async function readJson<T>(response: UpstreamResponse, signal: AbortSignal): Promise<T> {
  let text: string;
  try {
    text = await response.body.text();
  } catch (error) {
    throw bodyError(error, signal);
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ApiError('upstream_error', 'the upstream answered with something that is not JSON');
  }
}

export async function readBytes(response: UpstreamResponse, signal: AbortSignal): Promise<Buffer> {
  try {
    return Buffer.from(await response.body.arrayBuffer());
  } catch (error) {
    throw bodyError(error, signal);
  }
}

/** A server-sent event of an upstream: its data parsed as a JSON object, or the closing `[DONE]`. */
export interface UpstreamEvent {
  event: string | undefined;
  data: Record<string, unknown> | '[DONE]';
}

/**
 * The body's server-sent events as they arrive, each made into what `as` returns (`SSE_END` ends
 * them there); data that is not a JSON object fails the read.
 */
export function readEvents(response: UpstreamResponse, signal: AbortSignal): AsyncGenerator<UpstreamEvent>;
export function readEvents<T>(
  response: UpstreamResponse,
  signal: AbortSignal,
  as: (event: UpstreamEvent) => T | typeof SSE_END,
): AsyncGenerator<T>;
export function readEvents<T>(
  response: UpstreamResponse,
  signal: AbortSignal,
  as: (event: UpstreamEvent) => T | typeof SSE_END = (event) => event as T,
): AsyncGenerator<T> {
  return readSseAs(
    response.body,
    ({ event, data }) => as({ event, data: data === '[DONE]' ? data : jsonObjectOf(data) }),
    (error) => bodyError(error, signal),
  );
}

function jsonObjectOf(data: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    parsed = undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ApiError('upstream_error', 'the upstream sent an event that is not a JSON object');
  return parsed as Record<string, unknown>;
}

/** `{error: {message}}` or `{error: "…"}`, the way OpenAI and Anthropic report a failure in a stream. */
export function errorMessageOf(data: Record<string, unknown>): string | undefined {
  const error = data.error;
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object') {
    const message = (error as { message?: unknown }).message;
    if (typeof message === 'string') return message;
    return 'the upstream failed mid-answer';
  }
  return undefined;
}

/** A multipart/form-data body encoded by the platform, with its boundary. */
export async function multipart(form: FormData): Promise<{ body: Buffer; contentType: string }> {
  const encoded = new Response(form);
  return {
    body: Buffer.from(await encoded.arrayBuffer()),
    contentType: encoded.headers.get('content-type') ?? 'multipart/form-data',
  };
}
