/** The SSE bench's results and its report: the tables and verdicts of docs/benchmarks.md. */
import { cpus, loadavg } from 'node:os';
import { median } from '../lib/stats.ts';
import {
  AIM_P99_MS,
  LARGE,
  LARGE_BURST,
  LARGE_EVENT_BYTES,
  QUICK,
  RATE,
  REPS,
  TARGET_LABEL,
  TARGETS,
  type Target,
} from './settings.ts';

export interface LoadResult {
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

export interface MemoryResult {
  store: Target;
  subscribers: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  rssPerSubKb: number;
  heapPerSubKb: number;
  connectMs: number;
}

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

export function formatReport(
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
      `${REPS > 1 ? `median (min–max) of ${REPS} repetitions, Studio and the reference interleaved; SQLite once after` : 'one run'}; ` +
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
    `³ ${LARGE_BURST} × ${LARGE_EVENT_BYTES / 1024} KB is more than \`MAX_PENDING_BYTES\` (1 MB, services/sessions/event-stream.ts) in ` +
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
