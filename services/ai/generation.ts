import { ApiError } from '../../shared/errors.ts';
import type { ActionContext } from '../../shared/http/action.ts';
import { tenantOf } from './call-context.ts';
import { type Consumption, costMicroUsd, type Price } from './prices/price.ts';
import type { Modality } from './providers/types.ts';
import type { UsageRecorder } from './usage/recorder.ts';

/** Measures one generation and records it as usage (off the hot path) once it ends. */
export class GenerationMeter {
  readonly #started = performance.now();
  /** The price in force when the generation started: a later change does not reach it. */
  readonly #price: Price;
  #done = false;

  constructor(
    private readonly usage: UsageRecorder,
    private readonly ctx: ActionContext,
    private readonly model: string,
    private readonly modality: Modality,
  ) {
    this.#price = usage.priceOf(model);
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
  completed(
    inputTokens: number,
    outputTokens: number,
    media: Omit<Consumption, 'inputTokens' | 'outputTokens'> = {},
  ): void {
    if (this.#done) return;
    this.#done = true;
    this.usage.record({
      type: 'GenerationCompleted',
      data: this.#data({ inputTokens, outputTokens, ...media }, 200),
    });
  }

  failed(error: unknown, inputTokens = 0, outputTokens = 0): void {
    if (this.#done) return;
    this.#done = true;
    const api = error instanceof ApiError ? error : undefined;
    const cancelled = this.ctx.signal.aborted;
    // 499: the client closed the request before the answer was complete (nginx's convention).
    const status = cancelled ? 499 : (api?.status ?? 500);
    const errorCode = cancelled ? 'client_closed_request' : (api?.code ?? 'internal_error');
    this.usage.record({
      type: 'GenerationFailed',
      data: { ...this.#data({ inputTokens, outputTokens }, status), errorCode },
    });
  }

  /** Runs `work`, recording failure if it throws; success is recorded by the caller, who knows the usage. */
  async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      this.failed(error);
      throw error;
    }
  }
}

/** Rough token count when an upstream reports none: about four characters a token. */
export const estimateTokens = (text: string) => Math.ceil(text.length / 4);
