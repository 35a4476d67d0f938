/**
 * Where Studio's allocations come from on `POST /v1/ai/chat/completions`: V8's sampling heap
 * profiler, counting every object allocated during a closed loop (also those the garbage collector
 * has taken back), divided by the requests answered. What a request allocates is what the young
 * generation's collections (and GC helper threads) then cost.
 *   node --import tsx bench/investigations/gateway/heap-profile.ts
 *   BENCH_HEAP_SECONDS=N (default 5, after 5 s of warm-up)   BENCH_HEAP_STREAM=1 (streamed completions)
 *   BENCH_GATEWAY_STORE=sqlite|memory|postgres (default sqlite)   BENCH_HEAP_TOP=N (default 30)
 *   BENCH_HEAP_COUNT=all (default: every object allocated) | old (those a young-generation
 *     collection did not take back: what the old generation's collections then work on) | live
 *     (those still alive when the profile ends)
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadStudio, studioStoreFromEnv, withStudioTarget } from '../../gateway/studio.ts';
import { positiveFromEnv, switchFromEnv } from '../../lib/env.ts';
import { profileWhile } from '../../lib/profile-while.ts';
import { placeOf } from './cpuprofile.ts';

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

const seconds = positiveFromEnv('BENCH_HEAP_SECONDS') ?? 5;
const top = positiveFromEnv('BENCH_HEAP_TOP', { integer: true }) ?? 30;
const stream = switchFromEnv('BENCH_HEAP_STREAM');
const store = studioStoreFromEnv();
const COUNTS = ['all', 'old', 'live'] as const;
const count = COUNTS.find((c) => c === (process.env.BENCH_HEAP_COUNT ?? 'all'));
if (!count) throw new Error(`BENCH_HEAP_COUNT must be one of ${COUNTS.join(', ')}`);
const COUNTED: Record<(typeof COUNTS)[number], string> = {
  all: 'allocated',
  old: 'reaching the old generation',
  live: 'still alive at the end',
};

/** Bytes by place (package or source file), by function, and by function with what it calls. */
function summarize(head: HeapNode) {
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, bytes: number) =>
    map.set(key, (map.get(key) ?? 0) + bytes);
  let total = 0;
  const walk = (node: HeapNode, stack: readonly string[]) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const name = `${functionName || '(anonymous)'} — ${placeOf(url)}${url ? `:${lineNumber + 1}` : ''}`;
    total += node.selfSize;
    add(byPlace, placeOf(url), node.selfSize);
    add(byFunction, name, node.selfSize);
    const onStack = stack.includes(name) ? stack : [...stack, name];
    for (const frame of onStack) add(inclusive, frame, node.selfSize);
    for (const child of node.children) walk(child, onStack);
  };
  walk(head, []);
  return { total, byPlace, byFunction, inclusive };
}

const profileIn = (dir: string) => join(dir, 'studio.heapprofile');
const options = (dir: string) => ({
  store,
  env: { BENCH_HEAP_PROFILE: profileIn(dir), BENCH_HEAP_COUNT: count },
  governed: true,
  // The sources, so that allocations are named by file (the compiled bundle is one file).
  fromSources: true,
});
await withStudioTarget('heap', options, async (studio, dir) => {
  const profileFile = profileIn(dir);
  await loadStudio(studio, stream, 5_000);
  const pid = studio.child.pid;
  const result = await profileWhile(pid, profileFile, () => loadStudio(studio, stream, seconds * 1000));
  const { head } = JSON.parse(await readFile(profileFile, 'utf8')) as { head: HeapNode };
  const { total, byPlace, byFunction, inclusive } = summarize(head);
  const requests = Math.max(1, result.ok);
  const table = (title: string, map: Map<string, number>) => [
    `${title}:`,
    ...[...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([name, bytes]) =>
          `${((100 * bytes) / total).toFixed(1).padStart(6)}%  ${Math.round(bytes / requests)
            .toLocaleString('en-US')
            .padStart(7)} B/request  ${name}`,
      ),
    '',
  ];
  process.stdout.write(
    [
      `## Studio (${store}, governed), ${stream ? 'streamed' : 'JSON'} chat completions: ` +
        `${Math.round(total / requests).toLocaleString('en-US')} bytes ${COUNTED[count]} per request ` +
        `(${requests.toLocaleString('en-US')} requests, ${result.failed} failed)`,
      '',
      ...table('self by place', byPlace),
      ...table('self by function', byFunction),
      ...table('with what it calls, by function', inclusive),
    ].join('\n'),
  );
});
