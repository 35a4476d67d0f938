import { ApiError } from '../../shared/errors.ts';
import type { ActionContext } from '../../shared/http/action.ts';
import { tenantOf } from './call-context.ts';
import type { AiDeps } from './deps.ts';
import { assertModelAllowed } from './governance/model-access.ts';
import type { RatePermit } from './governance/rate-limits.ts';
import { type Consumption, costMicroUsd, type Price } from './prices/price.ts';
import type { Modality } from './providers/types.ts';

/** What a generation may consume, known before its upstream call: what budgets and limits weigh. */
export interface GenerationAsk {
  /** At least as many tokens as the model will read: the UTF-8 bytes of its input text. */
  inputTokensAtMost: number;
  /** The output cap the client asked for (`max_tokens`), if it asked. */
  maxOutputTokens?: number;
  images?: number;
  audioSeconds?: number;
  videoSeconds?: number;
}

/** An upper bound on the tokens of a text: a token is at least one UTF-8 byte. */
export const tokensAtMost = (...texts: string[]) =>
  texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8'), 0);

/**
 * One generation, from admission to its usage event. `start` passes the gates a generation meets
 * before any upstream call (model access, rate limits); `completed`/`failed` append its event and
 * resolve once the event is durable, so an answer is never sent ahead of its record.
 */
export class Generation {
  readonly #started = performance.now();
  /** The price in force when the generation started: a later change does not reach it. */
  readonly #price: Price;
  #done = false;

  private constructor(
    private readonly deps: Pick<AiDeps, 'usage'>,
    private readonly ctx: ActionContext,
    private readonly model: string,
    private readonly modality: Modality,
    private readonly permit: RatePermit,
  ) {
    this.#price = deps.usage.priceOf(model);
  }

  /** Admits a generation or throws the 4xx that refuses it; nothing has gone upstream yet. */
  static async start(
    deps: Pick<AiDeps, 'usage' | 'limits'>,
    ctx: ActionContext,
    model: string,
    modality: Modality,
    ask: GenerationAsk,
  ): Promise<Generation> {
    assertModelAllowed(ctx.identity, model);
    const permit = await deps.limits.admit(ctx.identity, ask);
    for (const [name, value] of Object.entries(permit.headers)) ctx.res.setHeader(name, value);
    return new Generation(deps, ctx, model, modality, permit);
  }

  /** The output cap to send upstream: the client's own. */
  get outputCap(): number | undefined {
    return undefined;
  }

  #data(used: Consumption, status: number) {
    const identity = this.ctx.identity;
    return {
      studioId: tenantOf(identity),
      tokenId: identity.kind === 'user' ? identity.tokenId : null,
      requestId: this.ctx.requestId,
      model: this.model,
      modality: this.modality,
      inputTokens: used.inputTokens,
      outputTokens: used.outputTokens,
      costMicroUsd: costMicroUsd(this.#price, used),
      latencyMs: Math.round(performance.now() - this.#started),
      status,
    };
  }

  /** `media` counts what is priced per image or per second of audio. */
  async completed(
    inputTokens: number,
    outputTokens: number,
    media: Omit<Consumption, 'inputTokens' | 'outputTokens'> = {},
  ): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    this.permit.release(inputTokens + outputTokens);
    try {
      await this.deps.usage.record({
        type: 'GenerationCompleted',
        data: this.#data({ inputTokens, outputTokens, ...media }, 200),
      });
    } catch {
      // The answer waits for its record; without one the client hears that, not the answer.
      throw new ApiError('unavailable', 'the generation could not be recorded; try again shortly');
    }
  }

  async failed(error: unknown, inputTokens = 0, outputTokens = 0): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    this.permit.release(inputTokens + outputTokens);
    const api = error instanceof ApiError ? error : undefined;
    const cancelled = this.ctx.signal.aborted;
    // 499: the client closed the request before the answer was complete (nginx's convention).
    const status = cancelled ? 499 : (api?.status ?? 500);
    const errorCode = cancelled ? 'client_closed_request' : (api?.code ?? 'internal_error');
    await this.deps.usage.record({
      type: 'GenerationFailed',
      data: { ...this.#data({ inputTokens, outputTokens }, status), errorCode },
    });
  }

  /** Runs `work`, recording failure if it throws; success is recorded by the caller, who knows the usage. */
  async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      // The work's error is what the client must hear; a failed record is retried by the recorder.
      await this.failed(error).catch(() => undefined);
      throw error;
    }
  }
}

/** Rough token count when an upstream reports none: about four characters a token. */
export const estimateTokens = (text: string) => Math.ceil(text.length / 4);
