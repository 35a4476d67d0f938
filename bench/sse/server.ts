/**
 * The server side of the SSE fan-out benchmark, run as a child of bench/sse/index.ts so
 * its RSS and CPU can be read from /proc/<pid> and the SSE clients do not share its event loop.
 *
 * Starts the gateway and the runtime (session routes on) on one event store, issues a user token
 * through the admin API, prints `{"url": <runtime url>, "pid": ...}` as one JSON line on stdout, and
 * then takes commands over IPC (`process.send`): see `Command` in ./protocol.ts.
 *
 * Environment: BENCH_SSE_STORE=memory|sqlite (default memory). Run it with `--expose-gc` so `mem`
 * can collect garbage before it measures.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { findSourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { startGateway } from '../../services/gateway/gateway.ts';
import { startRuntime } from '../../services/runtime/runtime.ts';
import { sessionStreamId } from '../../services/sessions/session.ts';
import { loadConfig } from '../../shared/config.ts';
import { type EventStore, isCaughtUp } from '../../shared/event-store/types.ts';
import { createLogger } from '../../shared/logger.ts';
import {
  type AppendReport,
  type Command,
  type Mark,
  now,
  type Ready,
  STAMP_PREFIX,
  type Stamp,
} from './protocol.ts';

/** Reads the stamp of a benchmark event (by its data), or undefined for any other event. */
function stampOf(data: unknown): Stamp | undefined {
  const system = (data as { system?: unknown } | null)?.system;
  return typeof system === 'string' && system.startsWith(STAMP_PREFIX)
    ? (JSON.parse(system) as Stamp)
    : undefined;
}

/**
 * The store the runtime sees: the gateway's own, with times noted for each benchmark event: when
 * `append` is called, and, on a stream subscription (the SSE hub's), when the hub has handed it to
 * every listener (every client's `res.write`) and the next tick after that (the sockets' corked
 * writes have been issued by then). The hub queues the events of a page and schedules their
 * delivery with `setImmediate` before it asks for the next page; an immediate queued at that
 * request runs right after the delivery. Live, a page holds the one event just appended.
 */
function timedStore(
  events: EventStore,
  mark: (stamp: Stamp, what: Mark, at: number) => void,
  onRevision: (streamId: string, revision: number) => void,
): EventStore {
  const append: EventStore['append'] = (streamId, batch, options) => {
    const at = now();
    for (const event of batch) {
      const stamp = stampOf(event.data);
      if (stamp) mark(stamp, 'appendAt', at);
    }
    return events.append(streamId, batch, options).then((result) => {
      onRevision(streamId, result.nextExpectedRevision);
      return result;
    });
  };
  const subscribePages: EventStore['subscribePages'] = (options) => {
    const inner = events.subscribePages(options);
    if (options.streamId === undefined) return inner;
    return {
      [Symbol.asyncIterator]() {
        const it = inner[Symbol.asyncIterator]();
        // The stamps of the page handed on last: the hub has delivered all of it once it asks for more.
        let last: Stamp[] = [];
        return {
          async next() {
            if (last.length > 0) {
              const stamps = last;
              last = [];
              setImmediate(() => {
                for (const stamp of stamps) mark(stamp, 'handedAt', now());
                // Queued after the sockets' uncork ticks (`connectionCorkNT`) of the delivery's writes: runs right after them.
                process.nextTick(() => {
                  for (const stamp of stamps) mark(stamp, 'flushedAt', now());
                });
              });
            }
            const page = await it.next();
            if (!page.done && !isCaughtUp(page.value))
              last = page.value.events.flatMap((event) => stampOf(event.data) ?? []);
            return page;
          },
          async return(value?: unknown) {
            return (await it.return?.(value)) ?? { done: true, value: undefined };
          },
        };
      },
    };
  };
  return new Proxy(events, {
    get(target, property) {
      if (property === 'append') return append;
      if (property === 'subscribePages') return subscribePages;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function main(): Promise<void> {
  const storeKind = process.env.BENCH_SSE_STORE === 'sqlite' ? 'sqlite' : 'memory';
  const dataDir = await mkdtemp(join(tmpdir(), `studio-bench-sse-${storeKind}-`));
  const adminKey = `adm_${randomBytes(32).toString('base64url')}`;
  const config = loadConfig({
    STUDIO_EVENT_STORE: storeKind,
    STUDIO_DATA_DIR: dataDir,
    ADMIN_SECRET_KEY: adminKey,
    STUDIO_MASTER_KEY: randomBytes(32).toString('hex'),
    STUDIO_GATEWAY_HOST: '127.0.0.1',
    STUDIO_GATEWAY_PORT: '0',
    STUDIO_RUNTIME_HOST: '127.0.0.1',
    STUDIO_RUNTIME_PORT: '0',
    // Every subscriber of the bench comes from this one machine.
    STUDIO_MAX_STREAMS_PER_CLIENT: '100000',
    LOG_LEVEL: 'silent',
  });
  const logger = createLogger('silent');
  const gw = await startGateway({ config, logger, processEnv: {} });

  const admin = async (path: string, body: unknown) => {
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status >= 300) throw new Error(`${path} → ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  await admin('/v1/studios/create', { name: 'SSE bench', studio_id: 'ssebench' });
  const token = String((await admin('/v1/studios/tokens/apply', { studio_id: 'ssebench' })).user_token);

  const marks = new Map<string, Record<Mark, number[]>>();
  const lastRevision = new Map<string, number>();
  const events = timedStore(
    gw.ctx.events,
    (stamp, what, at) => {
      let times = marks.get(stamp.tag);
      if (!times) {
        times = { appendAt: [], handedAt: [], flushedAt: [] };
        marks.set(stamp.tag, times);
      }
      times[what][stamp.seq] = at;
    },
    (streamId, revision) => lastRevision.set(streamId, Math.max(revision, lastRevision.get(streamId) ?? -1)),
  );
  const runtime = await startRuntime({
    config,
    logger,
    gatewayUrl: gw.url,
    token,
    store: { events, checkpoints: gw.ctx.checkpoints },
    processEnv: {},
    plugins: [],
    sdkRoutes: true,
  });

  const reply = (message: object) => process.send?.(message);
  let profiler: Session | undefined;

  /** Appends `count` events at an even rate (open loop: each at its scheduled time, not after the last). */
  const append = async (
    sessionId: string,
    tag: string,
    count: number,
    intervalMs: number,
    padBytes: number,
  ) => {
    const pad = padBytes > 0 ? 'x'.repeat(padBytes) : undefined;
    const errors: string[] = [];
    const pending: Promise<unknown>[] = [];
    let timerLagMaxMs = 0;
    const start = now() + 5;
    const fire = (seq: number, sched: number) => {
      const sentAt = now();
      timerLagMaxMs = Math.max(timerLagMaxMs, sentAt - sched);
      const stamp: Stamp = { bench: 1, tag, seq, sched, sentAt, ...(pad ? { pad } : {}) };
      pending.push(
        runtime.sessions
          .handle(sessionId, { type: 'UpdateSystem', system: JSON.stringify(stamp) })
          .catch((error: unknown) => errors.push(error instanceof Error ? error.message : String(error))),
      );
    };
    if (intervalMs <= 0) {
      // A burst: every append requested at once; they run one after another under the session's lock.
      for (let seq = 0; seq < count; seq++) fire(seq, start);
    } else {
      for (let seq = 0; seq < count; seq++) {
        const sched = start + seq * intervalMs;
        const wait = sched - now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        fire(seq, sched);
      }
    }
    await Promise.all(pending);
    const report: AppendReport = {
      errors,
      lastRevision: lastRevision.get(sessionStreamId(sessionId)) ?? -1,
      timerLagMaxMs,
    };
    return report;
  };

  process.on('message', (message: Command) => {
    void (async () => {
      try {
        switch (message.cmd) {
          case 'now':
            reply({ id: message.id, now: now() });
            break;
          case 'marks': {
            const times = marks.get(message.tag) ?? { appendAt: [], handedAt: [], flushedAt: [] };
            marks.delete(message.tag);
            reply({ id: message.id, ...times });
            break;
          }
          case 'mem': {
            const gc = (globalThis as { gc?: () => void }).gc;
            gc?.();
            gc?.();
            reply({ id: message.id, ...process.memoryUsage(), gc: gc !== undefined });
            break;
          }
          case 'append':
            reply({
              id: message.id,
              ...(await append(
                message.sessionId,
                message.tag,
                message.count,
                message.intervalMs,
                message.padBytes ?? 0,
              )),
            });
            break;
          case 'profile-start':
            profiler ??= new Session();
            profiler.connect();
            await profiler.post('Profiler.enable');
            await profiler.post('Profiler.setSamplingInterval', { interval: message.intervalUs });
            await profiler.post('Profiler.start');
            reply({ id: message.id });
            break;
          case 'profile-stop': {
            if (!profiler) throw new Error('the profiler was not started');
            const { profile } = await profiler.post('Profiler.stop');
            // tsx compiles each file onto a few lines: point the frames back at the TypeScript source.
            for (const node of profile.nodes) {
              const frame = node.callFrame;
              if (!frame.url.startsWith('file://') || frame.url.includes('/node_modules/')) continue;
              const entry = findSourceMap(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber);
              if (entry && 'originalLine' in entry) {
                frame.lineNumber = entry.originalLine;
                frame.columnNumber = entry.originalColumn;
              }
            }
            profiler.disconnect();
            profiler = undefined;
            await writeFile(message.file, JSON.stringify(profile));
            reply({ id: message.id, file: message.file });
            break;
          }
          case 'heap-snapshot':
            reply({ id: message.id, file: writeHeapSnapshot(message.file) });
            break;
          case 'stop':
            await runtime.close();
            await gw.close();
            await rm(dataDir, { recursive: true, force: true });
            reply({ id: message.id });
            setImmediate(() => process.exit(0));
            break;
        }
      } catch (error) {
        reply({
          id: message.id,
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        });
      }
    })();
  });
  // The parent went away: do not linger.
  process.on('disconnect', () => {
    void runtime
      .close()
      .then(() => gw.close())
      .finally(() => rm(dataDir, { recursive: true, force: true }).finally(() => process.exit(0)));
  });

  const ready: Ready = { url: runtime.url, gateway: gw.url, pid: process.pid, store: storeKind };
  process.stdout.write(`${JSON.stringify(ready)}\n`);
  reply({ id: 0, ...ready });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `[bench:sse:server] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
