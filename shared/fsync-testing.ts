/** Test aid for code that must put files on disk: unit tests beside it and the suites under test/ use it. */
import { readlinkSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { relative } from 'node:path';

/**
 * Records the path, relative to `root` ('.' for `root` itself), of every file or folder synced
 * through a `FileHandle` until `stop()`; each sync still happens. Linux: paths come from /proc.
 */
export async function recordFileSyncs(root: string): Promise<{ synced: string[]; stop: () => void }> {
  const probe = await open(root, 'r');
  const prototype = Object.getPrototypeOf(probe) as { sync: (this: { fd: number }) => Promise<void> };
  await probe.close();
  const synced: string[] = [];
  const sync = prototype.sync;
  prototype.sync = function (this: { fd: number }) {
    synced.push(relative(root, readlinkSync(`/proc/self/fd/${this.fd}`)) || '.');
    return sync.call(this);
  };
  const stop = () => {
    prototype.sync = sync;
  };
  return { synced, stop };
}
