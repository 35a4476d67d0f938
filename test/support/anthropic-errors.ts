import { expect } from 'vitest';
import type { ApiResponse } from './gateway.ts';

/**
 * An error in Anthropic's shape, as the Messages API routes answer: `{type: "error", error: {type,
 * message, details: {error_code}}, request_id}`, the request id in `x-request-id` and `request-id`.
 */
// biome-ignore lint/suspicious/noExplicitAny: the error object, for further checks by the caller.
export function expectAnthropicError(res: ApiResponse, status: number, code: string, type?: string): any {
  const context = `${res.status} ${res.text.slice(0, 300)}`;
  expect(res.status, context).toBe(status);
  expect(res.headers.get('content-type') ?? '', context).toMatch(/^application\/json/);
  expect(Object.keys(res.json ?? {}).sort(), context).toEqual(['error', 'request_id', 'type']);
  expect(res.json.type, context).toBe('error');
  const error = res.json.error;
  expect(typeof error.type, context).toBe('string');
  if (type !== undefined) expect(error.type, context).toBe(type);
  expect(typeof error.message, context).toBe('string');
  expect(error.message.length, context).toBeGreaterThan(0);
  expect(error.details.error_code, context).toBe(code);
  expect(res.json.request_id, context).toBe(res.headers.get('x-request-id'));
  expect(res.headers.get('request-id'), context).toBe(res.headers.get('x-request-id'));
  return error;
}
