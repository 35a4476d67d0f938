import { z } from 'zod';
import { ApiError } from '../../../shared/errors.ts';
import { type ActionContext, defineAction } from '../../../shared/http/action.ts';
import { tenantOf } from '../call-context.ts';
import { nowSeconds } from '../chat/ids.ts';
import type { AiDeps } from '../deps.ts';
import { generate } from '../generate.ts';
import { tokensAtMost } from '../generation-ask.ts';
import { answersNatively, deliverAnswer, openAnswer, type Turn } from '../responses/answers.ts';
import { newResponseId } from '../responses/ids.ts';
import { inputItems } from '../responses/items.ts';
import {
  type Conversation,
  type ItemsMeasure,
  measureItems,
  type ResponseStore,
} from '../responses/store.ts';
import { chatRequestOf } from '../responses/to-chat.ts';
import {
  type Item,
  type ResponseObject,
  type ResponsesRequest,
  ResponsesRequestSchema,
} from '../responses/wire.ts';
import { readCharacters, tokensOfCharacters } from '../usage/metering.ts';

/** The largest input a stored response keeps (its output is bounded by the model's output limit). */
export const MAX_STORED_INPUT_BYTES = 8 * 1024 * 1024;
/** The largest request body; a conversation continued by `previous_response_id` counts against it too. */
const RESPONSES_BODY_LIMIT = 32 * 1024 * 1024;

/**
 * POST /v1/ai/responses: OpenAI's Responses API, streaming included, for every chat model. Answered
 * by the upstream's own Responses API where the provider speaks it (`openai`), else translated
 * through chat completions. Admitted, limited, budgeted and recorded as a chat completion is; the
 * response is stored (unless `store: false`) so `previous_response_id` and `GET responses/{id}` find it.
 */
export function createResponseAction(deps: AiDeps, store: ResponseStore) {
  return defineAction({
    service: 'ai',
    action: 'responses',
    method: 'POST',
    summary: "OpenAI's Responses API",
    produces: ['application/json', 'text/event-stream'],
    // Clients that keep the conversation send it whole in every request, as for chat completions.
    bodyLimitBytes: RESPONSES_BODY_LIMIT,
    input: ResponsesRequestSchema,
    handler: async (input, ctx) => {
      const { studio_id: _studio, ...request } = input;
      const own = await store.resolveReferences(inputItems(request.input), ctx.identity);
      const ownMeasure = measureItems(own);
      const earlier: Conversation = request.previous_response_id
        ? await store.conversation(request.previous_response_id, ctx.identity, {
            bodyBytes: RESPONSES_BODY_LIMIT,
            leftBytes: RESPONSES_BODY_LIMIT - ownMeasure.bytes,
          })
        : { items: [], bytes: 0, characters: 0 };
      const keep = request.store !== false;
      if (keep) assertStorable(ownMeasure);
      const conversation = [...earlier.items, ...own];
      // What chat cannot carry is refused before the generation is admitted (through a route, per target).
      if (!deps.routes.get(request.model)) {
        const target = deps.catalog.resolve(request.model, 'chat');
        if (!answersNatively(target)) chatRequestOf(request, conversation);
      }
      const id = newResponseId();
      const createdAt = nowSeconds();
      const answered = await generate(
        deps,
        ctx,
        { model: request.model, modality: 'chat', ask: askOf(request, earlier, ownMeasure) },
        async (attempt) => {
          if (!answersNatively(attempt.target)) chatRequestOf(request, conversation);
          // The response names the model that answered, as chat completions do through a route.
          const turn: Turn = {
            ctx,
            header: { id, createdAt, model: attempt.target.model.id, request },
            conversation,
            save: (response, answeredNatively) =>
              keep ? saveResponse(store, ctx, own, response, answeredNatively) : Promise.resolve(),
          };
          return { turn, opened: await openAnswer(turn, attempt) };
        },
      );
      const { turn, opened } = answered.result;
      return deliverAnswer(turn, answered.generation, opened);
    },
  });
}

/** GET /v1/ai/responses/{id}: a stored response, as it was answered. */
export function getResponseAction(store: ResponseStore) {
  return defineAction({
    service: 'ai',
    action: 'responses/:id',
    method: 'GET',
    identities: ['user', 'admin'],
    summary: 'A stored response',
    params: z.strictObject({ id: z.string().min(1) }),
    // OpenAI's other query parameters (`include`) are read as nothing asked.
    input: z.object({
      stream: z
        .enum(['false'], { message: 'a stored response is answered as JSON: leave stream out' })
        .optional(),
    }),
    handler: async (_input, ctx) => (await store.get(ctx.params.id, ctx.identity)).response,
  });
}

/**
 * What budgets and limits weigh: every item the model reads, instructions and tools, as JSON bytes
 * and non-blank characters; the conversation read back is weighed by the measures of its responses.
 */
function askOf(request: ResponsesRequest, earlier: ItemsMeasure, own: ItemsMeasure) {
  const asked = request.max_output_tokens ?? undefined;
  const rest = [request.instructions ?? null, request.tools ?? null];
  return {
    inputTokensAtMost: earlier.bytes + own.bytes + tokensAtMost(JSON.stringify(rest)),
    inputTokensAtLeast: tokensOfCharacters(earlier.characters + own.characters + readCharacters(rest)),
    ...(asked === undefined ? {} : { maxOutputTokens: asked }),
  };
}

function assertStorable(own: ItemsMeasure): void {
  if (own.bytes <= MAX_STORED_INPUT_BYTES) return;
  throw new ApiError(
    'payload_too_large',
    `the input is over ${MAX_STORED_INPUT_BYTES / (1024 * 1024)} MiB, more than a stored response keeps: send store: false, or continue the conversation with previous_response_id`,
    { param: 'store' },
  );
}

function saveResponse(
  store: ResponseStore,
  ctx: ActionContext,
  own: Item[],
  response: ResponseObject,
  native: boolean,
): Promise<void> {
  return store.save({ studioId: tenantOf(ctx.identity), input: own, native, response }, ctx.metadata);
}
