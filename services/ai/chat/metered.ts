import type { Metered } from '../generation.ts';
import { tokensAtLeast } from '../usage/metering.ts';
import { type ChatCompletion, outputTextOf } from './wire.ts';

/** What a whole chat completion consumed: its reported usage, and every output field of its choices. */
export const meteredCompletion = (completion: ChatCompletion): Metered => ({
  reported: {
    inputTokens: completion.usage?.prompt_tokens,
    outputTokens: completion.usage?.completion_tokens,
  },
  deliveredOutputTokens: tokensAtLeast(completion.choices.map((c) => outputTextOf(c.message)).join('')),
});
