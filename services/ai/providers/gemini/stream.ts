import { ApiError } from '../../../../shared/errors.ts';
import type { ChatChunk } from '../../chat/wire.ts';
import { chunkWriter, type Delta } from '../chunks.ts';
import { answerOf, callIds, chatUsage, toolCallOf } from './translate.ts';
import { finishReasonOf, type GeminiResponse, type GeminiUsage } from './wire.ts';

interface CandidateState {
  /** Tool calls so far: the next one's index. */
  calls: number;
  finishReason: string | undefined;
}

/**
 * Gemini's stream (each event a whole GenerateContentResponse holding what is new) → OpenAI chunks:
 * a role chunk when a candidate first appears, text deltas, each function call whole as one tool
 * call delta, and at the end a finish chunk per candidate and a usage chunk when asked for. Gemini
 * says a finish reason in the last event and sends nothing after it, so `end` comes when the body
 * does; a body that ends without one broke off.
 */
export function streamTranslator(model: string, includeUsage: boolean) {
  const writer = chunkWriter(model);
  const chunk = (index: number, delta: Delta, finish: string | null = null) =>
    writer.chunk(delta, finish, index);
  const nextId = callIds();
  const candidates = new Map<number, CandidateState>();
  let blocked = false;
  let usage: GeminiUsage | undefined;

  const started = (index: number, out: ChatChunk[]): CandidateState => {
    let state = candidates.get(index);
    if (!state) {
      state = { calls: 0, finishReason: undefined };
      candidates.set(index, state);
      out.push(chunk(index, { role: 'assistant', content: '' }));
    }
    return state;
  };

  return {
    event(response: GeminiResponse): ChatChunk[] {
      const out: ChatChunk[] = [];
      usage = response.usageMetadata ?? usage;
      if (response.promptFeedback?.blockReason) blocked = true;
      for (const [position, candidate] of (response.candidates ?? []).entries()) {
        const index = candidate.index ?? position;
        const state = started(index, out);
        const { text, calls } = answerOf(candidate);
        if (text) out.push(chunk(index, { content: text }));
        for (const call of calls) {
          out.push(chunk(index, { tool_calls: [{ index: state.calls++, ...toolCallOf(nextId(), call) }] }));
        }
        state.finishReason = candidate.finishReason ?? state.finishReason;
      }
      return out;
    },

    end(): ChatChunk[] {
      const out: ChatChunk[] = [];
      if (candidates.size === 0 && blocked) {
        // A blocked prompt: no candidates, one empty filtered answer.
        started(0, out);
        out.push(chunk(0, {}, 'content_filter'));
      } else {
        if (candidates.size === 0 || [...candidates.values()].some((c) => !c.finishReason))
          throw new ApiError('upstream_error', 'the upstream stream ended before a finish reason');
        for (const [index, state] of candidates)
          out.push(chunk(index, {}, finishReasonOf(state.finishReason, state.calls > 0)));
      }
      if (includeUsage) out.push(writer.usage(chatUsage(usage)));
      return out;
    },
  };
}
