import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/** Where `name` would run from on this PATH, or undefined: the availability check for required binaries. */
export function findExecutable(name: string, path = process.env.PATH ?? ''): string | undefined {
  const candidates = isAbsolute(name)
    ? [name]
    : path
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
