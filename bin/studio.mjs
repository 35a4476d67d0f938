#!/usr/bin/env node
// The `studio` command. It runs the server as compiled ahead of time into dist/server/ (`npm run
// build:server`, part of `npm install`) when that build is as new as the sources; otherwise it
// compiles the TypeScript sources at run time through tsx, so an edited source always runs.
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chooseEntry } from './server-build.mjs';

const entry = chooseEntry(dirname(dirname(fileURLToPath(import.meta.url))));
if (process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace') {
  const msg =
    entry.kind === 'build'
      ? `running the build ${entry.path}`
      : `running the sources through tsx: ${entry.reason}`;
  process.stderr.write(
    `${JSON.stringify({ level: 20, time: new Date().toISOString(), service: 'studio', msg })}\n`,
  );
}
if (entry.kind === 'build') {
  process.setSourceMapsEnabled(true);
  await import(pathToFileURL(entry.path).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./cli.ts');
}
