/** The gateway bench's report: its tables and the aims it checks, as docs/benchmarks.md shows them. */
import { cpus, totalmem } from 'node:os';
import { paired, round3, type Summary, summarize } from '../lib/stats.ts';
import type { Samples, Target, TargetKey } from './settings.ts';
import { CONNECTIONS, EVEN_RATE, HEAP_GROWTH_FLAGS, LABELS, TITLE, UNLOADED_RATE } from './settings.ts';

/**
 * The aims for Studio in this run (docs/benchmarks.md, "How we measure, and the aims"), measured on
 * Studio with a hard budget and rate limits set, as `studio start` (`studio-governed`) and as
 * `studio gateway start` (`gateway-governed`) side by side (plain `studio` when neither ran),
 * against the thin proxy of the same run.
 */
const AIM = {
  timesThin: 0.75,
  cpuTimesThin: 1.3,
  /** At the even rate of `evenRateFor`. */
  p99VsThinMs: 3,
  /** At an even UNLOADED_RATE. */
  p50VsThinMs: 0.5,
  rssMb: 150,
  chunkTransitAddedMs: 0.5,
};

/**
 * Studio against Studio one change apart, each a line of the report when both ran: `opening` says
 * what differs, up to its parenthesis.
 */
const COMPARISONS: readonly { key: TargetKey; base: TargetKey; opening: string }[] = [
  {
    key: 'studio-governed',
    base: 'studio',
    opening: 'A hard budget and rate limits set (Studio with both against Studio with none',
  },
  {
    key: 'studio-governed',
    base: 'gateway-governed',
    opening:
      'The agent runtime in the same process (`studio start` against `studio gateway start`, both governed',
  },
  {
    key: 'studio-governed',
    base: 'studio-limited',
    opening: 'A hard budget on top of the rate limits (Studio with both against Studio with the limits alone',
  },
  {
    key: 'studio-routed',
    base: 'studio',
    opening:
      'A fallback route whose first target answers (Studio called with the route against Studio called with the model',
  },
  {
    key: 'studio-governed-unsynced',
    base: 'studio-governed',
    opening:
      'SQLite commits not synced (`STUDIO_SQLITE_SYNCHRONOUS=normal` against the default `full`, both governed',
  },
  {
    key: 'studio-governed-heap-growth',
    base: 'studio-governed',
    opening: `The old generation grown by 1.5× (\`${HEAP_GROWTH_FLAGS}\` against V8's default, both governed`,
  },
];

/** Studio targets that get an aims table of their own when they ran, after the governed ones'. */
const ONE_TARGET_AIMS: readonly { key: TargetKey; heading: string }[] = [
  {
    key: 'studio-governed-memory',
    heading:
      "**The same aims for Studio's own code** (budget and limits set, on the memory store: no embedded " +
      'store; its RSS holds the whole log, so the RSS row says nothing), in this run:',
  },
  {
    key: 'studio-limited',
    heading:
      '**The same aims for Studio with the rate limits alone** (no hard budget: no reservation appended ' +
      'before the upstream call), in this run:',
  },
];

/** The aims table's column for each Studio target it may show. */
const COLUMN: Partial<Record<TargetKey, string>> = {
  studio: '`studio start`, no budget or limits',
  'studio-governed': '`studio start`',
  'gateway-governed': '`studio gateway start` alone',
  'studio-governed-memory': '`studio start`, memory store',
  'studio-limited': '`studio start`, rate limits alone',
};

interface AimRow {
  aim: string;
  measured: string;
  met: string;
}

export interface ReportInput {
  targets: Target[];
  samples: Map<TargetKey, Samples>;
  reps: number;
  seconds: number;
  openMs: number;
  /** Sent at each open loop's rate before its timed requests, untimed. */
  openWarmUpMs: number;
  store: string;
  versions: { express: string; undici: string; autocannon: string };
  date: Date;
  loadAtStart: number;
  loadAtEnd: number;
  elapsedS: number;
  quick: boolean;
  /** The even rate of the p99 aim (`evenRateFor`), and the thin proxy's closed-loop JSON rate it came from. */
  evenRate: number;
  thinClosedLoop: number | undefined;
}

/** `1.23` or `1.23 (1.10–1.40)` */
function fmt(summary: Summary | undefined, unit = ''): string {
  if (!summary || Number.isNaN(summary.median)) return '–';
  const v = (x: number) => `${round3(x)}${unit}`;
  return summary.runs === 1 || summary.min === summary.max
    ? v(summary.median)
    : `${v(summary.median)} (${v(summary.min)}–${v(summary.max)})`;
}

/** Signed: `+0.42 ms` */
function fmtAdded(summary: Summary | undefined): string {
  if (!summary || Number.isNaN(summary.median)) return '–';
  const v = (x: number) => `${x >= 0 ? '+' : '−'}${round3(Math.abs(x))}`;
  return summary.runs === 1 || summary.min === summary.max
    ? `${v(summary.median)}`
    : `${v(summary.median)} (${v(summary.min)} to ${v(summary.max)})`;
}

const minus = (x: number, y: number) => x - y;
const ratio = (x: number, y: number) => x / y;

export function report(input: ReportInput): string {
  const { targets, samples } = input;
  const s = (key: TargetKey) => samples.get(key);
  const ran = (key: TargetKey) => targets.some((t) => t.key === key && !t.notRun);
  const direct = s('direct')!;
  const even = input.evenRate.toLocaleString('en-US');
  const twiceEven = (EVEN_RATE * 2).toLocaleString('en-US');
  /** Its closed-loop JSON maximum in this run, when the even rate of the p99 aim is more than half of it. */
  const saturated = (key: TargetKey): number | undefined => {
    const max = summarize(s(key)?.rps.json ?? [])?.median;
    return max !== undefined && max < input.evenRate * 2 ? max : undefined;
  };
  /** The even rate the p99 aim was measured at, and why that one. */
  const evenRateText =
    input.thinClosedLoop === undefined
      ? `${even} req/s`
      : input.evenRate === EVEN_RATE
        ? `${even} req/s (the thin proxy served ${round3(input.thinClosedLoop)} req/s in the closed loop: at least ${twiceEven})`
        : `${even} req/s (half the ${round3(input.thinClosedLoop)} req/s the thin proxy served in the closed loop: under ${twiceEven})`;
  const saturation = (key: TargetKey) => {
    const max = saturated(key);
    return max === undefined ? '' : ' ¹';
  };
  const cpu = cpus();
  const out: string[] = [TITLE, ''];
  out.push(
    `${input.date.toISOString().slice(0, 10)}, ${cpu.length} × ${cpu[0]?.model.trim() ?? 'CPU'}, ` +
      `${round3(totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average ${loadavgText(input)}. ` +
      `${input.quick ? '**QUICK smoke run.** ' : ''}` +
      `${input.reps} interleaved repetition${input.reps > 1 ? 's' : ''}, median (min–max). ` +
      `express ${input.versions.express}, undici ${input.versions.undici}, autocannon ${input.versions.autocannon}. ` +
      'Studio: bench/gateway/studio-launcher.ts compiled as `npm run build:server` compiles the server, configured by loadConfig(env) and started ' +
      'as `studio start` starts it (startGateway, provisionLocalToken, then startRuntime on the gateway’s log, the runtime on a port of its own) ' +
      'or, for the target so named, as `studio gateway start` (startGateway alone); ' +
      `${input.store} event store, request log at its default level (info) into a file, ` +
      'NODE_ENV=production, model `compat/bench` (openai-compatible provider) → mock. ' +
      `Run took ${Math.round(input.elapsedS)} s.`,
    '',
    `Closed loop: autocannon, ${CONNECTIONS} connections, ${input.seconds} s per target and mode. ` +
      'CPU ms per request: utime+stime of the server process (/proc/<pid>/stat) over requests answered; ' +
      'for direct, the mock’s own. Peak RSS: VmHWM after `clear_refs` = 5, over both closed-loop runs.',
    '',
    '| target | req/s JSON | req/s stream | CPU ms/req JSON | CPU ms/req stream | peak RSS MB |',
    '|---|---|---|---|---|---|',
  );
  for (const t of targets) {
    if (t.notRun) {
      out.push(`| ${t.label} | not run (${t.notRun.replaceAll('|', '/')}) | | | | |`);
      continue;
    }
    const x = s(t.key)!;
    out.push(
      `| ${t.label} | ${fmt(summarize(x.rps.json))} | ${fmt(summarize(x.rps.stream))} | ` +
        `${fmt(summarize(x.cpu.json))} | ${fmt(summarize(x.cpu.stream))} | ${fmt(summarize(x.rss))}${t.key === 'direct' ? ' (mock)' : ''} |`,
    );
  }

  out.push(
    '',
    `Open loop: requests evenly spaced at ${UNLOADED_RATE}/s for ${input.openMs / 1000} s (unloaded), ` +
      `after ${input.openWarmUpMs / 1000} s at the same rate untimed, ` +
      'each timed from its scheduled send time; ms. "added" = the target’s minus direct’s, per repetition. ' +
      `Last column: JSON at the p99 aim’s even rate, ${evenRateText}.`,
    '',
    `| target | JSON p50 / p99 | added p50 / p99 | stream first chunk p50 / p99 | added first chunk p50 / p99 | stream last chunk p50 / p99 | added last chunk p50 / p99 | ${even}/s JSON p50 / p99 |`,
    '|---|---|---|---|---|---|---|---|',
  );
  for (const t of targets) {
    if (t.notRun) continue;
    const x = s(t.key)!;
    const isDirect = t.key === 'direct';
    const pair = (a: number[], b: number[]) => (isDirect ? '–' : fmtAdded(paired(a, b, minus)));
    out.push(
      `| ${t.label} | ${fmt(summarize(x.json.p50))} / ${fmt(summarize(x.json.p99))} ` +
        `| ${pair(x.json.p50, direct.json.p50)} / ${pair(x.json.p99, direct.json.p99)} ` +
        `| ${fmt(summarize(x.first.p50))} / ${fmt(summarize(x.first.p99))} ` +
        `| ${pair(x.first.p50, direct.first.p50)} / ${pair(x.first.p99, direct.first.p99)} ` +
        `| ${fmt(summarize(x.last.p50))} / ${fmt(summarize(x.last.p99))} ` +
        `| ${pair(x.last.p50, direct.last.p50)} / ${pair(x.last.p99, direct.last.p99)} ` +
        `| ${x.even.p50.length ? `${fmt(summarize(x.even.p50))} / ${fmt(summarize(x.even.p99))}${saturation(t.key)}` : '– (above its capacity)'} |`,
    );
  }

  const over = targets.filter((t) => !t.notRun && t.key !== 'portkey' && saturated(t.key) !== undefined);
  if (over.length > 0) {
    out.push(
      '',
      `¹ ${even} req/s is more than half of what it served at most in the closed loop of this run ` +
        `(${over.map((t) => `${t.label}: ${round3(saturated(t.key)!)} req/s`).join('; ')}): ` +
        'these figures mostly measure queueing on the shared cores, not the added latency of an unloaded path.',
    );
  }

  out.push(
    ...chunkTransit(),
    ...holdingCost(),
    ...COMPARISONS.flatMap(({ key, base, opening }) => against(key, base, opening)),
  );

  const errors = targets.flatMap((t) => (s(t.key)?.errors ?? []).map((e) => `${t.label}: ${e}`));
  if (errors.length > 0) out.push('', 'Errors during the run:', ...errors.map((e) => `- ${e}`));

  out.push('', ...aims(), '');
  for (const { key, heading } of ONE_TARGET_AIMS) if (ran(key)) out.push(...aimsTable([key], heading), '');
  return out.join('\n');

  /** How long streamed chunks take from the mock's write to the client, and what each proxy adds to that. */
  function chunkTransit(): string[] {
    const rows = targets.filter((t) => !t.notRun && (s(t.key)?.transitFirst.p50.length ?? 0) > 0);
    if (rows.length === 0) return [];
    const lines = [
      '',
      `Streamed chunks at ${UNLOADED_RATE}/s: ms from the mock writing a chunk (each is stamped) to its arrival at the client; ` +
        '"slowest" is the slowest chunk of each answer. Against direct, this is what the proxy adds to a chunk on its way, ' +
        'its handling of the request excluded.',
      '',
      '| target | first chunk p50 / p99 | added p50 / p99 | slowest chunk p50 / p99 | added p50 / p99 |',
      '|---|---|---|---|---|',
    ];
    for (const t of rows) {
      const x = s(t.key)!;
      const pair = (a: number[], b: number[]) => (t.key === 'direct' ? '–' : fmtAdded(paired(a, b, minus)));
      lines.push(
        `| ${t.label} | ${fmt(summarize(x.transitFirst.p50))} / ${fmt(summarize(x.transitFirst.p99))} ` +
          `| ${pair(x.transitFirst.p50, direct.transitFirst.p50)} / ${pair(x.transitFirst.p99, direct.transitFirst.p99)} ` +
          `| ${fmt(summarize(x.transitMax.p50))} / ${fmt(summarize(x.transitMax.p99))} ` +
          `| ${pair(x.transitMax.p50, direct.transitMax.p50)} / ${pair(x.transitMax.p99, direct.transitMax.p99)} |`,
      );
    }
    return lines;
  }

  /** Studio against itself with answers not held for their usage event: what holding them costs. */
  function holdingCost(): string[] {
    if (!ran('studio') || !ran('studio-unheld')) return [];
    const held = s('studio')!;
    const unheld = s('studio-unheld')!;
    const times = (a: number[], b: number[]) => `${fmt(paired(a, b, ratio))}×`;
    const plus = (a: number[], b: number[]) => `${fmtAdded(paired(a, b, minus))} ms`;
    return [
      '',
      'Holding each answer until its usage event is durable (Studio against Studio with answers not held, ' +
        `same run, per repetition): req/s ${times(held.rps.json, unheld.rps.json)} (JSON), ` +
        `${times(held.rps.stream, unheld.rps.stream)} (stream); at ${UNLOADED_RATE}/s p50 / p99 ` +
        `${plus(held.json.p50, unheld.json.p50)} / ${plus(held.json.p99, unheld.json.p99)} (JSON), last chunk ` +
        `${plus(held.last.p50, unheld.last.p50)} / ${plus(held.last.p99, unheld.last.p99)} (stream); ` +
        `at ${even}/s p50 / p99 ${plus(held.even.p50, unheld.even.p50)} / ` +
        `${plus(held.even.p99, unheld.even.p99)} (JSON).`,
    ];
  }

  /** `key` against `base`, same run, per repetition; `opening` says what differs, up to its parenthesis. */
  function against(key: TargetKey, base: TargetKey, opening: string): string[] {
    if (!ran(base) || !ran(key)) return [];
    const none = s(base)!;
    const other = s(key)!;
    const times = (a: number[], b: number[]) => `${fmt(paired(a, b, ratio))}×`;
    const plus = (a: number[], b: number[]) => `${fmtAdded(paired(a, b, minus))} ms`;
    return [
      '',
      `${opening}, same run, per repetition): req/s ${times(other.rps.json, none.rps.json)} (JSON), ` +
        `${times(other.rps.stream, none.rps.stream)} (stream); at ${UNLOADED_RATE}/s p50 / p99 ` +
        `${plus(other.json.p50, none.json.p50)} / ${plus(other.json.p99, none.json.p99)} (JSON), first chunk ` +
        `${plus(other.first.p50, none.first.p50)} / ${plus(other.first.p99, none.first.p99)} (stream); ` +
        `at ${even}/s p50 / p99 ${plus(other.even.p50, none.even.p50)} / ` +
        `${plus(other.even.p99, none.even.p99)} (JSON); CPU per request ${times(other.cpu.json, none.cpu.json)} ` +
        `(JSON), ${times(other.cpu.stream, none.cpu.stream)} (stream); peak RSS ${times(other.rss, none.rss)}.`,
    ];
  }

  function aims(): string[] {
    const governed = (['studio-governed', 'gateway-governed'] as const).filter(ran);
    if (governed.length > 0)
      return aimsTable(
        governed,
        `**Aims** for Studio with a hard budget and rate limits set (${input.store} event store, request log at its ` +
          'default level), as users start it and as the gateway alone, against the thin proxy of this run:',
      );
    if (ran('studio'))
      return aimsTable(
        ['studio'],
        '**Aims** for Studio (no budget or limits: studio-governed and gateway-governed did not run), in this run:',
      );
    return ['Aims: not checked (Studio did not run).'];
  }

  /** The aims' table under `heading`: a figure and a verdict for each Studio target of `keys`, side by side. */
  function aimsTable(keys: readonly TargetKey[], heading: string): string[] {
    const columns = keys.map(aimRows);
    return [
      heading,
      '',
      `| aim | ${keys.map((key) => `${COLUMN[key] ?? LABELS[key]} | met`).join(' | ')} |`,
      `|---|${keys.map(() => '---|---|').join('')}`,
      ...columns[0]!.map(
        (row, i) => `| ${row.aim} | ${columns.map((c) => `${c[i]!.measured} | ${c[i]!.met}`).join(' | ')} |`,
      ),
    ];
  }

  /** The aims, in order, as the Studio target `key` did in this run. */
  function aimRows(key: TargetKey): AimRow[] {
    const st = s(key)!;
    const thin = ran('thin') ? s('thin') : undefined;
    const rows: AimRow[] = [];
    const verdict = (v: Summary | undefined, ok: (x: number) => boolean) =>
      !v
        ? 'not measured'
        : ok(v.median)
          ? ok(v.min) && ok(v.max)
            ? 'yes'
            : 'yes (median; not every run)'
          : 'no';
    const row = (aim: string, v: Summary | undefined, text: string, ok: (x: number) => boolean) =>
      rows.push({ aim, measured: v ? text : '–', met: verdict(v, ok) });
    if (thin) {
      for (const mode of ['json', 'stream'] as const) {
        const name = mode === 'json' ? 'JSON' : 'stream';
        const rps = paired(st.rps[mode], thin.rps[mode], ratio);
        row(
          `closed-loop req/s ≥ ${AIM.timesThin}× the thin proxy’s (${name})`,
          rps,
          `${fmt(rps)}×`,
          (x) => x >= AIM.timesThin,
        );
        const cpu = paired(st.cpu[mode], thin.cpu[mode], ratio);
        row(
          `CPU per request ≤ ${AIM.cpuTimesThin}× the thin proxy’s (${name})`,
          cpu,
          `${fmt(cpu)}× (${fmt(summarize(st.cpu[mode]))} against ${fmt(summarize(thin.cpu[mode]))} ms)`,
          (x) => x <= AIM.cpuTimesThin,
        );
      }
      const p50 = paired(st.json.p50, thin.json.p50, minus);
      row(
        `even ${UNLOADED_RATE} req/s: p50 within ${AIM.p50VsThinMs} ms of the thin proxy’s (JSON)`,
        p50,
        `${fmtAdded(p50)} ms (${fmt(summarize(st.json.p50))} against ${fmt(summarize(thin.json.p50))})`,
        (x) => x <= AIM.p50VsThinMs,
      );
      const p99 = paired(st.even.p99, thin.even.p99, minus);
      row(
        `even ${evenRateText}: p99 within ${AIM.p99VsThinMs} ms of the thin proxy’s (JSON)`,
        p99,
        `${fmtAdded(p99)} ms (${fmt(summarize(st.even.p99))} against ${fmt(summarize(thin.even.p99))})` +
          (saturated(key) === undefined
            ? ''
            : `; more than half of the ${round3(saturated(key)!)} req/s it served at most`),
        (x) => x <= AIM.p99VsThinMs,
      );
    } else rows.push({ aim: 'against the thin proxy', measured: 'the thin proxy did not run', met: '–' });
    const rss = summarize(st.rss);
    row(`peak RSS under load ≤ ${AIM.rssMb} MB`, rss, `${fmt(rss)} MB`, (x) => x <= AIM.rssMb);
    rows.push({
      aim: 'RSS flat over 10 minutes',
      measured: 'bench/gateway/soak.ts (its own section)',
      met: '–',
    });
    const first = paired(st.transitFirst.p50, direct.transitFirst.p50, minus);
    row(
      `a stream’s first chunk leaves within ${AIM.chunkTransitAddedMs} ms of its arrival (added transit, p50)`,
      first,
      `${fmtAdded(first)} ms`,
      (x) => x <= AIM.chunkTransitAddedMs,
    );
    const slowest = paired(st.transitMax.p50, direct.transitMax.p50, minus);
    row(
      `no chunk held: the slowest chunk of an answer within ${AIM.chunkTransitAddedMs} ms too (added transit, p50)`,
      slowest,
      `${fmtAdded(slowest)} ms`,
      (x) => x <= AIM.chunkTransitAddedMs,
    );
    return rows;
  }
}

function loadavgText(input: ReportInput): string {
  return `${round3(input.loadAtStart)} at start, ${round3(input.loadAtEnd)} at end`;
}
