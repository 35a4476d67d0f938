/**
 * Reads a V8 `.cpuprofile` and sums where the time went: self time per function, inclusive time of
 * the project's own functions, and self time per area (V8 internals, Node internals, packages, ours).
 *   node --import tsx bench/sse/profile.ts <file.cpuprofile>
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
}

const root = join(import.meta.dirname, '..', '..');

function place(url: string): string {
  if (url === '') return '';
  const path = url.startsWith('file://') ? url.slice('file://'.length) : url;
  if (path.startsWith('node:')) return path;
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) return path.slice(modules + 1);
  return path.startsWith(root) ? relative(root, path) : path;
}

const sources = new Map<string, string[]>();

/** The source line (trimmed, shortened) of a frame of ours, to name anonymous functions. */
function sourceLine(url: string, line: number): string {
  const path = url.slice('file://'.length);
  if (!sources.has(path)) {
    try {
      sources.set(path, readFileSync(path, 'utf8').split('\n'));
    } catch {
      sources.set(path, []);
    }
  }
  const text = sources.get(path)![line]?.trim() ?? '';
  return text.length > 70 ? `${text.slice(0, 67)}...` : text;
}

function frameKey(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = place(url);
  if (!where) return functionName || '(anonymous)';
  const name =
    functionName ||
    (url.startsWith('file://') && !where.startsWith('node_modules/')
      ? `(anonymous: ${sourceLine(url, lineNumber)})`
      : '(anonymous)');
  return `${name} ${where}:${lineNumber + 1}`;
}

function area(node: ProfileNode): string {
  const { functionName, url } = node.callFrame;
  if (url === '') return functionName.startsWith('(') ? functionName : 'V8 / native (JSON, strings, …)';
  const where = place(url);
  if (where.startsWith('node:')) return `Node ${where.split('/').slice(0, 2).join('/')}`;
  if (where.startsWith('node_modules/')) {
    const parts = where.split('/');
    return parts[1]?.startsWith('@') ? `${parts[1]}/${parts[2]}` : (parts[1] ?? where);
  }
  return `studio ${where.split('/').slice(0, 2).join('/')}`;
}

export interface ProfileSummary {
  totalMs: number;
  busyMs: number;
  self: { name: string; ms: number }[];
  inclusive: { name: string; ms: number }[];
  areas: { name: string; ms: number }[];
}

export function summarizeProfile(profile: CpuProfile, top = 15): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  // Hit counts times the mean interval: a sample's time delta also holds the gaps when the process
  // was not running (a shared machine) or the profiler was starting, which belong to no function.
  const hits = profile.nodes.reduce((sum, n) => sum + (n.hitCount ?? 0), 0) || 1;
  const intervalUs = (profile.endTime - profile.startTime) / hits;
  const selfUs = new Map<number, number>();
  for (const n of profile.nodes) if (n.hitCount) selfUs.set(n.id, n.hitCount * intervalUs);
  const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const idleUs = [...selfUs.entries()]
    .filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)')
    .reduce((sum, [, us]) => sum + us, 0);

  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    add(self, frameKey(node), us);
    add(areas, area(node), us);
  }

  // Inclusive time of our own functions: each frame counted once per stack (recursion is not double counted).
  const inclusive = new Map<string, number>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  for (const [id, us] of selfUs) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at)!;
      const where = place(node.callFrame.url);
      if (where === '' || where.startsWith('node:') || where.startsWith('node_modules/')) continue;
      const key = frameKey(node);
      if (seen.has(key)) continue;
      seen.add(key);
      add(inclusive, key, us);
    }
  }

  const list = (map: Map<string, number>, n: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, ms: us / 1000 }));
  return {
    totalMs: totalUs / 1000,
    busyMs: (totalUs - idleUs) / 1000,
    self: list(self, top),
    inclusive: list(inclusive, top),
    areas: list(areas, top),
  };
}

/** Markdown: three small tables, percentages of the busy (non-idle) time. */
export function formatProfile(summary: ProfileSummary, title: string): string {
  const pct = (ms: number) => `${((100 * ms) / (summary.busyMs || 1)).toFixed(1)} %`;
  const table = (head: string, rows: { name: string; ms: number }[]) => [
    `| ${head} | ms | share of busy |`,
    '|---|---|---|',
    ...rows.map(
      (r) =>
        `| \`${r.name.replaceAll('|', '\\|').replaceAll('`', "'")}\` | ${r.ms.toFixed(0)} | ${pct(r.ms)} |`,
    ),
    '',
  ];
  return [
    `${title}: ${summary.totalMs.toFixed(0)} ms profiled, ${summary.busyMs.toFixed(0)} ms busy (not idle).`,
    '',
    ...table('area (self time)', summary.areas.slice(0, 10)),
    ...table('function (self time)', summary.self),
    ...table('studio function (inclusive time)', summary.inclusive.slice(0, 10)),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node --import tsx bench/sse/profile.ts <file.cpuprofile>\n');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  process.stdout.write(`${formatProfile(summarizeProfile(profile, 25), file)}\n`);
}
