import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestStack } from '../support/runtime.ts';
import {
  checkAfterRun,
  checkExchange,
  type Fixtures,
  fuzzRequest,
  secretsOf,
  send,
  startFuzzTarget,
} from './harness.ts';
import type { FuzzRoute } from './routes.ts';

// Property-based run over every route of the gateway, the runtime and the session API. A bounded run
// is part of `npm test`; `npm run fuzz` runs long (FUZZ_RUNS, default 5,000). Every run prints its
// seed: FUZZ_SEED=<seed> replays it, and a failure prints the seed and path of its smallest case.

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const SEED =
  process.env.FUZZ_SEED === undefined
    ? Date.now() ^ (Math.random() * 0x7fffffff)
    : Number(process.env.FUZZ_SEED);

let stack: TestStack;
let fixtures: Fixtures;
let routes: FuzzRoute[];

beforeAll(async () => {
  ({ stack, fixtures, routes } = await startFuzzTarget());
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

it('every route: no 5xx, an answer in time, errors in the envelope, no secret echoed', {
  timeout: Math.max(120_000, RUNS * 2_000),
}, async () => {
  console.log(
    `fuzz: ${RUNS} runs over ${routes.length} routes, seed ${SEED} (replay with FUZZ_SEED=${SEED})`,
  );
  const secrets = secretsOf(stack, fixtures);
  const seen = new Set<string>();
  await fc.assert(
    fc.asyncProperty(fuzzRequest(routes, fixtures), async (request) => {
      seen.add(`${request.route.method} ${request.route.path}`);
      checkExchange(await send(stack, fixtures, request), secrets);
    }),
    { numRuns: RUNS, seed: SEED, endOnFailure: RUNS > 1_000 },
  );
  if (RUNS >= 300) expect(seen.size).toBeGreaterThan(routes.length * 0.8);
  await checkAfterRun(stack, fixtures);
});
