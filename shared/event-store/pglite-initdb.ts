import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

// Run by a child `node`: it only needs PGlite, resolved to a file URL here so the child finds it
// wherever it starts, and no TypeScript loader.
const INITDB = `
const { PGlite } = await import(${JSON.stringify(import.meta.resolve('@electric-sql/pglite'))});
const [dataDir, settings] = process.argv.slice(1);
const db = new PGlite({ dataDir, startParams: [...PGlite.defaultStartParams, ...JSON.parse(settings)] });
await db.waitReady;
await db.close();
`;

/**
 * Creates a PGlite data directory in a short-lived child process when `dir` holds none yet.
 * initdb grows the WASM heap to some 700 MB, which a WASM instance never gives back: done in this
 * process, a gateway would carry it for its whole life (a reopened directory needs ~130 MB). It costs
 * one process start (~0.5 s) on the very first start only.
 */
export async function initializePgliteDir(dir: string, settings: readonly string[]): Promise<void> {
  if (existsSync(join(dir, 'PG_VERSION'))) return;
  try {
    await promisify(execFile)(process.execPath, [
      '--input-type=module',
      '-e',
      INITDB,
      dir,
      JSON.stringify(settings),
    ]);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`could not create the PGlite data directory ${dir}${stderr ? `: ${stderr}` : ''}`, {
      cause: error,
    });
  }
}
