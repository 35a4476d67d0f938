import type { ActionContext } from '../../../shared/http/action.ts';
import type { AiDeps } from '../deps.ts';
import type { GenerationAsk } from '../generation-ask.ts';
import type { RatePermit } from '../rate-limits/rate-limits.ts';
import { assertModelAllowed } from './model-access.ts';

/**
 * The gates every call bound for an upstream passes first, generation or not: the identity may
 * call `modelId` (a model's or a route's id), and the rate limits let it through. The answer
 * carries the rate-limit headers. Budgets come after, for what costs money (`Generation.start`).
 */
export async function admit(
  deps: Pick<AiDeps, 'limits'>,
  ctx: ActionContext,
  modelId: string,
  ask: GenerationAsk,
): Promise<RatePermit> {
  assertModelAllowed(ctx.identity, modelId);
  const permit = await deps.limits.admit(ctx.identity, ask);
  for (const [name, value] of Object.entries(permit.headers)) ctx.res.setHeader(name, value);
  return permit;
}
