import { z } from 'zod';
import type { ApiError, ErrorCode } from '../../../shared/errors.ts';
import type { WireDialect } from '../../../shared/http/dialect.ts';

/** Anthropic's error types, by our codes where the status alone does not decide. */
const TYPE_OF_CODE: Partial<Record<ErrorCode, string>> = {
  overloaded: 'overloaded_error',
  upstream_timeout: 'timeout_error',
  request_timeout: 'timeout_error',
};

const TYPE_OF_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
};

/** The type an Anthropic client reads: 4xx by status, 5xx `api_error` unless busy or timed out. */
export function anthropicErrorType(error: ApiError): string {
  return (
    TYPE_OF_CODE[error.code] ??
    TYPE_OF_STATUS[error.status] ??
    (error.status < 500 ? 'invalid_request_error' : 'api_error')
  );
}

/**
 * `{type: "error", error: {type, message, details}, request_id}`. Our code goes where Anthropic puts
 * its own (`details.error_code`, which its SDK reads as `errorCode`), with the field at fault and
 * whatever details the error carries.
 */
export function anthropicErrorBody(error: ApiError, requestId: string) {
  const { param, details } = error.options;
  const extra = Array.isArray(details)
    ? { issues: details }
    : typeof details === 'object' && details !== null
      ? details
      : {};
  return {
    type: 'error' as const,
    error: {
      type: anthropicErrorType(error),
      message: error.message,
      details: { ...extra, ...(param === undefined ? {} : { param }), error_code: error.code },
    },
    request_id: requestId,
  };
}

/** The shape of `anthropicErrorBody`, for the API's documents. */
const AnthropicErrorBody = z.strictObject({
  type: z.literal('error'),
  error: z.strictObject({
    type: z.string(),
    message: z.string(),
    details: z.looseObject({ error_code: z.string(), param: z.string().optional() }),
  }),
  request_id: z.string(),
});

/** Anthropic's Messages API on the gateway: a key in `x-api-key`, Anthropic's errors, its `request-id`. */
export const anthropicDialect: WireDialect = {
  name: 'anthropic',
  credentialHeader: 'x-api-key',
  requestIdHeaders: ['request-id'],
  errorBody: anthropicErrorBody,
  errorSchema: AnthropicErrorBody,
};
