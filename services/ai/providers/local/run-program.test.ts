import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../../../shared/errors.ts';
import { inPrivateTempDir, runProgram } from './run-program.ts';

// runProgram against small shell scripts standing in for espeak-ng and pocketsphinx.

let dir: string;
const options = (overrides: Partial<Parameters<typeof runProgram>[2]> = {}) => ({
  timeoutMs: 10_000,
  maxOutputBytes: 1024,
  signal: new AbortController().signal,
  cwd: dir,
  env: { PATH: '/usr/bin:/bin' },
  ...overrides,
});
async function script(name: string, body: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return file;
}
async function failure(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'studio-run-program-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('runProgram', () => {
  it('passes arguments as they are, with no shell to read them', async () => {
    const echo = await script('args', 'for a in "$@"; do echo "[$a]"; done');
    expect(await runProgram(echo, ['$(id)', '; rm -rf /', '-x'], options())).toBe(
      '[$(id)]\n[; rm -rf /]\n[-x]\n',
    );
  });

  it('gives the program only the environment it is handed', async () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, expanded by the shell
    const env = await script('env', 'echo "${HOME:-no home} ${PATH}"');
    expect(await runProgram(env, [], options())).toBe('no home /usr/bin:/bin\n');
  });

  it('a failure is a 502 naming the program, with what it said on stderr', async () => {
    const fails = await script('fails', 'echo "Error: it broke" >&2; exit 3');
    const error = await failure(runProgram(fails, [], options()));
    expect(error.code).toBe('upstream_error');
    expect(error.message).toBe('fails failed: Error: it broke');
  });

  it('more output than allowed is a 502; a program past its time is killed, a 504', async () => {
    const chatty = await script('chatty', 'yes | head -c 5000');
    expect((await failure(runProgram(chatty, [], options()))).code).toBe('upstream_error');
    const slow = await script('slow', 'exec sleep 30');
    const error = await failure(runProgram(slow, [], options({ timeoutMs: 100 })));
    expect(error.code).toBe('upstream_timeout');
  });

  it('the client going away kills the program and passes its reason through', async () => {
    const slow = await script('slow2', 'exec sleep 30');
    const controller = new AbortController();
    const run = runProgram(slow, [], options({ signal: controller.signal }));
    controller.abort(new Error('client gone'));
    await expect(run).rejects.toThrow('client gone');
  });
});

describe('inPrivateTempDir', () => {
  it('is private to its owner and removed afterwards, whether the work succeeds or fails', async () => {
    const dirs: string[] = [];
    await inPrivateTempDir(async (d) => {
      dirs.push(d);
      expect((await stat(d)).mode & 0o777).toBe(0o700);
      await writeFile(join(d, 'x'), 'x');
    });
    await expect(
      inPrivateTempDir(async (d) => {
        dirs.push(d);
        throw new Error('work failed');
      }),
    ).rejects.toThrow('work failed');
    expect(dirs).toHaveLength(2);
    for (const d of dirs) expect(existsSync(d)).toBe(false);
  });
});
