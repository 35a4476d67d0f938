import { Counter, Histogram, type Registry } from 'prom-client';
import { ApiError } from '../../shared/errors.ts';
import type { Identity } from '../../shared/http/identity.ts';
import { BoundedLabel, LabelChildren } from '../../shared/observability/bounded-label.ts';
import { LATENCY_BUCKETS } from '../../shared/observability/metrics.ts';
import type { CacheStatus } from './cache/ticket.ts';
import { tenantOf } from './call-context.ts';
import type { RateLimits } from './rate-limits/rate-limits.ts';
import type { GenerationAttempt, GenerationEvent } from './usage/events.ts';

/** Studios, models and routes a label keeps apart; any further one is counted as `other`. */
export const MAX_STUDIO_LABELS = 200;
export const MAX_MODEL_LABELS = 200;
export const MAX_ROUTE_LABELS = 100;

/**
 * The `ai` service's metrics, in the gateway's registry (docs/operations.md lists them). Their
 * studio, model and route labels come from data, so each is capped (`BoundedLabel`). Fed by thin
 * hooks: the usage recorder reports every generation's event and every budget refusal, the rate
 * limits their refusals, the cache its lookups, the route breaker its cooldowns, the relay the
 * first byte of each stream.
 */
export class AiMetrics {
  readonly #studios = new BoundedLabel(MAX_STUDIO_LABELS);
  readonly #models = new BoundedLabel(MAX_MODEL_LABELS);
  readonly #routes = new BoundedLabel(MAX_ROUTE_LABELS);
  readonly #generations: LabelChildren<Counter.Internal>;
  readonly #tokens: LabelChildren<Counter.Internal>;
  readonly #cost: LabelChildren<Counter.Internal>;
  readonly #firstByte: LabelChildren<Histogram.Internal<string>>;
  readonly #upstreamErrors: LabelChildren<Counter.Internal>;
  readonly #fallbacks: LabelChildren<Counter.Internal>;
  readonly #cooldowns: LabelChildren<Counter.Internal>;
  readonly #refusals: LabelChildren<Counter.Internal>;
  readonly #cache: LabelChildren<Counter.Internal>;

  constructor(registry: Registry) {
    const registers = [registry];
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) => {
      const metric = new Counter({ name, help, labelNames, registers });
      return new LabelChildren((...values: string[]) => metric.labels(...values));
    };
    this.#generations = counter(
      'studio_ai_generations_total',
      'Generations recorded, by studio, model, modality and outcome (completed, failed, cached)',
      ['studio', 'model', 'modality', 'outcome'],
    );
    this.#tokens = counter(
      'studio_ai_tokens_total',
      'Tokens generations used, by studio, model and direction (input, output)',
      ['studio', 'model', 'direction'],
    );
    this.#cost = counter(
      'studio_ai_cost_usd_total',
      'What generations cost at the prices in force, in US dollars, by studio and model',
      ['studio', 'model'],
    );
    const firstByte = new Histogram({
      name: 'studio_ai_stream_first_byte_seconds',
      help: 'From a streamed request arriving to its first frame of output, by model',
      labelNames: ['model'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.#firstByte = new LabelChildren((model: string) => firstByte.labels(model));
    this.#upstreamErrors = counter(
      'studio_ai_upstream_errors_total',
      'Upstream calls that failed (every target a route tried included), by model and reason',
      ['model', 'reason'],
    );
    this.#fallbacks = counter(
      'studio_ai_route_fallbacks_total',
      'A route moved on from this target to its next one, by route and target',
      ['route', 'target'],
    );
    this.#cooldowns = counter(
      'studio_ai_route_cooldowns_total',
      "A route's breaker started cooling a target down, by route and target",
      ['route', 'target'],
    );
    this.#refusals = counter(
      'studio_ai_refusals_total',
      'Generations refused before going upstream, by studio and reason (budget, rate_limit)',
      ['studio', 'reason'],
    );
    this.#cache = counter(
      'studio_ai_cache_lookups_total',
      'Response cache lookups, by result (hit, miss, bypass)',
      ['result'],
    );
  }

  /** A generation's event, as the usage recorder is given it. */
  recorded(event: GenerationEvent): void {
    const { data } = event;
    const studio = this.#studios.of(data.studioId);
    const model = this.#models.of(data.model);
    const outcome = data.cached ? 'cached' : event.type === 'GenerationCompleted' ? 'completed' : 'failed';
    this.#generations.get(studio, model, data.modality, outcome).inc();
    if (data.inputTokens > 0) this.#tokens.get(studio, model, 'input').inc(data.inputTokens);
    if (data.outputTokens > 0) this.#tokens.get(studio, model, 'output').inc(data.outputTokens);
    if (data.costMicroUsd > 0) this.#cost.get(studio, model).inc(data.costMicroUsd / 1_000_000);
    if (data.attempts !== undefined && data.route !== undefined) {
      this.#attempts(this.#routes.of(data.route), data.attempts);
    } else if (event.type === 'GenerationFailed') {
      const reason = UPSTREAM_FAILURES[event.data.errorCode];
      if (reason !== undefined) this.#upstreamErrors.get(model, reason).inc();
    }
  }

  #attempts(route: string, attempts: readonly GenerationAttempt[]): void {
    for (const attempt of attempts) {
      if (attempt.outcome === 'answered') continue;
      const target = this.#models.of(attempt.model);
      if (attempt.outcome === 'moved_on') this.#fallbacks.get(route, target).inc();
      const reason = attemptReason(attempt.reason);
      if (reason !== undefined) this.#upstreamErrors.get(target, reason).inc();
    }
  }

  firstByte(model: string, seconds: number): void {
    this.#firstByte.get(this.#models.of(model)).observe(seconds);
  }

  cooldownStarted(route: string, target: string): void {
    this.#cooldowns.get(this.#routes.of(route), this.#models.of(target)).inc();
  }

  refused(studioId: string, reason: 'budget' | 'rate_limit'): void {
    this.#refusals.get(this.#studios.of(studioId), reason).inc();
  }

  cacheLookup(result: CacheStatus): void {
    this.#cache.get(result).inc();
  }
}

/** A failed generation's error code → the upstream failure it was (other codes were not upstream's). */
const UPSTREAM_FAILURES: Readonly<Record<string, string>> = {
  upstream_error: 'error',
  upstream_timeout: 'timeout',
};

/** A route attempt's reason (`status 503`, `timeout`, `connection_error`) → a bounded label, or none. */
function attemptReason(reason: string | undefined): string | undefined {
  if (reason === 'timeout' || reason === 'connection_error') return reason;
  const status = /^status (\d{3})$/.exec(reason ?? '')?.[1];
  if (status === undefined) return undefined;
  return status === '429' ? 'status_429' : `status_${status[0]}xx`;
}

/** The rate limits, with each 429 they answer counted as a refusal of the caller's studio. */
export function countingRefusals(limits: RateLimits, metrics: AiMetrics): RateLimits {
  return {
    async admit(identity: Identity, ask) {
      try {
        return await limits.admit(identity, ask);
      } catch (error) {
        if (error instanceof ApiError && error.code === 'rate_limited')
          metrics.refused(tenantOf(identity), 'rate_limit');
        throw error;
      }
    },
  };
}
