/** Every error code a client can see, with the HTTP status it maps to (docs/decisions.md, "HTTP"). */
export const ERROR_STATUS = {
  invalid_json: 400,
  validation_failed: 400,
  malformed_request: 400,
  unauthenticated: 401,
  /** A hard budget cannot pay for the generation. */
  budget_exceeded: 402,
  forbidden: 403,
  host_not_allowed: 403,
  origin_not_allowed: 403,
  studio_mismatch: 403,
  studio_paused: 403,
  /** The token is limited to other models than the one asked for. */
  model_not_allowed: 403,
  path_outside_workspace: 403,
  not_found: 404,
  model_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  upstream_error: 502,
  upstream_not_allowed: 502,
  /** Busy (a bounded queue or budget is full): try again after `Retry-After`. */
  overloaded: 503,
  /** Not able to answer truthfully now (read models stale) or not configured for this: see the message. */
  unavailable: 503,
  upstream_timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

const ERROR_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'insufficient_quota',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  408: 'invalid_request_error',
  409: 'conflict_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  431: 'invalid_request_error',
  500: 'api_error',
  502: 'api_error',
  503: 'api_error',
  504: 'api_error',
};

export interface ApiErrorOptions {
  param?: string;
  details?: unknown;
  headers?: Record<string, string>;
}

/** Any failure a caller should see: carries its code, and so its status, in the one error envelope. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly type: string;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: ApiErrorOptions = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
    this.type = ERROR_TYPE[this.status] ?? 'api_error';
  }

  toBody(requestId: string): { error: Record<string, unknown> } {
    return {
      error: {
        type: this.type,
        code: this.code,
        message: this.message,
        ...(this.options.param === undefined ? {} : { param: this.options.param }),
        ...(this.options.details === undefined ? {} : { details: this.options.details }),
        request_id: requestId,
      },
    };
  }
}

/** 503 `overloaded`: the gateway is at a bound it keeps for everyone's sake; the client may retry soon. */
export function overloaded(message: string, retryAfterSeconds = 2): ApiError {
  return new ApiError('overloaded', message, { headers: { 'Retry-After': String(retryAfterSeconds) } });
}

/** A rule of the domain was broken; decided by pure code that knows nothing of HTTP. */
export class DomainError extends Error {
  override readonly name = 'DomainError';
  constructor(
    readonly kind: 'not_found' | 'conflict',
    message: string,
  ) {
    super(message);
  }
}

/** What to say of anything thrown: an error's message, else the value as text. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
