/** Child processes of the gateway benchmark, and what /proc says about them (CPU time, peak RSS). */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '../..');

/** Clock ticks per second of /proc/<pid>/stat times (100 on every Linux we run on). */
const CLK_TCK = (() => {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU time used so far by one process, in ms (10 ms resolution). */
export function cpuMs(pid: number): number {
  return cpuMsOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** CPU time (user + system) of each thread of `pid` so far, in ms, by thread id (the main thread's is `pid`). */
export function threadCpuMs(pid: number): Map<string, number> {
  const cpu = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      cpu.set(tid, cpuMsOfStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')));
    } catch {
      // the thread ended meanwhile
    }
  }
  return cpu;
}

/** User and system (kernel) CPU time used so far by one process, in ms (10 ms resolution). */
export function cpuSplitMs(pid: number): { user: number; system: number } {
  return cpuSplitOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

function cpuSplitOfStat(stat: string): { user: number; system: number } {
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: (Number(fields[11]) * 1000) / CLK_TCK, system: (Number(fields[12]) * 1000) / CLK_TCK };
}

function cpuMsOfStat(stat: string): number {
  const { user, system } = cpuSplitOfStat(stat);
  return user + system;
}

/** Resets the peak RSS (VmHWM) of a process to its current RSS. */
export function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** Peak RSS since the last reset, in MB (MiB). */
export function peakRssMb(pid: number): number {
  const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmHWM for process ${pid}`);
  return Number(match[1]) / 1024;
}

export interface Child {
  name: string;
  pid: number;
  /** What the child printed on its READY line. */
  url: string;
  /** The last few KB the child wrote, for error messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Runs `work` with the processes `pids` stopped (SIGSTOP), and continues them (SIGCONT) after it,
 * also after a failure. A server that is not being measured then does no work of its own (a timer,
 * V8 collecting its heap some seconds after its load ended) on the CPUs the measured one needs.
 */
export async function whilePaused<T>(pids: readonly number[], work: () => Promise<T>): Promise<T> {
  const paused: number[] = [];
  try {
    for (const pid of pids) {
      process.kill(pid, 'SIGSTOP');
      paused.push(pid);
    }
    return await work();
  } finally {
    for (const pid of paused) process.kill(pid, 'SIGCONT');
  }
}

/** A free TCP port on loopback (for programs that want `--port=N`). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function track(name: string, child: ChildProcess) {
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-8_192);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    child.kill('SIGCONT'); // paused by `whilePaused` when the run was interrupted: it must get to the SIGTERM
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  return { output: () => output, stop, exited, name };
}

/**
 * Spawns `node [nodeArgs] <script>` and waits for the line `READY {"url": …}` on its stdout or
 * stderr. `env` is the child's whole environment (PATH and HOME are added). With `stdoutFile`, the
 * child's stdout (its request log) goes to that file, as `npm start > studio.log` would, and not
 * through a pipe the benchmark process (also the load generator) would have to read. With `wrap`,
 * node runs under another program (valgrind), which keeps the pid.
 */
export async function spawnReady(
  name: string,
  nodeArgs: string[],
  env: Record<string, string>,
  options: { timeoutMs?: number; stdoutFile?: string; wrap?: readonly string[] } = {},
): Promise<Child> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const stdout = options.stdoutFile === undefined ? 'pipe' : openSync(options.stdoutFile, 'a');
  // `wrap`: a program that runs node (valgrind …): `wrap[0] …wrap node nodeArgs`.
  const [program, ...before] = options.wrap ?? [process.execPath];
  const args = options.wrap ? [...before, process.execPath, ...nodeArgs] : nodeArgs;
  const child = spawn(program!, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', stdout, 'pipe'],
  });
  if (typeof stdout === 'number') closeSync(stdout);
  const tracked = track(name, child);
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      void tracked.stop();
      reject(new Error(`${name} did not start within ${timeoutMs} ms: ${tracked.output()}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const match = /^READY (\{.*\})$/m.exec(seen);
      if (!match) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      resolve((JSON.parse(match[1]!) as { url: string }).url);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code ?? signal}) before it was ready: ${tracked.output()}`));
    });
  });
  return { name, pid: child.pid!, url, output: tracked.output, stop: tracked.stop };
}

/**
 * Starts the thin proxy (thin-proxy.mjs) in front of `upstream` as its users run it: plain
 * `node`, `NODE_ENV=production`. `nodeArgs` go before the script (a profiling preload); `env` adds
 * to the proxy's environment; `options` are spawnReady's.
 */
export function spawnThinProxy(
  upstream: string,
  extra: {
    nodeArgs?: readonly string[];
    env?: Record<string, string>;
    options?: Parameters<typeof spawnReady>[3];
  } = {},
): Promise<Child> {
  return spawnReady(
    'thin proxy',
    [...(extra.nodeArgs ?? []), 'bench/gateway/thin-proxy.mjs'],
    { ...extra.env, UPSTREAM: upstream, NODE_ENV: 'production' },
    extra.options,
  );
}

/**
 * Spawns a program that says nothing useful when it is ready (Portkey, nginx): waits until
 * `probe` (an HTTP URL) answers anything. `command` is node's argv unless `program` names another.
 */
export async function spawnProbed(
  name: string,
  command: string[],
  env: Record<string, string>,
  url: string,
  probe: string,
  options: { timeoutMs?: number; program?: string } = {},
): Promise<Child> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const child = spawn(options.program ?? process.execPath, command, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tracked = track(name, child);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${name} exited before it was ready: ${tracked.output()}`);
    try {
      const res = await fetch(probe, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline) {
        await tracked.stop();
        throw new Error(`${name} did not answer within ${timeoutMs} ms: ${tracked.output()}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return { name, pid: child.pid!, url, output: tracked.output, stop: tracked.stop };
}
