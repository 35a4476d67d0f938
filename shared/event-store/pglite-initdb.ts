import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { messageOf } from '../errors.ts';
import { syncPath, syncTree } from '../fsync.ts';
import { fromRoot } from '../paths.ts';

// Run by a child `node`: it only needs PGlite and plain JavaScript of ours, resolved to file URLs
// here so the child finds them wherever it starts, and no TypeScript loader.
const INITDB = `
const { PGlite } = await import(${JSON.stringify(import.meta.resolve('@electric-sql/pglite'))});
const { dropTemplateDatabases } = await import(${JSON.stringify(pathToFileURL(fromRoot('shared', 'event-store', 'pglite-templates.mjs')).href)});
const [dataDir, settings] = process.argv.slice(1);
const db = new PGlite({ dataDir, startParams: [...PGlite.defaultStartParams, ...JSON.parse(settings)] });
await db.waitReady;
await dropTemplateDatabases(db);
await db.close();
`;

/** A data directory made once by `npm install` (`npm run build:pglite-template`), copied for new ones. */
export const PGLITE_TEMPLATE_DIR = fromRoot('dist', 'pglite-template');
/** In the template only: the PGlite version that made it, so another version's is never used. */
const TEMPLATE_STAMP = 'studio-template.json';
/** Where a directory is made before it is renamed into place: `<dir>.new-<pid>`. */
const STAGING_MARK = '.new-';

/**
 * Creates a PGlite data directory in `dir` when it holds none yet: a copy of the template made at
 * install time when there is one from the PGlite installed, else initdb in a short-lived child
 * process. initdb takes some 3 s of the very first start (a copy, a few ms), and grows the WASM heap
 * to some 700 MB, which a WASM instance never gives back: done in this process, a gateway would carry
 * it for its whole life (a reopened directory needs ~130 MB). Either way the directory is made
 * beside `dir` and renamed into place once on disk (`createAside`), so a first start cut short
 * leaves nothing the next one trips over.
 */
export async function initializePgliteDir(
  dir: string,
  settings: readonly string[],
  template = PGLITE_TEMPLATE_DIR,
): Promise<void> {
  if (existsSync(join(dir, 'PG_VERSION'))) return;
  try {
    await refuseForeignFiles(dir);
    await removeAbandonedStagings(dir);
    await createAside(dir, async (staging) => {
      if (!(await copiedFromTemplate(template, staging))) await initdb(staging, settings);
    });
  } catch (error) {
    throw new Error(`could not create the PGlite data directory ${dir}: ${messageOf(error)}`, {
      cause: error,
    });
  }
}

/** Makes the template `initializePgliteDir` copies: a fresh data directory, stamped with PGlite's version. */
export async function buildPgliteTemplate(
  settings: readonly string[],
  template = PGLITE_TEMPLATE_DIR,
): Promise<void> {
  try {
    await removeAbandonedStagings(template);
    await createAside(
      template,
      async (staging) => {
        await initdb(staging, settings);
        await writeFile(
          join(staging, TEMPLATE_STAMP),
          `${JSON.stringify({ pglite: await installedPglite() })}\n`,
        );
      },
      { replace: true },
    );
  } catch (error) {
    throw new Error(`could not make the PGlite template ${template}: ${messageOf(error)}`, { cause: error });
  }
}

/**
 * Fills a new folder beside `target`, puts it on disk, then renames it to `target` and puts that name
 * on disk: cut short at any point (a crash, a power cut), `target` is either absent or complete.
 * Without `replace`, a `target` holding anything is refused by the rename.
 */
async function createAside(
  target: string,
  fill: (staging: string) => Promise<void>,
  options: { replace?: boolean } = {},
): Promise<void> {
  const staging = `${target}${STAGING_MARK}${process.pid}`;
  await mkdir(dirname(target), { recursive: true });
  await rm(staging, { recursive: true, force: true });
  try {
    await fill(staging);
    await syncTree(staging);
    if (options.replace) await rm(target, { recursive: true, force: true });
    await rename(staging, target);
    await syncPath(dirname(target));
  } catch (error) {
    await rm(staging, { recursive: true, force: true }).catch(() => {});
    throw error;
  }
}

/**
 * A directory some start cut short was making (`createAside`): removed, as far as it can be. The data
 * directory's lock means no live process of ours is still making one.
 */
async function removeAbandonedStagings(target: string): Promise<void> {
  const prefix = `${basename(target)}${STAGING_MARK}`;
  const names = await readdir(dirname(target)).catch(() => [] as string[]);
  for (const name of names) {
    if (name.startsWith(prefix))
      await rm(join(dirname(target), name), { recursive: true, force: true }).catch(() => {});
  }
}

/** `dir` may be missing or empty; files there without a database are someone's, not ours to overwrite. */
async function refuseForeignFiles(dir: string): Promise<void> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  if (names.length > 0)
    throw new Error(
      'it exists and holds files but no database (no PG_VERSION): move them aside or choose another STUDIO_DATA_DIR',
    );
}

/** Copies the template into `staging` when PGlite's installed version made it; false when it cannot be used. */
async function copiedFromTemplate(template: string, staging: string): Promise<boolean> {
  try {
    const stamp = JSON.parse(await readFile(join(template, TEMPLATE_STAMP), 'utf8')) as { pglite?: unknown };
    if (stamp.pglite !== (await installedPglite())) return false;
  } catch {
    return false; // no template (or an unreadable one): initdb it is
  }
  try {
    await cp(template, staging, { recursive: true, filter: (source) => basename(source) !== TEMPLATE_STAMP });
    return true;
  } catch {
    await rm(staging, { recursive: true, force: true });
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
    throw new Error(`initdb failed${stderr ? `: ${stderr}` : ''}`, { cause: error });
  }
}
