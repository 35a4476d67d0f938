import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/runtime.ts';

// One client cannot hold an unbounded number of event streams open: past the bound it gets 429.

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ config: { STUDIO_MAX_STREAMS_PER_CLIENT: '3' } });
});
afterAll(async () => {
  await stack?.close();
});

it('the stream past the bound is 429 in the envelope; closing one makes room again', async () => {
  const id = ((await stack.call('POST', '/api/sdk/sessions', {})).json as { id: string }).id;
  const url = `${stack.runtime.url}/api/sdk/sessions/${id}/events`;
  const controllers = [0, 1, 2].map(() => new AbortController());
  const open = await Promise.all(controllers.map((c) => fetch(url, { signal: c.signal })));
  expect(open.map((r) => r.status)).toEqual([200, 200, 200]);

  const refused = await fetch(url);
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).toBe('1');
  expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limited');

  controllers[0]!.abort();
  let again: Response | undefined;
  for (let attempt = 0; attempt < 50 && again?.status !== 200; attempt++) {
    if (again) await again.text();
    await new Promise((r) => setTimeout(r, 20));
    again = await fetch(url);
  }
  expect(again?.status).toBe(200);
  await again?.body?.cancel();
  for (const c of controllers) c.abort();
});
