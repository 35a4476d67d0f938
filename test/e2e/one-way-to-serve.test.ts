import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../shared/http/app.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

// A gateway action, a runtime route and a session route are served by one mechanism: what is wrong
// with a request's body is answered alike on all three, byte for byte but for the request id.

let stack: TestStack;
let endpoints: {
  name: string;
  url: string;
  valid: Record<string, unknown>;
  headers: Record<string, string>;
}[];

beforeAll(async () => {
  stack = await startTestStack();
  const session = (await stack.call('POST', '/api/sdk/sessions', {})).json as { id: string };
  endpoints = [
    {
      name: 'gateway action',
      url: `${stack.gw.url}/v1/studios/create`,
      valid: { name: 'Acme' },
      headers: { authorization: `Bearer ${stack.gw.adminKey}` },
    },
    {
      name: 'runtime route',
      url: `${stack.runtime.url}/api/execute`,
      valid: { instructions: 'hi' },
      headers: {},
    },
    {
      name: 'session route',
      url: `${stack.runtime.url}/api/sdk/sessions/${session.id}/fork`,
      valid: {},
      headers: {},
    },
  ];
});
afterAll(async () => {
  await stack?.close();
});

const BAD_BODIES: [string, (valid: Record<string, unknown>) => { type: string; body: string }][] = [
  ['JSON that does not parse', () => ({ type: 'application/json', body: '{"name":' })],
  [
    'an unknown field',
    (valid) => ({ type: 'application/json', body: JSON.stringify({ ...valid, bogus: 1 }) }),
  ],
  ['a body over the limit', () => ({ type: 'application/json', body: `"${'a'.repeat(BODY_LIMIT_BYTES)}"` })],
  ['a body that is not JSON', (valid) => ({ type: 'text/plain', body: JSON.stringify(valid) })],
];

describe('every server answers a bad body with the same envelope', () => {
  it.each(BAD_BODIES)('%s', async (_what, badBody) => {
    const answers = await Promise.all(
      endpoints.map(async ({ url, valid, headers }) => {
        const { type, body } = badBody(valid);
        const res = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': type }, body });
        const json = (await res.json()) as { error: Record<string, unknown> };
        expect(json.error.request_id).toBe(res.headers.get('x-request-id'));
        return { status: res.status, error: { ...json.error, request_id: undefined } };
      }),
    );
    expect(answers[0]!.status).toBeGreaterThanOrEqual(400);
    expect(answers[0]!.status).toBeLessThan(500);
    for (const [index, answer] of answers.entries())
      expect(answer, endpoints[index]!.name).toEqual(answers[0]);
  });
});
