import { ApiError } from '../errors.ts';
import { notePattern } from '../observability/http.ts';
import type { AnyPathEndpoint, HttpMethod } from './action.ts';
import type { ServedRequest, ServedResponse } from './request.ts';
import { type ServePolicy, serve } from './serve.ts';

interface Entry {
  endpoint: AnyPathEndpoint;
  policy: ServePolicy;
}

interface PathEntries {
  /** The path's segments, lower-cased; a `:name` segment takes any one segment there. */
  segments: readonly string[];
  byMethod: Map<HttpMethod, Entry>;
}

const segmentsOf = (path: string) => path.split('/').filter((segment) => segment !== '');
/** An exact path's key: lower case, no slash at either end (`/Health/` → `health`). */
const keyOf = (path: string) => path.toLowerCase().replace(/^\/+|\/+$/g, '');

/**
 * The endpoints a server serves at paths of their own (`/health`, `/api/sdk/sessions/:id`), each with
 * its policy, matched from the path the front door reads: literal segments case-insensitively, a
 * trailing slash allowed, a `:name` segment percent-decoded into the params; an exact path wins over
 * a pattern. A path served under another method is a 405 naming the ones it takes.
 */
export class EndpointTable {
  readonly #exact = new Map<string, PathEntries>();
  readonly #patterns: PathEntries[] = [];

  add(endpoints: readonly AnyPathEndpoint[], policy: ServePolicy = {}): this {
    for (const endpoint of endpoints) {
      const segments = segmentsOf(endpoint.path).map((segment) =>
        segment.startsWith(':') ? segment : segment.toLowerCase(),
      );
      const key = segments.join('/');
      const pattern = segments.some((segment) => segment.startsWith(':'));
      let entries = pattern ? this.#patterns.find((p) => p.segments.join('/') === key) : this.#exact.get(key);
      if (!entries) {
        entries = { segments, byMethod: new Map() };
        if (pattern) this.#patterns.push(entries);
        else this.#exact.set(key, entries);
      }
      if (entries.byMethod.has(endpoint.method))
        throw new Error(`two endpoints for ${endpoint.method} ${endpoint.path}`);
      entries.byMethod.set(endpoint.method, { endpoint, policy });
    }
    return this;
  }

  /** Every endpoint added, in no particular order. */
  endpoints(): AnyPathEndpoint[] {
    return [...this.#exact.values(), ...this.#patterns].flatMap((entries) =>
      [...entries.byMethod.values()].map((entry) => entry.endpoint),
    );
  }

  /** Serves the request when its path is an endpoint's (settling once served); else undefined. */
  serve(req: ServedRequest, res: ServedResponse, path: string): Promise<void> | undefined {
    // Most requests name a path of their own exactly: looked up without splitting it (a /v1 action
    // misses here at the cost of one lower-casing); the path is split only for the patterns.
    const exact = this.#exact.get(keyOf(path));
    const asked = exact === undefined && this.#patterns.length > 0 ? segmentsOf(path) : [];
    const found = exact ?? this.#patternFor(asked);
    if (!found) return undefined;
    const method: HttpMethod | undefined =
      req.method === 'GET' || req.method === 'HEAD'
        ? 'GET'
        : req.method === 'POST' || req.method === 'DELETE'
          ? req.method
          : undefined;
    const entry = method && found.byMethod.get(method);
    if (!entry) {
      const allowed = [...found.byMethod.keys()].join(', ');
      throw new ApiError('method_not_allowed', `${req.method} is not allowed here; use ${allowed}`, {
        headers: { Allow: allowed },
      });
    }
    notePattern(res, entry.endpoint.path);
    const params: Record<string, string> = {};
    found.segments.forEach((segment, i) => {
      if (segment.startsWith(':')) params[segment.slice(1)] = decodeURIComponent(asked[i]!);
    });
    return serve(entry.endpoint, req, res, entry.policy, params);
  }

  #patternFor(asked: readonly string[]): PathEntries | undefined {
    return this.#patterns.find(
      ({ segments }) =>
        segments.length === asked.length &&
        segments.every((segment, i) => segment.startsWith(':') || segment === asked[i]!.toLowerCase()),
    );
  }
}
