import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ApiError } from '../../../../shared/errors.ts';
import { upstreamMessage } from '../../upstream.ts';

export interface RunOptions {
  /** Killed (SIGKILL) past this: 504 `upstream_timeout`. */
  timeoutMs: number;
  /** The most bytes it may write on stdout or on stderr; past that it is killed (502). */
  maxOutputBytes: number;
  /** The client went away: the program is killed. */
  signal: AbortSignal;
  cwd: string;
  /** The whole environment the program gets. */
  env: NodeJS.ProcessEnv;
}

/**
 * Runs a program at an absolute path with an argument list (no shell, so nothing in an argument is
 * ever interpreted), and answers its stdout. A failure is a 502 carrying the program's stderr
 * (one line, at most 300 characters); a timeout a 504; the client's disconnect passes through.
 */
export function runProgram(file: string, args: readonly string[], options: RunOptions): Promise<string> {
  const name = basename(file);
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      {
        cwd: options.cwd,
        env: options.env,
        timeout: options.timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: options.maxOutputBytes,
        signal: options.signal,
        windowsHide: true,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        if (options.signal.aborted) return reject(options.signal.reason ?? error);
        const failure = error as NodeJS.ErrnoException & { killed?: boolean };
        if (failure.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') {
          return reject(
            new ApiError('upstream_error', `${name} wrote more than ${options.maxOutputBytes} bytes`),
          );
        }
        if (failure.killed) {
          return reject(
            new ApiError('upstream_timeout', `${name} did not finish within ${options.timeoutMs / 1000} s`),
          );
        }
        const said = upstreamMessage(stderr, []);
        reject(new ApiError('upstream_error', `${name} failed${said ? `: ${said}` : ''}`));
      },
    );
  });
}

/** Runs `work` in a new directory only this user can read (mkdtemp: 0700), removed afterwards. */
export async function inPrivateTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'studio-local-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
