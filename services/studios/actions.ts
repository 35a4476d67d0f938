import { z } from 'zod';
import { studiosProjection } from '../../projections/studios.ts';
import { tokensProjection } from '../../projections/tokens.ts';
import { newId } from '../../shared/crypto.ts';
import { ApiError } from '../../shared/errors.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import { type AnyAction, defineAction, defineService } from '../../shared/http/action.ts';
import { modelPattern, modelPatterns } from '../../shared/model-patterns.ts';
import { issueToken, studioCommands } from './commands.ts';
import { cacheTtlS } from './settings.ts';
import { studioId } from './studio-id.ts';

const admin = ['admin'] as const;
/** Ten years: long enough for a service account, short enough to be a number a person can check. */
const MAX_TOKEN_LIFETIME_S = 10 * 365 * 24 * 3600;

/**
 * `/v1/studios/*`: studios and their tokens, and the actions of the concepts kept per studio
 * (`governance`: budgets and rate limits, from `services/ai/`), passed in by the gateway that
 * assembles them, so the studios know nothing of them.
 */
export function studiosService(gw: GatewayContext, governance: readonly AnyAction[] = []) {
  const studios = () => gw.projections.state(studiosProjection);
  const tokens = () => gw.projections.state(tokensProjection);

  const run = studioCommands(gw);

  const studioRecord = (id: string) => {
    const record = studios().get(id);
    if (!record) throw new ApiError('not_found', `studio ${id} does not exist`);
    return record;
  };

  return defineService({
    id: 'studios',
    name: 'Studios',
    env: [],
    actions: [
      defineAction({
        service: 'studios',
        action: 'list',
        method: 'GET',
        identities: admin,
        summary: 'List studios',
        input: z.strictObject({ status: z.enum(['active', 'paused', 'removed']).optional() }),
        handler: ({ status }) => ({
          items: [...studios().values()]
            .filter((s) => status === undefined || s.status === status)
            .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id)),
        }),
      }),
      defineAction({
        service: 'studios',
        action: 'create',
        method: 'POST',
        identities: admin,
        status: 201,
        summary: 'Create a studio',
        input: z.strictObject({
          name: z.string().trim().min(1).max(200),
          studio_id: studioId.optional(),
          cache_ttl_s: cacheTtlS.optional(),
        }),
        handler: async ({ name, studio_id, cache_ttl_s }, ctx) => {
          const id = studio_id ?? newId('std');
          await run({ type: 'CreateStudio', studioId: id, name, cacheTtlS: cache_ttl_s }, ctx.metadata);
          return studioRecord(id);
        },
      }),
      defineAction({
        service: 'studios',
        action: 'settings',
        method: 'POST',
        identities: admin,
        summary: "Change a studio's settings: how long its answers are cached (0: not cached)",
        input: z.strictObject({ studio_id: studioId, cache_ttl_s: cacheTtlS }),
        handler: async ({ studio_id, cache_ttl_s }, ctx) => {
          await run(
            { type: 'ChangeStudioSettings', studioId: studio_id, cacheTtlS: cache_ttl_s },
            ctx.metadata,
          );
          return studioRecord(studio_id);
        },
      }),
      defineAction({
        service: 'studios',
        action: 'pause',
        method: 'POST',
        identities: admin,
        summary: 'Pause a studio: its tokens answer 403 studio_paused',
        input: z.strictObject({ studio_id: studioId, reason: z.string().max(500).optional() }),
        handler: async ({ studio_id, reason }, ctx) => {
          await run({ type: 'PauseStudio', studioId: studio_id, reason: reason ?? null }, ctx.metadata);
          return studioRecord(studio_id);
        },
      }),
      defineAction({
        service: 'studios',
        action: 'activate',
        method: 'POST',
        identities: admin,
        summary: 'Activate a paused studio',
        input: z.strictObject({ studio_id: studioId }),
        handler: async ({ studio_id }, ctx) => {
          await run({ type: 'ActivateStudio', studioId: studio_id }, ctx.metadata);
          return studioRecord(studio_id);
        },
      }),
      defineAction({
        service: 'studios',
        action: 'remove',
        method: 'POST',
        identities: admin,
        summary: 'Remove a studio for good; its tokens are revoked, its stream is kept',
        input: z.strictObject({ studio_id: studioId }),
        handler: async ({ studio_id }, ctx) => {
          await run({ type: 'RemoveStudio', studioId: studio_id }, ctx.metadata);
          return studioRecord(studio_id);
        },
      }),
      defineAction({
        service: 'studios',
        action: 'tokens/apply',
        method: 'POST',
        identities: admin,
        status: 201,
        summary: 'Issue a user token for a studio, for every model or some; the token is shown once',
        input: z.strictObject({
          studio_id: studioId,
          name: z.string().trim().min(1).max(200).optional(),
          expires_in_s: z.number().int().positive().max(MAX_TOKEN_LIFETIME_S).optional(),
          /** Model ids or `*` patterns the token may call; left out or null: every model. */
          models: modelPatterns.nullable().optional(),
          /** MCP tools (`<server>__<tool>` or `*` patterns) it may call through /v1/mcp; left out: none. */
          tools: z
            .array(modelPattern)
            .max(100)
            .transform((patterns) => [...new Set(patterns)])
            .optional(),
        }),
        handler: async ({ studio_id, name, expires_in_s, models, tools }, ctx) => {
          const tokenId = newId('tok');
          const expiresAt =
            expires_in_s === undefined ? null : new Date(Date.now() + expires_in_s * 1000).toISOString();
          const { userToken } = await issueToken(
            run,
            {
              studioId: studio_id,
              tokenId,
              name: name ?? 'token',
              expiresAt,
              models: models ?? null,
              ...(tools === undefined ? {} : { tools }),
            },
            ctx.metadata,
          ).catch((error: unknown) => {
            throw unshownToken(error, tokenId);
          });
          const { revoked_at: _revokedAt, ...token } = tokens().byId.get(tokenId)!;
          return { user_token: userToken, token };
        },
      }),
      defineAction({
        service: 'studios',
        action: 'tokens/list',
        method: 'GET',
        // A user token sees the tokens of its own studio (another studio_id is 403 studio_mismatch).
        identities: ['admin', 'user'],
        summary: "List a studio's tokens (never their secrets); a user token lists its own studio's",
        input: z.strictObject({ studio_id: studioId.optional() }),
        handler: (input, ctx) => {
          const studio_id =
            input.studio_id ?? (ctx.identity.kind === 'user' ? ctx.identity.studioId : undefined);
          if (studio_id === undefined)
            throw new ApiError('validation_failed', 'studio_id is required', { param: 'studio_id' });
          studioRecord(studio_id);
          const items = [...tokens().byId.values()]
            .filter((t) => t.studio_id === studio_id)
            .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
          return { items };
        },
      }),
      defineAction({
        service: 'studios',
        action: 'tokens/revoke',
        method: 'POST',
        identities: admin,
        summary: 'Revoke a user token',
        input: z.strictObject({ token_id: z.string().min(1).max(100) }),
        handler: async ({ token_id }, ctx) => {
          const token = tokens().byId.get(token_id);
          if (!token) throw new ApiError('not_found', `token ${token_id} does not exist`);
          await run({ type: 'RevokeToken', studioId: token.studio_id, tokenId: token_id }, ctx.metadata);
          return { token: tokens().byId.get(token_id) };
        },
      }),
      ...governance,
    ],
  });
}

/**
 * The token was issued but the read models cannot show it (503): its secret is not sent in an
 * error, so it can never be used; the id lets an admin revoke it.
 */
function unshownToken(error: unknown, tokenId: string): unknown {
  if (!(error instanceof ApiError) || error.code !== 'unavailable') return error;
  return new ApiError(
    'unavailable',
    `token ${tokenId} was issued but cannot be shown while the read models are behind; revoke it once GET /ready answers 200, and issue another`,
    { ...error.options, details: { token_id: tokenId } },
  );
}
