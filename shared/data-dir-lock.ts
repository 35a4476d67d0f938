import { createHash } from 'node:crypto';
import { realpath, rm } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { ensurePrivateDir } from './private-dir.ts';

export class DataDirInUse extends Error {
  override readonly name = 'DataDirInUse';
}

export interface DataDirLock {
  release(): Promise<void>;
}

/** Where the lock of a data dir listens: a name the kernel forgets when its holder dies, where one exists. */
export function lockAddress(
  realDataDir: string,
  platform: NodeJS.Platform,
): { path: string; isFile: boolean } {
  const name = `studio-${createHash('sha256').update(realDataDir).digest('hex').slice(0, 32)}`;
  if (platform === 'linux') return { path: `\0${name}`, isFile: false }; // abstract unix socket
  if (platform === 'win32') return { path: `\\\\.\\pipe\\${name}`, isFile: false };
  return { path: join(realDataDir, 'studio.sock'), isFile: true };
}

/** The pid file earlier versions locked with; it means nothing now. */
const LEGACY_PID_FILE = 'studio.lock';
/** How long a live holder may take to say its pid before the message goes without it. */
const HOLDER_ANSWER_MS = 1_000;
/**
 * A process killed a moment ago may still be closing its sockets (its other threads exiting):
 * the lock is then neither free nor answering. Retried for up to about two seconds.
 */
const DYING_PAUSE_MS = 50;
const MAX_ATTEMPTS = 40;

/**
 * One process at a time may open an embedded (SQLite) data directory: the log has one writer.
 * The lock is a listening socket, not a pid file: the kernel closes it the moment its holder dies
 * (a zombie not yet reaped holds nothing), and a pid reused by another process means nothing to it.
 * Whoever connects to it is told the holder's pid.
 */
export async function lockDataDir(
  dataDir: string,
  platform: NodeJS.Platform = process.platform,
): Promise<DataDirLock> {
  await ensurePrivateDir(dataDir);
  const realDataDir = await realpath(dataDir);
  const address = lockAddress(realDataDir, platform);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const server = await listenUnlessTaken(address.path);
    if (server) {
      await rm(join(realDataDir, LEGACY_PID_FILE), { force: true });
      return { release: () => new Promise<void>((resolve) => server.close(() => resolve())) };
    }
    const holder = await askHolder(address.path);
    if (holder === 'dead') {
      // A socket file its dead holder left behind (an abstract name or a pipe is already free).
      if (address.isFile) await rm(address.path, { force: true });
      continue;
    }
    if (holder === 'dying') {
      await new Promise((resolve) => setTimeout(resolve, DYING_PAUSE_MS));
      continue;
    }
    const who = holder.pid ? `process ${holder.pid}` : 'another process';
    throw new DataDirInUse(
      `${dataDir} is in use by ${who}; stop it first (only one process may open an embedded store)`,
    );
  }
  throw new DataDirInUse(`could not lock ${dataDir}`);
}

async function listenUnlessTaken(path: string): Promise<Server | undefined> {
  const server = createServer((socket) => {
    socket.on('error', () => {});
    socket.end(`${process.pid}\n`);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') return undefined;
    throw error;
  }
  server.on('error', () => {});
  server.unref(); // the lock must not keep the process alive
  return server;
}

type Holder = { pid?: number } | 'dead' | 'dying';

/**
 * A live holder accepts the connection and says its pid; a dead one's address refuses it; one whose
 * sockets are being closed right now resets it.
 */
function askHolder(path: string): Promise<Holder> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = connect(path);
    const done = (result: Holder) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done({}), HOLDER_ANSWER_MS);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => {
      const pid = Number(answer.trim());
      done(Number.isInteger(pid) && pid > 0 ? { pid } : {});
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? '';
      if (['ECONNREFUSED', 'ENOENT'].includes(code)) done('dead');
      else if (['ECONNRESET', 'EPIPE'].includes(code)) done('dying');
      // EAGAIN: its backlog is full, it is alive and busy.
      else if (code === 'EAGAIN') done({});
      else {
        clearTimeout(timer);
        reject(error);
      }
    });
  });
}
