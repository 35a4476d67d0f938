import { lstat, mkdir, readlink, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ApiError } from '../errors.ts';
import { clientErrorOf } from './fs-errors.ts';

/** As many links as Linux follows in one path before ELOOP. */
const MAX_LINKS = 40;

export interface ResolveOptions {
  /** Create missing folders on the way, one at a time (a write); else a missing folder is a 404. */
  createParents?: boolean;
  /** The request field the path came from, for the error envelope. */
  param?: string;
}

const segmentsOf = (path: string) => path.split(/[\\/]/);

/** NUL bytes, absolute paths and `..` are refused before the file system is looked at. */
function checkSpelling(given: string, param: string): void {
  if (given.includes('\0'))
    throw new ApiError('validation_failed', 'the path contains a NUL byte', { param });
  if (isAbsolute(given) || /^[A-Za-z]:[\\/]/.test(given))
    throw new ApiError('validation_failed', 'the path must be relative to the workspace', { param });
  if (segmentsOf(given).includes('..'))
    throw new ApiError('validation_failed', 'the path must not contain ".."', { param });
}

/** An absolute link target as segments under the root, or undefined when it is elsewhere. */
function underRoot(target: string, roots: readonly string[]): string[] | undefined {
  const normalized = resolve(target);
  for (const root of roots) {
    const inside = relative(root, normalized);
    if (inside === '') return [];
    if (!inside.startsWith(`..${sep}`) && inside !== '..' && !isAbsolute(inside)) return segmentsOf(inside);
  }
  return undefined;
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * The real path of `given` inside the workspace, walked one component at a time from the
 * workspace's real path: every symbolic link on the way (the last component included, and a link
 * whose target does not exist yet) is read and its target walked in turn, so the answer contains no
 * link at all and lies inside the workspace, or the call is refused with 403
 * `path_outside_workspace`. Only the last component may be missing; a missing folder before it is
 * created (with `createParents`) or a 404 `not_found`.
 *
 * The caller opens the answer with O_NOFOLLOW, so a link put in place of the last component after
 * this walk is refused. What remains open: a process that can rename folders inside the workspace
 * could swap a folder already walked for a link between the walk and the open (Node has no
 * openat(2) to hold on to each folder); nothing the runtime serves creates links.
 */
export async function resolveInWorkspace(
  workspace: string,
  given: string,
  options: ResolveOptions = {},
): Promise<string> {
  const param = options.param ?? 'path';
  checkSpelling(given, param);
  const configured = resolve(workspace);
  if (options.createParents) await mkdir(configured, { recursive: true });
  const root = await realpath(configured).catch((error: unknown) => {
    if (isMissing(error)) throw new ApiError('not_found', 'the workspace does not exist', { param });
    throw error;
  });
  const outside = () =>
    new ApiError('path_outside_workspace', `${given} leads outside the workspace`, { param });
  const notFound = () => new ApiError('not_found', `no ${given} in the workspace`, { param });

  const pending = segmentsOf(given).filter((s) => s !== '' && s !== '.');
  let current = root;
  let links = 0;
  while (pending.length > 0) {
    const segment = pending.shift() as string;
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      // Only a link's target brings `..` here; `current` is a real path, so its parent is too.
      if (current === root) throw outside();
      current = dirname(current);
      continue;
    }
    const candidate = join(current, segment);
    const info = await lstat(candidate).catch((error: unknown) => {
      if (isMissing(error)) return undefined;
      throw clientErrorOf(error, given, param);
    });
    if (info?.isSymbolicLink()) {
      links += 1;
      if (links > MAX_LINKS)
        throw new ApiError('validation_failed', `${given} goes through too many symbolic links`, { param });
      const target = await readlink(candidate).catch((error: unknown) => {
        throw clientErrorOf(error, given, param);
      });
      if (isAbsolute(target)) {
        const inside = underRoot(target, [root, configured]);
        if (inside === undefined) throw outside();
        current = root;
        pending.unshift(...inside);
      } else {
        pending.unshift(...segmentsOf(target));
      }
      continue;
    }
    const last = pending.every((s) => s === '' || s === '.');
    if (last) return candidate;
    if (info === undefined) {
      if (!options.createParents) throw notFound();
      const created = await mkdir(candidate).then(
        () => true,
        (error: unknown) => {
          if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
          throw clientErrorOf(error, given, param);
        },
      );
      // Something appeared there meanwhile: look at it again rather than trusting it.
      if (!created) pending.unshift(segment);
      else current = candidate;
      continue;
    }
    if (!info.isDirectory()) {
      if (options.createParents)
        throw new ApiError('conflict', `${given}: ${segment} is not a folder`, { param });
      throw notFound();
    }
    current = candidate;
  }
  return current;
}
