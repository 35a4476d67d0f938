import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiDocuments } from '../../bin/openapi.ts';

// The README's route tables against the servers' registries (their OpenAPI documents, made from the
// same endpoint tables that serve the routes): every route the README names is served, and every
// route served is in the README.

const README = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
const METHOD = /^(GET|POST|PUT|PATCH|DELETE) (\/\S*)/;

/** The README's section under the heading that starts with `heading`, up to the next `## `. */
function section(heading: string): string {
  const start = README.indexOf(`\n## ${heading}`);
  if (start < 0) throw new Error(`README has no section "${heading}"`);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end < 0 ? undefined : end);
}

const withoutQuery = (path: string) => path.replace(/\?.*$/, '');
const normalized = (path: string) => path.replace(/:(\w+)/g, '{$1}');
const lastIsParameter = (path: string) => /\/(:\w+|\{\w+\})$/.test(path);

/**
 * The routes of a table's first column: "`METHOD /path`", with the README's shorthand after a
 * " · ": "`activate`" or "`/catalog`" is a sibling of the route before (`/v1/studios/pause` →
 * `/v1/studios/activate`), "`/history`" after a path ending in a parameter is its child.
 */
function routesOf(markdown: string): Set<string> {
  const routes = new Set<string>();
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const firstCell = line.split('|')[1]!;
    // Other tables (error codes, variables) start with a name, not a method.
    if (!METHOD.test(firstCell.trim().replace(/^`/, ''))) continue;
    let method = '';
    let base = '';
    for (const [, span] of firstCell.matchAll(/`([^`]+)`/g)) {
      const full = METHOD.exec(span!);
      let path: string;
      if (full) {
        method = full[1]!;
        path = withoutQuery(full[2]!);
      } else {
        const relative = withoutQuery(span!.split(' ')[0]!).replace(/^\//, '');
        path = lastIsParameter(base) ? `${base}/${relative}` : base.replace(/[^/]+$/, relative);
      }
      if (!full && !lastIsParameter(base)) base = path;
      else if (full) base = path;
      routes.add(`${method} ${normalized(path)}`);
    }
  }
  return routes;
}

function served(document: { paths: Record<string, Record<string, unknown>> }): Set<string> {
  const routes = new Set<string>();
  for (const [path, operations] of Object.entries(document.paths))
    for (const method of Object.keys(operations)) routes.add(`${method.toUpperCase()} ${path}`);
  return routes;
}

const sorted = (set: Iterable<string>) => [...set].sort();
const minus = (a: Set<string>, b: Set<string>) => sorted([...a].filter((route) => !b.has(route)));

let documents: Awaited<ReturnType<typeof apiDocuments>>;
beforeAll(async () => {
  documents = await apiDocuments();
});

describe("the README's route tables", () => {
  it('reads the shorthand as the routes it stands for', () => {
    expect(
      sorted(
        routesOf(
          [
            '| `POST /v1/studios/pause` · `activate` · `remove` | x |',
            '| `GET /api/plugins/list` · `/catalog` · `GET /api/ui/plugins` | x |',
            '| `GET /api/sdk/sessions/:id` · `/history?after=&limit=` · `/system` | x |',
            '| `POST /api/sdk/sessions/:id/prompt {text}` | x |',
          ].join('\n'),
        ),
      ),
    ).toEqual([
      'GET /api/plugins/catalog',
      'GET /api/plugins/list',
      'GET /api/sdk/sessions/{id}',
      'GET /api/sdk/sessions/{id}/history',
      'GET /api/sdk/sessions/{id}/system',
      'GET /api/ui/plugins',
      'POST /api/sdk/sessions/{id}/prompt',
      'POST /v1/studios/activate',
      'POST /v1/studios/pause',
      'POST /v1/studios/remove',
    ]);
  });

  it('gateway: every route in the table is served, every route served is in the table', () => {
    const inReadme = routesOf(section('Gateway API'));
    const registered = served(documents.gateway);
    expect({
      missingFromServer: minus(inReadme, registered),
      missingFromReadme: minus(registered, inReadme),
    }).toEqual({ missingFromServer: [], missingFromReadme: [] });
  });

  it('runtime and sessions: every route in the tables is served, every route served is in them', () => {
    const inReadme = new Set([...routesOf(section('Agent runtime')), ...routesOf(section('Session API'))]);
    const registered = served(documents.runtime);
    expect({
      missingFromServer: minus(inReadme, registered),
      missingFromReadme: minus(registered, inReadme),
    }).toEqual({ missingFromServer: [], missingFromReadme: [] });
  });
});
