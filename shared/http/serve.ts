import bodyParser from 'body-parser';
import type { z } from 'zod';
import { ApiError } from '../errors.ts';
import { noteEndpoint } from '../observability/http.ts';
import { type ActionContext, type AnyEndpoint, StatusAnswer, type UploadedFile } from './action.ts';
import { type LargeBodyBudget, SMALL_BODY_BYTES } from './body-budget.ts';
import { Drain } from './drain.ts';
import { validationError } from './errors.ts';
import { REQUEST_ID } from './front-door.ts';
import { actorOf, type Identity, type IdentityKind } from './identity.ts';
import { headerOf, queryOf, type ServedRequest, type ServedResponse, sendJson } from './request.ts';
import type { RightsWatch } from './rights.ts';

/** An endpoint's body limit unless it says otherwise; larger bodies count against `LargeBodyBudget`. */
export const BODY_LIMIT_BYTES = SMALL_BODY_BYTES;

/** What one app decides for every endpoint it serves. */
export interface ServePolicy {
  /** Who may call an endpoint that does not say. Default `['user']`. */
  identities?: readonly IdentityKind[];
  /** The shape of every JSON answer (the runtime's `{success: true, …}`). Default: the body as is. */
  shape?: (body: unknown) => unknown;
  /** Bodies over 1 MiB share this budget of bytes; without one they are not counted. */
  largeBodies?: LargeBodyBudget;
  /** Ends answers whose caller loses its rights while they are under way (any credential's). */
  rights?: RightsWatch;
}

/**
 * The one way an endpoint is served, registry action or route alike: who may call it, its body read
 * up to its limit, its params and input parsed, its handler run, its answer written. Anything thrown
 * goes on to the app's error middleware and so to the one error envelope.
 */
export async function serve(
  endpoint: AnyEndpoint,
  req: ServedRequest,
  res: ServedResponse,
  policy: ServePolicy,
  /** The path's `:params`, as the path matched them. */
  pathParams: Record<string, unknown>,
): Promise<void> {
  noteEndpoint(res, endpoint);
  // A draining process waits for the handler too, not only for the answer's close.
  const release = Drain.hold(req);
  try {
    await serveHeld(endpoint, req, res, policy, pathParams);
  } catch (error) {
    endpoint.failed?.(error, req, res);
    throw error;
  } finally {
    release();
  }
}

async function serveHeld(
  endpoint: AnyEndpoint,
  req: ServedRequest,
  res: ServedResponse,
  policy: ServePolicy,
  pathParams: Record<string, unknown>,
): Promise<void> {
  authorize(endpoint.identities ?? policy.identities ?? ['user'], req.identity);
  // The body is read only once the caller is known to be allowed, and up to this endpoint's limit;
  // a large one only when it fits the budget of large bodies.
  if (endpoint.method === 'POST') {
    const limit = endpoint.bodyLimitBytes ?? BODY_LIMIT_BYTES;
    policy.largeBodies?.hold(req, res, limit);
    if (endpoint.consumes === 'multipart/form-data') await readMultipartBody(req, res, limit);
    else await readJsonBody(req, res, limit);
  }
  const params = endpoint.params ? parseWith(endpoint.params, pathParams, 'path') : {};
  const input = parseInput(endpoint, req);
  checkStudio(input, req.identity);

  const controller = new AbortController();
  const unwatch = req.identity.kind === 'guest' ? undefined : policy.rights?.hold(req, controller);
  res.on('close', () => {
    unwatch?.();
    if (!res.writableFinished) controller.abort();
  });
  const ctx: ActionContext = {
    identity: req.identity,
    params,
    requestId: req.requestId,
    metadata: {
      actor: actorOf(req.identity),
      requestId: req.requestId,
      correlationId: correlationIdOf(req),
    },
    signal: controller.signal,
    req,
    res,
  };
  const result = await endpoint.handler(input, ctx);
  if (res.headersSent || result === undefined) return;
  const shape = policy.shape ?? ((body: unknown) => body);
  if (result instanceof StatusAnswer) sendJson(res, result.status, shape(result.body));
  else sendJson(res, endpoint.status ?? 200, shape(result));
}

const jsonParsers = new Map<number, ReturnType<typeof bodyParser.json>>();
const rawParsers = new Map<number, ReturnType<typeof bodyParser.raw>>();

/**
 * Reads a `multipart/form-data` body, up to `limit` bytes once decoded, into `req.body`: each text
 * field a string, each file an `UploadedFile` (the last of a name wins). Anything else is a 415.
 */
export async function readMultipartBody(
  req: ServedRequest,
  res: ServedResponse,
  limit: number,
): Promise<void> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*;/i.test(type)) {
    throw new ApiError(
      'unsupported_media_type',
      'this route takes multipart/form-data: the file and its fields',
    );
  }
  let parser = rawParsers.get(limit);
  if (!parser) {
    parser = bodyParser.raw({ limit, type: () => true });
    rawParsers.set(limit, parser);
  }
  const parse = parser;
  await new Promise<void>((resolve, reject) =>
    parse(req, res, (error?: unknown) => (error ? reject(error) : resolve())),
  );
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  let form: FormData;
  try {
    form = await new Response(raw, { headers: { 'content-type': type } }).formData();
  } catch {
    throw new ApiError('validation_failed', 'the body is not well-formed multipart/form-data');
  }
  const fields: Record<string, string | UploadedFile> = {};
  for (const [name, value] of form) {
    fields[name] =
      typeof value === 'string'
        ? value
        : { filename: value.name, type: value.type, data: Buffer.from(await value.arrayBuffer()) };
  }
  req.body = fields;
}

/** Reads the body as JSON into `req.body`, up to `limit` bytes once decoded (gzip, deflate, br). */
export function readJsonBody(req: ServedRequest, res: ServedResponse, limit: number): Promise<void> {
  let parser = jsonParsers.get(limit);
  if (!parser) {
    parser = bodyParser.json({ limit, type: ['application/json', 'application/*+json'] });
    jsonParsers.set(limit, parser);
  }
  const parse = parser;
  return new Promise((resolve, reject) =>
    parse(req, res, (error?: unknown) => (error ? reject(error) : resolve())),
  );
}

function authorize(allowed: readonly IdentityKind[], identity: Identity): void {
  if (allowed.length === 0 || allowed.includes(identity.kind)) return;
  if (identity.kind === 'guest') {
    throw new ApiError('unauthenticated', 'this action needs a credential: Authorization: Bearer <token>');
  }
  throw new ApiError('forbidden', `this action is for ${allowed.join(' or ')}, not ${identity.kind}`);
}

function parseInput(endpoint: AnyEndpoint, req: ServedRequest): unknown {
  // Only a POST has a body: a GET's or a DELETE's input is its query.
  const where = endpoint.method === 'POST' ? 'body' : 'query';
  if (where === 'body' && req.body === undefined && hasBody(req)) {
    throw new ApiError('invalid_json', 'the request body must be JSON (Content-Type: application/json)');
  }
  return parseWith(endpoint.input, where === 'query' ? { ...queryOf(req) } : (req.body ?? {}), where);
}

function parseWith<T>(schema: z.ZodType<T>, raw: unknown, where: 'body' | 'query' | 'path'): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw validationError(parsed.error, where);
  return parsed.data;
}

function hasBody(req: ServedRequest): boolean {
  return Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
}

/** A user may only act on their own studio: a `studio_id` in the input must be the token's. */
function checkStudio(input: unknown, identity: Identity): void {
  if (identity.kind !== 'user' || typeof input !== 'object' || input === null) return;
  const studioId = (input as { studio_id?: unknown }).studio_id;
  if (studioId !== undefined && studioId !== identity.studioId) {
    throw new ApiError('studio_mismatch', 'studio_id does not match the studio of this token', {
      param: 'studio_id',
    });
  }
}

function correlationIdOf(req: ServedRequest): string {
  const given = headerOf(req, 'x-correlation-id');
  return given && REQUEST_ID.test(given) ? given : req.requestId;
}
