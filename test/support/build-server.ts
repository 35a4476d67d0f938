import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Vitest global set-up: compiles the server into dist/server/ (`npm run build:server`, which
 * `npm install` runs too), so tests that spawn bin/studio.mjs run the code as it ships.
 */
export default async function buildServer(): Promise<void> {
  await promisify(execFile)(process.execPath, [
    join(import.meta.dirname, '..', '..', 'bin', 'build-server.mjs'),
  ]);
}
