import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { syncPath, syncTree } from '../fsync.ts';
import { fromRoot } from '../paths.ts';

// Run by a child `node`: it only needs PGlite, resolved to a file URL here so the child finds it
// wherever it starts, and no TypeScript loader.
const INITDB = `
const { PGlite } = await import(${JSON.stringify(import.meta.resolve('@electric-sql/pglite'))});
const [dataDir, settings] = process.argv.slice(1);
const db = new PGlite({ dataDir, startParams: [...PGlite.defaultStartParams, ...JSON.parse(settings)] });
await db.waitReady;
await db.close();
`;

/** A data directory made once by `npm install` (`npm run build:pglite-template`), copied for new ones. */
export const PGLITE_TEMPLATE_DIR = fromRoot('dist', 'pglite-template');
/** In the template only: the PGlite version that made it, so another version's is never used. */
const TEMPLATE_STAMP = 'studio-template.json';

/**
 * Creates a PGlite data directory in `dir` when it holds none yet: a copy of the template made at
 * install time when there is one from the PGlite installed, else initdb in a short-lived child
 * process. initdb takes some 3 s of the very first start (a copy, a few ms), and grows the WASM heap
 * to some 700 MB, which a WASM instance never gives back: done in this process, a gateway would carry
 * it for its whole life (a reopened directory needs ~130 MB). Either way the new files are synced:
 * the first commits' WAL will be, and after a power cut it would be replayed onto files that never
 * reached the disk.
 */
export async function initializePgliteDir(
  dir: string,
  settings: readonly string[],
  template = PGLITE_TEMPLATE_DIR,
): Promise<void> {
  if (existsSync(join(dir, 'PG_VERSION'))) return;
  if (await copiedFromTemplate(template, dir)) return;
  await initdb(dir, settings);
  await syncTree(dir);
  await syncPath(dirname(dir));
}

/** Makes the template `initializePgliteDir` copies: a fresh data directory, stamped with PGlite's version. */
export async function buildPgliteTemplate(
  settings: readonly string[],
  template = PGLITE_TEMPLATE_DIR,
): Promise<void> {
  const staging = `${template}.${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await initdb(staging, settings);
  await writeFile(join(staging, TEMPLATE_STAMP), `${JSON.stringify({ pglite: await installedPglite() })}\n`);
  await syncTree(staging);
  await rm(template, { recursive: true, force: true });
  await rename(staging, template);
  await syncPath(dirname(template));
}

async function copiedFromTemplate(template: string, dir: string): Promise<boolean> {
  try {
    const stamp = JSON.parse(await readFile(join(template, TEMPLATE_STAMP), 'utf8')) as { pglite?: unknown };
    if (stamp.pglite !== (await installedPglite())) return false;
  } catch {
    return false; // no template (or an unreadable one): initdb it is
  }
  // Copied aside, then renamed into place: a copy cut short never looks like a data directory.
  const staging = `${dir}.new-${process.pid}`;
  try {
    await mkdir(dirname(dir), { recursive: true });
    await cp(template, staging, { recursive: true, filter: (source) => basename(source) !== TEMPLATE_STAMP });
    await syncTree(staging);
    await rename(staging, dir); // replaces an empty directory; one holding anything else is refused
    await syncPath(dirname(dir));
    return true;
  } catch {
    await rm(staging, { recursive: true, force: true }).catch(() => {});
    return false;
  }
}

async function installedPglite(): Promise<string | undefined> {
  const manifest = fromRoot('node_modules', '@electric-sql', 'pglite', 'package.json');
  return (JSON.parse(await readFile(manifest, 'utf8')) as { version?: string }).version;
}

async function initdb(dir: string, settings: readonly string[]): Promise<void> {
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
