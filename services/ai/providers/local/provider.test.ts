import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../catalog.ts';
import { localProvider } from './provider.ts';

// Which local models can be called depends on the programs found on the PATH the provider is
// given: here PATHs made for the test, holding nothing, or stand-ins for the programs.

let root: string;
const noEnv = { get: () => undefined };
const entriesWith = (path: string) =>
  new Map(new Catalog([localProvider({ path })], noEnv).entries().map((e) => [e.model.id, e]));

async function standIn(dir: string, name: string) {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, name), '#!/bin/sh\nexit 0\n');
  await chmod(join(dir, name), 0o755);
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'studio-local-path-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('local models and the programs they need', () => {
  it('on a PATH without the programs, both are unavailable, each naming its program', () => {
    const entries = entriesWith(join(root, 'empty'));
    expect(entries.get('local/tts')).toMatchObject({
      available: false,
      missingPrograms: ['espeak-ng'],
      missingEnv: [],
    });
    expect(entries.get('local/asr')).toMatchObject({
      available: false,
      missingPrograms: ['pocketsphinx_continuous'],
    });
  });

  it('pocketsphinx without its US English model beside it names the model package', async () => {
    const bin = join(root, 'no-model', 'bin');
    await standIn(bin, 'espeak-ng');
    await standIn(bin, 'pocketsphinx_continuous');
    const entries = entriesWith(bin);
    expect(entries.get('local/tts')).toMatchObject({ available: true, missingPrograms: [] });
    expect(entries.get('local/asr')).toMatchObject({
      available: false,
      missingPrograms: ['pocketsphinx-en-us'],
    });
  });

  it('with the program and its model at <prefix>/share/pocketsphinx/model/en-us, asr is available', async () => {
    const prefix = join(root, 'full');
    await standIn(join(prefix, 'bin'), 'pocketsphinx_continuous');
    const model = join(prefix, 'share', 'pocketsphinx', 'model', 'en-us');
    await mkdir(join(model, 'en-us'), { recursive: true });
    await writeFile(join(model, 'en-us.lm.bin'), '');
    await writeFile(join(model, 'cmudict-en-us.dict'), '');
    expect(entriesWith(join(prefix, 'bin')).get('local/asr')).toMatchObject({
      available: true,
      missingPrograms: [],
    });
    // Found through a link to its directory (`/bin` → `/usr/bin`): the model is looked for where it is.
    await symlink(join(prefix, 'bin'), join(root, 'linked-bin'));
    expect(entriesWith(join(root, 'linked-bin')).get('local/asr')).toMatchObject({ available: true });
  });
});
