import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The arrows of docs/architecture.md ("Dependencies"), checked on every relative import of the
// source (tests excluded): nothing in shared/ imports upward, no module cycle, and the runtime hosts
// the session API without the session API knowing of the runtime.

const ROOT = join(import.meta.dirname, '../..');
const SOURCE_FOLDERS = ['shared', 'projections', 'services', 'bin', 'sdk'];
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g;

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts') && !path.endsWith('.test.ts'))
    .map((path) => join(folder, path));
}

interface Arrow {
  from: string;
  to: string;
}
const graph = new Map<string, Arrow[]>();
for (const file of SOURCE_FOLDERS.flatMap(sourceFiles)) {
  const text = readFileSync(join(ROOT, file), 'utf8');
  graph.set(
    file,
    [...text.matchAll(IMPORT)].map((m) => ({
      from: file,
      to: relative(ROOT, resolve(ROOT, dirname(file), m[1]!)),
    })),
  );
}

const arrows = [...graph.values()].flat();
const under = (folder: string) => (path: string) => path.startsWith(`${folder}/`);

/** Every tracked source file of the repository: code, tests, benchmarks, the consoles. */
function everySource(): string[] {
  return ['shared', 'projections', 'services', 'bin', 'sdk', 'test', 'bench', 'console/src', 'infra'].flatMap(
    (folder) =>
      readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
        .filter(
          (path) => /\.(ts|tsx|mjs)$/.test(path) && !/(^|\/)(node_modules|dist|generated)(\/|$)/.test(path),
        )
        .map((path) => join(folder, path)),
  );
}

describe('import arrows', () => {
  it('every relative import names a file of this repository (none reaches outside it)', () => {
    const outside: string[] = [];
    for (const file of everySource()) {
      for (const m of readFileSync(join(ROOT, file), 'utf8').matchAll(IMPORT)) {
        const target = resolve(ROOT, dirname(file), m[1]!);
        const found = existsSync(target) || existsSync(target.replace(/\.js$/, '.ts'));
        if (!target.startsWith(`${ROOT}/`) || !found) outside.push(`${file} → ${m[1]}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it('reads some source', () => {
    expect(graph.size).toBeGreaterThan(150);
  });

  it('nothing in shared/ imports from above it', () => {
    expect(arrows.filter((a) => under('shared')(a.from) && !under('shared')(a.to))).toEqual([]);
  });

  it('projections/ holds read models only: the machinery that runs them is in shared/projections/', () => {
    const machinery = [...graph.keys()].filter(
      (f) => under('projections')(f) && /(runner|checkpoints|rebuild|snapshot|liveness)\.ts$/.test(f),
    );
    expect(machinery).toEqual([]);
  });

  it('the session API knows nothing of the runtime that hosts it', () => {
    expect(
      arrows.filter((a) => under('services/sessions')(a.from) && under('services/runtime')(a.to)),
    ).toEqual([]);
  });

  it('no module imports itself through a cycle', () => {
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[][] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file]);
        return;
      }
      state.set(file, 'open');
      for (const { to } of graph.get(file) ?? []) if (graph.has(to)) visit(to, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it('unit tests beside the code lean on no test support of test/ (those are integration suites, kept under test/)', () => {
    const besideCode = SOURCE_FOLDERS.flatMap((folder) =>
      readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
        .filter((path) => path.endsWith('.test.ts'))
        .map((path) => join(folder, path)),
    );
    expect(besideCode.length).toBeGreaterThan(20);
    const leaning = besideCode.filter((file) =>
      [...readFileSync(join(ROOT, file), 'utf8').matchAll(IMPORT)].some((m) =>
        relative(ROOT, resolve(ROOT, dirname(file), m[1]!)).startsWith('test/'),
      ),
    );
    expect(leaning).toEqual([]);
  });

  it('no two services import each other', () => {
    const serviceOf = (path: string) => (under('services')(path) ? path.split('/')[1] : undefined);
    const pairs = new Set<string>();
    for (const { from, to } of arrows) {
      const [a, b] = [serviceOf(from), serviceOf(to)];
      if (a && b && a !== b) pairs.add(`${a} → ${b}`);
    }
    const mutual = [...pairs].filter((pair) => pairs.has(pair.split(' → ').reverse().join(' → ')));
    expect(mutual).toEqual([]);
  });
});
