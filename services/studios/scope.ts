import { studiosProjection } from '../../projections/studios.ts';
import { tokensProjection } from '../../projections/tokens.ts';
import { ApiError } from '../../shared/errors.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';

/**
 * What a per-studio setting (budget, rate limits) is set on: the studio (404 when unknown) and,
 * when named, one of its own tokens (404 otherwise; `tokenId` null means the whole studio).
 */
export function studioScope(gw: GatewayContext, studio_id: string, token_id: string | undefined) {
  const studio = gw.projections.state(studiosProjection).get(studio_id);
  if (!studio) throw new ApiError('not_found', `studio ${studio_id} does not exist`, { param: 'studio_id' });
  if (
    token_id !== undefined &&
    gw.projections.state(tokensProjection).byId.get(token_id)?.studio_id !== studio_id
  )
    throw new ApiError('not_found', `token ${token_id} is not a token of studio ${studio_id}`, {
      param: 'token_id',
    });
  return { studio, tokenId: token_id ?? null };
}
