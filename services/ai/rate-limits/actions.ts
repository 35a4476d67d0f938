import { z } from 'zod';
import { ApiError } from '../../../shared/errors.ts';
import type { GatewayContext } from '../../../shared/gateway-context.ts';
import { defineAction } from '../../../shared/http/action.ts';
import { studioScope } from '../../studios/scope.ts';
import { studioId } from '../../studios/studio-id.ts';
import { limitCommands } from './commands.ts';
import { scopeKey } from './limits.ts';
import { type LimitRecord, limitsProjection } from './read-model.ts';

const admin = ['admin'] as const;
const tokenId = z.string().min(1).max(100);
const positiveAtMost = (max: number) => z.number().int().positive().max(max);

/**
 * `limits/set`, `limits/list`, `limits/remove`: the rate limits of a studio's generations, over all
 * its tokens, and of each token alone. The gateway enforces them (services/ai/governance).
 */
export function limitActions(gw: GatewayContext) {
  const limits = () => gw.projections.state(limitsProjection);

  const run = limitCommands(gw);

  const record = (studio_id: string, token_id: string | null): LimitRecord | undefined =>
    limits().get(studio_id)?.get(scopeKey(token_id));

  return [
    defineAction({
      service: 'studios',
      action: 'limits/set',
      method: 'POST',
      identities: admin,
      summary: "Set the rate limits of a studio's generations, or of one of its tokens",
      input: z.strictObject({
        studio_id: studioId,
        token_id: tokenId.optional(),
        rpm: positiveAtMost(1_000_000).optional(),
        tpm: positiveAtMost(1_000_000_000).optional(),
        max_concurrent: positiveAtMost(100_000).optional(),
      }),
      handler: async ({ studio_id, token_id, rpm, tpm, max_concurrent }, ctx) => {
        if (rpm === undefined && tpm === undefined && max_concurrent === undefined)
          throw new ApiError('validation_failed', 'give at least one of rpm, tpm and max_concurrent');
        const { studio, tokenId } = studioScope(gw, studio_id, token_id);
        if (studio.status === 'removed') throw new ApiError('conflict', `studio ${studio_id} is removed`);
        await run(
          {
            type: 'SetLimits',
            studioId: studio_id,
            tokenId,
            limits: { rpm: rpm ?? null, tpm: tpm ?? null, maxConcurrent: max_concurrent ?? null },
          },
          ctx.metadata,
        );
        return record(studio_id, tokenId);
      },
    }),
    defineAction({
      service: 'studios',
      action: 'limits/list',
      method: 'GET',
      identities: admin,
      summary: 'List the rate limits of a studio and of its tokens',
      input: z.strictObject({ studio_id: studioId }),
      handler: ({ studio_id }) => {
        studioScope(gw, studio_id, undefined);
        // The studio's own limits first, then its tokens'.
        const items = [...(limits().get(studio_id)?.values() ?? [])].sort((a, b) =>
          (a.token_id ?? '').localeCompare(b.token_id ?? ''),
        );
        return { items };
      },
    }),
    defineAction({
      service: 'studios',
      action: 'limits/remove',
      method: 'POST',
      identities: admin,
      summary: 'Remove the rate limits of a studio, or of one of its tokens',
      input: z.strictObject({ studio_id: studioId, token_id: tokenId.optional() }),
      handler: async ({ studio_id, token_id }, ctx) => {
        const { tokenId } = studioScope(gw, studio_id, token_id);
        await run({ type: 'RemoveLimits', studioId: studio_id, tokenId }, ctx.metadata);
        return { studio_id, token_id: tokenId, removed: true };
      },
    }),
  ];
}
