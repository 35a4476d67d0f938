import type { RouteRecord } from '../../projections/routes.ts';
import { ApiError } from '../../shared/errors.ts';
import type { ActionContext } from '../../shared/http/action.ts';
import { rightsLost } from '../../shared/http/rights.ts';
import type { CacheableRequest } from './cache/normalize.ts';
import { CacheTicket } from './cache/ticket.ts';
import { callContext } from './call-context.ts';
import type { CatalogEntry } from './catalog.ts';
import type { AiDeps } from './deps.ts';
import { Generation } from './generation.ts';
import type { GenerationAsk } from './generation-ask.ts';
import type { CallContext, Modality } from './providers/types.ts';
import type { RetryCondition } from './routing/routes.ts';

/** What a request asks for. */
export interface Asked {
  /** The id of a model or of a route. */
  model: string;
  modality: Modality;
  ask: GenerationAsk;
  /** The request as the response cache knows it (keyed by the id asked for); absent: never cached. */
  cacheable?: CacheableRequest;
}

/** One try of a model: what the action's `open` gets. */
export interface Attempt {
  target: CatalogEntry;
  generation: Generation;
  /** A hit answers in place of the upstream call (`cache.completion`, `cache.chunks`). */
  cache: CacheTicket;
  /** The call's context: through a route, its signal also ends the attempt at the route's timeout. */
  call: CallContext;
  /**
   * A stream as it may be relayed: through a route, once its first chunk has arrived (a failure
   * before it lets the route move on); called directly, at once.
   */
  firstChunk<T>(stream: AsyncIterable<T>): Promise<AsyncIterable<T>>;
}

/** What the target that answered gave, with the generation to settle once the answer is out. */
export interface Answered<T> {
  target: CatalogEntry;
  generation: Generation;
  cache: CacheTicket;
  result: T;
}

type Deps = Pick<
  AiDeps,
  'catalog' | 'env' | 'usage' | 'limits' | 'routes' | 'cache' | 'metrics' | 'payloads'
>;

/**
 * Starts the generation a request asks for and opens its answer with `open`: the model itself, or
 * through a route each target in the route's order until one answers. Through a route, a target's
 * retriable failure (the route's `retry_on`) before anything reached the client moves on to the
 * next; the one generation of the request is admitted once (model access to the route's id, rate
 * limits), reserves against the target it tries, and its event names every attempt. A failure
 * that ends the request is recorded here; an answer is recorded by the caller, who knows its usage.
 * The response cache is looked up once the id is known to be callable; a hit tries no target.
 */
export async function generate<T>(
  deps: Deps,
  ctx: ActionContext,
  asked: Asked,
  open: (attempt: Attempt) => Promise<T>,
): Promise<Answered<T>> {
  const route = deps.routes.get(asked.model);
  if (route !== undefined) return routed(deps, ctx, route, asked, open);
  const target = deps.catalog.resolve(asked.model, asked.modality);
  const cache = await lookUp(deps, ctx, asked);
  const generation = await Generation.start(deps, ctx, target.model, asked.modality, asked.ask, cache);
  untilResponseEnds(ctx, deps.routes.inFlight.add(target.model.id));
  const call = callContext(deps.env, ctx);
  const result = await generation.guard(() =>
    open({ target, generation, cache, call, firstChunk: async (stream) => stream }),
  );
  return { target, generation, cache, result };
}

/** The cache's answer for a request it may serve; a request it never serves bypasses it. */
const lookUp = (deps: Deps, ctx: ActionContext, asked: Asked): Promise<CacheTicket> =>
  asked.cacheable ? deps.cache.lookup(ctx, asked.cacheable) : Promise.resolve(new CacheTicket('bypass'));

async function routed<T>(
  deps: Deps,
  ctx: ActionContext,
  route: RouteRecord,
  asked: Asked,
  open: (attempt: Attempt) => Promise<T>,
): Promise<Answered<T>> {
  const { modality, ask } = asked;
  const plan = deps.routes.plan(route, modality);
  const cache = await lookUp(deps, ctx, asked);
  const first = plan[0]!.entry.model;
  const generation = await Generation.start(deps, ctx, first, modality, ask, cache, route.id);
  for (const [index, target] of plan.entries()) {
    if (index > 0) await generation.guard(() => generation.retarget(target.entry.model));
    const started = performance.now();
    const ended = deps.routes.inFlight.add(target.model);
    const deadline = attemptDeadline(ctx.signal, route.timeoutMs);
    try {
      const result = await generation.within(() =>
        open({
          target: target.entry,
          generation,
          cache,
          // The route is the retry: a target's failure moves on at once rather than backing off.
          call: { ...callContext(deps.env, ctx), signal: deadline.signal, retries: 0 },
          firstChunk: firstChunkArrived,
        }),
      );
      deadline.clear();
      // A hit answered from the cache: no target was tried.
      if (!cache.cached)
        generation.attempted({ model: target.model, outcome: 'answered', latencyMs: since(started) });
      untilResponseEnds(ctx, ended);
      return { target: target.entry, generation, cache, result };
    } catch (thrown) {
      deadline.clear();
      ended();
      const error =
        rightsLost(ctx.signal) ??
        (deadline.passed() && !ctx.signal.aborted
          ? new ApiError('upstream_timeout', `${target.model} did not answer within ${route.timeoutMs} ms`)
          : thrown);
      const failure: Failure = ctx.signal.aborted
        ? { reason: 'client_closed_request', targetFault: false }
        : failureOf(error);
      if (failure.targetFault) deps.routes.health.failed(route.id, target.model, route.cooldown);
      const moveOn =
        index + 1 < plan.length &&
        !ctx.signal.aborted &&
        !ctx.res.headersSent &&
        failure.condition !== undefined &&
        route.retryOn.includes(failure.condition);
      generation.attempted({
        model: target.model,
        outcome: moveOn ? 'moved_on' : 'failed',
        latencyMs: since(started),
        reason: failure.reason,
      });
      if (!moveOn) {
        await generation.failed(error).catch(() => undefined);
        throw error;
      }
    }
  }
  throw new Error('a route plan is never empty');
}

const since = (started: number) => Math.round(performance.now() - started);

/** Ends `ended` with the response: a stream's generation is in flight until its last frame. */
function untilResponseEnds(ctx: ActionContext, ended: () => void): void {
  if (ctx.res.writableFinished || ctx.res.destroyed) ended();
  else ctx.res.once('close', ended);
}

/** The client's signal, which also aborts once `timeoutMs` have passed (when a route sets one). */
function attemptDeadline(client: AbortSignal, timeoutMs: number | null) {
  if (timeoutMs === null) return { signal: client, passed: () => false, clear: () => undefined };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  return {
    signal: AbortSignal.any([client, controller.signal]),
    passed: () => controller.signal.aborted,
    clear: () => clearTimeout(timer),
  };
}

/** Waits for a stream's first chunk, then gives the whole stream back. */
async function firstChunkArrived<T>(stream: AsyncIterable<T>): Promise<AsyncIterable<T>> {
  const rest = stream[Symbol.asyncIterator]();
  let first: IteratorResult<T> | undefined = await rest.next();
  // The upstream's own iterator, handed on: a generator around it would add an await per chunk.
  const resumed: AsyncIterator<T> = {
    next() {
      const pending = first;
      first = undefined;
      return pending ? Promise.resolve(pending) : rest.next();
    },
    // A reader that stops early stops the upstream stream too.
    return: (value?: unknown) => rest.return?.(value) ?? Promise.resolve({ done: true, value }),
  };
  return { [Symbol.asyncIterator]: () => resumed };
}

interface Failure {
  /** Said in the attempt: `status 503`, `timeout`, `connection_error`, or the error's code. */
  reason: string;
  /** The `retry_on` condition it meets, if any. */
  condition?: RetryCondition;
  /** Whether it counts against the target's health: 429, 5xx, timeouts, connection errors. */
  targetFault: boolean;
}

function failureOf(error: unknown): Failure {
  if (!(error instanceof ApiError)) return { reason: 'internal_error', targetFault: false };
  if (error.code === 'upstream_timeout')
    return { reason: 'timeout', condition: 'timeout', targetFault: true };
  if (error.code !== 'upstream_error') return { reason: error.code, targetFault: false };
  const status = (error.options.details as { upstream_status?: unknown } | undefined)?.upstream_status;
  if (typeof status === 'number')
    return { reason: `status ${status}`, condition: status, targetFault: status === 429 || status >= 500 };
  // Not reached, broke off, or answered something that is not an answer, before its answer began.
  return { reason: 'connection_error', condition: 'connection_error', targetFault: true };
}
