import { defineAction } from '../../../shared/http/action.ts';
import { headerOf, type ServedRequest } from '../../../shared/http/request.ts';
import { estimateInputTokens } from '../anthropic-api/count-tokens.ts';
import { anthropicDialect } from '../anthropic-api/dialect.ts';
import { anthropicMessages, clientsFault } from '../anthropic-api/messages.ts';
import { CountTokensRequestSchema, type MessagesCall, MessagesRequestSchema } from '../anthropic-api/wire.ts';
import { callContext } from '../call-context.ts';
import type { AiDeps } from '../deps.ts';
import { admit } from '../governance/admission.ts';

/** Anthropic's headers that go upstream with a native call: plain tokens only. */
const HEADER_VALUE = /^[A-Za-z0-9._:, -]{1,1024}$/;

/** The body as a native upstream gets it (without our `studio_id`), with the client's version and betas. */
export function messagesCall(body: Record<string, unknown>, req: ServedRequest): MessagesCall {
  const { studio_id: _studio, ...rest } = body;
  const version = headerOf(req, 'anthropic-version');
  const beta = headerOf(req, 'anthropic-beta');
  return {
    body: rest,
    ...(version && HEADER_VALUE.test(version) ? { version } : {}),
    ...(beta && HEADER_VALUE.test(beta) ? { beta } : {}),
  };
}

/**
 * POST /v1/ai/anthropic/v1/messages: Anthropic's Messages API, so that its clients (the SDK, Claude
 * Code with `ANTHROPIC_BASE_URL={base_url}/v1/ai/anthropic`) work unchanged. Native on the anthropic
 * provider, translated to chat for every other; a generation like any chat completion.
 */
export function anthropicMessagesAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'anthropic/v1/messages',
    method: 'POST',
    summary: "Anthropic's Messages API",
    produces: ['application/json', 'text/event-stream'],
    dialect: anthropicDialect,
    // Long conversations travel whole in every request, as on chat completions.
    bodyLimitBytes: 32 * 1024 * 1024,
    input: MessagesRequestSchema,
    handler: (input, ctx) => anthropicMessages(deps, input, messagesCall(input, ctx.req), ctx),
  });
}

/**
 * POST /v1/ai/anthropic/v1/messages/count_tokens: the upstream's count on the anthropic provider,
 * an estimate for every other model (`estimateInputTokens`); for a route, its first target's.
 * Not a generation, so free, but admitted as one: model access, and a request under the rate limits.
 */
export function anthropicCountTokensAction(deps: AiDeps) {
  const { catalog, env } = deps;
  return defineAction({
    service: 'ai',
    action: 'anthropic/v1/messages/count_tokens',
    method: 'POST',
    summary: "Anthropic's token count of a Messages request",
    dialect: anthropicDialect,
    bodyLimitBytes: 32 * 1024 * 1024,
    input: CountTokensRequestSchema,
    handler: async (input, ctx) => {
      // A route counts as the target it would try first.
      const route = deps.routes.get(input.model);
      const { provider, model } = route
        ? deps.routes.plan(route, 'chat')[0]!.entry
        : catalog.resolve(input.model, 'chat');
      const permit = await admit(deps, ctx, input.model, { inputTokensAtMost: 0, inputTokensAtLeast: 0 });
      try {
        if (!provider.countTokens) return { input_tokens: estimateInputTokens(input) };
        return await clientsFault(() =>
          provider.countTokens!(model, messagesCall(input, ctx.req), callContext(env, ctx)),
        );
      } finally {
        permit.release(0);
      }
    },
  });
}
