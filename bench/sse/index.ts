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
 * appends requested at once). SQLite runs once after. Each event carries the time the server took
 * right before the append (`performance.timeOrigin + performance.now()`, the same clock in both
 * processes); every (client, event) latency is the time of the socket read that carried it minus
 * that. Every client must get every event exactly once.
 *
 * Environment:
 *   BENCH_QUICK=1              2 s of steady load, 50-event bursts, 1 repetition, no SQLite
 *   BENCH_SSE_TARGETS=a,b      memory,reference,sqlite (default all; quick: memory,reference)
 *   BENCH_REPS=N               repetitions of memory and reference (default 2, quick 1; SQLite runs once)
 *   BENCH_SSE_SUBSCRIBERS=N    the large subscriber count (default 1,000)
 *   BENCH_SSE_PROFILE=1        also profile Studio (memory) during the first large steady phase and
 *                              print the hot spots (BENCH_SSE_KEEP_PROFILE=1 keeps the .cpuprofile)
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { percentile } from '../lib/stats.ts';
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
import { formatReport, type LoadResult, type MemoryResult } from './report.ts';
import {
  BURST,
  CONNECT_WAVE,
  DRAIN_TIMEOUT_MS,
  KEEP_PROFILE,
  LARGE,
  LARGE_BURST,
  LARGE_EVENT_BYTES,
  PROFILE,
  RATE,
  REPS,
  SMALL,
  SMALL_STEADY_MS,
  STEADY_MS,
  TARGETS,
  type Target,
} from './settings.ts';

const env = process.env;

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
    const interleaved = TARGETS.filter((t) => t !== 'sqlite');
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

    if (TARGETS.includes('sqlite')) {
      const server = await start('sqlite');
      await phase(server, LARGE, [steady(STEADY_MS), burst(BURST)], 1);
      await stopAll();
    }
  } finally {
    await stopAll();
    if (profileDir && !KEEP_PROFILE) rmSync(profileDir, { recursive: true, force: true });
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
