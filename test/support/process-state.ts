import { readFile } from 'node:fs/promises';

/** Linux's one-letter state of a process from /proc (`Z`: a zombie, dead but not reaped); undefined once gone. */
export async function processState(pid: number): Promise<string | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  // The command name in parentheses may hold spaces; the state follows the last `)`.
  return stat?.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}
