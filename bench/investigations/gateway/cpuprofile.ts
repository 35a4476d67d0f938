/**
 * Reads a V8 `.cpuprofile` (from `node --cpu-prof`) and lists where the busy time went: self time
 * by package / source file and by function, and inclusive ("total") time by function (each sample
 * counted once per function on its stack).
 *   node --import tsx bench/investigations/gateway/cpuprofile.ts <file.cpuprofile> [top=25]
 */
import { readFile } from 'node:fs/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface Hotspot {
  name: string;
  ms: number;
  /** Of the busy (non-idle) time. */
  share: number;
}

export interface ProfileSummary {
  busyMs: number;
  idleMs: number;
  selfByPlace: Hotspot[];
  selfByFunction: Hotspot[];
  totalByFunction: Hotspot[];
}

/** Where a frame's code lives: `express`, `@scope/pkg`, `studio:shared/http/app.ts`, `node:internal`. */
export function placeOf(url: string): string {
  if (!url) return '(native, GC, V8)';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url.replace(/^node:internal\//, 'node:').split('/')[0]!;
  const ours = /\/(services|shared|projections|bench)\/(.*)$/.exec(url);
  return ours ? `studio:${ours[1]}/${ours[2]}` : url;
}

const IDLE = new Set(['(idle)']);
const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);

/** A profile read: its nodes by id, each node's parent, and the time sampled in each node itself (µs). */
async function readProfile(file: string) {
  const profile = JSON.parse(await readFile(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  return { byId, parent, self };
}

/** A function as the summaries name it: its name, where its code lives, and its line. */
function keyOf(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'} — ${placeOf(url)}${url ? `:${lineNumber + 1}` : ''}`;
}

/** Busy (non-idle) self time in µs, by function and by package / source file. */
export async function selfTimes(file: string): Promise<SelfTimes> {
  return selfTimesOf(await readProfile(file));
}

interface SelfTimes {
  byFunction: Map<string, number>;
  byPlace: Map<string, number>;
}

function selfTimesOf({ byId, self }: Awaited<ReturnType<typeof readProfile>>): SelfTimes {
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  for (const [id, us] of self) {
    const node = byId.get(id)!;
    if (IDLE.has(node.callFrame.functionName)) continue;
    add(byFunction, keyOf(node), us);
    add(byPlace, placeOf(node.callFrame.url), us);
  }
  return { byFunction, byPlace };
}

export async function summarizeProfile(file: string, top = 25): Promise<ProfileSummary> {
  const profile = await readProfile(file);
  const { byId, parent, self } = profile;
  const { byFunction, byPlace } = selfTimesOf(profile);
  let idleUs = 0;
  let busyUs = 0;
  const totalFn = new Map<string, number>();
  for (const [id, us] of self) {
    const node = byId.get(id)!;
    if (IDLE.has(node.callFrame.functionName)) {
      idleUs += us;
      continue;
    }
    busyUs += us;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const key = keyOf(byId.get(at)!);
      if (seen.has(key)) continue;
      seen.add(key);
      add(totalFn, key, us);
    }
  }
  const list = (map: Map<string, number>) =>
    [...map]
      .filter(([name]) => !name.startsWith('(root)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: us / 1000, share: busyUs > 0 ? us / busyUs : 0 }));
  return {
    busyMs: busyUs / 1000,
    idleMs: idleUs / 1000,
    selfByPlace: list(byPlace),
    selfByFunction: list(byFunction),
    totalByFunction: list(totalFn),
  };
}

export function formatSummary(summary: ProfileSummary): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(6);
  const lines = [`busy ${summary.busyMs.toFixed(0)} ms, idle ${summary.idleMs.toFixed(0)} ms`, ''];
  const section = (title: string, list: Hotspot[]) => {
    lines.push(`${title} (share of busy time):`);
    for (const h of list) lines.push(`  ${pct(h.share)}  ${h.name}`);
    lines.push('');
  };
  section('self time by package / file', summary.selfByPlace);
  section('self time by function', summary.selfByFunction);
  section('total time by function', summary.totalByFunction);
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, topArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: cpuprofile.ts <file.cpuprofile> [top]');
  process.stdout.write(formatSummary(await summarizeProfile(file, Number(topArg) || 25)));
}
