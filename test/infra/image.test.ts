import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// What goes into the container image and what each container is given: no local secret may ride
// along in the build context, and no process gets a key it does not use.

const ROOT = join(import.meta.dirname, '../..');
// A CommonJS module whose typings declare an ES default export.
const ignore = createRequire(import.meta.url)(
  '@balena/dockerignore',
) as typeof import('@balena/dockerignore').default;
const context = ignore().add(readFileSync(join(ROOT, '.dockerignore'), 'utf8'));
const sent = (path: string) => !context.ignores(path);

describe('the build context (.dockerignore, read by Docker’s own matching rules)', () => {
  it.each([
    '.studio/admin.key',
    '.studio/master.key',
    '.studio/log.sqlite',
    '.studio/log.sqlite-wal',
    '.studio/workspace/notes.txt',
    '.env',
    '.env.production',
    'my-data/admin.key',
    'services/.env',
    'shared/.studio/master.key',
    'node_modules/pg/package.json',
    '.git/config',
    'dist/sdk/index.js',
    '.ci-results.json',
  ])('%s stays out', (path) => {
    expect(sent(path)).toBe(false);
  });

  it('every file the image runs is sent', () => {
    const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    const needed = tracked.filter(
      (path) => /^(bin|services|projections|shared|sdk|infra)\//.test(path) && !path.endsWith('.test.ts'),
    );
    expect(needed.length).toBeGreaterThan(100);
    for (const path of [...needed, 'package.json', 'package-lock.json', 'tsconfig.json']) {
      expect(sent(path), path).toBe(true);
    }
  });
});

describe('compose gives each process only what it uses', () => {
  const compose = parse(readFileSync(join(ROOT, 'infra/compose.yaml'), 'utf8'), { merge: true }) as {
    services: Record<string, { environment?: Record<string, string> }>;
  };

  it('the runtime holds neither the admin key nor the master key', () => {
    const env = compose.services.runtime?.environment ?? {};
    expect(Object.keys(env)).toEqual(
      expect.arrayContaining(['DATABASE_URL', 'STUDIO_TOKEN', 'STUDIO_RUNTIME_TOKEN']),
    );
    expect(env).not.toHaveProperty('ADMIN_SECRET_KEY');
    expect(env).not.toHaveProperty('STUDIO_MASTER_KEY');
    expect(env).not.toHaveProperty('KAFKA_BROKERS');
  });

  it.each(['gateway-a', 'gateway-b'])('%s holds the keys and the log', (name) => {
    const env = compose.services[name]?.environment ?? {};
    expect(Object.keys(env)).toEqual(
      expect.arrayContaining(['ADMIN_SECRET_KEY', 'STUDIO_MASTER_KEY', 'DATABASE_URL', 'KAFKA_BROKERS']),
    );
  });
});
