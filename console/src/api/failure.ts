/** A refused or failed request, with what the error envelope said and the request id to quote. */
export class ApiFailure extends Error {
  override readonly name = 'ApiFailure';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | undefined,
  ) {
    super(message);
  }
}

interface Envelope {
  error?: { message?: unknown; code?: unknown; type?: unknown; request_id?: unknown };
}

/** The failure a non-2xx answer stands for: the envelope's message and code, the request id of the header. */
export function failureOf(response: Response, body: unknown): ApiFailure {
  const error = (body as Envelope | undefined)?.error;
  const message =
    typeof error?.message === 'string'
      ? error.message
      : `${response.status} ${response.statusText || 'error'}`;
  const code = typeof error?.code === 'string' ? error.code : `http_${response.status}`;
  const requestId =
    response.headers.get('x-request-id') ??
    (typeof error?.request_id === 'string' ? error.request_id : undefined);
  return new ApiFailure(response.status, code, message, requestId ?? undefined);
}

/** A network failure (the server is down, the connection dropped) as the same kind of failure. */
export function unreachable(error: unknown): ApiFailure {
  const detail = error instanceof Error ? error.message : String(error);
  return new ApiFailure(0, 'unreachable', `the server could not be reached (${detail})`, undefined);
}
