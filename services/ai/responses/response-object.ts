import type { Item, ResponseObject, ResponseStatus, ResponsesRequest, ResponseUsage } from './wire.ts';

/** What a response object says of the request that made it, echoed as OpenAI does. */
export interface ResponseHeader {
  id: string;
  /** Seconds since the epoch. */
  createdAt: number;
  /** The gateway's model id. */
  model: string;
  request: ResponsesRequest;
}

/** A response object with the request's settings, in the state given. */
export function responseObject(
  header: ResponseHeader,
  state: {
    status: ResponseStatus;
    output: Item[];
    usage: ResponseUsage | null;
    incompleteReason?: string | undefined;
  },
): ResponseObject {
  const { request } = header;
  return {
    id: header.id,
    object: 'response',
    created_at: header.createdAt,
    status: state.status,
    error: null,
    incomplete_details: state.incompleteReason === undefined ? null : { reason: state.incompleteReason },
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: header.model,
    output: state.output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: null },
    store: request.store ?? true,
    temperature: request.temperature ?? 1,
    text: request.text ?? { format: { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_p: request.top_p ?? 1,
    truncation: 'disabled',
    usage: state.usage,
    user: request.user ?? null,
    metadata: request.metadata ?? {},
  };
}

/** A response's status from a chat completion's finish reason. */
export function outcomeOf(finishReason: string | null | undefined): {
  status: 'completed' | 'incomplete';
  incompleteReason?: string;
} {
  if (finishReason === 'length') return { status: 'incomplete', incompleteReason: 'max_output_tokens' };
  if (finishReason === 'content_filter') return { status: 'incomplete', incompleteReason: 'content_filter' };
  return { status: 'completed' };
}

export function responseUsage(
  inputTokens: number,
  outputTokens: number,
  details: { cached?: number | undefined; reasoning?: number | undefined } = {},
): ResponseUsage {
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: details.cached ?? 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: details.reasoning ?? 0 },
    total_tokens: inputTokens + outputTokens,
  };
}
