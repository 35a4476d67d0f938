import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The name Studio is installed by from the npm registry. */
const PACKAGE_NAME = 'studio-ai-gateway';

/**
 * Studio's root folder (the one holding its package.json), found by walking up from this module.
 * A path computed relative to a module's own URL breaks once the module is bundled into
 * `dist/server/` (see `npm run build:server`); one found from the root holds in both places.
 */
export const STUDIO_ROOT = findStudioRoot(dirname(fileURLToPath(import.meta.url)));

/** Studio's version, from its package.json. */
export const STUDIO_VERSION = readPackage(STUDIO_ROOT).version;

/** A path inside Studio's root folder: `fromRoot('infra', 'sql')`. */
export function fromRoot(...segments: string[]): string {
  return join(STUDIO_ROOT, ...segments);
}

function readPackage(folder: string): { name?: unknown; version: string } {
  return JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
}

function findStudioRoot(start: string): string {
  for (let folder = start; ; folder = dirname(folder)) {
    if (existsSync(join(folder, 'package.json')) && readPackage(folder).name === PACKAGE_NAME) return folder;
    if (dirname(folder) === folder) throw new Error(`no package.json named "${PACKAGE_NAME}" above ${start}`);
  }
}
