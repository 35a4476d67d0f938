import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { exportSetup } from '../services/setup/export.ts';
import { readSetupFile, SetupError } from '../services/setup/file.ts';
import { type AdminApi, applyChanges, planSetup } from '../services/setup/plan.ts';
import type { ProcessConfig } from '../shared/config.ts';

/** Where the gateway is and its admin key: flags, else STUDIO_GATEWAY_URL and ADMIN_SECRET_KEY, else the data dir's. */
async function adminApi(config: ProcessConfig, url: string | undefined): Promise<AdminApi> {
  const base = (
    url ??
    process.env.STUDIO_GATEWAY_URL ??
    `http://${config.gateway.host}:${config.gateway.port}`
  ).replace(/\/+$/, '');
  const key =
    config.adminSecretKey ??
    (await readFile(join(config.dataDir, 'admin.key'), 'utf8').then(
      (text) => text.trim(),
      () => undefined,
    ));
  if (!key)
    throw new SetupError(
      `no admin key: set ADMIN_SECRET_KEY, or run where ${join(config.dataDir, 'admin.key')} is`,
    );
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).catch((error: unknown) => {
      throw new SetupError(`the gateway at ${base} cannot be reached (${(error as Error).message})`);
    });
    const answer = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
    if (!res.ok) throw new SetupError(`${method} ${path}: ${res.status} ${answer.error?.message ?? ''}`);
    return answer;
  };
  return { get: (path) => call('GET', path), post: (path, body) => call('POST', path, body) };
}

/** `studio apply -f <file> [--dry-run]`: the calls that bring the gateway to the file, printed, then made. */
export function applyCommand(config: ProcessConfig, opts: { file: string; dryRun?: boolean; url?: string }) {
  return toldWhatIsWrong('apply', async () => {
    const text = await readFile(opts.file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new SetupError(`cannot read ${opts.file} (${error.code ?? error.message})`);
    });
    const file = readSetupFile(text, process.env);
    const api = await adminApi(config, opts.url);
    const changes = await planSetup(file, api);
    if (changes.length === 0) {
      console.log('nothing to change: the gateway is as the file says');
      return;
    }
    if (opts.dryRun) {
      for (const change of changes) console.log(`would ${change.what}`);
      return;
    }
    await applyChanges(changes, api, (change, secret) =>
      console.log(secret ? `${change.what}: ${secret}  (shown once: keep it now)` : change.what),
    );
    console.log(`${changes.length} change${changes.length === 1 ? '' : 's'} applied`);
  });
}

/** Runs a command; what is wrong with its file or the gateway is said in one line (exit 2), not as a stack. */
async function toldWhatIsWrong(command: string, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (!(error instanceof SetupError)) throw error;
    console.error(`studio ${command}: ${error.message}`);
    process.exit(2);
  }
}

/** `studio export [-o file]`: the gateway's state as a setup file (secrets as `${…}` references). */
export function exportCommand(config: ProcessConfig, opts: { out?: string; url?: string }) {
  return toldWhatIsWrong('export', async () => {
    const text = stringify(await exportSetup(await adminApi(config, opts.url)));
    if (opts.out) await writeFile(opts.out, text);
    else process.stdout.write(text);
  });
}
