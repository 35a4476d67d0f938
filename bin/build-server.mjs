// `npm run build:server`: compiles the server (bin/cli.ts and what it imports) ahead of time into
// dist/server/, so `studio` starts without compiling TypeScript. See docs/decisions.md.
import { rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { BUILD_DIR, newestSourceMtime, SERVER_BUILD_OPTIONS, STAMP_FILE } from './server-build.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const target = join(root, BUILD_DIR);
const staging = `${target}.${process.pid}`;

// Read before compiling: a source saved during the build leaves the build stale, as it is.
const newest = newestSourceMtime(root);
await build({ ...SERVER_BUILD_OPTIONS, entryPoints: [join(root, 'bin', 'cli.ts')], outdir: staging });
await writeFile(join(staging, STAMP_FILE), `${JSON.stringify({ newestSourceMtime: newest })}\n`);
// Swapped in whole, so a process starting meanwhile sees the old build, none, or the new one.
const old = `${target}.old.${process.pid}`;
await rename(target, old).catch(() => {});
await rename(staging, target);
await rm(old, { recursive: true, force: true });
