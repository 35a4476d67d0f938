/**
 * Third-party programs of the gateway benchmark, installed at run time into a temp directory (so
 * the repository never carries them): autocannon (the closed-loop load generator) and
 * `@portkey-ai/gateway` (a reference gateway), patched there for Node 20 and for loopback only.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const PORTKEY_VERSION = '1.15.2';
export const AUTOCANNON_VERSION = '9.0.0';

/** The part of autocannon's result the benchmark reads. */
export interface AutocannonResult {
  /** Seconds. */
  duration: number;
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
  requests: { total: number };
  latency: { p50: number; p99: number };
}

export interface AutocannonOptions {
  url: string;
  connections: number;
  /** Seconds. */
  duration: number;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
}

export type Autocannon = (options: AutocannonOptions) => Promise<AutocannonResult>;

export interface Tools {
  autocannon: Autocannon;
  autocannonVersion: string;
  /** Argv (after `node`) that starts Portkey, headless and bound to loopback; or why it cannot run. */
  portkey: { script: string; version: string } | { notRun: string };
}

async function npmInstall(prefix: string, specs: string[]): Promise<void> {
  await run(
    'npm',
    ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-save', '--ignore-scripts', ...specs],
    { timeout: 180_000, maxBuffer: 16 * 1024 * 1024 },
  );
}

async function versionOf(dir: string): Promise<string> {
  return (JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

const oneLine = (error: unknown) =>
  (error instanceof Error ? error.message : String(error)).split('\n').find((l) => l.trim()) ?? 'failed';

/**
 * Portkey 1.15.2's build answers every stream with 500 on Node 20 (`TypeError: immutable`): it
 * builds `new Response(p, e)` from a fetch Response `e` whose headers are immutable, and then
 * sets a header on it. Copying the headers (`new Headers(e.headers)`) is the fix. Its server
 * also listens on every interface; the benchmark binds it to 127.0.0.1.
 */
export const PORTKEY_PATCHES: readonly { what: string; from: string; to: string }[] = [
  {
    what: 'stream response with a mutable copy of the upstream headers',
    from: '):new Response(p,e)}',
    to: '):new Response(p,{status:e.status,statusText:e.statusText,headers:new Headers(e.headers)})}',
  },
  {
    what: 'listen on 127.0.0.1 only',
    from: 'e({fetch:Lu.fetch,port:Ku})',
    to: 'e({fetch:Lu.fetch,port:Ku,hostname:"127.0.0.1"})',
  },
];

async function patchPortkey(script: string): Promise<void> {
  let source = await readFile(script, 'utf8');
  for (const patch of PORTKEY_PATCHES) {
    const count = source.split(patch.from).length - 1;
    if (count !== 1)
      throw new Error(`patch "${patch.what}": found ${count} times in ${script}, expected once`);
    source = source.replace(patch.from, patch.to);
  }
  await writeFile(script, source);
}

/** Installs both into `dir`; Portkey failing leaves its reason, autocannon failing throws. */
export async function installTools(dir: string, log: (message: string) => void): Promise<Tools> {
  const portkeySpec = `@portkey-ai/gateway@${PORTKEY_VERSION}`;
  const autocannonSpec = `autocannon@${AUTOCANNON_VERSION}`;
  let portkey: Tools['portkey'];
  log(`npm install ${portkeySpec} ${autocannonSpec} into ${dir}`);
  try {
    await npmInstall(dir, [portkeySpec, autocannonSpec]);
    const pkgDir = join(dir, 'node_modules/@portkey-ai/gateway');
    // Its package.json: `"bin": "build/start-server.js"`, `"start:node": "node build/start-server.js"`.
    const script = join(pkgDir, 'build/start-server.js');
    if (!existsSync(script)) throw new Error('build/start-server.js is missing from the package');
    await patchPortkey(script);
    portkey = { script, version: await versionOf(pkgDir) };
  } catch (error) {
    portkey = { notRun: `installing or patching ${portkeySpec} failed: ${oneLine(error)}` };
    log(`Portkey will not run: ${portkey.notRun}`);
    if (!existsSync(join(dir, 'node_modules/autocannon/package.json'))) {
      await npmInstall(dir, [autocannonSpec]);
    }
  }
  const autocannonDir = join(dir, 'node_modules/autocannon');
  const module = (await import(pathToFileURL(join(autocannonDir, 'autocannon.js')).href)) as {
    default: Autocannon;
  };
  return { autocannon: module.default, autocannonVersion: await versionOf(autocannonDir), portkey };
}
