import { estimateTokens } from '../generation.ts';
import { blocksOf, systemText } from './to-chat.ts';
import { type ContentBlock, type CountTokensRequest, isBlock } from './wire.ts';

/** What an image costs at most: Anthropic scales images to about 1.15 megapixels, ~1,600 tokens. */
const IMAGE_TOKENS = 1_600;

/**
 * `count_tokens` for a model whose upstream cannot count: an estimate, not a bound. Four characters
 * a token, the estimate the gateway's usage records use when an upstream reports none, over the text
 * the model reads (system, text, tool calls and results, tool definitions); an image as the most
 * Anthropic charges for one. A bound in bytes, as budgets reserve, would be about four times too
 * high, and clients such as Claude Code use this count to decide when to compact a conversation.
 */
export function estimateInputTokens(request: CountTokensRequest): number {
  const texts: string[] = [systemText(request.system)];
  let images = 0;
  const walk = (blocks: ContentBlock[]) => {
    for (const block of blocks) {
      if (isBlock(block, 'text')) texts.push(block.text);
      else if (isBlock(block, 'image')) images++;
      else if (isBlock(block, 'tool_use')) texts.push(block.name, JSON.stringify(block.input ?? {}));
      else if (isBlock(block, 'tool_result')) walk(blocksOf(block.content ?? []));
      else texts.push(JSON.stringify(block));
    }
  };
  for (const message of request.messages) walk(blocksOf(message.content));
  if (request.tools?.length) texts.push(JSON.stringify(request.tools));
  return estimateTokens(texts.join('\n')) + images * IMAGE_TOKENS;
}
