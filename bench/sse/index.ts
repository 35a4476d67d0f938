/**
 * SSE fan-out: many subscribers on one session while events are appended.
 *   node --import tsx bench/sse/index.ts          (BENCH_QUICK=1 for a short run)
 *
 * Studio (gateway + runtime, bench/sse/server.ts) runs in a child process, so that its RSS and CPU
 * can be read from /proc/<pid> and the SSE clients (all in this process, node:http +
 * eventsource-parser) do not share its event loop. Beside it, in the same run and interleaved with
 * it, a bare node:http SSE server (bench/sse/reference.ts): about the least Node can do.
 *
 * Per repetition: 100 subscribers on a fresh session (Studio only): connect, catch up, memory per
 * subscriber, 20 events/s; then 1,000 subscribers on a fresh session: the same, then a burst (100
 * appends requested at once). PGlite runs once after. Each event carries the time the server took
 * right before the append (`performance.timeOrigin + performance.now()`, the same clock in both
 * processes); every (client, event) latency is the time of the socket read that carried it minus
 * that. Every client must get every event exactly once.
 *
 * Environment:
 *   BENCH_QUICK=1              2 s of steady load, 50-event bursts, 1 repetition, no PGlite
 *   BENCH_SSE_TARGETS=a,b      memory,reference,pglite (default all; quick: memory,reference)
 *   BENCH_REPS=N               repetitions of memory and reference (default 2, quick 1; PGlite runs once)
 *   BENCH_SSE_SUBSCRIBERS=N    the large subscriber count (default 1,000)
 *   BENCH_SSE_PROFILE=1        also profile Studio (memory) during the first large steady phase and
 *                              print the hot spots (BENCH_SSE_KEEP_PROFILE=1 keeps the .cpuprofile)
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { positiveFromEnv } from '../lib/env.ts';
import { formatProfile, summarizeProfile } from './profile.ts';
import {
  type AppendReport,
  type Command,
  type Marks,
  type MemReport,
  now,
  type Ready,
  STAMP_PREFIX,
  type Stamp,
} from './protocol.ts';

const env = process.env;
const QUICK = env.BENCH_QUICK === '1';
const LARGE = positiveFromEnv('BENCH_SSE_SUBSCRIBERS', { integer: true }) ?? 1_000;
const SMALL = 100;
const RATE = 20;
const STEADY_MS = QUICK ? 2_000 : 10_000;
/** The 100-subscriber comparison row needs fewer events for a steady p99 (100 per client is 10,000 samples). */
const SMALL_STEADY_MS = QUICK ? 2_000 : 5_000;
const BURST = QUICK ? 50 : 100;
/** A burst of large events (e.g. big message parts): more than the 1 MB a client may have pending, in total. */
const LARGE_BURST = 50;
const LARGE_EVENT_BYTES = 32 * 1024;
const REPS = positiveFromEnv('BENCH_REPS', { integer: true }) ?? (QUICK ? 1 : 2);
type Target = Ready['store'];
const TARGETS = (env.BENCH_SSE_TARGETS ?? (QUICK ? 'memory,reference' : 'memory,reference,pglite'))
  .split(',')
  .map((s) => s.trim())
  .filter((s): s is Target => s === 'memory' || s === 'pglite' || s === 'reference');
const TARGET_LABEL: Record<Target, string> = {
  memory: 'Studio, memory store',
  pglite: 'Studio, PGlite store',
  reference: 'bare node:http (reference)',
};
const PROFILE = env.BENCH_SSE_PROFILE === '1';
const AIM_P99_MS = 50;
/** Connections opened at once (the listen backlog is 511). */
const CONNECT_WAVE = 100;
/** How long the last event may take to reach every client before the run counts what is missing. */
const DRAIN_TIMEOUT_MS = 20_000;

const root = join(import.meta.dirname, '..', '..');
const log = (message: string) => process.stderr.write(`[bench:sse] ${message}\n`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// The server child

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface ProcStats {
  rssKb: number;
  hwmKb: number;
  /** utime + stime of every thread, ms. */
  cpuMs: number;
  /** Time the main thread (the event loop) was runnable but waited for a CPU, ms (/proc/<pid>/schedstat). */
  runWaitMs: number;
}

/** Run-queue wait of a process's main thread, ms. */
function runWaitMs(pid: number | 'self'): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

class ServerChild {
  #pending = new Map<number, (message: Record<string, unknown>) => void>();
  #nextId = 1;
  /** Server clock minus ours (ms), estimated over IPC; subtracted from server times. */
  offsetMs = 0;
  offsetRttMs = 0;

  private constructor(
    readonly child: ChildProcess,
    readonly ready: Ready,
  ) {
    child.on('message', (message: Record<string, unknown>) => {
      const id = Number(message.id);
      const resolve = this.#pending.get(id);
      this.#pending.delete(id);
      resolve?.(message);
    });
    child.on('exit', (code, signal) => {
      for (const resolve of this.#pending.values())
        resolve({ error: `the server exited (${code ?? signal}) before it answered` });
      this.#pending.clear();
    });
  }

  static start(store: Target): Promise<ServerChild> {
    const script = store === 'reference' ? 'reference.ts' : 'server.ts';
    const child = spawn(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', join(import.meta.dirname, script)],
      {
        cwd: root,
        env: { ...env, BENCH_SSE_STORE: store, NODE_OPTIONS: '' },
        stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
      },
    );
    child.stdout?.resume();
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) =>
        reject(new Error(`the server exited (${code}) before it was ready`));
      child.once('exit', onExit);
      child.once('message', (message: Ready & { id: number }) => {
        child.off('exit', onExit);
        resolve(new ServerChild(child, message));
      });
    });
  }

  get pid(): number {
    return this.ready.pid;
  }

  async request<T>(
    command: Command extends infer C ? (C extends Command ? Omit<C, 'id'> : never) : never,
  ): Promise<T> {
    const id = this.#nextId++;
    const answer = await new Promise<Record<string, unknown>>((resolve) => {
      this.#pending.set(id, resolve);
      this.child.send({ ...command, id });
    });
    if (typeof answer.error === 'string') throw new Error(`server: ${answer.error}`);
    return answer as T;
  }

  /** The two clocks should agree (same machine); measured anyway, from the round trip with the least delay. */
  async calibrate(rounds = 30): Promise<void> {
    let best = Number.POSITIVE_INFINITY;
    for (let i = 0; i < rounds; i++) {
      const t0 = now();
      const { now: theirs } = await this.request<{ now: number }>({ cmd: 'now' });
      const t1 = now();
      if (t1 - t0 < best) {
        best = t1 - t0;
        this.offsetMs = theirs - (t0 + t1) / 2;
      }
    }
    this.offsetRttMs = best;
  }

  proc(): ProcStats {
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
    const stat = readFileSync(`/proc/${this.pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return {
      rssKb: kb('VmRSS'),
      hwmKb: kb('VmHWM'),
      cpuMs: (ticks * 1000) / CLK_TCK,
      runWaitMs: runWaitMs(this.pid),
    };
  }

  /** Resets VmHWM to the current RSS, so the next read gives the peak of what follows. */
  resetPeak(): void {
    try {
      writeFileSync(`/proc/${this.pid}/clear_refs`, '5');
    } catch {
      // Not allowed here: VmHWM is then the peak since start.
    }
  }

  async memory(): Promise<{ mem: MemReport; proc: ProcStats }> {
    const mem = await this.request<MemReport>({ cmd: 'mem' });
    return { mem, proc: this.proc() };
  }

  async stop(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    await Promise.race([this.request({ cmd: 'stop' }).catch(() => undefined), sleep(10_000)]);
    await Promise.race([exited, sleep(5_000)]);
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

// ---------------------------------------------------------------------------------------------
// SSE clients

interface Client {
  req: http.ClientRequest;
  /** Time of the socket read that carried each benchmark event, and its `data:` line. */
  times: number[];
  datas: string[];
  /** Highest `id:` seen. */
  lastId: number;
  /** Time of the chunk being parsed. */
  readAt: number;
  ended: boolean;
  error: string | undefined;
}

function connect(url: string, agent: http.Agent): Promise<Client> {
  return new Promise((resolve, reject) => {
    const client: Client = {
      req: undefined as unknown as http.ClientRequest,
      times: [],
      datas: [],
      lastId: -1,
      readAt: 0,
      ended: false,
      error: undefined,
    };
    const parser = createParser({
      onEvent(event) {
        if (event.id !== undefined) client.lastId = Math.max(client.lastId, Number(event.id));
        // Decoded after the run: the hot path only notes the time and keeps the text.
        if (event.event === 'SystemUpdated') {
          client.times.push(client.readAt);
          client.datas.push(event.data);
        }
      },
    });
    client.req = http.get(url, { agent, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`GET ${url} → ${res.statusCode}`));
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        client.readAt = now();
        parser.feed(chunk);
      });
      res.on('end', () => (client.ended = true));
      res.on('error', (error) => {
        client.ended = true;
        client.error = error.message;
      });
      resolve(client);
    });
    client.req.on('error', (error) => {
      client.ended = true;
      client.error = error.message;
      reject(error);
    });
  });
}

async function connectAll(url: string, n: number, agent: http.Agent): Promise<Client[]> {
  const clients: Client[] = [];
  for (let i = 0; i < n; i += CONNECT_WAVE) {
    const wave = Math.min(CONNECT_WAVE, n - i);
    clients.push(...(await Promise.all(Array.from({ length: wave }, () => connect(url, agent)))));
  }
  return clients;
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) return false;
    await sleep(2);
  }
  return true;
}

async function api(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
  return json;
}

// ---------------------------------------------------------------------------------------------
// One measurement

interface LoadResult {
  store: Target;
  subscribers: number;
  load: string;
  /** Events appended in the load. */
  events: number;
  expected: number;
  delivered: number;
  duplicates: number;
  missing: number;
  outOfOrder: number;
  disconnected: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** p99 from the store's `append` call (excludes waiting for the session lock: matters in a burst). */
  p99FromAppend: number;
  /** Per event, append → the server has issued the write to every socket (the server's share of the latency). */
  flushedP50: number;
  flushedP99: number;
  /** Append of the first event to receipt of the last one by the last client. */
  spanMs: number;
  serverCpuPct: number;
  cpuUsPerDelivery: number;
  /** Share of the phase the server's event loop was ready to run but waited for a CPU (a shared machine). */
  serverWaitPct: number;
  clientWaitPct: number;
  peakRssMb: number;
  timerLagMaxMs: number;
  appendErrors: number;
}

interface MemoryResult {
  store: Target;
  subscribers: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  rssPerSubKb: number;
  heapPerSubKb: number;
  connectMs: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function decode(data: string): { stamp: Stamp; revision: number } | undefined {
  const view = JSON.parse(data) as { data?: { system?: unknown }; revision: number };
  const system = view.data?.system;
  if (typeof system !== 'string' || !system.startsWith(STAMP_PREFIX)) return undefined;
  return { stamp: JSON.parse(system) as Stamp, revision: view.revision };
}

/** Appends `count` events (evenly at `intervalMs`, or all at once when 0) and collects what every client got. */
async function runLoad(
  server: ServerChild,
  clients: Client[],
  sessionId: string,
  tag: string,
  count: number,
  intervalMs: number,
  padBytes = 0,
): Promise<Omit<LoadResult, 'store' | 'subscribers' | 'load' | 'events'>> {
  for (const c of clients) {
    c.times.length = 0;
    c.datas.length = 0;
  }
  server.resetPeak();
  const before = server.proc();
  const wallStart = performance.now();
  const clientWaitStart = runWaitMs('self');
  const report = await server.request<AppendReport & { id: number }>({
    cmd: 'append',
    sessionId,
    tag,
    count,
    intervalMs,
    padBytes,
  });
  await waitUntil(() => clients.every((c) => c.lastId >= report.lastRevision || c.ended), DRAIN_TIMEOUT_MS);
  const wallMs = performance.now() - wallStart;
  const after = server.proc();
  const clientWaitMs = runWaitMs('self') - clientWaitStart;
  const marks = await server.request<Marks>({ cmd: 'marks', tag });

  const latencies = new Float64Array(clients.length * count);
  const fromAppend = new Float64Array(clients.length * count);
  let n = 0;
  let duplicates = 0;
  let outOfOrder = 0;
  let firstSent = Number.POSITIVE_INFINITY;
  let lastReceived = 0;
  const seen = new Uint8Array(count);
  const sentAt = new Float64Array(count).fill(Number.NaN);
  for (const c of clients) {
    seen.fill(0);
    let lastRevision = -1;
    for (let i = 0; i < c.datas.length; i++) {
      const decoded = decode(c.datas[i]!);
      if (!decoded || decoded.stamp.tag !== tag) continue;
      const { stamp, revision } = decoded;
      if (revision <= lastRevision) outOfOrder++;
      lastRevision = revision;
      if (seen[stamp.seq]) {
        duplicates++;
        continue;
      }
      seen[stamp.seq] = 1;
      const received = c.times[i]! + server.offsetMs;
      latencies[n] = received - stamp.sentAt;
      fromAppend[n] = received - (marks.appendAt[stamp.seq] ?? stamp.sentAt);
      sentAt[stamp.seq] = stamp.sentAt;
      n++;
      firstSent = Math.min(firstSent, stamp.sentAt);
      lastReceived = Math.max(lastReceived, received);
    }
    c.times.length = 0;
    c.datas.length = 0;
  }
  const sorted = latencies.subarray(0, n).sort();
  const sortedFromAppend = fromAppend.subarray(0, n).sort();
  const flushed = Float64Array.from(sentAt, (t, seq) => (marks.flushedAt[seq] ?? Number.NaN) - t)
    .filter(Number.isFinite)
    .sort();
  const cpuMs = after.cpuMs - before.cpuMs;
  return {
    flushedP50: percentile(flushed, 50),
    flushedP99: percentile(flushed, 99),
    expected: clients.length * count,
    delivered: n,
    duplicates,
    missing: clients.length * count - n,
    outOfOrder,
    disconnected: clients.filter((c) => c.ended).length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[n - 1] ?? Number.NaN,
    p99FromAppend: percentile(sortedFromAppend, 99),
    spanMs: lastReceived - firstSent,
    serverCpuPct: (100 * cpuMs) / wallMs,
    serverWaitPct: (100 * (after.runWaitMs - before.runWaitMs)) / wallMs,
    clientWaitPct: (100 * clientWaitMs) / wallMs,
    cpuUsPerDelivery: n > 0 ? (1000 * cpuMs) / n : Number.NaN,
    peakRssMb: after.hwmKb / 1024,
    timerLagMaxMs: report.timerLagMaxMs,
    appendErrors: report.errors.length,
  };
}

/** One subscriber count on a fresh session: connect, measure memory, then each load in turn. */
async function runPhase(
  server: ServerChild,
  subscribers: number,
  loads: { name: string; count: number; intervalMs: number; padBytes?: number; profile?: string }[],
  rep: number,
): Promise<{ memory: MemoryResult; loads: LoadResult[] }> {
  const { url, store } = server.ready;
  const session = await api(url, 'POST', '/api/sdk/sessions', { title: `sse bench ${subscribers}` });
  const sessionId = String(session.id);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

  await server.memory();
  await sleep(200);
  const before = await server.memory();
  const connectStart = performance.now();
  const clients = await connectAll(`${url}/api/sdk/sessions/${sessionId}/events`, subscribers, agent);
  // Every client is listening once its headers came; one marker event proves each one is live.
  const sync = await server.request<AppendReport>({
    cmd: 'append',
    sessionId,
    tag: `sync-${rep}-${subscribers}`,
    count: 1,
    intervalMs: 0,
  });
  const synced = await waitUntil(() => clients.every((c) => c.lastId >= sync.lastRevision), DRAIN_TIMEOUT_MS);
  if (!synced) throw new Error(`${subscribers} clients: not all caught up within ${DRAIN_TIMEOUT_MS} ms`);
  const connectMs = performance.now() - connectStart;
  const after = await server.memory();
  const heapBefore = before.mem.heapUsed + before.mem.external;
  const heapAfter = after.mem.heapUsed + after.mem.external;
  const memory: MemoryResult = {
    store,
    subscribers,
    rssBeforeMb: before.proc.rssKb / 1024,
    rssAfterMb: after.proc.rssKb / 1024,
    rssPerSubKb: (after.proc.rssKb - before.proc.rssKb) / subscribers,
    heapPerSubKb: (heapAfter - heapBefore) / 1024 / subscribers,
    connectMs,
  };
  log(
    `${store} rep ${rep} ${subscribers} subscribers: connected and caught up in ${connectMs.toFixed(0)} ms, ` +
      `RSS ${memory.rssBeforeMb.toFixed(1)} → ${memory.rssAfterMb.toFixed(1)} MB ` +
      `(${memory.rssPerSubKb.toFixed(1)} KB/subscriber, heap+external ${memory.heapPerSubKb.toFixed(1)} KB)`,
  );

  const results: LoadResult[] = [];
  for (const load of loads) {
    if (load.profile) await server.request({ cmd: 'profile-start', intervalUs: 500 });
    const tag = `${load.name}-${rep}-${subscribers}`;
    const result = {
      store,
      subscribers,
      load: load.name,
      events: load.count,
      ...(await runLoad(server, clients, sessionId, tag, load.count, load.intervalMs, load.padBytes)),
    };
    if (load.profile) await server.request({ cmd: 'profile-stop', file: load.profile });
    results.push(result);
    log(
      `  ${load.name}: ${result.delivered}/${result.expected} delivered (dup ${result.duplicates}, ` +
        `out of order ${result.outOfOrder}, cut off ${result.disconnected}), p50 ${result.p50.toFixed(2)} p90 ${result.p90.toFixed(2)} ` +
        `p99 ${result.p99.toFixed(2)} max ${result.max.toFixed(2)} ms; p99 from append() ${result.p99FromAppend.toFixed(2)} ms; ` +
        `server wrote every socket p50 ${result.flushedP50.toFixed(2)} p99 ${result.flushedP99.toFixed(2)} ms; ` +
        `server CPU ${result.serverCpuPct.toFixed(0)} % (${result.cpuUsPerDelivery.toFixed(1)} µs/delivery), ` +
        `waiting for a CPU: server ${result.serverWaitPct.toFixed(0)} %, client ${result.clientWaitPct.toFixed(0)} %, ` +
        `peak RSS ${result.peakRssMb.toFixed(0)} MB, timer lag max ${result.timerLagMaxMs.toFixed(1)} ms`,
    );
  }

  for (const c of clients) c.req.destroy();
  agent.destroy();
  await sleep(500); // the server notices the closed sockets and drops the listeners
  return { memory, loads: results };
}

// ---------------------------------------------------------------------------------------------
// Report

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** `median (min–max)` over repetitions, or the one value. */
function cell(values: number[], digits: number): string {
  const f = (v: number) => (Number.isFinite(v) ? v.toFixed(digits) : '–');
  if (values.length === 1) return f(values[0]!);
  return `${f(median(values))} (${f(Math.min(...values))}–${f(Math.max(...values))})`;
}

function loadLabel(r: LoadResult): string {
  const times = `× ${r.subscribers.toLocaleString('en-US')}`;
  if (r.load === 'steady') return `${RATE}/s for ${r.events / RATE} s (${r.events} events ${times})`;
  if (r.load === 'burst-large')
    return `burst: ${r.events} appends of ${LARGE_EVENT_BYTES / 1024} KB at once (${times}) ³`;
  return `burst: ${r.events} appends at once (${times})`;
}

const LOAD_ORDER = ['steady', 'burst', 'burst-large'];

function groupBy<T>(items: T[], key: (item: T) => string): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return [...groups.values()];
}

function formatReport(
  memories: MemoryResult[],
  loads: LoadResult[],
  meta: { offsets: string[]; profiles: string[]; clientCpuPct: number },
): string {
  const sorted = [...loads].sort(
    (a, b) =>
      LOAD_ORDER.indexOf(a.load) - LOAD_ORDER.indexOf(b.load) ||
      a.subscribers - b.subscribers ||
      TARGETS.indexOf(a.store) - TARGETS.indexOf(b.store),
  );
  const out = [
    '## SSE fan-out',
    '',
    `\`${QUICK ? 'BENCH_QUICK=1 ' : ''}node --import tsx bench/sse/index.ts\`: Studio (gateway + runtime, ` +
      'bench/sse/server.ts) in a child process, and beside it a bare node:http SSE server that serializes each event once ' +
      'and writes it to every response (bench/sse/reference.ts); the SSE clients (node:http, eventsource-parser) in the ' +
      "parent; a fresh session per subscriber count; latency = the client's socket read − the time taken in the server " +
      'right before the append (one clock). ' +
      `${machine()}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}; ` +
      `${REPS > 1 ? `median (min–max) of ${REPS} repetitions, Studio and the reference interleaved; PGlite once after` : 'one run'}; ` +
      'counts are totals.',
    '',
    '| target | subscribers | load | delivered / expected | dup / missing / out of order / connections cut | p50 ms | p90 ms | p99 ms | max ms | server done writing, p50 / p99 ms ¹ | first append → last delivery | server CPU, % of a core | server CPU per delivery µs | waited for a CPU, server / client ² | server peak RSS MB |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const rs of groupBy(sorted, (r) => `${r.store}|${r.subscribers}|${r.load}`)) {
    const r = rs[0]!;
    const sum = (f: (x: LoadResult) => number) =>
      rs.reduce((total, x) => total + f(x), 0).toLocaleString('en-US');
    const c = (f: (x: LoadResult) => number, digits: number) => cell(rs.map(f), digits);
    out.push(
      [
        '',
        TARGET_LABEL[r.store],
        r.subscribers.toLocaleString('en-US'),
        loadLabel(r),
        `${sum((x) => x.delivered)} / ${sum((x) => x.expected)}`,
        [
          sum((x) => x.duplicates),
          sum((x) => x.missing),
          sum((x) => x.outOfOrder),
          sum((x) => x.disconnected),
        ].join(' / '),
        c((x) => x.p50, 1),
        c((x) => x.p90, 1),
        `**${c((x) => x.p99, 1)}**`,
        c((x) => x.max, 0),
        `${c((x) => x.flushedP50, 1)} / ${c((x) => x.flushedP99, 1)}`,
        `${c((x) => x.spanMs / 1000, 2)} s`,
        c((x) => x.serverCpuPct, 0),
        c((x) => x.cpuUsPerDelivery, 1),
        `${c((x) => x.serverWaitPct, 0)} % / ${c((x) => x.clientWaitPct, 0)} %`,
        c((x) => x.peakRssMb, 0),
        '',
      ]
        .join(' | ')
        .trim(),
    );
  }
  out.push(
    '',
    '¹ per event, from the append until the server has issued its write to the last socket (the SSE hub handed the event to ' +
      "every listener and Node's corked socket writes went out): the server's share of the latency; the rest is the kernel and " +
      'the client process.',
    '² share of the phase the main thread (event loop) of the server / of the client process was ready to run but waited for ' +
      'a CPU (`/proc/<pid>/schedstat`): how much the machine was shared with other work.',
    `³ ${LARGE_BURST} × ${LARGE_EVENT_BYTES / 1024} KB is more than \`MAX_PENDING_BYTES\` (1 MB, services/sessions/sse.ts) in ` +
      'total: a client gets what is pending in one write, and the guard judges its backlog only after that write was offered ' +
      'to the socket, so clients that read at full speed are not cut off (a cut client here would not reconnect; ' +
      '`RemoteAgent` would, and resume).',
    '',
    '| target | subscribers | server RSS before → after connecting, MB | RSS per subscriber | JS heap + external per subscriber | connect + catch up |',
    '|---|---|---|---|---|---|',
  );
  const memSorted = [...memories].sort(
    (a, b) => a.subscribers - b.subscribers || TARGETS.indexOf(a.store) - TARGETS.indexOf(b.store),
  );
  for (const ms of groupBy(memSorted, (m) => `${m.store}|${m.subscribers}`)) {
    const m = ms[0]!;
    const c = (f: (x: MemoryResult) => number, digits: number) => cell(ms.map(f), digits);
    out.push(
      `| ${TARGET_LABEL[m.store]} | ${m.subscribers.toLocaleString('en-US')} | ${c((x) => x.rssBeforeMb, 0)} → ${c((x) => x.rssAfterMb, 0)} | ` +
        `${c((x) => x.rssPerSubKb, 1)} KB | ${c((x) => x.heapPerSubKb, 1)} KB | ${c((x) => x.connectMs, 0)} ms |`,
    );
  }
  const rowsOf = (store: Target, load: string, subscribers = LARGE) =>
    loads.filter((r) => r.store === store && r.load === load && r.subscribers === subscribers);
  const verdict = (store: Target) => {
    const rows = rowsOf(store, 'steady');
    if (rows.length === 0 || store === 'reference') return undefined;
    const worst = Math.max(...rows.map((r) => r.p99));
    return `${TARGET_LABEL[store]}: **${worst <= AIM_P99_MS ? 'met' : 'not met'}** (worst p99 ${worst.toFixed(1)} ms)`;
  };
  const ratio = (f: (r: LoadResult) => number) => {
    const studio = rowsOf('memory', 'steady');
    const reference = rowsOf('reference', 'steady');
    if (studio.length === 0 || reference.length === 0) return '–';
    return `${(median(studio.map(f)) / median(reference.map(f))).toFixed(1)}×`;
  };
  const memRatio = () => {
    const of = (store: Target) =>
      memories.filter((m) => m.store === store && m.subscribers === LARGE).map((m) => m.heapPerSubKb);
    const studio = of('memory');
    const reference = of('reference');
    return studio.length && reference.length ? `${(median(studio) / median(reference)).toFixed(1)}×` : '–';
  };
  const waited = median(rowsOf('memory', 'steady').map((r) => r.serverWaitPct));
  const fanOutMs = (store: Target) => {
    const rows = rowsOf(store, 'steady');
    return rows.length
      ? `${((median(rows.map((r) => r.cpuUsPerDelivery)) * LARGE) / 1000).toFixed(1)} ms`
      : '–';
  };
  const allOnce = sorted.every(
    (r) => r.delivered === r.expected && r.duplicates === 0 && r.outOfOrder === 0 && r.disconnected === 0,
  );
  out.push(
    '',
    `Aim: p99 ≤ ${AIM_P99_MS} ms with ${LARGE.toLocaleString('en-US')} subscribers at ${RATE} events/s — ` +
      `${TARGETS.map(verdict).filter(Boolean).join('; ')}. ` +
      `Studio (memory store) against the bare reference, ${LARGE.toLocaleString('en-US')} subscribers, steady, same run: ` +
      `p50 ${ratio((r) => r.p50)}, p99 ${ratio((r) => r.p99)}, server CPU per delivery ${ratio((r) => r.cpuUsPerDelivery)}, ` +
      `JS heap per subscriber ${memRatio()}. ` +
      `Server CPU to fan one event out to ${LARGE.toLocaleString('en-US')} subscribers (CPU per delivery × subscribers; ` +
      `about the latency of the last subscriber on an idle core): Studio ${fanOutMs('memory')}, reference ${fanOutMs('reference')}. ` +
      (waited > 10
        ? `**The machine was busy during this run** (Studio's event loop waited for a CPU ${waited.toFixed(0)} % of the ` +
          'steady phase): the latencies above measure that contention as much as the servers; compare CPU per delivery. '
        : '') +
      `Every client got every event exactly once and in order, and no connection was cut, in every row: **${allOnce ? 'yes' : 'no'}**. ` +
      `Clock offset server − client from the fastest IPC round trip: ${meta.offsets.join(', ')}. ` +
      `The client process used ${meta.clientCpuPct.toFixed(0)} % of a core over the run.`,
    '',
  );
  for (const p of meta.profiles) out.push(p, '');
  return out.join('\n');
}

function machine(): string {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  return `${cpus().length} vCPU (${cpu}), load average ${loadavg()[0]!.toFixed(1)} at the end`;
}

// ---------------------------------------------------------------------------------------------

type LoadSpec = Parameters<typeof runPhase>[2][number];
const steady = (ms: number): LoadSpec => ({
  name: 'steady',
  count: (RATE * ms) / 1000,
  intervalMs: 1000 / RATE,
});
const burst = (count: number): LoadSpec => ({ name: 'burst', count, intervalMs: 0 });
const burstLarge: LoadSpec = {
  name: 'burst-large',
  count: LARGE_BURST,
  intervalMs: 0,
  padBytes: LARGE_EVENT_BYTES,
};

export async function runSseBench(): Promise<string> {
  const memories: MemoryResult[] = [];
  const loads: LoadResult[] = [];
  const offsets: string[] = [];
  const profiles: string[] = [];
  const profileDir = PROFILE ? mkdtempSync(join(tmpdir(), 'studio-bench-sse-prof-')) : undefined;
  const cpuStart = process.cpuUsage();
  const wallStart = performance.now();
  const servers: ServerChild[] = [];

  const start = async (target: Target) => {
    log(`${target}: starting the server`);
    const server = await ServerChild.start(target);
    servers.push(server);
    await server.calibrate();
    offsets.push(
      `${target} ${server.offsetMs.toFixed(2)} ms (round trip ${server.offsetRttMs.toFixed(2)} ms)`,
    );
    log(`${target}: ${server.ready.url}, pid ${server.pid}, clock offset ${server.offsetMs.toFixed(3)} ms`);
    // Warm-up (not reported): JIT, first allocations, the first tail of the SSE hub.
    await runPhase(server, SMALL, [{ name: 'warmup', count: 20, intervalMs: 10 }], 0);
    return server;
  };
  const phase = async (server: ServerChild, subscribers: number, specs: LoadSpec[], rep: number) => {
    const result = await runPhase(server, subscribers, specs, rep);
    memories.push(result.memory);
    loads.push(...result.loads);
  };
  const stopAll = async () => {
    for (const server of servers.splice(0)) await server.stop();
  };

  try {
    // Studio on the memory store and the reference: both up, phases interleaved (A B A B).
    const interleaved = TARGETS.filter((t) => t !== 'pglite');
    const up: [Target, ServerChild][] = [];
    for (const target of interleaved) up.push([target, await start(target)]);
    for (let rep = 1; rep <= REPS; rep++) {
      for (const [target, server] of up) {
        const profile =
          PROFILE && rep === 1 && target === 'memory'
            ? join(profileDir!, `memory-${LARGE}-steady.cpuprofile`)
            : undefined;
        if (target === 'memory')
          await phase(server, SMALL, [steady(SMALL_STEADY_MS), ...(rep === 1 ? [burstLarge] : [])], rep);
        await phase(
          server,
          LARGE,
          [{ ...steady(STEADY_MS), ...(profile ? { profile } : {}) }, burst(BURST)],
          rep,
        );
        if (profile) {
          const text = formatProfile(
            summarizeProfile(JSON.parse(readFileSync(profile, 'utf8'))),
            `Studio server profile (memory store, ${LARGE.toLocaleString('en-US')} subscribers, ${RATE} events/s)`,
          );
          profiles.push(text);
          log(text);
        }
      }
    }
    await stopAll();

    if (TARGETS.includes('pglite')) {
      const server = await start('pglite');
      await phase(server, LARGE, [steady(STEADY_MS), burst(BURST)], 1);
      await stopAll();
    }
  } finally {
    await stopAll();
    if (profileDir && env.BENCH_SSE_KEEP_PROFILE !== '1')
      rmSync(profileDir, { recursive: true, force: true });
  }
  const cpu = process.cpuUsage(cpuStart);
  const clientCpuPct = (100 * (cpu.user + cpu.system)) / 1000 / (performance.now() - wallStart);
  return formatReport(memories, loads, { offsets, profiles, clientCpuPct });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runSseBench().then(
    (table) => process.stdout.write(`${table}\n`),
    (error: unknown) => {
      log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exitCode = 1;
    },
  );
}
