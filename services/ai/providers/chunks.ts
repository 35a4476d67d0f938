import { completionId, nowSeconds } from '../chat/ids.ts';
import type { ChatChunk, ChatUsage } from '../chat/wire.ts';

/** What one OpenAI chunk adds to a choice. */
export type Delta = ChatChunk['choices'][number]['delta'];

/**
 * The OpenAI chunks of one streamed answer, for translators from another wire: every chunk shares
 * one id, `created` and model. `usage` is the last chunk `stream_options.include_usage` asks for.
 */
export function chunkWriter(model: string) {
  const id = completionId();
  const created = nowSeconds();
  return {
    chunk: (delta: Delta, finish: string | null = null, index = 0): ChatChunk => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index, delta, finish_reason: finish }],
    }),
    usage: (usage: ChatUsage): ChatChunk => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [],
      usage,
    }),
  };
}

/**
 * Tool calls streamed as content blocks: the upstream's block index → OpenAI's tool call index
 * (0, 1… in the order they start). A call starts with its id and name, then its arguments come in pieces.
 */
export function toolCallDeltas() {
  const indexes = new Map<number, number>();
  return {
    start(block: number, id: string, name: string): Delta {
      const index = indexes.size;
      indexes.set(block, index);
      return { tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] };
    },
    arguments(block: number, piece: string): Delta {
      return { tool_calls: [{ index: indexes.get(block) ?? 0, function: { arguments: piece } }] };
    },
  };
}
