import { ApiError } from '../../shared/errors.ts';
import type { ActionContext } from '../../shared/http/action.ts';
import { clientGone } from '../../shared/http/rights.ts';
import { secondsSinceArrival } from '../../shared/observability/http.ts';
import { type OpenSpan, tracing } from '../../shared/observability/tracing.ts';
import { tenantOf } from './call-context.ts';
import type { AiDeps } from './deps.ts';
import type { GenerationAsk } from './generation-ask.ts';
import { admit } from './governance/admission.ts';
import { type Consumption, costMicroUsd, type Price } from './prices/price.ts';
import type { Modality, ModelDefinition } from './providers/types.ts';
import type { RatePermit } from './rate-limits/rate-limits.ts';
import { formatOf } from './requests/format.ts';
import { noteAdmitted } from './requests/recording.ts';
import type { GenerationAttempt } from './usage/events.ts';
import { chargedTokens } from './usage/metering.ts';
import type { ReserveOutcome } from './usage/recorder.ts';

/**
 * What an answer consumed, as its upstream reported it and as the gateway counted it. The
 * generation is charged the larger of the two, for input and output alike.
 */
export interface Metered {
  /** The upstream's counts, where it gave them. */
  reported?: { inputTokens?: number | null | undefined; outputTokens?: number | null | undefined };
  /** The low estimate (`tokensAtLeast`) of every output field delivered: text, tool calls, reasoning, refusals, transcripts. */
  deliveredOutputTokens: number;
}

/** The output cap a budget assumes for a model whose limit is not known, unless the client sets one. */
export const ASSUMED_OUTPUT_LIMIT = 4_096;
const PRODUCES_TOKENS: ReadonlySet<Modality> = new Set(['text', 'stream', 'chat']);
/** `gen_ai.operation.name` of each modality (OpenTelemetry's GenAI conventions); others: `generate_content`. */
const GEN_AI_OPERATIONS: Partial<Record<Modality, string>> = {
  text: 'chat',
  stream: 'chat',
  chat: 'chat',
  embed: 'embeddings',
};

/**
 * One generation, from admission to its usage event. `start` passes the gates a generation meets
 * before any upstream call (model access, rate limits); `completed`/`failed` append its event and
 * resolve once the event is durable, so an answer is never sent ahead of its record.
 */
export class Generation {
  readonly #started = performance.now();
  #done = false;
  readonly #startedAt = new Date().toISOString();
  /** The model generating and what it was admitted on; a route moving on changes them (`retarget`). */
  #terms: Terms;
  readonly #attempts: GenerationAttempt[] = [];
  #firstByteMs: number | undefined;
  /** Stops extending the reservation's lease. */
  #stopHolding: () => void = () => undefined;

  private constructor(
    private readonly deps: Pick<AiDeps, 'usage' | 'metrics' | 'payloads'>,
    private readonly ctx: ActionContext,
    private readonly modality: Modality,
    private readonly ask: GenerationAsk,
    private readonly permit: RatePermit,
    /** Answered by the response cache: costs nothing, charges no tokens. */
    private readonly cached: boolean,
    /** Looked up in the response cache and not found there: its answer is stored for next time. */
    private readonly cacheMissed: boolean,
    /** The route asked for, when the generation goes through one. */
    private readonly route: string | undefined,
    terms: Terms,
    /** The generation's span (a no-op without traces): the upstream call and the usage append are its children. */
    private readonly span: OpenSpan,
  ) {
    this.#terms = terms;
    this.#stopHolding = this.#holdLease();
    noteAdmitted(ctx.res);
  }

  /** Generates on `terms` from now. */
  #adopt(terms: Terms): void {
    this.#stopHolding();
    this.#terms = terms;
    this.#stopHolding = this.#holdLease();
  }

  /** Keeps the reservation from lapsing for as long as the generation runs. */
  #holdLease(): () => void {
    const { reservation } = this.#terms;
    const identity = this.ctx.identity;
    if (!reservation || identity.kind !== 'user') return () => undefined;
    return this.deps.usage.holdLease(
      { reservationId: reservation.reservationId, studioId: identity.studioId },
      this.deps.usage.leaseMsOf(this.modality),
    );
  }

  /**
   * The generation goes on as a job, recorded by the worker that runs it: its concurrency slot is
   * given back (its request was counted at admission), and its reservation, if it made one, is
   * handed on for the job to settle.
   */
  queued(): { reservationId: string; startedAt: string } | undefined {
    this.#done = true;
    this.#stopHolding();
    this.permit.release(0);
    this.span.set({ 'studio.job': 'queued' });
    this.span.end();
    const { reservation } = this.#terms;
    return reservation && { reservationId: reservation.reservationId, startedAt: reservation.startedAt };
  }

  /**
   * Admits a generation or throws the 4xx that refuses it, before anything goes upstream: the
   * model must be one the identity may call, the rate limits must let it through, and the hard
   * budgets must be able to pay for its worst case, which is then reserved. An answer the response
   * cache holds (`cache.cached`) meets the same gates but budgets: it reserves and costs nothing.
   * Through a route, the identity must be allowed the route's id, and `model` is the first target.
   */
  static async start(
    deps: Pick<AiDeps, 'usage' | 'limits' | 'metrics' | 'payloads'>,
    ctx: ActionContext,
    model: ModelDefinition,
    modality: Modality,
    ask: GenerationAsk,
    cache: { readonly cached: boolean; readonly status?: string } = { cached: false },
    route?: string,
  ): Promise<Generation> {
    const operation = GEN_AI_OPERATIONS[modality] ?? 'generate_content';
    const span = tracing().start(`${operation} ${route ?? model.id}`, {
      'gen_ai.operation.name': operation,
      'gen_ai.request.model': route ?? model.id,
      'gen_ai.request.max_tokens': ask.maxOutputTokens,
      'studio.id': tenantOf(ctx.identity),
      'studio.route': route,
      'studio.cache': cache.cached ? 'hit' : undefined,
    });
    try {
      const permit = await admit(deps, ctx, route ?? model.id, ask);
      const terms = await termsOf(deps, ctx, model, modality, ask, cache.cached).catch((error: unknown) => {
        permit.release(0);
        throw error;
      });
      return new Generation(
        deps,
        ctx,
        modality,
        ask,
        permit,
        cache.cached,
        cache.status === 'miss',
        route,
        terms,
        span,
      );
    } catch (error) {
      span.fail(error);
      span.end();
      throw error;
    }
  }

  /** Runs `work` (the upstream call) inside the generation's span. */
  within<T>(work: () => T): T {
    return this.span.within(work);
  }

  /** A stream's first frame went out: its time since the request arrived. */
  firstByte(): void {
    this.#firstByteMs ??= Math.round(performance.now() - this.#started);
    const seconds = secondsSinceArrival(this.ctx.res);
    this.deps.metrics.firstByte(this.#terms.model, seconds);
    this.span.set({ 'gen_ai.response.time_to_first_chunk': seconds });
  }

  /** The cap to send upstream in place of the client's, when the budget lowered it. */
  get outputCap(): number | undefined {
    return this.#terms.outputCap;
  }

  // --- Routes: one generation per request, whichever targets it tries -------------------------

  /**
   * A route moves on to its next target: the reservation made for the one that failed is given
   * back, and the worst case of `model` reserved at its price (402 when the budgets cannot pay).
   * Rate limits and model access were passed once, for the request.
   */
  async retarget(model: ModelDefinition): Promise<void> {
    const { reservation } = this.#terms;
    const identity = this.ctx.identity;
    this.#stopHolding();
    if (reservation && identity.kind === 'user') {
      // Should this fail, the reservation stays in the terms, and the generation's event settles it.
      await this.deps.usage.release({
        reservationId: reservation.reservationId,
        studioId: identity.studioId,
        tokenId: identity.tokenId,
        requestId: this.ctx.requestId,
      });
    }
    // Until the next target is admitted, a refusal is recorded against it, reserving nothing.
    this.#adopt({ model: model.id, price: this.deps.usage.priceOf(model.id) });
    this.#adopt(await termsOf(this.deps, this.ctx, model, this.modality, this.ask, this.cached));
  }

  /** Notes one try of a route's target, for the generation's event. */
  attempted(attempt: GenerationAttempt): void {
    this.#attempts.push(attempt);
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * Whether `outputTokens` of output are still within what was reserved: a stream whose upstream
   * goes past the cap it was sent is cut off there. Always true without a hard budget.
   */
  allowsOutput(outputTokens: number): boolean {
    const { reservation } = this.#terms;
    return reservation === undefined || outputTokens <= reservation.outputTokens;
  }

  #data(used: Consumption, status: number) {
    const identity = this.ctx.identity;
    const { model, price, reservation } = this.#terms;
    const cost = this.cached ? 0 : costMicroUsd(price, used);
    // A hard budget is charged at most what was reserved: an upstream that ignored the cap it was
    // sent cannot take a budget past its amount. The event says what was left uncharged.
    const charged = reservation ? Math.min(cost, reservation.amountMicroUsd) : cost;
    return {
      studioId: tenantOf(identity),
      tokenId: identity.kind === 'user' ? identity.tokenId : null,
      requestId: this.ctx.requestId,
      model,
      modality: this.modality,
      inputTokens: used.inputTokens,
      outputTokens: used.outputTokens,
      costMicroUsd: charged,
      ...(charged < cost ? { unchargedMicroUsd: cost - charged } : {}),
      latencyMs: Math.round(performance.now() - this.#started),
      status,
      startedAt: reservation?.startedAt ?? this.#startedAt,
      ...(reservation ? { reservationId: reservation.reservationId } : {}),
      ...(this.cached ? { cached: true as const } : {}),
      ...(this.cacheMissed ? { cacheMiss: true as const } : {}),
      ...(this.route === undefined ? {} : { route: this.route, attempts: [...this.#attempts] }),
      format: formatOf(this.ctx.req),
      ...(this.#firstByteMs === undefined ? {} : { firstByteMs: this.#firstByteMs }),
    };
  }

  /** The tokens charged for what was metered: the upstream's counts, never below the gateway's own. */
  charged(metered: Metered | undefined): { inputTokens: number; outputTokens: number } {
    if (!metered) return { inputTokens: 0, outputTokens: 0 };
    return {
      inputTokens: chargedTokens(metered.reported?.inputTokens, this.ask.inputTokensAtLeast),
      outputTokens: chargedTokens(metered.reported?.outputTokens, metered.deliveredOutputTokens),
    };
  }

  /**
   * Records the answer, charged for `metered` (see `Metered`); `media` counts what is priced per
   * image or per second of audio or video. Returns the tokens charged.
   */
  async completed(
    metered: Metered,
    media: Omit<Consumption, 'inputTokens' | 'outputTokens'> = {},
  ): Promise<{ inputTokens: number; outputTokens: number }> {
    const charged = this.charged(metered);
    if (this.#done) return charged;
    this.#done = true;
    const { inputTokens, outputTokens } = charged;
    this.permit.release(this.cached ? 0 : inputTokens + outputTokens);
    this.#settleSpan(inputTokens, outputTokens);
    try {
      await this.span.within(() =>
        this.deps.usage.record({
          type: 'GenerationCompleted',
          data: this.#data({ inputTokens, outputTokens, ...media }, 200),
        }),
      );
    } catch {
      // The answer waits for its record; without one the client hears that, not the answer.
      const error = new ApiError('unavailable', 'the generation could not be recorded; try again shortly');
      this.span.fail(error);
      throw error;
    } finally {
      // Held until the charge is recorded, so every budget decision sees the one or the other.
      this.#stopHolding();
      this.span.end();
    }
    return charged;
  }

  #settleSpan(inputTokens: number, outputTokens: number): void {
    this.span.set({
      'gen_ai.response.model': this.#terms.model,
      'gen_ai.provider.name': this.#terms.model.split('/')[0],
      'gen_ai.usage.input_tokens': inputTokens,
      'gen_ai.usage.output_tokens': outputTokens,
    });
  }

  /**
   * Records a generation that ended without its answer: charged for what was metered before it
   * broke off (a stream's usage and delivered output), nothing when it never began.
   */
  async failed(error: unknown, metered?: Metered): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    const { inputTokens, outputTokens } = this.charged(metered);
    this.permit.release(this.cached ? 0 : inputTokens + outputTokens);
    const api = error instanceof ApiError ? error : undefined;
    const cancelled = clientGone(this.ctx.signal);
    // 499: the client closed the request before the answer was complete (nginx's convention).
    const status = cancelled ? 499 : (api?.status ?? 500);
    const errorCode = cancelled ? 'client_closed_request' : (api?.code ?? 'internal_error');
    // An upstream's message was scrubbed of credentials when it became an ApiError.
    const errorMessage = cancelled
      ? 'the client closed the request before the answer was complete'
      : (api?.message ?? 'internal error');
    const studioId = tenantOf(this.ctx.identity);
    this.#settleSpan(inputTokens, outputTokens);
    this.span.fail(api ?? error);
    try {
      await this.span.within(() =>
        this.deps.usage.record({
          type: 'GenerationFailed',
          data: {
            ...this.#data({ inputTokens, outputTokens }, status),
            errorCode,
            ...(this.deps.payloads.keepsMessages(studioId) ? { errorMessage } : {}),
          },
        }),
      );
    } finally {
      this.#stopHolding();
      this.span.end();
    }
  }

  /** Runs `work`, recording failure if it throws; success is recorded by the caller, who knows the usage. */
  async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await this.span.within(work);
    } catch (error) {
      // The work's error is what the client must hear; a failed record is retried by the recorder.
      await this.failed(error).catch(() => undefined);
      throw error;
    }
  }
}

/** What a generation of one model was admitted on. */
interface Terms {
  model: string;
  /** The price in force when the generation started (or moved on to this model): a later change does not reach it. */
  price: Price;
  reservation?: Extract<ReserveOutcome, { kind: 'reserved' }>;
  /** The cap to send upstream in place of the client's, when the budget lowered it. */
  outputCap?: number;
}

/**
 * Reserves the worst case of a generation of `model` under the hard budgets, or throws the 402 that
 * refuses it. An answer from the response cache reserves nothing.
 */
async function termsOf(
  deps: Pick<AiDeps, 'usage'>,
  ctx: ActionContext,
  model: ModelDefinition,
  modality: Modality,
  ask: GenerationAsk,
  cached: boolean,
): Promise<Terms> {
  const price = deps.usage.priceOf(model.id);
  const identity = ctx.identity;
  const producesTokens = PRODUCES_TOKENS.has(modality);
  const outputLimit = producesTokens ? (model.maxOutputTokens ?? ASSUMED_OUTPUT_LIMIT) : 0;
  const outcome =
    identity.kind === 'user' && !cached
      ? await deps.usage.reserve({
          studioId: identity.studioId,
          tokenId: identity.tokenId,
          requestId: ctx.requestId,
          model: model.id,
          price,
          ask,
          outputLimit,
          leaseMs: deps.usage.leaseMsOf(modality),
          // A video generation goes on as a job (`queued`), which a later start may resume.
          job: modality === 'video',
        })
      : ({ kind: 'unbudgeted' } as const);
  if (outcome.kind === 'refused') throw budgetRefusal(outcome);
  const reservation = outcome.kind === 'reserved' ? outcome : undefined;
  // The cap goes upstream when the budget lowered it, or when it bounds a model of unknown limit.
  const capped =
    reservation !== undefined &&
    producesTokens &&
    (reservation.outputTokens < (ask.maxOutputTokens ?? outputLimit) ||
      (ask.maxOutputTokens === undefined && model.maxOutputTokens === undefined));
  return {
    model: model.id,
    price,
    ...(reservation ? { reservation } : {}),
    ...(capped ? { outputCap: reservation.outputTokens } : {}),
  };
}

/** 402 `budget_exceeded`, saying which budget refused and by how much. */
export function budgetRefusal(outcome: Extract<ReserveOutcome, { kind: 'refused' }>): ApiError {
  const { rule } = outcome;
  return new ApiError(
    'budget_exceeded',
    `the ${rule.tokenId === null ? "studio's" : "token's"} ${rule.window} budget of ${dollars(rule.amountMicroUsd)} has ${dollars(outcome.availableMicroUsd)} left; this generation needs at least ${dollars(outcome.neededMicroUsd)}`,
  );
}

const dollars = (micro: number) => `$${(micro / 1_000_000).toFixed(6).replace(/0{1,4}$/, '')}`;

/** Rough token count when an upstream reports none: about four characters a token. */
export const estimateTokens = (text: string) => Math.ceil(text.length / 4);
