/**
 * What makes a request at an even rate cost Studio's main thread more than one among 50 in flight?
 * Profiles (V8's sampler) Studio as `studio start`, governed unless BENCH_PROFILE_UNGOVERNED=1, on
 * the store (BENCH_GATEWAY_STORE), for JSON chat completions at an even BENCH_RATE (default 300/s) and then
 * in the closed loop (50 connections), and the thin proxy (plain `node`) at the same even rate,
 * each for BENCH_SECONDS (default 8) after a warm-up. Prints the busy self time per request (µs) by
 * package / source file and by function, those that grow most at the even rate first.
 *   node --import tsx bench/investigations/gateway/even-rate-profile.ts
 *   BENCH_PROFILE_UNGOVERNED=1   Studio without a budget or rate limits (as in profile.ts): run it
 *                                beside a governed run to see what governance costs at that rate
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedLoop } from '../../gateway/closed-loop.ts';
import { openLoop } from '../../gateway/open-loop.ts';
import { spawnReady, spawnThinProxy } from '../../gateway/processes.ts';
import { chatRequestBody } from '../../gateway/settings.ts';
import { studioStoreFromEnv, withStudioTarget } from '../../gateway/studio.ts';
import { positiveFromEnv, switchFromEnv } from '../../lib/env.ts';
import { profileWhile } from '../../lib/profile-while.ts';
import { selfTimes } from './cpuprofile.ts';

const RATE = positiveFromEnv('BENCH_RATE', { integer: true }) ?? 300;
const SECONDS = positiveFromEnv('BENCH_SECONDS') ?? 8;
const TOP = positiveFromEnv('BENCH_TOP', { integer: true }) ?? 30;
const store = studioStoreFromEnv();
const governed = !switchFromEnv('BENCH_PROFILE_UNGOVERNED');
const log = (message: string) => process.stderr.write(`[bench:even-rate-profile] ${message}\n`);

const body = chatRequestBody('compat/bench');

interface Target {
  pid: number;
  /** Where the process writes its profile on the second SIGUSR2. */
  profile: string;
  origin: string;
  path: string;
  headers: Record<string, string>;
}

/** Self time per request (µs), by function and by place, over one load. */
interface PerRequest {
  byFunction: Map<string, number>;
  byPlace: Map<string, number>;
  requests: number;
}

const load = (target: Target, even: boolean, durationMs: number) => {
  const options = { origin: target.origin, path: target.path, headers: target.headers, body };
  return even
    ? openLoop({ ...options, rate: RATE, durationMs, valid: (status) => status === 200 }).then(
        (result) => result.total.length,
      )
    : closedLoop({ ...options, connections: 50, durationMs }).then((result) => result.ok);
};

async function profiled(target: Target, even: boolean): Promise<PerRequest> {
  const requests = await profileWhile(target.pid, target.profile, () => load(target, even, SECONDS * 1_000));
  const { byFunction, byPlace } = await selfTimes(target.profile);
  const per = (map: Map<string, number>) => new Map([...map].map(([key, us]) => [key, us / requests]));
  log(`${even ? `${RATE}/s` : 'closed loop'}: ${requests} requests profiled`);
  return { byFunction: per(byFunction), byPlace: per(byPlace), requests };
}

async function warmUp(target: Target): Promise<void> {
  await openLoop({
    origin: target.origin,
    path: target.path,
    headers: target.headers,
    body,
    rate: 500,
    durationMs: 3_000,
    valid: (status) => status === 200,
  });
  await load(target, false, 3_000);
}

let thin: PerRequest;
const mock = await spawnReady('mock upstream', ['--import', 'tsx', 'bench/gateway/mock-upstream.ts'], {});
try {
  const dir = await mkdtemp(join(tmpdir(), 'studio-bench-thin-profile-'));
  const profile = join(dir, 'thin.cpuprofile');
  const proxy = await spawnThinProxy(mock.url, {
    nodeArgs: ['--import', './bench/lib/cpu-profile-preload.mjs'],
    env: { BENCH_CPU_PROFILE: profile },
  });
  try {
    const target = {
      pid: proxy.pid!,
      profile,
      origin: proxy.url,
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
    };
    await warmUp(target);
    thin = await profiled(target, true);
  } finally {
    await proxy.stop();
    await rm(dir, { recursive: true, force: true });
  }
} finally {
  await mock.stop();
}

const [even, closed] = await withStudioTarget(
  'even-rate-profile',
  (dir) => ({
    store,
    governed,
    env: { BENCH_CPU_PROFILE: join(dir, 'studio.cpuprofile') },
    fromSources: true,
  }),
  async (studio, dir) => {
    const target = {
      pid: studio.child.pid!,
      profile: join(dir, 'studio.cpuprofile'),
      origin: studio.child.url,
      path: '/v1/ai/chat/completions',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${studio.token}` },
    };
    await warmUp(target);
    return [await profiled(target, true), await profiled(target, false)] as const;
  },
);

const sum = (map: Map<string, number>) => [...map.values()].reduce((a, b) => a + b, 0);
const us = (x: number) => x.toFixed(1);
function table(title: string, pick: (p: PerRequest) => Map<string, number>): string[] {
  const [e, c, t] = [pick(even), pick(closed), pick(thin)];
  const keys = [...new Set([...e.keys(), ...c.keys(), ...t.keys()])];
  const at = (map: Map<string, number>, key: string) => map.get(key) ?? 0;
  keys.sort((a, b) => at(e, b) - at(c, b) - (at(e, a) - at(c, a)));
  return [
    `### ${title}: µs of busy main-thread time per request`,
    '',
    `| ${title} | Studio at ${RATE}/s | Studio, closed loop | growth at the even rate | thin proxy at ${RATE}/s |`,
    '|---|---|---|---|---|',
    `| all | ${us(sum(e))} | ${us(sum(c))} | ${us(sum(e) - sum(c))} | ${us(sum(t))} |`,
    ...keys
      .slice(0, TOP)
      .map(
        (k) => `| ${k} | ${us(at(e, k))} | ${us(at(c, k))} | ${us(at(e, k) - at(c, k))} | ${us(at(t, k))} |`,
      ),
    '',
  ];
}
process.stdout.write(
  [
    `Studio (\`studio start\`, ${governed ? 'governed' : 'ungoverned'}, ${store} event store) and the thin proxy, JSON chat completions, ${SECONDS} s profiled per load`,
    '',
    ...table('place', (p) => p.byPlace),
    ...table('function', (p) => p.byFunction),
  ].join('\n'),
);
