/**
 * Code compiled as `npm run build:server` compiles the server, for a benchmark to run as `npm start`
 * runs Studio: not through tsx, whose output names every function it makes at run time.
 */
import { rmSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { build } from 'esbuild';
import { chooseEntry, SERVER_BUILD_OPTIONS } from '../../bin/server-build.mjs';

const ROOT = join(import.meta.dirname, '../..');
const compiled = new Map<string, Promise<string>>();

/**
 * `entry` (a path from the repository's root) compiled into a folder of this process under
 * dist/bench (removed at exit), once per process; answers the compiled file.
 */
export function compileAsServer(entry: string): Promise<string> {
  let file = compiled.get(entry);
  if (!file) {
    const name = basename(entry, extname(entry));
    const outdir = join(ROOT, 'dist', 'bench', `${name}-${process.pid}`);
    process.once('exit', () => rmSync(outdir, { recursive: true, force: true }));
    file = build({ ...SERVER_BUILD_OPTIONS, entryPoints: [join(ROOT, entry)], outdir }).then(() =>
      join(outdir, `${name}.js`),
    );
    compiled.set(entry, file);
  }
  return file;
}

export interface NpmStart {
  /** What `node` runs, before `start …`. */
  nodeArgs: string[];
  /** What it is, for a report. */
  how: string;
}

/**
 * What `npm start` runs in this checkout: bin/studio.mjs, when dist/server holds a build as new as
 * the sources (as `npm install` leaves it). Otherwise bin/studio.mjs would compile every module
 * through tsx at each start, which a user's start does not: the server is then compiled the same
 * way for this run, and its cli.js is started as bin/studio.mjs starts a build.
 */
export async function npmStart(): Promise<NpmStart> {
  const entry = chooseEntry(ROOT);
  if (entry.kind === 'build')
    return {
      nodeArgs: [join(ROOT, 'bin', 'studio.mjs')],
      how: 'bin/studio.mjs, running the build in dist/server',
    };
  return {
    // As bin/studio.mjs runs a build: with its source maps.
    nodeArgs: ['--enable-source-maps', await compileAsServer(join('bin', 'cli.ts'))],
    how: `bin/cli.ts compiled as \`npm run build:server\` compiles it, for this run (bin/studio.mjs would run the sources through tsx: ${entry.reason})`,
  };
}
