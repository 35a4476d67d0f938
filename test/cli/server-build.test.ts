import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chooseEntry, newestSourceMtime, SOURCE_FOLDERS } from '../../bin/server-build.mjs';

const HOUR_AGO = new Date(Date.now() - 3_600_000);
const NOW = new Date();

/** A root with a source in each folder, all an hour old, and optionally a build stamped at that time. */
async function fakeRoot(withBuild: boolean): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'studio-server-build-'));
  for (const folder of SOURCE_FOLDERS) {
    await mkdir(join(root, folder, 'sub'), { recursive: true });
    await writeFile(join(root, folder, 'sub', 'a.ts'), '');
    await utimes(join(root, folder, 'sub', 'a.ts'), HOUR_AGO, HOUR_AGO);
    await utimes(join(root, folder, 'sub'), HOUR_AGO, HOUR_AGO);
    await utimes(join(root, folder), HOUR_AGO, HOUR_AGO);
  }
  if (withBuild) {
    await mkdir(join(root, 'dist', 'server'), { recursive: true });
    await writeFile(join(root, 'dist', 'server', 'cli.js'), '');
    const stamp = { newestSourceMtime: newestSourceMtime(root) };
    await writeFile(join(root, 'dist', 'server', 'sources.json'), JSON.stringify(stamp));
  }
  return root;
}

describe('bin/studio.mjs chooses the build or the sources', () => {
  let root: string;
  beforeEach(async () => {
    root = await fakeRoot(true);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('runs the build when no source is newer than it', () => {
    expect(chooseEntry(root)).toEqual({ kind: 'build', path: join(root, 'dist', 'server', 'cli.js') });
  });

  it('falls back to tsx when a source was edited after the build', async () => {
    await utimes(join(root, 'services', 'sub', 'a.ts'), NOW, NOW);
    expect(chooseEntry(root)).toMatchObject({
      kind: 'tsx',
      reason: expect.stringMatching(/newer than the build/),
    });
  });

  it('falls back to tsx when a source was deleted after the build (its folder changed)', async () => {
    await rm(join(root, 'projections', 'sub', 'a.ts'));
    expect(chooseEntry(root)).toMatchObject({ kind: 'tsx' });
  });

  it('ignores tests edited after the build: they are not part of it', async () => {
    await writeFile(join(root, 'shared', 'sub', 'a.test.ts'), '');
    await utimes(join(root, 'shared', 'sub', 'a.test.ts'), NOW, NOW);
    await utimes(join(root, 'shared', 'sub'), HOUR_AGO, HOUR_AGO);
    expect(chooseEntry(root)).toMatchObject({ kind: 'build' });
  });

  it('falls back to tsx without a build or its stamp', async () => {
    await rm(join(root, 'dist', 'server', 'sources.json'));
    expect(chooseEntry(root)).toMatchObject({ kind: 'tsx', reason: expect.stringMatching(/no build/) });
    const bare = await fakeRoot(false);
    expect(chooseEntry(bare)).toMatchObject({ kind: 'tsx' });
    await rm(bare, { recursive: true, force: true });
  });

  it('the studio command runs the build made by the test set-up, and says so at debug level', async () => {
    const studio = join(import.meta.dirname, '..', '..', 'bin', 'studio.mjs');
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [studio, '--help'], {
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'debug' },
    });
    expect(stdout).toContain('Usage: studio');
    expect(stderr).toMatch(/running the build .*dist\/server\/cli\.js/);
  });
});

describe('the build made by the test set-up', () => {
  const server = join(import.meta.dirname, '..', '..', 'dist', 'server');

  it('names the TypeScript file and line in a stack trace, with maps that hold no source text', async () => {
    const chunks = join(server, 'chunks');
    const files = (await readdir(chunks)).filter((f) => f.endsWith('.js'));
    const texts = await Promise.all(files.map((f) => readFile(join(chunks, f), 'utf8')));
    const chunk = files[texts.findIndex((text) => text.includes('function canonicalJson('))];
    expect(chunk).toBeDefined();
    // As bin/studio.mjs runs the build: source maps on, then the module; a BigInt makes it throw.
    const script = `process.setSourceMapsEnabled(true);
      const m = await import(${JSON.stringify(join(chunks, chunk!))});
      const canonicalJson = Object.values(m).find((f) => f.name === 'canonicalJson');
      try { canonicalJson({ a: 1n }); } catch (error) { console.log(error.stack); }`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
    expect(stdout).toMatch(/at write \(.*shared\/canonical-json\.ts:\d+:\d+\)/);

    const maps = [
      ...(await readdir(server)).filter((f) => f.endsWith('.map')).map((f) => join(server, f)),
      ...(await readdir(chunks)).filter((f) => f.endsWith('.map')).map((f) => join(chunks, f)),
    ];
    expect(maps.length).toBeGreaterThan(1);
    for (const map of maps) {
      const { mappings, sourcesContent } = JSON.parse(await readFile(map, 'utf8'));
      expect(mappings.length).toBeGreaterThan(0);
      expect(sourcesContent, map).toBeUndefined();
    }
  });
});
