import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { ApiError } from '../../../../shared/errors.ts';

/**
 * Resolves a path given by a caller inside the workspace. Absolute paths, `..` segments and
 * symbolic links that lead outside are refused with a 400.
 */
export async function resolveInside(workspace: string, given: string): Promise<string> {
  if (given.includes('\0'))
    throw new ApiError('validation_failed', 'the path contains a NUL byte', { param: 'path' });
  if (isAbsolute(given) || /^[A-Za-z]:[\\/]/.test(given)) {
    throw new ApiError('validation_failed', 'the path must be relative to the workspace', { param: 'path' });
  }
  if (given.split(/[\\/]/).includes('..')) {
    throw new ApiError('validation_failed', 'the path must not contain ".."', { param: 'path' });
  }
  const root = await realpath(workspace);
  const target = join(root, given);
  // Follow links on the longest part of the path that exists: it must stay inside the root.
  let existing = target;
  for (;;) {
    try {
      existing = await realpath(existing);
      break;
    } catch {
      const parent = dirname(existing);
      if (parent === existing) break;
      existing = parent;
    }
  }
  const inside = relative(root, existing);
  if (inside.startsWith('..') || isAbsolute(inside) || inside.split(sep).includes('..')) {
    throw new ApiError('validation_failed', 'the path leads outside the workspace', { param: 'path' });
  }
  return target;
}
