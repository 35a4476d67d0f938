import { build } from 'vite';

/**
 * Vitest global set-up: builds the consoles from their sources once per test run, so browser tests
 * always exercise the pages as they are now (the same build `npm install` runs).
 */
export default async function buildConsole(): Promise<void> {
  await build({
    configFile: new URL('../../../console/vite.config.ts', import.meta.url).pathname,
    logLevel: 'warn',
  });
}
