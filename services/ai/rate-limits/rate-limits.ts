import type { Identity } from '../../../shared/http/identity.ts';
import type { GenerationAsk } from '../generation-ask.ts';

/** A generation let through the rate limits: the headers that tell its client where it stands. */
export interface RatePermit {
  /** OpenAI's `x-ratelimit-*` headers, for the limits that are set. */
  headers: Readonly<Record<string, string>>;
  /** Ends the generation's hold on a concurrency slot; `tokens` is what it actually used. */
  release(tokens: number): void;
}

/** Requests, tokens and generations in flight per studio and per token. */
export interface RateLimits {
  /** Lets a generation through or throws 429 `rate_limited` with its `Retry-After`. */
  admit(identity: Identity, ask: GenerationAsk): Promise<RatePermit>;
}

export const UNLIMITED: RatePermit = { headers: {}, release: () => undefined };

export const NO_RATE_LIMITS: RateLimits = {
  admit: async () => UNLIMITED,
};
