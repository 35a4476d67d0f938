/**
 * What express's change of every request's and response's prototype costs: the thin proxy's
 * forwarding served four ways (bench/investigations/gateway/prototype-proxy.mjs: plain
 * `node:http`, the same with express's two `Object.setPrototypeOf` calls, express, express with its
 * methods copied onto Node's prototypes instead), each under plain `node`, taking turns in closed
 * loops of chat completions against the mock upstream; CPU per request from /proc. Why the
 * gateway's API does not pass through express (docs/decisions.md, "HTTP").
 *   node --import tsx bench/investigations/gateway/express-prototypes.ts
 *   BENCH_REPS=N (default 6; quick 2)   BENCH_GATEWAY_SECONDS=N (default 3; quick 1.5)   BENCH_QUICK=1
 */

import { closedLoop } from '../../gateway/closed-loop.ts';
import { type Child, cpuMs, spawnReady } from '../../gateway/processes.ts';
import { chatRequestBody } from '../../gateway/settings.ts';
import { positiveFromEnv, switchFromEnv } from '../../lib/env.ts';
import { formatRate, summarize } from '../../lib/stats.ts';

const quick = switchFromEnv('BENCH_QUICK');
const reps = positiveFromEnv('BENCH_REPS', { integer: true }) ?? (quick ? 2 : 6);
const seconds = positiveFromEnv('BENCH_GATEWAY_SECONDS') ?? (quick ? 1.5 : 3);
const VARIANTS = [
  ['node', 'plain node:http'],
  ['node+proto', "plain node:http, with express's two setPrototypeOf calls"],
  ['express', 'express 5 (the thin proxy)'],
  ['express-copied', "express 5, its methods copied onto Node's prototypes, no setPrototypeOf"],
] as const;
const log = (message: string) => process.stderr.write(`[bench:express-prototypes] ${message}\n`);

const children: Child[] = [];
try {
  const mock = await spawnReady('mock upstream', ['--import', 'tsx', 'bench/gateway/mock-upstream.ts'], {});
  children.push(mock);
  const proxies: Child[] = [];
  for (const [variant] of VARIANTS) {
    const proxy = await spawnReady(variant, ['bench/investigations/gateway/prototype-proxy.mjs'], {
      UPSTREAM: mock.url,
      VARIANT: variant,
      NODE_ENV: 'production',
    });
    children.push(proxy);
    proxies.push(proxy);
  }
  const body = chatRequestBody('bench');
  const load = (proxy: Child, durationMs: number) =>
    closedLoop({
      origin: proxy.url,
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body,
      connections: 50,
      durationMs,
    });
  for (const proxy of proxies) await load(proxy, seconds * 1000); // V8 optimizes what runs often
  const cpu: number[][] = proxies.map(() => []);
  const rates: number[][] = proxies.map(() => []);
  for (let rep = 1; rep <= reps; rep++) {
    log(`repetition ${rep} of ${reps}`);
    for (const [i, proxy] of proxies.entries()) {
      const before = cpuMs(proxy.pid);
      const result = await load(proxy, seconds * 1000);
      if (result.failed > 0) throw new Error(`${proxy.name}: ${result.failed} requests failed`);
      cpu[i]!.push((cpuMs(proxy.pid) - before) / result.ok);
      rates[i]!.push((result.ok / result.ms) * 1000);
    }
  }
  const lines = [
    `Closed loops of 50 connections, ${seconds} s each, ${reps} interleaved repetitions, median (min–max); CPU of the proxy's process (/proc).`,
    '',
    '| variant | req/s | CPU ms per request |',
    '|---|---|---|',
    ...VARIANTS.map(
      ([, label], i) =>
        `| ${label} | ${formatRate(summarize(rates[i]!))} | ${formatRate(summarize(cpu[i]!))} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  for (const child of children.reverse()) await child.stop().catch(() => undefined);
}
