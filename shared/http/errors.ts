import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import { ApiError, DomainError } from '../errors.ts';
import { EventLogStopped, UnstorableIdentifier } from '../event-store/types.ts';
import { storageUnavailable } from '../event-store/unavailable.ts';
import type { Logger } from '../logger.ts';
import { type ServedResponse, sendJson } from './request.ts';

/** zod issues as the `details` of a 400, and the first failing field as `param`. */
export function validationError(error: z.ZodError, where: 'body' | 'query' | 'path'): ApiError {
  const details = error.issues.map((issue) => {
    // An unknown field is reported at the field itself, not at the object holding it.
    const path = issue.code === 'unrecognized_keys' ? [...issue.path, ...issue.keys] : issue.path;
    return { path: path.map(String).join('.'), code: issue.code, message: issue.message };
  });
  const first = details[0];
  const message = first
    ? `invalid ${where}: ${first.path ? `${first.path}: ` : ''}${first.message}`
    : `invalid ${where}`;
  return new ApiError('validation_failed', message, {
    ...(first?.path ? { param: first.path } : {}),
    details,
  });
}

interface BodyParserError {
  type: string;
  limit?: number;
}

function isBodyParserError(error: unknown): error is BodyParserError {
  return (
    typeof error === 'object' && error !== null && typeof (error as { type?: unknown }).type === 'string'
  );
}

/** Turns anything thrown into the one error envelope; only the unexpected becomes a 500. */
export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof DomainError) return new ApiError(error.kind, error.message);
  if (error instanceof z.ZodError) return validationError(error, 'body');
  // Stream ids and types are built from what the request named; nothing valid holds such text.
  if (error instanceof UnstorableIdentifier) return new ApiError('validation_failed', error.message);
  // The process is stopping (its log line says why); another instance, or this one restarted, can answer.
  if (error instanceof EventLogStopped)
    return new ApiError('unavailable', 'the event log stopped; this server is stopping, retry shortly', {
      headers: { 'Retry-After': '1' },
    });
  // Nothing was stored (or read): a database's machine is at fault, and the log line says how.
  const unavailable = storageUnavailable(error);
  if (unavailable !== undefined)
    return new ApiError('unavailable', `storage is unavailable (${unavailable}); retry shortly`, {
      headers: { 'Retry-After': '5' },
    });
  if (isBodyParserError(error)) {
    switch (error.type) {
      case 'entity.too.large':
        return new ApiError(
          'payload_too_large',
          `the request body is larger than ${formatBytes(error.limit)}`,
        );
      case 'entity.parse.failed':
        return new ApiError('invalid_json', 'the request body is not valid JSON');
      case 'encoding.unsupported':
        return new ApiError(
          'unsupported_media_type',
          'this Content-Encoding is not supported: send the body as identity, gzip, deflate or br',
        );
      case 'charset.unsupported':
        return new ApiError('unsupported_media_type', 'the request body must be UTF-8 JSON');
      case 'request.aborted':
      case 'request.size.invalid':
        return new ApiError('invalid_json', 'the request body was incomplete');
    }
  }
  if (error instanceof URIError)
    return new ApiError('validation_failed', 'the URL is not valid percent-encoding');
  // Anything else that says it is the client's fault (e.g. a body whose Content-Encoding lies).
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new ApiError(
      'invalid_json',
      'the request body could not be read (check Content-Encoding and Content-Type)',
    );
  }
  return undefined;
}

function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined) return 'the limit';
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

export function sendError(res: ServerResponse, error: ApiError): void {
  const requestId = String(res.getHeader('x-request-id') ?? '');
  for (const [name, value] of Object.entries(error.options.headers ?? {})) res.setHeader(name, value);
  const dialect = (res as ServedResponse).req?.dialect;
  sendJson(res, error.status, dialect ? dialect.errorBody(error, requestId) : error.toBody(requestId));
}

/** Answers anything thrown while serving a request in the one envelope; only the unexpected is a 500. */
export function answerError(logger: Logger): (error: unknown, res: ServerResponse) => void {
  return (error, res) => {
    const known = toApiError(error);
    if (known) {
      // A server-side failure told to the client in general words: the operator needs its own.
      if (known.status >= 500 && !(error instanceof ApiError))
        logger.error({ err: error, requestId: res.getHeader('x-request-id') }, known.message);
      if (!res.headersSent) sendError(res, known);
      return;
    }
    logger.error({ err: error, requestId: res.getHeader('x-request-id') }, 'unhandled error');
    if (res.headersSent) {
      res.end();
      return;
    }
    sendError(res, new ApiError('internal_error', 'internal error'));
  };
}

/** `answerError` as express's error middleware, for what express serves. */
export function errorMiddleware(logger: Logger) {
  const answer = answerError(logger);
  return (error: unknown, _req: Request, res: Response, _next: NextFunction) => answer(error, res);
}
