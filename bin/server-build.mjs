// Whether the ahead-of-time build in dist/server/ (`npm run build:server`) matches the sources.
// Plain JavaScript: bin/studio.mjs runs it before anything can compile TypeScript.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The folders the build bundles from; anything newer in them than the build makes it stale. */
export const SOURCE_FOLDERS = ['bin', 'services', 'shared', 'projections'];
export const BUILD_DIR = join('dist', 'server');
export const STAMP_FILE = 'sources.json';

/**
 * How the server is compiled (esbuild's options beside the entry points and output folder); the
 * gateway benchmark compiles its launcher the same way, so it measures the code users run.
 */
export const SERVER_BUILD_OPTIONS = {
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // npm packages stay imports, so those loaded lazily stay lazy; our own dynamic imports become chunks.
  packages: 'external',
  splitting: true,
  sourcemap: true,
  sourcesContent: false,
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
};

/**
 * The newest modification time (ms) of the files and folders under the source folders, by stat
 * alone. Folders count too, so a deleted or renamed file shows. Tests are not bundled, so they do
 * not count.
 */
export function newestSourceMtime(root) {
  let newest = 0;
  const visit = (path) => {
    newest = Math.max(newest, statSync(path).mtimeMs);
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) visit(child);
      else if (!entry.name.endsWith('.test.ts')) newest = Math.max(newest, statSync(child).mtimeMs);
    }
  };
  for (const folder of SOURCE_FOLDERS) visit(join(root, folder));
  return newest;
}

/**
 * What bin/studio.mjs should run: the build when it exists and no source is newer than what it was
 * built from, else the TypeScript sources through tsx (with the reason).
 */
export function chooseEntry(root) {
  const dir = join(root, BUILD_DIR);
  let stamp;
  try {
    statSync(join(dir, 'cli.js'));
    stamp = JSON.parse(readFileSync(join(dir, STAMP_FILE), 'utf8'));
  } catch {
    return { kind: 'tsx', reason: 'no build in dist/server (npm run build:server)' };
  }
  if (typeof stamp?.newestSourceMtime !== 'number') return { kind: 'tsx', reason: 'the build has no stamp' };
  if (newestSourceMtime(root) > stamp.newestSourceMtime)
    return { kind: 'tsx', reason: 'a source is newer than the build in dist/server' };
  return { kind: 'build', path: join(dir, 'cli.js') };
}
