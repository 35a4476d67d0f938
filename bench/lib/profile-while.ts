import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Profiles the process `pid` while `during` runs: that process takes SIGUSR2 as profile-on-signal.mjs
 * does, writing its profile to `file`. Signals it before and after, then waits for the file.
 */
export async function profileWhile<T>(pid: number, file: string, during: () => Promise<T>): Promise<T> {
  await rm(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  await sleep(200);
  const result = await during();
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 100 && !existsSync(file); i++) await sleep(100);
  await sleep(300); // the write may still be under way
  return result;
}
