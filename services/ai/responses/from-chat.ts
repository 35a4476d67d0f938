import type { ChatCompletion } from '../chat/wire.ts';
import { itemIdOf } from './ids.ts';
import { outcomeOf, type ResponseHeader, responseObject, responseUsage } from './response-object.ts';
import type { FunctionCallOutput, Item, OutputMessage, ResponseObject } from './wire.ts';

/**
 * A chat completion as a response: its message's text (or refusal) one `message` item, each tool
 * call a `function_call` item; a message is there unless the answer is tool calls only.
 */
export function responseOfCompletion(header: ResponseHeader, completion: ChatCompletion): ResponseObject {
  const choice = completion.choices[0];
  const message = choice?.message;
  const output: Item[] = [];
  const toolCalls = message?.tool_calls ?? [];
  const text = message?.content ?? '';
  const refusal = typeof message?.refusal === 'string' ? message.refusal : undefined;
  if (text !== '' || refusal !== undefined || toolCalls.length === 0) {
    const content: OutputMessage['content'] = [];
    if (text !== '' || refusal === undefined) content.push(outputText(text));
    if (refusal !== undefined) content.push({ type: 'refusal', refusal });
    output.push(outputMessage(itemIdOf(header.id, 'msg', 0), 'completed', content));
  }
  for (const call of toolCalls) {
    output.push(
      functionCall(itemIdOf(header.id, 'fc', output.length), 'completed', {
        call_id: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
      }),
    );
  }
  const usage = completion.usage as
    | (ChatCompletion['usage'] & {
        prompt_tokens_details?: { cached_tokens?: number };
        completion_tokens_details?: { reasoning_tokens?: number };
      })
    | undefined;
  return responseObject(header, {
    ...outcomeOf(choice?.finish_reason),
    output,
    usage: responseUsage(usage?.prompt_tokens ?? 0, usage?.completion_tokens ?? 0, {
      cached: usage?.prompt_tokens_details?.cached_tokens,
      reasoning: usage?.completion_tokens_details?.reasoning_tokens,
    }),
  });
}

export const outputText = (text: string) => ({
  type: 'output_text' as const,
  text,
  annotations: [],
  logprobs: [],
});

export const outputMessage = (
  id: string,
  status: OutputMessage['status'],
  content: OutputMessage['content'],
): OutputMessage & Item => ({ type: 'message', id, status, role: 'assistant', content });

export const functionCall = (
  id: string,
  status: FunctionCallOutput['status'],
  call: Pick<FunctionCallOutput, 'call_id' | 'name' | 'arguments'>,
): FunctionCallOutput & Item => ({ type: 'function_call', id, ...call, status });
